"""Parts of the pytest plugin (:mod:`agentkit.pytest_plugin`), one concern per module."""
