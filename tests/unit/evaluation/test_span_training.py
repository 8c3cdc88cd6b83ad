"""Fitting the span ranker: the conditional logit learns which signal marks the right
candidate, its confidence is calibrated out of fold and sets the bold threshold only on
enough answers, and the committed weights are what the committed samples fit."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from kg_agent.answering.span_ranker import DEFAULT_PATH, FEATURES
from kg_agent.evaluation.calibration import PRECISION, wilson_low
from kg_agent.evaluation.fact_training import QuestionCandidates
from kg_agent.evaluation.span_training import (
    LAMBDAS,
    load_span_samples,
    save_span_samples,
    train_spans,
)
from kg_agent.evaluation.trust import PlainQuestion, load_plain

QUESTIONS = Path(__file__).resolve().parents[2] / "questions" / "enwiki_sample.json"
SAMPLES = QUESTIONS.with_name("enwiki_sample.spans.json.gz")


def _set(
    n: int, seed: int, noise: float
) -> tuple[list[PlainQuestion], dict[str, QuestionCandidates]]:
    rng = np.random.default_rng(seed)
    questions, samples = [], {}
    for i in range(n):
        q = PlainQuestion(f"q{i}", f"question {i}", "text", True, ("x",), (f"Article {i // 2}",))
        x = rng.uniform(size=(12, len(FEATURES)))
        y = np.zeros(12)
        right = int(rng.integers(12))
        y[right] = 1.0
        # the right candidate is a place for "where" and has the question's words beside it
        x[:, FEATURES.index("place~place")] = 0.0
        x[[right, (right + 2) % 12], FEATURES.index("place~place")] = 1.0
        x[right, FEATURES.index("window")] += 1.0 - noise * rng.uniform()
        questions.append(q)
        samples[q.qid] = QuestionCandidates(q.qid, x.round(4), y)
    return questions, samples


def test_a_fit_learns_the_signal_of_the_right_candidate(tmp_path: Path) -> None:
    questions, samples = _set(150, 0, 0.9)
    weights = train_spans(samples, questions)
    assert weights.coef[FEATURES.index("place~place")] > 0
    assert weights.coef[FEATURES.index("window")] > 0
    t = weights.trained_on
    assert t["questions"] == 150 and t["with_the_gold"] == 150
    assert t["out_of_fold_best_right"] >= 100  # one of twelve, held out
    # calibrated out of fold: bold from a confidence at which nine in ten were right
    assert 0.0 < weights.show_at <= 1.0
    shown, right = t["out_of_fold_shown"], t["out_of_fold_shown_right"]
    assert shown >= 20 and right >= 0.9 * shown
    assert wilson_low(right, shown) >= PRECISION
    path = tmp_path / "s.json.gz"
    save_span_samples(path, samples)
    first = path.read_bytes()
    back = load_span_samples(path)
    assert all(np.array_equal(back[q].x, samples[q].x) for q in samples)
    save_span_samples(path, back)
    assert path.read_bytes() == first


def test_too_few_sure_answers_set_no_bold() -> None:
    # nothing tells the right candidate apart: no confidence is right nine times in ten
    rng = np.random.default_rng(3)
    questions, samples = [], {}
    for i in range(60):
        q = PlainQuestion(f"q{i}", f"question {i}", "text", True, ("x",), (f"A{i}",))
        y = np.zeros(6)
        y[int(rng.integers(6))] = 1.0
        questions.append(q)
        samples[q.qid] = QuestionCandidates(q.qid, rng.uniform(size=(6, len(FEATURES))).round(4), y)
    weights = train_spans(samples, questions)
    assert weights.show_at > 1.0 and weights.trained_on["out_of_fold_shown"] == 0


def test_the_penalty_is_the_one_under_which_inner_folds_find_the_right_likeliest() -> None:
    # the right candidate is the one with the largest first feature, plus noise that a
    # weak penalty fits
    rng = np.random.default_rng(7)
    questions, samples = [], {}
    for i in range(50):
        q = PlainQuestion(f"q{i}", f"question {i}", "text", True, ("x",), (f"A{i}",))
        x = rng.uniform(size=(6, len(FEATURES))).round(4)
        y = np.zeros(6)
        y[int(np.argmax(x[:, 0] + rng.normal(0, 0.3, 6)))] = 1.0
        questions.append(q)
        samples[q.qid] = QuestionCandidates(q.qid, x, y)
    chosen = train_spans(samples, questions, lambdas=(0.01, 1.0, 1000.0))
    assert chosen.trained_on["l2_penalty"] in (0.01, 1.0, 1000.0)
    likelihood = {}
    for lam in (0.01, 1.0, 1000.0):
        alone = train_spans(samples, questions, lambdas=(lam,))
        likelihood[lam] = alone.trained_on["out_of_fold_log_likelihood"]
        assert alone.trained_on["l2_penalty"] == lam and likelihood[lam] < 0
    assert likelihood[chosen.trained_on["l2_penalty"]] == max(likelihood.values())
    # the weakest penalty fits the noise: held out, the right candidates are least likely
    assert likelihood[0.01] == min(likelihood.values())


def test_with_no_candidates_read_nothing_is_chosen() -> None:
    q = PlainQuestion("q0", "question", "text", False, (), (), "Nowhere")
    weights = train_spans({}, [q])
    assert not weights.coef.any() and weights.show_at > 1.0


def test_the_committed_weights_are_what_their_samples_fit() -> None:
    """``scripts/train_span_ranker.py --from-samples`` gives the committed weights; the
    samples themselves are checked against a graph by its ``--check``."""
    if not SAMPLES.exists():
        pytest.fail(f"{SAMPLES} is missing: run scripts/train_span_ranker.py --db GRAPH")
    questions = load_plain(QUESTIONS)
    fitted = train_spans(load_span_samples(SAMPLES), questions, note={"set": QUESTIONS.name})
    assert fitted.to_json() == json.loads(DEFAULT_PATH.read_text(encoding="utf-8"))
    assert fitted.trained_on["l2_penalty"] in LAMBDAS
