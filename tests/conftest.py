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
