"""The HTTP API's request bodies: validated (strict types, no unknown fields) by pydantic,
and the same models describe them in ``/openapi.json``."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from kg_agent.language.question import MAX_QUESTION_LENGTH

__all__ = ["AskRequest", "CypherRequest", "SearchRequest"]

Retrieval = Literal["graph", "hybrid", "dense", "bm25", "multistep"]


class _Strict(BaseModel):
    # "5" is not a number and an unknown field is a typo: both are refused (422)
    # rather than guessed at.
    model_config = ConfigDict(extra="forbid", strict=True)


class SearchRequest(_Strict):
    """Ranked evidence for a question, without an answer."""

    question: str = Field(min_length=1, max_length=MAX_QUESTION_LENGTH)
    top_k: int = Field(8, ge=1, le=50, description="Evidence sections returned.")
    retrieval: Retrieval = Field(
        "graph",
        description="graph (the question's entities and their neighbours, then hybrid), "
        "hybrid (dense + BM25), dense, bm25 or multistep (the multi-step retriever).",
    )
    multistep: bool = Field(False, description="Shorthand for retrieval=multistep.")


class AskRequest(SearchRequest):
    """A question and the options of ``kg-agent ask``."""

    answer_words: int = Field(40, ge=10, le=500, description="Words the offline answer may quote.")
    route: Literal["auto", "simple", "complex"] = Field(
        "auto", description="With multistep: force single-shot or multi-step routing."
    )
    multi_query: bool = Field(False, description="Also search two rephrasings.")
    reranker: bool = Field(True, description="Rerank evidence by the graph (PageRank).")
    multidoc: bool = Field(True, description="Group the evidence by article.")
    fewshot: bool = Field(True, description="Few-shot examples in Claude's prompt.")
    offline: bool = Field(
        False, description="Answer from the graph alone even when Claude is configured."
    )
    stream: bool = Field(
        False,
        description="Answer as Server-Sent Events: 'retrieved', 'evidence', then 'text' "
        "pieces while Claude writes, then 'result' (the QueryResult) or 'error'.",
    )


class CypherRequest(_Strict):
    """Parameters of a pack query, typed by the pack (see ``GET /v1/cypher``)."""

    params: dict[str, Any] = Field(default_factory=dict)
