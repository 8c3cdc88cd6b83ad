"""Offline synthesis: an extractive answer from the evidence's best sentences.

No model writes anything: the answer is the evidence sentences that share the
most (rarer) words with the question, each followed by its ``[n]``, and it is
labelled as extractive. Cheap enough (no embedding) to keep a warm offline
query within tens of milliseconds.
"""

from __future__ import annotations

import math
from collections import Counter

from kg_agent.synthesis.context import NumberedEvidence
from kg_agent.text import content_words, split_sentences

EXTRACTIVE_LABEL = "Extractive answer (offline: sentences quoted from the evidence, no LLM)"


def extractive_answer(question: str, numbered: NumberedEvidence, *, max_sentences: int = 3) -> str:
    """The ``max_sentences`` best evidence sentences, cited, in evidence order."""
    q_words = content_words(question)
    candidates: list[tuple[int, int, str, set[str]]] = []  # (n, position, sentence, words)
    for n, ev in numbered.items:
        for pos, sentence in enumerate(split_sentences(ev.content)):
            candidates.append((n, pos, sentence, content_words(sentence)))
    if not candidates or not numbered.items:
        return f"{EXTRACTIVE_LABEL}: the graph holds no evidence for this question."
    df: Counter[str] = Counter()
    for _, _, _, words in candidates:
        df.update(words)
    total = len(candidates)

    def score(item: tuple[int, int, str, set[str]]) -> float:
        n, pos, _, words = item
        overlap = sum(math.log(1 + total / df[w]) for w in q_words & words)
        # Earlier evidence ranked higher; a section's first sentences carry its subject.
        return overlap + 0.3 / n + 0.1 / (1 + pos)

    best = sorted(candidates, key=score, reverse=True)[:max_sentences]
    best.sort(key=lambda c: (c[0], c[1]))
    body = " ".join(f"{s} [{n}]" for n, _, s, _ in best)
    return f"{EXTRACTIVE_LABEL}: {body}"
