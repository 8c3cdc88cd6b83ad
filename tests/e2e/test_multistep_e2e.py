"""The multi-step retriever and its stages on the real 2WikiMultihopQA graph (the
session's; no second build).

Each run is the pipeline the eval's ``multistep`` mode and ``query(multistep=True)``
build (:meth:`GraphComponents.pipeline`): the retriever's pool, then the relevance
loop, the tier order, the fill and the usual stages. The Claude planning path runs
through the real ``anthropic`` SDK against the loopback fake server.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kg_agent.config import AgentConfig
from kg_agent.embedding import Embedder
from kg_agent.ingest.pipeline import LoadReport
from kg_agent.llm.client import AnthropicClient
from kg_agent.multistep.config import MultiStepConfig
from kg_agent.multistep.planner import PLANNER_MODEL
from kg_agent.multistep.retriever import MultiStepRetriever
from kg_agent.multistep.stop import StopReason
from kg_agent.multistep.trace import MultiStepTrace
from kg_agent.pipeline import GraphComponents, QueryPipeline
from kg_agent.retrieval.base import Query, RetrievalResult, Retriever
from kg_agent.store import GraphStore
from tests.support.fake_anthropic import (
    DEFAULT_KEY,
    Behaviour,
    FakeAnthropic,
    fake_anthropic_server,
    text,
)
from tests.support.twowiki_questions import FILMS, OPEN_GAP_QUESTION, QUESTION

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


def pipeline(
    ctx: GraphComponents, *, route: str | None = None, config: MultiStepConfig | None = None
) -> QueryPipeline:
    """The multi-step pipeline the eval runs (offline, every candidate kept)."""
    settings = AgentConfig(
        offline=True,
        fewshot=False,
        retrieval="multistep",
        top_k=30,
        route=route,
        multistep_config=config,
    )
    return ctx.pipeline(settings)


def run(
    ctx: GraphComponents,
    question: str = QUESTION,
    *,
    route: str | None = None,
    config: MultiStepConfig | None = None,
) -> RetrievalResult:
    return pipeline(ctx, route=route, config=config).search(question)


def trace(result: RetrievalResult) -> MultiStepTrace:
    assert result.multistep is not None
    return result.multistep


@pytest.fixture(scope="module")
def complex_run(ctx: GraphComponents) -> RetrievalResult:
    return run(ctx)


def titles(result: RetrievalResult) -> list[str]:
    return list(dict.fromkeys(e.title for e in result.evidence))


def loop_steps(result: RetrievalResult) -> list[str]:
    return [s.kind for s in trace(result).steps if s.kind != "bridge"]


# --------------------------------------------------------------------------- offline


def test_complex_question_routes_plans_and_finds_both_films(complex_run: RetrievalResult) -> None:
    r = trace(complex_run)
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
    assert set(FILMS) <= set(titles(complex_run)[:5])
    assert len(complex_run.evidence) <= MultiStepConfig().top_k_final
    assert len({e.title for e in complex_run.evidence}) == len(complex_run.evidence)
    # the pool holds more than the stages kept; the stages ran in their order
    assert len(r.pool) > len(complex_run.evidence) and r.seconds > 0
    assert complex_run.warnings == []
    stages = [t["stage"] for t in complex_run.trace]
    assert stages == [
        "multistep",
        "relevance",
        "tier_order",
        "fill",
        "quality_filter",
        "rerank",
        "tier_order",
    ]


def test_the_answer_path_ranks_as_the_eval_does(ctx: GraphComponents) -> None:
    """One pipeline for both: ``query(multistep=True)`` answers from what the eval's
    multi-step mode ranks (cut to the answer's top k)."""
    searched = run(ctx)
    answered = pipeline(ctx).run(QUESTION)
    assert [e.section_id for e in answered.ranked] == [e.section_id for e in searched.evidence]
    assert answered.multistep is not None and answered.multistep["route"] == "complex"


def test_the_grounding_weighs_the_question_own_search(
    ctx: GraphComponents, complex_run: RetrievalResult
) -> None:
    """A later step's sections have cosines to its own sub-question (closer than the
    question is to anything): the grounding model, fitted on single searches, weighs
    what the question's own search found."""
    r = trace(complex_run)
    assert r.asked and r.steps[0].results >= len(r.asked)
    assert {e.section_id for e in r.asked} <= {e.section_id for e in r.pool}
    answering = pipeline(ctx)
    result = answering.run(QUESTION)
    grounding = next(t for t in result.trace if t["stage"] == "grounding")
    own = ctx.grounder(answering.read(QUESTION), r.asked)
    assert grounding["probability"] is not None
    assert grounding["probability"] == own.probability
    simple = trace(run(ctx, route="simple"))
    assert simple.asked == simple.pool


def test_forced_simple_is_one_single_step(ctx: GraphComponents) -> None:
    result = run(ctx, route="simple")
    r = trace(result)
    assert r.route == "simple"
    assert [s.kind for s in r.steps] == ["single"]
    assert r.complexity["forced"] is True and r.complexity["reasons"][0] == "forced: simple"
    assert r.plan == {} and r.bridge_round_stats == {"triggered": False}
    assert set(FILMS) <= set(titles(result))
    # the multi-step stages pass a simple route's single search on unchanged
    assert [t for t in result.trace if t["stage"] in ("relevance", "fill")] == []
    json.dumps(r.to_dict())


def test_trace_is_json_serialisable(complex_run: RetrievalResult) -> None:
    data = trace(complex_run).to_dict()
    assert json.loads(json.dumps(data)) == data
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
        assert key in data, key
    step = data["steps"][0]
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
        "plan_step",
        "finding",
    }
    assert data["budget_stops"] == []  # offline: no model call to stop
    assert set(step["gap"]) == {"gap_type", "missing", "confidence"}
    assert data["rewritten_queries"][0] == QUESTION
    assert data["steps"][-1]["gate"] == data["bridge_round_stats"]["gate"]


def test_max_steps_setting_is_respected(ctx: GraphComponents) -> None:
    wide = trace(run(ctx, OPEN_GAP_QUESTION, route="complex"))
    assert wide.plan["query_type"] == "trend"
    assert [s.kind for s in wide.steps if s.kind != "bridge"] == ["plan", "plan", "plan"]
    assert wide.stop_reason == "max_steps"
    assert wide.steps[0].gap["gap_type"] == "missing_years"

    one = run(ctx, OPEN_GAP_QUESTION, route="complex", config=MultiStepConfig(max_steps=1))
    assert loop_steps(one) == ["plan"]
    assert [s.kind for s in trace(one).steps] == ["plan", "bridge"]
    assert trace(one).stop_reason == "max_steps"

    # past the plan, the loop refines the question with the missing terms (here the
    # years are in the question already, so the refined query is the question itself)
    long = trace(
        run(
            ctx,
            OPEN_GAP_QUESTION,
            route="complex",
            config=MultiStepConfig(max_steps=4, stop_no_new_steps=4),
        )
    )
    assert [s.kind for s in long.steps if s.kind != "bridge"] == ["plan", "plan", "plan", "refine"]
    assert long.steps[3].query == OPEN_GAP_QUESTION and long.steps[3].new_evidence == 0
    assert long.stop_reason == "max_steps"


def test_forced_bridge_round_adds_stats_and_keeps_the_answer(ctx: GraphComponents) -> None:
    result = run(ctx, config=MultiStepConfig(bridge_quality_gate=1.0))
    r = trace(result)
    stats = r.bridge_round_stats
    assert stats["triggered"] is True and stats["gate"].endswith("< gate 1.0")
    assert stats["source"] == "offline"
    assert stats["queries_generated"] >= 1 and stats["entities_extracted"] >= 1
    assert stats["queries_generated"] <= MultiStepConfig().bridge_max_queries
    bridge = r.steps[-1]
    assert bridge.kind == "bridge" and bridge.query == " | ".join(stats["queries"])
    assert bridge.results == stats["docs_added"]
    assert not set(stats["entities"]) & set(FILMS)  # already collected: never a bridge entity
    assert set(FILMS) <= set(titles(result)[:5])
    assert result.warnings == []
    json.dumps(r.to_dict())


class _BridgeSearchFails(Retriever):
    """The base search, except that any query other than the question raises."""

    def __init__(self, base: Retriever, question: str) -> None:
        self.inner, self.question, self.failed = base, question, 0

    def search(self, query: Query, top_k: int = 10) -> RetrievalResult:
        if query != self.question:
            self.failed += 1
            raise RuntimeError("bridge search unavailable")
        return self.inner.search(query, top_k)


def test_failing_bridge_search_never_breaks_the_query(ctx: GraphComponents) -> None:
    failing = _BridgeSearchFails(ctx.hybrid(30), QUESTION)
    retriever = MultiStepRetriever(
        ctx.entity_graph(30),
        base=failing,  # the bridge round searches through the base retriever
        linker=ctx.linker,
        config=MultiStepConfig(bridge_quality_gate=1.0),
    )
    result = retriever.search(ctx.read(QUESTION))
    r = trace(result)
    assert failing.failed == 1  # the first bridge query raised; the round gave up
    assert r.bridge_round_stats["triggered"] is True
    assert r.bridge_round_stats["docs_added"] == 0
    assert any(w.startswith("bridge round failed (RuntimeError") for w in result.warnings)
    assert set(FILMS) <= {e.title for e in r.pool}


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


def run_with_claude(ctx: GraphComponents, plan_reply: str) -> tuple[RetrievalResult, FakeAnthropic]:
    with (
        fake_anthropic_server(responder=responder(plan_reply)) as fake,
        AnthropicClient(DEFAULT_KEY, base_url=fake.base_url, timeout=5.0) as client,
    ):
        with_llm = GraphComponents(ctx.store, ctx.embedder, llm=client)
        config = AgentConfig(fewshot=False, retrieval="multistep", top_k=30, llm_timeout=5.0)
        return with_llm.pipeline(config).search(QUESTION), fake


@pytest.mark.usefixtures("no_credentials")
def test_claude_plan_is_used(ctx: GraphComponents) -> None:
    result, fake = run_with_claude(ctx, json.dumps(LLM_PLAN))
    r = trace(result)
    assert r.route == "complex"
    assert r.plan["source"] == "llm" and r.plan["pattern"] == "parallel"
    assert r.plan["query_type"] == "compare"  # the rule classifier still types the question
    assert [s["query"] for s in r.plan["steps"]] == [s["query"] for s in LLM_STEPS]
    assert result.warnings == []  # every Claude call answered usably
    plan_req = fake.message_requests[0]
    assert plan_req.body is not None and plan_req.body["model"] == PLANNER_MODEL
    assert QUESTION in plan_req.user_text
    assert "Entities named: " in plan_req.user_text
    # Claude's rephrasings were searched beside the question
    assert r.quality["rewritten_queries"] == [QUESTION, *REWRITES]
    assert r.steps[0].query == " | ".join([QUESTION, *REWRITES])
    # and Claude scored the final candidates' relevance (the relevance stage)
    judged = [q for q in fake.message_requests if "You judge" in str(q.system)]
    assert judged and all(
        r.quality["relevance_scores"][e.section_id] == 0.9
        for e in result.evidence
        if e.title in FILMS
    )
    assert set(FILMS) <= set(titles(result)[:5])
    assert result.usage is not None and result.usage.as_dict()["calls"] >= 1 + len(judged)


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
    result, _ = run_with_claude(ctx, reply)
    r = trace(result)
    assert r.plan["source"] == "rule" and r.plan["query_type"] == "compare"
    planning = [
        w for w in result.warnings if w.startswith("LLM planning failed, using the rule plan")
    ]
    assert len(planning) == 1 and why in planning[0]
    assert r.route == "complex" and set(FILMS) <= set(titles(result)[:5])
