"""AgentConfig: defaults, validation, derivation; and the public API's names."""

from __future__ import annotations

import dataclasses

import pytest

import kg_agent
from kg_agent import AgentConfig, InvalidArgumentError
from kg_agent.retrieval.rerank import RerankWeights


def test_defaults_are_what_a_user_gets() -> None:
    c = AgentConfig()
    assert (c.retrieval, c.top_k, c.candidates) == ("graph", 8, 30)
    assert c.quality_filter and c.reranker and c.multidoc and c.fewshot and c.structural
    assert not (c.multi_query or c.offline) and c.llm_base_url is None and c.route is None


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"retrieval": "magic"}, "retrieval must be one of graph, hybrid, dense, bm25"),
        ({"top_k": 0}, "top_k must be between 1 and 50"),
        ({"top_k": True}, "top_k must be an integer"),
        ({"top_k": 10, "candidates": 5}, "candidates (5) must be >= top_k (10)"),
        ({"route": "sideways"}, "route must be one of simple, complex"),
        ({"llm_timeout": 0}, "llm_timeout must be positive"),
        ({"llm_timeout": float("nan")}, "llm_timeout must be a number"),
        ({"rerank_weights": {"retrieval": 1}}, "rerank_weights must be a RerankWeights"),
        ({"synthesis_model": ""}, "synthesis_model must be a model name"),
    ],
)
def test_invalid_settings_are_refused_with_what_is_wrong(
    changes: dict[str, object], message: str
) -> None:
    with pytest.raises(InvalidArgumentError) as err:
        AgentConfig(**changes)  # type: ignore[arg-type]
    assert message in str(err.value)


def test_frozen_and_replace_validates_again() -> None:
    c = AgentConfig(rerank_weights=RerankWeights(personalized_pagerank=0.3))
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.top_k = 3  # type: ignore[misc]
    d = c.replace(top_k=3)
    assert d.top_k == 3 and c.top_k == 8 and d.rerank_weights == c.rerank_weights
    with pytest.raises(InvalidArgumentError):
        c.replace(top_k=99)
    assert c.to_dict()["rerank_weights"]["personalized_pagerank"] == 0.3


def test_the_public_api_is_small_and_every_name_imports() -> None:
    assert {"KnowledgeGraphAgent", "AgentConfig", "QueryResult", "KGAgentError"} <= set(
        kg_agent.__all__
    )
    # querying (with the question's reading and the stage interface), loading, and
    # keeping a graph current
    assert len(kg_agent.__all__) <= 33
    for name in kg_agent.__all__:
        assert getattr(kg_agent, name) is not None, name
    with pytest.raises(AttributeError):
        _ = kg_agent.NotAThing  # type: ignore[attr-defined]
