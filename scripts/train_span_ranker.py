"""Fit the span ranker on plain questions and write its weights (the committed
``kg_agent/data/span_ranker.json`` is this script's output).

    SAMPLE=../shared/data/wiki/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2
    .venv/bin/kg-agent load "$SAMPLE" --db enwiki.kuzu
    .venv/bin/python scripts/train_span_ranker.py --db enwiki.kuzu

Reading the candidates needs spaCy's English model (set-up installs it). They are saved
(features and labels, numbers only) to ``--samples``, committed beside the questions:
``--from-samples`` fits from that file without a graph or spaCy, which is what the test of
the committed model runs. ``--check`` fits without writing and exits 1 when the weights
or the samples differ from the files.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _training import ROOT, Training, run, same_candidates

SAMPLES = ROOT / "tests" / "questions" / "enwiki_sample.spans.json.gz"


def _report(model: Any, out: Path) -> str:
    t = model.trained_on
    return (
        f"wrote {out}: {t['questions']} questions, {t['candidates']} candidates "
        f"({t['with_the_gold']} questions have a right one); out of fold the best is right "
        f"for {t['out_of_fold_best_right']}, {t['out_of_fold_shown']} would be in bold "
        f"(from confidence {model.show_at}), {t['out_of_fold_shown_right']} of them right"
    )


def main(argv: list[str] | None = None) -> int:
    from kg_agent.answering.span_ranker import DEFAULT_PATH
    from kg_agent.evaluation.span_training import (
        collect_spans,
        load_span_samples,
        save_span_samples,
        train_spans,
    )
    from kg_agent.language.parser import english_parser

    reads = "--from-samples" not in (argv if argv is not None else sys.argv[1:])
    if reads and english_parser() is None:
        print("error: spaCy's English model is not installed (scripts/setup.sh)", file=sys.stderr)
        return 2
    training = Training(
        read="candidates",
        samples=SAMPLES,
        out=DEFAULT_PATH,
        collect=lambda agent, qs, progress: collect_spans(agent, qs, progress=progress),
        load=load_span_samples,
        save=save_span_samples,
        same=same_candidates,
        fit=lambda samples, qs, note: train_spans(samples, qs, note=note),
        report=_report,
    )
    return run(training, __doc__, argv)


if __name__ == "__main__":
    sys.exit(main())
