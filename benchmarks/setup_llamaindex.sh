#!/usr/bin/env sh
# Create a venv that the --llamaindex comparisons run in.
#   sh benchmarks/setup_llamaindex.sh [0.12|0.14] [VENV_DIR]
# 0.12 (the default; ~/.cache/agentkit/li-venv): llama-index-core 0.12 with its AgentRunner,
# and for bench_planning.py the LLMCompiler agent and Chain-of-Abstraction pack built on it.
# 0.14 (~/.cache/agentkit/li014-venv): llama-index-core 0.14, whose AgentWorkflow
# bench_workflows.py compares against (0.14 no longer has AgentRunner).
# Then pass VENV_DIR/bin/python to --llamaindex.
set -eu
VERSION="${1:-0.12}"
case "$VERSION" in
    0.12) VENV="${2:-$HOME/.cache/agentkit/li-venv}"
          PACKAGES="llama-index-core==0.12.52.post1 llama-index-agent-llm-compiler==0.3.2 llama-index-packs-agents-coa==0.3.2"
          CHECK="llama_index.core, llama_index.agent.llm_compiler, llama_index.packs.agents_coa" ;;
    0.14) VENV="${2:-$HOME/.cache/agentkit/li014-venv}"
          PACKAGES="llama-index-core>=0.14,<0.15"
          CHECK="llama_index.core" ;;
    *) echo "usage: sh benchmarks/setup_llamaindex.sh [0.12|0.14] [VENV_DIR] (got version '$VERSION')" >&2
       exit 2 ;;
esac
python3 -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet --upgrade pip
# shellcheck disable=SC2086  # the package list splits into its packages
"$VENV/bin/python" -m pip install --quiet $PACKAGES
"$VENV/bin/python" -W ignore -c "import $CHECK; print('llama-index-core', llama_index.core.__version__, 'ready:', __import__('sys').executable)"
