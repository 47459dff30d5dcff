"""No import circle between agentkit's packages: the graph of which package imports which
(every module's imports, those inside functions too; ``if TYPE_CHECKING:`` blocks aside, as
they never run) has no cycle, so each package can be read, imported and tested on what is
below it.

A module is collapsed to its package (``agentkit.harness._runner`` to ``agentkit.harness``; a
top-level module such as ``agentkit.cli`` is its own). Old import paths add no edge: a module
kept only to re-export names that moved (its body a docstring, imports and ``__all__``, e.g.
``agentkit.scenario.runner``) is transparent -- importing it is importing what it
re-exports -- and a module's ``__getattr__`` (PEP 562), which finds a name that moved up when
it is first asked for (``agentkit.scenario.run_scenario``, ``agentkit.llms.mock.CassetteLLM``),
is not looked into: it runs only for code written against the old path."""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterable, Mapping
from collections.abc import Set as AbstractSet
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "agentkit"

KNOWN_CIRCLES: dict[frozenset[str], str] = {
    frozenset({"agentkit.cli", "agentkit._console"}): (
        "the console script puts its signal handlers in place before it imports the command "
        "(lazily, in `run`), and the command reuses its exit codes: one face in two modules "
        "until agentkit/cli becomes a package"),
}
"""Circles that are known and explained; no other may appear. The harness's packages are
never in one."""

HARNESS = {"agentkit.trace", "agentkit.scenario", "agentkit.verdict", "agentkit.harness",
           "agentkit.eval", "agentkit.report"}


def _module(path: Path, root: Path = PACKAGE) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def imports(tree: ast.AST, module: str, is_package: bool) -> list[str]:
    """Every ``agentkit`` module or name ``module`` imports at run time (``from m import n``
    as ``m.n``), anywhere in it but under ``if TYPE_CHECKING:`` and in its ``__getattr__``."""
    package = module.split(".") if is_package else module.split(".")[:-1]
    found: list[str] = []

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef) and child.name == "__getattr__" \
                    and node is tree:
                continue  # an old path's names, found on first use
            if isinstance(child, ast.If) and _type_checking(child):
                for other in child.orelse:
                    visit_one(other)
                continue
            visit_one(child)

    def visit_one(node: ast.AST) -> None:
        if isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package[:len(package) - node.level + 1] + ([base] if base else []))
            found.append(base)
            found.extend(f"{base}.{alias.name}" for alias in node.names)
        visit(node)

    visit(tree)
    return [name for name in found if name == "agentkit" or name.startswith("agentkit.")]


def re_export_only(tree: ast.Module) -> bool:
    """Whether a module only re-exports: a docstring, ``from agentkit... import`` lines and
    ``__all__``."""
    body = tree.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    return bool(body) and all(
        (isinstance(node, ast.ImportFrom) and (node.module or "").startswith("agentkit"))
        or (isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets]
            == ["__all__"])
        for node in body)


def package_of(module: str) -> str:
    return ".".join(module.split(".")[:2])


def module_graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    """Which agentkit module imports which (a re-exporting module stands for its sources)."""
    trees = {_module(path, root): (ast.parse(path.read_text(encoding="utf-8")),
                             path.name == "__init__.py")
             for path in sorted(root.rglob("*.py"))}

    def resolve(name: str) -> str | None:
        while name and name not in trees:
            name = name.rpartition(".")[0]
        return name or None

    direct = {module: {target for name in imports(tree, module, is_package)
                       if (target := resolve(name)) is not None and target != module}
              for module, (tree, is_package) in trees.items()}
    re_exports = {module for module, (tree, _) in trees.items() if re_export_only(tree)}

    def sources(module: str, seen: frozenset[str] = frozenset()) -> set[str]:
        if module not in re_exports or module in seen:
            return {module}
        return {found for target in direct[module]
                for found in sources(target, seen | {module})}

    return {module: {found for target in targets for found in sources(target)} - {module}
            for module, targets in direct.items() if module not in re_exports}


def package_graph(modules: dict[str, set[str]]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for module, targets in modules.items():
        source = package_of(module)
        if source == "agentkit":
            continue  # the root (its version), imported by any
        graph.setdefault(source, set()).update(
            package_of(t) for t in targets if package_of(t) not in (source, "agentkit"))
    return graph


def circles(graph: Mapping[str, AbstractSet[str]]) -> list[list[str]]:
    """The strongly connected components with more than one node (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                connect(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return found


def a_cycle(graph: Mapping[str, AbstractSet[str]], members: Iterable[str]) -> list[str]:
    """One cycle through ``members`` (a circle), as the path ``a -> b -> ... -> a``."""
    members = set(members)
    start = min(members)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        node = frontier.pop(0)
        for target in sorted(graph.get(node, ()) & members):
            if target == start:
                return [*paths[node], start]
            if target not in paths:
                paths[target] = [*paths[node], target]
                frontier.append(target)
    return sorted(members)


@functools.cache
def _agentkit() -> dict[str, frozenset[str]]:
    """agentkit's package graph, read once per process (parsing every module is the cost)."""
    return {source: frozenset(targets)
            for source, targets in package_graph(module_graph()).items()}


@pytest.mark.slow  # reads every module's imports
def test_agentkit_packages_import_each_other_without_a_circle():
    graph = _agentkit()
    unexplained = [" -> ".join(a_cycle(graph, members)) for members in circles(graph)
                   if frozenset(members) not in KNOWN_CIRCLES]

    assert unexplained == [], "break the circle: one package must not import the other"


@pytest.mark.slow  # reads every module's imports
def test_the_harness_packages_are_in_no_circle():
    graph = _agentkit()

    assert [members for members in circles(graph) if HARNESS & set(members)] == []


@pytest.mark.slow  # reads every module's imports
def test_every_known_circle_still_exists():
    # a circle that is broken leaves the list, so the list stays what is true
    found = {frozenset(members) for members in circles(_agentkit())}

    assert set(KNOWN_CIRCLES) <= found


def test_a_circle_through_a_lazy_import_is_found_and_named(tmp_path):
    root = tmp_path / "agentkit"
    for name, text in {
        "__init__.py": "",
        "low/__init__.py": "from agentkit.low.base import thing\n",
        "low/base.py": "def thing():\n    from agentkit.high import run\n    return run\n",
        "high/__init__.py": "from agentkit.low import thing\n\ndef run():\n    return thing\n",
        "typed/__init__.py": ("from typing import TYPE_CHECKING\n"
                              "if TYPE_CHECKING:\n    from agentkit.high import run\n"),
        "old/__init__.py": ("def __getattr__(name):\n    from agentkit import high\n"
                            "    return getattr(high, name)\n"),
    }.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    graph = package_graph(module_graph(root))

    assert circles(graph) == [["agentkit.high", "agentkit.low"]]
    assert a_cycle(graph, ["agentkit.high", "agentkit.low"]) == [
        "agentkit.high", "agentkit.low", "agentkit.high"]
    assert graph["agentkit.typed"] == set()  # only typing looks at it
    assert graph["agentkit.old"] == set()  # only code written against the old path does


def test_a_module_that_only_re_exports_stands_for_what_it_re_exports(tmp_path):
    root = tmp_path / "agentkit"
    for name, text in {
        "__init__.py": "",
        "old/__init__.py": "",
        "old/moved.py": ('"""Moved."""\n\nfrom agentkit.new._impl import run\n\n'
                         '__all__ = ["run"]\n'),
        "new/__init__.py": "",
        "new/_impl.py": "from agentkit.old import helper\n\ndef run():\n    return helper\n",
        "face/__init__.py": "from agentkit.old.moved import run\n\nRUNS = [run]\n",
    }.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    graph = package_graph(module_graph(root))

    assert graph["agentkit.face"] == {"agentkit.new"}
    assert circles(graph) == []  # old.moved's own import of new is not old's
