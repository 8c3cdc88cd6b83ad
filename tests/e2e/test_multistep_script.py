"""``scripts/run_multistep_retrieval.py`` as a user runs it: a subprocess on the 2Wiki graph.

The session's 2Wiki graph is passed with ``--db``, so the script reuses it
(``ensure_graph`` finds the same corpus fingerprint) instead of building one.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from kg_agent.embedding import Embedder
from kg_agent.ingest.pipeline import LoadReport

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "run_multistep_retrieval.py"
QUESTIONS = "multihop/2wikimultihopqa/questions.dev.json"
LIMIT = 3

TRACE_KEYS = {"id", "question", "route", "complexity", "plan", "steps", "stop_reason"}
TRACE_KEYS |= {"bridge_round_stats", "warnings", "seconds"}
STEP_KEYS = {"step", "query", "query_type", "kind", "results", "new_evidence", "gap", "gate"}
STEP_KEYS |= {"stop_reason", "seconds", "plan_step", "finding"}
RESULT_KEYS = {"id", "question", "gold_titles", "route", "recall_at_5", "seconds"}
RESULT_KEYS |= {"final_top_chunks", "all_collected_chunks"}
CHUNK_KEYS = {"section_id", "title", "score", "source", "text"}


def run_script(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


@pytest.fixture(scope="module")
def questions_file(twowiki_data_dir: Path) -> Path:
    return twowiki_data_dir / QUESTIONS


def test_script_writes_traces_and_results(
    twowiki_graph: tuple[Path, LoadReport], questions_file: Path, tmp_path: Path
) -> None:
    out = tmp_path / "multistep"
    proc = run_script(
        "--config",
        "configs/run_multistep.yaml",
        "--questions",
        str(questions_file),
        "--db",
        str(twowiki_graph[0]),
        "--limit",
        str(LIMIT),
        "--out",
        str(out),
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "reused" in proc.stderr  # no second build of the session's graph

    expected = json.loads(questions_file.read_text(encoding="utf-8"))[:LIMIT]
    traces = read_jsonl(out / "multistep_traces.jsonl")
    results = read_jsonl(out / "retrieval_results.jsonl")
    assert len(traces) == len(results) == LIMIT
    assert [t["id"] for t in traces] == [r["id"] for r in results] == [q["id"] for q in expected]

    for trace, q in zip(traces, expected, strict=True):
        assert set(trace) >= TRACE_KEYS, TRACE_KEYS - set(trace)
        assert trace["question"] == q["question"] and "error" not in trace
        assert trace["route"] in ("simple", "complex") and trace["steps"]
        for step in trace["steps"]:
            assert set(step) == STEP_KEYS
        if trace["route"] == "complex":
            assert trace["steps"][-1]["kind"] == "bridge"
            assert trace["plan"]["query_type"] in ("compare", "trend", "fact", "other")

    for result, q in zip(results, expected, strict=True):
        assert set(result) == RESULT_KEYS
        assert result["gold_titles"] == list(dict.fromkeys(q["supporting_facts"]))
        assert 0.0 <= result["recall_at_5"] <= 1.0
        assert result["final_top_chunks"] and result["all_collected_chunks"]
        for c in result["final_top_chunks"] + result["all_collected_chunks"]:
            assert set(c) == CHUNK_KEYS
            assert len(c["text"]) <= 300

    for label in ("questions", "mean steps", "bridge triggered", "Recall@5", "latency p50"):
        assert label in proc.stdout, proc.stdout
    assert f"questions            {LIMIT} (0 errors)" in proc.stdout


@pytest.fixture(scope="module")
def script_module(embedder: Embedder) -> Iterator[ModuleType]:
    """The script imported in-process, with the session's model instead of a fresh load."""
    spec = importlib.util.spec_from_file_location("run_multistep_retrieval", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(module, "Embedder", lambda *a, **k: embedder)
        yield module


def test_script_force_route_simple_in_process(
    script_module: ModuleType,
    twowiki_graph: tuple[Path, LoadReport],
    questions_file: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = ["--questions", str(questions_file), "--db", str(twowiki_graph[0])]
    args += ["--limit", "2", "--out", str(tmp_path), "--force-route", "simple", "-q"]
    assert script_module.main(args) == 0
    traces = read_jsonl(tmp_path / "multistep_traces.jsonl")
    assert len(traces) == 2
    assert all(t["route"] == "simple" and t["complexity"]["forced"] for t in traces)
    assert all([s["kind"] for s in t["steps"]] == ["single"] for t in traces)
    assert "mean steps           1" in capsys.readouterr().out


def test_script_bad_config_is_one_error_line(questions_file: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("multistep:\n  max_stepz: 2\n", encoding="utf-8")
    proc = run_script("--config", str(bad), "--questions", str(questions_file))
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines() == [
        f"run_multistep_retrieval: {bad}: multistep config: unknown key 'max_stepz'"
    ]
