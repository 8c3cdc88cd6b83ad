"""Claude path of bridge-entity extraction: which names in the evidence lead to the missing hop.

A multi-hop question ("Where was the director of *Jaws* born?") is rarely answered
by the first retrieval: it finds the *Jaws* article, which names Steven Spielberg,
but not his birthplace. The name that links the evidence found so far to the
evidence still missing is the *bridge entity*; searching for it is the next hop.

:func:`llm_bridge_entities` asks ``claude-haiku-4-5-20251001`` for those names
and for what information is still missing (the question and the evidence text
leave the machine: see the data notice in :mod:`kg_agent.llm.client`). Every
name it returns is checked against the evidence: a name that does not occur
verbatim in the evidence titles or text (case-, whitespace- and
accent-insensitively) is a hallucination, dropped with a logged warning and
listed in :attr:`BridgeExtraction.dropped`, so the next hop never searches for
something the model made up.

This module raises :class:`~kg_agent.llm.client.LLMError` on any failure; the
caller owns the offline fallback.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from kg_agent.llm.client import (
    FAST_MODEL,
    LLMClient,
    LLMError,
    UsageMeter,
    metered_complete,
    parse_json_reply,
)
from kg_agent.retrieval.base import Evidence

__all__ = [
    "BRIDGE_MODEL",
    "MAX_SECTION_CHARS",
    "BridgeExtraction",
    "build_bridge_prompt",
    "llm_bridge_entities",
    "normalise_for_match",
    "occurs_verbatim",
    "parse_bridge_reply",
]

log = logging.getLogger(__name__)

BRIDGE_MODEL = FAST_MODEL
#: Characters of each section's text shown to the model.
MAX_SECTION_CHARS = 1200
#: Characters of the question shown to the model.
MAX_QUESTION_CHARS = 500
#: Sections shown to the model at most (the verbatim check still uses all of them).
MAX_SECTIONS = 12
#: An entity longer than this is a sentence, not a name.
MAX_ENTITY_CHARS = 120

SYSTEM_PROMPT = (
    "You help a Wikipedia question-answering system plan its next search. You are given a "
    "question and numbered evidence sections retrieved so far. The evidence may answer only "
    "part of a multi-hop question. Name the bridge entities: people, places, works, "
    "organisations or other names that appear in the evidence and that the next search must "
    "look up to find the missing information. Copy each name exactly as it is written in the "
    "evidence; never name anything that is not in the evidence. Then say briefly what "
    "information is still missing.\n"
    "Reply with exactly two lines and nothing else:\n"
    "entities: <name>; <name>; ...\n"
    "gaps: <missing fact>; <missing fact>; ...\n"
    "Write 'entities: none' or 'gaps: none' when there is nothing to list."
)

_LINE = re.compile(
    r"^[\s>*_#-]*(entities|entity|bridge entities|gaps|missing)[\s*_]*:[\s*_]*(.*)$",
    re.IGNORECASE | re.MULTILINE,
)
_NONE_VALUES = frozenset({"", "none", "n/a", "na", "nothing", "-", "no", "null"})
#: Punctuation that NFKD leaves alone but writers vary: curly quotes, dashes.
_PUNCT = str.maketrans(
    {
        "‘": "'",
        "’": "'",
        "ʼ": "'",
        "“": '"',
        "”": '"',
        "‐": "-",
        "‑": "-",
        "‒": "-",
        "–": "-",
        "—": "-",
        "−": "-",
    }
)
_STRIP_CHARS = " \t\r\n\"'`*•·.,;:"


@dataclass(frozen=True)
class BridgeExtraction:
    """What the extractor found.

    ``entities``: bridge names that occur verbatim in the evidence, in the model's order,
    deduplicated. ``gaps``: what information the model says is still missing.
    ``dropped``: names the model gave that are not in the evidence (hallucinations).
    ``source``: which path produced this (``"claude"`` here; the offline extractor sets
    its own).
    """

    entities: tuple[str, ...]
    gaps: tuple[str, ...]
    dropped: tuple[str, ...]
    source: str


# --------------------------------------------------------------------------- matching


def normalise_for_match(text: str) -> str:
    """Casefolded, accent-free (NFKD without combining marks), whitespace-collapsed text.

    Curly quotes and dashes become their ASCII forms, so "O’Brien" matches "O'Brien"
    and "Gödel" matches "Godel".
    """
    decomposed = unicodedata.normalize("NFKD", text.translate(_PUNCT))
    stripped = "".join(c for c in decomposed if not unicodedata.combining(c))
    return " ".join(stripped.casefold().split())


def occurs_verbatim(entity: str, normalised_haystack: str) -> bool:
    """Whether ``entity`` occurs in the (already normalised) text as a whole-word run.

    Word boundaries keep a short name from matching inside a longer word ("Al" is not
    found in "Alabama").
    """
    needle = normalise_for_match(entity)
    if not needle:
        return False
    pattern = rf"(?<!\w){re.escape(needle)}(?!\w)"
    return re.search(pattern, normalised_haystack) is not None


def _evidence_haystack(evidence: Sequence[Evidence]) -> str:
    parts: list[str] = []
    for ev in evidence:
        parts.extend((ev.title, ev.heading, ev.heading_path, ev.content))
    return normalise_for_match("\n".join(p for p in parts if p))


# --------------------------------------------------------------------------- prompt


def _truncate(text: str, limit: int) -> str:
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[:limit]
    space = cut.rfind(" ")
    if space > limit * 0.8:
        cut = cut[:space]
    return cut.rstrip() + " …"


def build_bridge_prompt(question: str, evidence: Sequence[Evidence]) -> str:
    """The user turn: the question, then the numbered sections (title + truncated text)."""
    lines = [f"Question: {_truncate(question, MAX_QUESTION_CHARS)}", "", "Evidence:"]
    for i, ev in enumerate(evidence[:MAX_SECTIONS], start=1):
        heading = f" — {ev.heading}" if ev.heading and ev.heading != ev.title else ""
        lines.append(f"[{i}] {ev.title}{heading}")
        lines.append(_truncate(ev.content, MAX_SECTION_CHARS))
        lines.append("")
    lines.append(
        "Which entities in the evidence bridge to the information still missing, "
        "and what is missing? Answer with the two lines 'entities:' and 'gaps:'."
    )
    return "\n".join(lines)


# --------------------------------------------------------------------------- parsing


def _split_items(value: Any) -> list[str]:
    """A list of strings from a JSON list, or a ``;``-separated string."""
    if value is None:
        return []
    if isinstance(value, str):
        raw: Iterable[Any] = value.split(";")
    elif isinstance(value, list):
        raw = value
    else:
        return []
    out: list[str] = []
    for item in raw:
        if isinstance(item, dict):  # {"name": "..."} style entries
            item = item.get("name") or item.get("entity") or item.get("text")
        if not isinstance(item, str):
            continue
        cleaned = " ".join(item.split()).strip(_STRIP_CHARS)
        if cleaned.casefold() in _NONE_VALUES:
            continue
        out.append(cleaned)
    return out


def _from_json(text: str) -> tuple[list[str], list[str]] | None:
    try:
        data = parse_json_reply(text)
    except LLMError:
        return None
    if not isinstance(data, dict):
        return None
    keys = {str(k).casefold(): v for k, v in data.items()}
    if "entities" not in keys and "gaps" not in keys:
        return None
    return _split_items(keys.get("entities")), _split_items(keys.get("gaps"))


def _from_lines(text: str) -> tuple[list[str], list[str]] | None:
    entities: list[str] = []
    gaps: list[str] = []
    found = False
    for match in _LINE.finditer(text):
        found = True
        label, value = match.group(1).casefold(), match.group(2)
        target = gaps if label in ("gaps", "missing") else entities
        target.extend(_split_items(value))
    return (entities, gaps) if found else None


def parse_bridge_reply(text: str) -> tuple[list[str], list[str]]:
    """``(entities, gaps)`` from a JSON object or the ``entities:`` / ``gaps:`` lines.

    Raises ``LLMError("bad_response")`` when the reply has neither format.
    """
    parsed = _from_json(text) or _from_lines(text)
    if parsed is None:
        preview = text.strip()[:80]
        raise LLMError("bad_response", f"bridge reply has no entities/gaps: {preview!r}")
    return parsed


def _dedupe(items: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for item in items:
        key = normalise_for_match(item)
        if key and key not in seen:
            seen.add(key)
            out.append(item)
    return out


# --------------------------------------------------------------------------- entry point


def llm_bridge_entities(
    question: str,
    evidence: Sequence[Evidence],
    client: LLMClient,
    *,
    model: str = BRIDGE_MODEL,
    meter: UsageMeter | None = None,
    timeout: float = 15.0,
    max_entities: int = 8,
) -> BridgeExtraction:
    """Bridge entities and missing information from Claude, checked against the evidence.

    Raises :class:`LLMError` on any failure (the call, or a reply in neither format);
    the caller falls back to its offline extractor. On ``meter``: a failed call is
    counted with ``record_failure``; a reply is recorded with ``record`` (its tokens
    were spent) and, when it cannot be parsed, also counted as a failure.
    Entities the model named that are not in the evidence are dropped, logged and
    returned in ``dropped``; at most ``max_entities`` entities (and gaps) are kept.
    """
    prompt = build_bridge_prompt(question, evidence)
    reply = metered_complete(
        client,
        meter,
        model=model,
        system=SYSTEM_PROMPT,
        prompt=prompt,
        max_tokens=300,
        timeout=timeout,
    )
    try:
        raw_entities, raw_gaps = parse_bridge_reply(reply.text)
    except LLMError:
        if meter is not None:
            meter.record_failure()
        raise

    haystack = _evidence_haystack(evidence)
    kept: list[str] = []
    dropped: list[str] = []
    for entity in _dedupe(raw_entities):
        if len(entity) <= MAX_ENTITY_CHARS and occurs_verbatim(entity, haystack):
            kept.append(entity)
        else:
            dropped.append(entity)
    if dropped:
        log.warning(
            "bridge extraction dropped %d entit%s not found verbatim in the evidence: %s",
            len(dropped),
            "y" if len(dropped) == 1 else "ies",
            "; ".join(dropped),
        )
    limit = max(0, max_entities)
    return BridgeExtraction(
        entities=tuple(kept[:limit]),
        gaps=tuple(_dedupe(raw_gaps)[:limit]),
        dropped=tuple(dropped),
        source="claude",
    )
