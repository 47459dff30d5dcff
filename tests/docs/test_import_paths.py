"""Every agentkit import the README and the docs pages show works: each ``from agentkit...
import name`` of a ```python block imports, and each ``agentkit.package...`` path they name
in prose exists, as a module or a name in one (a user copies them)."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

from tests.docs.pages import ROOT, fenced, pages


def _imports(page: Path) -> list[tuple[str, str | None]]:
    """(module, name) of every agentkit import of the page's python blocks (name None for
    ``import module``)."""
    found: list[tuple[str, str | None]] = []
    for block in fenced(page.read_text(encoding="utf-8"), "python"):
        for node in ast.walk(ast.parse(block)):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("agentkit"):
                found += [(node.module or "", alias.name) for alias in node.names]
            elif isinstance(node, ast.Import):
                found += [(alias.name, None) for alias in node.names
                          if alias.name.startswith("agentkit")]
    return found


@pytest.mark.parametrize("page", [p for p in pages() if _imports(p)],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_every_agentkit_import_of_the_pages_examples_works(page: Path):
    broken = []
    for module, name in _imports(page):
        try:
            imported = importlib.import_module(module)
        except ImportError as exc:
            broken.append(f"{module}: {exc}")
            continue
        if name is not None and not hasattr(imported, name):
            broken.append(f"from {module} import {name}: no such name")

    assert broken == []


def test_the_pages_show_the_agent_stacks_import_paths():
    assert len({module for page in pages() for module, _ in _imports(page)}) >= 15


@pytest.mark.parametrize("page", pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_agentkit_module_the_page_names_exists(page: Path):
    # names under one of agentkit's packages; others (`agentkit.chain`, a span attribute, or
    # the entry point group `agentkit.agent_types`) are not modules
    packages = {p.name for p in (ROOT / "agentkit").iterdir() if (p / "__init__.py").is_file()}
    text = page.read_text(encoding="utf-8")
    named = {dotted for dotted in re.findall(r"`(agentkit(?:\.[a-z_]+)+)`", text)
             if dotted.split(".")[1] in packages}

    missing = []
    for dotted in sorted(named):
        try:
            importlib.import_module(dotted)
        except ImportError:
            parent, _, attribute = dotted.rpartition(".")
            try:
                if not hasattr(importlib.import_module(parent), attribute):
                    missing.append(dotted)
            except ImportError:
                missing.append(dotted)

    assert missing == []
