#!/usr/bin/env bash
# Set up and run the test suite (real Kùzu, real embedding model, real CLI).
# Tests that need ../shared/data skip with a message when it is absent.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
exec .venv/bin/python -m pytest -q --durations=15 "$@"
