"""What the training scripts share (``train_fact_ranker.py``, ``train_grounding.py``,
``train_sentence_ranker.py``): their options, the samples read through the agent or from
the committed file, and the ``--check`` / write step that keeps the committed model
reproducible."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

QUESTIONS = ROOT / "tests" / "questions" / "enwiki_sample.json"

S = TypeVar("S")


def same_candidates(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Whether two question-candidate samples (features and labels) are equal."""
    import numpy as np

    return a.keys() == b.keys() and all(
        np.array_equal(a[q].x, b[q].x) and np.array_equal(a[q].y, b[q].y) for q in a
    )


class Model(Protocol):
    def to_json(self) -> dict[str, Any]: ...
    def save(self, path: str | Path) -> None: ...


@dataclass(frozen=True)
class Training(Generic[S]):
    """One model's fit: what it reads from the agent (``collect``), how its samples are
    kept (``load``/``save``/``same``), the fit and the line that reports it."""

    read: str  # what is read per question, for the progress line: "candidates"
    samples: Path
    out: Path
    collect: Callable[[Any, list[Any], Callable[[int], None]], S]
    load: Callable[[Path], S]
    save: Callable[[Path, S], None]
    same: Callable[[S, S], bool]
    fit: Callable[[S, list[Any], dict[str, Any]], Model]
    report: Callable[[Model, Path], str]


def run(training: Training[S], doc: str | None, argv: list[str] | None) -> int:
    from kg_agent.agent import KnowledgeGraphAgent
    from kg_agent.evaluation.trust import load_plain
    from kg_agent.progress import Progress

    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--db", help="the English sample's graph, with vectors")
    ap.add_argument(
        "--samples", default=str(training.samples), help=f"the {training.read} read (numbers)"
    )
    ap.add_argument(
        "--from-samples", action="store_true", help="fit from --samples, without a graph"
    )
    ap.add_argument("--questions", default=str(QUESTIONS))
    ap.add_argument("--out", default=str(training.out))
    ap.add_argument("--check", action="store_true", help="compare with --out, write nothing")
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args(argv)

    questions = load_plain(args.questions)
    samples_path = Path(args.samples)
    if args.from_samples:
        samples = training.load(samples_path)
    elif not args.db:
        ap.error("--db is required (or --from-samples)")
    else:
        bar = Progress(
            training.read, total=len(questions), unit="questions", enabled=not args.quiet
        )
        with KnowledgeGraphAgent(args.db, offline=True) as agent:
            if not agent.components.dense.enabled:
                print(f"error: {args.db} has no vectors: load it with embeddings", file=sys.stderr)
                return 2
            samples = training.collect(agent, questions, bar.set)
        bar.close()
        if args.check:
            if not training.same(training.load(samples_path), samples):
                print(f"{samples_path} differs from the {training.read} read", file=sys.stderr)
                return 1
        else:
            training.save(samples_path, samples)
    model = training.fit(samples, questions, {"set": Path(args.questions).name})
    fitted = model.to_json()
    out = Path(args.out)
    if args.check:
        if json.loads(out.read_text(encoding="utf-8")) != fitted:
            print(f"{out} differs from what the script fits:", file=sys.stderr)
            print(json.dumps(fitted, indent=1), file=sys.stderr)
            return 1
        print(f"{out}: reproduced")
        return 0
    model.save(out)
    print(training.report(model, out))
    return 0
