"""Fitting the grounding model: the threshold refuses the share of unanswerable
questions it is set for, the samples round-trip, and the committed model is what the
committed samples fit."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from kg_agent.evaluation.grounding_training import (
    REFUSED_UNANSWERABLE,
    _refuse_at,
    load_grounding_samples,
    save_grounding_samples,
    train_grounding,
)
from kg_agent.evaluation.trust import PlainQuestion, load_plain
from kg_agent.retrieval.grounding_model import DEFAULT_PATH, FEATURES

QUESTIONS = Path(__file__).resolve().parents[2] / "questions" / "enwiki_sample.json"
SAMPLES = QUESTIONS.with_name("enwiki_sample.grounding.json.gz")


def test_the_threshold_refuses_the_share_it_is_set_for_and_no_more() -> None:
    unanswerable = np.linspace(0.0, 0.5, 40)
    answerable = np.linspace(0.3, 1.0, 60)
    probs = np.concatenate([unanswerable, answerable])
    y = np.asarray([0] * 40 + [1] * 60)
    t = _refuse_at(probs, y)
    assert (unanswerable < t).mean() >= REFUSED_UNANSWERABLE
    lower = np.sort(unanswerable)[int(np.ceil(REFUSED_UNANSWERABLE * 40)) - 2]
    assert (unanswerable < lower).mean() < REFUSED_UNANSWERABLE  # the lowest that does


def _plain(qid: str, article: str, answerable: bool) -> PlainQuestion:
    articles = (article,) if answerable else ()
    return PlainQuestion(qid, f"question {qid}", "other", answerable, ("x",), articles, article)


def test_a_fit_learns_which_side_a_signal_points_to(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    questions, samples = [], {}
    for i in range(200):
        ok = i % 4 != 0
        q = _plain(f"q{i}", f"Article {i // 2}", ok)
        x = rng.normal(size=len(FEATURES)) * 0.3
        x[FEATURES.index("best_cosine")] += 0.7 if ok else 0.3
        questions.append(q)
        samples[q.qid] = x.round(4)
    model = train_grounding(samples, questions)
    assert model.coef[FEATURES.index("best_cosine")] > 0
    assert model.trained_on["out_of_fold_unanswerable_refused"] >= REFUSED_UNANSWERABLE
    path = tmp_path / "g.json.gz"
    save_grounding_samples(path, samples)
    first = path.read_bytes()
    back = load_grounding_samples(path)
    assert all(np.array_equal(back[q], samples[q]) for q in samples)
    save_grounding_samples(path, back)
    assert path.read_bytes() == first


def test_the_committed_model_is_what_its_samples_fit() -> None:
    """``scripts/train_grounding.py --from-samples`` gives the committed model; the
    samples themselves are checked against a graph by its ``--check``."""
    if not SAMPLES.exists():
        pytest.fail(f"{SAMPLES} is missing: run scripts/train_grounding.py --db GRAPH")
    questions = load_plain(QUESTIONS)
    fitted = train_grounding(
        load_grounding_samples(SAMPLES), questions, note={"set": QUESTIONS.name}
    ).to_json()
    assert fitted == json.loads(DEFAULT_PATH.read_text(encoding="utf-8"))
    assert fitted["trained_on"]["out_of_fold_unanswerable_refused"] >= REFUSED_UNANSWERABLE
