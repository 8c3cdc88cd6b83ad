"""Offline answers that answer: what a question asks, the sentence that answers it,
the short answer in that sentence, and whether the evidence supports an answer at all.

Everything here reads the question and the ranked evidence only (titles, text and how
each section was found), so it runs in well under a millisecond per question, needs no
model, and is unit-tested on hand-written cases; :mod:`kg_agent.synthesis` composes it
into the extractive answer and gives its signal to the Claude prompt.
"""

from kg_agent.answering.reader import OfflineReading, read_evidence
from kg_agent.language.shape import AnswerKind, QuestionShape, analyse

__all__ = ["AnswerKind", "OfflineReading", "QuestionShape", "analyse", "read_evidence"]
