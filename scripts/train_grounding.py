"""Fit the grounding model on plain questions and write it (the committed
``kg_agent/data/grounding_model.json`` is this script's output).

    SAMPLE=../shared/data/wiki/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2
    .venv/bin/kg-agent load "$SAMPLE" --db enwiki.kuzu
    .venv/bin/python scripts/train_grounding.py --db enwiki.kuzu

The graph needs its vectors (the model reads the search's cosines). The features read
from it are saved (numbers only) to ``--samples``, committed beside the questions:
``--from-samples`` fits from that file without a graph, which is what the test of the
committed model runs. ``--check`` fits without writing and exits 1 when the model or
the samples differ from the files.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _training import ROOT, Training, run

SAMPLES = ROOT / "tests" / "questions" / "enwiki_sample.grounding.json.gz"


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    import numpy as np

    return a.keys() == b.keys() and all(np.array_equal(a[q], b[q]) for q in a)


def _report(model: Any, out: Path) -> str:
    t = model.trained_on
    return (
        f"wrote {out}: {t['questions']} questions ({t['unanswerable']} unanswerable); out of "
        f"fold {100 * t['out_of_fold_unanswerable_refused']:.1f} % of the unanswerable refused, "
        f"{t['out_of_fold_answerable_refused']} answerable; refuse_at {model.refuse_at:.3f}"
    )


def main(argv: list[str] | None = None) -> int:
    from kg_agent.evaluation.grounding_training import (
        collect_grounding,
        load_grounding_samples,
        save_grounding_samples,
        train_grounding,
    )
    from kg_agent.retrieval.grounding_model import DEFAULT_PATH

    training = Training(
        read="features",
        samples=SAMPLES,
        out=DEFAULT_PATH,
        collect=lambda agent, qs, progress: collect_grounding(agent, qs, progress=progress),
        load=load_grounding_samples,
        save=save_grounding_samples,
        same=_same,
        fit=lambda samples, qs, note: train_grounding(samples, qs, note=note),
        report=_report,
    )
    return run(training, __doc__, argv)


if __name__ == "__main__":
    sys.exit(main())
