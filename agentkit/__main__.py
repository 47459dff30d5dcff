from agentkit._console import run

run()
