"""Numbered evidence for synthesis, and the citations that map ``[n]`` back to sections.

:class:`MultiDocSynthesizer` groups evidence by article (a model reasons better
over "everything we have on Charles Babbage" than over interleaved fragments),
numbering sections so every ``[n]`` names one article *and* one section.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

from kg_agent.retrieval.base import Evidence

_CITE = re.compile(r"\[(\d{1,3}(?:\s*[,–-]\s*\d{1,3})*)\]")
_RANGE_MARK = re.compile(r"(\d{1,3})\s*[–-]\s*(\d{1,3})")


def _cited_numbers(marker: str) -> list[int]:
    """The numbers of one marker's inside: "3", "1, 2", "1–3" (a range, up to 20 long)."""
    out: list[int] = []
    for part in re.split(r"\s*,\s*", marker):
        r = _RANGE_MARK.fullmatch(part)
        if r is not None:
            a, b = int(r.group(1)), int(r.group(2))
            out += list(range(a, b + 1)) if 0 <= b - a <= 20 else [a, b]
        elif part.isdigit():
            out.append(int(part))
    return out


@dataclass(frozen=True, slots=True)
class Citation:
    """``[n]`` in an answer: which article and section it points to."""

    n: int
    title: str
    heading_path: str
    section_id: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class NumberedEvidence:
    """Evidence with its citation numbers, in the order they run; ``text`` is the block
    as the prompt showed it (before :meth:`renumbered`)."""

    items: tuple[tuple[int, Evidence], ...]
    text: str

    def citation(self, n: int) -> Citation | None:
        for num, ev in self.items:
            if num == n:
                return Citation(n, ev.title, ev.heading_path, ev.section_id)
        return None

    def renumbered(self, texts: list[str]) -> tuple[list[str], NumberedEvidence]:
        """Number the evidence 1..n in the order ``texts`` cite it, the uncited after
        in their order, and rewrite the texts' ``[n]`` to match: a reader sees [1], [2],
        [3] and finds each at that place in the evidence list. Markers that name no
        evidence are left as written."""
        order: list[int] = []
        valid = {num for num, _ in self.items}
        for text in texts:
            for m in _CITE.finditer(text):
                for n in _cited_numbers(m.group(1)):
                    if n in valid and n not in order:
                        order.append(n)
        order += [num for num, _ in self.items if num not in order]
        new = {old: i for i, old in enumerate(order, 1)}
        by_num = dict(self.items)

        def swap(m: re.Match[str]) -> str:
            nums = _cited_numbers(m.group(1))
            if not all(n in new for n in nums):
                return m.group(0)  # names evidence that is not there: left as written
            return "[" + ", ".join(str(new[n]) for n in nums) + "]"

        items = tuple((new[old], by_num[old]) for old in order)
        return [_CITE.sub(swap, t) for t in texts], NumberedEvidence(items, self.text)

    def without_unknown_citations(self, text: str) -> tuple[str, list[int]]:
        """``text`` with the ``[n]`` that name no evidence item taken out (from a marker
        of several, only those), and the numbers taken out: a model that cites [9] of
        eight items has cited nothing a reader can check."""
        valid = {num for num, _ in self.items}
        unknown: list[int] = []

        def keep(m: re.Match[str]) -> str:
            nums = _cited_numbers(m.group(1))
            bad = [n for n in nums if n not in valid]
            if not bad:
                return m.group(0)
            unknown.extend(n for n in bad if n not in unknown)
            good = [n for n in nums if n in valid]
            return "[" + ", ".join(map(str, good)) + "]" if good else ""

        out = _CITE.sub(keep, text)
        if unknown:
            out = re.sub(r"[ \t]+([.,;:!?])", r"\1", re.sub(r"[ \t]{2,}", " ", out))
        return out, unknown

    def citations_in(self, answer: str) -> list[Citation]:
        """Citations for the distinct valid ``[n]`` markers of ``answer``, in order."""
        seen: list[Citation] = []
        for m in _CITE.finditer(answer):
            for n in _cited_numbers(m.group(1)):
                c = self.citation(n)
                if c is not None and c not in seen:
                    seen.append(c)
        return seen


def _section_label(ev: Evidence) -> str:
    return ev.heading_path or "introduction"


class MultiDocSynthesizer:
    """Builds the numbered evidence block, grouped by article when ``group`` is on."""

    def __init__(self, *, group: bool = True, max_chars_per_section: int = 1500) -> None:
        self.group = group
        self.max_chars = max_chars_per_section

    def cut(self, content: str) -> str:
        """A section's text as the prompt shows it."""
        return content if len(content) <= self.max_chars else content[: self.max_chars] + " …"

    def shown(self, items: Sequence[tuple[int, Evidence]]) -> tuple[tuple[int, Evidence], ...]:
        """``items`` with each section's text as the prompt shows it (what a check of the
        prompt's evidence must read)."""
        return tuple((n, replace(ev, content=self.cut(ev.content))) for n, ev in items)

    def number(self, evidence: Sequence[Evidence]) -> NumberedEvidence:
        ordered = list(evidence)
        if self.group:
            order: dict[str, list[Evidence]] = {}
            for ev in ordered:
                order.setdefault(ev.title, []).append(ev)
            ordered = [ev for group in order.values() for ev in group]
        items = tuple((i, ev) for i, ev in enumerate(ordered, 1))
        lines: list[str] = []
        current = None
        for n, ev in items:
            text = self.cut(ev.content)
            if self.group:
                if ev.title != current:
                    current = ev.title
                    lines.append(f"\n## {ev.title}")
                lines.append(f"[{n}] ({_section_label(ev)}) {text}")
            else:
                lines.append(f"[{n}] {ev.title} — {_section_label(ev)}: {text}")
        return NumberedEvidence(items, "\n".join(lines).strip())
