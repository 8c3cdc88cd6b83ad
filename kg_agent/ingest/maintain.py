"""``kg-agent delete``: removing articles from a graph.

A delete runs as an update with nothing to add (:mod:`.write`): in one transaction of
a child process, each article's sections, vectors, links and categories go, with the
redirects that lead to it (its other names); an article something else still links to
stays as a stub, as a red link would make it. Then the text index, PageRank and the
derived tables are brought up to date (:mod:`.finish`), and past the bounds of
:mod:`.compact` the graph is compacted.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import shlex
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from kg_agent.exceptions import KGAgentError, LoadAborted, one_line
from kg_agent.ingest.compact import compact_locked
from kg_agent.ingest.finish import finish_indexes, prepare_graph
from kg_agent.ingest.known import READ_EVERY_PAGE
from kg_agent.ingest.session import WriteSession
from kg_agent.ingest.stage import Stage
from kg_agent.ingest.write import WriteJob, now, write_in_child
from kg_agent.store import GraphStore
from kg_agent.store.edits import GraphEdits
from kg_agent.store.indexes import LinkChanges, TextSource

__all__ = ["DeleteReport", "delete_articles"]


@dataclass(slots=True)
class DeleteReport:
    """What a delete did; ``to_dict()`` is the ``--json`` output."""

    db_path: str
    requested: int = 0
    deleted: int = 0  # gone with their edges
    stubbed: int = 0  # still linked to: kept as stubs
    missing: list[str] = field(default_factory=list)  # not articles of the graph
    removed_redirects: int = 0
    removed_stubs: int = 0
    removed_categories: int = 0
    #: compacted after: over half the vector index's vectors were deleted
    compacted: bool = False
    timings: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def delete_articles(
    db_path: str | os.PathLike[str], titles: Sequence[str], *, progress: bool = False
) -> DeleteReport:
    """Delete the articles named ``titles`` from the graph (see the module docstring)."""
    db = str(db_path)
    wanted = list(dict.fromkeys(t.strip() for t in titles if t.strip()))
    report = DeleteReport(db_path=db, requested=len(wanted))
    t0 = time.perf_counter()
    resume = f"kg-agent reindex --db {shlex.quote(db)}"
    if len(wanted) <= 5:
        named = " ".join(map(shlex.quote, wanted))
        resume = f"kg-agent delete {named} --db {shlex.quote(db)}"
    with WriteSession(db, "delete", resume, key="delete") as session:
        meta = prepare_graph(db)
        _finish_pending_deletes(db, progress)
        with GraphStore.open(db, read_only=True) as store:
            found = GraphEdits(store).existing(wanted)
        report.missing = [t for t in wanted if t not in found]
        if not found:
            session.done()
            return report
        key = hashlib.sha256("\n".join(sorted(found)).encode()).hexdigest()
        stage = Stage.open(db, "delete-" + key, staging_dir=None, restart=False, describe={})
        try:
            session.phase("write")
            out = _delete(db, sorted(found), stage, meta, progress, session)
        except KeyboardInterrupt:
            raise LoadAborted(
                f"delete from {db} interrupted; the graph was left as it was"
            ) from None
        except OSError as exc:
            if exc.errno == errno.ENOSPC:
                raise LoadAborted(
                    f"delete from {db} stopped: no space left on the disk; nothing was deleted"
                ) from None
            raise
        stage.remove()
        with GraphStore.open(db, read_only=True) as store:
            index = store.vector_index()
            outgrown = index is not None and index.rebuild_due()
        if outgrown:  # deletions past a quarter of the vector index: built anew
            t1 = time.perf_counter()
            compact_locked(Path(db), prepare_graph(db))
            report.compacted = True
            report.timings["compact"] = round(time.perf_counter() - t1, 3)
        session.done()
    report.deleted = int(out.get("deleted_articles", 0))
    report.stubbed = int(out.get("stubbed_articles", 0))
    report.removed_redirects = int(out.get("removed_redirects", 0))
    report.removed_stubs = int(out.get("removed_stubs", 0))
    report.removed_categories = int(out.get("removed_categories", 0))
    report.timings["total"] = round(time.perf_counter() - t0, 3)
    return report


def _delete(
    db: str,
    found: list[str],
    stage: Stage,
    meta: dict[str, str],
    progress: bool,
    session: WriteSession,
) -> dict[str, Any]:
    import pyarrow as pa

    deleted, removed = stage.file("deleted.parquet"), stage.file("removed-redirects.parquet")
    pq.write_table(pa.table({"title": pa.array(found, pa.string())}), deleted)
    pq.write_table(pa.table({"title": pa.array([], pa.string())}), removed)
    result = stage.file("edits-result.json")
    complete = meta.get("embeddings", "complete") == "complete"
    with GraphStore.open(db, read_only=False) as store:
        if GraphEdits(store).redirects_into(found):  # see update.READ_EVERY_PAGE
            store.set_meta(**{READ_EVERY_PAGE: "1"})
    job = WriteJob(
        db_path=db,
        home=db,
        stage_root=str(stage.root),
        units=[],
        load={
            "id": stage.load_id,
            "source": f"kg-agent delete ({len(found)} articles)",
            "format": "delete",
            "fingerprint": stage.info["fingerprint"],
            "started_at": str(stage.info["started_at"]),
            "finished_at": now(),
            "articles": 0,
            "redirects": 0,
            "sections": 0,
            "model": meta.get("model", ""),
        },
        model=meta.get("model", ""),
        dimension=int(meta.get("dimension", "0")),
        embeddings="now" if complete else "none",
        fresh=False,
        progress=progress,
        pending=session.pending_meta(),
        edits={
            "deleted": str(deleted),
            "removed_redirects": str(removed),
            "result": str(result),
            "drop_redirects_into": True,
        },
    )
    out = write_in_child(job)
    session.phase("index")
    _finish_delete(db, stage, stage.load_id, progress)
    return out


def _finish_delete(db: str, stage: Stage, load_id: str, progress: bool) -> None:
    """After a delete's commit: the text index loses what went, the rest is rebuilt."""
    result = stage.file("edits-result.json")
    text = links = None
    if result.exists():
        edits = json.loads(result.read_text(encoding="utf-8"))
        text = TextSource(removed_titles=edits["removed"], stubbed_titles=edits["stubbed"])
        links = LinkChanges(
            load_id,
            removed_titles=edits["removed"],
            stubbed_titles=edits["stubbed"],
            unlinked=edits.get("unlinked"),
        )
    try:
        if text is None:  # no record of what went: the text index is rebuilt whole
            with GraphStore.open(db, read_only=False) as store:
                store.set_meta(text_stale="1")
        finish_indexes(db, load_id, text, pool_mb=None, progress=progress, links=links)
    except (KeyboardInterrupt, KGAgentError, OSError, RuntimeError) as exc:
        why = "interrupted" if isinstance(exc, KeyboardInterrupt) else one_line(exc)
        raise LoadAborted(
            f"the articles were deleted from {db}, but refreshing its indexes failed ({why}): "
            "run any 'kg-agent delete' (or 'kg-agent reindex') on it to finish them"
        ) from None


def _finish_pending_deletes(db: str, progress: bool) -> None:
    """Finish the indexes of a delete that committed but was stopped before them."""
    with GraphStore.open(db, read_only=True) as store:
        pending = [
            load
            for load in store.loads()
            if str(load["fingerprint"]).startswith("delete-") and load["status"] != "complete"
        ]
    for load in pending:
        fp = str(load["fingerprint"])
        stage = Stage(Stage.path_for(db, fp, None), {}, resumed=True)
        _finish_delete(db, stage, str(load["id"]), progress)
        stage.remove()
