import sys

from agentkit.cli import main

sys.exit(main())
