"""The reader gives the same answer in every process.

Python salts string hashes per process (``PYTHONHASHSEED``), so a set of titles or
words iterates in a different order in each run. An answer that depended on that order
(which two named articles a yes/no compares, how a tie between sentence scores breaks)
changed from one ``kg-agent eval`` to the next; these cases run the reader under several
seeds and require one answer.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

SCRIPT = r"""
import json
from kg_agent.answering import read_evidence
from kg_agent.retrieval.base import Evidence

def ev(title, content, source="hybrid"):
    return Evidence(f"{title}::0000", title, "", "", content, 0.5, source=source)

people = [
    ev("Anna Berg", "Anna Berg (1901 – 1980) was a Swedish painter. She lived in Lund.", "entity"),
    ev("Carl Dahl", "Carl Dahl (1899 – 1975) was a Danish sculptor. He lived in Aarhus.", "entity"),
    ev("Erik Falk", "Erik Falk (1910 – 1990) was a Norwegian architect. He lived in Oslo.",
       "entity"),
    ev("Gerd Holm", "Gerd Holm (1920 – 2001) was a Swedish writer. She lived in Malmo.", "entity"),
]
# equal scores: the sentences tie, and the tie must break the same way every time
ties = [
    ev("North Field", "The north field grows barley and oats every summer.", "hybrid"),
    ev("South Field", "The south field grows barley and oats every summer.", "hybrid"),
    ev("East Field", "The east field grows barley and oats every summer.", "hybrid"),
]
out = []
for question, items in (
    ("Are Anna Berg, Carl Dahl, Erik Falk and Gerd Holm of the same nationality?", people),
    ("Which field grows barley and oats every summer?", ties),
):
    r = read_evidence(question, list(enumerate(items, 1)), max_words=60)
    out.append([r.short_answer, [s.text for s in r.sentences], r.short_cites])
print(json.dumps(out))
"""


def _run(seed: int) -> list[object]:
    env = dict(os.environ, PYTHONHASHSEED=str(seed))
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def test_answers_do_not_depend_on_string_hashing() -> None:
    runs = [_run(seed) for seed in range(6)]
    assert all(run == runs[0] for run in runs[1:]), runs
    yes_no, tie = runs[0]
    assert yes_no[0] in ("yes", "no")  # the comparison was made
    assert tie[1][0].startswith("The north field")  # ties keep the evidence's order
