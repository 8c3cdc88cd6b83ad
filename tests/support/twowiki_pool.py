"""A smaller 2WikiMultihopQA passage pool for the test suite, written from the shared one.

The shared pool holds 6,119 passages for 300 dev questions; embedding them all on a
2-core CI machine took ~3-4 minutes of the suite. The tests ask at most the first 30
questions, so the pool they load keeps the gold passages of the first
``GOLD_QUESTIONS`` questions and the ``NEIGHBOURS`` passages either side of each in the
file: the file keeps a question's passages together, so these are the distractors the
dataset gave it (1,408 passages). On it the agent finds the same share of the first 30
questions' gold passages as on the whole pool (0.96; ``tests/e2e/test_agent_2wiki.py``).

:func:`mirror_data_dir` writes a data folder laid out as ``../shared/data`` (the eval
and the multi-step script find a dataset's files by that layout): the smaller pool as
``multihop/2wikimultihopqa/corpus.json``, and links to everything else.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

TWOWIKI = Path("multihop") / "2wikimultihopqa"
GOLD_QUESTIONS = 60
NEIGHBOURS = 10


def smaller_pool(
    corpus: list[dict[str, Any]], questions: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The passages of ``corpus`` the tests load, in the corpus's own order."""
    where = {p["title"]: i for i, p in enumerate(corpus)}
    keep: set[int] = set()
    for q in questions[:GOLD_QUESTIONS]:
        for t in q["supporting_facts"]:
            if t in where:
                keep.update(range(max(0, where[t] - NEIGHBOURS), where[t] + NEIGHBOURS + 1))
    return [p for i, p in enumerate(corpus) if i in keep]


def mirror_data_dir(shared: Path, out: Path) -> Path:
    """``out`` laid out as ``shared``, with the smaller 2Wiki pool; returns ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    for entry in shared.iterdir():
        if entry.name != "multihop":
            os.symlink(entry, out / entry.name)
    (out / "multihop").mkdir(exist_ok=True)
    for entry in (shared / "multihop").iterdir():
        if entry.name != TWOWIKI.name:
            os.symlink(entry, out / "multihop" / entry.name)
    src, dst = shared / TWOWIKI, out / TWOWIKI
    dst.mkdir()
    for entry in src.iterdir():
        if entry.name != "corpus.json":
            os.symlink(entry, dst / entry.name)
    corpus = json.loads((src / "corpus.json").read_text(encoding="utf-8"))
    questions = json.loads((src / "questions.dev.json").read_text(encoding="utf-8"))
    pool = smaller_pool(corpus, questions)
    (dst / "corpus.json").write_text(json.dumps(pool, ensure_ascii=False), encoding="utf-8")
    return out
