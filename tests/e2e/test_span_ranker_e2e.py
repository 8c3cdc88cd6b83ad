"""The span ranker inside the agent, on the bundled sample (real graph, embedder and spaCy):
its candidates carry the parse's entities and the embedder's nearness of their sentence,
and its choice reaches the result as the answer candidate with a calibrated confidence."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import pytest

from kg_agent.agent import KnowledgeGraphAgent
from kg_agent.answering.span_ranker import FEATURES, SpanCandidate
from kg_agent.evaluation.calibration import NEVER

QUESTION = "Who designed the Analytical Engine?"


def test_the_agent_s_span_ranker_reads_the_parse_and_the_vectors(
    sample_agent: KnowledgeGraphAgent,
) -> None:
    pytest.importorskip("spacy", reason="spaCy is set-up's 'nlp' extra (scripts/setup.sh)")
    ranker = sample_agent.components.spans
    assert ranker.weights is not None and ranker.embed is not None  # a graph with vectors
    seen: list[Sequence[SpanCandidate]] = []
    ranker.observer = lambda q, found: seen.append(found)
    try:
        result = sample_agent.query(QUESTION)
    finally:
        ranker.observer = None
    assert seen, "the reading never reached the span ranker"
    x = np.vstack([c.x for c in seen[0]])
    assert x[:, FEATURES.index("entity")].any()  # spaCy's named entities
    assert x[:, FEATURES.index("noun_phrase")].any()
    assert (x[:, FEATURES.index("sentence_similarity")] > 0.2).any()  # the embedder's cosine
    assert x[:, FEATURES.index("most_similar")].sum() >= 1
    texts = {c.text for c in seen[0]}
    assert "Charles Babbage" in texts
    stage = next(t for t in result.trace if t.get("stage") == "synthesis")
    assert stage["found_by"] == "ranked"  # the model's choice, with its calibrated confidence
    assert result.answer_candidate == "Charles Babbage"
    assert 0.0 < result.confidence < 1.0
    assert (result.short_answer is not None) == (result.confidence >= ranker.show_at)
    assert "Babbage" in result.answer  # what a person reads holds it, bold or not


def test_an_infobox_fact_not_in_bold_is_weighed_beside_the_text(
    sample_agent: KnowledgeGraphAgent,
) -> None:
    pytest.importorskip("spacy", reason="spaCy is set-up's 'nlp' extra (scripts/setup.sh)")
    ranker = sample_agent.components.spans
    facts_retriever = sample_agent.components.facts
    committed = facts_retriever.ranker
    seen: list[Sequence[SpanCandidate]] = []
    ranker.observer = lambda q, found: seen.append(found)
    # the box's "alma mater" is found; with a bold threshold no fact reaches (whichever
    # facts the committed calibration is sure of), it is one candidate among the text's
    facts_retriever.ranker = replace(committed, show_at=NEVER)
    try:
        result = sample_agent.query("Where did Charles Babbage study?")
    finally:
        ranker.observer = None
        facts_retriever.ranker = committed
    assert seen, "the reading never reached the span ranker"
    facts = [c for c in seen[0] if c.fact]
    assert len(facts) == 1 and "Cambridge" in facts[0].text
    # with the fact ranker's confidence as a feature
    confidence = facts[0].x[FEATURES.index("fact_confidence")]
    assert 0.0 < confidence < 1.0 and facts[0].x[FEATURES.index("fact_answer")] == 1.0
    assert len(seen[0]) > 3  # beside the text's spans
    stage = next(t for t in result.trace if t.get("stage") == "synthesis")
    assert stage["found_by"] in ("ranked", "fact")  # whichever the model chose
    assert "Cambridge" in (result.answer_candidate or "") and "Cambridge" in result.answer
    # with the committed threshold: a fact in bold answers alone, one below it is weighed
    seen.clear()
    ranker.observer = lambda q, found: seen.append(found)
    try:
        committed_result = sample_agent.query("Where did Charles Babbage study?")
    finally:
        ranker.observer = None
    assert bool(seen) == (committed_result.short_answer is None)
