"""End-to-end: the bundled scenarios through the CLI entry point."""

import io

import pytest

from agentkit.cli import main


@pytest.fixture(scope="module")
def first_run() -> tuple[int, str]:
    """`agentkit run scenarios`, once for the module: its exit code and what it printed."""
    out = io.StringIO()
    code = main(["run", "scenarios"], out=out)
    return code, out.getvalue()


@pytest.mark.slow  # the agentkit command over the bundled scenarios
def test_cli_run_passes_on_the_bundled_scenarios(first_run):
    code, output = first_run
    assert code == 0
    assert "0 failed" in output


@pytest.mark.slow  # every bundled scenario, twice
def test_cli_run_output_is_identical_across_runs(first_run):
    second = io.StringIO()
    main(["run", "scenarios"], out=second)
    assert first_run[1] == second.getvalue()
