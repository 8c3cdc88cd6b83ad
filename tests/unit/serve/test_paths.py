"""The evidence path drawn on the web page: kinds from how evidence was found, links
read from the graph, one section node per citation."""

from __future__ import annotations

from typing import Any

import pytest

from kg_agent.exceptions import InvalidArgumentError
from kg_agent.serve.paths import evidence_path
from kg_agent.serve.service import ServeOptions
from tests.support.memory_graph import MemoryArticle, MemoryGraph


def _graph() -> MemoryGraph:
    return MemoryGraph(
        [
            MemoryArticle(
                "Ada Lovelace",
                [("", "Ada wrote notes on the engine.")],
                links={"Analytical Engine": 3},
            ),
            MemoryArticle(
                "Analytical Engine",
                [("", "A mechanical computer."), ("Design", "x")],
                links={"Charles Babbage": 2},
            ),
            MemoryArticle("Charles Babbage", [("", "Babbage designed it.")]),
            MemoryArticle("Unrelated", [("", "Nothing to do with it.")]),
        ]
    )


def _ev(title: str, n: int, source: str) -> dict[str, Any]:
    return {"section_id": f"{title}::{n:04d}", "title": title, "heading_path": "", "source": source}


def test_kinds_links_and_cited_sections() -> None:
    result = {
        "question": "Who designed the engine Ada Lovelace wrote about?",
        "evidence": [
            _ev("Ada Lovelace", 0, "entity"),
            _ev("Analytical Engine", 0, "graph"),
            _ev("Charles Babbage", 0, "bridge"),
            _ev("Unrelated", 0, "dense"),
            _ev("Analytical Engine", 1, "entity"),  # the best way an article was found wins
        ],
        "citations": [
            {"n": 1, "section_id": "Charles Babbage::0000"},
            {"n": 2, "section_id": "Ada Lovelace::0000"},
        ],
    }
    path = evidence_path(_graph(), result)
    kinds = {n["id"]: n["kind"] for n in path["nodes"]}
    assert kinds == {
        "q": "question",
        "a:Ada Lovelace": "entity",
        "a:Analytical Engine": "entity",
        "a:Charles Babbage": "bridge",
        "a:Unrelated": "search",
        "s:Charles Babbage::0000": "section",
        "s:Ada Lovelace::0000": "section",
    }
    edges = {(e["source"], e["target"], e["kind"]) for e in path["edges"]}
    # links come from the graph, drawn from the end nearer the question
    assert ("a:Ada Lovelace", "a:Analytical Engine", "link") in edges
    assert ("a:Analytical Engine", "a:Charles Babbage", "link") in edges
    assert not any(e[2] == "link" and "Unrelated" in e[0] + e[1] for e in edges)
    # named articles hang off the question; search hits without a link too
    assert ("q", "a:Ada Lovelace", "names") in edges
    assert ("q", "a:Unrelated", "found") in edges
    assert ("q", "a:Charles Babbage", "found") not in edges  # reached by a link
    assert ("a:Charles Babbage", "s:Charles Babbage::0000", "section") in edges
    sections = sorted(n["n"] for n in path["nodes"] if n["kind"] == "section")
    assert sections == [1, 2]


def test_no_evidence_is_the_question_alone() -> None:
    path = evidence_path(_graph(), {"question": "?", "evidence": [], "citations": []})
    assert path == {"nodes": [{"id": "q", "label": "?", "kind": "question"}], "edges": []}


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("port", 70000),
        ("workers", 0),
        ("processes", 0),
        ("queue", -1),
        ("timeout_s", 0),
        ("max_body_bytes", 10),
        ("max_question_chars", 5000),
    ],
)
def test_serve_options_are_validated(field: str, value: int) -> None:
    with pytest.raises(InvalidArgumentError, match=field.split("_")[0]):
        ServeOptions(**{field: value})
