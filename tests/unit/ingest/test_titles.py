from __future__ import annotations

import pytest

from kg_agent.ingest.titles import normalize_title


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("turing machine", "Turing machine"),
        ("Bletchley_Park", "Bletchley Park"),
        ("Alan Turing#Early life", "Alan Turing"),
        ("  Grace   Hopper ", "Grace Hopper"),
        (":Category:Computer pioneers", "Category:Computer pioneers"),
        ("#History", ""),
        ("éclair", "Éclair"),
        ("iPhone", "IPhone"),  # MediaWiki's $wgCapitalLinks does the same
    ],
)
def test_normalize_title(raw: str, expected: str) -> None:
    assert normalize_title(raw) == expected
