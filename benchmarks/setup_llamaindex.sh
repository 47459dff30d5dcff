#!/usr/bin/env sh
# Create the venv with llama-index-core that the --llamaindex comparisons run in.
#   sh benchmarks/setup_llamaindex.sh [VENV_DIR]   (default: ~/.cache/agentkit/li-venv)
# Then pass VENV_DIR/bin/python to --llamaindex.
set -eu
VENV="${1:-$HOME/.cache/agentkit/li-venv}"
python3 -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet --upgrade pip
"$VENV/bin/python" -m pip install --quiet 'llama-index-core==0.12.52.post1'
"$VENV/bin/python" -W ignore -c 'import llama_index.core; print("llama-index-core", llama_index.core.__version__, "ready:", __import__("sys").executable)'
