"""Retrieval and answer evaluation on the multi-hop QA sets (2WikiMultihopQA, HotpotQA, MuSiQue).

    from kg_agent.evaluation import evaluate, format_table

    ev = evaluate(["2wiki"], command="my notebook", modes="bm25,hybrid", limit=20)
    print(format_table(ev.runs))

:func:`evaluate` is what ``kg-agent eval`` and ``scripts/eval_multihop.py`` run;
:func:`load_dataset` and :func:`run_dataset` are its parts, :data:`MODES` the
registry of retrieval configurations (:func:`register_mode` adds one).
"""

from __future__ import annotations

from kg_agent.evaluation.datasets import (
    DATASETS,
    EvalDataset,
    EvalQuestion,
    default_data_dir,
    detect_dataset,
    load_dataset,
    resolve_dataset,
)
from kg_agent.evaluation.metrics import (
    all_recall_at_k,
    answer_in_text,
    best_exact_match,
    best_f1,
    distinct_titles,
    exact_match,
    normalize_answer,
    percentile,
    recall_at_k,
    token_f1,
)
from kg_agent.evaluation.modes import (
    DEFAULT_MODES,
    MODES,
    EvalMode,
    ModeOutput,
    parse_modes,
    register_mode,
)
from kg_agent.evaluation.published import PUBLISHED, PublishedResult, published_for
from kg_agent.evaluation.report import (
    format_failures,
    format_table,
    machine_description,
    write_chart,
    write_json,
    write_markdown,
)
from kg_agent.evaluation.results import DatasetRun, ModeSummary, QuestionResult, RankedItem
from kg_agent.evaluation.run_all import (
    Evaluation,
    db_path_for,
    default_db_dir,
    evaluate,
    load_datasets,
    write_outputs,
)
from kg_agent.evaluation.runner import run_dataset

__all__ = [
    "DATASETS",
    "DEFAULT_MODES",
    "MODES",
    "PUBLISHED",
    "DatasetRun",
    "EvalDataset",
    "EvalMode",
    "EvalQuestion",
    "Evaluation",
    "ModeOutput",
    "ModeSummary",
    "PublishedResult",
    "QuestionResult",
    "RankedItem",
    "all_recall_at_k",
    "answer_in_text",
    "best_exact_match",
    "best_f1",
    "db_path_for",
    "default_data_dir",
    "default_db_dir",
    "detect_dataset",
    "distinct_titles",
    "evaluate",
    "exact_match",
    "format_failures",
    "format_table",
    "load_dataset",
    "load_datasets",
    "machine_description",
    "normalize_answer",
    "parse_modes",
    "percentile",
    "published_for",
    "recall_at_k",
    "register_mode",
    "resolve_dataset",
    "run_dataset",
    "token_f1",
    "write_chart",
    "write_json",
    "write_markdown",
    "write_outputs",
]
