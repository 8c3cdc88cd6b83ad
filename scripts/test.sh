#!/usr/bin/env bash
# Set up and run the test suite (real Kùzu, real embedding model, real CLI).
# Tests that need ../shared/data skip with a message when it is absent.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
# One pytest-xdist worker a core, four at most (each holds its own model and graphs;
# KG_TEST_WORKERS=0 runs in one process). Tests that share a heavy session graph run on
# one worker (tests/conftest.py groups them).
workers=${KG_TEST_WORKERS:-$(( $(nproc) < 4 ? $(nproc) : 4 ))}
exec .venv/bin/python -m pytest -q --durations=15 -n "$workers" \
  --dist loadgroup "$@"
