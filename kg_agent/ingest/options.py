"""What every write of sources into a graph is told: the options a load and an update
share (:class:`SourceOptions`), extended by each (``LoadOptions``, ``UpdateOptions``)."""

from __future__ import annotations

import os
from dataclasses import dataclass

from kg_agent.exceptions import InvalidArgumentError
from kg_agent.ingest.chunking import DEFAULT_MAX_WORDS

__all__ = ["SourceOptions"]


@dataclass(frozen=True, slots=True, kw_only=True)
class SourceOptions:
    """How a source is read and written. ``fmt`` None means detect from content;
    ``workers`` None means one parse worker per CPU core.

    ``staging_dir``: where shards are staged (beside the database by default);
    ``cache``: reuse embeddings of texts embedded before (see ``embed_cache``);
    ``restart``: discard a resumable earlier attempt; ``buffer_pool_mb``: Kùzu's
    buffer pool for the write; ``chunk_bytes``: the parse unit's size (tests use small
    units to get many); ``index``: a multistream dump's index file.
    """

    fmt: str | None = None
    workers: int | None = None
    progress: bool = True
    staging_dir: str | None = None
    cache: bool = True
    restart: bool = False
    buffer_pool_mb: int | None = None
    max_section_words: int = DEFAULT_MAX_WORDS
    chunk_bytes: int | None = None
    index: str | None = None

    def __post_init__(self) -> None:
        if self.workers is not None and self.workers < 1:
            raise InvalidArgumentError(f"workers must be >= 1, not {self.workers}")

    @property
    def parse_workers(self) -> int:
        return self.workers or os.cpu_count() or 1
