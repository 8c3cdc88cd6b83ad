"""Query typing, the rule plan, and the Claude plan through the real SDK against a fake server."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest

from kg_agent.exceptions import InvalidArgumentError
from kg_agent.language.query_type import QueryType, classify_query_type, find_years
from kg_agent.llm.client import AnthropicClient, UsageMeter
from kg_agent.multistep.planner import (
    MAX_QUERY_CHARS,
    PLANNER_MODEL,
    Plan,
    PlanStep,
    StepPlanner,
    parse_plan,
    rule_plan,
)
from tests.support.fake_anthropic import (
    DEFAULT_KEY,
    Behaviour,
    ErrorReply,
    FakeAnthropic,
    overloaded,
    rate_limited,
    raw,
    text,
)

pytestmark = pytest.mark.usefixtures("no_leftover_threads")

COMPARE_Q = "Compare the GDP of France and Germany in 1990 and 2000"
TWO_HOP_Q = "Who is the mother of the director of film Polish-Russian War?"


# ---------------------------------------------------------------------------- query types


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        (COMPARE_Q, QueryType.COMPARE),  # compare wins over the two years
        ("France versus Germany on GDP", QueryType.COMPARE),
        ("Which film came out first, Jaws or Star Wars?", QueryType.COMPARE),
        ("Are both films American?", QueryType.COMPARE),
        ("Is Mount Everest taller than K2?", QueryType.COMPARE),
        ("Did Jaws and Star Wars have the same director?", QueryType.COMPARE),
        ("What is the difference between a violin and a viola?", QueryType.COMPARE),
        ("Population of Paris between 1990 and 2010", QueryType.TREND),
        ("How has Lima's population grown?", QueryType.TREND),
        ("How fast did Lima's population grow?", QueryType.TREND),
        ("Coal use declined in Britain", QueryType.TREND),
        ("How did rail travel change over time?", QueryType.TREND),
        ("Unemployment hit 8% in 2009", QueryType.TREND),  # a percentage with a year
        (TWO_HOP_Q, QueryType.FACT),
        ("In which year was Kurt Gödel born?", QueryType.FACT),
        ("Who won the 1998 World Cup?", QueryType.FACT),  # one year is no trend
        ("Tell me about Kurt Gödel", QueryType.OTHER),
        ("Is Kurt Gödel alive?", QueryType.OTHER),
        ("Who, other than Shakespeare, wrote plays in 1600?", QueryType.FACT),
    ],
)
def test_classify_query_type(query: str, expected: QueryType) -> None:
    assert classify_query_type(query) is expected


def test_find_years_is_distinct_ordered_and_bounded() -> None:
    assert find_years("in 2000, then 1990, again 2000") == ("2000", "1990")
    assert find_years("0999 2100 1000 2099 19999 3.1415 1,500") == ("1000", "2099")


# ---------------------------------------------------------------------------- rule plan


def test_compare_with_entities_is_one_parallel_step_per_entity() -> None:
    plan = rule_plan(COMPARE_Q, ["France", "Germany"])
    assert (plan.pattern, plan.query_type, plan.source, plan.warnings) == (
        "parallel",
        QueryType.COMPARE,
        "rule",
        (),
    )
    assert plan.steps == (
        PlanStep("France GDP 1990 2000", "France"),
        PlanStep("Germany GDP 1990 2000", "Germany"),
    )


def test_trend_with_years_is_one_parallel_step_per_year() -> None:
    plan = rule_plan("How did the population of Paris change between 1990 and 2010?")
    assert plan.pattern == "parallel" and plan.query_type is QueryType.TREND
    assert [(s.query, s.focus) for s in plan.steps] == [
        ("population Paris change 1990", "1990"),
        ("population Paris change 2010", "2010"),
    ]


@pytest.mark.parametrize(
    "query", [TWO_HOP_Q, "Tell me about Kurt Gödel", "Coal use declined in Britain"]
)
def test_fact_other_and_yearless_trend_are_question_then_bridge(query: str) -> None:
    plan = rule_plan(query)
    assert plan.pattern == "sequential"
    assert plan.steps == (
        PlanStep(query, "question"),
        PlanStep(query, "bridge", depends_on=(0,), action="bridge"),
    )


def test_compare_without_two_entities_falls_back_to_sequential() -> None:
    assert rule_plan(COMPARE_Q, ["France"]).pattern == "sequential"
    assert rule_plan(COMPARE_Q, ["France", "france"]).pattern == "sequential"


def test_rule_plan_caps_steps_and_query_length() -> None:
    names = [f"E{i}" for i in range(8)]
    plan = rule_plan("Compare " + " and ".join(names), names)
    assert len(plan.steps) == 5
    long_q = "Who " + "x" * 600
    assert all(len(s.query) <= MAX_QUERY_CHARS for s in rule_plan(long_q).steps)


# ---------------------------------------------------------------------------- plan objects


def test_plan_validation() -> None:
    step = PlanStep("q")
    with pytest.raises(InvalidArgumentError, match="pattern"):
        Plan("tree", (step,), QueryType.FACT)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match="1 to 5 steps"):
        Plan("sequential", (), QueryType.FACT)
    with pytest.raises(InvalidArgumentError, match="1 to 5 steps"):
        Plan("sequential", (step,) * 6, QueryType.FACT)
    with pytest.raises(InvalidArgumentError, match="step 1 depends on step 1"):
        Plan("sequential", (step, PlanStep("q2", depends_on=(1,))), QueryType.FACT)
    with pytest.raises(InvalidArgumentError, match="parallel plan"):
        Plan("parallel", (step, PlanStep("q2", depends_on=(0,))), QueryType.FACT)
    with pytest.raises(InvalidArgumentError, match="non-empty"):
        PlanStep("  ")
    with pytest.raises(InvalidArgumentError, match="at most 500"):
        PlanStep("x" * 501)
    with pytest.raises(InvalidArgumentError, match="step index"):
        PlanStep("q", depends_on=(-1,))


def test_parse_plan_accepts_a_valid_reply_and_names_the_first_problem() -> None:
    plan = parse_plan(
        {
            "pattern": "Sequential",
            "steps": [{"query": " a "}, {"query": "b", "depends_on": [0, 0]}],
        },
        QueryType.FACT,
    )
    assert plan.source == "llm" and plan.pattern == "sequential"
    assert plan.steps == (PlanStep("a"), PlanStep("b", depends_on=(0,)))
    for bad, match in [
        ([], "JSON object"),
        ({"pattern": "sequential"}, "no steps list"),
        ({"pattern": "x", "steps": [{"query": "a"}]}, "pattern"),
        ({"pattern": "sequential", "steps": ["a"]}, "not an object"),
        ({"pattern": "sequential", "steps": [{"q": "a"}]}, "no query string"),
        ({"pattern": "sequential", "steps": [{"query": "a", "depends_on": ["0"]}]}, "indices"),
        ({"pattern": "sequential", "steps": [{"query": "a", "focus": 3}]}, "focus"),
    ]:
        with pytest.raises(InvalidArgumentError, match=match):
            parse_plan(bad, QueryType.FACT)


def test_planner_argument_checks() -> None:
    with pytest.raises(InvalidArgumentError, match="timeout"):
        StepPlanner(timeout=0)
    with pytest.raises(InvalidArgumentError, match="model"):
        StepPlanner(model="")
    with pytest.raises(InvalidArgumentError, match="query"):
        StepPlanner().plan(" ")
    with pytest.raises(InvalidArgumentError, match="entities"):
        StepPlanner().plan("Who?", entities="France")


def test_planner_without_llm_uses_the_rule_plan() -> None:
    assert StepPlanner().plan(COMPARE_Q, ["France", "Germany"]) == rule_plan(
        COMPARE_Q, ["France", "Germany"]
    )


# ---------------------------------------------------------------------------- LLM plan

LLM_PLAN = {
    "pattern": "sequential",
    "steps": [
        {"query": "director of Polish-Russian War film", "focus": "director", "depends_on": []},
        {"query": "mother of that director", "focus": "mother", "depends_on": [0]},
    ],
}


@pytest.fixture
def client(fake_anthropic: FakeAnthropic) -> Iterator[AnthropicClient]:
    with AnthropicClient(DEFAULT_KEY, base_url=fake_anthropic.base_url, timeout=5.0) as c:
        yield c


def test_valid_llm_plan_is_used(fake_anthropic: FakeAnthropic, client: AnthropicClient) -> None:
    fake_anthropic.enqueue(text("Here is the plan:\n```json\n" + json.dumps(LLM_PLAN) + "\n```"))
    meter = UsageMeter()
    plan = StepPlanner(client, meter=meter).plan(TWO_HOP_Q, ["Polish-Russian War"])
    assert (plan.source, plan.pattern, plan.query_type, plan.warnings) == (
        "llm",
        "sequential",
        QueryType.FACT,
        (),
    )
    assert plan.steps == (
        PlanStep("director of Polish-Russian War film", "director"),
        PlanStep("mother of that director", "mother", (0,)),
    )
    [req] = fake_anthropic.message_requests
    body: dict[str, Any] = req.body or {}
    assert req.credential == DEFAULT_KEY
    assert body["model"] == PLANNER_MODEL
    assert TWO_HOP_Q in req.user_text
    assert "Polish-Russian War" in req.user_text
    assert "0-based" in str(req.system)
    assert meter.calls == 1 and meter.input_tokens > 0


def test_the_clients_own_meter_is_not_counted_twice(
    fake_anthropic: FakeAnthropic, client: AnthropicClient
) -> None:
    fake_anthropic.enqueue(text(json.dumps(LLM_PLAN)))
    meter = UsageMeter()
    client.meter = meter
    StepPlanner(client, meter=meter).plan(TWO_HOP_Q)
    assert meter.calls == 1


BAD_DEPENDS = {
    "pattern": "sequential",
    "steps": [{"query": "a", "depends_on": [1]}, {"query": "b", "depends_on": [1]}],
}


@pytest.mark.parametrize(
    ("behaviour", "warning"),
    [
        (text("Sure! The plan is: first search, then search again."), "bad_response"),
        (text('{"pattern": "sequential", "steps": [{"query": "a"'), "bad_response"),
        (text(json.dumps(BAD_DEPENDS)), "invalid plan: step 0 depends on step 1"),
        (text(json.dumps({"pattern": "loop", "steps": [{"query": "a"}]})), "invalid plan"),
        (text(json.dumps({"pattern": "parallel", "steps": []})), "invalid plan: a plan has 1"),
        (rate_limited(), "rate_limited"),
        (overloaded(), "overloaded"),
        (raw(200, b'{"truncated": '), "bad_response: unreadable response body"),
    ],
    ids=[
        "prose",
        "malformed-json",
        "bad-depends-on",
        "bad-pattern",
        "no-steps",
        "429",
        "529",
        "truncated-body",
    ],
)
def test_llm_failures_fall_back_to_the_rule_plan_with_a_warning(
    fake_anthropic: FakeAnthropic,
    client: AnthropicClient,
    caplog: pytest.LogCaptureFixture,
    behaviour: Behaviour,
    warning: str,
) -> None:
    fake_anthropic.enqueue(behaviour, behaviour)  # a 429 or 529 is retried once
    meter = UsageMeter()
    with caplog.at_level(logging.WARNING, logger="kg_agent.multistep.planner"):
        plan = StepPlanner(client, meter=meter).plan(COMPARE_Q, ["France", "Germany"])
    expected = rule_plan(COMPARE_Q, ["France", "Germany"])
    assert (plan.source, plan.pattern, plan.steps) == ("rule", expected.pattern, expected.steps)
    [message] = plan.warnings
    assert message.startswith("LLM planning failed, using the rule plan")
    assert warning in message
    assert [r.getMessage() for r in caplog.records] == [message]
    requests = fake_anthropic.message_requests
    retried = isinstance(behaviour, ErrorReply)  # one retry where it can help
    assert len(requests) == (2 if retried else 1)
    assert all(COMPARE_Q in req.user_text for req in requests)
    assert meter.calls + meter.failures == 1


class _Broken:
    """An LLMClient that breaks its contract (raises a non-LLMError)."""

    def complete(self, **kwargs: Any) -> Any:
        raise RuntimeError("boom")


def test_a_client_raising_anything_still_falls_back() -> None:
    plan = StepPlanner(_Broken()).plan(TWO_HOP_Q)
    assert plan.source == "rule"
    assert plan.warnings == ("LLM planning failed, using the rule plan (RuntimeError: boom)",)
