"""Real section and question vectors for scripts/bench_vectors.py, embedded once and kept.

Why a separate step: embedding 200k sections with all-MiniLM-L6-v2 takes ~25 min on 2 CPU
cores (a minute or two on a GPU), while every index is then measured many times on the same
vectors. The vectors are written in chunks of :data:`CHUNK` rows (``sections-NNNN.npy``), so
an interrupted run resumes at the first missing chunk; ``sections.npy`` is their
concatenation, made when all are there.

Sections are read from a graph loaded with ``--embeddings none`` (the scale dumps of
``scripts/make_dump.py``), in the order of their ids, and embedded as the load embeds
them (:func:`kg_agent.ingest.chunking.embedding_input`). Queries are real questions: those
of the multi-hop dev sets in ``../shared/data/multihop`` and our own plain questions
(``tests/questions/enwiki_sample.json``), embedded as ``ask`` embeds a question.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CHUNK = 16_384


def section_inputs(db: Path, limit: int | None) -> list[str]:
    """What the model reads for each section of ``db``, in id order."""
    from kg_agent.ingest.chunking import embedding_input
    from kg_agent.store import GraphStore

    with GraphStore.open(db, read_only=True) as store:
        rows = store.query(
            "MATCH (a:Article)-[:HAS_SECTION]->(s:Section) "
            "RETURN s.id AS id, a.title AS title, s.heading_path AS hp, s.text AS text "
            "ORDER BY s.id" + (" LIMIT $n" if limit else ""),
            {"n": int(limit)} if limit else None,
        )
    return [embedding_input(r["title"], r["hp"] or "", r["text"] or "") for r in rows]


def question_texts(shared: Path) -> list[str]:
    """Real questions: the dev sets' and our plain ones (deduplicated, in file order)."""
    out: list[str] = []
    multihop = shared / "data" / "multihop"
    for path in sorted([*multihop.rglob("*.json"), *multihop.rglob("*.jsonl")]):
        if "corpus" in path.name:
            continue
        try:
            text = path.read_text()
            data = (
                [json.loads(line) for line in text.splitlines() if line.strip()]
                if path.suffix == ".jsonl"
                else json.loads(text)
            )
        except (OSError, ValueError):
            continue
        for row in data if isinstance(data, list) else []:
            if isinstance(row, dict) and isinstance(row.get("question"), str):
                out.append(row["question"])
    plain = ROOT / "tests" / "questions" / "enwiki_sample.json"
    if plain.exists():
        data = json.loads(plain.read_text())
        rows = data["questions"] if isinstance(data, dict) else data
        out.extend(r["question"] for r in rows if isinstance(r, dict) and "question" in r)
    return list(dict.fromkeys(out))


def embed_all(db: Path, out: Path, shared: Path, limit: int | None) -> None:
    from kg_agent.embedding import Embedder

    out.mkdir(parents=True, exist_ok=True)
    embedder = Embedder()
    questions = question_texts(shared)
    if not questions:
        sys.exit(f"no questions under {shared}/data/multihop: the queries must be real")
    qpath = out / "queries.npy"
    if not qpath.exists():
        np.save(qpath, np.asarray(embedder.embed(questions), np.float32))
    texts = section_inputs(db, limit)
    n_chunks = -(-len(texts) // CHUNK)
    t0, done = time.perf_counter(), 0
    for c in range(n_chunks):
        path = out / f"sections-{c:04d}.npy"
        if path.exists():
            continue
        part = texts[c * CHUNK : (c + 1) * CHUNK]
        vecs = np.asarray(embedder.embed(part), dtype=np.float32)
        tmp = path.with_suffix(".tmp.npy")
        np.save(tmp, vecs)
        tmp.replace(path)
        done += len(part)
        rate = done / (time.perf_counter() - t0)
        left = sum(
            1 for k in range(c + 1, n_chunks) if not (out / f"sections-{k:04d}.npy").exists()
        )
        print(
            f"chunk {c + 1}/{n_chunks}: {rate:,.0f} sections/s, "
            f"ETA {left * CHUNK / rate / 60:.1f} min",
            flush=True,
        )
    full = np.concatenate([np.load(out / f"sections-{c:04d}.npy") for c in range(n_chunks)])
    np.save(out / "sections.npy", full)
    meta = {"sections": int(full.shape[0]), "queries": len(questions), "db": str(db)}
    (out / "vectors.json").write_text(json.dumps(meta, indent=1))
    print(f"{full.shape[0]:,} section vectors, {len(questions)} query vectors in {out}")
