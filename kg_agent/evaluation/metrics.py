"""Retrieval and answer metrics, as HippoRAG and the SQuAD/HotpotQA scripts define them.

Passage recall is measured on *distinct titles* in rank order: a passage
corpus has one passage per title, and a Wikipedia graph several sections per
article, so counting titles keeps both comparable with the published numbers.
"""

from __future__ import annotations

import math
import re
import string
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence

__all__ = [
    "all_recall_at_k",
    "answer_in_text",
    "best_exact_match",
    "best_f1",
    "distinct_titles",
    "exact_match",
    "normalize_answer",
    "percentile",
    "recall_at_k",
    "token_f1",
]

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = set(string.punctuation) | {"‘", "’", "“", "”", "–", "—"}


def distinct_titles(titles: Iterable[str]) -> list[str]:
    """Titles in first-seen order, each once."""
    return list(dict.fromkeys(titles))


def recall_at_k(ranked_titles: Sequence[str], gold: Iterable[str], k: int) -> float:
    """Share of the gold titles among the top ``k`` distinct ranked titles (0..1)."""
    gold_set = set(gold)
    if not gold_set:
        raise ValueError("recall needs at least one gold title")
    top = set(distinct_titles(ranked_titles)[:k])
    return len(gold_set & top) / len(gold_set)


def all_recall_at_k(ranked_titles: Sequence[str], gold: Iterable[str], k: int) -> float:
    """1.0 when every gold title is among the top ``k`` distinct titles, else 0.0."""
    return 1.0 if recall_at_k(ranked_titles, gold, k) == 1.0 else 0.0


def normalize_answer(text: str) -> str:
    """SQuAD normalisation: lower case, no punctuation, no articles, single spaces.

    Accents are folded too (``Jiří`` = ``Jiri``), which the official script
    does not do; answers here come from several Wikipedia spellings.
    """
    text = unicodedata.normalize("NFKD", text)
    text = "".join(c for c in text if not unicodedata.combining(c)).lower()
    text = "".join(" " if c in _PUNCT else c for c in text)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def exact_match(prediction: str, gold: str) -> float:
    return 1.0 if normalize_answer(prediction) == normalize_answer(gold) else 0.0


def token_f1(prediction: str, gold: str) -> float:
    """Token-overlap F1 between the normalised prediction and gold answer.

    As in the HotpotQA script, yes/no/noanswer only match themselves exactly.
    """
    p, g = normalize_answer(prediction), normalize_answer(gold)
    if p in ("yes", "no", "noanswer") or g in ("yes", "no", "noanswer"):
        return 1.0 if p == g else 0.0
    p_tokens, g_tokens = p.split(), g.split()
    common = Counter(p_tokens) & Counter(g_tokens)
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision, recall = same / len(p_tokens), same / len(g_tokens)
    return 2 * precision * recall / (precision + recall)


def best_exact_match(prediction: str, answers: Sequence[str]) -> float:
    """Exact match against the best of the gold answer and its aliases."""
    return max((exact_match(prediction, a) for a in answers if a), default=0.0)


def best_f1(prediction: str, answers: Sequence[str]) -> float:
    return max((token_f1(prediction, a) for a in answers if a), default=0.0)


def answer_in_text(answers: Sequence[str], text: str) -> float:
    """1.0 when a normalised gold answer occurs, on word boundaries, in ``text``.

    yes/no answers never "occur" in evidence, so they score 0 and the caller
    should leave those questions out of the average (see the runner).
    """
    hay = f" {normalize_answer(text)} "
    for a in answers:
        n = normalize_answer(a)
        if n and n not in ("yes", "no") and f" {n} " in hay:
            return 1.0
    return 0.0


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0..100) by linear interpolation; nan when empty."""
    if not values:
        return math.nan
    xs = sorted(values)
    pos = (len(xs) - 1) * q / 100.0
    lo, hi = math.floor(pos), math.ceil(pos)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)
