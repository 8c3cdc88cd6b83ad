"""The graph as a service: what ``serve`` (HTTP) and ``mcp`` (agents) answer with.

One read-only :class:`~kg_agent.agent.KnowledgeGraphAgent` is opened once and shared:
the store gives each worker thread its own Kùzu connection, the model and the indexes
are loaded once. Requests run on a bounded pool of threads (Kùzu, tantivy and torch
release the GIL while they work, so two cores serve about twice one); when the pool
and its queue are full a request is refused at once (``busy``) rather than queued
without bound, and one that runs past the time limit is answered with ``timeout``
while its thread finishes in the background (still counted, so the pool stays bounded).

The graph is opened read-only, which in Kùzu takes a shared lock: a ``load``,
``update``, ``delete`` or ``compact`` on the same graph is **refused** ("in use")
while the server runs, so no read ever sees a half-written graph.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TypeVar

from kg_agent.agent import KnowledgeGraphAgent
from kg_agent.config import AgentConfig
from kg_agent.cypher_packs import CypherPack, CypherPackError, default_pack_dir, load_packs
from kg_agent.exceptions import InvalidArgumentError, KGAgentError
from kg_agent.language.parser import english_parser
from kg_agent.language.question import MAX_QUESTION_LENGTH, check_question
from kg_agent.pipeline import QueryPipeline
from kg_agent.result import QueryEventHandler
from kg_agent.retrieval.base import TIER_NAMES, evidence_tier
from kg_agent.serve.paths import evidence_path
from kg_agent.store.write_state import InterruptedWriteError, WriteStatus, read_intent

__all__ = [
    "GraphService",
    "GraphUnavailable",
    "NotFound",
    "ServeOptions",
    "ServiceBusy",
    "ServiceTimeout",
]

log = logging.getLogger(__name__)

T = TypeVar("T")


class ServiceBusy(KGAgentError):
    """Every worker is busy and the queue is full: retry later (HTTP 503)."""


class ServiceTimeout(KGAgentError):
    """The request ran past the time limit (HTTP 504)."""


class NotFound(KGAgentError):
    """What the request names is not in the graph (HTTP 404)."""


class GraphUnavailable(KGAgentError):
    """The graph's last write was interrupted after it changed the graph, which is not
    answered from until that write finishes (HTTP 503, the message names the command)."""


#: Seconds between two looks at an unavailable graph (a look reads one small file)
_RECHECK_S = 1.0


@dataclass(frozen=True)
class ServeOptions:
    """How the service runs; validated here, so the CLI and the Python API agree.

    ``processes`` server processes share the port, each with its own read-only open
    of the graph (Python's GIL lets one process's threads use about 1.2 cores; see
    docs/BENCHMARKS.md); in each, ``workers`` threads answer at once; ``queue`` more
    may wait; ``timeout_s`` bounds a request; ``max_body_bytes`` and
    ``max_question_chars`` bound what a client sends; ``cors_origins`` lists the
    origins a browser page may call from (none: CORS off).
    """

    host: str = "127.0.0.1"
    port: int = 8080
    processes: int = 1
    workers: int = 4
    queue: int = 64
    timeout_s: float = 60.0
    max_body_bytes: int = 64 * 1024
    max_question_chars: int = 1000
    cors_origins: tuple[str, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        if not 0 <= self.port <= 65535:
            raise InvalidArgumentError(f"port must be 0..65535, not {self.port}")
        if not 1 <= self.processes <= 64:
            raise InvalidArgumentError(f"processes must be 1..64, not {self.processes}")
        if not 1 <= self.workers <= 64:
            raise InvalidArgumentError(f"workers must be 1..64, not {self.workers}")
        if not 0 <= self.queue <= 10_000:
            raise InvalidArgumentError(f"queue must be 0..10000, not {self.queue}")
        if not 0 < self.timeout_s <= 3600:
            raise InvalidArgumentError(f"timeout must be 0..3600 s, not {self.timeout_s}")
        if not 1024 <= self.max_body_bytes <= 16 * 1024 * 1024:
            raise InvalidArgumentError(
                f"max body must be 1 KiB..16 MiB, not {self.max_body_bytes} bytes"
            )
        if not 1 <= self.max_question_chars <= MAX_QUESTION_LENGTH:
            raise InvalidArgumentError(
                f"max question length must be 1..{MAX_QUESTION_LENGTH}, "
                f"not {self.max_question_chars}"
            )


def _one_torch_thread(agent: KnowledgeGraphAgent) -> None:
    """Workers run queries side by side, so each query embeds on one torch thread.

    Measured on 2 cores (2Wiki graph, in process): one thread per query gave 14.5 q/s
    alone and 19.7 with 2 worker threads, against 13.0 and 17.7 with torch's default
    of a thread per core, whose parallel regions then wait for each other. It also stops
    the per-query switch of the thread count (a process-wide setting) from racing.
    """
    embedder = agent.embedder
    if getattr(embedder, "threads", None) is not None or not str(
        getattr(embedder, "device", "cpu")
    ).startswith("cpu"):
        return
    import torch

    torch.set_num_threads(1)


class GraphService:
    """The read-only graph, its agent and a bounded worker pool.

    ``agent`` is built by the caller (so the CLI's and the tests' options apply); the
    service owns it from here and closes it in :meth:`close`.
    """

    def __init__(
        self,
        agent: KnowledgeGraphAgent | None,
        options: ServeOptions | None = None,
        *,
        cypher_pack_path: str | None = None,
        reopen: Callable[[], KnowledgeGraphAgent] | None = None,
        unavailable: str = "",
        db_path: str = "",
    ) -> None:
        # None while the graph is unavailable: ``reopen`` opens it once its write is
        # finished (the service holds no open of it meanwhile, so that write can run)
        self._agent = agent
        self._reopen = reopen
        self.unavailable = unavailable
        self.db_path = db_path or (agent.db_path if agent is not None else "")
        self._agent_lock = threading.Lock()
        self._looked_at = 0.0
        self.options = options or ServeOptions()
        self.packs: dict[str, CypherPack] = load_packs(cypher_pack_path or default_pack_dir())
        self._pool = ThreadPoolExecutor(self.options.workers, thread_name_prefix="kg-serve")
        self._admitted = 0
        self._admit_lock = threading.Lock()
        self._stats: dict[str, Any] | None = None
        self.started = time.time()
        self.counters = {"requests": 0, "errors": 0, "busy": 0, "timeouts": 0}

    @classmethod
    def open(
        cls,
        db_path: str,
        options: ServeOptions | None = None,
        *,
        config: AgentConfig | None = None,
        anthropic_api_key: str | None = None,
        cypher_pack_path: str | None = None,
        warm: bool = True,
    ) -> GraphService:
        """Open the graph read-only; ``warm`` answers one question first, so the model,
        the text index, the entity linker, the Claude client and spaCy are loaded before
        the first request. A graph an interrupted write left unfinished gives a service that
        answers 503 with the line naming that write, until it is finished."""

        def reopen() -> KnowledgeGraphAgent:
            return KnowledgeGraphAgent(
                db_path,
                anthropic_api_key=anthropic_api_key,
                config=config or AgentConfig(cypher_pack_path=cypher_pack_path),
            )

        try:
            agent = reopen()
        except InterruptedWriteError as exc:
            log.warning("%s; answering 503 until it is whole", exc)
            return cls(
                None,
                options,
                cypher_pack_path=cypher_pack_path,
                reopen=reopen,
                unavailable=str(exc),
                db_path=db_path,
            )
        try:
            service = cls(agent, options, cypher_pack_path=cypher_pack_path)
            if service.options.workers > 1:
                _one_torch_thread(agent)
            if warm:
                service.search("warm up", top_k=1)
                # the search never calls the model: its client is built here, not in
                # the first request's time limit
                prepare = getattr(agent.llm, "prepare", None)
                if callable(prepare):
                    prepare()
                spans = agent.components.spans
                if spans.weights is not None and spans.models:
                    english_parser(spans.models)  # spaCy's load (~1.5 s), not a request's
        except BaseException:
            agent.close()
            raise
        return service

    @property
    def agent(self) -> KnowledgeGraphAgent:
        """The open graph's agent; :class:`GraphUnavailable` while an interrupted write
        leaves the graph unfinished (looked at again at most once a second)."""
        agent = self._agent
        if agent is not None:
            return agent
        with self._agent_lock:
            if self._agent is None:
                self._look_again()
            if self._agent is None:
                raise GraphUnavailable(self.unavailable)
            return self._agent

    def _look_again(self) -> None:
        now = time.monotonic()
        if self._reopen is None or now - self._looked_at < _RECHECK_S:
            return
        self._looked_at = now
        intent = read_intent(self.db_path)
        if intent is not None:  # its write is running, or still to be run again
            if intent.alive():
                self.unavailable = WriteStatus(self.db_path, intent, True, True).message()
            return
        try:
            self._agent = self._reopen()
        except InterruptedWriteError as exc:
            self.unavailable = str(exc)
            return
        self.unavailable = ""
        self._stats = None
        log.warning("%s is whole again: answering", self.db_path)

    def describe_llm(self) -> str | None:
        """How answers are written (None: not known while the graph is unavailable)."""
        agent = self._agent
        if agent is None:
            return None
        llm = agent.llm
        if llm is None:
            return "offline"
        api, server = getattr(llm, "api", None), getattr(llm, "server", None)
        return f"the {api} API at {server}" if api and server else "a model client"

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
        if self._agent is not None:
            self._agent.close()

    # ------------------------------------------------------------------ running
    async def run(self, fn: Callable[[], T]) -> T:
        """``fn()`` on the worker pool, within the limits: :class:`ServiceBusy` when full,
        :class:`ServiceTimeout` past ``timeout_s``."""
        limit = self.options.workers + self.options.queue
        with self._admit_lock:
            self.counters["requests"] += 1
            if self._admitted >= limit:
                self.counters["busy"] += 1
                raise ServiceBusy(
                    f"the server is busy ({self._admitted} requests running or queued): retry"
                )
            self._admitted += 1
        try:
            future = self._pool.submit(fn)
        except RuntimeError:  # the pool is shut down: the server is stopping
            self._release(None)
            raise ServiceBusy("the server is stopping") from None
        future.add_done_callback(self._release)
        try:
            return await asyncio.wait_for(
                asyncio.wrap_future(future), timeout=self.options.timeout_s
            )
        except asyncio.TimeoutError:  # TimeoutError from 3.11; a distinct class on 3.10
            with self._admit_lock:
                self.counters["timeouts"] += 1
            raise ServiceTimeout(
                f"the request took longer than {self.options.timeout_s:g} s"
            ) from None

    def _release(self, _: object) -> None:
        with self._admit_lock:
            self._admitted -= 1

    @property
    def in_flight(self) -> int:
        return self._admitted

    def check_capacity(self) -> None:
        """:class:`ServiceBusy` now if a request would be refused: a streamed answer
        checks before its 200 headers go out, so a busy server still answers 503."""
        if self._admitted >= self.options.workers + self.options.queue:
            with self._admit_lock:
                self.counters["busy"] += 1
            raise ServiceBusy(
                f"the server is busy ({self._admitted} requests running or queued): retry"
            )

    # ------------------------------------------------------------------ operations
    def pipeline(self, **changes: Any) -> QueryPipeline:
        """The agent's pipeline with per-request ``changes`` to its configuration
        (``multistep``/``route`` as for ``query()``; a ``top_k`` over the configured
        candidates raises the candidates with it); built once per configuration."""
        return self.agent.components.pipeline(self.agent.configured(**changes))

    def check(self, question: str) -> str:
        q = check_question(question)
        limit = self.options.max_question_chars
        if len(q) > limit:
            raise InvalidArgumentError(
                f"the question is {len(q):,} characters long; this server's limit is {limit:,}"
            )
        return q

    def ask(
        self,
        question: str,
        *,
        multistep: bool = False,
        route: str | None = None,
        on_event: QueryEventHandler | None = None,
        **changes: Any,
    ) -> dict[str, Any]:
        """``query()`` as JSON; ``changes`` are :class:`AgentConfig` fields for this one."""
        q = self.check(question)
        pipeline = self.pipeline(multistep=multistep or None, route=route, **changes)
        out = pipeline.run(q, on_event).to_dict()
        out["evidence_path"] = evidence_path(self.agent.store, out)
        return out

    def search(
        self,
        question: str,
        *,
        top_k: int = 8,
        retrieval: str | None = None,
        multistep: bool = False,
    ) -> dict[str, Any]:
        """Ranked evidence without an answer: retrieval and the ranking stages."""
        q = self.check(question)
        changes: dict[str, Any] = {"top_k": top_k}
        if retrieval is not None:
            changes["retrieval"] = retrieval
        pipeline = self.pipeline(multistep=multistep or None, **changes)
        t0 = time.perf_counter()
        ranked = pipeline.search(q)
        return {
            "question": q,
            "retrieval": pipeline.config.retrieval,
            "evidence": [
                dict(ev.to_dict(), rank=i, tier=TIER_NAMES[evidence_tier(ev)])
                for i, ev in enumerate(ranked.evidence, 1)
            ],
            "trace": ranked.trace,
            "warnings": ranked.warnings,
            "timings": {
                **{k: round(v, 4) for k, v in ranked.timings.items()},
                "total": round(time.perf_counter() - t0, 4),
            },
        }

    def article(self, title: str, *, neighbours: int = 25) -> dict[str, Any]:
        """An article: its sections, categories and strongest link neighbours; a
        redirect alias is followed (``redirected_from``)."""
        store = self.agent.store
        name = " ".join(str(title).split())
        if not name:
            raise InvalidArgumentError("the title is empty")
        resolved = store.resolve_title(name)
        if resolved is None:
            raise NotFound(f"no article titled {name!r} in the graph")
        row = store.article(resolved) or {"title": resolved}
        pack = self.packs.get("graph_structure")
        linked = (
            self._run_pack(pack, "article_neighbours", {"title": resolved, "limit": neighbours})
            if pack is not None and "article_neighbours" in pack
            else []
        )
        return {
            **row,
            "redirected_from": name if resolved != name else None,
            "sections": store.article_sections(resolved),
            "categories": store.categories_of(resolved),
            "neighbours": linked,
        }

    def cypher(self, pack_name: str, query: str, params: dict[str, Any]) -> dict[str, Any]:
        """A named read-only query of a Cypher pack, its parameters typed by the pack."""
        pack = self.packs.get(pack_name)
        if pack is None:
            raise NotFound(f"no Cypher pack named {pack_name!r} (packs: {', '.join(self.packs)})")
        if query not in pack:
            raise NotFound(f"pack {pack_name!r} has no query named {query!r}")
        rows = self._run_pack(pack, query, params)
        return {"pack": pack_name, "query": query, "rows": rows, "count": len(rows)}

    def packs_listing(self) -> list[dict[str, Any]]:
        return [
            {
                "pack": name,
                "query": q.name,
                "description": q.description,
                "params": [
                    {"name": p.name, "type": p.type, "required": p.required, "default": p.default}
                    for p in q.params
                ],
            }
            for name, pack in self.packs.items()
            for q in pack
        ]

    def _run_pack(
        self, pack: CypherPack, name: str, params: dict[str, Any]
    ) -> list[dict[str, Any]]:
        query = pack.get(name)
        try:
            bound = query.bind(params)
        except CypherPackError as exc:
            raise InvalidArgumentError(str(exc)) from None
        return self.agent.store.query(query.cypher, bound)

    def stats(self) -> dict[str, Any]:
        """The graph's counts (computed once: no writer can change a graph being served)
        and the server's own."""
        if self._stats is None:
            store = self.agent.store
            data = store.stats(top=10).to_dict()
            data["load_history"] = store.loads()
            data["path"] = store.path
            self._stats = data
        with self._admit_lock:
            server: dict[str, Any] = dict(self.counters, in_flight=self._admitted)
        server.update(
            workers=self.options.workers,
            queue=self.options.queue,
            uptime_s=round(time.time() - self.started, 1),
            offline=self.agent.llm is None,
        )
        return {"graph": self._stats, "server": server}
