"""The real ``kg-agent eval`` command on the real dev sets, through click's CliRunner.

2WikiMultihopQA runs on the session's 2Wiki graph (no second build); HotpotQA
builds its own small graph once (110 records, about a thousand passages).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from kg_agent.cli import main
from kg_agent.embedding import Embedder
from kg_agent.ingest.pipeline import LoadReport

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
MODES = ("bm25", "dense", "hybrid")


def invoke(*args: str) -> Result:
    """Run ``kg-agent ARGS`` as a user would type it (``sys.argv`` is what gets recorded)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sys, "argv", ["kg-agent", *args])
        return CliRunner().invoke(main, list(args), catch_exceptions=False)


def one_error_line(result: Result) -> str:
    assert result.exit_code == 1, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.output
    return lines[0]


@pytest.fixture(scope="module", autouse=True)
def _shared_model(embedder: Embedder) -> Iterator[None]:
    """The eval reuses the session's loaded model instead of loading its own."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("kg_agent.evaluation.run_all.Embedder", lambda *a, **k: embedder)
        for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
            mp.delenv(name, raising=False)
        yield


@pytest.fixture(scope="module")
def twowiki_db(twowiki_graph: tuple[Path, LoadReport]) -> str:
    return str(twowiki_graph[0])


@pytest.fixture(scope="module")
def twowiki_eval(
    twowiki_db: str, twowiki_data_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Result, Path, list[str]]:
    out = tmp_path_factory.mktemp("eval_2wiki")
    args = [
        "eval", "2wiki", "--db", twowiki_db, "--data-dir", str(twowiki_data_dir),
        "--limit", "5", "--modes", ",".join(MODES), "--out", str(out), "--show-failures", "1",
    ]  # fmt: skip
    return invoke(*args), out, args


def test_table_lists_each_mode_and_the_published_rows(
    twowiki_eval: tuple[Result, Path, list[str]],
) -> None:
    result, out, _ = twowiki_eval
    assert result.exit_code == 0, result.output
    table = result.stdout
    assert "2wikimultihopqa — 5 questions" in table
    rows = {line.split()[0]: line for line in table.splitlines() if line.split()}
    for mode in MODES:
        assert mode in rows, table
    assert "HippoRAG (published)" in table
    for mode in MODES:  # --show-failures 1: one case per mode
        assert f"2wikimultihopqa · {mode}: 1 lowest Recall@5 of 5 questions" in table
    assert "   gold:   " in table and "   missed: " in table
    assert f"Wrote {out / 'eval.json'}, {out / 'eval.md'}" in table


def test_json_has_every_question_under_every_mode(
    twowiki_eval: tuple[Result, Path, list[str]], twowiki_db: str
) -> None:
    _, out, args = twowiki_eval
    doc = json.loads((out / "eval.json").read_text(encoding="utf-8"))
    assert doc["command"] == "kg-agent " + " ".join(args)
    assert "cores" in doc["machine"] and "Python" in doc["machine"]
    (run,) = doc["datasets"]
    assert (run["dataset"], run["n_questions"], run["db_path"]) == (
        "2wikimultihopqa",
        5,
        twowiki_db,
    )
    assert list(run["summaries"]) == list(MODES)
    assert len(run["questions"]) == 5
    first = run["questions"][0]
    assert first["gold_titles"] == ["Henriette of France (1727–1752)", "Marie Leszczyńska"]
    for q in run["questions"]:
        assert list(q["results"]) == list(MODES)
        for res in q["results"].values():
            res_: dict[str, Any] = res
            for key in ("recall_at_2", "recall_at_5", "all_recall_at_5", "answer_in_evidence"):
                assert 0.0 <= res_[key] <= 1.0, (key, res_)
            assert res_["error"] is None and res_["titles"] and res_["latency_ms"] > 0
    for s in run["summaries"].values():
        assert 0.0 <= s["recall_at_5"] <= 100.0 and s["n"] == 5 and s["errors"] == 0
    # retrieval modes leave the answer columns empty
    for s in run["summaries"].values():
        for key in ("exact_match", "f1", "short_em", "short_f1", "abstained", "answer_contains"):
            assert s[key] is None, (key, s)
    assert run["out_of_graph"] is None  # one dataset: nothing to ask it of


def test_markdown_and_chart(twowiki_eval: tuple[Result, Path, list[str]]) -> None:
    _, out, args = twowiki_eval
    md = (out / "eval.md").read_text(encoding="utf-8")
    assert "HippoRAG" in md and "89.5" in md
    assert f"`kg-agent {' '.join(args)}`" in md
    assert all(f"| {mode} |" in md for mode in MODES)
    png = out / "recall_at_5.png"
    if find_spec("matplotlib") is None:  # the plot extra is optional
        assert not png.exists()
    else:
        assert png.read_bytes().startswith(PNG_SIGNATURE)
        assert "recall_at_5.png" in md


def test_json_flag_prints_the_document_alone(
    twowiki_db: str, twowiki_data_dir: Path, tmp_path: Path
) -> None:
    result = invoke(
        "eval", "2wiki", "--db", twowiki_db, "--data-dir", str(twowiki_data_dir),
        "--limit", "2", "--modes", "bm25", "--out", str(tmp_path), "--json", "-q",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc == json.loads((tmp_path / "eval.json").read_text(encoding="utf-8"))
    assert doc["datasets"][0]["n_questions"] == 2
    assert list(doc["datasets"][0]["summaries"]) == ["bm25"]
    assert result.stderr == ""  # --quiet: no progress


def test_unknown_mode_is_one_line(tmp_path: Path, shared_data_dir: Path) -> None:
    db = tmp_path / "never.kuzu"
    result = invoke(
        "eval", "2wiki", "--db", str(db), "--data-dir", str(shared_data_dir),
        "--modes", "bm25,nope", "--out", str(tmp_path / "out"),
    )  # fmt: skip
    assert "unknown mode(s) nope" in one_error_line(result)
    assert not db.exists() and not (tmp_path / "out").exists()


def test_missing_dataset_file_is_one_line(tmp_path: Path) -> None:
    result = invoke("eval", str(tmp_path / "nope.json"), "--db", str(tmp_path / "x.kuzu"))
    assert "no such file" in one_error_line(result)


def test_corpus_with_several_datasets_is_one_line(tmp_path: Path, shared_data_dir: Path) -> None:
    result = invoke(
        "eval", "2wiki", "musique", "--data-dir", str(shared_data_dir),
        "--corpus", str(tmp_path / "c.json"), "--db", str(tmp_path),
    )  # fmt: skip
    assert "--corpus" in one_error_line(result)


def test_a_graph_of_another_corpus_is_refused(
    twowiki_db: str, shared_data_dir: Path, tmp_path: Path
) -> None:
    result = invoke(
        "eval", "hotpotqa", "--db", twowiki_db, "--data-dir", str(shared_data_dir),
        "--modes", "bm25", "--out", str(tmp_path), "-q",
    )  # fmt: skip
    assert "holds other sources" in one_error_line(result)


def test_hotpotqa_builds_its_graph_then_reuses_it(shared_data_dir: Path, tmp_path: Path) -> None:
    db = tmp_path / "dbs" / "hotpotqa.kuzu"
    args = ["eval", "hotpotqa", "--db", str(db), "--data-dir", str(shared_data_dir), "--limit", "3"]
    modes = ["--modes", "bm25,hybrid,hybrid_ppr"]
    first = invoke(*args, *modes, "--out", str(tmp_path / "a"), "-q")
    assert first.exit_code == 0, first.output
    assert db.exists()
    assert "hotpotqa — 3 questions" in first.stdout
    assert "graph contribution (hybrid_ppr − hybrid, R@5)" in first.stdout
    assert "(published)" not in first.stdout  # no comparable published numbers

    second = invoke(*args, *modes, "--out", str(tmp_path / "b"), "--json", "-q")
    assert second.exit_code == 0, second.output
    built = json.loads((tmp_path / "a" / "eval.json").read_text(encoding="utf-8"))["datasets"][0]
    reused = json.loads(second.stdout)["datasets"][0]
    assert reused["build_seconds"] < built["build_seconds"] / 5  # the load was skipped
    for run in (built, reused):
        assert run["dataset"] == "hotpotqa" and len(run["questions"]) == 3
        assert run["questions"][0]["gold_titles"] == ["Hugo Rodríguez Romero", "FC Cartagena"]
    assert [q["results"]["bm25"]["titles"] for q in built["questions"]] == [
        q["results"]["bm25"]["titles"] for q in reused["questions"]
    ]


def test_questions_of_another_graph_are_answered_not_in_the_graph(
    twowiki_db: str, twowiki_data_dir: Path, tmp_path: Path
) -> None:
    """Each dataset's questions are also asked of the other dataset's graph, where the
    answer must be "not in the graph"; on their own graph it must not."""
    dbs = tmp_path / "dbs"
    dbs.mkdir()
    for suffix in ("", ".indexes"):
        os.symlink(twowiki_db + suffix, dbs / f"2wikimultihopqa.kuzu{suffix}")
    out = tmp_path / "out"
    result = invoke(
        "eval", "2wiki", "musique", "--db", str(dbs), "--data-dir", str(twowiki_data_dir),
        "--limit", "10", "--modes", "agent", "--out", str(out), "-q",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert 'out of graph: musique questions answered "not in the graph" by agent' in result.stdout
    doc = json.loads((out / "eval.json").read_text(encoding="utf-8"))
    for run, other in zip(doc["datasets"], ["musique", "2wikimultihopqa"], strict=True):
        [check] = run["out_of_graph"]
        assert (check["graph"], check["mode"], check["n"]) == (other, "agent", 10)
        assert check["refused"] >= 70.0, check
        summary = run["summaries"]["agent"]
        assert summary["abstained"] < check["refused"]
        for key in ("exact_match", "f1", "short_em", "short_f1"):
            assert 0.0 <= summary[key] <= 100.0
        for q in run["questions"]:
            res = q["results"]["agent"]
            assert res["abstained"] in (True, False) and res["answer_contains"] in (0.0, 1.0)
            # a span is in the text (shown first, or in its sentence); "yes" and "no" are
            # no words of a text: unsure, the text is the sentences that decide them
            if res["short_answer"] and res["short_answer"] not in ("yes", "no"):
                assert res["short_answer"] in res["answer"]


def test_an_eval_with_a_model_server_reruns_from_the_cache(
    twowiki_db: str, twowiki_data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The answering mode's synthesis on an OpenAI-compatible server; the rerun reads every
    reply from --llm-cache: no request, no token, the same answers."""
    from tests.support.fake_anthropic import fake_anthropic_server

    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    cache = tmp_path / "llm.sqlite"

    def reply(body: dict[str, Any]) -> str:
        return "Short answer: not in the graph\nThe evidence does not say [1]."

    with fake_anthropic_server(api_keys=("no-key",), responder=reply) as fake:
        args = ["eval", "2wiki", "--db", twowiki_db, "--data-dir", str(twowiki_data_dir)]
        args += ["--modes", "agent", "--limit", "3", "-q", "--llm-api", "openai"]
        args += ["--llm-base-url", fake.openai_base_url, "--llm-model", "llama3.1:8b"]
        args += ["--llm-cache", str(cache)]
        runs = []
        for n in range(2):
            out = tmp_path / f"run{n}"
            result = invoke(*args, "--out", str(out))
            assert result.exit_code == 0, result.output
            runs.append(json.loads((out / "eval.json").read_text()))
            if n == 0:
                first_requests = len(fake.message_requests)
        assert len(fake.message_requests) == first_requests  # the rerun sent nothing
    assert first_requests == 3
    llm = [r["llm"] for r in (runs[0]["datasets"][0], runs[1]["datasets"][0])]
    assert llm[0]["api"] == "openai" and llm[0]["synthesis_model"] == "llama3.1:8b"
    # the untimed warm-up asked the first question: its repeat is already a hit
    assert llm[0]["usage"]["agent"]["calls"] == 2 and llm[0]["usage"]["agent"]["cached"] == 1
    assert llm[1]["usage"]["agent"]["calls"] == 0 and llm[1]["usage"]["agent"]["cached"] == 3
    answers = [[q["results"]["agent"] for q in run["datasets"][0]["questions"]] for run in runs]
    assert [a.get("answer") for a in answers[0]] == [a.get("answer") for a in answers[1]]
