"""The agent on real multi-hop data: the tests' 2WikiMultihopQA pool (1,408 passages).

The pool keeps the gold passages of the first 60 dev questions and the ten passages either
side of each in the shared file, the neighbours the dataset gave that question
(``tests/support/twowiki_pool.py``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kg_agent.agent import KnowledgeGraphAgent
from kg_agent.embedding import Embedder
from kg_agent.ingest.pipeline import LoadReport


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)


def test_agent_finds_gold_passages_on_2wiki(
    twowiki_graph: tuple[Path, LoadReport], embedder: Embedder, shared_data_dir: Path
) -> None:
    questions = json.loads(
        (shared_data_dir / "multihop/2wikimultihopqa/questions.dev.json").read_text("utf-8")
    )[:30]
    with KnowledgeGraphAgent(str(twowiki_graph[0]), embedder=embedder) as agent:
        found = 0
        total = 0
        for q in questions:
            result = agent.query(q["question"])
            assert result.path == "offline" and result.mode == "extractive"
            assert all(c.title in {e.title for e in result.evidence} for c in result.citations)
            titles = {e.title for e in result.evidence}
            gold = set(q["supporting_facts"])
            found += len(gold & titles)
            total += len(gold)
    # Share of gold passages among the evidence given to synthesis (8 sections).
    # Measured 0.96 on these 30 questions, on this pool and on the whole shared one.
    assert found / total >= 0.9
