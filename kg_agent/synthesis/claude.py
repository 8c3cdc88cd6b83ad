"""The Claude synthesis prompt: instructions, few-shot examples, numbered evidence, question."""

from __future__ import annotations

DEFAULT_SYNTHESIS_MODEL = "claude-sonnet-4-6"

SYSTEM_PROMPT = (
    "You answer questions using only the numbered evidence from a Wikipedia knowledge graph. "
    "Cite every claim with the evidence number in square brackets, like [2]; cite several "
    "when a claim combines them. When the answer needs two facts from different articles, "
    "state the chain (A relates to B [1], and B ... [3]). If the evidence does not contain "
    "the answer, say so plainly instead of guessing. Answer in a few sentences; put the direct "
    "answer first."
)


def build_prompt(question: str, evidence_text: str, examples_text: str = "") -> str:
    parts = []
    if examples_text:
        parts.append("Examples of good cited answers:\n\n" + examples_text.strip())
    parts.append("Evidence:\n" + evidence_text.strip())
    parts.append(f"Question: {question.strip()}\nAnswer (with [n] citations):")
    return "\n\n".join(parts)
