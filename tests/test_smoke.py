"""End-to-end smoke tests of the demo and the CLI entry point."""

import io

from agentkit.cli import main
from agentkit.demo import run_demo


def test_demo_prints_both_agents_answering():
    out = io.StringIO()
    assert run_demo(out) == 0
    text = out.getvalue()
    assert "== react ==" in text and "== function_calling ==" in text
    assert text.count("answer   (2 + 3) * 4 = 20") == 2


def test_demo_output_is_identical_across_runs():
    first, second = io.StringIO(), io.StringIO()
    run_demo(first)
    run_demo(second)
    assert first.getvalue() == second.getvalue()


def test_cli_demo_exits_zero(capsys):
    assert main(["demo"]) == 0
    assert "== react ==" in capsys.readouterr().out
