"""Run a dataset's questions through each mode and score them.

The graph for the dataset's corpus is built on first use and reused after
(a load of the same corpus is skipped by fingerprint; embeddings are cached
across runs), so a second run only pays for the questions.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kg_agent.embedding import Embedder
from kg_agent.evaluation.datasets import EvalDataset, EvalQuestion
from kg_agent.evaluation.llm_setup import LLMSetup
from kg_agent.evaluation.metrics import (
    all_recall_at_k,
    answer_in_text,
    best_exact_match,
    best_f1,
    distinct_titles,
    percentile,
    recall_at_k,
)
from kg_agent.evaluation.modes import MODES, ModeOutput
from kg_agent.evaluation.results import DatasetRun, ModeSummary, QuestionResult, RankedItem
from kg_agent.exceptions import (
    InvalidArgumentError,
    KGAgentError,
    SchemaMismatchError,
    one_line,
)
from kg_agent.ingest.pipeline import LoadOptions, load_fingerprint, load_source
from kg_agent.pipeline import GraphComponents
from kg_agent.progress import Progress
from kg_agent.store import GraphStore

__all__ = ["ensure_graph", "evaluate_question", "out_of_graph", "run_dataset", "summarise"]

log = logging.getLogger(__name__)

#: Answer-in-evidence reads the text of the top this-many distinct passages,
#: the same budget Recall@5 is measured on.
EVIDENCE_PASSAGES = 5
RANKED_KEPT = 20  # ranked items stored per question and mode in the JSON


def ensure_graph(
    corpus: Path, db_path: str, *, embedder: Embedder, progress: bool = True
) -> tuple[float, bool]:
    """Build the graph for ``corpus`` at ``db_path`` unless it is there; (seconds, built)."""
    options = LoadOptions(progress=progress)
    if Path(db_path).exists():
        try:
            store = GraphStore.open(db_path, read_only=True)
        except SchemaMismatchError:  # built by an earlier kg-agent: upgrade it in place
            from kg_agent.ingest.pipeline import reindex

            reindex(db_path, progress=progress)
            store = GraphStore.open(db_path, read_only=True)
        with store:
            loads = store.loads()
        sources = [str(r.get("source", "")) for r in loads]
        fp = load_fingerprint(corpus, embedder.name, options)
        if any(r.get("fingerprint") == fp for r in loads):
            return 0.0, False  # already built: no write lock, so readers may share it
        names = {os.path.basename(s) for s in sources}
        if sources and corpus.name not in names:
            raise InvalidArgumentError(
                f"{db_path} holds other sources ({', '.join(sorted(names))}), not "
                f"{corpus.name}: give the eval its own --db"
            )
    t0 = time.perf_counter()
    report = load_source(corpus, db_path, embedder=embedder, options=LoadOptions(progress=progress))
    return time.perf_counter() - t0, not report.skipped


def evaluate_question(
    q: EvalQuestion, mode: str, out: ModeOutput | None, latency_s: float, error: str | None
) -> QuestionResult:
    """Score one mode's output on one question."""
    evidence = out.evidence if out is not None else []
    titles = distinct_titles(e.title for e in evidence)
    top = set(titles[:EVIDENCE_PASSAGES])
    text = " ".join(e.content for e in evidence if e.title in top)
    result = QuestionResult(
        qid=q.qid,
        mode=mode,
        ranked=[
            RankedItem(e.title, round(float(e.score), 6), e.section_id)
            for e in evidence[:RANKED_KEPT]
        ],
        titles=titles[:RANKED_KEPT],
        recall_at_2=recall_at_k(titles, q.gold_titles, 2),
        recall_at_5=recall_at_k(titles, q.gold_titles, 5),
        all_recall_at_5=all_recall_at_k(titles, q.gold_titles, 5),
        answer_in_evidence=answer_in_text(q.answers, text),
        latency_ms=round(latency_s * 1000.0, 3),
        error=error,
        extra=dict(out.extra) if out is not None else {},
    )
    if out is not None and out.answer is not None:
        short = out.short_answer or ""
        result.answer = out.answer
        result.short_answer = out.short_answer
        result.exact_match = best_exact_match(short, q.answers)
        result.f1 = best_f1(short, q.answers)
        result.answer_contains = answer_in_text(q.answers, out.answer)
        result.abstained = not out.answerable
    return result


def _yes_no(q: EvalQuestion) -> bool:
    return q.answer.strip().lower() in ("yes", "no")


def _mean_pct(values: Sequence[float]) -> float:
    return round(100.0 * sum(values) / len(values), 2) if values else math.nan


def summarise(
    mode: str, results: Sequence[QuestionResult], questions: Sequence[EvalQuestion]
) -> ModeSummary:
    """Averages in percent; answer-in-evidence leaves out yes/no questions."""
    by_id = {q.qid: q for q in questions}
    lat = [r.latency_ms for r in results if r.error is None]
    textual = [r.answer_in_evidence for r in results if not _yes_no(by_id[r.qid])]
    answered = [r for r in results if r.exact_match is not None]
    open_ended = [r for r in answered if not _yes_no(by_id[r.qid])]
    # the answer can only hold a gold that retrieval put in front of it
    reachable = [r for r in open_ended if r.answer_in_evidence]
    return ModeSummary(
        mode=mode,
        description=MODES[mode].description if mode in MODES else "",
        n=len(results),
        recall_at_2=_mean_pct([r.recall_at_2 for r in results]),
        recall_at_5=_mean_pct([r.recall_at_5 for r in results]),
        all_recall_at_5=_mean_pct([r.all_recall_at_5 for r in results]),
        answer_in_evidence=_mean_pct(textual),
        latency_p50_ms=round(percentile(lat, 50), 2),
        latency_p95_ms=round(percentile(lat, 95), 2),
        exact_match=_mean_pct([r.exact_match or 0.0 for r in answered]) if answered else None,
        f1=_mean_pct([r.f1 or 0.0 for r in answered]) if answered else None,
        short_em=_mean_pct([r.exact_match or 0.0 for r in open_ended]) if open_ended else None,
        short_f1=_mean_pct([r.f1 or 0.0 for r in open_ended]) if open_ended else None,
        answer_contains=(
            _mean_pct([r.answer_contains or 0.0 for r in reachable]) if reachable else None
        ),
        abstained=_mean_pct([1.0 if r.abstained else 0.0 for r in answered]) if answered else None,
        errors=sum(1 for r in results if r.error is not None),
    )


def run_dataset(
    dataset: EvalDataset,
    db_path: str,
    modes: Sequence[str],
    *,
    embedder: Embedder | None = None,
    progress: bool = True,
    llm: LLMSetup | None = None,
) -> DatasetRun:
    """Build/reuse the graph, run every question under every mode, summarise.
    ``llm``: a model server for the modes' model steps (else every mode is offline)."""
    if not modes:
        raise InvalidArgumentError("no modes to run")
    unknown = [m for m in modes if m not in MODES]
    if unknown:
        raise InvalidArgumentError(f"unknown mode(s): {', '.join(unknown)}")
    t_start = time.perf_counter()
    embedder = embedder or Embedder()
    build_s, _ = ensure_graph(dataset.corpus_path, db_path, embedder=embedder, progress=progress)
    store = GraphStore.open(db_path, read_only=True)
    per_mode: dict[str, list[QuestionResult]] = {m: [] for m in modes}
    try:
        components = GraphComponents(store, embedder, llm=llm.client if llm else None)
        for mode in modes:
            runner = MODES[mode].build(components, llm.fields if llm else None)
            if dataset.questions:
                # one untimed warm-up: lazy set-up (model, matrix, entity automaton)
                # must not land in the first question's latency
                with contextlib.suppress(KGAgentError):
                    runner(dataset.questions[0].question)
            meter = llm.meter_for(mode) if llm else None  # the questions' calls alone
            bar = Progress(
                f"{dataset.name} · {mode}",
                total=len(dataset.questions),
                unit="questions",
                enabled=progress,
            )
            recall_sum = 0.0
            for i, q in enumerate(dataset.questions):
                out: ModeOutput | None = None
                error: str | None = None
                t0 = time.perf_counter()
                try:
                    out = runner(q.question)
                except KGAgentError as exc:
                    error = one_line(exc)
                    log.warning("%s on %s: %s", mode, q.qid, error)
                latency = time.perf_counter() - t0
                res = evaluate_question(q, mode, out, latency, error)
                per_mode[mode].append(res)
                recall_sum += res.recall_at_5
                bar.update(extra=f"R@5 {100 * recall_sum / (i + 1):.1f}")
            bar.close()
            if llm is not None and meter is not None:
                llm.usage[mode] = meter.as_dict()
    finally:
        store.close()
    summaries = {m: summarise(m, per_mode[m], dataset.questions) for m in modes}
    questions: list[dict[str, Any]] = []
    for i, q in enumerate(dataset.questions):
        questions.append(
            {
                "id": q.qid,
                "question": q.question,
                "answer": q.answer,
                "aliases": list(q.aliases),
                "gold_titles": list(q.gold_titles),
                "type": q.qtype,
                "results": {m: per_mode[m][i].to_dict() for m in modes},
            }
        )
    return DatasetRun(
        dataset=dataset.name,
        questions_path=str(dataset.questions_path),
        corpus_path=str(dataset.corpus_path),
        db_path=str(db_path),
        n_questions=len(dataset.questions),
        summaries=summaries,
        questions=questions,
        seconds=time.perf_counter() - t_start,
        build_seconds=build_s,
        llm=llm.report() if llm is not None else None,
    )


def out_of_graph(
    dataset: EvalDataset,
    graph_name: str,
    db_path: str,
    mode: str,
    *,
    embedder: Embedder,
    progress: bool = True,
    llm: LLMSetup | None = None,
) -> dict[str, Any]:
    """Ask ``dataset``'s questions of another dataset's graph (``db_path``) with the
    answering ``mode``: each answer should be "not in the graph"."""
    store = GraphStore.open(db_path, read_only=True)
    refused = 0
    try:
        components = GraphComponents(store, embedder, llm=llm.client if llm else None)
        runner = MODES[mode].build(components, llm.fields if llm else None)
        bar = Progress(
            f"{dataset.name} on the {graph_name} graph",
            total=len(dataset.questions),
            unit="questions",
            enabled=progress,
        )
        for q in dataset.questions:
            try:
                out = runner(q.question)
                refused += 0 if out.answerable else 1
            except KGAgentError as exc:
                log.warning("%s on %s (out of graph): %s", mode, q.qid, one_line(exc))
            bar.update()
        bar.close()
    finally:
        store.close()
    n = len(dataset.questions)
    return {
        "graph": graph_name,
        "mode": mode,
        "n": n,
        "refused": _mean_pct([1.0] * refused + [0.0] * (n - refused)),
    }
