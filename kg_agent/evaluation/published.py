"""Published retrieval numbers on exactly our evaluation pools, for side-by-side reports.

Only numbers measured under the same protocol (same passage pool, passage-level
Recall@k) are listed: anything else would invite a comparison that means nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "END_TO_END",
    "HIPPORAG",
    "HIPPORAG2",
    "MEASURED_HERE",
    "PUBLISHED",
    "PublishedResult",
    "end_to_end_for",
    "published_for",
]

HIPPORAG = "HippoRAG (NeurIPS 2024), Table 2"
HIPPORAG2 = "HippoRAG 2 (ICML 2025)"
# Our own earlier measurement, not a paper: kept apart so reports can label it as such.
MEASURED_HERE = "measured here"


@dataclass(frozen=True, slots=True)
class PublishedResult:
    """One system's published passage recall (percent) on a dataset's pool."""

    system: str
    recall_at_2: float | None
    recall_at_5: float | None
    source: str
    multi_step: bool
    note: str = ""

    @property
    def measured_here(self) -> bool:
        """True for our own earlier measurement rather than a paper's number."""
        return self.source == MEASURED_HERE

    @property
    def label(self) -> str:
        """Name for a report row; multi-step systems are flagged (they retrieve iteratively)."""
        return f"{self.system}, multi-step" if self.multi_step else self.system


PUBLISHED: dict[str, tuple[PublishedResult, ...]] = {
    # 1,000 questions over the 6,119-passage HippoRAG pool; our dev set is 300 of them.
    "2wikimultihopqa": (
        PublishedResult("BM25", 51.8, 61.9, HIPPORAG, False),
        PublishedResult("Contriever", 46.6, 57.5, HIPPORAG, False),
        PublishedResult("GTR", 60.2, 67.9, HIPPORAG, False),
        PublishedResult("ColBERTv2", 59.2, 68.2, HIPPORAG, False),
        PublishedResult("HippoRAG", 71.5, 89.5, HIPPORAG, False),
        PublishedResult("IRCoT+HippoRAG", 75.8, 93.9, HIPPORAG, True),
        PublishedResult("NV-Embed-v2 (7B)", None, 76.5, HIPPORAG2, False),
        PublishedResult("HippoRAG 2", None, 90.4, HIPPORAG2, False),
        PublishedResult(
            "bm25s (stemmed)",
            55.3,
            65.3,
            MEASURED_HERE,
            False,
            note="our own earlier measurement on the full 1,000-question pool",
        ),
    ),
    # HippoRAG's HotpotQA/MuSiQue numbers are on 1,000-question pools, not comparable with
    # these small dev pools (a smaller pool is an easier retrieval task), so they are not listed.
    "hotpotqa": (),
    "musique": (),
}

#: End-to-end QA with an LLM reader, for the distance between an LLM-free short answer and
#: an LLM's: HippoRAG 2 (ICML 2025), Llama-3.3-70B-Instruct reading its top passages,
#: EM / F1 on 1,000-question pools (ours are small dev pools: read it as a scale).
END_TO_END: dict[str, tuple[str, float, float]] = {
    "2wikimultihopqa": ("HippoRAG 2, 70B LLM reader", 65.0, 71.0),
    "hotpotqa": ("HippoRAG 2, 70B LLM reader", 62.7, 75.5),
    "musique": ("HippoRAG 2, 70B LLM reader", 37.2, 48.6),
}

_ALIASES = {"2wiki": "2wikimultihopqa", "2wikimqa": "2wikimultihopqa", "hotpot": "hotpotqa"}


def published_for(dataset: str) -> tuple[PublishedResult, ...]:
    """Published rows for a dataset name (case, dashes and aliases forgiven); () if none."""
    key = re.sub(r"[^0-9a-z]", "", dataset.lower())
    key = _ALIASES.get(key, key)
    return PUBLISHED.get(key, ())


def end_to_end_for(dataset: str) -> tuple[str, float, float] | None:
    """(system, EM, F1) of the published end-to-end answer numbers, or None."""
    key = re.sub(r"[^0-9a-z]", "", dataset.lower())
    return END_TO_END.get(_ALIASES.get(key, key))
