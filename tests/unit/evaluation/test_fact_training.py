"""Fitting the fact ranker: article-disjoint folds, a fit that learns and calibrates, and
the committed model reproduced from the committed candidates."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from kg_agent.evaluation.fact_training import (
    USE_AT,
    QuestionCandidates,
    article_folds,
    load_samples,
    save_samples,
    train_ranker,
)
from kg_agent.evaluation.trust import PlainQuestion, load_plain
from kg_agent.retrieval.fact_ranker import (
    DEFAULT_PATH,
    FEATURES,
    SIMILARITY_FEATURES,
    FactRanker,
)

QUESTIONS = Path(__file__).resolve().parents[2] / "questions" / "enwiki_sample.json"
SAMPLES = QUESTIONS.with_name("enwiki_sample.fact_candidates.json.gz")


def _q(qid: str, *articles: str, topic: str = "") -> PlainQuestion:
    answerable = bool(articles)
    return PlainQuestion(qid, f"question {qid}?", "infobox", answerable, ("x",), articles, topic)


def _articles(q: PlainQuestion) -> set[str]:
    return set(q.articles) or {q.topic}


def test_the_folds_of_the_plain_set_share_no_article() -> None:
    questions = load_plain(QUESTIONS)
    folds = article_folds(questions, 5)
    assert set(folds) == {q.qid for q in questions}
    per_fold: list[set[str]] = [set() for _ in range(5)]
    for q in questions:
        per_fold[folds[q.qid]] |= _articles(q)
    for i in range(5):
        for j in range(i + 1, 5):
            assert not per_fold[i] & per_fold[j], (i, j, per_fold[i] & per_fold[j])
    sizes = [list(folds.values()).count(f) for f in range(5)]
    assert max(sizes) - min(sizes) <= 0.2 * len(questions) / 5, sizes


def test_questions_asked_together_share_a_fold() -> None:
    questions = [
        _q("1", "Alabama"),
        _q("2", "Alabama", "Alaska"),
        _q("3", "Alaska"),
        _q("4", "Angola"),
        _q("5", topic="Burkina Faso"),
        _q("6", topic="Burkina Faso"),
    ]
    folds = article_folds(questions, 3)
    assert folds["1"] == folds["2"] == folds["3"]
    assert folds["5"] == folds["6"]
    assert len(set(folds.values())) == 3


def _synthetic(n: int, seed: int) -> tuple[list[PlainQuestion], dict[str, QuestionCandidates]]:
    """Questions whose right candidate (when there is one) has the highest coverage and a
    fitting value; the other features are noise."""
    rng = np.random.default_rng(seed)
    questions, samples = [], {}
    for i in range(n):
        qid = f"q{i}"
        questions.append(_q(qid, f"Article {i // 2}"))
        x = rng.random((6, len(FEATURES))).round(4)
        for f in ("coverage", "fit"):  # the wrong ones explain less than all of it
            x[:, FEATURES.index(f)] = (0.7 * x[:, FEATURES.index(f)]).round(4)
        y = np.zeros(6)
        if i % 4:  # three in four have a right candidate
            right = int(rng.integers(6))
            x[right, FEATURES.index("coverage")] = 1.0
            x[right, FEATURES.index("fit")] = 1.0
            y[right] = 1.0
        samples[qid] = QuestionCandidates(qid, x, y)
    return questions, samples


def test_the_ranker_learns_which_candidate_is_right_and_how_sure_to_be() -> None:
    questions, samples = _synthetic(200, seed=1)
    ranker = train_ranker(samples, questions)
    test_questions, test_samples = _synthetic(100, seed=2)
    weights = ranker.weights(embedded=True)
    firsts = [
        test_samples[q.qid].y[int(np.argmax(weights.scores(test_samples[q.qid].x)))]
        for q in test_questions
    ]
    assert sum(firsts) >= 0.95 * 75  # nearly every right candidate comes first
    # calibrated: a question with no right candidate gets a low probability
    none = [
        weights.probability(float(weights.scores(test_samples[q.qid].x).max()))
        for q in test_questions
        if not test_samples[q.qid].y.any()
    ]
    assert max(none) < ranker.show_at
    assert USE_AT <= ranker.show_at <= 1.0
    bare = ranker.weights(embedded=False)
    assert not set(bare.features) & SIMILARITY_FEATURES
    # deterministic: the same samples give the same file
    assert train_ranker(samples, questions).to_json() == ranker.to_json()


def test_the_ranker_orders_a_question_by_its_own_candidates() -> None:
    # a conditional logit: a signal that is the same for every candidate of a question
    # (here the number of items, high in some questions, low in others) says nothing
    # about which one answers, however it goes with questions that have a right one
    questions, samples = _synthetic(200, seed=4)
    col = FEATURES.index("items")
    for s in samples.values():
        s.x[:, col] = 1.0 if s.y.any() else 0.0
    weights = train_ranker(samples, questions).weights(embedded=True)
    assert abs(weights.coef[weights.features.index("items")]) < 1e-6
    assert weights.coef[weights.features.index("coverage")] > 0


def test_samples_round_trip(tmp_path: Path) -> None:
    _, samples = _synthetic(10, seed=3)
    path = tmp_path / "s.json.gz"
    save_samples(path, samples)
    first = path.read_bytes()
    back = load_samples(path)
    assert back.keys() == samples.keys()
    for qid, s in samples.items():
        assert np.array_equal(back[qid].x, s.x) and np.array_equal(back[qid].y, s.y)
    save_samples(path, back)
    assert path.read_bytes() == first


def test_the_committed_model_is_what_its_candidates_fit() -> None:
    """``scripts/train_fact_ranker.py --from-samples`` gives the committed weights; the
    candidates themselves are checked against a graph by its ``--check``."""
    if not SAMPLES.exists():
        pytest.fail(f"{SAMPLES} is missing: run scripts/train_fact_ranker.py --db GRAPH")
    questions = load_plain(QUESTIONS)
    samples = load_samples(SAMPLES)
    committed = json.loads(DEFAULT_PATH.read_text(encoding="utf-8"))
    fitted = train_ranker(samples, questions, note={"set": QUESTIONS.name}).to_json()
    assert fitted == committed
    ranker = FactRanker.load()
    assert ranker.use_at <= ranker.show_at
    assert ranker.trained_on["questions"] == len(questions)
