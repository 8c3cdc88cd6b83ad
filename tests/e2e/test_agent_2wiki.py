"""The agent on real multi-hop data: the 6,119-passage 2WikiMultihopQA pool."""

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
    # Measured 0.59 on these 30 questions (single-step; multi-step is a later issue).
    assert found / total >= 0.5
