"""Drop near-duplicate evidence between steps, so each step adds something new.

Wikipedia repeats itself (lead sections, mirrored infobox prose, redirects to the
same article); a later step that finds the same text again has found nothing.
Word-set Jaccard is crude but cheap, order-independent and explainable.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from kg_agent.exceptions import InvalidArgumentError
from kg_agent.language.tokens import words

__all__ = ["jaccard", "novelty_filter", "word_set"]

T = TypeVar("T")


def word_set(text: str) -> frozenset[str]:
    """The lower-case word tokens of ``text``."""
    return frozenset(words(text))


def _jaccard_sets(a: frozenset[str], b: frozenset[str]) -> float:
    if not a and not b:
        return 1.0  # two empty texts are the same text
    return len(a & b) / len(a | b)


def jaccard(a: str, b: str) -> float:
    """Jaccard similarity of the word sets of ``a`` and ``b`` (1.0 for two empty texts)."""
    return _jaccard_sets(word_set(a), word_set(b))


def _content(item: Any) -> str:
    return str(item.content)


def novelty_filter(
    candidates: Iterable[T],
    seen: Iterable[str],
    threshold: float,
    *,
    text: Callable[[T], str] = _content,
) -> list[T]:
    """``candidates`` in order, minus those too similar to a ``seen`` text or a kept one.

    A candidate is dropped when its Jaccard similarity with any seen text, or
    with any candidate kept before it, is at or above ``threshold`` (0 < t <= 1;
    1.0 drops only exact word-set duplicates). ``text`` reads an item's text
    (default: its ``content`` attribute).
    """
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)):
        raise InvalidArgumentError(f"threshold must be a number, got {threshold!r}")
    if not 0.0 < threshold <= 1.0:
        raise InvalidArgumentError(f"threshold must be in (0, 1], got {threshold!r}")
    if isinstance(seen, str):
        raise InvalidArgumentError("seen must be a collection of texts, not one string")
    held = [word_set(s) for s in seen]
    kept: list[T] = []
    for candidate in candidates:
        words = word_set(text(candidate))
        if any(_jaccard_sets(words, other) >= threshold for other in held):
            continue
        held.append(words)
        kept.append(candidate)
    return kept
