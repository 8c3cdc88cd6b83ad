"""Offline synthesis: the short answer and the sentences that answer, read from the evidence.

No model writes anything: :func:`~kg_agent.answering.read_evidence` chooses the
sentences by what the question asks and takes the short answer from them; this module
writes them out with their ``[n]``, labelled as extractive, or says plainly that the
graph does not hold the answer (still quoting the closest evidence). Cheap enough (no
embedding) to keep a warm offline query within tens of milliseconds.
"""

from __future__ import annotations

from kg_agent.answering import OfflineReading, read_evidence
from kg_agent.synthesis.context import NumberedEvidence

__all__ = ["EXTRACTIVE_LABEL", "NOT_IN_GRAPH", "extractive_answer", "format_reading"]

EXTRACTIVE_LABEL = "Extractive answer (offline: sentences quoted from the evidence, no LLM)"
#: How an answer the evidence does not support begins (offline and in Claude's prompt).
NOT_IN_GRAPH = "Not in the graph"


def format_reading(reading: OfflineReading) -> str:
    """The answer text of a reading: the short answer, then the cited sentences."""
    body = " ".join(f"{s.text} [{s.n}]" for s in reading.sentences)
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


def extractive_answer(question: str, numbered: NumberedEvidence, **options: int) -> str:
    """The offline answer to ``question`` from ``numbered`` evidence, as text."""
    max_words = options.get("max_words")
    kwargs = {"max_words": max_words} if max_words is not None else {}
    return format_reading(read_evidence(question, numbered.items, **kwargs))
