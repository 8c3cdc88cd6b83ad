#!/usr/bin/env bash
# Set up and run the test suite (real Kùzu, real embedding model, real CLI).
# Tests that need ../shared/data skip with a message when it is absent.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
# Two workers on two cores each run torch's OpenMP threads: idle ones sleep rather than
# spin (measured: the suite 14m49s -> 12m16s on the 2-core CI machine, same tests; a
# process alone embeds slower with it, so only here: docs/operations.md).
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-PASSIVE}
# One pytest-xdist worker a core, four at most (each holds its own model and graphs;
# KG_TEST_WORKERS=0 runs in one process). Tests that share a heavy session graph run on
# one worker (tests/conftest.py groups them).
workers=${KG_TEST_WORKERS:-$(( $(nproc) < 4 ? $(nproc) : 4 ))}
run() { .venv/bin/python -m pytest -q --durations=15 -n "$workers" --dist loadgroup "$@"; }
if [ "$#" -gt 0 ]; then run "$@"; exit; fi
run
# The store on Kùzu's maintained fork too (KG_AGENT_ENGINE, kg_agent/store/engine.py): its
# unit tests and the update, delete and compaction flows. Its native module and Kùzu's
# cannot share a process, so this is a second run.
if .venv/bin/python -c "import real_ladybug" 2>/dev/null; then
  echo "== the store on real_ladybug"
  KG_AGENT_ENGINE=real_ladybug run tests/unit/store tests/e2e/test_update.py -k \
    "not test_vector_index and (store or equals_a_fresh_load or vector_index_finds or segments or over_half or check_finds or answers_from_the_new_text)"
else
  echo "real_ladybug is not installed: the store's run on it is skipped"
fi
