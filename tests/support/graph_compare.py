"""Everything a graph holds, in a form two graphs can be compared by (an updated graph
against a fresh load of the same dump)."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from kg_agent.store import GraphStore

#: Every table's rows without what says *when* they were written (load ids), PageRank
#: to 6 decimals.
QUERIES = {
    "articles": "MATCH (a:Article) RETURN a.title, a.page_id, a.is_stub, a.is_disambiguation, "
    "a.n_sections, a.word_count, a.revision, a.digest, a.kind, round(a.pagerank, 6)",
    "sections": "MATCH (s:Section) RETURN s.id, s.article, s.heading, s.heading_path, s.level, "
    "s.ordinal, s.part, s.text, s.word_count, s.text_hash",
    "categories": "MATCH (c:Category) RETURN c.name",
    "redirects": "MATCH (r:Redirect)-[:REDIRECTS_TO]->(a:Article) RETURN r.title, a.title",
    "has_section": "MATCH (a:Article)-[:HAS_SECTION]->(s:Section) RETURN a.title, s.id",
    "links": "MATCH (a:Article)-[r:LINKS_TO]->(b:Article) "
    "RETURN a.title, b.title, r.count, r.inferred",
    "mentions": "MATCH (s:Section)-[r:MENTIONS]->(a:Article) "
    "RETURN s.id, a.title, r.count, r.inferred",
    "in_category": "MATCH (a:Article)-[:IN_CATEGORY]->(c:Category) RETURN a.title, c.name",
    # fact ids are numbers a write gives (an update's differ from a fresh load's): the
    # facts are compared by what they hold
    "facts": "MATCH (a:Article)-[:HAS_FACT]->(f:Fact) RETURN a.title, f.article, f.box, "
    "f.sub_box, f.key, f.raw_key, f.value, f.item, f.kind, f.target, f.number, "
    "f.unit, f.date, f.note, f.numbers",
    "fact_count": "MATCH (f:Fact) RETURN count(f)",  # none without its article
    "refers_to": "MATCH (f:Fact)-[:REFERS_TO]->(a:Article) "
    "RETURN f.article, f.sub_box, f.key, f.item, a.title",
}


def graph_content(db: Path) -> dict[str, Any]:
    """Each table's rows as a sorted list, the vectors by section id, the text index's
    document counts."""
    with GraphStore.open(db, read_only=True) as store:
        out: dict[str, Any] = {
            name: sorted((tuple(r.values()) for r in store.query(q)), key=repr)
            for name, q in QUERIES.items()
        }
        out["vectors"] = {}
        out["vector_store"] = store.meta().get("vector_store", "graph")
        if store.vectors_in_index():  # the graph keeps keys alone: the index's copy
            ids, matrix = store.section_embeddings()
            out["vectors"] = dict(zip(ids, matrix, strict=True))
            nulls = "MATCH (v:SectionVector) WHERE v.embedding IS NOT NULL RETURN count(v) AS n"
            assert store.query(nulls)[0]["n"] == 0, "the graph holds vectors its index stores"
        for table in () if store.vectors_in_index() else store.vector_tables():
            rows = store.query(f"MATCH (v:{table}) RETURN v.id AS id, v.embedding AS v")
            for r in rows:
                assert r["id"] not in out["vectors"], f"{r['id']} has two vectors"
                out["vectors"][r["id"]] = np.asarray(r["v"], dtype=np.float32)
        index = store.text_index()
        out["text_index"] = index.counts() if index is not None else None
        vectors = store.vector_index()
        out["vector_index"] = (
            None if vectors is None else sorted(str(i) for ids in vectors.ids() for i in ids)
        )
        # what semantic search answers, asked with every fifth vector: the scores of the
        # top 5, and the ids scored above the fifth (ties may come in either order)
        out["answers"] = {}
        for sid in sorted(out["vectors"])[::5]:
            hits = store.vector_search(out["vectors"][sid].tolist(), 5)
            scores = [round(h.score, 4) for h in hits]
            above = sorted(h.section_id for h in hits if round(h.score, 4) > scores[-1])
            out["answers"][sid] = (scores, above)
    return out


def assert_same_graph(updated: Path, fresh: Path, *, atol: float = 1e-5) -> None:
    """``updated`` holds exactly what ``fresh`` does (vectors to ``atol``)."""
    a, b = graph_content(updated), graph_content(fresh)
    for name in QUERIES:
        only_a = sorted(set(a[name]) - set(b[name]), key=repr)[:5]
        only_b = sorted(set(b[name]) - set(a[name]), key=repr)[:5]
        assert a[name] == b[name], f"{name}: only updated {only_a}; only fresh {only_b}"
    assert a["vectors"].keys() == b["vectors"].keys()
    for sid, vec in a["vectors"].items():
        assert np.allclose(vec, b["vectors"][sid], atol=atol), sid
    assert a["text_index"] == b["text_index"] and a["vector_store"] == b["vector_store"]
    # the vector index holds every vector of the graph, and answers as a fresh build's
    if a["vectors"]:
        assert a["vector_index"] == b["vector_index"] == sorted(a["vectors"])
    for sid, (scores, above) in a["answers"].items():
        want_scores, want_above = b["answers"][sid]
        assert np.allclose(scores, want_scores, atol=2e-4) and above == want_above, sid


def assert_link_table_patched(db: Path) -> None:
    """The last update patched the graph's link table (not rebuilt it), and the patch
    holds what a rebuild from the graph writes, array for array."""
    from kg_agent.store.link_table import _HEADER

    with GraphStore.open(db, read_only=True) as store:
        table = store.link_table()
        assert table is not None, "the link table is not in step with the graph"
        assert table.made == "patch"
        patched = table.path.read_bytes()
    with tempfile.TemporaryDirectory() as tmp:  # on a copy: a writer's open changes the file
        copy = copy_graph(db, Path(tmp) / db.name)
        with GraphStore.open(copy, read_only=False) as store:
            store.write_link_table()  # a rebuild from an export of every link
            rebuilt = store.link_table()
            assert rebuilt is not None and rebuilt.made == "export"
            assert patched[_HEADER:] == rebuilt.path.read_bytes()[_HEADER:]


def copy_graph(src: Path, dst: Path) -> Path:
    """A closed graph copied (its file and its index folder), as ``cp -r`` would."""
    shutil.copy2(src, dst)
    shutil.copytree(
        Path(f"{src}.indexes"), Path(f"{dst}.indexes"), ignore=shutil.ignore_patterns("load.lock")
    )
    return dst
