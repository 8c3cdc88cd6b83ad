"""``kg-agent mcp``: the graph as MCP tools, over stdio.

Why: an agent (Claude Desktop, an IDE, any MCP client) can then ask the graph, search
it, read an article and run a named Cypher query as tool calls, without an HTTP
server to start. The tools call the same :class:`~kg_agent.serve.service.GraphService`
as ``kg-agent serve``, through its bounded worker pool, so the same limits (workers,
queue, timeout, question length) apply. Results are compact (long texts clipped) to
spare the agent's context. A library error comes back as a tool error (``isError``)
with its one-line message; stdout carries the protocol only, logs go to stderr.
"""

from __future__ import annotations

import logging
import signal
import threading
from collections.abc import Callable
from typing import Annotated, Any, Literal, TypeVar

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import Field

from kg_agent import __version__
from kg_agent.exceptions import KGAgentError, one_line
from kg_agent.serve.service import GraphService

__all__ = ["build_mcp_server", "run_stdio"]

log = logging.getLogger(__name__)

T = TypeVar("T")

#: Characters of an evidence section's text an ``ask``/``search`` result carries.
EVIDENCE_CHARS = 600
#: Characters of each section's text an ``article`` result carries.
SECTION_CHARS = 1000
#: Evidence sections at most: the pipeline ranks 30 candidates by default.
MAX_TOP_K = 30

Retrieval = Literal["graph", "hybrid", "dense", "bm25", "multistep"]

Question = Annotated[
    str,
    Field(
        min_length=1,
        description="The question, in natural language (one question per call).",
    ),
]
TopK = Annotated[
    int,
    Field(ge=1, le=MAX_TOP_K, description="How many evidence sections to return (1-30)."),
]
RetrievalMode = Annotated[
    Retrieval,
    Field(
        description=(
            "How evidence is found: 'graph' (entities in the question, their linked "
            "articles, then hybrid search; the default), 'hybrid' (embeddings + keywords), "
            "'dense' (embeddings only), 'bm25' (keywords only) or 'multistep' (plans "
            "and runs several searches for a multi-hop question; slower)."
        )
    ),
]

_READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False, idempotent_hint=True)

_INSTRUCTIONS = (
    "A knowledge graph of Wikipedia articles (sections, links, categories). Use 'ask' for "
    "a cited answer, 'search' for ranked evidence sections, 'article' to read one article "
    "with its categories and linked articles, and 'cypher' for structural questions "
    "(categories, link paths, neighbours) through named read-only queries."
)


def _clip(text: Any, limit: int) -> str:
    s = "" if text is None else str(text)
    return s if len(s) <= limit else s[: limit - 1].rstrip() + "…"


def _evidence(ev: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "title": ev.get("title"),
        "heading_path": ev.get("heading_path"),
        "section_id": ev.get("section_id"),
        "content": _clip(ev.get("content"), EVIDENCE_CHARS),
        "score": round(float(ev.get("score") or 0.0), 4),
    }
    if "rank" in ev:
        out["rank"] = ev["rank"]
    return out


def _citation(c: dict[str, Any]) -> dict[str, Any]:
    return {k: c.get(k) for k in ("n", "title", "heading_path", "section_id")}


def _cypher_description(service: GraphService) -> str:
    lines = [
        "Run a named, read-only Cypher query of a pack on the graph; returns its rows. "
        "Parameters go in 'params', typed as listed (string, int, ...); optional ones "
        "may be left out. Available queries (pack / query(params): what it returns):"
    ]
    for q in service.packs_listing():
        params = ", ".join(
            f"{p['name']}: {p['type']}" + ("" if p["required"] else f" = {p['default']!r}")
            for p in q["params"]
        )
        desc = " ".join(str(q["description"] or "").split())
        lines.append(f"- {q['pack']} / {q['query']}({params}): {desc}")
    return "\n".join(lines)


def build_mcp_server(service: GraphService) -> MCPServer:
    """An MCP server whose tools ``ask``, ``search``, ``article`` and ``cypher`` run on
    ``service`` (its pool and limits); not started."""
    server: MCPServer = MCPServer(
        "kg-agent",
        title="kg-agent knowledge graph",
        instructions=_INSTRUCTIONS,
        version=__version__,
        log_level="WARNING",
    )

    async def call(fn: Callable[[], T]) -> T:
        try:
            return await service.run(fn)
        except KGAgentError as exc:
            # anticipated: the client gets the one-line message, the log no traceback
            raise ToolError(one_line(exc, 500)) from None

    @server.tool(
        title="Answer a question from the graph",
        description=(
            "Answer a question from the knowledge graph, with numbered citations [n] of "
            "the sections the answer rests on. Returns the answer, a short answer (a few "
            "words, or null), whether the graph supports an answer at all ('answerable'), "
            "the citations and the evidence sections (text clipped)."
        ),
        annotations=_READ_ONLY,
    )
    async def ask(
        question: Question,
        top_k: TopK = 8,
        retrieval: RetrievalMode = "graph",
        multistep: Annotated[
            bool,
            Field(
                description=(
                    "Use the multi-step engine: decomposes a multi-hop question "
                    '("the X of the Y of Z") into steps; slower.'
                )
            ),
        ] = False,
    ) -> dict[str, Any]:
        result = await call(
            lambda: service.ask(question, top_k=top_k, retrieval=retrieval, multistep=multistep)
        )
        return {
            "answer": result.get("answer"),
            "short_answer": result.get("short_answer"),
            "confidence": result.get("confidence"),
            "answerable": result.get("answerable"),
            "mode": result.get("mode"),
            "citations": [_citation(c) for c in result.get("citations") or []],
            "evidence": [_evidence(e) for e in result.get("evidence") or []],
            "warnings": result.get("warnings") or [],
        }

    @server.tool(
        title="Search the graph for evidence",
        description=(
            "Ranked evidence sections for a question, without an answer: each with its "
            "article title, heading path, section id, text (clipped), score and rank "
            "(1 is best)."
        ),
        annotations=_READ_ONLY,
    )
    async def search(
        question: Question,
        top_k: TopK = 8,
        retrieval: RetrievalMode = "graph",
    ) -> dict[str, Any]:
        result = await call(lambda: service.search(question, top_k=top_k, retrieval=retrieval))
        return {
            "question": result.get("question"),
            "retrieval": result.get("retrieval"),
            "evidence": [_evidence(e) for e in result.get("evidence") or []],
            "warnings": result.get("warnings") or [],
        }

    @server.tool(
        title="Read an article",
        description=(
            "One article of the graph by its exact title (a redirect alias is followed): "
            "its categories, its sections (heading path and text, clipped) and the "
            "articles most linked with it."
        ),
        annotations=_READ_ONLY,
    )
    async def article(
        title: Annotated[
            str,
            Field(min_length=1, description="The article's title, e.g. 'Alan Turing'."),
        ],
    ) -> dict[str, Any]:
        found = await call(lambda: service.article(title))
        return {
            "title": found.get("title"),
            "redirected_from": found.get("redirected_from"),
            "categories": found.get("categories") or [],
            "sections": [
                {
                    "heading_path": s.get("heading_path"),
                    "text": _clip(s.get("text"), SECTION_CHARS),
                }
                for s in found.get("sections") or []
            ],
            "neighbours": found.get("neighbours") or [],
        }

    @server.tool(
        title="Run a named Cypher query",
        description=_cypher_description(service),
        annotations=_READ_ONLY,
    )
    async def cypher(
        pack: Annotated[str, Field(description="The pack's name, e.g. 'graph_structure'.")],
        query: Annotated[str, Field(description="The query's name in the pack.")],
        params: Annotated[
            dict[str, Any],
            Field(description='The query\'s parameters by name, e.g. {"title": "IBM"}.'),
        ] = {},  # noqa: B006 (never mutated; pydantic copies the default)
    ) -> dict[str, Any]:
        return await call(lambda: service.cypher(pack, query, dict(params)))

    return server


def run_stdio(service: GraphService) -> None:
    """Serve ``service`` over MCP on stdin/stdout until stdin closes (how a client
    stops it), SIGTERM or Ctrl-C."""
    server = build_mcp_server(service)
    if threading.current_thread() is threading.main_thread():
        # Ctrl-C ends the process at once, as SIGTERM does: a KeyboardInterrupt would
        # wait for the SDK's stdin reader thread, i.e. until stdin closes. Nothing is
        # lost: the graph is open read-only.
        signal.signal(signal.SIGINT, signal.SIG_DFL)
    log.info("kg-agent MCP server on stdio for %s", service.db_path)
    anyio.run(server.run_stdio_async, backend="asyncio")
