"""Few-shot examples: the shipped file, error reporting, and per-question selection."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kg_agent.embedding import Embedder
from kg_agent.exceptions import KGAgentError
from kg_agent.synthesis.fewshot import (
    FewShotError,
    FewShotExample,
    FewShotManager,
    default_examples_path,
    format_examples,
    load_examples,
)

ROOT = Path(__file__).resolve().parents[3]


def good(question: str = "Who wrote it?", **overrides: Any) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "question": question,
        "evidence": [{"n": 1, "title": "Book", "heading": "", "text": "It was written by A."}],
        "short": "A",
        "answer": "A wrote it [1].",
        "reasoning": "Single fact.",
    }
    obj.update(overrides)
    return obj


def write(tmp_path: Path, *lines: str) -> Path:
    f = tmp_path / "examples.jsonl"
    f.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return f


def load_error(tmp_path: Path, *lines: str) -> str:
    with pytest.raises(FewShotError) as info:
        load_examples(write(tmp_path, *lines))
    msg = str(info.value)
    assert "\n" not in msg
    return msg


# ---------------------------------------------------------------------------- loading


def test_shipped_examples_load_and_are_well_formed() -> None:
    assert default_examples_path() == ROOT / "kg_agent" / "data" / "few_shot" / "examples.jsonl"
    examples = load_examples()
    assert 8 <= len(examples) <= 10
    assert load_examples(ROOT / "few_shot" / "examples.jsonl") == examples
    for ex in examples:
        assert ex.citations(), ex.question
        assert set(ex.citations()) <= {e.n for e in ex.evidence}
    # at least one example shows how to say the evidence does not hold the answer
    assert any("does not say" in e.answer or "cannot be answered" in e.answer for e in examples)


def test_error_type() -> None:
    assert issubclass(FewShotError, KGAgentError)


def test_invalid_json_is_reported_with_its_line(tmp_path: Path) -> None:
    msg = load_error(
        tmp_path, json.dumps(good("Q1?")), "", json.dumps(good("Q2?")), '{"question": "broken",'
    )
    assert msg.startswith(f"{tmp_path / 'examples.jsonl'}:4: invalid JSON")


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        ([1, 2], "an example must be a JSON object, got list"),
        ({"question": "Q?"}, "example is missing evidence, short, answer, reasoning"),
        (good(short=""), "short must be a non-empty string"),
        (good(extra=1), "example has unknown key(s) extra"),
        (good(answer="  "), "answer must be a non-empty string"),
        (good(evidence=[]), "evidence must be a non-empty list"),
        (
            good(evidence=[{"n": 2, "title": "T", "heading": "", "text": "x"}]),
            "evidence item 1 must have n = 1, got 2",
        ),
        (
            good(evidence=[{"n": 1, "title": "T", "text": "x"}]),
            "evidence item 1 is missing heading",
        ),
        (good(answer="A wrote it."), "answer cites no evidence"),
        (good(answer="A wrote it [2]."), "answer cites [2] but the evidence has 1 item(s)"),
    ],
)
def test_malformed_examples_are_one_line_errors(tmp_path: Path, obj: Any, expected: str) -> None:
    msg = load_error(tmp_path, json.dumps(good("First?")), json.dumps(obj))
    assert msg.startswith(f"{tmp_path / 'examples.jsonl'}:2: {expected}")


def test_duplicate_questions_and_empty_files(tmp_path: Path) -> None:
    msg = load_error(tmp_path, json.dumps(good("Same?")), json.dumps(good("same? ")))
    assert msg.endswith(":2: duplicate question (also on line 1)")
    assert load_error(tmp_path, "", "  ").endswith("no few-shot examples in the file")
    with pytest.raises(FewShotError, match="cannot read few-shot examples"):
        load_examples(tmp_path / "nope.jsonl")


# ---------------------------------------------------------------------------- selection


def test_keyword_fallback_picks_the_closest_examples() -> None:
    manager = FewShotManager()
    picked = manager.select("Who was born first, Alan Turing or Konrad Zuse?", k=1)
    assert picked[0].question.startswith("Who was born first")
    taller = manager.select("Which is taller, the Eiffel Tower or Big Ben?", k=2)
    assert {e.question.split(",")[0] for e in taller} == {
        "Which mountain is taller",
        "Were the Eiffel Tower and the Statue of Liberty completed in the same decade?",
    }


def test_selection_is_deterministic_and_bounded() -> None:
    manager = FewShotManager()
    q = "Which river is longer?"
    assert manager.select(q, k=3) == manager.select(q, k=3)
    assert manager.select(q, k=0) == []
    assert len(manager.select(q, k=100)) == len(manager)
    # nothing in common: file order
    assert manager.select("zzz qqq", k=2) == list(manager.examples[:2])


def test_embedding_selection_with_the_real_model() -> None:
    manager = FewShotManager(embedder=Embedder())
    bridge = manager.select(
        "In which country was the scientist who discovered the largest moon of Jupiter born?", k=1
    )
    assert bridge[0].question.startswith("In which country was the astronomer")
    comparison = manager.select("Which was born earlier, Isaac Newton or Gottfried Leibniz?", k=1)
    assert comparison[0].question.startswith("Who was born first")
    scores = manager.scores("Which river is longer, the Danube or the Rhine?")
    assert max(scores) == pytest.approx(1.0, abs=1e-3)  # the example itself


def test_format_examples_shows_numbered_evidence_and_the_cited_answer() -> None:
    """In the live format: the evidence fenced and grouped as the prompt's is, then the
    reply as the model is asked to write it (short-answer line, cited answer)."""
    ex = FewShotManager().examples[0]
    text = format_examples([ex])
    assert text.startswith(f"Example 1\nQuestion: {ex.question}\n<evidence>\n## ")
    for ev in ex.evidence:
        assert f"[{ev.n}] ({ev.heading or 'introduction'}) {ev.text}" in text
    assert text.endswith(
        f"</evidence>\nAnswer (with [n] citations):\nShort answer: {ex.short}\n{ex.answer}"
    )
    assert ex.reasoning not in text
    two = format_examples(FewShotManager().examples[:2])
    assert "\n\nExample 2\n" in two
    assert format_examples([]) == ""


def test_examples_are_frozen() -> None:
    ex = FewShotManager().examples[0]
    assert isinstance(ex, FewShotExample)
    with pytest.raises(AttributeError):
        ex.answer = "changed"  # type: ignore[misc]
