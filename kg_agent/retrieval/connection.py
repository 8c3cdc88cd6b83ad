"""How two articles are connected, in words: each link of the graph between them with
the sentence that makes it.

The Cypher pack's ``connection_path`` returns titles (``['Ada Lovelace', 'Analytical
Engine', 'Howard Aiken', 'IBM']``); a person asked "How is Ada Lovelace connected to
IBM?" wants to read *why* each step holds. A link of the graph comes from a section
that mentions the other article (a ``MENTIONS`` edge), so the sentence of that section
that names it is the link's reason, and the section its citation.

What is stated, in this order:

* a **direct** link, each way: the sentence of one article that names the other;
* what the two **share** (articles linked with both, the ones both leads name first:
  "Abraham Lincoln" and "Albert Sidney Johnston" both write of the American Civil War),
  with each side's sentence;
* else the **shortest chain** the pack found, one step per line.

A link whose section names the other article only through a link's anchor text that
no sentence spells out is stated without a quote ("links to X in its section Y").
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from kg_agent.language.tokens import fold, split_sentences, words
from kg_agent.retrieval.base import Evidence
from kg_agent.store import GraphStore

__all__ = ["Connection", "Link", "connect"]

#: How many shared articles are stated (their sentences, two per article).
SHARED_SHOWN = 3
#: The longest quote of a link's sentence, in words.
QUOTE_WORDS = 45


@dataclass(frozen=True, slots=True)
class Link:
    """``source``'s text names ``target``: ``sentence`` (None: only the section links
    it), in the section ``evidence`` holds."""

    source: str
    target: str
    sentence: str | None
    evidence: Evidence

    def line(self, cite: Callable[[Evidence], int]) -> str:
        where = f"[{cite(self.evidence)}]"
        if self.sentence is None:
            section = self.evidence.heading_path or "introduction"
            return f"- {self.source} → {self.target}: linked from its section “{section}” {where}"
        return f"- {self.source} → {self.target}: “{self.sentence}” {where}"


@dataclass(frozen=True, slots=True)
class Connection:
    """The links between ``source`` and ``target`` (see the module docstring)."""

    source: str
    target: str
    direct: tuple[Link, ...] = ()
    shared: tuple[tuple[str, Link, Link], ...] = ()
    chain: tuple[Link, ...] = ()

    @property
    def links(self) -> list[Link]:
        out = list(self.direct)
        for _, a, b in self.shared:
            out += [a, b]
        return out + list(self.chain)

    @property
    def evidence(self) -> list[Evidence]:
        """The sections the links are read from, once each, in the order stated."""
        seen: dict[str, Evidence] = {}
        for link in self.links:
            seen.setdefault(link.evidence.section_id, link.evidence)
        return list(seen.values())

    @property
    def through(self) -> str | None:
        """What connects the two, in a few words: the first shared article, else the
        middle of a two-step chain."""
        if self.shared:
            return self.shared[0][0]
        if len(self.chain) == 2:
            return self.chain[0].target
        return None

    def describe(self, cite: Callable[[Evidence], int]) -> str:
        """The connection, one link per line, each cited with ``cite``'s number."""
        if not self.links:
            return f"The graph has no link between {self.source} and {self.target}."
        lines = [f"How {self.source} and {self.target} are connected in the graph:"]
        lines += [link.line(cite) for link in self.direct]
        for name, a, b in self.shared:
            lines.append(f"Both are linked with {name}:")
            lines += [a.line(cite), b.line(cite)]
        if self.chain:
            steps = [self.chain[0].source, *(link.target for link in self.chain)]
            lines.append(f"Through {len(self.chain)} links: " + " → ".join(steps))
            lines += [link.line(cite) for link in self.chain]
        return "\n".join(lines)


def connect(store: GraphStore, source: str, target: str, chain: Sequence[str] = ()) -> Connection:
    """The connection between two articles (canonical titles); ``chain`` the titles of
    the pack's shortest path, stated when the two neither link nor share a link."""
    reader = _Reader(store)
    direct = [
        link
        for a, b in ((source, target), (target, source))
        if (link := reader.link(a, b)) is not None
    ]
    shared = reader.shared(source, target)
    steps: list[Link] = []
    if not direct and not shared and len(chain) > 2:
        for a, b in itertools.pairwise(chain):
            link = reader.link(a, b) or reader.link(b, a)
            if link is None:
                steps = []
                break
            steps.append(link)
    return Connection(source, target, tuple(direct), tuple(shared), tuple(steps))


class _Reader:
    """The graph reads of one connection, sections read once."""

    def __init__(self, store: GraphStore) -> None:
        self.store = store
        self.sections: dict[str, Evidence] = {}

    def _evidence(self, ids: Sequence[str]) -> None:
        wanted = [i for i in dict.fromkeys(ids) if i not in self.sections]
        for sid, hit in self.store.sections_by_ids(wanted).items():
            self.sections[sid] = Evidence.from_hit(hit, 1.0, source="connection")

    def _link(self, source: str, target: str, section_ids: Sequence[str]) -> Link | None:
        self._evidence(section_ids)
        first: Evidence | None = None
        for sid in section_ids:
            ev = self.sections.get(sid)
            if ev is None:
                continue
            first = first or ev
            sentence = naming_sentence(ev.content, target)
            if sentence is not None:
                return Link(source, target, sentence, ev)
        return None if first is None else Link(source, target, None, first)

    def link(self, source: str, target: str) -> Link | None:
        rows = self.store.mention_sections(source, [target])
        return self._link(source, target, [sid for _, sid, _ in rows])

    def shared(self, a: str, b: str) -> list[tuple[str, Link, Link]]:
        found = self.store.shared_links(a, b)
        common = [z for z, _, _, _ in found]
        linking = {z: n for z, _, _, n in found}
        if not common:
            return []
        # where each side's text names each shared article (the lead first)
        places: dict[str, dict[str, list[tuple[int, str]]]] = {a: {}, b: {}}
        for side in (a, b):
            for z, sid, ordinal in self.store.mention_sections(side, common):
                places[side].setdefault(z, []).append((ordinal, sid))
        both = [z for z in common if z in places[a] and z in places[b]]

        def rank(z: str) -> tuple[float, int]:
            # named early on both sides, and linked from few articles: "Apollo program"
            # says more of two Apollo missions than "Moon", which half the graph links
            lead = sum(1.0 / (1 + min(o for o, _ in places[side][z])) for side in (a, b))
            return (-lead / math.log(2 + linking.get(z, 0)), common.index(z))

        out: list[tuple[str, Link, Link]] = []
        for z in sorted(both, key=rank):
            la = self._link(a, z, [sid for _, sid in sorted(places[a][z])])
            lb = self._link(b, z, [sid for _, sid in sorted(places[b][z])])
            if la is not None and lb is not None and la.sentence and lb.sentence:
                out.append((z, la, lb))
            if len(out) >= SHARED_SHOWN:
                break
        return out


def naming_sentence(text: str, title: str) -> str | None:
    """The sentence of ``text`` that names ``title`` (its name before any parenthesis,
    else a name's last word: "Lincoln" for "Abraham Lincoln"), cut to :data:`QUOTE_WORDS`."""
    base = title.split(" (")[0]
    full = fold(base)
    tail = base.split()[-1] if len(base.split()) > 1 else ""
    # a name's last word alone ("Lincoln"), not a thing's ("orbit" of "Selenocentric orbit")
    last = words(fold(tail)) if tail[:1].isupper() else []
    sentences = split_sentences(text, min_words=3)
    found = next((s for s in sentences if full in fold(s)), None)
    if found is None and last and len(last[0]) > 3:
        found = next((s for s in sentences if last[0] in words(fold(s))), None)
    if found is None:
        return None
    ws = found.split()
    return found if len(ws) <= QUOTE_WORDS else " ".join(ws[:QUOTE_WORDS]) + " …"
