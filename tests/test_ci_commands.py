""".ci/readme_commands.py: CI runs the README's Quick start and Development commands, read
from the README, and a README without them stops CI with a message naming what is missing."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("readme_commands", ROOT / ".ci" / "readme_commands.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


readme_commands = _load()

README = """# project

## Quick start

```bash
python3 -m venv .venv &&
  pip install -e .
```

Then:

```bash
python -m pytest
```

```bash
not run by CI
```

## Development

```bash
ruff check . && mypy agentkit
```

## Later
"""


def test_ci_runs_two_quick_start_blocks_then_the_development_block() -> None:
    assert readme_commands.commands(README) == [
        "python3 -m venv .venv && pip install -e .", "python -m pytest",
        "ruff check . && mypy agentkit"]


def test_the_repository_readme_has_ci_lint_and_type_check_the_package() -> None:
    development = readme_commands.commands((ROOT / "README.md").read_text(encoding="utf-8"))[2]
    assert development == "ruff check . && mypy agentkit"


def test_a_readme_without_a_development_section_is_an_error_naming_it() -> None:
    with pytest.raises(ValueError, match=r"no `## Development` section \(CI runs its ```bash "
                                         r"blocks: lint and type check\)"):
        readme_commands.commands(README.split("## Development")[0])


def test_a_section_with_too_few_blocks_is_an_error_counting_them() -> None:
    text = README.replace("```bash\npython -m pytest\n```", "").replace("```bash\nnot run", "```\nnot run")
    with pytest.raises(ValueError, match=r"the Quick start section needs 2 ```bash block\(s\) "
                                         r"\(install\+run, test\), has 1"):
        readme_commands.commands(text)


def test_the_command_line_exits_with_the_readme_path_and_the_problem(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text("# nothing here\n", encoding="utf-8")
    with pytest.raises(SystemExit, match=r"README\.md: no `## Quick start` section"):
        readme_commands.main(["readme_commands.py", str(readme)])
