"""docs/explanation/architecture.md's layer table is the code's: every package of agentkit is
in it, and no module imports from a row below its own (lazy imports inside functions count).

Two exceptions: an old import path's re-export of what moved up to the recording layer
(tests/recording/old_paths.py; a name taken through an old path counts as the recording
layer's, so an old path cannot carry an import upward), and the compatibility faces of what
moved out of ``agentkit.scenario``: a module left at an old import path only to re-export names
that moved up (``agentkit.scenario.runner``), and the imports that type the names
``agentkit.scenario`` looks up lazily (its ``if TYPE_CHECKING:`` block)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tests.docs.pages import DOCS, ROOT, section
from tests.recording.old_paths import is_reexport, new_home
from tests.test_import_circles import imports, re_export_only

PACKAGE = ROOT / "agentkit"
LAZY_FACES = {"agentkit.scenario"}
"""Packages whose ``__getattr__`` finds names that moved to a package above; the imports under
their ``if TYPE_CHECKING:`` only type those names."""


def layers() -> list[list[str]]:
    """The table's rows, bottom-up: the packages of each."""
    table = section(DOCS / "explanation" / "architecture.md", "Layers")
    rows = [line for line in table.splitlines() if line.startswith("| `agentkit")]
    return [re.findall(r"`(agentkit[\w.]*)`", row.split("|")[1]) for row in rows]


def _module(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported(path: Path, tree: ast.AST) -> list[str]:
    """Every ``agentkit...`` name the module imports (``from m import n`` as ``m.n``)."""
    here = _module(path).split(".")
    package = here if path.name == "__init__.py" else here[:-1]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package[:len(package) - node.level + 1] + ([base] if base else []))
            found += [f"{base}.{alias.name}" for alias in node.names]
    return [name for name in found if name.startswith("agentkit.")]


def _row(name: str, rows: list[list[str]]) -> int | None:
    """The row of the longest package of the table that ``name`` is in (None: no row)."""
    best: tuple[int, int] | None = None
    for index, packages in enumerate(rows):
        for package in packages:
            if (name == package or name.startswith(package + ".")) and (
                    best is None or len(package) > best[0]):
                best = (len(package), index)
    return None if best is None else best[1]


def test_the_table_lists_the_layers_bottom_up_from_core():
    rows = layers()

    assert rows[0] == ["agentkit.core"] and len(rows) >= 10


def test_every_module_of_agentkit_is_in_a_row_of_the_table():
    rows = layers()
    modules = [_module(p) for p in PACKAGE.rglob("*.py")]

    assert sorted({m for m in modules if m.count(".") and _row(m, rows) is None}) == []


@pytest.mark.slow  # reads every module's imports
def test_no_module_imports_from_a_layer_above_its_own():
    rows = layers()
    upward = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module(path)
        source = _row(module, rows)
        if source is None:  # agentkit/__init__.py: the root (the version), imported by any
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if re_export_only(tree):
            continue  # an old import path: it stands for what it re-exports
        names = (imports(tree, module, path.name == "__init__.py")
                 if module in LAZY_FACES else _imported(path, tree))
        for name in names:
            if is_reexport(module, name):
                continue
            target = _row(new_home(name), rows)
            if target is not None and target > source:
                upward.append(f"{path.relative_to(ROOT)} imports {name}: "
                              f"{rows[target][0]} is above {rows[source][0]}")

    assert upward == [], "fix the import, or the table if the layers changed"


def test_an_upward_import_would_be_found():
    rows = [["agentkit.core"], ["agentkit.llms"]]
    tree = ast.parse("def f():\n    from agentkit.llms import LLM\n")

    (name,) = _imported(PACKAGE / "core" / "x.py", tree)

    assert (_row("agentkit.core.x", rows), _row(name, rows)) == (0, 1)


def test_an_upward_import_through_an_old_path_would_be_found():
    rows = [["agentkit.core"], ["agentkit.llms"], ["agentkit.recording"]]
    tree = ast.parse("from agentkit.llms.cassette import Cassette\n")

    (name,) = _imported(PACKAGE / "llms" / "x.py", tree)

    assert (_row("agentkit.llms.x", rows), _row(new_home(name), rows)) == (1, 2)
