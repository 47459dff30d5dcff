"""``python -m agentkit.cli``: the same as ``python -m agentkit``."""

from agentkit._console import run

run()
