"""Readers for the multi-hop QA sets, in their native formats.

``2wikimultihopqa``
    A JSON list of ``{"id", "question", "answer", "answer_aliases",
    "supporting_facts": [gold titles]}`` (HippoRAG/GFM-RAG layout) plus a
    separate HippoRAG passage corpus, by default ``corpus.json`` beside it.
``hotpotqa``
    The official record layout: ``supporting_facts`` are ``[title, sent_id]``;
    the corpus is every record's ``context`` pooled (the file itself).
``musique``
    JSON Lines with ``paragraphs`` flagged ``is_supporting``; the corpus is
    every record's ``paragraphs`` pooled (the file itself).

The format is detected from the keys of the first record, so a renamed file
still reads; ``name`` forces one.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kg_agent.exceptions import InvalidArgumentError, SourceError

__all__ = [
    "DATASETS",
    "EvalDataset",
    "EvalQuestion",
    "default_data_dir",
    "detect_dataset",
    "load_dataset",
    "resolve_dataset",
]

#: Canonical name → (folder, questions file) under ``<data>/multihop/``.
DATASETS: dict[str, tuple[str, str]] = {
    "2wikimultihopqa": ("2wikimultihopqa", "questions.dev.json"),
    "hotpotqa": ("hotpotqa", "hotpot_dev_distractor.dev.json"),
    "musique": ("musique", "musique_ans.dev.jsonl"),
}
_ALIASES = {"2wiki": "2wikimultihopqa", "2wikimqa": "2wikimultihopqa", "hotpot": "hotpotqa"}


@dataclass(frozen=True, slots=True)
class EvalQuestion:
    qid: str
    question: str
    answer: str
    aliases: tuple[str, ...]
    gold_titles: tuple[str, ...]
    qtype: str = ""

    @property
    def answers(self) -> tuple[str, ...]:
        return (self.answer, *self.aliases)


@dataclass(frozen=True, slots=True)
class EvalDataset:
    name: str
    questions_path: Path
    corpus_path: Path
    questions: tuple[EvalQuestion, ...] = field(repr=False)


def default_data_dir() -> Path:
    """``$KG_AGENT_DATA_DIR`` or ``../shared/data`` next to the working directory's project."""
    env = os.environ.get("KG_AGENT_DATA_DIR")
    if env:
        return Path(env)
    here = Path(__file__).resolve().parents[2]  # repo root for an editable install
    for base in (Path.cwd(), here):
        candidate = base.parent / "shared" / "data"
        if candidate.is_dir():
            return candidate
    return Path.cwd().parent / "shared" / "data"


def resolve_dataset(spec: str, data_dir: str | os.PathLike[str] | None = None) -> Path:
    """A dataset name (``2wiki``, ``hotpotqa``, ``musique``) or a path → questions file."""
    key = _ALIASES.get(spec.lower(), spec.lower())
    if key in DATASETS:
        folder, fname = DATASETS[key]
        root = Path(data_dir) if data_dir is not None else default_data_dir()
        path = root / "multihop" / folder / fname
        if not path.is_file():
            raise SourceError(
                str(path),
                f"dataset {spec!r}: not found (give the questions file's path, "
                "or --data-dir pointing at the folder that holds multihop/)",
            )
        return path
    path = Path(spec)
    if not path.is_file():
        known = ", ".join(DATASETS)
        raise SourceError(str(spec), f"no such file, and not a dataset name ({known})")
    return path


def _first_record(path: Path) -> Any:
    with path.open(encoding="utf-8") as fh:
        head = fh.read(1)
        while head and head.isspace():
            head = fh.read(1)
        fh.seek(0)
        if head == "[":
            try:
                data = json.load(fh)
            except json.JSONDecodeError as exc:
                raise SourceError(
                    str(path), f"not valid JSON ({exc.msg}, line {exc.lineno})"
                ) from exc
            return data[0] if isinstance(data, list) and data else None
        if head == "{":
            line = fh.readline()
            try:
                return json.loads(line)
            except json.JSONDecodeError as exc:
                raise SourceError(str(path), f"line 1 is not a JSON object ({exc.msg})") from exc
    return None


def detect_dataset(path: str | os.PathLike[str]) -> str:
    """The dataset layout of ``path`` from its first record's keys."""
    p = Path(path)
    rec = _first_record(p)
    if not isinstance(rec, dict):
        raise SourceError(str(p), "no question records found (expected a JSON list or JSON Lines)")
    if "paragraphs" in rec:
        return "musique"
    if "context" in rec and "supporting_facts" in rec:
        return "hotpotqa"
    facts = rec.get("supporting_facts")
    if isinstance(facts, list) and all(isinstance(f, str) for f in facts):
        return "2wikimultihopqa"
    raise SourceError(
        str(p),
        f"unknown question format (keys {sorted(rec)[:8]}); expected 2WikiMultihopQA, "
        "HotpotQA or MuSiQue records",
    )


def _records(path: Path) -> list[dict[str, Any]]:
    text = path.read_text(encoding="utf-8")
    try:
        if text.lstrip().startswith("["):
            data = json.loads(text)
        else:
            data = [json.loads(line) for line in text.splitlines() if line.strip()]
    except json.JSONDecodeError as exc:
        raise SourceError(str(path), f"not valid JSON ({exc.msg}, line {exc.lineno})") from exc
    if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
        raise SourceError(str(path), "expected a list of question records")
    return data


def _require(path: Path, rec: dict[str, Any], key: str, i: int) -> Any:
    if key not in rec:
        raise SourceError(str(path), f"record {i + 1} has no {key!r}")
    return rec[key]


def _question(path: Path, name: str, rec: dict[str, Any], i: int) -> EvalQuestion:
    question = str(_require(path, rec, "question", i)).strip()
    answer = str(_require(path, rec, "answer", i)).strip()
    aliases = tuple(str(a) for a in rec.get("answer_aliases") or () if str(a).strip())
    if name == "2wikimultihopqa":
        gold = [str(t).strip() for t in _require(path, rec, "supporting_facts", i)]
        qid, qtype = str(rec.get("id", i)), str(rec.get("type", ""))
    elif name == "hotpotqa":
        gold = [str(f[0]).strip() for f in _require(path, rec, "supporting_facts", i)]
        qid, qtype = str(rec.get("_id", i)), str(rec.get("type", ""))
    else:
        paras = _require(path, rec, "paragraphs", i)
        gold = [str(p["title"]).strip() for p in paras if p.get("is_supporting")]
        qid = str(rec.get("id", i))
        qtype = qid.split("__")[0] if "__" in qid else ""  # e.g. "2hop", "3hop1"
    gold_titles = tuple(dict.fromkeys(t for t in gold if t))
    if not gold_titles:
        raise SourceError(str(path), f"record {i + 1} ({qid}) has no gold supporting titles")
    return EvalQuestion(qid, question, answer, aliases, gold_titles, qtype)


def load_dataset(
    spec: str | os.PathLike[str],
    *,
    corpus: str | os.PathLike[str] | None = None,
    name: str | None = None,
    limit: int | None = None,
    data_dir: str | os.PathLike[str] | None = None,
) -> EvalDataset:
    """Questions (first ``limit``) and the corpus file to build the graph from."""
    path = resolve_dataset(str(spec), data_dir)
    kind = _ALIASES.get(name.lower(), name.lower()) if name else detect_dataset(path)
    if kind not in DATASETS:
        raise InvalidArgumentError(f"unknown dataset {name!r}; known: {', '.join(DATASETS)}")
    if limit is not None and limit < 1:
        raise InvalidArgumentError(f"limit must be >= 1, got {limit}")
    records = _records(path)
    if limit is not None:
        records = records[:limit]
    questions = tuple(_question(path, kind, r, i) for i, r in enumerate(records))
    if corpus is not None:
        corpus_path = Path(corpus)
    elif kind == "2wikimultihopqa":
        corpus_path = path.parent / "corpus.json"
    else:
        corpus_path = path  # the corpus is the pooled context of the same file
    if not corpus_path.is_file():
        raise SourceError(
            str(corpus_path),
            f"corpus not found ({kind} questions need a passage corpus; pass --corpus)",
        )
    return EvalDataset(kind, path, corpus_path, questions)
