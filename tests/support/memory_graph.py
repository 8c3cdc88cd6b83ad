"""A small knowledge graph held in Python lists: the :class:`GraphReader` of unit tests.

It answers every read of :class:`kg_agent.store.GraphReader` with the same meaning
as the Kùzu store (section ids ``TITLE::0000``…, stubs left out of entity names,
links undirected and strongest first in :meth:`link_neighbourhood`, BM25 over
section headings and text), so retrievers and stages are tested on the logic,
without a database. The end-to-end tests run the same retrievers on real Kùzu.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from kg_agent.ingest.infobox import extract_boxes
from kg_agent.ingest.kinds import entity_kind
from kg_agent.ingest.shards import fact_rows
from kg_agent.language.tokens import words
from kg_agent.store import FactKey, FactRow, SectionHit
from kg_agent.store.section_ids import lead_id

__all__ = ["MemoryArticle", "MemoryGraph"]


@dataclass
class MemoryArticle:
    title: str
    sections: list[tuple[str, str]]  # (heading, text); the first is the lead
    links: dict[str, int] = field(default_factory=dict)  # target title -> count
    categories: list[str] = field(default_factory=list)
    pagerank: float = 0.0
    is_stub: bool = False
    #: the wikitext of its infobox, read as a load reads it (facts, kind)
    infobox: str = ""


class MemoryGraph:
    """Articles, redirects and (optionally) section vectors from ``embed``."""

    def __init__(
        self,
        articles: Iterable[MemoryArticle],
        *,
        redirects: dict[str, str] | None = None,
        embed: Any = None,
        model: str = "memory-model",
        text_index: bool = True,
    ) -> None:
        self.path = "memory-graph"
        self.articles = {a.title: a for a in articles}
        self.redirects = dict(redirects or {})
        self._text_index = text_index
        self._sections: dict[str, SectionHit] = {}
        for a in self.articles.values():
            for i, (heading, text) in enumerate(a.sections):
                sid = f"{a.title}::{i:04d}"
                path = f"{a.title} > {heading}" if heading else a.title
                self._sections[sid] = SectionHit(sid, a.title, heading, path, text, 0.0, a.pagerank)
        self._ids = sorted(self._sections)
        self._vectors: Any = None
        self._facts: dict[str, list[FactRow]] = {}
        self._kinds: dict[str, str] = {}
        for a in self.articles.values():
            boxes = extract_boxes(a.infobox) if a.infobox else ()
            self._kinds[a.title] = (
                "" if a.is_stub else entity_kind([b.type for b in boxes], a.categories)
            )
            rows = fact_rows(a.title, [f for b in boxes for f in b.facts], 0)
            self._facts[a.title] = [
                FactRow(
                    **{
                        **{k: v for k, v in r.items() if k != "_ord"},
                        "target": self._resolve(r["target"]) if r["target"] else "",
                    }
                )
                for r in rows
            ]
        self._meta = {"embeddings": "none"}
        if embed is not None:
            texts = [self._sections[s].text for s in self._ids]
            self._vectors = np.asarray(embed(texts), dtype=np.float32)
            self._meta = {"embeddings": "complete", "model": model}
        self._df = Counter(t for s in self._ids for t in set(self._terms(s)))

    # ------------------------------------------------------------ what it holds
    def meta(self) -> dict[str, str]:
        return dict(self._meta)

    def count_articles(self) -> int:
        return sum(not a.is_stub for a in self.articles.values())

    def count_redirects(self) -> int:
        return len(self.redirects)

    def count_sections(self) -> int:
        return len(self._sections)

    def loads(self) -> list[dict[str, Any]]:
        return [{"id": "memory", "status": "complete"}]

    def linker_path(self) -> Path | None:
        return None

    def has_text_index(self) -> bool:
        return self._text_index

    # ------------------------------------------------------------ names
    def entity_names(self) -> tuple[list[str], list[tuple[str, str]]]:
        real = [t for t, a in self.articles.items() if not a.is_stub]
        aliases = [(r, t) for r, t in self.redirects.items() if t in real]
        return real, aliases

    def resolve_title(self, title: str, *, with_text: bool = False) -> str | None:
        found = title if title in self.articles else self.redirects.get(title)
        if found is None or found not in self.articles:
            return None  # a redirect to no article resolves to nothing, as in Kùzu
        return None if with_text and self.articles[found].is_stub else found

    def resolve_category(self, name: str) -> str | None:
        names = sorted({c for a in self.articles.values() for c in a.categories})
        bare = name.strip()
        if bare[:9].lower() == "category:":
            bare = bare[9:].strip()
        if bare in names:
            return bare
        return next((c for c in names if c.lower() == bare.lower()), None)

    def search_article_titles(
        self, text: str, k: int = 5, *, with_text: bool = False
    ) -> list[tuple[str, float]]:
        if not self._text_index or k < 1:
            return []
        asked = set(words(text))
        scored = []
        for t, a in self.articles.items():
            if with_text and a.is_stub:
                continue
            hit = len(asked & set(words(t)))
            if hit:
                scored.append((t, hit / math.sqrt(len(words(t))), a))
        scored.sort(key=lambda x: (-round(x[1], 6), x[2].is_stub, -x[2].pagerank, x[0]))
        return [(t, s) for t, s, _ in scored[:k]]

    # ------------------------------------------------------------ sections
    def sections_by_ids(self, ids: Sequence[str]) -> dict[str, SectionHit]:
        return {i: self._sections[i] for i in dict.fromkeys(ids) if i in self._sections}

    def lead_sections(self, titles: Sequence[str]) -> dict[str, SectionHit]:
        hits = self.sections_by_ids([lead_id(t) for t in titles])
        return {h.title: h for h in hits.values()}

    def sections_of_articles(self, titles: Sequence[str]) -> list[tuple[SectionHit, list[float]]]:
        out = []
        for i, sid in enumerate(self._ids):
            if self._sections[sid].title in titles:
                vec = list(self._vectors[i]) if self._vectors is not None else []
                out.append((self._sections[sid], vec))
        return out

    def section_embeddings(self) -> tuple[list[str], Any]:
        if self._vectors is None:
            return [], np.zeros((0, 1), dtype=np.float32)
        return list(self._ids), self._vectors

    def vector_search(self, embedding: Sequence[float], k: int) -> list[SectionHit]:
        if self._vectors is None or k < 1:
            return []
        sims = self._vectors @ np.asarray(embedding, dtype=np.float32)
        order = np.argsort(-sims, kind="stable")[:k]
        return [_scored(self._sections[self._ids[i]], float(sims[i])) for i in order]

    def fts_search(self, text: str, k: int) -> list[SectionHit]:
        return self._bm25(text, self._ids, k)

    def text_search_within(self, text: str, titles: Sequence[str], k: int) -> list[SectionHit]:
        wanted = set(titles)
        return self._bm25(text, [s for s in self._ids if self._sections[s].title in wanted], k)

    def text_hits_within(
        self, text: str, titles: Sequence[str], k: int
    ) -> list[tuple[str, str, float]]:
        return [(h.section_id, h.title, h.score) for h in self.text_search_within(text, titles, k)]

    def word_rarity(self, words: Sequence[str]) -> list[float]:
        if not self._text_index:
            return [0.0] * len(words)
        n = len(self._ids)
        top = math.log(n + 1.0)
        return [math.log((n + 1.0) / (self._df[w.lower()] + 1.0)) / top for w in words]

    def _terms(self, sid: str) -> list[str]:
        hit = self._sections[sid]
        return words(f"{hit.heading} {hit.text}".lower())

    def _bm25(self, text: str, ids: Sequence[str], k: int) -> list[SectionHit]:
        if not self._text_index or k < 1:
            return []
        query = set(words(text.lower()))
        n = len(self._ids)
        avg = sum(len(self._terms(s)) for s in self._ids) / max(n, 1)
        scored = []
        for sid in ids:
            terms = self._terms(sid)
            tf = Counter(terms)
            score = 0.0
            for q in query & tf.keys():
                idf = math.log(1 + (n - self._df[q] + 0.5) / (self._df[q] + 0.5))
                f = tf[q]
                score += idf * f * 2.2 / (f + 1.2 * (0.25 + 0.75 * len(terms) / avg))
            if score > 0:
                scored.append((score, sid))
        scored.sort(key=lambda x: (-x[0], x[1]))
        return [_scored(self._sections[s], sc) for sc, s in scored[:k]]

    # ------------------------------------------------------------ the link graph
    def link_neighbourhood(
        self, titles: Sequence[str], *, limit: int, per_title: int | None = None
    ) -> list[tuple[str, str, int]]:
        wanted = list(dict.fromkeys(titles))
        inside = set(wanted)
        edges = []
        for t in wanted:
            if t not in self.articles:
                continue
            out = sorted(self.articles[t].links.items(), key=lambda x: -x[1])
            inc = sorted(
                ((s, a.links[t]) for s, a in self.articles.items() if t in a.links),
                key=lambda x: -x[1],
            )
            for side in (out, inc):
                for b, n in side[:per_title] if per_title else side:
                    if b in self.articles and not (b in inside and b < t):
                        edges.append((t, b, n))
        edges = edges[:limit]
        edges.sort(key=lambda e: (-e[2], e[0], e[1]))
        return edges

    def article_pageranks(self, titles: Sequence[str]) -> dict[str, float]:
        return {t: self.articles[t].pagerank for t in titles if t in self.articles}

    def pagerank_bounds(self) -> tuple[float, float]:
        ranks = [a.pagerank for a in self.articles.values() if a.pagerank > 0 and not a.is_stub]
        return (min(ranks), max(ranks)) if ranks else (0.0, 0.0)

    # ------------------------------------------------------------------ facts
    def _resolve(self, title: str) -> str:
        return self.redirects.get(title, title)

    def facts_of(self, titles: Sequence[str]) -> list[FactRow]:
        return [f for t in dict.fromkeys(titles) for f in self._facts.get(t, [])]

    def facts_naming(self, titles: Sequence[str]) -> list[FactRow]:
        wanted = set(titles)
        return [f for rows in self._facts.values() for f in rows if f.target in wanted]

    def fact_keys_naming(self, titles: Sequence[str]) -> list[FactKey]:
        rows = self.facts_naming(titles)
        return [FactKey(f.id, f.article, f.sub_box, f.key, f.raw_key) for f in rows]

    def article_kinds(self, titles: Sequence[str]) -> dict[str, str]:
        return {t: self._kinds[t] for t in dict.fromkeys(titles) if t in self._kinds}


def _scored(hit: SectionHit, score: float) -> SectionHit:
    return SectionHit(
        hit.section_id, hit.title, hit.heading, hit.heading_path, hit.text, score, hit.pagerank
    )
