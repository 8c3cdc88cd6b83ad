"""The original API reference of ``KnowledgeGraphAgent``, walked name by name.

``../shared/design/002_f085e172a166956a.txt`` is what users' code was written against:
its constructor, class constants and ``_``-prefixed methods. This test reads the
reference itself (skipping when it is absent), checks each signature it writes down
against the agent's, runs its examples, and checks each name's documented behaviour
on a real graph (the bundled sample) with the real model, and the multi-query
fall-back through the real ``anthropic`` SDK against a loopback server.
"""

from __future__ import annotations

import ast
import inspect
import logging
import re
from typing import Any

import pytest

from kg_agent.agent import KnowledgeGraphAgent
from kg_agent.embedding import Embedder
from kg_agent.llm.client import AnthropicClient
from kg_agent.retrieval.multi_query import EXPANSION_MODEL
from tests.conftest import PROJECT_ROOT
from tests.support.fake_anthropic import DEFAULT_KEY, FakeAnthropic, fake_anthropic_server, text

REFERENCE = PROJECT_ROOT.parent / "shared" / "design" / "002_f085e172a166956a.txt"
QUESTION = "How many vacuum tubes did ENIAC contain?"


@pytest.fixture(scope="module")
def reference() -> str:
    if not REFERENCE.exists():
        pytest.skip(f"{REFERENCE} not found: the API reference lives in ../shared/design")
    return REFERENCE.read_text(encoding="utf-8")


def python_blocks(doc: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", doc, flags=re.S)


def documented_signatures(doc: str) -> dict[str, inspect.Signature]:
    """Every ``def`` the reference writes out, and the constructor (written as a call)."""
    out: dict[str, inspect.Signature] = {}
    for block in python_blocks(doc):
        source = block.strip()
        if source.startswith("KnowledgeGraphAgent(") and "db_path: str" in source:
            # the constructor, written as a call with annotations
            source = "def __init__(self," + source[len("KnowledgeGraphAgent(") :]
            source = source.rstrip().removesuffix(")") + ") -> None: ..."
        elif source.startswith("def "):
            source += " ..."
        else:
            continue
        namespace: dict[str, Any] = {}
        tree = ast.parse("from __future__ import annotations\n" + source)
        exec(compile(tree, "<reference>", "exec"), {}, namespace)
        namespace.pop("annotations", None)
        name = next(iter(namespace))
        out[name] = inspect.signature(namespace[name])
    return out


def test_the_reference_is_read(reference: str) -> None:
    names = set(documented_signatures(reference))
    assert {"__init__", "_multi_query_retrieve", "_score_section_quality"} <= names
    assert "_fetch_source_text" in names


def test_every_documented_signature_is_the_agents(reference: str) -> None:
    for name, documented in documented_signatures(reference).items():
        actual = inspect.signature(getattr(KnowledgeGraphAgent, name))
        params = [p for p in documented.parameters.values() if p.name != "self"]
        have = {p.name: p for p in actual.parameters.values() if p.name != "self"}
        positional = [p.name for p in actual.parameters.values() if p.name != "self"]
        for i, p in enumerate(params):
            assert p.name in have, f"{name}: parameter {p.name} is gone"
            # same place, same default: positional calls and defaults keep working
            assert positional[i] == p.name, f"{name}: {p.name} moved"
            assert have[p.name].default == p.default, f"{name}: default of {p.name}"
            assert have[p.name].kind in (p.POSITIONAL_OR_KEYWORD, p.kind), name
        # parameters added since are keyword-only or defaulted: old calls still bind
        for extra in positional[len(params) :]:
            assert have[extra].default is not inspect.Parameter.empty, f"{name}: {extra}"
        if documented.return_annotation is not inspect.Signature.empty:
            assert str(actual.return_annotation).replace("dict[str, Any]", "dict") == str(
                documented.return_annotation
            ), name


def test_the_class_constants_hold_their_documented_values(reference: str) -> None:
    constants = re.findall(
        r"KnowledgeGraphAgent\.([A-Z_]+): ([\w\[\]]+)(?: = ([\d.]+))?", reference
    )
    assert {c[0] for c in constants} == {"CONTENT_QUALITY_THRESHOLD", "STOP_WORDS"}
    for name, kind, value in constants:
        actual = getattr(KnowledgeGraphAgent, name)
        assert type(actual).__name__ == kind.split("[")[0], name
        if value:
            assert actual == float(value), name
    # "~80 common English function words", with the families the reference lists
    words = KnowledgeGraphAgent.STOP_WORDS
    assert 60 <= len(words) <= 140
    for word in ("a", "an", "the", "in", "of", "to", "for", "with", "by", "from", "and", "is"):
        assert word in words, word


def test_the_reference_examples_run(reference: str) -> None:
    asserts = [
        line.strip()
        for block in python_blocks(reference)
        for line in block.splitlines()
        if line.strip().startswith("assert ") and "KnowledgeGraphAgent." in line
    ]
    assert len(asserts) == 2
    for line in asserts:
        exec(line, {"KnowledgeGraphAgent": KnowledgeGraphAgent})


def test_the_score_table(reference: str) -> None:
    question = "quantum entanglement photosynthesis laser superconductor"
    keywords = question.split()
    rows = re.findall(
        r"^\| (\d+|< 20) \| ([^|]+) \| [^|]+ \| [^|]+ \| (—|[\d.]+|≤ [\d.]+) \|$",
        reference,
        flags=re.M,
    )
    assert len(rows) == 8
    for count, matched, total in rows:
        if count == "< 20" or total.startswith("≤"):
            continue
        n = int(count)
        allkw = matched.strip().startswith("all")
        body = (keywords if allkw else []) + ["word"] * (n - (len(keywords) if allkw else 0))
        score = KnowledgeGraphAgent._score_section_quality(" ".join(body), question)
        assert score == pytest.approx(float(total)), (count, matched)
    # the formula's stub cut-off and the documented examples
    assert KnowledgeGraphAgent._score_section_quality("See also.", "quantum entanglement") == 0.0
    content = " ".join(["quantum", "entanglement"] * 100)
    assert KnowledgeGraphAgent._score_section_quality(content, "quantum entanglement") == 1.0


# --------------------------------------------------------------- behaviour on a real graph


@pytest.fixture(scope="module")
def db(sample_db: str) -> str:
    return sample_db


@pytest.fixture(scope="module")
def agent(sample_agent: KnowledgeGraphAgent) -> KnowledgeGraphAgent:
    return sample_agent


def test_multi_query_retrieve_dedupes_by_title_best_similarity_first(
    agent: KnowledgeGraphAgent,
) -> None:
    found = agent._multi_query_retrieve(QUESTION, max_results=5)
    assert 1 <= len(found) <= 5
    assert {"title", "similarity", "content"} <= set(found[0])
    titles = [r["title"] for r in found]
    assert len(titles) == len(set(titles))
    sims = [r["similarity"] for r in found]
    assert sims == sorted(sims, reverse=True)
    # the highest similarity seen for a title across the three queries is kept
    alone = {r["title"]: r["similarity"] for r in agent.semantic_search(QUESTION, top_k=5)}
    for r in found:
        if r["title"] in alone:
            assert r["similarity"] >= alone[r["title"]] - 1e-9
    assert len(agent._multi_query_retrieve(QUESTION, max_results=0)) == 1  # clamped to 1
    assert len(agent._multi_query_retrieve(QUESTION, max_results=500)) <= 20


def test_vector_primary_retrieve_routes_on_enable_multi_query(
    agent: KnowledgeGraphAgent, db: str, embedder: Embedder
) -> None:
    assert agent.enable_multi_query is False
    assert agent._vector_primary_retrieve(QUESTION, max_results=4) == agent.semantic_search(
        QUESTION, top_k=4
    )
    with KnowledgeGraphAgent(db, embedder=embedder, enable_multi_query=True) as fanned:
        assert fanned.enable_multi_query is True
        assert fanned._vector_primary_retrieve(
            QUESTION, max_results=4
        ) == fanned._multi_query_retrieve(QUESTION, max_results=4)


def test_fetch_source_text_filters_by_quality_and_assembles_text(
    agent: KnowledgeGraphAgent,
) -> None:
    titles = ["Mark I", "Manchester Baby"]
    whole = agent._fetch_source_text(titles)
    filtered = agent._fetch_source_text(titles, question="Which Mark I machines were built?")
    assert isinstance(whole, str) and isinstance(filtered, str)
    assert "may refer to" in whole and "may refer to" not in filtered
    assert len(filtered) < len(whole)


def test_build_synthesis_context_numbers_the_evidence_into_the_prompt(
    agent: KnowledgeGraphAgent,
) -> None:
    evidence = agent.query(QUESTION).evidence
    numbered, prompt = agent._build_synthesis_context(QUESTION, evidence)
    assert QUESTION in prompt and numbered.text in prompt
    # every section once, numbered 1..n, grouped by article in the order the articles
    # first come (a result's evidence runs cited first, which may interleave articles)
    titles = list(dict.fromkeys(ev.title for ev in evidence))
    grouped = [ev.section_id for t in titles for ev in evidence if ev.title == t]
    assert [ev.section_id for _, ev in numbered.items] == grouped
    assert [n for n, _ in numbered.items] == list(range(1, len(evidence) + 1))


def test_a_failed_expansion_searches_the_question_alone_and_logs(
    db: str, embedder: Embedder, no_key: None, caplog: pytest.LogCaptureFixture
) -> None:
    def refuse(body: dict[str, Any]) -> Any:
        assert body["model"] == EXPANSION_MODEL  # Haiku, not the synthesis model
        return text("not a list of rephrasings")

    fake: FakeAnthropic
    with (
        fake_anthropic_server(responder=refuse) as fake,
        AnthropicClient(DEFAULT_KEY, base_url=fake.base_url, timeout=5.0) as client,
        KnowledgeGraphAgent(db, embedder=embedder, llm_client=client, enable_multi_query=True) as a,
        caplog.at_level(logging.WARNING, logger="kg_agent"),
    ):
        found = a._multi_query_retrieve(QUESTION, max_results=5)
        assert len(fake.message_requests) == 1
        alone = a.semantic_search(QUESTION, top_k=5)
    # the question alone was searched: its own ranking, deduplicated by title
    titles = [r["title"] for r in found]
    assert titles == list(dict.fromkeys(r["title"] for r in alone))
    assert any("query expansion failed" in r.getMessage() for r in caplog.records)
