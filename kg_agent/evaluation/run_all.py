"""Evaluate several datasets in one go and write the reports.

The one orchestration behind ``kg-agent eval`` and ``scripts/eval_multihop.py``:
check the modes and load every dataset first (so a typo fails in a second, not
after an hour of embedding), give each dataset its graph, run it, and rewrite
``eval.json``, ``eval.md`` and ``recall_at_5.png`` after each dataset, so an
interrupted run keeps what it finished.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from kg_agent.embedding import Embedder
from kg_agent.evaluation.datasets import EvalDataset, load_dataset
from kg_agent.evaluation.llm_setup import LLMSetup
from kg_agent.evaluation.modes import MODES, parse_modes
from kg_agent.evaluation.report import (
    machine_description,
    write_chart,
    write_json,
    write_markdown,
)
from kg_agent.evaluation.results import DatasetRun
from kg_agent.evaluation.runner import out_of_graph, run_dataset
from kg_agent.exceptions import InvalidArgumentError
from kg_agent.ingest.embed_cache import default_cache_dir

__all__ = [
    "CHART_NAME",
    "DEFAULT_OUT_DIR",
    "JSON_NAME",
    "MARKDOWN_NAME",
    "Evaluation",
    "db_path_for",
    "default_db_dir",
    "evaluate",
    "load_datasets",
    "write_outputs",
]

DEFAULT_OUT_DIR = Path("eval_out")
JSON_NAME = "eval.json"
MARKDOWN_NAME = "eval.md"
CHART_NAME = "recall_at_5.png"

PathLike = str | os.PathLike[str]


@dataclass(slots=True)
class Evaluation:
    """What :func:`evaluate` ran and wrote; ``chart`` is None without matplotlib."""

    runs: list[DatasetRun]
    json: Path
    markdown: Path
    chart: Path | None
    machine: str
    seconds: float = 0.0

    @property
    def written(self) -> list[Path]:
        """The files written, in the order a person would open them."""
        return [self.json, self.markdown, *([self.chart] if self.chart is not None else [])]


def default_db_dir() -> Path:
    """``$KG_AGENT_CACHE_DIR/eval`` (default ``~/.cache/kg-agent/eval``)."""
    return default_cache_dir() / "eval"


def db_path_for(
    dataset: EvalDataset, *, db: PathLike | None = None, db_dir: PathLike | None = None
) -> Path:
    """``db`` itself when given, else ``<db_dir or the default dir>/<dataset>.kuzu``."""
    if db is not None:
        return Path(db)
    return Path(db_dir if db_dir is not None else default_db_dir()) / f"{dataset.name}.kuzu"


def load_datasets(
    specs: Sequence[PathLike],
    *,
    corpus: PathLike | None = None,
    limit: int | None = None,
    data_dir: PathLike | None = None,
) -> list[EvalDataset]:
    """Every dataset, read and checked now; a dataset named twice is run once."""
    if not specs:
        raise InvalidArgumentError("no dataset to evaluate")
    if corpus is not None and len(specs) > 1:
        raise InvalidArgumentError("--corpus goes with one dataset, not several")
    datasets: dict[tuple[str, Path], EvalDataset] = {}
    for spec in specs:
        ds = load_dataset(spec, corpus=corpus, limit=limit, data_dir=data_dir)
        datasets.setdefault((ds.name, ds.questions_path.resolve()), ds)
    names = [ds.name for ds in datasets.values()]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise InvalidArgumentError(
            f"two question files of the same dataset ({', '.join(twice)}) would share "
            "one database; evaluate them one at a time with their own --db"
        )
    return list(datasets.values())


def write_outputs(
    runs: Sequence[DatasetRun],
    out_dir: PathLike,
    *,
    command: str,
    machine: str,
    note: str = "",
) -> tuple[Path, Path, Path | None]:
    """``eval.json``, ``recall_at_5.png`` (if matplotlib is there) and ``eval.md``."""
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise InvalidArgumentError(f"--out {out} is a file, not a folder")
    json_path, md_path, chart_path = out / JSON_NAME, out / MARKDOWN_NAME, out / CHART_NAME
    write_json(runs, json_path, command=command, machine=machine)
    chart = chart_path if write_chart(runs, chart_path) else None
    if chart is None and chart_path.exists():
        chart_path.unlink()  # a chart of an earlier run would be linked as this one's
    write_markdown(runs, md_path, command=command, machine=machine, note=note, chart=chart_path)
    return json_path, md_path, chart


def _note(limit: int | None) -> str:
    if limit is None:
        return ""
    return f"First {limit} questions of each dataset (`--limit {limit}`): a smoke run, not a score."


def evaluate(
    specs: Sequence[PathLike],
    *,
    command: str,
    db: PathLike | None = None,
    db_dir: PathLike | None = None,
    out_dir: PathLike = DEFAULT_OUT_DIR,
    modes: str | Sequence[str] | None = "default",
    limit: int | None = None,
    corpus: PathLike | None = None,
    data_dir: PathLike | None = None,
    model: str | None = None,
    embedder: Embedder | None = None,
    progress: bool = True,
    llm: LLMSetup | None = None,
) -> Evaluation:
    """Run every dataset under every mode and write the reports into ``out_dir``.

    ``specs`` are dataset names (``2wiki``, ``hotpotqa``, ``musique``) or question
    files. The graph of a dataset is ``db`` (one dataset only), else
    ``<db_dir>/<dataset>.kuzu`` (``db_dir`` defaults to :func:`default_db_dir`);
    it is built from the dataset's corpus when missing and reused otherwise.
    ``modes`` is a comma list, ``"all"``, ``"default"`` or a list of names.
    ``command`` is recorded in the reports, with :func:`machine_description`.
    ``llm``: a model server for the modes' model steps (default: every mode offline).
    """
    t0 = time.perf_counter()
    if db is not None and db_dir is not None:
        raise InvalidArgumentError("give a database path or a database folder, not both")
    if modes is not None and not isinstance(modes, str):
        if not modes:
            raise InvalidArgumentError("no modes to run")
        modes = ",".join(modes)
    mode_names = parse_modes(modes)
    datasets = load_datasets(specs, corpus=corpus, limit=limit, data_dir=data_dir)
    if db is not None and len(datasets) > 1:  # several datasets: --db names their folder
        if Path(db).is_file():
            raise InvalidArgumentError(
                f"--db {db} is a database file; with several datasets it names a folder"
            )
        db, db_dir = None, db
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise InvalidArgumentError(f"--out {out} is a file, not a folder")
    machine = machine_description()
    embedder = embedder or Embedder(model)
    runs: list[DatasetRun] = []
    paths: tuple[Path, Path, Path | None] = (out / JSON_NAME, out / MARKDOWN_NAME, None)
    for ds in datasets:
        db_path = db_path_for(ds, db=db, db_dir=db_dir)
        runs.append(
            run_dataset(ds, str(db_path), mode_names, embedder=embedder, progress=progress, llm=llm)
        )
        paths = write_outputs(runs, out, command=command, machine=machine, note=_note(limit))
    answering = [m for m in mode_names if MODES[m].answers]
    if len(runs) >= 2 and answering:
        # each dataset's questions on every other dataset's graph: all should be refused
        for ds, run in zip(datasets, runs, strict=True):
            run.out_of_graph = [
                out_of_graph(
                    ds,
                    other.dataset,
                    other.db_path,
                    answering[0],
                    embedder=embedder,
                    progress=progress,
                    llm=llm,
                )
                for other in runs
                if other is not run
            ]
        paths = write_outputs(runs, out, command=command, machine=machine, note=_note(limit))
    json_path, md_path, chart = paths
    return Evaluation(
        runs=runs,
        json=json_path,
        markdown=md_path,
        chart=chart,
        machine=machine,
        seconds=time.perf_counter() - t0,
    )
