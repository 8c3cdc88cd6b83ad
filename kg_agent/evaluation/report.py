"""Human-readable output of an evaluation: terminal table, failures, Markdown, chart, JSON.

Reports always put published numbers (same pool, same protocol) next to ours, so a
result is read against the literature rather than in isolation.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import os
import platform
import unicodedata
from collections.abc import Sequence
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any

from kg_agent.evaluation.published import PublishedResult, end_to_end_for, published_for
from kg_agent.evaluation.results import DatasetRun, ModeSummary

__all__ = [
    "CHART_REFERENCES",
    "COLUMNS",
    "GRAPH_CONTRIBUTION",
    "GRAPH_CONTRIBUTIONS",
    "format_failures",
    "format_table",
    "graph_contribution",
    "machine_description",
    "write_chart",
    "write_json",
    "write_markdown",
]

log = logging.getLogger(__name__)

# (baseline mode, mode with the graph): their Recall@5 difference is what the graph adds.
GRAPH_CONTRIBUTION: tuple[str, str] = ("hybrid", "hybrid_ppr")
#: Every (base, with-graph) pair reported: the PageRank rerank, and the
#: entity-seeded graph walk, each against the same hybrid retrieval.
GRAPH_CONTRIBUTIONS: tuple[tuple[str, str], ...] = (GRAPH_CONTRIBUTION, ("hybrid", "entity_graph"))
COLUMNS: tuple[str, ...] = (
    "mode", "R@2", "R@5", "AllR@5", "AnsInEv", "Contains", "EM", "F1", "sEM", "sF1",
    "Abstain", "p50 ms", "p95 ms", "errors",
)  # fmt: skip
#: What each column means, for the Markdown report.
COLUMN_NOTES = (
    "AnsInEv: the gold answer is in the top-5 evidence (questions not answered yes/no). "
    "Contains: the answer text holds the gold, over those questions. "
    "EM/F1: the short answer against the gold, every question (as published end-to-end "
    "numbers are); sEM/sF1: the same without yes/no questions. "
    'Abstain: share of questions answered "not in the graph".'
)
# Published systems drawn as reference lines on the chart (over their dataset's group only).
CHART_REFERENCES: tuple[str, ...] = ("HippoRAG", "BM25")
_DASH = "—"
_TWO_WIKI = "2wikimultihopqa"


def _num(value: float | None) -> str:
    return _DASH if value is None or math.isnan(value) else f"{value:.1f}"


def _summary_cells(s: ModeSummary) -> list[str]:
    return [
        s.mode,
        _num(s.recall_at_2),
        _num(s.recall_at_5),
        _num(s.all_recall_at_5),
        _num(s.answer_in_evidence),
        _num(s.answer_contains),
        _num(s.exact_match),
        _num(s.f1),
        _num(s.short_em),
        _num(s.short_f1),
        _num(s.abstained),
        _num(s.latency_p50_ms),
        _num(s.latency_p95_ms),
        str(s.errors),
    ]


def _published_tag(p: PublishedResult) -> str:
    return "measured here" if p.measured_here else "published"


def graph_contribution(run: DatasetRun, pair: tuple[str, str] = GRAPH_CONTRIBUTION) -> float | None:
    """Recall@5 points the graph adds (``hybrid_ppr`` − ``hybrid``), or None if either is absent."""
    base, graph = pair
    if base not in run.summaries or graph not in run.summaries:
        return None
    return run.summaries[graph].recall_at_5 - run.summaries[base].recall_at_5


def _pool_note(run: DatasetRun) -> str:
    if run.dataset == _TWO_WIKI:
        return (
            f"Our dev set is {run.n_questions} of the 1,000 questions behind the published "
            "numbers (same 6,119-passage pool): expect a few points of sampling noise."
        )
    return ""


# -- terminal ----------------------------------------------------------------------------


def format_table(runs: Sequence[DatasetRun]) -> str:
    """One fixed-width block per dataset, with that dataset's published rows beneath it."""
    blocks: list[str] = []
    for run in runs:
        rows = [_summary_cells(s) for s in run.summaries.values()]
        pub = published_for(run.dataset)
        pub_rows = [
            [f"{p.label} ({_published_tag(p)})", _num(p.recall_at_2), _num(p.recall_at_5)]
            + [""] * (len(COLUMNS) - 3)
            for p in pub
        ]
        widths = [
            max(len(r[i]) for r in [list(COLUMNS), *rows, *pub_rows]) for i in range(len(COLUMNS))
        ]

        def line(cells: list[str], widths: list[int] = widths) -> str:
            first = cells[0].ljust(widths[0])
            rest = [c.rjust(w) for c, w in zip(cells[1:], widths[1:], strict=True)]
            return "  ".join([first, *rest]).rstrip()

        rule = "-" * len(line(list(COLUMNS)))
        out = [f"{run.dataset} — {run.n_questions} questions", line(list(COLUMNS)), rule]
        out += [line(r) for r in rows]
        if pub_rows:
            out.append(rule)
            out += [line(r) for r in pub_rows]
            out.append(_pool_note(run))
        for pair in GRAPH_CONTRIBUTIONS:
            gain = graph_contribution(run, pair)
            if gain is not None:
                base, graph = pair
                out.append(f"graph contribution ({graph} − {base}, R@5): {gain:+.1f} points")
        if run.out_of_graph:
            out.append(_out_of_graph_line(run))
        e2e = end_to_end_for(run.dataset)
        if e2e is not None and any(s.exact_match is not None for s in run.summaries.values()):
            out.append(f"published end to end: {e2e[0]}: EM {e2e[1]:.1f}, F1 {e2e[2]:.1f}")
        blocks.append("\n".join(out))
    return "\n\n".join(blocks)


def _out_of_graph_line(run: DatasetRun) -> str:
    checks = run.out_of_graph or []
    if not checks:
        return ""
    mode = str(checks[0].get("mode"))
    inside = run.summaries.get(mode)
    in_graph = f"; on its own graph {_num(inside.abstained)}%" if inside is not None else ""
    where = ", ".join(f"{_num(o.get('refused'))}% on the {o.get('graph')} graph" for o in checks)
    return (
        f'out of graph: {run.dataset} questions answered "not in the graph" by {mode}: '
        f"{where}{in_graph}"
    )


def _norm_title(title: str) -> str:
    return unicodedata.normalize("NFC", title).replace("_", " ").strip().casefold()


def format_failures(run: DatasetRun, mode: str, n: int) -> str:
    """The ``n`` questions ``mode`` did worst on (lowest Recall@5, ties in question order)."""
    scored: list[tuple[float, int, dict[str, Any], dict[str, Any]]] = []
    for i, q in enumerate(run.questions):
        res = q.get("results", {}).get(mode)
        if res is not None:
            scored.append((float(res.get("recall_at_5", 0.0)), i, q, res))
    scored.sort(key=lambda t: (t[0], t[1]))
    worst = scored[: max(n, 0)]
    out = [f"{run.dataset} · {mode}: {len(worst)} lowest Recall@5 of {len(scored)} questions"]
    for rank, (r5, _, q, res) in enumerate(worst, 1):
        gold = [str(t) for t in q.get("gold_titles", [])]
        gold_norm = {_norm_title(t) for t in gold}
        top = [str(t) for t in res.get("titles", [])][:5]
        top_norm = {_norm_title(t) for t in top}
        out.append("")
        out.append(f"{rank}. [{q.get('id', '?')}] R@5 {r5:.2f}  {q.get('question', '')}")
        out.append(f"   gold:   {' | '.join(gold) if gold else _DASH}")
        if top:
            marked = [
                f"{k}. {t}{' ✓' if _norm_title(t) in gold_norm else ''}"
                for k, t in enumerate(top, 1)
            ]
            out.append(f"   top-5:  {'   '.join(marked)}")
        else:
            out.append(f"   top-5:  {_DASH}")
        missed = [t for t in gold if _norm_title(t) not in top_norm]
        out.append(f"   missed: {' | '.join(missed) if missed else _DASH}")
        if res.get("answer") is not None:
            out.append(f"   answer: {res['answer']!r} (gold {q.get('answer', '')!r})")
        if res.get("error"):
            out.append(f"   error:  {res['error']}")
    return "\n".join(out)


# -- files -------------------------------------------------------------------------------


def _md_row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"


def _md_table(header: Sequence[str], rows: Sequence[Sequence[str]], numeric: range) -> list[str]:
    align = ["---:" if i in numeric else "---" for i in range(len(header))]
    return [_md_row(header), _md_row(align), *(_md_row(r) for r in rows)]


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def write_markdown(
    runs: Sequence[DatasetRun],
    path: str | os.PathLike[str],
    *,
    command: str,
    machine: str,
    note: str = "",
    chart: str | os.PathLike[str] | None = None,
) -> None:
    """A Markdown summary to commit next to results, with published numbers beside ours.

    ``chart`` is linked when given and present; by default a PNG with the same stem as
    ``path`` is linked if it exists.
    """
    out_path = Path(path)
    lines = [
        "# kg-agent evaluation",
        "",
        f"- **Command:** `{command}`",
        f"- **Machine:** {machine}",
        f"- **Date:** {_now()}",
    ]
    if note:
        lines += ["", note]
    for run in runs:
        lines += ["", f"## {run.dataset}", ""]
        lines.append(
            f"{run.n_questions} questions; corpus `{run.corpus_path}`; "
            f"build {run.build_seconds:.0f} s, run {run.seconds:.0f} s."
        )
        lines += [
            "",
            *_md_table(
                COLUMNS, [_summary_cells(s) for s in run.summaries.values()], range(1, len(COLUMNS))
            ),
        ]
        if any(s.exact_match is not None for s in run.summaries.values()):
            lines += ["", COLUMN_NOTES]
            e2e = end_to_end_for(run.dataset)
            if e2e is not None:
                lines += [
                    "",
                    f"Published end to end (an LLM reads the passages): {e2e[0]}, "
                    f"EM {e2e[1]:.1f}, F1 {e2e[2]:.1f} (1,000-question pool).",
                ]
        described = [s for s in run.summaries.values() if s.description]
        if described:
            lines += ["", *(f"- `{s.mode}`: {s.description}" for s in described)]
        if run.out_of_graph:
            line = _out_of_graph_line(run).replace("out of graph:", "Out of graph:", 1)
            lines += ["", f"**{line}**"]
        for pair in GRAPH_CONTRIBUTIONS:
            gain = graph_contribution(run, pair)
            if gain is not None:
                base, graph = pair
                lines += [
                    "",
                    f"**Graph contribution** (`{graph}` R@5 − `{base}` R@5): "
                    f"**{gain:+.1f} points**.",
                ]
        pub = published_for(run.dataset)
        lines += ["", "### Published (same protocol)", ""]
        if pub:
            rows = [
                [
                    p.label,
                    _num(p.recall_at_2),
                    _num(p.recall_at_5),
                    p.source + (f"; {p.note}" if p.note else ""),
                ]
                for p in pub
            ]
            lines += _md_table(("system", "R@2", "R@5", "source"), rows, range(1, 3))
            lines += ["", _pool_note(run)]
        else:
            lines.append(
                "None listed: published numbers for this dataset are on 1,000-question pools, "
                "not comparable with this small dev pool."
            )
    chart_path = Path(chart) if chart is not None else out_path.with_suffix(".png")
    if chart_path.is_file():
        rel = os.path.relpath(chart_path.resolve(), out_path.resolve().parent)
        lines += ["", "## Chart", "", f"![Recall@5 per mode]({Path(rel).as_posix()})"]
    out_path.parent.mkdir(parents=True, exist_ok=True)
    out_path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def write_chart(runs: Sequence[DatasetRun], path: str | os.PathLike[str]) -> bool:
    """Recall@5 bars per mode, grouped by dataset; False if matplotlib is not installed."""
    try:
        # Agg canvas directly, not pyplot: no global backend switch, no display needed.
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        log.warning("matplotlib is not installed (pip install 'kg-agent[plot]'); no chart written")
        return False

    modes: list[str] = []
    for run in runs:
        modes += [m for m in run.summaries if m not in modes]
    n_modes = max(len(modes), 1)
    width = 0.8 / n_modes

    fig = Figure(figsize=(12, 6), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    colors = [f"C{i % 10}" for i in range(len(modes))]
    for j, mode in enumerate(modes):
        xs = [i + (j - (n_modes - 1) / 2) * width for i in range(len(runs))]
        ys = [r.summaries[mode].recall_at_5 if mode in r.summaries else math.nan for r in runs]
        bars = ax.bar(xs, ys, width * 0.95, label=mode, color=colors[j])
        ax.bar_label(bars, labels=["" if math.isnan(y) else f"{y:.1f}" for y in ys], fontsize=8)

    for i, run in enumerate(runs):
        refs = {p.system: p for p in published_for(run.dataset)}
        for k, name in enumerate(CHART_REFERENCES):
            ref = refs.get(name)
            if ref is None or ref.recall_at_5 is None:
                continue
            x0, x1 = i - 0.45, i + 0.45
            # Drawn above the bars, label on a light box, so both stay readable over bars.
            ax.hlines(ref.recall_at_5, x0, x1, colors="0.2", linestyles="dashed", zorder=4)
            ax.text(
                x1,
                ref.recall_at_5 + 0.6,
                f"{name} (published) {ref.recall_at_5:.1f}",
                ha="right",
                va="bottom",
                fontsize=9,
                color="0.15",
                zorder=5 + k,
                bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.8, "pad": 1.5},
            )

    ax.set_xticks(range(len(runs)))
    ax.set_xticklabels([f"{r.dataset}\n({r.n_questions} questions)" for r in runs])
    ax.set_xlim(-0.6, max(len(runs), 1) - 0.4)
    ax.set_ylim(0, 105)
    ax.set_ylabel("passage Recall@5 (%)")
    ax.set_title("Recall@5 per mode (dashed: published, HippoRAG protocol)")
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=9, title="mode")
    fig.tight_layout()
    out_path = Path(path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out_path, format="png", dpi=100)
    return True


def write_json(
    runs: Sequence[DatasetRun], path: str | os.PathLike[str], *, command: str, machine: str
) -> None:
    """Everything, per question and per mode, so later reports need not re-run anything."""
    doc = {
        "command": command,
        "machine": machine,
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "datasets": [run.to_dict() for run in runs],
    }
    out_path = Path(path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    with out_path.open("w", encoding="utf-8") as fh:
        json.dump(doc, fh, indent=1, ensure_ascii=False)
        fh.write("\n")


# -- machine -----------------------------------------------------------------------------


def _cpu_model(cpuinfo: Path) -> str:
    try:
        for line in cpuinfo.read_text(encoding="utf-8", errors="replace").splitlines():
            key, _, value = line.partition(":")
            if key.strip() in ("model name", "Hardware", "cpu model") and value.strip():
                return " ".join(value.split())
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def _ram_gib(meminfo: Path) -> float | None:
    try:
        for line in meminfo.read_text(encoding="utf-8").splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) / 1024**2  # kB
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 1024**3
    except (AttributeError, OSError, ValueError):
        return None


def machine_description(proc: str | os.PathLike[str] = "/proc") -> str:
    """Where numbers were measured (latencies mean little without it); never raises."""
    root = Path(proc)
    cores = os.cpu_count()
    parts = [f"{cores} cores" if cores else "? cores", _cpu_model(root / "cpuinfo")]
    ram = _ram_gib(root / "meminfo")
    if ram is not None:
        parts.append(f"{ram:.1f} GiB RAM")
    parts.append(f"{platform.system() or 'unknown OS'} {platform.release()}".strip())
    parts.append(f"Python {platform.python_version()}")
    with contextlib.suppress(metadata.PackageNotFoundError):  # no import: torch loads slowly
        parts.append(f"torch {metadata.version('torch')}")
    return ", ".join(parts)
