"""docs/reliability.md names the test behind each guarantee: every one it names exists."""

from __future__ import annotations

import importlib.util
import io
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
DOC = (ROOT / "docs" / "reliability.md").read_text(encoding="utf-8")
TEST_SOURCES = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "tests").rglob("*.py"))


def test_every_test_file_the_reliability_doc_names_exists():
    files = set(re.findall(r"`(tests/[\w/]+\.py)", DOC))

    assert files and sorted(f for f in files if not (ROOT / f).is_file()) == []


def test_every_test_function_the_reliability_doc_names_exists():
    names = set(re.findall(r"`(?:tests/[\w/]+\.py)?(?:::)?(test_\w+)", DOC))

    assert len(names) > 30
    assert sorted(n for n in names if not re.search(rf"def {n}\(", TEST_SOURCES)) == []


def test_the_readme_links_the_reliability_doc():
    assert "(docs/reliability.md)" in (ROOT / "README.md").read_text(encoding="utf-8")


def _shell_commands() -> list[str]:
    blocks = re.findall(r"```bash\n(.*?)```", DOC, flags=re.DOTALL)
    return [line for block in blocks for line in block.splitlines() if line.strip()]


#: benchmarks that run each measured phase in a new interpreter (its own peak memory): the
#: slow lane's
NEW_INTERPRETERS = ("benchmarks/bench_trace_size.py",)


def _command_params() -> list[object]:
    commands = _shell_commands()
    assert commands and all(re.match(r"python benchmarks/\w+\.py( |$)", c) for c in commands)
    return [pytest.param(c, marks=[pytest.mark.slow] if c.split()[1] in NEW_INTERPRETERS else [])
            for c in commands]


@pytest.mark.parametrize("command", _command_params())
def test_every_benchmark_command_of_the_doc_runs(command: str):
    # the doc's figures come from full counts; here each command runs with tiny ones
    script, *args = command.split()[1:]
    tiny = " ".join(args)
    tiny = re.sub(r"--(chats|block) \d+", r"--\1 3", tiny)
    tiny = re.sub(r"--turns( \d+)+", "--turns 4 8", tiny)
    tiny = re.sub(r"--answer-mb [\d.]+", "--answer-mb 0.01", tiny)
    spec = importlib.util.spec_from_file_location("_doc_bench", ROOT / script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out = io.StringIO()

    module.main(tiny.split(), out=out)

    assert "target:" in out.getvalue(), command
