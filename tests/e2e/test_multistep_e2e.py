"""The multi-step engine on the real 2WikiMultihopQA graph (the session's; no second build).

The engine is built as the eval's ``multistep`` mode builds it: over the
entity-graph retriever of a graph's :class:`GraphComponents`. The Claude planning path runs
through the real ``anthropic`` SDK against the loopback fake server.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kg_agent.embedding import Embedder
from kg_agent.ingest.pipeline import LoadReport
from kg_agent.llm.client import AnthropicClient
from kg_agent.multistep.config import MultiStepConfig
from kg_agent.multistep.engine import MultiStepEngine, MultiStepResult
from kg_agent.multistep.planner import PLANNER_MODEL
from kg_agent.multistep.stop import StopReason
from kg_agent.pipeline import GraphComponents
from kg_agent.retrieval.base import RetrievalResult, Retriever
from kg_agent.store import GraphStore
from tests.support.fake_anthropic import (
    DEFAULT_KEY,
    Behaviour,
    FakeAnthropic,
    fake_anthropic_server,
    text,
)

QUESTION = (
    "Which film has the director born earlier, The Planet Of Junior Brown or A Yank In The R.A.F.?"
)
FILMS = ("The Planet of Junior Brown", "A Yank in the R.A.F.")
#: Two years no passage of the corpus mentions: the gap never closes, so the loop
#: runs until ``max_steps`` (the plan's per-year steps, then refinements).
OPEN_GAP_QUESTION = "How did the population of Toronto change between 2061 and 2087?"
STOP_REASONS = {r.value for r in StopReason}
ENV_KEYS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL")

LLM_STEPS = [
    {"query": "The Planet of Junior Brown director", "focus": "first film", "depends_on": []},
    {"query": "A Yank in the R.A.F. director", "focus": "second film", "depends_on": []},
]
LLM_PLAN = {"pattern": "parallel", "steps": LLM_STEPS}
REWRITES = ["director of The Planet of Junior Brown", "director of A Yank in the R.A.F."]


@pytest.fixture(scope="module")
def ctx(twowiki_graph: tuple[Path, LoadReport], embedder: Embedder) -> Iterator[GraphComponents]:
    store = GraphStore.open(twowiki_graph[0], read_only=True)
    yield GraphComponents(store, embedder)
    store.close()


@pytest.fixture(scope="module")
def engine(ctx: GraphComponents) -> MultiStepEngine:
    return ctx.multistep_engine()


@pytest.fixture(scope="module")
def complex_run(engine: MultiStepEngine) -> MultiStepResult:
    return engine.run(QUESTION)


def titles(result: MultiStepResult) -> list[str]:
    return list(dict.fromkeys(e.title for e in result.evidence))


def loop_steps(result: MultiStepResult) -> list[str]:
    return [s.kind for s in result.steps if s.kind != "bridge"]


# --------------------------------------------------------------------------- offline


def test_complex_question_routes_plans_and_finds_both_films(complex_run: MultiStepResult) -> None:
    r = complex_run
    assert r.route == "complex"
    assert r.complexity["complexity"] == "complex" and r.complexity["forced"] is False
    assert set(FILMS) <= set(r.complexity["entities"])
    assert r.plan["query_type"] == "compare" and r.plan["source"] == "rule"
    assert {s["focus"] for s in r.plan["steps"]} == set(FILMS)
    # the step loop, then the bridge round, each recorded
    assert r.steps[0].kind == "plan" and r.steps[0].query.startswith(QUESTION)
    assert r.steps[-1].kind == "bridge"
    assert [s.step for s in r.steps] == list(range(1, len(r.steps) + 1))
    assert r.stop_reason in STOP_REASONS
    assert r.steps[-2].stop_reason == r.stop_reason  # the last loop step says why it stopped
    assert all(s.stop_reason is None for s in r.steps[:-2])
    assert r.steps[0].results > 0 and r.steps[0].new_evidence > 0
    # both gold films among the final top chunks' top titles
    assert set(FILMS) <= set(titles(r)[:5])
    assert len(r.evidence) <= MultiStepConfig().top_k_final
    assert len({e.title for e in r.evidence}) == len(r.evidence)  # one chunk per article
    assert r.collected and r.seconds > 0 and r.warnings == []


def test_forced_simple_is_one_single_step(engine: MultiStepEngine) -> None:
    r = engine.run(QUESTION, force="simple")
    assert r.route == "simple"
    assert [s.kind for s in r.steps] == ["single"]
    assert r.complexity["forced"] is True and r.complexity["reasons"][0] == "forced: simple"
    assert r.plan == {} and r.bridge_round_stats == {"triggered": False}
    assert set(FILMS) <= set(titles(r))
    json.dumps(r.trace())


def test_trace_is_json_serialisable(complex_run: MultiStepResult) -> None:
    trace = complex_run.trace()
    assert json.loads(json.dumps(trace)) == trace
    for key in (
        "question",
        "route",
        "complexity",
        "plan",
        "steps",
        "stop_reason",
        "bridge_round_stats",
        "rewritten_queries",
        "relevance_scores",
        "reranked_results",
        "quality_notes",
        "round1_quality",
        "warnings",
        "seconds",
    ):
        assert key in trace, key
    step = trace["steps"][0]
    assert set(step) == {
        "step",
        "query",
        "query_type",
        "kind",
        "results",
        "new_evidence",
        "gap",
        "gate",
        "stop_reason",
        "seconds",
    }
    assert set(step["gap"]) == {"gap_type", "missing", "confidence"}
    assert trace["rewritten_queries"][0] == QUESTION
    assert trace["steps"][-1]["gate"] == trace["bridge_round_stats"]["gate"]


def test_max_steps_override_is_respected(ctx: GraphComponents, engine: MultiStepEngine) -> None:
    wide = engine.run(OPEN_GAP_QUESTION, force="complex")
    assert wide.plan["query_type"] == "trend"
    assert loop_steps(wide) == ["plan", "plan", "plan"]  # the question, then one per year
    assert wide.stop_reason == "max_steps"
    assert wide.steps[0].gap["gap_type"] == "missing_years"

    one = engine.run(OPEN_GAP_QUESTION, force="complex", config=MultiStepConfig(max_steps=1))
    assert loop_steps(one) == ["plan"]
    assert [s.kind for s in one.steps] == ["plan", "bridge"]
    assert one.stop_reason == "max_steps"

    # the engine's own config is the default for every run
    capped = ctx.multistep_engine(config=MultiStepConfig(max_steps=1))
    assert loop_steps(capped.run(OPEN_GAP_QUESTION, force="complex")) == ["plan"]

    # past the plan, the loop refines the question with the missing terms (here the
    # years are in the question already, so the refined query is the question itself)
    long = engine.run(
        OPEN_GAP_QUESTION,
        force="complex",
        config=MultiStepConfig(max_steps=4, stop_no_new_steps=4),
    )
    assert loop_steps(long) == ["plan", "plan", "plan", "refine"]
    assert long.steps[3].query == OPEN_GAP_QUESTION and long.steps[3].new_evidence == 0
    assert long.stop_reason == "max_steps"


def test_forced_bridge_round_adds_stats_and_keeps_the_answer(engine: MultiStepEngine) -> None:
    r = engine.run(QUESTION, config=MultiStepConfig(bridge_quality_gate=1.0))
    stats = r.bridge_round_stats
    assert stats["triggered"] is True and stats["gate"].endswith("< gate 1.0")
    assert stats["source"] == "offline"
    assert stats["queries_generated"] >= 1 and stats["entities_extracted"] >= 1
    assert stats["queries_generated"] <= MultiStepConfig().bridge_max_queries
    bridge = r.steps[-1]
    assert bridge.kind == "bridge" and bridge.query == " | ".join(stats["queries"])
    assert bridge.results == stats["docs_added"]
    assert not set(stats["entities"]) & set(FILMS)  # already collected: never a bridge entity
    assert set(FILMS) <= set(titles(r)[:5])
    assert r.warnings == []
    json.dumps(r.trace())


class _BridgeSearchFails(Retriever):
    """The base search, except that any query other than the question raises."""

    def __init__(self, base: Retriever, question: str) -> None:
        self.inner, self.question, self.failed = base, question, 0

    def search(self, query: str, top_k: int = 10) -> RetrievalResult:
        if query != self.question:
            self.failed += 1
            raise RuntimeError("bridge search unavailable")
        return self.inner.search(query, top_k)


def test_failing_bridge_search_never_breaks_the_query(ctx: GraphComponents) -> None:
    eng = ctx.multistep_engine(config=MultiStepConfig(bridge_quality_gate=1.0))
    failing = _BridgeSearchFails(eng.base, QUESTION)
    eng.base = failing  # the bridge round searches through engine.base
    r = eng.run(QUESTION)
    assert failing.failed == 1  # the first bridge query raised; the round gave up
    assert r.bridge_round_stats["triggered"] is True
    assert r.bridge_round_stats["docs_added"] == 0
    assert any(w.startswith("bridge round failed (RuntimeError") for w in r.warnings)
    assert set(FILMS) <= set(titles(r)[:5])


# --------------------------------------------------------------------------- Claude planning


def responder(plan_reply: str) -> Any:
    """Answer by the prompt's job: planning gets ``plan_reply``, the others a usable reply."""

    def answer(body: dict[str, Any]) -> Behaviour:
        system = str(body.get("system", ""))
        if system.startswith("You plan searches"):
            return text(plan_reply)
        if system.startswith("You rewrite search questions"):
            return text(json.dumps(REWRITES))
        if system.startswith("You judge search results"):  # relevance, one call per chunk
            return text("0.9" if any(f in _section_line(body) for f in FILMS) else "0.4")
        return text("entities: none\ngaps: none")  # bridge extraction

    return answer


def _section_line(body: dict[str, Any]) -> str:
    prompt = str(body["messages"][-1]["content"])
    return next((line for line in prompt.splitlines() if line.startswith("Section: ")), "")


@pytest.fixture
def no_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ENV_KEYS:
        monkeypatch.delenv(name, raising=False)


def run_with_claude(ctx: GraphComponents, plan_reply: str) -> tuple[MultiStepResult, FakeAnthropic]:
    with (
        fake_anthropic_server(responder=responder(plan_reply)) as fake,
        AnthropicClient(DEFAULT_KEY, base_url=fake.base_url, timeout=5.0) as client,
    ):
        eng = ctx.multistep_engine(llm=client, llm_timeout=5.0)
        return eng.run(QUESTION), fake


@pytest.mark.usefixtures("no_credentials")
def test_claude_plan_is_used(ctx: GraphComponents) -> None:
    r, fake = run_with_claude(ctx, json.dumps(LLM_PLAN))
    assert r.route == "complex"
    assert r.plan["source"] == "llm" and r.plan["pattern"] == "parallel"
    assert r.plan["query_type"] == "compare"  # the rule classifier still types the question
    assert [s["query"] for s in r.plan["steps"]] == [s["query"] for s in LLM_STEPS]
    assert r.warnings == []  # every Claude call answered usably
    plan_req = fake.message_requests[0]
    assert plan_req.body is not None and plan_req.body["model"] == PLANNER_MODEL
    assert QUESTION in plan_req.user_text
    assert "Entities named: " in plan_req.user_text
    # Claude's rephrasings were searched beside the question
    assert r.quality["rewritten_queries"] == [QUESTION, *REWRITES]
    assert r.steps[0].query == " | ".join([QUESTION, *REWRITES])
    # and Claude scored the final candidates' relevance
    judged = [q for q in fake.message_requests if "You judge" in str(q.system)]
    assert judged and all(
        r.quality["relevance_scores"][e.section_id] == 0.9 for e in r.evidence if e.title in FILMS
    )
    assert set(FILMS) <= set(titles(r)[:5])


@pytest.mark.usefixtures("no_credentials")
@pytest.mark.parametrize(
    ("reply", "why"),
    [
        ('Here is the plan: {"pattern": "parallel", "steps": [', "LLM bad_response"),
        (
            json.dumps({"pattern": "parallel", "steps": [{"query": "x", "depends_on": [1]}]}),
            "invalid plan",
        ),
    ],
    ids=["malformed-json", "invalid-plan"],
)
def test_bad_claude_plan_falls_back_to_rule_plan(
    ctx: GraphComponents, reply: str, why: str
) -> None:
    r, _ = run_with_claude(ctx, reply)
    assert r.plan["source"] == "rule" and r.plan["query_type"] == "compare"
    planning = [w for w in r.warnings if w.startswith("LLM planning failed, using the rule plan")]
    assert len(planning) == 1 and why in planning[0]
    assert r.route == "complex" and set(FILMS) <= set(titles(r)[:5])
