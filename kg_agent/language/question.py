"""One reading of a question, shared by every part of a query.

Why one value: retrieval, the multi-step engine, the Cypher-pack router and the
answer reader each need to know what a question asks: the articles it names, the
kind of answer, whether it compares, whether it asks for a connection. Read four
times, by four analysers, those answers drifted apart; read once here, every part
sees the same question. Each part of the reading is computed on first use and kept,
so a dense-only query never pays for entity linking.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from kg_agent.exceptions import InvalidArgumentError
from kg_agent.language.complexity import Complexity, ComplexityDecision, QueryComplexityClassifier
from kg_agent.language.intent import StructuralIntent, structural_intent
from kg_agent.language.names import question_names
from kg_agent.language.query_type import QueryType, classify_query_type, find_years
from kg_agent.language.shape import AnswerKind, QuestionShape, analyse
from kg_agent.language.tokens import content_words

__all__ = [
    "MAX_QUESTION_LENGTH",
    "Linker",
    "Question",
    "as_question",
    "check_question",
    "query_text",
]

#: Article titles a text names, in order of first appearance (the graph's entity linker).
Linker = Callable[[str], Sequence[str]]


@dataclass(frozen=True, eq=False)
class Question:
    """What ``text`` asks. ``link`` names the graph's articles in a text (without it,
    ``entities`` is empty and the complexity rules do without the entity count)."""

    text: str
    link: Linker | None = field(default=None, repr=False)
    #: what finds the question's topics when ``link`` finds no entity (lower-case
    #: words, surnames, acronyms: looser than retrieval's seeds should be)
    find_topics: Linker | None = field(default=None, repr=False)

    @cached_property
    def words(self) -> frozenset[str]:
        """Content words, lower-cased (stop words left out)."""
        return frozenset(content_words(self.text))

    @cached_property
    def names(self) -> tuple[str, ...]:
        """The capitalised names written in the question, as written."""
        return question_names(self.text)

    @cached_property
    def entities(self) -> tuple[str, ...]:
        """The graph's articles the question names (its topic entities), in order."""
        return tuple(self.link(self.text)) if self.link is not None else ()

    @cached_property
    def topics(self) -> tuple[str, ...]:
        """The articles the question asks about, for reading facts and for grounding: its
        ``entities``, else what ``find_topics`` finds ("Is aikido a Chinese martial
        art?": Aikido)."""
        if self.entities or self.find_topics is None:
            return self.entities
        return tuple(self.find_topics(self.text))

    @property
    def linked(self) -> bool:
        """Whether ``entities`` comes from the graph's linker."""
        return self.link is not None

    @cached_property
    def shape(self) -> QuestionShape:
        """The answer kind, the relation asked, the options of a choice, the hops."""
        return analyse(self.text)

    @property
    def kind(self) -> AnswerKind:
        return self.shape.kind

    @cached_property
    def complexity(self) -> ComplexityDecision:
        """Whether one retrieval pass should do (the multi-step engine's routing)."""
        return self.routed(None)

    def routed(self, force: Complexity | str | None) -> ComplexityDecision:
        """The routing with ``force`` ("simple"/"complex") applied, the rules' score kept."""
        count = (lambda _text: list(self.entities)) if self.link is not None else None
        return QueryComplexityClassifier(count_entities=count).classify(self.text, force=force)

    @cached_property
    def query_type(self) -> QueryType:
        """Comparison, trend, fact or other (the multi-step planner's shapes)."""
        return classify_query_type(self.text)

    @cached_property
    def intent(self) -> StructuralIntent | None:
        """The Cypher-pack query a structural question asks for ("How is X connected
        to Y?"), else None."""
        return structural_intent(self.text)

    @cached_property
    def years(self) -> tuple[str, ...]:
        return find_years(self.text)

    @property
    def is_comparison(self) -> bool:
        return self.kind is AnswerKind.CHOICE or self.query_type is QueryType.COMPARE

    @property
    def is_yes_no(self) -> bool:
        return self.kind is AnswerKind.YES_NO

    @property
    def is_connection(self) -> bool:
        return self.intent is not None and self.intent.kind == "path"

    def to_dict(self) -> dict[str, Any]:
        """The reading, JSON-ready (for traces)."""
        shape = self.shape
        return {
            "text": self.text,
            "kind": shape.kind.value,
            "relation": sorted(shape.relation),
            "names": list(self.names),
            "entities": list(self.entities),
            "options": list(shape.options),
            "query_type": self.query_type.value,
            "complexity": self.complexity.complexity.value,
            "intent": self.intent.query if self.intent is not None else None,
        }


def as_question(query: str | Question, link: Linker | None = None) -> Question:
    """``query`` itself when it is read already, else its reading (with ``link``)."""
    return query if isinstance(query, Question) else Question(query, link)


def query_text(query: str | Question) -> str:
    """The text of a query given as a string or as a :class:`Question`."""
    return query.text if isinstance(query, Question) else query


#: The longest question a query reads (characters, after whitespace is normalised).
MAX_QUESTION_LENGTH = 4000


def check_question(question: str) -> str:
    """The question, whitespace-normalised; empty or over-long ones are refused."""
    if not isinstance(question, str) or not question.strip():
        raise InvalidArgumentError("the question is empty")
    q = " ".join(question.split())
    if len(q) > MAX_QUESTION_LENGTH:
        raise InvalidArgumentError(
            f"the question is {len(q):,} characters long; the limit is {MAX_QUESTION_LENGTH:,}"
        )
    return q
