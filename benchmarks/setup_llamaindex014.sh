#!/usr/bin/env sh
# Create the venv with llama-index-core 0.14 that bench_workflows.py --llamaindex runs in
# (0.14 has AgentWorkflow; bench_agents.py needs 0.12's AgentRunner: setup_llamaindex.sh).
#   sh benchmarks/setup_llamaindex014.sh [VENV_DIR]   (default: ~/.cache/agentkit/li014-venv)
set -eu
VENV="${1:-$HOME/.cache/agentkit/li014-venv}"
python3 -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet --upgrade pip
"$VENV/bin/python" -m pip install --quiet 'llama-index-core>=0.14,<0.15'
"$VENV/bin/python" -W ignore -c 'import llama_index.core; print("llama-index-core", llama_index.core.__version__, "ready:", __import__("sys").executable)'
