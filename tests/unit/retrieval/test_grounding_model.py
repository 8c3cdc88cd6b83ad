"""The grounding model: its features on evidence from the in-memory graph, its
probability and threshold, and the :class:`Grounder` that lets it decide."""

from __future__ import annotations

import numpy as np
import pytest

from kg_agent.entities import QuestionEntityLinker
from kg_agent.language.question import Question
from kg_agent.retrieval.base import Evidence
from kg_agent.retrieval.grounding import Grounder
from kg_agent.retrieval.grounding_model import (
    FEATURES,
    GroundingModel,
    default_grounding_model,
    features,
)
from tests.support.memory_graph import MemoryArticle, MemoryGraph


@pytest.fixture(scope="module")
def graph() -> MemoryGraph:
    return MemoryGraph(
        [
            MemoryArticle(
                "American Football Conference",
                [
                    (
                        "",
                        "The American Football Conference is one of the two NFL conferences.",
                    )
                ],
            ),
            MemoryArticle(
                "Atlantic Ocean",
                [("", "The Atlantic Ocean is the second largest of the world's oceans.")],
            ),
            MemoryArticle("Osmium", [], is_stub=True),
            MemoryArticle(
                "Alkali metal",
                [("", "The alkali metals are lithium, sodium and potassium. The word alkali.")],
            ),
        ]
    )


def _ev(title: str, text: str, cosine: float | None) -> Evidence:
    ev = Evidence(f"{title}::0000", title, "", title, text, cosine or 0.0)
    if cosine is not None:
        ev.scores["semantic"] = cosine
    return ev


def _x(graph: MemoryGraph, text: str, evidence: list[Evidence]) -> dict[str, float]:
    x = features(Question(text), 0, False, 0, evidence, graph.word_rarity)
    assert x is not None
    return dict(zip(FEATURES, x.tolist(), strict=True))


def test_a_title_written_in_the_question_or_its_initials_is_seen(graph: MemoryGraph) -> None:
    afc = _ev("American Football Conference", "The American Football Conference is…", 0.7)
    x = _x(graph, "how many teams are in the afc", [afc])
    assert x["title_in_question_top1"] == 1.0  # its initials
    ocean = _ev("Atlantic Ocean", "The Atlantic Ocean is the second largest ocean.", 0.6)
    x = _x(graph, "is the atlantic the largest ocean in the world", [ocean])
    assert x["title_in_question_top1"] == 1.0 and x["lower_case"] == 1.0
    assert x["best_cosine"] == pytest.approx(0.6)
    x = _x(graph, "what is the atomic number of osmium", [ocean])
    assert x["title_in_question_top3"] == 0.0


def test_a_rare_word_no_section_writes_is_counted_with_its_rarity(graph: MemoryGraph) -> None:
    metals = _ev("Alkali metal", "The alkali metals are lithium, sodium and potassium.", 0.5)
    x = _x(graph, "what is the atomic number of osmium", [metals])
    assert x["absent_any"] == 1.0 and x["absent_rarity"] == pytest.approx(1.0)
    x = _x(graph, "which metals are alkali metals", [metals])
    assert x["absent_any"] == 0.0 and x["absent_fraction"] == 0.0 and x["absent_rarity"] == 0.0


def test_without_cosines_there_is_no_row(graph: MemoryGraph) -> None:
    bm25_only = _ev("Alkali metal", "The alkali metals are lithium.", None)
    assert (
        features(Question("list the alkali metals"), 1, False, 0, [bm25_only], graph.word_rarity)
        is None
    )


def test_the_model_round_trips_and_rejects_other_features() -> None:
    n = len(FEATURES)
    model = GroundingModel(np.zeros(n), np.ones(n), np.full(n, 0.5), -1.0, 0.6, {"questions": 3})
    back = GroundingModel.from_json(model.to_json())
    x = np.ones(n)
    assert back.probability(x) == pytest.approx(model.probability(x))
    assert model.probability(x) > model.probability(np.zeros(n))  # positive weights
    data = model.to_json()
    data["features"] = data["features"][:-1]
    with pytest.raises(ValueError, match="features"):
        GroundingModel.from_json(data)


def test_the_committed_model_weighs_the_signals_the_right_way() -> None:
    model = default_grounding_model()
    assert model is not None and 0.0 < model.refuse_at < 1.0
    w = dict(zip(FEATURES, model.coef.tolist(), strict=True))
    assert w["best_cosine"] > 0 and w["found"] > 0  # close sections, a found article
    assert w["absent_rarity"] < 0 and w["missing"] < 0  # a rare unwritten word, a lost name


def test_the_grounder_lets_the_model_decide_and_falls_back_without_cosines(
    graph: MemoryGraph,
) -> None:
    n = len(FEATURES)
    trusting = GroundingModel(np.zeros(n), np.ones(n), np.zeros(n), 5.0, 0.5)
    doubting = GroundingModel(np.zeros(n), np.ones(n), np.zeros(n), -5.0, 0.5)
    linker = QuestionEntityLinker(graph)
    q = Question("Who won the 2018 FIFA World Cup?", link=linker.link_any_case)
    ev = [_ev("Atlantic Ocean", "The Atlantic Ocean is the second largest ocean.", 0.3)]
    seen: list[np.ndarray] = []
    grounder = Grounder(graph, trusting)
    grounder.observer = lambda _q, x: seen.append(x)
    topic = grounder(q, ev)
    assert topic.grounded and topic.probability is not None and topic.probability > 0.99
    assert topic.missing == ("FIFA World Cup",) and len(seen) == 1
    grounder.model = doubting
    refused = grounder(q, ev)
    assert not refused.grounded and refused.unnamed == ("FIFA World Cup",)
    # no cosine (a graph without vectors): the look-ups decide, as before the model
    bare = grounder(q, [_ev("Atlantic Ocean", "The Atlantic Ocean.", None)])
    assert bare.probability is None and not bare.grounded
