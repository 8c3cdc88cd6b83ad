"""Reading Claude's reply: the short answer line in the shapes models write it."""

from __future__ import annotations

import pytest

from kg_agent.synthesis.claude import says_not_in_graph, split_short_answer


@pytest.mark.parametrize(
    ("reply", "short", "rest"),
    [
        (
            "Short answer: 17,468 [3]\nENIAC had 17,468 tubes [3].",
            "17,468 [3]",
            "ENIAC had 17,468 tubes [3].",
        ),
        (
            "**Short answer:** Paris\nParis is the capital [1].",
            "Paris",
            "Paris is the capital [1].",
        ),
        ("\ufeffShort answer - Paris\nBody [1].", "Paris", "Body [1]."),
        (
            "Here is my answer.\nShort answer: Paris\nBody [1].",
            "Paris",
            "Here is my answer.\nBody [1].",
        ),
        ("Short answer: Paris", "Paris", "Paris"),  # a one-line reply keeps no prefix
        ("Paris is the capital [1].", None, "Paris is the capital [1]."),
    ],
)
def test_split_short_answer(reply: str, short: str | None, rest: str) -> None:
    assert split_short_answer(reply) == (short, rest)


def test_not_in_the_graph_is_recognised_with_words_after_it() -> None:
    assert says_not_in_graph("Not in the graph — the evidence lacks it.")
    assert says_not_in_graph("not in the graph")
    assert not says_not_in_graph("Paris")
    assert not says_not_in_graph(None)
