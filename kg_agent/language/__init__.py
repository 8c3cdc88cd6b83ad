"""Reading English: words and stop lists, names, dates and numbers, and what a
question asks (:class:`Question`, read once per query and shared by every part).

No graph access here: the entity linker comes in as a callable.
"""

from kg_agent.language.complexity import Complexity, ComplexityDecision
from kg_agent.language.intent import StructuralIntent
from kg_agent.language.query_type import QueryType
from kg_agent.language.question import Linker, Question, as_question, query_text
from kg_agent.language.shape import AnswerKind, QuestionShape

__all__ = [
    "AnswerKind",
    "Complexity",
    "ComplexityDecision",
    "Linker",
    "QueryType",
    "Question",
    "QuestionShape",
    "StructuralIntent",
    "as_question",
    "query_text",
]
