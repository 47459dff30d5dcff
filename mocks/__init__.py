"""The repository's deterministic fixtures: tool suites, LLM scripts, fake endpoints."""
