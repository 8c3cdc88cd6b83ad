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

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

QUESTIONS = ROOT / "tests" / "questions" / "enwiki_sample.json"
SAMPLES = ROOT / "tests" / "questions" / "enwiki_sample.fact_candidates.json.gz"


def main(argv: list[str] | None = None) -> int:
    import numpy as np

    from kg_agent.agent import KnowledgeGraphAgent
    from kg_agent.evaluation.fact_training import (
        collect,
        load_samples,
        save_samples,
        train_ranker,
    )
    from kg_agent.evaluation.trust import load_plain
    from kg_agent.progress import Progress
    from kg_agent.retrieval.fact_ranker import DEFAULT_PATH

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--db", help="the English sample's graph, with vectors")
    ap.add_argument("--samples", default=str(SAMPLES), help="the candidates read (numbers)")
    ap.add_argument(
        "--from-samples", action="store_true", help="fit from --samples, without a graph"
    )
    ap.add_argument("--questions", default=str(QUESTIONS))
    ap.add_argument("--out", default=str(DEFAULT_PATH))
    ap.add_argument("--check", action="store_true", help="compare with --out, write nothing")
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args(argv)

    questions = load_plain(args.questions)
    samples_path = Path(args.samples)
    if args.from_samples:
        samples = load_samples(samples_path)
    elif not args.db:
        ap.error("--db is required (or --from-samples)")
    else:
        total = len(questions)
        bar = Progress("candidates", total=total, unit="questions", enabled=not args.quiet)
        with KnowledgeGraphAgent(args.db, offline=True) as agent:
            if not agent.components.dense.enabled:
                print(f"error: {args.db} has no vectors: load it with embeddings", file=sys.stderr)
                return 2
            samples = collect(agent, questions, progress=bar.set)
        bar.close()
        if args.check:
            saved_samples = load_samples(samples_path)
            same = saved_samples.keys() == samples.keys() and all(
                np.array_equal(saved_samples[q].x, samples[q].x.round(4))
                and np.array_equal(saved_samples[q].y, samples[q].y)
                for q in samples
            )
            if not same:
                print(f"{samples_path} differs from the candidates read", file=sys.stderr)
                return 1
        else:
            save_samples(samples_path, samples)
    note = {"set": Path(args.questions).name}
    ranker = train_ranker(samples, questions, note=note)
    fitted = ranker.to_json()
    out = Path(args.out)
    if args.check:
        saved = json.loads(out.read_text(encoding="utf-8"))
        if saved != fitted:
            print(f"{out} differs from what the script fits:", file=sys.stderr)
            print(json.dumps(fitted, indent=1), file=sys.stderr)
            return 1
        print(f"{out}: reproduced")
        return 0
    ranker.save(out)
    t = ranker.trained_on
    print(
        f"wrote {out}: {t['with_candidates']} questions with candidates, {t['candidates']} "
        f"candidates; first right out of fold {t['first_candidate_right_out_of_fold']}; "
        f"show_at {ranker.show_at:.3f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
