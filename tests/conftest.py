"""Shared fixtures: where the real third-party data lives (never copied into the project)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# The suite compares vectors across processes, batchings and thread counts (an update
# against a fresh load, Ray against in-process) to 1e-5. On a CPU with native bf16 the
# default runs the model under bf16 autocast, where a vector moves by ~1e-3 with its
# batch: so the model runs in float32 here, as it does on CPUs without bf16.
os.environ.setdefault("KG_AGENT_PRECISION", "float32")
# One embedding cache per test session: repeated loads of the same source in the
# suite reuse vectors, and nothing is written to the user's ~/.cache.
if "KG_AGENT_CACHE_DIR" not in os.environ:
    import atexit
    import shutil
    import tempfile

    os.environ["KG_AGENT_CACHE_DIR"] = tempfile.mkdtemp(prefix="kg-agent-test-cache-")
    atexit.register(shutil.rmtree, os.environ["KG_AGENT_CACHE_DIR"], ignore_errors=True)

PROJECT_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = PROJECT_ROOT.parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data_dir() -> Path:
    """``../shared/data`` beside the project, or skip the test with the reason."""
    if not (SHARED_DATA / "SOURCES.md").exists():
        pytest.skip(
            f"{SHARED_DATA} not found: real-data tests need the shared data folder "
            "beside the project (see README, 'Tests')"
        )
    return SHARED_DATA


#: Session graphs that take minutes to build: every test that needs one runs on the same
#: pytest-xdist worker (``scripts/test.sh`` runs the suite on one worker a core), so each is
#: built once. The first listed wins for a module that uses both.
_HEAVY_GRAPHS = ("twowiki_graph", "enwiki_graph")


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups into the test ids
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Group tests for ``--dist loadgroup``: a test that uses a heavy graph goes with that
    graph; any other test goes with its module (module fixtures are built once), or with
    the heavy graph its module uses."""
    if not config.pluginmanager.hasplugin("xdist"):
        return
    used: dict[str, set[str]] = {}
    for item in items:
        names = set(getattr(item, "fixturenames", ())) & set(_HEAVY_GRAPHS)
        used.setdefault(item.nodeid.split("::")[0], set()).update(names)
    module_graph = {m: next(n for n in _HEAVY_GRAPHS if n in u) for m, u in used.items() if u}
    for item in items:
        module = item.nodeid.split("::")[0]
        names = getattr(item, "fixturenames", ())
        own = next((n for n in _HEAVY_GRAPHS if n in names), None)
        group = own or module_graph.get(module) or module
        item.add_marker(pytest.mark.xdist_group(group))
