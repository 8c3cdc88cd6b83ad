"""``kg-agent serve`` end to end: the real executable in a subprocess, a real HTTP client
(``httpx2``, the one the ``anthropic`` SDK uses), the real graph of the bundled sample.

Answers are checked against the library's own (``KnowledgeGraphAgent`` in this
process, reading the same graph: read-only opens share it); every error a client can
cause is checked for its status and its one-line JSON message; Claude's streamed
answer goes through the loopback Messages-API server.
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx2
import pytest

from kg_agent.agent import KnowledgeGraphAgent
from kg_agent.ingest.pipeline import LoadReport
from kg_agent.store import GraphStore
from tests.support.cli import assert_no_process_holds, kg_agent_exe
from tests.support.fake_anthropic import DEFAULT_KEY, delay, fake_anthropic_server, text
from tests.support.server import RunningServer, running_server

QUESTIONS = [
    "Who built Colossus?",
    "Where did Tommy Flowers work?",
    "What was the Colossus computer used for?",
    "When was Bletchley Park used for codebreaking?",
]


@pytest.fixture(scope="module")
def server(sample_graph: tuple[Path, LoadReport]) -> Iterator[RunningServer]:
    db, _ = sample_graph
    with running_server(db, "--offline", "--workers", "2", "--max-question", "300") as srv:
        yield srv


@pytest.fixture(scope="module")
def client(server: RunningServer) -> Iterator[httpx2.Client]:
    with httpx2.Client(base_url=server.url, timeout=60) as c:
        yield c


@pytest.fixture(scope="module")
def local_agent(sample_graph: tuple[Path, LoadReport]) -> Iterator[KnowledgeGraphAgent]:
    with KnowledgeGraphAgent(str(sample_graph[0]), offline=True) as agent:
        yield agent


def _error(response: httpx2.Response, status: int) -> str:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert set(body) == {"error"}, body
    message = body["error"]
    assert "Traceback" not in message and "\n" not in message
    return str(message)


# ---------------------------------------------------------------------------- answers


def test_ask_answers_as_the_library_does(
    client: httpx2.Client, local_agent: KnowledgeGraphAgent
) -> None:
    for question in QUESTIONS[:2]:
        got = client.post("/v1/ask", json={"question": question})
        assert got.status_code == 200, got.text
        body = got.json()
        want = local_agent.query(question)
        assert body["answer"] == want.answer
        assert body["short_answer"] == want.short_answer
        assert [c["section_id"] for c in body["citations"]] == [
            c.section_id for c in want.citations
        ]
        assert [e["section_id"] for e in body["evidence"]] == [e.section_id for e in want.evidence]
        assert body["path"] == "offline"
        assert body["mode"] == "extractive"


def test_ask_options_reach_the_pipeline(client: httpx2.Client) -> None:
    q = QUESTIONS[0]
    narrow = client.post("/v1/ask", json={"question": q, "top_k": 2}).json()
    assert 1 <= len(narrow["evidence"]) <= 2
    bm25 = client.post("/v1/ask", json={"question": q, "retrieval": "bm25"}).json()
    assert bm25["trace"][0]["retrieval"] == "bm25"
    short = client.post("/v1/ask", json={"question": q, "answer_words": 10}).json()
    long = client.post("/v1/ask", json={"question": q, "answer_words": 200}).json()
    assert len(short["answer"].split()) <= len(long["answer"].split())
    flat = client.post("/v1/ask", json={"question": q, "multidoc": False, "fewshot": False})
    assert flat.status_code == 200, flat.text
    no_rerank = client.post("/v1/ask", json={"question": q, "reranker": False}).json()
    assert not any(t.get("stage") == "rerank" for t in no_rerank["trace"])


def test_the_evidence_path_uses_the_graphs_links(
    client: httpx2.Client, sample_graph: tuple[Path, LoadReport]
) -> None:
    body = client.post("/v1/ask", json={"question": QUESTIONS[1]}).json()
    graph = body["evidence_path"]
    ids = {n["id"] for n in graph["nodes"]}
    assert "q" in ids
    for edge in graph["edges"]:
        assert edge["source"] in ids and edge["target"] in ids
    sections = [n for n in graph["nodes"] if n["kind"] == "section"]
    assert sorted(n["n"] for n in sections) == [c["n"] for c in body["citations"]]
    links = [e for e in graph["edges"] if e["kind"] == "link"]
    with GraphStore.open(sample_graph[0], read_only=True) as store:
        for edge in links:
            a, b = edge["source"][2:], edge["target"][2:]
            found = store.query(
                "MATCH (x:Article {title: $a})-[:LINKS_TO]-(y:Article {title: $b}) "
                "RETURN count(*) AS n",
                {"a": a, "b": b},
            )
            assert found[0]["n"] > 0, (a, b)


def test_search_ranks_evidence_in_any_mode(client: httpx2.Client) -> None:
    for mode in ("graph", "hybrid", "dense", "bm25", "multistep"):
        got = client.post(
            "/v1/search", json={"question": QUESTIONS[2], "retrieval": mode, "top_k": 4}
        )
        assert got.status_code == 200, got.text
        body = got.json()
        assert body["retrieval"] == mode
        assert 1 <= len(body["evidence"]) <= 4
        assert [e["rank"] for e in body["evidence"]] == list(range(1, len(body["evidence"]) + 1))
        assert "answer" not in body
        tiers = [e["tier"] for e in body["evidence"]]
        order = ["named", "linked", "bridge", "search"]
        assert tiers == sorted(tiers, key=order.index), (mode, tiers)  # tiers never interleave
        if mode in ("hybrid", "dense", "bm25"):
            assert set(tiers) == {"search"}, mode


def test_article_sections_categories_and_redirects(
    client: httpx2.Client, sample_graph: tuple[Path, LoadReport]
) -> None:
    with GraphStore.open(sample_graph[0], read_only=True) as store:
        sections = store.article_sections("Colossus computer")
        categories = store.categories_of("Colossus computer")
        alias = store.query(
            "MATCH (r:Redirect)-[:REDIRECTS_TO]->(a:Article) RETURN r.title AS r, a.title AS a "
            "ORDER BY r.title LIMIT 1"
        )[0]
    body = client.get("/v1/articles/Colossus computer").json()
    assert body["title"] == "Colossus computer"
    assert body["redirected_from"] is None
    assert [s["id"] for s in body["sections"]] == [s["id"] for s in sections]
    assert body["categories"] == categories
    assert body["neighbours"], "the article links to others in the sample"
    redirected = client.get(f"/v1/articles/{alias['r']}").json()
    assert redirected["title"] == alias["a"]
    assert redirected["redirected_from"] == alias["r"]
    assert "Nowhere Article" in _error(client.get("/v1/articles/Nowhere Article"), 404)


def test_cypher_packs_typed_and_refused(client: httpx2.Client) -> None:
    listing = client.get("/v1/cypher").json()["queries"]
    assert {"pack": "graph_structure", "query": "categories_of"}.items() <= next(
        q for q in listing if q["query"] == "categories_of"
    ).items()
    got = client.post(
        "/v1/cypher/graph_structure/categories_of", json={"params": {"title": "Colossus computer"}}
    )
    assert got.status_code == 200, got.text
    cli = subprocess.run(
        [
            *kg_agent_exe(),
            "cypher",
            "categories_of",
            "--db",
            str(client.get("/v1/stats").json()["graph"]["path"]),
            "-p",
            "title=Colossus computer",
        ],
        capture_output=True,
        text=True,
    )
    # the CLI reads the graph beside the server: read-only opens share it
    assert cli.returncode == 0, cli.stderr
    assert got.json()["rows"] == [json.loads(line) for line in cli.stdout.splitlines()]
    assert got.json()["count"] == len(got.json()["rows"]) > 0
    assert "nope" in _error(client.post("/v1/cypher/nope/categories_of", json={}), 404)
    assert "nope" in _error(client.post("/v1/cypher/graph_structure/nope", json={}), 404)
    bad_type = client.post(
        "/v1/cypher/graph_structure/top_pagerank", json={"params": {"limit": "ten"}}
    )
    assert "limit" in _error(bad_type, 422)
    unknown = client.post("/v1/cypher/graph_structure/top_pagerank", json={"params": {"limits": 3}})
    assert "limits" in _error(unknown, 422)
    missing = client.post("/v1/cypher/graph_structure/categories_of", json={"params": {}})
    assert "title" in _error(missing, 422)


# ---------------------------------------------------------------------------- errors


def test_bad_requests_get_their_status_and_message(client: httpx2.Client) -> None:
    post = client.post
    headers = {"content-type": "application/json"}
    assert "not valid JSON" in _error(
        post("/v1/ask", content=b'{"question": ', headers=headers), 400
    )
    assert "question" in _error(post("/v1/ask", json={}), 422)
    assert "top_k" in _error(post("/v1/ask", json={"question": "x", "top_k": "5"}), 422)
    assert "top_k" in _error(post("/v1/ask", json={"question": "x", "top_k": 0}), 422)
    assert "retrieval" in _error(post("/v1/ask", json={"question": "x", "retrieval": "magic"}), 422)
    assert "colour" in _error(post("/v1/ask", json={"question": "x", "colour": "red"}), 422)
    assert "empty" in _error(post("/v1/ask", json={"question": "   "}), 422)
    assert "300" in _error(post("/v1/ask", json={"question": "why " * 100}), 422)
    huge = json.dumps({"question": "a" * 200_000}).encode()
    assert "65,536" in _error(post("/v1/ask", content=huge, headers=headers), 413)

    def chunks() -> Iterator[bytes]:  # no Content-Length: the body is counted as it comes
        for i in range(0, len(huge), 8192):
            yield huge[i : i + 8192]

    assert "65,536" in _error(post("/v1/ask", content=chunks(), headers=headers), 413)
    assert _error(client.get("/v1/nothing"), 404) == "not found"
    # DNS rebinding: a page's own name pointed at 127.0.0.1 is refused
    rebound = client.get("/healthz", headers={"host": "evil.example:8080"})
    assert "evil.example" in _error(rebound, 400)
    assert client.get("/healthz", headers={"host": "localhost"}).status_code == 200
    assert _error(client.get("/v1/ask"), 405)
    # the server is still healthy after all of that
    assert client.get("/healthz").json()["status"] == "ok"


def test_openapi_describes_the_api(client: httpx2.Client) -> None:
    spec = client.get("/openapi.json").json()
    for path in (
        "/v1/ask",
        "/v1/search",
        "/v1/articles/{title}",
        "/v1/cypher/{pack}/{query}",
        "/v1/stats",
        "/healthz",
    ):
        assert path in spec["paths"], path
    ask = spec["components"]["schemas"]["AskRequest"]
    assert ask["required"] == ["question"]
    assert ask["properties"]["retrieval"]["enum"] == [
        "graph",
        "hybrid",
        "dense",
        "bm25",
        "multistep",
    ]
    assert client.get("/docs").status_code == 404  # no CDN-loaded viewer


def test_stats_match_the_graph(
    client: httpx2.Client, sample_graph: tuple[Path, LoadReport]
) -> None:
    body = client.get("/v1/stats").json()
    with GraphStore.open(sample_graph[0], read_only=True) as store:
        assert body["graph"]["articles"] == store.count_articles()
        assert body["graph"]["sections"] == store.count_sections()
    assert body["server"]["workers"] == 2
    assert body["server"]["offline"] is True
    assert body["server"]["requests"] >= 1


def test_concurrent_answers_equal_sequential_ones(client: httpx2.Client) -> None:
    def ask(q: str) -> tuple[str, list[str]]:
        body = client.post("/v1/ask", json={"question": q}).json()
        return body["answer"], [e["section_id"] for e in body["evidence"]]

    sequential = [ask(q) for q in QUESTIONS]
    with ThreadPoolExecutor(8) as pool:
        concurrent = list(pool.map(ask, QUESTIONS * 4))
    assert concurrent == sequential * 4


# ---------------------------------------------------------------------------- Claude


@pytest.fixture(scope="module")
def claude_server(sample_graph: tuple[Path, LoadReport]) -> Iterator[tuple[RunningServer, Any]]:
    with fake_anthropic_server() as fake:
        env = {"ANTHROPIC_API_KEY": DEFAULT_KEY, "ANTHROPIC_BASE_URL": fake.base_url}
        args = ("--workers", "1", "--queue", "0", "--timeout", "4")
        with running_server(sample_graph[0], *args, env=env) as srv:
            yield srv, fake


def _events(response: httpx2.Response) -> list[tuple[str, Any]]:
    events: list[tuple[str, Any]] = []
    kind = None
    for line in response.iter_lines():
        if line.startswith("event: "):
            kind = line[7:]
        elif line.startswith("data: "):
            events.append((str(kind), json.loads(line[6:])))
    return events


def test_claude_answer_streams_after_stages_and_evidence(
    claude_server: tuple[RunningServer, Any],
) -> None:
    srv, fake = claude_server
    reply = (
        "Short answer: Tommy Flowers [1]\n\nColossus was designed and built by Tommy Flowers "
        "at the Post Office Research Station [1], for the codebreakers [2]."
    )
    # a first question loads what the Claude path alone uses (its few-shot examples)
    fake.enqueue(text("Short answer: Tommy Flowers [1]\n\nFlowers [1]."))
    warm = httpx2.post(f"{srv.url}/v1/ask", json={"question": QUESTIONS[1]}, timeout=60)
    assert warm.status_code == 200, warm.text
    assert warm.json()["mode"] == "claude"
    fake.enqueue(text(reply))
    with (
        httpx2.Client(base_url=srv.url, timeout=60) as c,
        c.stream("POST", "/v1/ask", json={"question": QUESTIONS[0], "stream": True}) as r,
    ):
        assert r.status_code == 200
        assert r.headers["content-type"].startswith("text/event-stream")
        events = _events(r)
    kinds = [k for k, _ in events]
    assert kinds[:2] == ["retrieved", "evidence"]
    assert kinds[-1] == "result", events[-1]
    pieces = [d["text"] for k, d in events if k == "text"]
    assert len(pieces) > 3, "the answer arrived in pieces"
    assert "".join(pieces) == reply
    result = events[-1][1]
    assert result["path"] == "claude" and result["mode"] == "claude"
    assert result["short_answer"] == "Tommy Flowers"
    assert "Tommy Flowers" in result["answer"]
    assert fake.last.body["stream"] is True
    numbered = {d["n"]: d["section_id"] for d in events[1][1]["items"]}
    assert numbered, "the streamed [n] point into the evidence event"


def test_an_openai_compatible_server_streams_through_serve(
    sample_graph: tuple[Path, LoadReport], tmp_path: Path
) -> None:
    """``serve --llm-api openai`` at a local server (no key): the answer streams as the
    chat-completions chunks arrive; a repeat comes from --llm-cache without a request."""
    reply = "Short answer: Tommy Flowers [1]\n\nColossus was built by Tommy Flowers [1]."
    env = {k: "" for k in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY")}
    with fake_anthropic_server(api_keys=("no-key",), responder=lambda body: reply) as fake:
        args = ("--workers", "1", "--llm-api", "openai", "--llm-base-url", fake.openai_base_url)
        args += ("--model", "qwen2.5:7b", "--llm-cache", str(tmp_path / "llm.sqlite"))
        with running_server(sample_graph[0], *args, env=env) as srv:
            streamed = []
            for _ in range(2):
                with (
                    httpx2.Client(base_url=srv.url, timeout=60) as c,
                    c.stream(
                        "POST", "/v1/ask", json={"question": QUESTIONS[0], "stream": True}
                    ) as r,
                ):
                    assert r.status_code == 200
                    streamed.append(_events(r))
            announced = srv.stderr
        requests = fake.message_requests
        where = f"the openai API at {fake.openai_base_url}"
    first, again = streamed
    pieces = [d["text"] for k, d in first if k == "text"]
    assert len(pieces) > 3 and "".join(pieces) == reply
    result = first[-1][1]
    assert result["path"] == "claude" and result["short_answer"] == "Tommy Flowers"
    assert again[-1][1]["answer"] == result["answer"]
    assert [d["text"] for k, d in again if k == "text"] == [reply]  # the cache, in one piece
    assert len(requests) == 1 and requests[0].path == "/v1/chat/completions"
    assert requests[0].body is not None and requests[0].body["stream"] is True
    assert requests[0].body["model"] == "qwen2.5:7b"
    assert where in announced


def test_a_warm_service_builds_its_claude_client_before_the_first_request(
    sample_graph: tuple[Path, LoadReport],
) -> None:
    """The SDK's import (~2.5 s here) once fell inside the first request's time limit."""
    from kg_agent.config import AgentConfig
    from kg_agent.serve.service import GraphService

    with fake_anthropic_server() as fake:
        config = AgentConfig(llm_base_url=fake.base_url)
        for warm in (True, False):
            service = GraphService.open(
                str(sample_graph[0]), config=config, anthropic_api_key=DEFAULT_KEY, warm=warm
            )
            try:
                assert getattr(service.agent.llm, "prepared", None) is warm
            finally:
                service.close()
        assert fake.message_requests == [], "warming sends nothing to the model"


def test_a_warm_service_loads_the_reader_s_parser_before_the_first_request(
    sample_graph: tuple[Path, LoadReport],
) -> None:
    """spaCy's load (~1.5 s) must not fall inside the first text question's time."""
    pytest.importorskip("spacy", reason="spaCy is set-up's 'nlp' extra (scripts/setup.sh)")
    from kg_agent.language.parser import english_parser
    from kg_agent.serve.service import GraphService

    english_parser.cache_clear()
    service = GraphService.open(str(sample_graph[0]), warm=True)
    try:
        models = service.agent.components.spans.models
        assert english_parser.cache_info().currsize == 1
        assert english_parser(models) is not None  # loaded, and now a cache hit
        assert english_parser.cache_info().hits >= 1
    finally:
        service.close()


def test_busy_and_timeout_are_503_and_504(claude_server: tuple[RunningServer, Any]) -> None:
    srv, fake = claude_server
    fake.enqueue(delay(5.0, text("late")))
    with httpx2.Client(base_url=srv.url, timeout=60) as c:
        first: dict[str, httpx2.Response] = {}
        t = threading.Thread(
            target=lambda: first.setdefault("r", c.post("/v1/ask", json={"question": "Who?"}))
        )
        t.start()
        assert _wait_in_flight(c)
        busy = c.post("/v1/ask", json={"question": QUESTIONS[0]})
        assert "busy" in _error(busy, 503)
        assert busy.headers["retry-after"] == "1"
        streamed = c.post("/v1/ask", json={"question": QUESTIONS[0], "stream": True})
        assert "busy" in _error(streamed, 503), "a busy server refuses a stream before its 200"
        t.join()
        assert "4 s" in _error(first["r"], 504)
        # the pool frees itself once the slow call ends: answered again
        fake.enqueue(text("Short answer: Tommy Flowers [1]\n\nFlowers [1]."))
        assert _wait_in_flight(c, want=0)
        assert c.post("/v1/ask", json={"question": QUESTIONS[0]}).status_code == 200


def _wait_in_flight(c: httpx2.Client, want: int = 1, timeout: float = 10.0) -> bool:
    import time

    deadline = time.time() + timeout
    while time.time() < deadline:
        if c.get("/healthz").json()["in_flight"] == want:
            return True
        time.sleep(0.05)
    return False


# ---------------------------------------------------------------------------- the graph


def test_a_writer_is_refused_while_serving_and_signals_stop_it(
    sample_graph: tuple[Path, LoadReport], tmp_path: Path
) -> None:
    db = tmp_path / "graph.kuzu"
    src = sample_graph[0]
    for path in src.parent.iterdir():
        if path.name.startswith(src.name):
            (shutil.copytree if path.is_dir() else shutil.copy2)(path, tmp_path / path.name)
    with running_server(db, "--offline") as srv:
        before = httpx2.get(f"{srv.url}/v1/stats").json()["graph"]["articles"]
        writer = subprocess.run(
            [*kg_agent_exe(), "delete", "Tommy Flowers", "--db", str(db)],
            capture_output=True,
            text=True,
        )
        assert writer.returncode == 1
        assert "in use" in writer.stderr and len(writer.stderr.strip().splitlines()) == 1
        answer = httpx2.post(f"{srv.url}/v1/ask", json={"question": QUESTIONS[1]}, timeout=60)
        assert answer.status_code == 200
        srv.process.send_signal(signal.SIGINT)
        assert srv.process.wait(timeout=30) == 0, srv.stderr
    with GraphStore.open(db, read_only=True) as store:
        assert store.count_articles() == before
        assert store.article("Tommy Flowers") is not None


def test_startup_errors_are_one_line(tmp_path: Path, sample_graph: tuple[Path, LoadReport]) -> None:
    missing = subprocess.run(
        [*kg_agent_exe(), "serve", "--db", str(tmp_path / "none.kuzu")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert missing.returncode == 1
    assert "not found" in missing.stderr and len(missing.stderr.strip().splitlines()) == 1
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        clash = subprocess.run(
            [
                *kg_agent_exe(),
                "serve",
                "--db",
                str(sample_graph[0]),
                "--port",
                str(port),
                "--offline",
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert clash.returncode == 1
    assert f"cannot listen on 127.0.0.1:{port}" in clash.stderr


def test_processes_share_the_port_and_stop_together(
    sample_graph: tuple[Path, LoadReport], tmp_path: Path
) -> None:
    db = tmp_path / "graph.kuzu"
    src = sample_graph[0]
    for path in src.parent.iterdir():
        if path.name.startswith(src.name):
            (shutil.copytree if path.is_dir() else shutil.copy2)(path, tmp_path / path.name)
    with running_server(db, "--offline", "--processes", "2", "--workers", "1") as srv:
        assert "2 processes x 1 workers" in srv.stderr
        # several connections: the kernel hands them to both processes; all answer alike
        answers = set()
        for _ in range(6):
            with httpx2.Client(base_url=srv.url, timeout=120) as c:
                body = c.post("/v1/ask", json={"question": QUESTIONS[0]}).json()
                answers.add(body["answer"])
        assert len(answers) == 1
        srv.process.send_signal(signal.SIGTERM)
        assert srv.process.wait(timeout=60) == 0, srv.stderr
    # no worker process is left holding the graph: a writer gets it
    assert_no_process_holds(db)
