"""Fit the fact ranker on plain questions and write its weights (the committed
``kg_agent/data/fact_ranker.json`` is this script's output).

    SAMPLE=../shared/data/wiki/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2
    .venv/bin/kg-agent load "$SAMPLE" --db enwiki.kuzu
    .venv/bin/python scripts/train_fact_ranker.py --db enwiki.kuzu

The graph needs its vectors (the with-embedder weights use the embedder's
similarities). The candidates read from it are saved (numbers only) to ``--samples``,
committed beside the questions: ``--from-samples`` fits from that file without a graph,
which is what the test of the committed model runs. ``--check`` fits without writing
and exits 1 when the weights or the samples differ from the files.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _training import ROOT, Training, run

SAMPLES = ROOT / "tests" / "questions" / "enwiki_sample.fact_candidates.json.gz"


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    import numpy as np

    return a.keys() == b.keys() and all(
        np.array_equal(a[q].x, b[q].x.round(4)) and np.array_equal(a[q].y, b[q].y) for q in a
    )


def _report(ranker: Any, out: Path) -> str:
    t = ranker.trained_on
    return (
        f"wrote {out}: {t['with_candidates']} questions with candidates, {t['candidates']} "
        f"candidates; first right out of fold {t['first_candidate_right_out_of_fold']}; "
        f"show_at {ranker.show_at:.3f}"
    )


def main(argv: list[str] | None = None) -> int:
    from kg_agent.evaluation.fact_training import (
        collect,
        load_samples,
        save_samples,
        train_ranker,
    )
    from kg_agent.retrieval.fact_ranker import DEFAULT_PATH

    training = Training(
        read="candidates",
        samples=SAMPLES,
        out=DEFAULT_PATH,
        collect=lambda agent, qs, progress: collect(agent, qs, progress=progress),
        load=load_samples,
        save=save_samples,
        same=_same,
        fit=lambda samples, qs, note: train_ranker(samples, qs, note=note),
        report=_report,
    )
    return run(training, __doc__, argv)


if __name__ == "__main__":
    sys.exit(main())
