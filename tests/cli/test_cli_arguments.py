"""Any command line gives a result or exit 2 with a message, never a traceback (the CLI's
argument parsing fuzzed as the other loaders are)."""

from __future__ import annotations

import contextlib
import io
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentkit.cli import main
from cli_helpers import ADDING

_WORDS = ["list", "run", "replay", "diff", "report", "--agents", "--agent", "react", "coa,,react",
          ",", "--out", "out", "--trace-dir", "traces", "-v", "--baseline", "--mode", "all",
          "--timeout", "nan", "-1", "1e999", "--model", "--base-url", "http://[::1", "s.yaml",
          "missing.yaml", ".", "/dev/null", "/proc/x", "", "é", "\x00", "x" * 300, "-", "--",
          "--bogus", "-h"]


@pytest.mark.slow  # property test at full size
@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(_WORDS) | st.text(max_size=6), max_size=6))
def test_any_command_line_exits_0_1_or_2_with_a_message(argv):
    with tempfile.TemporaryDirectory() as folder, contextlib.chdir(folder):
        Path("s.yaml").write_text(ADDING, encoding="utf-8")
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stderr(err):
            code = main(argv, out=out)

    assert code in (0, 1, 2)
    if code == 2:
        assert err.getvalue().strip() or out.getvalue().strip()
