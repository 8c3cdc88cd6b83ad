"""Names to article titles: the one resolver behind the packs, multi-query and the linker.

Three questions, one place that answers them:

* **a name** ("von Neumann", "the Analytical Engine"): :meth:`EntityResolver.resolve`,
  what a Cypher pack binds its parameters with. Exact title or redirect, then the
  MediaWiki-normalised form (first letter upper, a leading "the" dropped), then the
  article-title BM25 index, accepting a hit only if its title holds every word asked
  for: "von Neumann" finds "John von Neumann", while a name only partly there
  ("Babbage engine") stays unresolved rather than guessed.
* **the names in a question**: :meth:`EntityResolver.link`, the
  :class:`~kg_agent.entities.linker.QuestionEntityLinker` (the ingest-time
  :class:`~kg_agent.entities.matcher.MentionMatcher` over every title).
* **titles like a text**: :meth:`EntityResolver.similar_titles`, the title index's
  best matches (multi-query's offline rewrites name them).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from kg_agent.entities.linker import QuestionEntityLinker
from kg_agent.language.tokens import FUNCTION_WORDS, QUOTES, words
from kg_agent.store.reader import GraphReader

__all__ = ["EntityResolver"]


class EntityResolver:
    """Resolves names against one graph; the linker is built on first :meth:`link`."""

    def __init__(self, store: GraphReader, linker: QuestionEntityLinker | None = None) -> None:
        self.store = store
        self._linker = linker

    @property
    def linker(self) -> QuestionEntityLinker:
        if self._linker is None:
            self._linker = QuestionEntityLinker(self.store, saved=self.store.linker_path())
        return self._linker

    def link(self, question: str) -> list[str]:
        """Article titles the question names, in order of first appearance."""
        return self.linker.link(question)

    def similar_titles(self, text: str, k: int = 5) -> list[str]:
        """The ``k`` titles the title index ranks best for ``text``."""
        return [t for t, _ in self.store.search_article_titles(text, k=k)]

    def resolve(self, name: str, *, kind: Literal["article", "category"] = "article") -> str | None:
        """The graph's canonical name for ``name``, or None (see the module doc)."""
        if kind == "category":
            return self.store.resolve_category(name)
        bare = " ".join(name.replace("_", " ").split()).strip(QUOTES + " ")
        if not bare:
            return None
        candidates = [bare, bare[0].upper() + bare[1:]]
        if bare.lower().startswith("the "):
            rest = bare[4:].strip()
            candidates += [rest, rest[:1].upper() + rest[1:]]
        for c in dict.fromkeys(candidates):
            if c:
                hit = self.store.resolve_title(c)
                if hit:
                    return hit
        wanted = _name_tokens(bare) - FUNCTION_WORDS
        if not wanted:
            return None
        for title, _score in self.store.search_article_titles(bare, k=10):
            if wanted <= _name_tokens(title):
                return title
        return None

    def resolve_all(
        self, names: Sequence[str], *, kind: Literal["article", "category"] = "article"
    ) -> list[str | None]:
        return [self.resolve(n, kind=kind) for n in names]


def _name_tokens(text: str) -> set[str]:
    """Lower-case words without a possessive and a plural ``s`` (name comparison)."""
    found = words(re.sub(r"['’]s\b", "", text.lower()))
    return {w[:-1] if len(w) > 3 and w.endswith("s") else w for w in found}
