"""The agent's Claude paths, through the real ``anthropic`` SDK, against a local fake server.

Nothing is patched inside the SDK: the agent's client points at
:class:`tests.support.fake_anthropic.FakeAnthropic`, which records what was sent
and answers with scripted replies or failures (429, 529, timeouts, malformed
bodies, empty replies). Query expansion must fall back to the original question
and synthesis to the extractive answer, with a warning, never an exception.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from kg_agent import AgentConfig
from kg_agent.agent import KnowledgeGraphAgent, QueryResult
from kg_agent.answering.span_ranker import RUNNERS_UP
from kg_agent.embedding import Embedder
from kg_agent.ingest.pipeline import LoadReport
from kg_agent.llm.client import AnthropicClient, LLMReply
from kg_agent.retrieval.base import Evidence, RetrievalResult
from kg_agent.retrieval.multi_query import EXPANSION_MODEL
from kg_agent.synthesis.claude import (
    CANDIDATES_HEADING,
    CANDIDATES_NOTE,
    DEFAULT_SYNTHESIS_MODEL,
    EVIDENCE_CLOSE,
    SYSTEM_PROMPT,
)
from kg_agent.synthesis.extractive import EXTRACTIVE_LABEL
from tests.support.fake_anthropic import (
    DEFAULT_KEY,
    Behaviour,
    FakeAnthropic,
    TextReply,
    delay,
    fake_anthropic_server,
    overloaded,
    rate_limited,
    raw,
    server_error,
    text,
)

ENV_KEYS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL")
TIMEOUT_S = 1.0
ENIAC_Q = "How many vacuum tubes did ENIAC contain?"
VARIANTS = ["Charles Babbage mill and store", "Ada Lovelace Note G Bernoulli numbers"]
EXPANSION_JSON = json.dumps({"queries": VARIANTS})
FEWSHOT_HEADER = "Examples of good cited answers:"
CITE = re.compile(r"\[(\d+)\]")


def evidence_number(body: dict[str, Any], needle: str) -> int:
    """The [n] of the prompt's evidence line holding ``needle`` (0 when none)."""
    prompt = body["messages"][-1]["content"]
    for line in prompt.splitlines():
        m = re.match(r"\[(\d+)\] ", line)
        if m and needle in line:
            return int(m.group(1))
    return 0


def route(body: dict[str, Any]) -> Behaviour:
    """Default replies: expansion JSON for Haiku, a cited answer for synthesis."""
    if body["model"] == EXPANSION_MODEL:
        return text(EXPANSION_JSON, input_tokens=40, output_tokens=12)
    n = evidence_number(body, "17,468") or 1
    return text(
        f"Short answer: 17,468\nENIAC contained 17,468 vacuum tubes [{n}]. See also [99].",
        input_tokens=900,
    )


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeAnthropic]:
    with pytest.MonkeyPatch.context() as mp:
        for name in ENV_KEYS:
            mp.delenv(name, raising=False)
        with fake_anthropic_server(responder=route) as server:
            yield server


@pytest.fixture(scope="module")
def db(sample_graph: tuple[Path, LoadReport]) -> str:
    return str(sample_graph[0])


@pytest.fixture(scope="module")
def agent(db: str, embedder: Embedder, fake: FakeAnthropic) -> Iterator[KnowledgeGraphAgent]:
    client = AnthropicClient(DEFAULT_KEY, base_url=fake.base_url, timeout=TIMEOUT_S)
    with KnowledgeGraphAgent(db, embedder=embedder, llm_client=client, llm_timeout=TIMEOUT_S) as a:
        yield a


@pytest.fixture
def make_agent(
    db: str, embedder: Embedder, fake: FakeAnthropic
) -> Iterator[Callable[..., KnowledgeGraphAgent]]:
    """Another agent on the sample graph: ``client`` (default: the fake's) and settings."""
    opened: list[KnowledgeGraphAgent] = []

    def make(client: Any = None, **settings: Any) -> KnowledgeGraphAgent:
        if client is None:
            client = AnthropicClient(DEFAULT_KEY, base_url=fake.base_url, timeout=TIMEOUT_S)
        a = KnowledgeGraphAgent(
            db, embedder=embedder, llm_client=client, llm_timeout=TIMEOUT_S, **settings
        )
        opened.append(a)
        return a

    yield make
    for a in opened:
        a.close()


@pytest.fixture(autouse=True)
def _fresh_fake(fake: FakeAnthropic) -> Iterator[None]:
    """Each test starts with no recorded request and the default responder, and must use
    every reply it scripts."""
    fake.requests.clear()
    fake.responder = route
    yield
    assert fake.pending == 0, "scripted replies left unused"
    assert fake.responder_errors == []


class SearchSpy:
    """Records the (query, top_k) of every semantic search the agent runs."""

    def __init__(self, agent: KnowledgeGraphAgent, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls: list[tuple[str, int]] = []
        self._search = agent.retriever.search
        monkeypatch.setattr(agent.retriever, "search", self)

    def __call__(self, query: str, top_k: int = 10) -> RetrievalResult:
        self.calls.append((query, top_k))
        return self._search(query, top_k)

    @property
    def queries(self) -> list[str]:
        return [q for q, _ in self.calls]


@pytest.fixture
def spy(agent: KnowledgeGraphAgent, monkeypatch: pytest.MonkeyPatch) -> SearchSpy:
    return SearchSpy(agent, monkeypatch)


def best_per_title(lists: list[list[Evidence]]) -> dict[str, float]:
    best: dict[str, float] = {}
    for results in lists:
        for e in results:
            best[e.title] = max(best.get(e.title, -2.0), e.similarity)
    return best


#: The kinds a client retries once (a 429 with a short retry-after, 529, 500).
RETRIED = {"rate_limited", "overloaded", "api_error"}


def source(fake: FakeAnthropic) -> str:
    """How a warning names the fake server."""
    return f"the anthropic API at {fake.base_url}"


def warned(caplog: pytest.LogCaptureFixture, text_: str) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.levelno == logging.WARNING
        and r.name.startswith("kg_agent.")
        and text_ in r.getMessage()
    ]


def check_citations(r: QueryResult) -> None:
    cited = [int(n) for n in CITE.findall(r.answer)]
    valid = [n for n in dict.fromkeys(cited) if 1 <= n <= len(r.evidence)]
    assert [c.n for c in r.citations] == valid
    for c in r.citations:
        e = r.evidence[c.n - 1]
        assert (c.title, c.heading_path, c.section_id) == (e.title, e.heading_path, e.section_id)


# --------------------------------------------------------------------------- query expansion


def test_expansion_sends_the_question_truncated_to_500_chars_to_haiku(
    agent: KnowledgeGraphAgent, fake: FakeAnthropic, spy: SearchSpy
) -> None:
    question = ENIAC_Q + " " + " ".join(f"detail{i}" for i in range(80))
    assert len(question) > 600
    question = question[:600]
    results = agent._multi_query_retrieve(question)
    [req] = fake.message_requests
    assert req.body is not None
    assert req.body["model"] == "claude-haiku-4-5-20251001" == EXPANSION_MODEL
    assert req.credential == DEFAULT_KEY
    assert req.user_text == question[:500]
    assert len(req.user_text) == 500
    assert "JSON" in str(req.system) and "two alternative phrasings" in str(req.system)
    # The truncated question and the two phrasings are searched, nothing else.
    assert spy.queries == [question[:500], *VARIANTS]
    assert 1 <= len(results) <= 5


def test_multi_query_dedupes_by_title_keeping_the_best_similarity(
    agent: KnowledgeGraphAgent, fake: FakeAnthropic, spy: SearchSpy
) -> None:
    question = "Who designed the Analytical Engine?"
    results = agent._multi_query_retrieve(question, max_results=8)
    assert spy.calls == [(question, 8), (VARIANTS[0], 8), (VARIANTS[1], 8)]
    assert len(fake.message_requests) == 1
    lists = [agent.retriever.search(q, 8).evidence for q in spy.queries[:3]]
    best = best_per_title(lists)
    titles = [r["title"] for r in results]
    assert len(titles) == len(set(titles))
    sims = [r["similarity"] for r in results]
    assert sims == sorted(sims, reverse=True)
    for r in results:
        assert r["similarity"] == pytest.approx(best[r["title"]])
        assert {"title", "similarity", "content", "id", "heading"} <= r.keys()
    expected = sorted(best, key=lambda t: (-best[t], t))[:8]
    assert titles == expected
    # A phrasing found an article that the question alone did not.
    alone = {e.title for e in lists[0]}
    assert set(titles) - alone, "the rephrasings added nothing"


@pytest.mark.parametrize(
    ("asked", "clamped"),
    [(0, 1), (-3, 1), (1, 1), (5, 5), (20, 20), (21, 20), (500, 20)],
)
def test_max_results_is_clamped_to_1_to_20(
    agent: KnowledgeGraphAgent, spy: SearchSpy, asked: int, clamped: int
) -> None:
    results = agent._multi_query_retrieve(ENIAC_Q, max_results=asked)
    assert [k for _, k in spy.calls] == [clamped] * 3
    assert 1 <= len(results) <= clamped


def test_expansion_reply_with_extra_queries_or_fences_is_accepted(
    agent: KnowledgeGraphAgent, fake: FakeAnthropic, spy: SearchSpy
) -> None:
    three = json.dumps({"queries": ["first phrasing", "second phrasing", "third phrasing"]})
    fenced = "Here you go:\n```json\n" + json.dumps(VARIANTS) + "\n```"
    fake.enqueue(text(three), text(fenced))
    agent._multi_query_retrieve(ENIAC_Q)
    assert spy.queries == [ENIAC_Q, "first phrasing", "second phrasing"]
    spy.calls.clear()
    agent._multi_query_retrieve(ENIAC_Q)
    assert spy.queries == [ENIAC_Q, *VARIANTS]


@pytest.mark.parametrize(
    ("reply", "kind"),
    [
        (rate_limited(), "rate_limited"),
        (overloaded(), "overloaded"),
        (server_error(), "api_error"),
        (delay(3.0), "timeout"),
        (text("Sure! Here are two rephrasings: one, two."), "bad_response"),
        (text('{"queries": []}'), "bad_response"),
        (text('{"queries": "not a list"}'), "bad_response"),
        (text('{"answer": 42}'), "bad_response"),
        (raw(200, '{"type": "message", "content": [{"type": "te'), "bad_response"),
        (raw(200, "<html>oops</html>", "text/html"), "bad_response"),
        (text(""), "bad_response"),
        (TextReply("", content=[]), "bad_response"),
    ],
    ids=[
        "429",
        "529",
        "500",
        "timeout",
        "prose",
        "empty-list",
        "not-a-list",
        "no-queries",
        "truncated-json",
        "html",
        "empty-text",
        "no-blocks",
    ],
)
def test_expansion_failure_searches_the_question_alone_and_warns(
    agent: KnowledgeGraphAgent,
    fake: FakeAnthropic,
    spy: SearchSpy,
    caplog: pytest.LogCaptureFixture,
    reply: Behaviour,
    kind: str,
) -> None:
    fake.enqueue(*[reply] * (2 if kind in RETRIED else 1))  # a 429, 529, 500: one retry
    question = "Who is counted as the founder of the university at which ENIAC was built?"
    with caplog.at_level(logging.WARNING, logger="kg_agent"):
        results = agent._multi_query_retrieve(question, max_results=6)
    assert len(fake.message_requests) == (2 if kind in RETRIED else 1)
    assert spy.calls == [(question, 6)]
    alone = best_per_title([agent.retriever.search(question, 6).evidence])
    assert [r["title"] for r in results] == sorted(alone, key=lambda t: (-alone[t], t))
    assert warned(caplog, f"query expansion failed ({kind} from {source(fake)})")


def test_expansion_connection_refused_falls_back(
    make_agent: Callable[..., KnowledgeGraphAgent],
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with fake_anthropic_server() as gone:
        dead_url = gone.base_url
    client = AnthropicClient(DEFAULT_KEY, base_url=dead_url, timeout=TIMEOUT_S)
    agent = make_agent(client)
    spy = SearchSpy(agent, monkeypatch)
    with caplog.at_level(logging.WARNING, logger="kg_agent"):
        results = agent._multi_query_retrieve(ENIAC_Q)
    client.close()
    assert results and results[0]["title"] == "ENIAC"
    assert spy.queries == [ENIAC_Q]
    assert warned(
        caplog, f"query expansion failed (connection from the anthropic API at {dead_url})"
    )


def test_expansion_never_raises_even_on_unexpected_errors(
    make_agent: Callable[..., KnowledgeGraphAgent],
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class Broken:
        def complete(self, **kwargs: Any) -> LLMReply:
            raise RuntimeError("client bug")

    agent = make_agent(Broken())
    spy = SearchSpy(agent, monkeypatch)
    with caplog.at_level(logging.WARNING, logger="kg_agent"):
        results = agent._multi_query_retrieve(ENIAC_Q)
    assert results and spy.queries == [ENIAC_Q]
    assert warned(caplog, "query expansion failed (RuntimeError)")


# --------------------------------------------------------------------------- synthesis


def test_claude_short_answer_line_is_split_out(
    agent: KnowledgeGraphAgent, fake: FakeAnthropic
) -> None:
    fake.enqueue(text("Short answer: 17,468 [3]\nENIAC contained 17,468 vacuum tubes [3]."))
    r = agent.query(ENIAC_Q)
    assert r.path == "claude" and r.answerable
    assert r.short_answer == "17,468"
    assert r.answer == "ENIAC contained 17,468 vacuum tubes [1]."
    check_citations(r)


def test_claude_is_told_when_the_graph_lacks_the_answer_and_says_so(
    agent: KnowledgeGraphAgent, fake: FakeAnthropic
) -> None:
    # about something the graph has no article for: refused before Claude is asked
    refused = agent.query("Who won the 2022 FIFA World Cup final in Qatar?")
    assert not refused.answerable and refused.usage["calls"] == 0 and not fake.message_requests
    assert refused.answer.startswith("Not in the graph")
    # about an article the graph has, but not what its evidence says: Claude is told
    fake.enqueue(text("Short answer: not in the graph\nThe evidence is about early computers [1]."))
    r = agent.query("What was Charles Babbage's favourite colour and which shoes did he wear?")
    req = fake.message_requests[-1]
    assert "does NOT cover the question's names and words" in req.user_text
    assert "not in the graph" in req.system
    assert r.path == "claude"
    assert not r.answerable and r.short_answer is None
    assert r.support < 0.7


def test_synthesis_prompt_model_and_citations(
    agent: KnowledgeGraphAgent, fake: FakeAnthropic
) -> None:
    r = agent.query(ENIAC_Q)
    [req] = fake.message_requests  # multi-query is off by default: one call
    assert req.body is not None
    assert req.body["model"] == DEFAULT_SYNTHESIS_MODEL == "claude-sonnet-4-6"
    assert req.system == SYSTEM_PROMPT
    prompt = req.user_text
    assert f"Question: {ENIAC_Q}" in prompt
    assert prompt.index(FEWSHOT_HEADER) < prompt.index("Evidence:") < prompt.index("Question: How")
    assert "Example 1" in prompt and "Example 2" in prompt
    evidence_part = prompt[prompt.index("Evidence:") :]
    # the prompt numbers the evidence as ranked and grouped; the result renumbers it
    # in the order the answer cites it
    assert len(re.findall(r"^\[\d+\] \(", evidence_part, re.M)) == len(r.evidence)
    for e in r.evidence:
        assert f"({e.heading_path or 'introduction'}) {e.content[:60]}" in evidence_part
    assert f"## {r.evidence[0].title}" in evidence_part  # grouped by article
    assert "Evidence check (support" in prompt and "does NOT cover" not in prompt

    assert r.path == "claude" and r.mode == "claude"
    # [99] names no evidence: taken out of the answer, with a warning
    assert r.warnings == [
        f"synthesis with {DEFAULT_SYNTHESIS_MODEL}: removed citations naming no evidence ([99])"
    ]
    assert evidence_number(req.body, "17,468")
    assert r.answer == "ENIAC contained 17,468 vacuum tubes [1]. See also."
    [c] = r.citations
    assert (c.n, c.title, c.heading_path) == (1, "ENIAC", "Design")
    assert "17,468" in r.evidence[0].content
    check_citations(r)
    assert r.usage["calls"] == 1 and r.usage["failures"] == 0
    assert r.usage["input_tokens"] == 900
    assert r.usage["output_tokens"] > 0
    assert r.usage["cost_usd"] > 0
    assert [s["stage"] for s in r.trace][-1] == "synthesis"
    assert r.trace[-1]["mode"] == "claude"


def test_the_offline_reader_s_candidates_reach_the_prompt(
    agent: KnowledgeGraphAgent,
    make_agent: Callable[..., KnowledgeGraphAgent],
    fake: FakeAnthropic,
) -> None:
    # the same graph read offline: the short answer the reader found, with its confidence
    offline = make_agent(offline=True).query(ENIAC_Q)
    assert offline.answer_candidate and "17,468" in offline.answer_candidate
    agent.query(ENIAC_Q)
    [req] = fake.message_requests
    lines = req.user_text.splitlines()
    at = lines.index(CANDIDATES_HEADING)  # inside the evidence's fence, its last part
    assert lines[at + 1].startswith(f"- {offline.answer_candidate} [")
    assert lines[at + 1].endswith(f"(confidence {offline.confidence:.2f})")
    assert EVIDENCE_CLOSE in lines[at + 2 : at + 2 + RUNNERS_UP + 1]
    assert CANDIDATES_NOTE in req.user_text


def test_usage_counts_expansion_and_synthesis_tokens(
    make_agent: Callable[..., KnowledgeGraphAgent],
    fake: FakeAnthropic,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    agent = make_agent(enable_multi_query=True)
    fake.enqueue(
        text(EXPANSION_JSON, input_tokens=40, output_tokens=10),
        text(
            "Short answer: 17,468\nENIAC had 17,468 tubes [1].", input_tokens=1000, output_tokens=30
        ),
    )
    r = agent.query(ENIAC_Q)
    assert [q.body["model"] for q in fake.message_requests if q.body] == [
        EXPANSION_MODEL,
        DEFAULT_SYNTHESIS_MODEL,
    ]
    assert r.usage["calls"] == 2 and r.usage["failures"] == 0
    assert r.usage["input_tokens"] == 1040
    assert r.usage["output_tokens"] == 40
    # Haiku 4.5 at $1/$5 and Sonnet 4.6 at $3/$15 per million tokens.
    expected = (40 * 1 + 10 * 5 + 1000 * 3 + 30 * 15) / 1_000_000
    assert r.usage["cost_usd"] == pytest.approx(expected, abs=1e-6)
    step = next(s for s in r.trace if s["stage"] == "multi_query")
    assert step["path"] == "claude" and step["queries"] == [ENIAC_Q, *VARIANTS]
    assert r.path == "claude" and r.warnings == []


def test_expansion_failure_inside_query_keeps_claude_synthesis(
    make_agent: Callable[..., KnowledgeGraphAgent],
    fake: FakeAnthropic,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    agent = make_agent(enable_multi_query=True)
    fake.enqueue(overloaded(), overloaded())  # the expansion call and its retry
    with caplog.at_level(logging.WARNING, logger="kg_agent"):
        r = agent.query(ENIAC_Q)
    expansion = f"query expansion failed (overloaded from {source(fake)})"
    assert r.path == "claude" and r.mode == "claude"
    assert len(r.warnings) == 2 and expansion in r.warnings[0]
    assert "removed citations naming no evidence ([99])" in r.warnings[1]  # the reply's [99]
    assert warned(caplog, expansion)
    assert r.usage["calls"] == 1 and r.usage["failures"] == 1
    step = next(s for s in r.trace if s["stage"] == "multi_query")
    assert step["queries"] == [ENIAC_Q]


@pytest.mark.parametrize(
    ("reply", "kind"),
    [
        (rate_limited(), "rate_limited"),
        (overloaded(), "overloaded"),
        (server_error(), "api_error"),
        (delay(3.0), "timeout"),
        (raw(200, '{"id": "msg_1", "type": "message", "content": [{"ty'), "bad_response"),
        (raw(200, "<html>oops</html>", "text/html"), "bad_response"),
        (text(""), "bad_response"),
        (text("  \n "), "bad_response"),
        (TextReply("", content=[]), "bad_response"),
        (
            TextReply("", content=[{"type": "tool_use", "id": "t1", "name": "f", "input": {}}]),
            "bad_response",
        ),
    ],
    ids=[
        "429",
        "529",
        "500",
        "timeout",
        "truncated-json",
        "html",
        "empty-text",
        "blank-text",
        "no-blocks",
        "tool-use-only",
    ],
)
def test_synthesis_failure_falls_back_to_the_extractive_answer(
    agent: KnowledgeGraphAgent,
    fake: FakeAnthropic,
    caplog: pytest.LogCaptureFixture,
    reply: Behaviour,
    kind: str,
) -> None:
    fake.enqueue(*[reply] * (2 if kind in RETRIED else 1))  # a 429, 529, 500: one retry
    with caplog.at_level(logging.WARNING, logger="kg_agent"):
        r = agent.query(ENIAC_Q)
    assert len(fake.message_requests) == (2 if kind in RETRIED else 1)
    assert r.path == "offline" and r.mode == "extractive"
    assert EXTRACTIVE_LABEL + ": " in r.answer
    assert "17,468" in r.answer
    msg = (
        f"synthesis with {DEFAULT_SYNTHESIS_MODEL} failed ({kind} from {source(fake)}): "
        "extractive answer"
    )
    assert r.warnings == [msg]
    assert warned(caplog, msg)
    assert r.usage["calls"] == 0 and r.usage["failures"] == 1
    assert r.usage["input_tokens"] == 0
    assert r.citations
    check_citations(r)


def test_both_calls_failing_still_answers(
    make_agent: Callable[..., KnowledgeGraphAgent],
    fake: FakeAnthropic,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    agent = make_agent(enable_multi_query=True)
    fake.enqueue(*[rate_limited()] * 4)  # each call and its one retry
    with caplog.at_level(logging.WARNING, logger="kg_agent"):
        r = agent.query(ENIAC_Q)
    assert r.path == "offline" and r.mode == "extractive"
    assert len(r.warnings) == 2
    assert f"query expansion failed (rate_limited from {source(fake)})" in r.warnings[0]
    assert f"failed (rate_limited from {source(fake)}): extractive answer" in r.warnings[1]
    assert len(fake.message_requests) == 4
    assert r.usage["failures"] == 2 and r.usage["calls"] == 0


def test_structural_question_with_claude(agent: KnowledgeGraphAgent, fake: FakeAnthropic) -> None:
    fake.enqueue(
        text("Short answer: the notes\nAda Lovelace wrote the notes on the Analytical Engine [1].")
    )
    r = agent.query("How is Ada Lovelace connected to IBM?")
    assert r.mode == "graph"
    assert r.path == "claude"  # Claude wrote the prose after the graph's lines
    assert r.graph is not None and r.graph["rows"]
    assert r.answer.startswith("How Ada Lovelace and IBM are connected in the graph:\n")
    assert r.answer.endswith("\n\nAda Lovelace wrote the notes on the Analytical Engine [1].")
    # the lines and the prose cite the same numbered evidence
    assert [c.n for c in r.citations] == [1, 2, 3]
    assert r.citations[0].title == "Ada Lovelace"
    assert r.usage["calls"] == 1


# --------------------------------------------------------------------------- credentials


def test_key_argument_with_base_url_from_env(
    db: str, embedder: Embedder, fake: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Key from the argument (env key absent), SDK pointed at the fake by ANTHROPIC_BASE_URL;
    also a custom synthesis model and few-shot off."""
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
    with KnowledgeGraphAgent(
        db,
        anthropic_api_key=DEFAULT_KEY,
        embedder=embedder,
        synthesis_model="claude-opus-4-6",
        enable_fewshot=False,
        llm_timeout=TIMEOUT_S,
    ) as a:
        r = a.query(ENIAC_Q)
    [req] = fake.message_requests
    assert req.credential == DEFAULT_KEY
    assert req.body is not None and req.body["model"] == "claude-opus-4-6"
    assert FEWSHOT_HEADER not in req.user_text and "Example 1" not in req.user_text
    assert req.user_text.startswith("Evidence:")
    assert r.path == "claude" and r.mode == "claude"
    assert r.citations and r.citations[0].title == "ENIAC"


def test_llm_base_url_from_the_constructor_and_the_config(
    db: str, embedder: Embedder, fake: FakeAnthropic
) -> None:
    """No ANTHROPIC_BASE_URL (the module fixture removed it): the URL given to the agent,
    or in its AgentConfig, is where every Claude step goes."""
    with KnowledgeGraphAgent(
        db, anthropic_api_key=DEFAULT_KEY, embedder=embedder, llm_base_url=fake.base_url
    ) as a:
        assert a.config.llm_base_url == fake.base_url
        first = a.query(ENIAC_Q)
    config = AgentConfig(llm_base_url=fake.base_url, multi_query=True, llm_timeout=TIMEOUT_S)
    with KnowledgeGraphAgent(
        db, anthropic_api_key=DEFAULT_KEY, embedder=embedder, config=config
    ) as a:
        second = a.query(ENIAC_Q)
    assert first.path == second.path == "claude"
    models = [r.body["model"] for r in fake.message_requests if r.body is not None]
    assert models == [DEFAULT_SYNTHESIS_MODEL, EXPANSION_MODEL, DEFAULT_SYNTHESIS_MODEL]
    assert second.usage["calls"] == 2


def test_key_from_environment(
    db: str, embedder: Embedder, fake: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", DEFAULT_KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
    with KnowledgeGraphAgent(db, embedder=embedder, llm_timeout=TIMEOUT_S) as a:
        assert a.llm is not None
        r = a.query(ENIAC_Q)
    assert r.path == "claude"
    assert fake.message_requests[0].credential == DEFAULT_KEY


def test_key_argument_wins_over_the_environment(
    db: str, embedder: Embedder, fake: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "env-key-the-fake-refuses")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
    with KnowledgeGraphAgent(
        db, anthropic_api_key=DEFAULT_KEY, embedder=embedder, llm_timeout=TIMEOUT_S
    ) as a:
        r = a.query(ENIAC_Q)
    assert r.path == "claude"
    assert fake.message_requests[0].credential == DEFAULT_KEY


def test_refused_key_falls_back_with_a_warning(
    db: str,
    embedder: Embedder,
    fake: FakeAnthropic,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
    with (
        caplog.at_level(logging.WARNING, logger="kg_agent"),
        KnowledgeGraphAgent(
            db, anthropic_api_key="wrong-key", embedder=embedder, llm_timeout=TIMEOUT_S
        ) as a,
    ):
        r = a.query(ENIAC_Q)
    assert not fake.message_requests[0].authorized
    assert r.path == "offline" and r.mode == "extractive"
    assert r.warnings and f"(api_error from {source(fake)})" in r.warnings[0]
    assert warned(caplog, f"(api_error from {source(fake)})")
    assert len(fake.message_requests) == 1  # a 401 is not retried


def test_no_key_anywhere_sends_nothing(
    db: str, embedder: Embedder, fake: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)  # a base URL alone is no key
    with KnowledgeGraphAgent(db, embedder=embedder, enable_multi_query=True) as a:
        assert a.llm is None
        r = a.query(ENIAC_Q)
    assert r.path == "offline" and r.mode == "extractive"
    assert fake.message_requests == []
    step = next(s for s in r.trace if s["stage"] == "multi_query")
    assert step["path"] == "offline"


def test_the_python_api_speaks_openai_to_a_local_server(
    db: str, embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``KnowledgeGraphAgent(llm_api="openai", ...)``: each role on its own model, the
    rephrasings on the fast one and the answer on the synthesis one."""
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)

    def reply(body: dict[str, Any]) -> str:
        if body["model"] == "llama3.2:1b":
            return EXPANSION_JSON
        return "Short answer: 17,468 [3]\nENIAC contained 17,468 vacuum tubes [3]."

    with fake_anthropic_server(api_keys=("no-key",), responder=reply) as fake:
        with KnowledgeGraphAgent(
            db,
            embedder=embedder,
            llm_api="openai",
            llm_base_url=fake.openai_base_url,
            synthesis_model="llama3.1:8b",
            fast_model="llama3.2:1b",
            enable_multi_query=True,
            llm_timeout=5.0,
        ) as agent:
            r = agent.query(ENIAC_Q)
        requests = fake.message_requests
    assert r.path == "claude" and r.short_answer == "17,468" and r.warnings == []
    assert [q.body["model"] for q in requests if q.body] == ["llama3.2:1b", "llama3.1:8b"]
    assert all(q.path == "/v1/chat/completions" for q in requests)
    assert r.usage["calls"] == 2 and r.usage["cost_usd"] == 0.0
    step = next(s for s in r.trace if s["stage"] == "multi_query")
    assert step["queries"] == [ENIAC_Q, *VARIANTS]
