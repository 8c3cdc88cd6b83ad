"""Every benchmark script runs to its end at a toy size and writes its JSON.

The numbers in docs/BENCHMARKS.md come from ``scripts/bench_*.py``; a script the package
has moved away from cannot reproduce them (two had: ``bench_linker`` called a store
method the linker no longer uses, and ``bench_embed`` reported its reference setting as
failed and still exited 0). Nothing here is timed: each run is the smallest the script
allows, and the test checks that it finished, said so with its exit status, and saved
rows (``bench_vectors`` needs faiss and usearch: the ``bench`` extra). ``bench_embed_stage``
and ``bench_embed_batches`` are left out (a minute each, and the first writes its dumps into
the project); ``bench_vector_disk`` too (half a minute).
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from kg_agent.ingest.pipeline import LoadReport
from tests.support.graph_compare import copy_graph

ROOT = Path(__file__).resolve().parents[2]

#: script → (its toy arguments: {work} a folder, {graph} a copy of the sample graph,
#: {data} the shared data; the JSON key that must hold rows)
SCRIPTS: dict[str, tuple[str, str]] = {
    "bench_load": ("--sources sample", "results"),
    "bench_query": ("--db {graph} --n 3 --passes 1 --warmup 0 --cold-runs 1", "warm"),
    "bench_serve": (
        "--db {graph} --questions 3 --clients 1,2 --requests 2 --workers 1",
        "levels",
    ),
    "bench_scale": (
        "--sizes 100 --questions 2 --workers 1 --hnsw-sizes 500 "
        "--dump-dir {work}/dumps --db-dir {work}/db",
        "rows",
    ),
    "bench_update": (
        "--sizes 100 --rates 0.3 --embeddings none --partial --devices cpu "
        "--dump-dir {work}/dumps --work {work}/work",
        "rows",
    ),
    "bench_linker": (
        "--sizes 0 --persist-sizes= --pickle-sizes= --fts-sizes 0 --limit 5 --workdir {work}",
        "sizes",
    ),
    "bench_vectors": (
        "run --embed-db {graph} --embed-limit 300 --vectors {work}/vectors --work {work}/idx "
        "--sizes 300,600 --kuzu-max 300 --shared {data}/..",
        "rows",
    ),
    "bench_vector_store": ("--base {graph} --sizes 100 --work {work}", "rows"),
    "bench_embed": (
        "--data {data}/multihop/2wikimultihopqa --limit 40 --rounds 1 --sample 16 --settings naive",
        "results",
    ),
}

#: the scripts that read nothing from ../shared/data at these settings
OWN_DATA = frozenset(["bench_load", "bench_vector_store"])


@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_a_benchmark_script_runs_to_its_end(
    script: str,
    tmp_path: Path,
    sample_graph: tuple[Path, LoadReport],
    request: pytest.FixtureRequest,
) -> None:
    # a copy: the sample graph is the session's, and a script must not change it
    graph = copy_graph(sample_graph[0], tmp_path / "sample.kuzu")
    work = tmp_path / "work"
    work.mkdir()
    args, key = SCRIPTS[script]
    out = tmp_path / f"{script}.json"
    flag = "--out" if script == "bench_serve" else "--json"
    # what reads the shared data (questions, real text to make dumps of) skips without it
    data = request.getfixturevalue("shared_data_dir") if script not in OWN_DATA else None
    argv = args.format(work=work, graph=graph, data=data).split()
    cmd = [sys.executable, str(ROOT / "scripts" / f"{script}.py"), *argv]
    env = {**os.environ, "TMPDIR": str(tmp_path), "POOL_MB": "512"}
    proc = subprocess.run(
        [*cmd, flag, str(out)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    saved = json.loads(out.read_text())
    assert saved[key], f"{script} saved no {key}: {sorted(saved)}"


def test_parse_digest_tells_identical_output_from_a_change(tmp_path: Path) -> None:
    """``scripts/parse_digest.py`` is how a parser change is shown to keep its output."""
    sample = ROOT / "kg_agent" / "data" / "sample" / "pages-articles.xml"
    script = [sys.executable, str(ROOT / "scripts" / "parse_digest.py"), str(sample)]
    saved = tmp_path / "before.pkl"
    first = subprocess.run([*script, "--save", str(saved)], capture_output=True, text=True)
    assert first.returncode == 0, first.stderr
    out = tmp_path / "same.json"
    same = subprocess.run(
        [*script, "--against", str(saved), "--json", str(out)], capture_output=True, text=True
    )
    assert same.returncode == 0, same.stderr
    result = json.loads(out.read_text())
    assert result["pages"] > 30 and result["compared"] == result["pages"]
    assert result["differ"] == 0
    # one page parsed differently: named, and a failing exit
    reprs = pickle.loads(saved.read_bytes())
    reprs[3] = reprs[3].replace("sections=(", "sections=(None, ", 1)
    saved.write_bytes(pickle.dumps(reprs))
    changed = subprocess.run(
        [*script, "--against", str(saved), "--json", str(out)], capture_output=True, text=True
    )
    assert changed.returncode == 1
    assert json.loads(out.read_text())["first_differing_pages"] == [3]


def test_bench_scale_measures_the_ask_alone_in_alternating_rounds(
    tmp_path: Path, sample_graph: tuple[Path, LoadReport]
) -> None:
    """``--asks``: the warm ask of checkouts on graphs already loaded, round by round."""
    graph = copy_graph(sample_graph[0], tmp_path / "sample.kuzu")
    out = tmp_path / "asks.json"
    cmd = [sys.executable, str(ROOT / "scripts" / "bench_scale.py")]
    args = ["--asks", f"{ROOT}={graph},{ROOT}={graph}", "--rounds", "2", "--questions", "2"]
    proc = subprocess.run(
        [*cmd, *args, "--json", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    saved = json.loads(out.read_text())
    assert [len(a["p50s_ms"]) for a in saved["asks"]] == [2, 2]
    assert saved["asks"][0]["change"] == 0.0 and all(a["median_p50_ms"] > 0 for a in saved["asks"])
    assert "against the first" in proc.stdout
