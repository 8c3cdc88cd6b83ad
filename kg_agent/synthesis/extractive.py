"""Offline synthesis: the short answer and the sentences that answer, read from the evidence.

No model writes anything: :func:`~kg_agent.answering.read_evidence` chooses the
sentences by what the question asks and takes the short answer from them; this module
writes them out with their ``[n]``, labelled as extractive, or says plainly that the
graph does not hold the answer (still quoting the closest evidence). Cheap enough (no
embedding) to keep a warm offline query within tens of milliseconds.
"""

from __future__ import annotations

import re

from kg_agent.answering import OfflineReading, read_evidence
from kg_agent.answering.evidence import Sentence
from kg_agent.answering.reader import MAX_ANSWER_WORDS
from kg_agent.language.shape import AnswerKind
from kg_agent.language.tokens import fold
from kg_agent.synthesis.context import NumberedEvidence

__all__ = [
    "EXTRACTIVE_LABEL",
    "NOT_IN_GRAPH",
    "NOT_SURE",
    "extractive_answer",
    "format_reading",
    "format_unsure",
]

EXTRACTIVE_LABEL = "Extractive answer (offline: sentences quoted from the evidence, no LLM)"
#: How an answer the evidence does not support begins (offline and in Claude's prompt).
NOT_IN_GRAPH = "Not in the graph"
#: How an answer begins when the graph has what the question names but may not hold the
#: answer: the closest sentences follow, with no short answer.
NOT_SURE = "Not sure the graph holds the answer"


def format_reading(reading: OfflineReading) -> str:
    """The answer text of a reading: the short answer once, then the sentences that
    state it (or, when none is shown, the sentences read)."""
    body = " ".join(f"{s.text} [{s.n}]" for s in _supporting(reading))
    if not reading.sentences:
        return f"{EXTRACTIVE_LABEL}: the graph holds no evidence for this question."
    if not reading.answerable:
        return (
            f"{NOT_IN_GRAPH}: the evidence found does not answer this question. The closest: {body}"
        )
    lead = ""
    if reading.short_answer and reading.shown:  # below the threshold: the sentences alone
        cites = "".join(f" [{n}]" for n in reading.short_cites)
        lead = f"{reading.short_answer}{cites}. "
    return f"{lead}{EXTRACTIVE_LABEL}: {body}"


def format_unsure(reading: OfflineReading) -> str:
    """The closest sentences of a reading, with no short answer (see :data:`NOT_SURE`)."""
    if not reading.sentences:
        return f"{NOT_SURE}: the graph holds no evidence for this question."
    body = " ".join(f"{s.text} [{s.n}]" for s in reading.sentences)
    return f"{NOT_SURE}. {EXTRACTIVE_LABEL}: {body}"


def extractive_answer(question: str, numbered: NumberedEvidence, **options: int) -> str:
    """The offline answer to ``question`` from ``numbered`` evidence, as text."""
    max_words = options.get("max_words", MAX_ANSWER_WORDS)
    return format_reading(read_evidence(question, numbered.items, max_words=max_words))


def _supporting(reading: OfflineReading) -> list[Sentence]:
    """The sentences that state the shown answer, prose before the infobox line that
    restates it; neighbours of the topic that do not ("From 1826 to 1846, Tuscaloosa
    served as the capital" beside Montgomery) are left out. All of them when the answer
    is not shown, or no sentence states it; for a choice, the sentences it compares (one
    option's birth date is no reason without the other's)."""
    answer = reading.short_answer
    if not (answer and reading.shown):
        return reading.sentences
    if reading.shape.kind is AnswerKind.CHOICE:
        compared = [s for s in reading.sentences if s.n in reading.short_cites]
        return compared or reading.sentences
    pattern = re.compile(rf"(?<!\w){re.escape(fold(answer))}(?!\w)")
    stating = [s for s in reading.sentences if pattern.search(fold(s.text))]
    prose = [s for s in stating if not _is_fact_line(s)]
    return prose or stating or reading.sentences


def _is_fact_line(s: Sentence) -> bool:
    """An infobox fact as the evidence writes it: "Alabama — capital: Montgomery"."""
    return s.text.startswith(f"{s.title} — ") and ": " in s.text
