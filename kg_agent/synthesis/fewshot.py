"""Few-shot examples of cited answers, picked per question for the synthesis prompt.

Showing the model two worked answers close to the question at hand (a bridge
question for a bridge question, a comparison for a comparison, an honest "the
evidence does not say") teaches the citation format and the refusal to guess
better than instructions alone. Examples live in a JSONL file, one object a line::

    {"question": "...", "evidence": [{"n": 1, "title": "...", "heading": "...", "text": "..."}],
     "short": "a few words, or not in the graph", "answer": "... [1] ... [2]",
     "reasoning": "one line (for the file's reader; not shown to the model)"}

They are shown in the very format the model is asked for (:mod:`.claude`): the evidence
between the same delimiters and laid out as the live evidence is, then the "Short
answer:" line, then the cited answer, so an example never teaches another format.

The shipped file is ``few_shot/examples.jsonl`` at the project root; an installed
wheel cannot see that folder, so the package carries a byte-identical copy in
``kg_agent/data/few_shot/`` (a test keeps the two in step), which is the default.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from kg_agent.exceptions import KGAgentError, one_line
from kg_agent.language.tokens import STOP_WORDS, words

if TYPE_CHECKING:
    from kg_agent.embedding import Embedder, FloatArray

__all__ = [
    "EvidenceSnippet",
    "FewShotError",
    "FewShotExample",
    "FewShotManager",
    "default_examples_path",
    "format_examples",
    "load_examples",
]

_PACKAGED = Path(__file__).resolve().parent.parent / "data" / "few_shot" / "examples.jsonl"
_CHECKOUT = Path(__file__).resolve().parents[2] / "few_shot" / "examples.jsonl"

_EXAMPLE_KEYS = ("question", "evidence", "short", "answer", "reasoning")
_EVIDENCE_KEYS = ("n", "title", "heading", "text")
_CITATION = re.compile(r"\[(\d+(?:\s*,\s*\d+)*)\]")


class FewShotError(KGAgentError):
    """The few-shot file is missing, not JSONL, or an example is malformed."""


@dataclass(frozen=True)
class EvidenceSnippet:
    """One numbered piece of evidence an example answer cites as ``[n]``."""

    n: int
    title: str
    heading: str
    text: str


@dataclass(frozen=True)
class FewShotExample:
    """A question, its numbered evidence, its short answer, a cited answer and a
    one-line reasoning (for whoever edits the file)."""

    question: str
    evidence: tuple[EvidenceSnippet, ...]
    answer: str
    reasoning: str
    short: str = ""

    def citations(self) -> list[int]:
        """Evidence numbers the answer cites, in order of first use."""
        return _citations(self.answer)


def default_examples_path() -> Path:
    """The packaged copy of the shipped examples, else the checkout's ``few_shot/``."""
    return _PACKAGED if _PACKAGED.is_file() else _CHECKOUT


def load_examples(path: str | os.PathLike[str] | None = None) -> list[FewShotExample]:
    """Read and validate a JSONL file of examples; errors name the file and line."""
    p = Path(path) if path is not None else default_examples_path()
    try:
        lines = p.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise FewShotError(f"{p}: cannot read few-shot examples: {one_line(exc)}") from None
    examples: list[FewShotExample] = []
    seen: dict[str, int] = {}
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{p}:{lineno}"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise FewShotError(f"{where}: invalid JSON: {exc.msg} (column {exc.colno})") from None
        example = _example(obj, where)
        key = " ".join(example.question.lower().split())
        if key in seen:
            raise FewShotError(f"{where}: duplicate question (also on line {seen[key]})")
        seen[key] = lineno
        examples.append(example)
    if not examples:
        raise FewShotError(f"{p}: no few-shot examples in the file")
    return examples


def _example(obj: Any, where: str) -> FewShotExample:
    if not isinstance(obj, dict):
        raise FewShotError(f"{where}: an example must be a JSON object, got {_kind(obj)}")
    _check_keys(obj, _EXAMPLE_KEYS, where, "example")
    for key in ("question", "short", "answer", "reasoning"):
        if not isinstance(obj[key], str) or not obj[key].strip():
            raise FewShotError(f"{where}: {key} must be a non-empty string")
    raw = obj["evidence"]
    if not isinstance(raw, list) or not raw:
        raise FewShotError(f"{where}: evidence must be a non-empty list")
    evidence: list[EvidenceSnippet] = []
    for i, ev in enumerate(raw, start=1):
        label = f"evidence item {i}"
        if not isinstance(ev, dict):
            raise FewShotError(f"{where}: {label} must be an object, got {_kind(ev)}")
        _check_keys(ev, _EVIDENCE_KEYS, where, label)
        if ev["n"] != i or isinstance(ev["n"], bool):
            raise FewShotError(f"{where}: {label} must have n = {i}, got {ev['n']!r}")
        for key in ("title", "text"):
            if not isinstance(ev[key], str) or not ev[key].strip():
                raise FewShotError(f"{where}: {label}: {key} must be a non-empty string")
        if not isinstance(ev["heading"], str):
            raise FewShotError(f"{where}: {label}: heading must be a string ('' for the lead)")
        evidence.append(
            EvidenceSnippet(
                i, ev["title"].strip(), ev["heading"].strip(), " ".join(ev["text"].split())
            )
        )
    answer = obj["answer"].strip()
    cited = _citations(answer)
    if not cited:
        raise FewShotError(f"{where}: answer cites no evidence (use [1], [2], ...)")
    bad = [n for n in cited if not 1 <= n <= len(evidence)]
    if bad:
        raise FewShotError(
            f"{where}: answer cites [{bad[0]}] but the evidence has {len(evidence)} item(s)"
        )
    return FewShotExample(
        question=" ".join(obj["question"].split()),
        evidence=tuple(evidence),
        answer=answer,
        reasoning=" ".join(obj["reasoning"].split()),
        short=" ".join(obj["short"].split()),
    )


def _check_keys(obj: dict[str, Any], keys: Sequence[str], where: str, what: str) -> None:
    missing = [k for k in keys if k not in obj]
    if missing:
        raise FewShotError(f"{where}: {what} is missing {', '.join(missing)}")
    extra = sorted(k for k in obj if k not in keys)
    if extra:
        raise FewShotError(
            f"{where}: {what} has unknown key(s) {', '.join(extra)} (allowed: {', '.join(keys)})"
        )


def _citations(text: str) -> list[int]:
    out: list[int] = []
    for m in _CITATION.finditer(text):
        out.extend(int(x) for x in m.group(1).split(","))
    return list(dict.fromkeys(out))


class FewShotManager:
    """Loads the examples once and picks the ones most like a question.

    With an embedder, similarity is the cosine of question embeddings (the
    examples' are computed on the first ``select`` and kept). Without one, a
    deterministic word-overlap score stands in, so prompts can be built and
    tested without loading a model.
    """

    def __init__(
        self, path: str | os.PathLike[str] | None = None, *, embedder: Embedder | None = None
    ) -> None:
        self.path = Path(path) if path is not None else default_examples_path()
        self.examples: tuple[FewShotExample, ...] = tuple(load_examples(self.path))
        self.embedder = embedder
        self._vectors: FloatArray | None = None
        self._tokens = [_tokens(e.question) for e in self.examples]

    def __len__(self) -> int:
        return len(self.examples)

    def select(self, question: str, k: int = 2) -> list[FewShotExample]:
        """The ``k`` examples most similar to ``question``, best first (ties: file order)."""
        if k <= 0:
            return []
        scores = self.scores(question)
        order = sorted(range(len(self.examples)), key=lambda i: (-scores[i], i))
        return [self.examples[i] for i in order[:k]]

    def scores(self, question: str) -> list[float]:
        """Similarity of ``question`` to each example, in file order."""
        if self.embedder is None:
            q = _tokens(question)
            return [_overlap(q, t) for t in self._tokens]
        if self._vectors is None:
            self._vectors = self.embedder.embed([e.question for e in self.examples])
        qv = np.asarray(self.embedder.embed_query(question), dtype=np.float32)
        sims = self._vectors @ qv
        return [float(s) for s in sims]


def format_examples(examples: Sequence[FewShotExample]) -> str:
    """The examples as prompt text, in the live format (:func:`.claude.build_prompt`):
    the question, the evidence between the delimiters grouped by article, then the reply
    a model should write: the "Short answer:" line and the cited answer."""
    from kg_agent.synthesis.claude import (
        ANSWER_CUE,
        EVIDENCE_CLOSE,
        EVIDENCE_OPEN,
        SHORT_ANSWER_PREFIX,
    )

    blocks: list[str] = []
    for i, ex in enumerate(examples, start=1):
        lines = [f"Example {i}", f"Question: {ex.question}", EVIDENCE_OPEN]
        current = None
        for ev in ex.evidence:
            if ev.title != current:
                current = ev.title
                lines.append(f"## {ev.title}")
            lines.append(f"[{ev.n}] ({ev.heading or 'introduction'}) {ev.text}")
        lines += [EVIDENCE_CLOSE, ANSWER_CUE, f"{SHORT_ANSWER_PREFIX} {ex.short}", ex.answer]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def _tokens(text: str) -> frozenset[str]:
    found = (w for w in words(text) if w not in STOP_WORDS and len(w) > 1)
    return frozenset(w[:-1] if len(w) > 3 and w.endswith("s") else w for w in found)


def _overlap(a: frozenset[str], b: frozenset[str]) -> float:
    if not a or not b:
        return 0.0
    return len(a & b) / math.sqrt(len(a) * len(b))


def _kind(obj: object) -> str:
    return "null" if obj is None else type(obj).__name__
