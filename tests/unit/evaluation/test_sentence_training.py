"""Fitting the sentence ranker: it learns which signal marks the sentences that write the
answer, its samples round-trip, and the committed weights are what the committed samples
fit."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from kg_agent.answering.sentence_ranker import DEFAULT_PATH, FEATURES
from kg_agent.evaluation.sentence_training import (
    QuestionSentences,
    load_sentence_samples,
    save_sentence_samples,
    train_sentences,
)
from kg_agent.evaluation.trust import PlainQuestion, load_plain

QUESTIONS = Path(__file__).resolve().parents[2] / "questions" / "enwiki_sample.json"
SAMPLES = QUESTIONS.with_name("enwiki_sample.sentences.json.gz")


def test_a_fit_learns_the_signal_of_the_answering_sentence(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    questions, samples = [], {}
    for i in range(120):
        q = PlainQuestion(f"q{i}", f"question {i}", "text", True, ("x",), (f"Article {i // 2}",))
        x = rng.uniform(size=(8, len(FEATURES)))
        y = np.zeros(8)
        right = int(rng.integers(8))
        y[right] = 1.0
        # the sentence that writes the answer holds a span of the kind asked; two of
        # the others do too, and the hand order would put sentence 0 first
        x[:, FEATURES.index("kind_span")] = 0.0
        x[[right, (right + 1) % 8, (right + 3) % 8], FEATURES.index("kind_span")] = 1.0
        x[right, FEATURES.index("relation")] += 1.0
        questions.append(q)
        samples[q.qid] = QuestionSentences(q.qid, x.round(4), y)  # as observed
    weights = train_sentences(samples, questions)
    assert weights.coef[FEATURES.index("kind_span")] > 0
    assert weights.coef[FEATURES.index("relation")] > 0
    t = weights.trained_on
    assert t["questions"] == 120 and t["with_the_gold"] == 120
    assert t["out_of_fold_best_holds_the_gold"] >= 100  # one best of eight, held out
    path = tmp_path / "s.json.gz"
    save_sentence_samples(path, samples)
    first = path.read_bytes()
    back = load_sentence_samples(path)
    assert all(np.array_equal(back[q].x, samples[q].x) for q in samples)
    assert all(np.array_equal(back[q].y, samples[q].y) for q in samples)
    save_sentence_samples(path, back)
    assert path.read_bytes() == first


def test_with_no_sentences_read_the_hand_order_stands() -> None:
    q = PlainQuestion("q0", "question", "text", False, (), (), "Nowhere")
    weights = train_sentences({}, [q])
    assert not weights.coef.any() and weights.trained_on["questions"] == 0
    x = np.random.default_rng(1).uniform(size=(5, len(FEATURES)))
    assert len(set(weights.scores(x).tolist())) == 1  # ties: the hand order is kept


def test_the_committed_weights_are_what_their_samples_fit() -> None:
    """``scripts/train_sentence_ranker.py --from-samples`` gives the committed weights;
    the samples themselves are checked against a graph by its ``--check``."""
    if not SAMPLES.exists():
        pytest.fail(f"{SAMPLES} is missing: run scripts/train_sentence_ranker.py --db GRAPH")
    questions = load_plain(QUESTIONS)
    fitted = train_sentences(
        load_sentence_samples(SAMPLES), questions, note={"set": QUESTIONS.name}
    ).to_json()
    assert fitted == json.loads(DEFAULT_PATH.read_text(encoding="utf-8"))
