from agentkit.cli import run

run()
