"""The real ``kg-agent ask`` and ``kg-agent cypher`` commands on the sample graph.

Run in-process through click's CliRunner with no Anthropic credentials, so the
answers come from the offline path (one test points ``--api-key`` at the local
fake Messages-API server to check the CLI's Claude path and its warnings).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from kg_agent.cli import main
from kg_agent.embedding import Embedder
from kg_agent.ingest.pipeline import LoadReport
from kg_agent.synthesis.extractive import EXTRACTIVE_LABEL
from tests.support.fake_anthropic import (
    DEFAULT_KEY,
    fake_anthropic_server,
    overloaded,
    server_error,
)

ENV_KEYS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "KG_AGENT_DB")
ENIAC_Q = "How many vacuum tubes did ENIAC contain?"


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ENV_KEYS:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="module")
def db(sample_graph: tuple[Path, LoadReport]) -> str:
    return str(sample_graph[0])


@pytest.fixture
def shared_model(embedder: Embedder, monkeypatch: pytest.MonkeyPatch) -> None:
    """Let the CLI's agent reuse the session's loaded model instead of loading its own."""
    monkeypatch.setattr("kg_agent.agent.Embedder", lambda *a, **k: embedder)


def invoke(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def one_error_line(result: Result) -> str:
    """The output of a failed command: exactly one line, starting with 'Error:'."""
    assert result.exit_code == 1, result.output
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("Error: ")
    assert "Traceback" not in result.output
    return lines[0]


# --------------------------------------------------------------------------- ask


def test_ask_prints_an_answer_and_its_sources(db: str) -> None:
    # No shared_model here: the command loads the model itself, as installed.
    result = invoke("ask", ENIAC_Q, "--db", db)
    assert result.exit_code == 0, result.output
    out = result.stdout
    # the sentence that answers, cited (a number read from text is not sure enough to be
    # shown in bold: docs/answers.md)
    assert re.match(re.escape(EXTRACTIVE_LABEL) + r": ENIAC contained 17,468 vacuum tubes", out), (
        out
    )
    answer, _, sources = out.partition("\nSources:\n")
    assert sources, out
    source_lines = sources.rstrip().splitlines()
    assert source_lines
    for line in source_lines:
        assert re.fullmatch(r"  \[\d+\] .+", line), line
    cited = sorted({int(n) for n in re.findall(r"\[(\d+)\]", answer)})
    listed = sorted(int(re.match(r"  \[(\d+)\]", line).group(1)) for line in source_lines)  # type: ignore[union-attr]
    assert cited == listed == list(range(1, len(cited) + 1))  # [1]..[n], no gaps
    assert any(line.endswith("] ENIAC — Design") for line in source_lines)
    assert re.search(r"\(offline: extractive, \d+ ms\)", result.stderr)
    assert "Evidence, numbered as cited" not in out


def test_ask_json(db: str, shared_model: None) -> None:
    result = invoke("ask", ENIAC_Q, "--db", db, "--json")
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.stdout)
    assert {"answer", "citations", "evidence", "path", "mode", "trace", "usage"} <= data.keys()
    assert data["path"] == "offline" and data["mode"] == "extractive"
    assert data["question"] == ENIAC_Q
    assert "17,468" in data["answer"]
    assert data["citations"]
    for c in data["citations"]:
        assert c.keys() == {"n", "title", "heading_path", "section_id"}
        ev = data["evidence"][c["n"] - 1]
        assert (ev["title"], ev["section_id"]) == (c["title"], c["section_id"])
    assert all({"title", "content", "similarity", "scores"} <= e.keys() for e in data["evidence"])
    assert data["usage"]["calls"] == 0


def test_ask_evidence_shows_scores(db: str, shared_model: None) -> None:
    result = invoke("ask", ENIAC_Q, "--db", db, "--evidence", "--top-k", "4")
    assert result.exit_code == 0, result.output
    _, _, block = result.stdout.partition("\nEvidence, numbered as cited")
    lines = block.rstrip().splitlines()[1:]
    assert len(lines) == 4, result.stdout
    pattern = r"  (\d)\. \[(named|linked|bridge|search)\] score (-?\d\.\d{3})  (.+?)  \((.+)\)"
    rank = {"named": 3, "linked": 2, "bridge": 1, "search": 0}
    seen: list[tuple[int, float]] = []
    for i, line in enumerate(lines, 1):
        m = re.fullmatch(pattern, line)
        assert m, line
        assert int(m.group(1)) == i
        seen.append((rank[m.group(2)], float(m.group(3))))
        parts = dict(p.rsplit(" ", 1) for p in m.group(5).split(", "))
        assert {"semantic", "quality", "rerank"} <= parts.keys()
        assert all(re.fullmatch(r"-?\d\.\d{3}", v) for v in parts.values())
    # the cited first; after them, best first: tiers never rise down the list, and
    # scores never rise within a tier
    answer = result.stdout.partition("\nSources:")[0]
    n_cited = len(set(re.findall(r"\[(\d+)\]", answer)))
    rest = seen[n_cited:]
    assert rest == sorted(rest, key=lambda t: (-t[0], -t[1]))


def test_ask_no_enhancements_has_no_rerank_score(db: str, shared_model: None) -> None:
    result = invoke("ask", ENIAC_Q, "--db", db, "--evidence", "--no-enhancements")
    assert result.exit_code == 0, result.output
    block = result.stdout.partition("\nEvidence, numbered as cited")[2]
    assert block.strip()
    assert "rerank" not in block and "semantic" in block
    data = json.loads(invoke("ask", ENIAC_Q, "--db", db, "--json", "--no-reranker").stdout)
    assert "rerank" not in [s["stage"] for s in data["trace"]]


def test_ask_structural_question(db: str, shared_model: None) -> None:
    result = invoke("ask", "How is Ada Lovelace connected to IBM?", "--db", db)
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("How Ada Lovelace and IBM are connected in the graph:\n")
    assert "- Ada Lovelace → Analytical Engine: “" in result.stdout
    assert "(offline: graph" in result.stderr


@pytest.mark.parametrize(
    "question", ["", "   ", "x" * 5000], ids=["empty", "blank", "over-the-limit"]
)
def test_ask_bad_question_is_one_error_line(db: str, question: str) -> None:
    line = one_error_line(invoke("ask", question, "--db", db))
    assert "question" in line


def test_ask_missing_database_is_one_error_line(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.kuzu"
    line = one_error_line(invoke("ask", ENIAC_Q, "--db", str(missing)))
    assert str(missing) in line and "not found" in line
    assert not missing.exists()  # a read path never creates the database


def test_ask_with_api_key_uses_claude_and_reports_failures(
    db: str, shared_model: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    with fake_anthropic_server(
        responder=lambda body: "Short answer: 17,468\nENIAC had 17,468 tubes [1]."
    ) as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        ok = invoke("ask", ENIAC_Q, "--db", db, "--api-key", DEFAULT_KEY)
        fake.enqueue(overloaded(), overloaded())  # the call and its one retry
        degraded = invoke("ask", ENIAC_Q, "--db", db, "--api-key", DEFAULT_KEY)
        requests = fake.message_requests
        where = f"the anthropic API at {fake.base_url}"
    assert ok.exit_code == 0, ok.output
    assert ok.stdout.startswith("Short answer: 17,468")
    assert "\n\nENIAC had 17,468 tubes [1].\n\nSources:\n  [1] " in ok.stdout
    assert "(claude: claude," in ok.stderr
    assert degraded.exit_code == 0, degraded.output
    assert EXTRACTIVE_LABEL in degraded.stdout.split("\nSources:")[0]
    assert (
        "warning: synthesis with claude-sonnet-4-6 failed "
        f"(overloaded from {where})" in degraded.stderr
    )
    assert len(requests) == 3 and all(r.credential == DEFAULT_KEY for r in requests)


def test_ask_through_an_openai_compatible_local_server(
    db: str, shared_model: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Ollama, vLLM, llama.cpp: chat completions at a base URL, no key, the model named;
    streaming aside, the same answer path; a repeat is answered from --llm-cache."""
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    cache = tmp_path / "llm.sqlite"
    with fake_anthropic_server(
        api_keys=("no-key",),
        responder=lambda body: "Short answer: 17,468\nENIAC had 17,468 tubes [1].",
    ) as fake:
        args = ["ask", ENIAC_Q, "--db", db, "--llm-api", "openai"]
        args += ["--llm-base-url", fake.openai_base_url, "--model", "llama3.1:8b"]
        first = invoke(*args, "--llm-cache", str(cache), "--json")
        again = invoke(*args, "--llm-cache", str(cache), "--json")
        no_model = invoke(
            "ask",
            ENIAC_Q,
            "--db",
            db,
            "--llm-api",
            "openai",
            "--llm-base-url",
            fake.openai_base_url,
        )
        fake.enqueue(server_error(), server_error())
        degraded = invoke(*args)
        requests = fake.message_requests
        where = f"the openai API at {fake.openai_base_url}"
    assert first.exit_code == 0, first.output
    result = json.loads(first.stdout)
    assert result["path"] == "claude" and result["short_answer"] == "17,468"
    assert result["usage"]["calls"] == 1 and result["usage"]["cost_usd"] == 0.0  # no price
    assert json.loads(again.stdout)["usage"]["cached"] == 1  # from the cache: no request
    assert "needs the name of the model your server serves" in one_error_line(no_model)
    assert degraded.exit_code == 0 and EXTRACTIVE_LABEL in degraded.stdout
    assert f"warning: synthesis with llama3.1:8b failed (api_error from {where})" in degraded.stderr
    assert [r.path for r in requests] == ["/v1/chat/completions"] * 3  # 1 + the 500 twice
    body = requests[0].body
    assert body is not None and body["model"] == "llama3.1:8b"
    assert body["messages"][0]["role"] == "system"
    assert all(r.credential == "no-key" for r in requests)


def test_llm_base_url_points_claude_steps_at_a_local_endpoint(
    db: str, shared_model: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A local model behind an Anthropic-compatible Messages endpoint: the option alone
    (no ANTHROPIC_BASE_URL in the environment) routes synthesis there."""
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    with fake_anthropic_server(
        responder=lambda body: "Short answer: 17,468\nENIAC had 17,468 tubes [1]."
    ) as fake:
        result = invoke(
            "ask", ENIAC_Q, "--db", db, "--api-key", DEFAULT_KEY, "--llm-base-url", fake.base_url
        )
        requests = fake.message_requests
    assert result.exit_code == 0, result.output
    assert "\n\nENIAC had 17,468 tubes [1].\n\nSources:" in result.stdout
    assert len(requests) == 1 and requests[0].credential == DEFAULT_KEY


def test_a_bad_api_key_is_warned_once(
    db: str, shared_model: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The failure is logged (for applications) and listed in the result (for the CLI);
    the CLI shows it once, not twice through Python's last-resort log handler."""
    with fake_anthropic_server() as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        result = invoke("ask", ENIAC_Q, "--db", db, "--api-key", "not-the-key")
    assert result.exit_code == 0, result.output
    assert EXTRACTIVE_LABEL in result.stdout.split("\nSources:")[0]
    warned = [ln for ln in result.stderr.splitlines() if "failed" in ln]
    assert len(warned) == 1 and warned[0].startswith("warning: synthesis"), result.stderr


# --------------------------------------------------------------------------- cypher


def test_cypher_list_needs_no_name_and_no_database() -> None:
    result = invoke("cypher", "--list")
    assert result.exit_code == 0, result.output
    assert "articles_linking_to" in result.stdout and "top_pagerank" in result.stdout
    line = one_error_line(invoke("cypher", "top_pagerank"))
    assert "--db" in line


def test_cypher_articles_linking_to(db: str) -> None:
    result = invoke("cypher", "articles_linking_to", "--db", db, "-p", "title=Charles Babbage")
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert rows and all(r.keys() == {"title", "count", "inferred"} for r in rows)
    assert "Analytical Engine" in [r["title"] for r in rows]
    limited = invoke(
        "cypher", "articles_linking_to", "--db", db, "-p", "title=Charles Babbage", "-p", "limit=2"
    )
    assert [json.loads(line) for line in limited.stdout.splitlines()] == rows[:2]


@pytest.mark.parametrize(
    ("params", "says"),
    [
        (["-p", "title=Charles Babbage", "-p", "limit=abc"], "limit"),
        (["-p", "title=Charles Babbage", "-p", "limit=0"], "limit"),
        (["-p", "title"], "KEY=VALUE"),
        (["-p", "=Charles Babbage"], "KEY=VALUE"),
        (["-p", "title=Charles Babbage", "-p", "colour=red"], "colour"),
        ([], "title"),
    ],
    ids=["not-an-int", "below-min", "no-equals", "no-key", "unknown", "missing-required"],
)
def test_cypher_bad_param_is_one_error_line(db: str, params: list[str], says: str) -> None:
    line = one_error_line(invoke("cypher", "articles_linking_to", "--db", db, *params))
    assert says in line


def test_cypher_unknown_query_and_missing_database(db: str, tmp_path: Path) -> None:
    line = one_error_line(invoke("cypher", "drop_everything", "--db", db))
    assert "drop_everything" in line
    line = one_error_line(invoke("cypher", "top_pagerank", "--db", str(tmp_path / "missing.kuzu")))
    assert "not found" in line


def test_ask_multistep_trace_shows_each_step(db: str, shared_model: None) -> None:
    q = "Which machine was built first, ENIAC or the Z3?"
    result = invoke("ask", q, "--db", db, "--route", "complex", "--set", "max_steps=1", "--trace")
    assert result.exit_code == 0, result.output
    trace = result.stdout.partition("\nTrace:\n")[2]
    assert '"stage": "multistep"' in trace
    assert "multistep: route complex" in trace
    assert "1. [plan]" in trace and "[bridge]" in trace
    data = json.loads(invoke("ask", q, "--db", db, "--route", "complex", "--json").stdout)
    ms = data["multistep"]
    assert ms["route"] == "complex" and ms["plan"]["query_type"] == "compare"
    assert ms["steps"][0]["kind"] == "plan" and "stop_reason" in ms["steps"][0]
    assert set(ms["bridge_round_stats"]) >= {"triggered", "queries_generated", "docs_added"}
    assert {"rewritten_queries", "relevance_scores", "reranked_results", "quality_notes"} <= set(ms)


def test_ask_bad_multistep_setting_is_one_line_error(db: str, shared_model: None) -> None:
    for bad in ("max_steps=0", "no_such_key=1", "max_steps"):
        result = invoke("ask", ENIAC_Q, "--db", db, "--multistep", "--set", bad)
        assert result.exit_code != 0
        assert len(result.output.strip().splitlines()) == 1, result.output
