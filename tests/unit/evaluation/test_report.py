"""Reports: table, failures, Markdown, chart and JSON built from hand-made runs."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from kg_agent.evaluation.published import PUBLISHED, published_for
from kg_agent.evaluation.report import (
    GRAPH_CONTRIBUTION,
    format_failures,
    format_table,
    graph_contribution,
    machine_description,
    write_chart,
    write_json,
    write_markdown,
)
from kg_agent.evaluation.results import DatasetRun, ModeSummary, QuestionResult, RankedItem

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

# (qid, question, gold titles, {mode: (top titles, recall@5)})
_QUESTIONS: list[tuple[str, str, list[str], dict[str, tuple[list[str], float]]]] = [
    (
        "q1",
        "Who directed the film where Ann Blyth starred?",
        ["Ann Blyth", "Mildred Pierce"],
        {
            "hybrid": (["Ann Blyth", "Joan Crawford", "Mildred Pierce"], 1.0),
            "hybrid_ppr": (["Mildred Pierce", "Ann Blyth"], 1.0),
        },
    ),
    (
        "q2",
        "Which country is the birthplace of the composer of Aida?",
        ["Aida", "Giuseppe Verdi"],
        {
            "hybrid": (["Aida (film)", "Opera", "Milan", "La Scala", "Rome"], 0.0),
            "hybrid_ppr": (["Aida", "Opera", "Milan", "La Scala", "Rome", "Giuseppe Verdi"], 0.5),
        },
    ),
    (
        "q3",
        "Are both bands from the same country?",
        ["Blur", "Oasis (band)"],
        {
            "hybrid": (["Blur", "Pulp", "Suede", "Elastica", "Oasis"], 0.5),
            "hybrid_ppr": (["Oasis (band)", "Blur"], 1.0),
        },
    ),
]


def _summary(mode: str, r2: float, r5: float, *, em: float | None = None) -> ModeSummary:
    return ModeSummary(
        mode=mode,
        description=f"{mode} retrieval",
        n=3,
        recall_at_2=r2,
        recall_at_5=r5,
        all_recall_at_5=33.3,
        answer_in_evidence=41.7,
        latency_p50_ms=12.34,
        latency_p95_ms=98.76,
        exact_match=em,
        f1=None if em is None else em + 5.0,
        short_em=None if em is None else em + 2.0,
        short_f1=None if em is None else em + 7.0,
        answer_contains=None if em is None else em + 15.0,
        abstained=None if em is None else 3.0,
        errors=0 if mode == "hybrid" else 1,
    )


def _run(dataset: str = "2wikimultihopqa") -> DatasetRun:
    questions: list[dict[str, Any]] = []
    for qid, text, gold, by_mode in _QUESTIONS:
        results: dict[str, Any] = {}
        for mode, (titles, r5) in by_mode.items():
            results[mode] = QuestionResult(
                qid=qid,
                mode=mode,
                ranked=[RankedItem(t, 1.0 / (i + 1)) for i, t in enumerate(titles)],
                titles=titles,
                recall_at_2=r5,
                recall_at_5=r5,
                all_recall_at_5=float(r5 == 1.0),
                answer_in_evidence=r5,
                latency_ms=10.0,
            ).to_dict()
        questions.append(
            {
                "id": qid,
                "question": text,
                "answer": "x",
                "aliases": [],
                "gold_titles": gold,
                "type": "compositional",
                "results": results,
            }
        )
    return DatasetRun(
        dataset=dataset,
        questions_path="questions.dev.json",
        corpus_path="corpus.json",
        db_path="db",
        n_questions=3,
        summaries={
            "hybrid": _summary("hybrid", 33.3, 50.0),
            "hybrid_ppr": _summary("hybrid_ppr", 66.7, 83.3, em=40.0),
        },
        questions=questions,
        seconds=3.5,
        build_seconds=12.0,
    )


# -- published ---------------------------------------------------------------------------


def test_published_only_for_2wiki() -> None:
    two = published_for("2WikiMultihopQA")
    assert {p.system for p in two} >= {"BM25", "HippoRAG", "IRCoT+HippoRAG", "HippoRAG 2"}
    hippo = next(p for p in two if p.system == "HippoRAG")
    assert (hippo.recall_at_2, hippo.recall_at_5, hippo.multi_step) == (71.5, 89.5, False)
    assert next(p for p in two if p.system == "IRCoT+HippoRAG").multi_step
    assert next(p for p in two if p.system == "HippoRAG 2").recall_at_2 is None
    assert sum(p.measured_here for p in two) == 1
    assert published_for("hotpotqa") == () == published_for("musique") == published_for("nope")
    assert set(PUBLISHED) == {"2wikimultihopqa", "hotpotqa", "musique"}


# -- terminal table ----------------------------------------------------------------------


def test_table_rows_numbers_and_published() -> None:
    table = format_table([_run(), _run("hotpotqa")])
    lines = table.splitlines()
    hybrid = next(line for line in lines if line.startswith("hybrid "))
    assert hybrid.split() == [
        "hybrid", "33.3", "50.0", "33.3", "41.7", "—", "—", "—", "—", "—", "—", "12.3",
        "98.8", "0",
    ]  # fmt: skip
    ppr = next(line for line in lines if line.startswith("hybrid_ppr "))
    assert ppr.split() == [
        "hybrid_ppr", "66.7", "83.3", "33.3", "41.7", "55.0", "40.0", "45.0", "42.0", "47.0",
        "3.0", "12.3", "98.8", "1",
    ]  # fmt: skip
    headers = ("R@2", "R@5", "AllR@5", "AnsInEv", "Contains", "EM", "F1", "sEM", "sF1", "Abstain")
    for header in (*headers, "p50 ms", "p95 ms", "errors"):
        assert header in lines[1]
    bm25 = next(line for line in lines if line.startswith("BM25 (published)"))
    assert bm25.split()[-2:] == ["51.8", "61.9"]
    hippo2 = next(line for line in lines if line.startswith("HippoRAG 2 (published)"))
    assert hippo2.split()[-2:] == ["—", "90.4"]
    assert any("IRCoT+HippoRAG, multi-step (published)" in line for line in lines)
    assert any(line.startswith("bm25s (stemmed) (measured here)") for line in lines)
    assert "graph contribution (hybrid_ppr − hybrid, R@5): +33.3 points" in table
    assert "published end to end: HippoRAG 2, 70B LLM reader: EM 65.0, F1 71.0" in table
    # The published rows belong to the 2Wiki block only.
    hotpot_block = table.split("\n\n")[1]
    assert hotpot_block.startswith("hotpotqa") and "(published)" not in hotpot_block
    # the end-to-end answer numbers are per dataset
    assert "published end to end: HippoRAG 2, 70B LLM reader: EM 62.7, F1 75.5" in hotpot_block


# -- failures ----------------------------------------------------------------------------


def test_failures_lowest_recall_first_with_gold_marks() -> None:
    text = format_failures(_run(), "hybrid", 2)
    assert text.index("[q2]") < text.index("[q3]")
    assert "[q1]" not in text
    q2 = text[text.index("[q2]") : text.index("[q3]")]
    assert "gold:   Aida | Giuseppe Verdi" in q2
    assert "Aida (film)" in q2 and "Aida (film) ✓" not in q2
    assert "missed: Aida | Giuseppe Verdi" in q2
    q3 = text[text.index("[q3]") :]
    assert "1. Blur ✓" in q3 and "5. Oasis" in q3 and "Oasis ✓" not in q3
    assert "missed: Oasis (band)" in q3


def test_failures_ties_in_question_order_and_top5_only() -> None:
    text = format_failures(_run(), "hybrid_ppr", 3)
    # q1 and q3 tie at 1.0: question order decides.
    assert text.index("[q2]") < text.index("[q1]") < text.index("[q3]")
    q2 = text[text.index("[q2]") : text.index("[q1]")]
    assert "1. Aida ✓" in q2
    assert "Giuseppe Verdi ✓" not in q2  # rank 6: outside the top 5
    assert "missed: Giuseppe Verdi" in q2
    assert format_failures(_run(), "hybrid", 0).count("[q") == 0
    assert "0 lowest" in format_failures(_run(), "no_such_mode", 5)


# -- Markdown ----------------------------------------------------------------------------


def test_markdown_has_published_table_and_graph_contribution(tmp_path: Path) -> None:
    run = _run()
    assert graph_contribution(run) == pytest.approx(33.3)
    path = tmp_path / "report.md"
    chart = tmp_path / "charts" / "r5.png"
    chart.parent.mkdir()
    chart.write_bytes(PNG_SIGNATURE)
    write_markdown(
        [run, _run("musique")],
        path,
        command="kg-agent eval --dataset all",
        machine="2 cores, test CPU",
        note="A note.",
        chart=chart,
    )
    md = path.read_text(encoding="utf-8")
    assert md.startswith("# ")
    assert "`kg-agent eval --dataset all`" in md and "2 cores, test CPU" in md and "A note." in md
    assert (
        "| mode | R@2 | R@5 | AllR@5 | AnsInEv | Contains | EM | F1 | sEM | sF1 | Abstain "
        "| p50 ms | p95 ms | errors |"
    ) in md
    assert "Published end to end (an LLM reads the passages): HippoRAG 2" in md
    row = "| hybrid_ppr | 66.7 | 83.3 | 33.3 | 41.7 | 55.0 | 40.0 | 45.0 | 42.0 | 47.0 | 3.0 |"
    assert row + " 12.3 | 98.8 | 1 |" in md
    assert "Published (same protocol)" in md
    assert "| system | R@2 | R@5 | source |" in md
    assert "| HippoRAG | 71.5 | 89.5 |" in md
    assert "| HippoRAG 2 | — | 90.4 |" in md
    assert "| IRCoT+HippoRAG, multi-step | 75.8 | 93.9 |" in md
    assert "measured here; our own earlier measurement" in md
    assert "3 of the 1,000 questions behind the published" in md
    base, graph = GRAPH_CONTRIBUTION
    assert f"`{graph}` R@5 − `{base}` R@5): **+33.3 points**" in md
    assert "(charts/r5.png)" in md
    musique = md[md.index("## musique") :]
    assert "| HippoRAG |" not in musique


def test_markdown_without_graph_pair_or_chart(tmp_path: Path) -> None:
    run = _run()
    del run.summaries["hybrid"]
    assert graph_contribution(run) is None
    path = tmp_path / "r.md"
    write_markdown([run], path, command="c", machine="m")
    md = path.read_text(encoding="utf-8")
    assert "Graph contribution" not in md and "![" not in md
    # Default chart: a PNG with the report's stem, linked when it exists.
    path.with_suffix(".png").write_bytes(PNG_SIGNATURE)
    write_markdown([run], path, command="c", machine="m")
    assert "(r.png)" in path.read_text(encoding="utf-8")


# -- chart -------------------------------------------------------------------------------


def test_chart_is_a_readable_png(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    import matplotlib.image as mpimg

    path = tmp_path / "out" / "recall.png"
    assert write_chart([_run(), _run("hotpotqa"), _run("musique")], path) is True
    assert path.read_bytes()[:8] == PNG_SIGNATURE
    img = mpimg.imread(path)
    assert img.shape[1] > 800 and img.shape[0] >= 500


def test_chart_without_matplotlib(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    for name in ("matplotlib", "matplotlib.figure", "matplotlib.backends.backend_agg"):
        monkeypatch.setitem(sys.modules, name, None)
    path = tmp_path / "c.png"
    with caplog.at_level("WARNING"):
        assert write_chart([_run()], path) is False
    assert not path.exists()
    assert "matplotlib" in caplog.text


# -- JSON --------------------------------------------------------------------------------


def test_json_round_trip(tmp_path: Path) -> None:
    runs = [_run(), _run("musique")]
    path = tmp_path / "results.json"
    write_json(runs, path, command="kg-agent eval", machine="m — ü")
    raw = path.read_text(encoding="utf-8")
    assert "m — ü" in raw  # ensure_ascii=False
    with path.open(encoding="utf-8") as fh:
        doc = json.load(fh)
    assert set(doc) == {"command", "machine", "created", "datasets"}
    assert doc["command"] == "kg-agent eval"
    assert doc["datasets"] == [json.loads(json.dumps(r.to_dict())) for r in runs]
    assert doc["datasets"][0]["summaries"]["hybrid_ppr"]["recall_at_5"] == 83.3
    assert doc["datasets"][0]["questions"][1]["results"]["hybrid"]["titles"][0] == "Aida (film)"


# -- machine -----------------------------------------------------------------------------


def test_machine_description_from_proc(tmp_path: Path) -> None:
    (tmp_path / "cpuinfo").write_text(
        "processor\t: 0\nmodel name\t: AMD EPYC 9654  96-Core Processor\n", encoding="utf-8"
    )
    (tmp_path / "meminfo").write_text("MemTotal:       24641536 kB\n", encoding="utf-8")
    desc = machine_description(tmp_path)
    assert "AMD EPYC 9654 96-Core Processor" in desc
    assert "23.5 GiB RAM" in desc
    assert "cores" in desc and "Python 3." in desc


def test_machine_description_without_proc(tmp_path: Path) -> None:
    desc = machine_description(tmp_path / "missing")
    assert "cores" in desc and "Python 3." in desc
    assert desc.count(",") >= 3
