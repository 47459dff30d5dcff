#!/usr/bin/env sh
# Create the venv that the --llamaindex comparisons run in: llama-index-core, and for
# bench_planning.py the LLMCompiler agent and Chain-of-Abstraction pack built on it.
#   sh benchmarks/setup_llamaindex.sh [VENV_DIR]   (default: ~/.cache/agentkit/li-venv)
# Then pass VENV_DIR/bin/python to --llamaindex.
set -eu
VENV="${1:-$HOME/.cache/agentkit/li-venv}"
python3 -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet --upgrade pip
"$VENV/bin/python" -m pip install --quiet 'llama-index-core==0.12.52.post1' \
    'llama-index-agent-llm-compiler==0.3.2' 'llama-index-packs-agents-coa==0.3.2'
"$VENV/bin/python" -W ignore -c 'import llama_index.core, llama_index.agent.llm_compiler, llama_index.packs.agents_coa; print("llama-index-core", llama_index.core.__version__, "+ llm-compiler + agents-coa ready:", __import__("sys").executable)'
