"""Yes or no, read from a sentence that states or denies the question's claim.

"Is Andorra in the European Union?" is answered by Andorra's sentence "It is not a
member of the European Union": the question's claim (its words other than the thing it
asks about: "European", "Union") all written in one sentence of the evidence about
that thing. Then:

* the sentence denies it ("not", "no", "never", "disproven", …) → **no**;
* the claim names a kind the sentence names otherwise ("Is aikido a *Chinese* martial
  art?": "a modern *Japanese* martial art") → **no**;
* else the sentence states it → **yes**.

The thing asked about is the first article the question names; when it names none
whole (a lower-case or plural form: "are aardwolves nocturnal"), the best evidence
article whose name it writes in another form. A claim only partly written in every
sentence decides nothing: no answer, and the reader shows its best sentences.
"Are A and B both guitarists?" reads the claim of each: yes when each one's sentences
state it; no when one's do and the other, described in its evidence (a section's first
sentence says what it is), has no sentence that writes a lower-case word of the claim.
Questions that compare two named things ("Are A and B of the same nationality?") are
:func:`~kg_agent.answering.compare.yes_no`'s.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from kg_agent.answering.evidence import Context, Sentence, base_title
from kg_agent.language.tokens import STOP_WORDS, fold, words

__all__ = ["verify"]

#: What a sentence denies a claim with.
_DENIAL = frozenset(
    [
        "not",
        "no",
        "never",
        "neither",
        "nor",
        "cannot",
        "without",
        "disproven",
        "disproved",
        "unsupported",
        "unfounded",
        "refuted",
        "debunked",
        "lack",
        "lacks",
    ]
)
#: Verbs a claim is written with in other words ("Did X win…?": "received the … Prize").
_SAME = {
    "win": ("won", "receive", "received", "awarded", "award"),
    "won": ("win", "receive", "received", "awarded", "award"),
    "die": ("died", "death"),
    "marry": ("married", "wife", "husband", "spouse"),
    "write": ("wrote", "written", "author"),
}
#: The words that open a yes/no question, and "there any" (the claim is what follows).
_OPENING = frozenset(
    "is are was were did does do has have had can could will would there any ever".split()  # noqa: SIM905
)


def _matches(word: str, other: str) -> bool:
    """The same word, inflected ("vaccines" / "vaccine", "causes" / "cause")."""
    if word == other:
        return True
    if len(word) < 4 or len(other) < 4:
        return False
    n = min(5, len(word), len(other))
    return word[:n] == other[:n]


def _claim(ctx: Context, subject: str) -> list[str]:
    """The question's words in order, less its opening, small words and the subject's."""
    own = set(words(fold(base_title(subject))))
    out = []
    for w in words(fold(ctx.shape.question)):
        if w in own or w in _OPENING or w in STOP_WORDS:
            continue
        out.append(w)
    return out


def _found(word: str, sentence_words: Sequence[str]) -> int:
    """Where ``word`` (or a word that writes it otherwise) is in the sentence, or -1."""
    for i, w in enumerate(sentence_words):
        if _matches(word, w) or w in _SAME.get(word, ()):
            return i
    return -1


def _contrasts(ctx: Context, claim: list[str], s: Sentence, missing: list[str]) -> bool:
    """A capitalised claim word ("Chinese") where the sentence writes another
    capitalised word before the same next word ("Japanese martial")."""
    raw = re.findall(r"[\w'-]+", s.text)
    folded = [fold(w) for w in raw]
    question = re.findall(r"[\w'-]+", ctx.shape.question)
    for word in missing:
        original = next((w for w in question if fold(w) == word), "")
        if not original[:1].isupper():
            continue
        i = claim.index(word)
        if i + 1 >= len(claim):
            continue
        at = _found(claim[i + 1], folded)
        if at > 0 and raw[at - 1][:1].isupper() and folded[at - 1] != word:
            return True
    return False


def _asked_about(ctx: Context) -> str | None:
    """The best evidence article whose name the question writes in another form ("are
    aardwolves nocturnal": *Aardwolf*; "did einstein win…": *Albert Einstein*), when no
    title is written whole."""
    asked = words(fold(ctx.shape.question))
    for _, ev in ctx.items:
        own = [w for w in words(fold(base_title(ev.title))) if len(w) >= 4]
        if any(_matches(w, a) for w in own for a in asked if len(a) >= 4):
            return ev.title
    return None


def _best(ctx: Context, subject: str, claim: list[str]) -> tuple[float, Sentence, list[str]] | None:
    """The subject's sentence that writes most of the claim (the better ranked first), the
    share it writes and the claim's words it lacks."""
    best: tuple[float, int, Sentence, list[str]] | None = None
    for rank, s in enumerate(ctx.ranked()):
        if s.title != subject:
            continue
        sw = words(fold(s.text))
        missing = [w for w in claim if _found(w, sw) < 0]
        share = 1 - len(missing) / len(claim)
        if best is None or (share, -rank) > (best[0], best[1]):
            best = (share, -rank, s, missing)
    return None if best is None else (best[0], best[2], best[3])


def _denied(claim: list[str], s: Sentence) -> bool:
    """A denial written before or among the claim's words ("is not a member of the
    European Union"), not in another clause after them."""
    sw = words(fold(s.text))
    at = [_found(w, sw) for w in claim]
    window = sw[max(0, min(at) - 6) : max(at) + 1]
    return any(w in _DENIAL or w.endswith("n't") for w in window)


def _both(ctx: Context) -> tuple[str, tuple[Sentence, ...]] | None:
    """ "Are A and B both X?": yes when each one's sentences state X; no when one's do
    and no sentence of the other's writes one of X's words."""
    a, b = ctx.named[:2]
    claim = [w for w in _claim(ctx, a) if w not in set(words(fold(base_title(b))))]
    if not claim:
        return None
    best_a, best_b = _best(ctx, a, claim), _best(ctx, b, claim)
    if best_a is None or best_b is None:
        return None
    basis = (best_a[1], best_b[1])
    held = [share == 1.0 and not _denied(claim, s) for share, s, _ in (best_a, best_b)]
    if all(held):
        return "yes", basis
    if any(held):
        # "no" when the other is described (a section's first sentence says what it is)
        # and none of its sentences writes a class word of the claim ("guitarists"); a
        # capitalised word may be a name the question writes otherwise ("Tibouchina Aubl")
        other = [s for s in ctx.sentences if s.title == (b if held[0] else a)]
        lower = {fold(w) for w in re.findall(r"[\w'-]+", ctx.shape.question) if w[:1].islower()}
        text = [words(fold(s.text)) for s in other]
        lacking = [w for w in claim if w in lower and all(_found(w, sw) < 0 for sw in text)]
        if lacking and any(s.position == 0 and _COPULA.search(s.text) for s in other):
            return "no", basis
    return None


_COPULA = re.compile(r"\b(?:is|was|are|were) (?:an?|the)\b")


def verify(ctx: Context) -> tuple[str, tuple[Sentence, ...]] | None:
    """ "yes" or "no" and the sentence that says so, or None (see the module docstring)."""
    if len(ctx.named) >= 2 and "both" in words(ctx.shape.question):
        return _both(ctx)
    subject = ctx.named[0] if ctx.named else _asked_about(ctx)
    if subject is None:
        return None
    claim = _claim(ctx, subject)
    if not claim:
        return None
    best = _best(ctx, subject, claim)
    if best is None:
        return None
    _, s, missing = best
    if not missing:
        return ("no" if _denied(claim, s) else "yes"), (s,)
    if len(missing) == 1 and len(claim) >= 2 and _contrasts(ctx, claim, s, missing):
        return "no", (s,)
    return None
