"""The committed example report (``reports/example/``) from the bundled scenarios."""

from __future__ import annotations

from pathlib import Path

from agentkit.report.compare import run_comparison
from agentkit.report.render import write_report

__all__ = ["EXAMPLE_AGENT_TYPES", "generate_example"]

EXAMPLE_AGENT_TYPES = ["react", "function_calling"]


def generate_example(root: str | Path = ".", out_dir: str | Path | None = None) -> dict[str, Path]:
    """Run ``<root>/scenarios`` under react and function_calling and write the report into
    ``out_dir`` (default ``<root>/reports/example``). Run it from the repository root:
    ``python -c "from agentkit.report import generate_example; generate_example()"``."""
    root = Path(root)
    comparison = run_comparison(root / "scenarios", EXAMPLE_AGENT_TYPES)
    return write_report(comparison, out_dir if out_dir is not None else root / "reports" / "example")
