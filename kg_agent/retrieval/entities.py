"""Question entity linking: which articles does a question name?

Multi-hop questions name their first hop ("Who is the mother of the director
of *Polish-Russian War*?"). Finding that article by its title is far more
reliable than hoping its text is similar to the question, and its links lead
to the second hop. The linker reuses the ingest-time :class:`MentionMatcher`
(whole words, longest match, case-tolerant for title-cased questions,
parenthetical base names, redirect aliases), with ``ambiguous="all"``: a
question that says "Dark River" seeds every "Dark River (…)" article, and the
similarity ranking downstream picks among them.

Building the automaton reads every title once (~1 s per 100k titles, ~0.5
GiB per million); above ``max_titles`` the linker falls back to the title
full-text index and keeps only titles whose every word is in the question.
"""

from __future__ import annotations

import re
import threading

from kg_agent.ingest.mentions import MentionMatcher
from kg_agent.store import GraphStore

__all__ = ["QuestionEntityLinker"]

MAX_AUTOMATON_TITLES = 2_000_000
_WORD = re.compile(r"\w+")


class QuestionEntityLinker:
    """Article titles named in a question, in order of first appearance."""

    def __init__(self, store: GraphStore, *, max_titles: int = MAX_AUTOMATON_TITLES) -> None:
        self.store = store
        self.max_titles = max_titles
        self._matcher: MentionMatcher | None = None
        self._use_fts = False
        self._lock = threading.Lock()

    def _ensure(self) -> None:
        with self._lock:
            if self._matcher is not None or self._use_fts:
                return
            n = self.store.count("MATCH (a:Article) WHERE NOT a.is_stub RETURN count(a)")
            if n > self.max_titles:
                self._use_fts = True
                return
            titles, aliases = self.store.entity_names()
            self._matcher = MentionMatcher(titles, aliases, ambiguous="all")

    def link(self, question: str) -> list[str]:
        self._ensure()
        if self._matcher is not None:
            found = self._matcher.find(question)
            # order of first appearance in the question
            lowered = question.lower()
            return sorted(found, key=lambda t: _position(lowered, t))
        words = {w.lower() for w in _WORD.findall(question)}
        out = []
        for title, _ in self.store.search_article_titles(question, k=10):
            title_words = {w.lower() for w in _WORD.findall(title.split(" (")[0])}
            if title_words and title_words <= words:
                out.append(title)
        return out


def _position(lowered_question: str, title: str) -> int:
    base = title.split(" (")[0].lower()
    i = lowered_question.find(base)
    return i if i >= 0 else len(lowered_question)
