"""Entities: how names in text, in questions and in pack parameters become articles.

* :class:`MentionMatcher` (``matcher``): every title in one automaton; finds the
  titles a text mentions (ingest's mention edges, and the linker's engine).
* :class:`QuestionEntityLinker` (``linker``): the titles a question names.
* :class:`EntityResolver` (``resolver``): the one resolver the query side uses.
"""

from kg_agent.entities.linker import QuestionEntityLinker, acronym_title, alias_title
from kg_agent.entities.matcher import MentionMatcher
from kg_agent.entities.resolver import EntityResolver

__all__ = [
    "EntityResolver",
    "MentionMatcher",
    "QuestionEntityLinker",
    "acronym_title",
    "alias_title",
]
