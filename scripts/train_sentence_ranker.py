"""Fit the sentence ranker on plain questions and write its weights (the committed
``kg_agent/data/sentence_ranker.json`` is this script's output).

    SAMPLE=../shared/data/wiki/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2
    .venv/bin/kg-agent load "$SAMPLE" --db enwiki.kuzu
    .venv/bin/python scripts/train_sentence_ranker.py --db enwiki.kuzu

The sentences read from the graph are saved (features and labels, numbers only) to
``--samples``, committed beside the questions: ``--from-samples`` fits from that file
without a graph, which is what the test of the committed model runs. ``--check`` fits
without writing and exits 1 when the weights or the samples differ from the files.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _training import ROOT, Training, run, same_candidates

SAMPLES = ROOT / "tests" / "questions" / "enwiki_sample.sentences.json.gz"


def _report(model: Any, out: Path) -> str:
    t = model.trained_on
    return (
        f"wrote {out}: {t['questions']} questions, {t['sentences']} sentences; out of fold "
        f"the best sentence holds the gold for {t['out_of_fold_best_holds_the_gold']}, the "
        f"best 3 for {t['out_of_fold_best_3_hold_the_gold']} ({t['with_the_gold']} have it)"
    )


def main(argv: list[str] | None = None) -> int:
    from kg_agent.answering.sentence_ranker import DEFAULT_PATH
    from kg_agent.evaluation.sentence_training import (
        collect_sentences,
        load_sentence_samples,
        save_sentence_samples,
        train_sentences,
    )

    training = Training(
        read="sentences",
        samples=SAMPLES,
        out=DEFAULT_PATH,
        collect=lambda agent, qs, progress: collect_sentences(agent, qs, progress=progress),
        load=load_sentence_samples,
        save=save_sentence_samples,
        same=same_candidates,
        fit=lambda samples, qs, note: train_sentences(samples, qs, note=note),
        report=_report,
    )
    return run(training, __doc__, argv)


if __name__ == "__main__":
    sys.exit(main())
