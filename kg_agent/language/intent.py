"""Structural questions: "How is X connected to Y?", "What links to X?", "What is in
category X?" — each mapped to a named query of the bundled Cypher pack.

Only whole-question phrasings match, so a content question that merely contains
"linked" falls through to retrieval. The entity strings are returned as asked;
:mod:`kg_agent.retrieval.structural` resolves them against the graph and runs the
query (values always travel as parameters).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from kg_agent.exceptions import InvalidArgumentError
from kg_agent.language.tokens import QUOTES

__all__ = ["IntentKind", "StructuralIntent", "structural_intent"]

IntentKind = Literal[
    "path",
    "incoming",
    "mentions",
    "neighbours",
    "categories_of",
    "category_members",
    "common_neighbours",
    "co_mentioned",
    "top",
]


@dataclass(frozen=True)
class StructuralIntent:
    """A question about the graph's shape, mapped to a pack query.

    ``entities`` are the strings as asked; the caller resolves them
    (:func:`resolve_entities`, :func:`bind_intent`) before running ``query``
    with them as ``params`` (aligned with ``entities``).
    """

    kind: IntentKind
    query: str
    entities: tuple[str, ...]
    params: tuple[str, ...]
    entity_kind: Literal["article", "category"] = "article"

    def bind(self, resolved: Sequence[str]) -> dict[str, str]:
        """Pack parameters from resolved names, in ``entities`` order."""
        if len(resolved) != len(self.params):
            raise InvalidArgumentError(
                f"intent {self.kind} takes {len(self.params)} entities, got {len(resolved)}"
            )
        return dict(zip(self.params, resolved, strict=True))


_E = r"(?P<a>.+?)"
_F = r"(?P<b>.+?)"
_ART = r"(?:\s+(?:other\s+)?(?:articles?|pages?|entries|entities|nodes))?"
_CAT = r"(?:the\s+)?categor(?:y|ies)\s*:?\s*"
_CONNECTED = r"(?:connected|related|linked|tied)"

# (kind, pack query, entity params, entity kind, patterns), tried in order:
# "what links to X" must win over "what links X and Y".
_INTENTS: tuple[
    tuple[IntentKind, str, tuple[str, ...], Literal["article", "category"], tuple[str, ...]], ...
] = (
    (
        "incoming",
        "articles_linking_to",
        ("title",),
        "article",
        (
            rf"(?:what|which|who){_ART}\s+(?:links?|points?|refers?)\s+to\s+{_E}",
            rf"(?:what|which){_ART}\s+(?:is|are)\s+linking\s+to\s+{_E}",
            rf"(?:list|show|find)(?:\s+the)?{_ART}\s+(?:that\s+)?(?:links?|linking)\s+to\s+{_E}",
            rf"(?:what|which){_ART}\s+(?:is|are)\s+linked\s+to\s+{_E}",
        ),
    ),
    (
        "path",
        "connection_path",
        ("source", "target"),
        "article",
        (
            rf"how\s+(?:is|are|was|were)\s+{_E}\s+{_CONNECTED}\s+(?:to|with)\s+{_F}",
            rf"how\s+(?:is|are|was|were)\s+{_E}\s+and\s+{_F}\s+{_CONNECTED}"
            r"(?:\s+to\s+(?:each\s+other|one\s+another)|\s+together)?(?:\s+in\s+the\s+graph)?",
            rf"(?:what|which\s+articles?)\s+(?:connects?|links?|relates?|ties?)\s+{_E}\s+"
            rf"(?:and|to|with)\s+{_F}",
            rf"what\s+is\s+the\s+(?:connection|link|relationship|relation|path)\s+between\s+{_E}"
            rf"\s+and\s+{_F}",
            rf"(?:(?:find|show)\s+)?(?:the|a)?\s*(?:shortest\s+)?(?:link\s+)?path\s+"
            rf"(?:from|between)\s+{_E}\s+(?:to|and)\s+{_F}",
            rf"(?:is|are)\s+{_E}\s+(?:connected|linked|related)\s+to\s+{_F}",
        ),
    ),
    (
        "mentions",
        "sections_mentioning",
        ("title",),
        "article",
        (
            r"(?:what|which)(?:\s+(?:articles?|pages?|sections?|passages?))?\s+mentions?\s+"
            rf"{_E}",
            rf"where\s+is\s+{_E}\s+mentioned(?:\s+in\s+the\s+(?:graph|wiki))?",
        ),
    ),
    (
        "categories_of",
        "categories_of",
        ("title",),
        "article",
        (
            rf"(?:what|which)\s+categor(?:y|ies)\s+(?:is|are|does|do)\s+{_E}\s+"
            r"(?:in|belongs?\s+to|a\s+member\s+of|part\s+of)",
            rf"(?:what\s+are\s+|list\s+|show\s+)?(?:the\s+)?categories\s+(?:of|for)\s+{_E}",
        ),
    ),
    (
        "category_members",
        "category_members",
        ("category",),
        "category",
        (
            rf"what{_ART}\s+(?:is|are)\s+(?:in|listed\s+in)\s+{_CAT}{_E}",
            rf"(?:what|which){_ART}\s+(?:belongs?|are)\s+(?:to|in)\s+{_CAT}{_E}",
            rf"(?:(?:list|show)\s+)?(?:the\s+|all\s+)?(?:members|articles|pages)\s+(?:of|in)\s+"
            rf"{_CAT}{_E}",
            rf"what{_ART}\s+(?:is|are)\s+in\s+the\s+{_E}\s+category",
        ),
    ),
    (
        "common_neighbours",
        "common_neighbours",
        ("title_a", "title_b"),
        "article",
        (
            rf"(?:what|which){_ART}\s+do\s+(?:both\s+)?{_E}\s+and\s+{_F}\s+(?:both\s+)?"
            r"(?:link\s+to|have\s+in\s+common|share)",
            rf"(?:what\s+are\s+)?(?:the\s+)?common\s+neighbou?rs\s+of\s+{_E}\s+and\s+{_F}",
        ),
    ),
    (
        "co_mentioned",
        "bridge_articles",
        ("title",),
        "article",
        (
            rf"(?:what|which){_ART}\s+(?:is|are|gets?)\s+(?:often\s+|usually\s+)?"
            r"(?:co-?mentioned|mentioned\s+(?:together\s+)?(?:with|alongside))\s+"
            rf"(?:with\s+)?{_E}",
        ),
    ),
    (
        "neighbours",
        "article_neighbours",
        ("title",),
        "article",
        (
            rf"(?:what|which)\s+are\s+{_E}(?:'s|'|’s|’)\s+(?:graph\s+)?neighbou?rs",
            rf"(?:what\s+are\s+|list\s+|show\s+)?(?:the\s+)?(?:graph\s+)?neighbou?rs\s+of\s+{_E}",
            rf"(?:what|which){_ART}\s+(?:is|are)\s+{_E}\s+{_CONNECTED}\s+(?:to|with)",
            rf"(?:what|which){_ART}\s+does\s+{_E}\s+link\s+to",
        ),
    ),
    (
        "top",
        "top_pagerank",
        (),
        "article",
        (
            r"(?:what|which)\s+(?:are|is)\s+the\s+(?:\d+\s+)?most\s+(?:central|important|"
            r"influential|linked(?:-to)?|connected)(?:\s+articles?|\s+pages?)?"
            r"(?:\s+(?:in|of)\s+(?:the|this)\s+(?:knowledge\s+)?(?:graph|wiki))?",
            r"(?:list\s+|show\s+)?(?:the\s+)?top\s+(?:\d+\s+)?(?:articles?|pages?)\s+by\s+pagerank",
        ),
    ),
)
_COMPILED = tuple(
    (kind, query, params, ekind, tuple(re.compile(p, re.IGNORECASE) for p in pats))
    for kind, query, params, ekind, pats in _INTENTS
)
_MAX_ENTITY = 150


def structural_intent(question: str) -> StructuralIntent | None:
    """The structural query a question asks for, with its entity strings; else None.

    Only whole-question phrasings match ("How is X connected to Y?", "What links
    to X?", "What is in category X?", "What are X's neighbours?"), so content
    questions that merely contain "linked" fall through to retrieval.
    """
    q = " ".join(question.split()).strip().rstrip("?!. ").strip()
    if not q:
        return None
    for kind, query, params, ekind, patterns in _COMPILED:
        for pattern in patterns:
            m = pattern.fullmatch(q)
            if not m:
                continue
            entities = tuple(_clean_entity(m.group(g)) for g in ("a", "b")[: len(params)])
            if all(0 < len(e) <= _MAX_ENTITY for e in entities):
                return StructuralIntent(kind, query, entities, params, ekind)
    return None


def _clean_entity(text: str) -> str:
    e = text.strip().strip(QUOTES).strip()
    if e.lower().startswith("category:"):
        e = e[9:].strip()
    return e.strip(QUOTES + " ,;:")
