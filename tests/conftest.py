"""Shared fixtures: where the real third-party data lives (never copied into the project)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

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
