"""Plans executed as designed, and budgets over every model call, on the real 2Wiki graph
with the real SDKs against the loopback server (both APIs).

- a dependent step searches what the step it depends on found;
- a parallel plan's searches run at once, and rank exactly as one by one;
- a conditional plan's later steps run only on a gap; a synthesize step and a model's
  completed plan stop the loop (``plan_complete``);
- the cost and latency budgets stop the rephrasing, bridge and relevance calls, and the
  trace says which budget stopped what.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from kg_agent.config import AgentConfig
from kg_agent.embedding import Embedder
from kg_agent.ingest.pipeline import LoadReport
from kg_agent.language.question import as_question
from kg_agent.llm import AnthropicClient, LLMClient, OpenAIClient
from kg_agent.multistep.config import MultiStepConfig
from kg_agent.multistep.retriever import MultiStepRetriever
from kg_agent.multistep.trace import MultiStepTrace
from kg_agent.pipeline import GraphComponents
from kg_agent.retrieval.base import Evidence, Query, RetrievalResult
from kg_agent.store import GraphStore
from tests.support.fake_anthropic import (
    DEFAULT_KEY,
    Behaviour,
    FakeAnthropic,
    delay,
    fake_anthropic_server,
    text,
)
from tests.support.twowiki_questions import FILMS, OPEN_GAP_QUESTION, QUESTION

APIS = ("anthropic", "openai")


@pytest.fixture(scope="module")
def ctx(twowiki_graph: tuple[Path, LoadReport], embedder: Embedder) -> Iterator[GraphComponents]:
    store = GraphStore.open(twowiki_graph[0], read_only=True)
    yield GraphComponents(store, embedder)
    store.close()


@pytest.fixture(autouse=True)
def _no_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def _system(body: dict[str, Any]) -> str:
    if "system" in body:
        return str(body["system"])
    first = (body.get("messages") or [{}])[0]
    return str(first.get("content", "")) if first.get("role") == "system" else ""


def responder(plan: dict[str, Any] | str, plan_delay: float = 0.0) -> Any:
    """Each prompt's job answered: the plan given, two rephrasings, relevance, no bridge
    names (the round then follows the graph's neighbours)."""
    plan_text = plan if isinstance(plan, str) else json.dumps(plan)

    def answer(body: dict[str, Any]) -> Behaviour | str:
        system = _system(body)
        if system.startswith("You plan searches"):
            return delay(plan_delay, text(plan_text)) if plan_delay else plan_text
        if system.startswith("You rewrite search questions"):
            return json.dumps(["director of The Planet of Junior Brown", "A Yank in the R.A.F."])
        if system.startswith("You judge search results"):
            return "0.8"
        return "entities: none\ngaps: none"

    return answer


def client_for(api: str, fake: FakeAnthropic) -> LLMClient:
    if api == "openai":
        return OpenAIClient(DEFAULT_KEY, base_url=fake.openai_base_url, timeout=5.0)
    return AnthropicClient(DEFAULT_KEY, base_url=fake.base_url, timeout=5.0)


def search_with(
    ctx: GraphComponents,
    api: str,
    fake: FakeAnthropic,
    question: str = QUESTION,
    settings: MultiStepConfig | None = None,
) -> RetrievalResult:
    """The multi-step pipeline of ``query(multistep=True)``, its model steps on ``api``
    (a priced model on either: the cost budget must see spending)."""
    client = client_for(api, fake)
    try:
        with_llm = GraphComponents(ctx.store, ctx.embedder, llm=client)
        config = AgentConfig(
            fewshot=False,
            retrieval="multistep",
            route="complex",
            top_k=30,
            llm_timeout=5.0,
            llm_api=api,
            synthesis_model="gpt-4o-mini" if api == "openai" else AgentConfig.synthesis_model,
            fast_model="gpt-4o-mini" if api == "openai" else None,
            multistep_config=settings,
        )
        return with_llm.pipeline(config).search(question)
    finally:
        client.close()  # type: ignore[attr-defined]


def trace(result: RetrievalResult) -> MultiStepTrace:
    assert result.multistep is not None
    return result.multistep


# --------------------------------------------------------------------------- dependencies


@pytest.mark.parametrize("api", APIS)
def test_a_dependent_step_searches_what_its_dependency_found(
    ctx: GraphComponents, api: str
) -> None:
    plan = {
        "pattern": "sequential",
        "steps": [
            {"query": "The Planet of Junior Brown director", "focus": "director"},
            {"query": "{0} date of birth", "focus": "birth", "depends_on": [0]},
        ],
    }
    with fake_anthropic_server(responder=responder(plan)) as fake:
        result = search_with(ctx, api, fake)
    steps = {s.plan_step: s for s in trace(result).steps if s.plan_step is not None}
    found = steps[0].finding
    assert found and found not in FILMS  # the next hop: an article the question does not name
    assert steps[1].kind == "dependent"
    assert steps[1].query == f"{found} date of birth"
    assert trace(result).plan["steps"][1]["depends_on"] == [0]
    assert result.warnings == []


# --------------------------------------------------------------------------- parallel


@dataclass
class Recording:
    """The entity-graph retriever, recording each search's thread and time (and taking
    0.2 s longer, so searches that run at once overlap measurably)."""

    inner: Any
    calls: list[tuple[str, str, float, float]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def search(self, query: Query, top_k: int = 10) -> RetrievalResult:
        started = time.perf_counter()
        result: RetrievalResult = self.inner.search(query, top_k)
        time.sleep(0.2)
        text_ = query if isinstance(query, str) else query.text
        with self.lock:
            self.calls.append(
                (text_, threading.current_thread().name, started, time.perf_counter())
            )
        return result

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def _pool_ids(pool: tuple[Evidence, ...]) -> list[tuple[str, float]]:
    return [(e.section_id, round(e.score, 9)) for e in pool]


def test_a_parallel_plan_searches_at_once_and_ranks_as_one_by_one(ctx: GraphComponents) -> None:
    steps = [
        {"query": "The Planet of Junior Brown director"},
        {"query": "A Yank in the R.A.F. director"},
        {"query": "Henry King film director birth"},
    ]
    plan = {"pattern": "parallel", "steps": steps}
    runs = {}
    with fake_anthropic_server(responder=responder(plan)) as fake:
        for workers in (4, 1):
            recording = Recording(ctx.entity_graph(30))
            client = client_for("anthropic", fake)
            retriever = MultiStepRetriever(
                recording,  # type: ignore[arg-type]
                base=ctx.hybrid(30),
                linker=ctx.linker,
                config=MultiStepConfig(max_steps=5),
                llm=client,
                llm_timeout=5.0,
                concurrent_steps=workers,
            )
            runs[workers] = (retriever.run(as_question(QUESTION, ctx.linker.link)), recording)
            client.close()  # type: ignore[attr-defined]
    concurrent, sequential = runs[4], runs[1]
    planned = {s["query"] for s in steps}
    on_pool = [c for c in concurrent[1].calls if c[0] in planned]
    assert len(on_pool) == 3 and all(c[1].startswith("kg-plan-step") for c in on_pool)
    assert max(c[2] for c in on_pool) < min(c[3] for c in on_pool)  # all three overlapped
    assert all(c[1] == "MainThread" for c in sequential[1].calls)
    # the same steps, the same pool, in the same order
    assert [s.query for s in concurrent[0].steps] == [s.query for s in sequential[0].steps]
    assert _pool_ids(concurrent[0].pool) == _pool_ids(sequential[0].pool)


# --------------------------------------------------------------------------- stops


def test_a_conditional_plan_runs_its_later_steps_only_on_a_gap(ctx: GraphComponents) -> None:
    steps = [
        {"query": "The Planet of Junior Brown director"},
        {"query": "A Yank in the R.A.F. director"},
        {"query": "Henry King film director birth"},
    ]
    kinds = {}
    with fake_anthropic_server() as fake:
        for pattern in ("sequential", "conditional"):
            fake.responder = responder({"pattern": pattern, "steps": steps})
            settings = MultiStepConfig(max_steps=5)
            kinds[pattern] = trace(search_with(ctx, "anthropic", fake, settings=settings))
    run_all, conditional = kinds["sequential"], kinds["conditional"]
    ran = [s.plan_step for s in run_all.steps if s.plan_step is not None]
    assert ran == [0, 1, 2]  # a sequential plan runs every step, gap or not
    first_gap = run_all.steps[0].gap["gap_type"]
    assert first_gap == "none"  # both films are found by the question's own search
    assert conditional.stop_reason == "no_gap"
    assert [s.plan_step for s in conditional.steps if s.plan_step is not None] == []


@pytest.mark.parametrize("api", APIS)
def test_a_synthesize_step_ends_the_plan(ctx: GraphComponents, api: str) -> None:
    plan = {
        "pattern": "sequential",
        "steps": [
            {"query": "Toronto population"},
            {"query": "done", "action": "synthesize"},
            {"query": "never searched"},
        ],
    }
    with fake_anthropic_server(responder=responder(plan)) as fake:
        t = trace(search_with(ctx, api, fake, OPEN_GAP_QUESTION))
    loop = [s for s in t.steps if s.kind != "bridge"]
    assert t.stop_reason == "plan_complete"
    assert [s.query for s in loop][1:] == ["Toronto population"]
    assert all("never searched" not in s.query for s in t.steps)


def test_a_models_plan_stops_when_every_step_found_its_focus(ctx: GraphComponents) -> None:
    plan = {"pattern": "sequential", "steps": [{"query": "Toronto population", "focus": ""}]}
    with fake_anthropic_server(responder=responder(plan)) as fake:
        t = trace(search_with(ctx, "anthropic", fake, OPEN_GAP_QUESTION))
    loop = [s for s in t.steps if s.kind != "bridge"]
    # the gap (the years) stays open: without the completeness stop the loop would
    # refine until max_steps
    assert loop[-1].gap["gap_type"] != "none"
    assert t.stop_reason == "plan_complete" and len(loop) == 2


# --------------------------------------------------------------------------- budgets


@pytest.mark.parametrize("api", APIS)
def test_the_cost_budget_stops_the_bridge_and_relevance_calls(
    ctx: GraphComponents, api: str
) -> None:
    settings = MultiStepConfig(max_cost_usd=1e-9, bridge_quality_gate=1.0)  # gate open
    plan = {"pattern": "parallel", "steps": [{"query": "A Yank in the R.A.F. director"}]}
    with fake_anthropic_server(responder=responder(plan)) as fake:
        result = search_with(ctx, api, fake, settings=settings)
        sent = [_system(r.body or {}) for r in fake.message_requests]
    t = trace(result)
    assert len(sent) == 1 and sent[0].startswith("You plan searches")  # only the plan
    stops = {s["call"]: s for s in t.budget_stops}
    assert set(stops) == {"rephrasing", "bridge extraction", "relevance scoring"}
    assert all(s["budget"] == "cost" and s["limit"] == 1e-9 for s in stops.values())
    assert stops["relevance scoring"]["skipped"] >= 2
    assert t.bridge_round_stats["triggered"] and t.bridge_round_stats["source"] == "offline"
    assert any(
        w.startswith("bridge extraction stopped by the cost budget") for w in result.warnings
    )
    assert t.stop_reason == "cost_budget"  # the step loop's own rule saw the same spend


def test_the_latency_budget_cuts_a_slow_call_and_stops_the_rest(ctx: GraphComponents) -> None:
    settings = MultiStepConfig(max_latency_s=1.0, bridge_quality_gate=1.0)
    plan = {"pattern": "parallel", "steps": [{"query": "A Yank in the R.A.F. director"}]}
    started = time.perf_counter()
    with fake_anthropic_server(responder=responder(plan, plan_delay=2.0)) as fake:
        result = search_with(ctx, "anthropic", fake, settings=settings)
        requests = len(fake.message_requests)
    took = time.perf_counter() - started
    t = trace(result)
    assert requests == 1  # the plan, given at most the 1 s left, timed out
    assert any("LLM planning failed" in w and "timeout" in w for w in result.warnings)
    stops = {s["call"]: s["budget"] for s in t.budget_stops}
    assert stops == {
        "rephrasing": "latency",
        "bridge extraction": "latency",
        "relevance scoring": "latency",
    }
    assert t.plan["source"] == "rule"
    assert took < 8  # no call ran its full 5 s timeout
