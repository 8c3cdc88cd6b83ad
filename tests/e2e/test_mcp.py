"""``kg-agent mcp``: the real executable over stdio, driven by the MCP SDK's own client.

The server starts once (it loads the model, ~6 s): one conversation runs every call
this module checks, and the tests read its record.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp_types import CallToolResult, TextContent, Tool

from kg_agent.ingest.pipeline import LoadReport
from tests.support.cli import kg_agent_exe

QUESTION = "Who built Colossus?"
ARTICLE = "Colossus computer"


@dataclass
class Conversation:
    """What the client saw: the tool list, each call's result by label, the server's
    stderr."""

    tools: dict[str, Tool]
    calls: dict[str, CallToolResult] = field(default_factory=dict)
    stderr: str = ""

    def ok(self, label: str) -> dict[str, Any]:
        result = self.calls[label]
        assert not result.is_error, _text(result)
        assert result.structured_content is not None
        return dict(result.structured_content)

    def error(self, label: str) -> str:
        result = self.calls[label]
        assert result.is_error, result.structured_content
        return _text(result)


def _text(result: CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, TextContent))


async def _converse(db: Path, errlog: Any) -> Conversation:
    cmd = [*kg_agent_exe(), "mcp", "--db", str(db), "--offline", "--workers", "2"]
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    params = StdioServerParameters(command=cmd[0], args=cmd[1:], env=env)
    with anyio.fail_after(300):
        async with Client(stdio_client(params, errlog=errlog)) as client:
            listed = await client.list_tools()
            conv = Conversation(tools={t.name: t for t in listed.tools})

            async def call(label: str, tool: str, args: dict[str, Any]) -> CallToolResult:
                conv.calls[label] = result = await client.call_tool(tool, args)
                return result

            asked = await call("ask", "ask", {"question": QUESTION})
            for c in (asked.structured_content or {}).get("citations", []):
                await call(f"cited:{c['title']}", "article", {"title": c["title"]})
            await call("search", "search", {"question": QUESTION, "top_k": 6})
            await call("search_bm25", "search", {"question": QUESTION, "retrieval": "bm25"})
            await call("article", "article", {"title": ARTICLE})
            await call(
                "categories_of",
                "cypher",
                {"pack": "graph_structure", "query": "categories_of", "params": {"title": ARTICLE}},
            )
            # errors, each answered as a tool error; the session goes on
            await call("no_article", "article", {"title": "Atlantis Computing Engine"})
            await call(
                "bad_param",
                "cypher",
                {
                    "pack": "graph_structure",
                    "query": "article_neighbours",
                    "params": {"title": ARTICLE, "limit": "many"},
                },
            )
            await call("no_pack", "cypher", {"pack": "no_such_pack", "query": "categories_of"})
            await call("no_query", "cypher", {"pack": "graph_structure", "query": "no_such_query"})
            await call("bad_top_k", "search", {"question": QUESTION, "top_k": "lots"})
            await call("bad_retrieval", "ask", {"question": QUESTION, "retrieval": "psychic"})
            await call("after_errors", "search", {"question": "Where is Bletchley Park?"})
    return conv


@pytest.fixture(scope="module")
def conversation(
    sample_graph: tuple[Path, LoadReport], tmp_path_factory: pytest.TempPathFactory
) -> Conversation:
    db, _ = sample_graph
    log_path = tmp_path_factory.mktemp("mcp") / "stderr.txt"
    with log_path.open("w") as errlog:
        conv = anyio.run(_converse, db, errlog, backend="asyncio")
    conv.stderr = log_path.read_text()
    return conv


def test_tools_are_listed_with_their_input_schemas(conversation: Conversation) -> None:
    tools = conversation.tools
    assert set(tools) == {"ask", "search", "article", "cypher"}
    for tool in tools.values():
        assert tool.description and tool.input_schema["type"] == "object"
        assert tool.annotations is not None and tool.annotations.read_only_hint
        for name, prop in tool.input_schema["properties"].items():
            assert prop.get("description"), f"{tool.name}.{name} has no description"

    ask = tools["ask"].input_schema
    assert ask["required"] == ["question"]
    assert ask["properties"]["question"]["type"] == "string"
    assert ask["properties"]["top_k"]["type"] == "integer"
    assert ask["properties"]["top_k"]["default"] == 8
    assert set(ask["properties"]["retrieval"]["enum"]) == {
        "graph",
        "hybrid",
        "dense",
        "bm25",
        "multistep",
    }
    assert ask["properties"]["multistep"]["type"] == "boolean"
    assert tools["search"].input_schema["required"] == ["question"]
    assert tools["article"].input_schema["required"] == ["title"]
    cypher = tools["cypher"]
    assert set(cypher.input_schema["required"]) == {"pack", "query"}
    assert cypher.input_schema["properties"]["params"]["type"] == "object"
    # the description lists the pack queries an agent may run, with their parameters
    assert cypher.description is not None
    assert "graph_structure / categories_of(title: string)" in cypher.description
    assert "shortest_link_path(source: string, target: string" in cypher.description


def test_ask_answers_with_citations_of_graph_articles(conversation: Conversation) -> None:
    out = conversation.ok("ask")
    assert out["answerable"] is True
    assert "built Colossus" in out["answer"]
    assert out["citations"], out
    assert "Tommy Flowers" in {c["title"] for c in out["citations"]}
    for c in out["citations"]:
        assert set(c) == {"n", "title", "heading_path", "section_id"}
        assert c["section_id"].startswith(c["title"] + "::")
        # each cited title is an article of the graph: the article tool opens it
        cited = conversation.ok(f"cited:{c['title']}")
        assert cited["title"] == c["title"] and cited["sections"]
    assert [c["n"] for c in out["citations"]] == list(range(1, len(out["citations"]) + 1))
    assert out["evidence"]
    for ev in out["evidence"]:
        assert {"title", "heading_path", "section_id", "content", "score"} <= set(ev)
        assert 0 < len(ev["content"]) <= 600
    # evidence runs in citation order: [n] is evidence[n - 1]
    for c in out["citations"]:
        assert out["evidence"][c["n"] - 1]["section_id"] == c["section_id"]


def test_search_returns_ranked_evidence(conversation: Conversation) -> None:
    for label in ("search", "search_bm25"):
        out = conversation.ok(label)
        evidence = out["evidence"]
        assert 0 < len(evidence) <= (6 if label == "search" else 8)
        assert [e["rank"] for e in evidence] == list(range(1, len(evidence) + 1))
        assert all(0 < len(e["content"]) <= 600 for e in evidence)
        assert len({e["section_id"] for e in evidence}) == len(evidence)
    bm25 = conversation.ok("search_bm25")
    assert bm25["retrieval"] == "bm25"
    scores = [e["score"] for e in bm25["evidence"]]
    assert scores == sorted(scores, reverse=True), scores
    top = conversation.ok("search")["evidence"][0]
    assert top["title"] == ARTICLE
    assert "Tommy Flowers" in top["content"]


def test_article_has_sections_categories_and_neighbours(conversation: Conversation) -> None:
    out = conversation.ok("article")
    assert out["title"] == ARTICLE and out["redirected_from"] is None
    assert "Early computers" in out["categories"]
    headings = [s["heading_path"] for s in out["sections"]]
    assert "Development" in headings
    assert all(len(s["text"]) <= 1000 for s in out["sections"])
    assert any("Tommy Flowers" in s["text"] for s in out["sections"])
    assert out["neighbours"], out
    neighbour_titles = {n["title"] for n in out["neighbours"]}
    assert {"Tommy Flowers", "Bletchley Park"} <= neighbour_titles


def test_cypher_pack_query_returns_rows(conversation: Conversation) -> None:
    out = conversation.ok("categories_of")
    assert out["count"] == len(out["rows"]) > 0
    categories = {r["category"] for r in out["rows"]}
    assert categories == set(conversation.ok("article")["categories"])


def test_errors_come_back_as_one_line_tool_errors(conversation: Conversation) -> None:
    missing = conversation.error("no_article")
    assert "Atlantis Computing Engine" in missing and "no article" in missing
    bad = conversation.error("bad_param")
    assert "limit" in bad and "integer" in bad
    assert "no_such_pack" in conversation.error("no_pack")
    assert "no_such_query" in conversation.error("no_query")
    for label in ("no_article", "bad_param", "no_pack", "no_query"):
        text = conversation.error(label)
        assert "\n" not in text and "Traceback" not in text, text
    # arguments outside the input schema are refused by the SDK, naming the argument
    assert "top_k" in conversation.error("bad_top_k")
    assert "retrieval" in conversation.error("bad_retrieval")
    # no traceback anywhere: not to the client, not in the server's log
    assert "Traceback" not in conversation.stderr, conversation.stderr[-3000:]


def test_session_still_works_after_errors(conversation: Conversation) -> None:
    out = conversation.ok("after_errors")
    assert out["evidence"]
    assert any(e["title"] == "Bletchley Park" for e in out["evidence"])


async def _ask_once(db: Path, base_url: str, errlog: Any) -> CallToolResult:
    cmd = [*kg_agent_exe(), "mcp", "--db", str(db), "--workers", "1"]
    cmd += ["--llm-api", "openai", "--llm-base-url", base_url, "--model", "llama3.1:8b"]
    drop = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    params = StdioServerParameters(command=cmd[0], args=cmd[1:], env=env)
    with anyio.fail_after(300):
        async with Client(stdio_client(params, errlog=errlog)) as client:
            return await client.call_tool("ask", {"question": QUESTION})


def test_ask_through_an_openai_compatible_server(
    sample_graph: tuple[Path, LoadReport], tmp_path: Path
) -> None:
    from tests.support.fake_anthropic import fake_anthropic_server

    reply = "Short answer: Tommy Flowers [1]\nColossus was built by Tommy Flowers [1]."
    with (
        fake_anthropic_server(api_keys=("no-key",), responder=lambda body: reply) as fake,
        (tmp_path / "stderr.txt").open("w") as errlog,
    ):
        result = anyio.run(_ask_once, sample_graph[0], fake.openai_base_url, errlog)
        requests = fake.message_requests
    assert not result.is_error, _text(result)
    answer = dict(result.structured_content or {})
    assert answer["mode"] == "claude" and answer["short_answer"] == "Tommy Flowers"
    assert [r.path for r in requests] == ["/v1/chat/completions"]
    assert requests[0].body is not None and requests[0].body["model"] == "llama3.1:8b"
