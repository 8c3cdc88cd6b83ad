"""The retrieval-quality loop: rewriting, relevance scoring (real SDK vs fake server), rerank."""

from __future__ import annotations

import json
import logging
import math
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from kg_agent.exceptions import InvalidArgumentError
from kg_agent.llm.client import AnthropicClient, LLMError, UsageMeter
from kg_agent.multistep.relevance import (
    RELEVANCE_MODEL,
    REWRITE_MODEL,
    RelevanceOutcome,
    llm_relevance_scores,
    offline_relevance,
    parse_score_reply,
    quality_telemetry,
    rewrite_queries,
    score_and_rerank,
)
from kg_agent.retrieval.base import Evidence
from tests.support.fake_anthropic import (
    DEFAULT_KEY,
    Behaviour,
    FakeAnthropic,
    fake_anthropic_server,
    overloaded,
    rate_limited,
    text,
)

QUESTION = "How many vacuum tubes did ENIAC contain?"


def _ev(
    section_id: str,
    title: str,
    content: str = "",
    similarity: float = 0.5,
    pagerank: float = 0.0,
) -> Evidence:
    return Evidence(
        section_id=section_id,
        title=title,
        heading="History",
        heading_path=f"{title} > History",
        content=content or f"{title} is a subject with a long history.",
        similarity=similarity,
        pagerank=pagerank,
    )


@pytest.fixture
def fake_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropic]:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    with fake_anthropic_server() as fake:
        yield fake


@pytest.fixture
def client(fake_server: FakeAnthropic) -> Iterator[AnthropicClient]:
    with AnthropicClient(DEFAULT_KEY, base_url=fake_server.base_url, timeout=5.0) as c:
        yield c


def by_section(answers: dict[str, str | Behaviour]) -> Any:
    """A responder that answers by which section title the prompt holds."""

    def respond(body: dict[str, Any]) -> str | Behaviour:
        prompt = body["messages"][-1]["content"]
        for title, answer in answers.items():
            if f"Section: {title}" in prompt:
                return answer
        return "0.5"

    return respond


# --------------------------------------------------------------------------- rewriting


def test_rewrite_dedupes_and_keeps_original_first(
    fake_server: FakeAnthropic, client: AnthropicClient
) -> None:
    variants = [
        "  how many VACUUM tubes did  ENIAC contain? ",  # the question again
        "ENIAC vacuum tube count",
        "eniac  vacuum tube count",  # duplicate variant
        "Number of vacuum tubes in ENIAC",
        "One too many",
    ]
    fake_server.enqueue(text(json.dumps(variants)))
    meter = UsageMeter()
    warnings: list[str] = []
    out = rewrite_queries(
        QUESTION,
        3,
        llm=client,
        offline=lambda q: pytest.fail("offline must not run"),
        meter=meter,
        warnings=warnings,
    )
    assert out == [QUESTION, "ENIAC vacuum tube count", "Number of vacuum tubes in ENIAC"]
    assert warnings == []
    assert meter.calls == 1
    (req,) = fake_server.message_requests
    assert req.body is not None and req.body["model"] == REWRITE_MODEL
    assert "exactly two alternative phrasings" in str(req.system)
    assert req.user_text == QUESTION


@pytest.mark.parametrize(
    "behaviour",
    [rate_limited(), overloaded(), text("Sure! Here are some rephrasings."), text('{"x": 1}')],
    ids=["429", "529", "prose", "wrong-json"],
)
def test_rewrite_failure_falls_back_to_offline_with_warning(
    fake_server: FakeAnthropic,
    client: AnthropicClient,
    caplog: pytest.LogCaptureFixture,
    behaviour: Behaviour,
) -> None:
    fake_server.enqueue(behaviour)
    warnings: list[str] = []
    meter = UsageMeter()
    with caplog.at_level(logging.WARNING, logger="kg_agent.multistep.relevance"):
        out = rewrite_queries(
            QUESTION,
            3,
            llm=client,
            offline=lambda q: ["ENIAC vacuum tubes", QUESTION.upper(), "ENIAC (computer)"],
            meter=meter,
            warnings=warnings,
        )
    assert out == [QUESTION, "ENIAC vacuum tubes", "ENIAC (computer)"]
    assert len(warnings) == 1 and "query rewriting failed" in warnings[0]
    assert any("query rewriting failed" in r.getMessage() for r in caplog.records)
    assert meter.failures == 1


def test_rewrite_tops_up_short_llm_list_with_offline(
    fake_server: FakeAnthropic, client: AnthropicClient
) -> None:
    fake_server.enqueue(text('{"queries": ["ENIAC vacuum tube count"]}'))
    warnings: list[str] = []
    out = rewrite_queries(
        QUESTION, 3, llm=client, offline=lambda q: ["ENIAC tubes"], warnings=warnings
    )
    assert out == [QUESTION, "ENIAC vacuum tube count", "ENIAC tubes"]
    assert warnings == []


def test_rewrite_offline_only_and_edge_cases() -> None:
    warnings: list[str] = []
    assert rewrite_queries(QUESTION, 3, llm=None, offline=lambda q: ["a", "A ", "b", "c"]) == [
        QUESTION,
        "a",
        "b",
    ]
    assert rewrite_queries(QUESTION, 1, llm=None, offline=lambda q: ["a"]) == [QUESTION]
    assert rewrite_queries("   ", 3, llm=None, offline=lambda q: ["a"]) == []

    def broken(q: str) -> list[str]:
        raise RuntimeError("db closed")

    assert rewrite_queries(QUESTION, 3, llm=None, offline=broken, warnings=warnings) == [QUESTION]
    assert len(warnings) == 1 and "RuntimeError" in warnings[0]


# --------------------------------------------------------------------------- offline relevance


def test_offline_relevance_calibration() -> None:
    def sim_only(sim: float) -> float:
        # no content word of the question in the section: only the similarity term counts
        return offline_relevance(_ev("x", "Zebra", "Stripes and savanna.", sim), QUESTION)

    assert sim_only(0.35) == pytest.approx(0.7 * 0.5)
    assert sim_only(0.55) == pytest.approx(0.7 / (1 + math.exp(-2.0)))
    assert sim_only(0.1) < 0.2 < sim_only(0.3)  # default threshold sits near cosine 0.28
    values = [sim_only(s) for s in (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)]
    assert values == sorted(values) and all(0.0 <= v <= 1.0 for v in values)

    on_topic = _ev("e", "ENIAC", "ENIAC contained 17,468 vacuum tubes.", similarity=0.1)
    # 3 of the question's 5 content words (eniac, vacuum, tubes): 0.7 * 0.076 + 0.3 * 0.6
    assert offline_relevance(on_topic, QUESTION) == pytest.approx(0.2331, abs=1e-3)
    assert offline_relevance(on_topic, QUESTION) > 0.2 > sim_only(0.1)  # coverage rescues it
    assert offline_relevance(_ev("n", "X", similarity=float("nan")), QUESTION) >= 0.0
    assert offline_relevance(_ev("q", "X", similarity=0.35), "the of and") == pytest.approx(0.5)


def test_parse_score_reply() -> None:
    assert parse_score_reply("0.7") == pytest.approx(0.7)
    assert parse_score_reply("Score: 0.7") == pytest.approx(0.7)
    assert parse_score_reply('{"score": 0.7}') == pytest.approx(0.7)
    assert parse_score_reply('```json\n{"relevance": "0.25"}\n```') == pytest.approx(0.25)
    assert parse_score_reply("Relevance: 70%") == pytest.approx(0.7)
    assert parse_score_reply("7/10") == pytest.approx(0.7)
    assert parse_score_reply("1.5") == 1.0
    assert parse_score_reply("-0.2") == 0.0
    with pytest.raises(LLMError) as info:
        parse_score_reply("highly relevant")
    assert info.value.kind == "bad_response"


# --------------------------------------------------------------------------- Claude relevance


def test_parallel_scoring_one_overloaded_gives_none_for_it(
    fake_server: FakeAnthropic, client: AnthropicClient
) -> None:
    fake_server.responder = by_section(
        {
            "ENIAC": "0.9",
            "Colossus": "Score: 0.6",
            "UNIVAC": '{"score": 0.4}',
            "Zebra": overloaded(),
        }
    )
    evidence = [_ev("1", "ENIAC"), _ev("2", "Colossus"), _ev("3", "UNIVAC"), _ev("4", "Zebra")]
    meter = UsageMeter()
    scores = llm_relevance_scores(QUESTION, evidence, client, meter=meter, timeout=5.0)
    assert scores == [pytest.approx(0.9), pytest.approx(0.6), pytest.approx(0.4), None]
    assert meter.calls == 3 and meter.failures == 1
    requests = fake_server.message_requests
    assert len(requests) == 5  # Zebra's 529 is retried once
    assert all(r.body is not None and r.body["model"] == RELEVANCE_MODEL for r in requests)
    assert all(QUESTION in r.user_text for r in requests)


def test_scoring_calls_really_run_concurrently(
    fake_server: FakeAnthropic, client: AnthropicClient
) -> None:
    # Every responder call waits for the other two: only concurrent requests get past it
    # (a sequential caller would break the barrier, and the fake would answer 500).
    barrier = threading.Barrier(3, timeout=3.0)

    def respond(body: dict[str, Any]) -> str:
        barrier.wait()
        return "0.8"

    fake_server.responder = respond
    evidence = [_ev("1", "A"), _ev("2", "B"), _ev("3", "C")]
    scores = llm_relevance_scores(QUESTION, evidence, client, max_workers=3)
    assert scores == [pytest.approx(0.8)] * 3
    assert fake_server.responder_errors == []


def test_llm_relevance_empty_evidence_makes_no_call(
    fake_server: FakeAnthropic, client: AnthropicClient
) -> None:
    assert llm_relevance_scores(QUESTION, [], client) == []
    assert fake_server.message_requests == []


# --------------------------------------------------------------------------- rerank


def test_rerank_mixed_path_uses_offline_score_for_failed_item(
    fake_server: FakeAnthropic, client: AnthropicClient
) -> None:
    fake_server.responder = by_section({"ENIAC": "0.9", "Colossus": overloaded()})
    colossus = _ev("2", "Colossus", "Colossus used vacuum tubes too.", similarity=0.6)
    warnings: list[str] = []
    out = score_and_rerank(QUESTION, [_ev("1", "ENIAC"), colossus], llm=client, warnings=warnings)
    assert out.path == "mixed"
    assert out.scores["1"] == pytest.approx(0.9)
    assert out.scores["2"] == pytest.approx(offline_relevance(colossus, QUESTION))
    assert len(warnings) == 1 and "1 of 2" in warnings[0]
    assert any("offline 1" in n for n in out.notes)


def test_rerank_all_claude_and_all_failed(
    fake_server: FakeAnthropic, client: AnthropicClient
) -> None:
    fake_server.responder = lambda body: "0.8"
    ok = score_and_rerank(QUESTION, [_ev("1", "A"), _ev("2", "B")], llm=client)
    assert ok.path == "claude" and [e.section_id for e in ok.kept] == ["1", "2"]

    fake_server.responder = lambda body: overloaded()
    warnings: list[str] = []
    failed = score_and_rerank(
        QUESTION, [_ev("1", "A"), _ev("2", "B")], llm=client, warnings=warnings
    )
    assert failed.path == "offline"
    assert len(warnings) == 1 and "all 2" in warnings[0]
    assert len(failed.kept) == 2  # offline scores for both, no exception


def test_threshold_really_removes_items(
    fake_server: FakeAnthropic, client: AnthropicClient
) -> None:
    fake_server.responder = by_section({"ENIAC": "0.9", "Zebra": "0.05", "UNIVAC": "0.5"})
    evidence = [_ev("z", "Zebra"), _ev("e", "ENIAC"), _ev("u", "UNIVAC")]
    out = score_and_rerank(QUESTION, evidence, llm=client, relevance_threshold=0.2)
    assert [e.section_id for e in out.kept] == ["e", "u"]
    assert out.dropped_below_threshold == ["z"]
    assert out.scores == {
        "z": pytest.approx(0.05),
        "e": pytest.approx(0.9),
        "u": pytest.approx(0.5),
    }
    assert any("Zebra (0.05)" in n and "threshold 0.2" in n for n in out.notes)
    assert out.kept[0].scores["relevance"] == pytest.approx(0.9)
    assert out.kept[0].score == pytest.approx(0.9)


def test_authority_weighting_changes_order_of_equal_relevance_items() -> None:
    first = _ev("a", "Alpha", similarity=0.5, pagerank=0.1)
    second = _ev("b", "Beta", similarity=0.5, pagerank=0.9)
    assert offline_relevance(first, QUESTION) == offline_relevance(second, QUESTION)

    plain = score_and_rerank(QUESTION, [first, second])
    assert [e.section_id for e in plain.kept] == ["a", "b"]  # ties keep input order

    weighted = score_and_rerank(
        QUESTION, [first, second], authority=lambda ev: ev.pagerank, authority_weight=0.3
    )
    assert [e.section_id for e in weighted.kept] == ["b", "a"]
    rel = weighted.scores["a"]
    assert weighted.kept[0].score == pytest.approx(rel * (0.7 + 0.3 * 0.9))
    assert weighted.kept[1].score == pytest.approx(rel * (0.7 + 0.3 * 0.1))
    assert weighted.kept[0].scores["authority"] == pytest.approx(0.9)

    clamped = score_and_rerank(QUESTION, [first], authority=lambda ev: 7.0)
    assert clamped.kept[0].score == pytest.approx(clamped.scores["a"])


def test_rerank_does_not_mutate_caller_evidence_and_cuts_top_k() -> None:
    evidence = [_ev(str(i), f"T{i}", similarity=0.3 + i * 0.05) for i in range(6)]
    before = [(e.score, dict(e.scores)) for e in evidence]
    out = score_and_rerank(QUESTION, evidence, rerank_top_k=3, relevance_threshold=0.0)
    assert [e.section_id for e in out.kept] == ["5", "4", "3"]
    assert [(e.score, dict(e.scores)) for e in evidence] == before
    assert all(k is not e for k in out.kept for e in evidence)
    assert any("top 3 of 6" in n for n in out.notes)
    assert len(out.scores) == 6


def test_rerank_argument_validation_and_empty() -> None:
    assert score_and_rerank(QUESTION, []) == RelevanceOutcome()
    with pytest.raises(InvalidArgumentError):
        score_and_rerank(QUESTION, [_ev("a", "A")], authority_weight=1.5)
    with pytest.raises(InvalidArgumentError):
        score_and_rerank(QUESTION, [_ev("a", "A")], rerank_top_k=0)


def test_quality_telemetry() -> None:
    out = score_and_rerank(
        QUESTION,
        [
            _ev("e", "ENIAC", "ENIAC contained 17,468 vacuum tubes.", 0.6),
            _ev("z", "Zebra", similarity=0.0),
        ],
    )
    tele = quality_telemetry([QUESTION, "ENIAC tubes"], out)
    assert set(tele) == {
        "rewritten_queries",
        "relevance_scores",
        "reranked_results",
        "quality_notes",
    }
    assert tele["rewritten_queries"] == [QUESTION, "ENIAC tubes"]
    assert set(tele["relevance_scores"]) == {"e", "z"}
    assert [r["section_id"] for r in tele["reranked_results"]] == ["e"]
    assert set(tele["reranked_results"][0]) == {"section_id", "title", "score", "relevance"}
    assert tele["quality_notes"] == out.notes and out.dropped_below_threshold == ["z"]
    json.dumps(tele)  # serialisable for traces
