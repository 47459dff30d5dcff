"""End-to-end: the bundled scenarios through the CLI entry point."""

import io

from agentkit.cli import main


def test_cli_run_passes_on_the_bundled_scenarios():
    out = io.StringIO()
    assert main(["run", "scenarios"], out=out) == 0
    assert "0 failed" in out.getvalue()


def test_cli_run_output_is_identical_across_runs():
    first, second = io.StringIO(), io.StringIO()
    main(["run", "scenarios"], out=first)
    main(["run", "scenarios"], out=second)
    assert first.getvalue() == second.getvalue()
