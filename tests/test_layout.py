"""The package layout: no import cycle between robokit's sub-packages or between its modules.

The graph is built from the source with `ast`, so nothing is imported. Nodes of the package graph are the
sub-packages (`robokit.sources`, `robokit.ros`, ...), each format folder (`robokit.converters.mcap`, ...) on
its own, the shared converter modules (`robokit.converters`) and top-level modules (`robokit.digest`). Module-level
imports make the graph; imports under `if TYPE_CHECKING:` are left out (they never run), and an import inside a
function may not close a cycle either (the usual way to hide one).
Plug-ins named by text (`"module:attribute"` in the registries) are not edges: that is how they stay lazy.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "robokit"
Graph = Mapping[str, frozenset[str]]


@cache
def modules() -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its `__init__.py`)."""
    found = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = path.relative_to(ROOT.parent).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _known(name: str) -> str | None:
    """The module `name` is, or the package it is an attribute of; None outside robokit."""
    while name and name not in modules():
        name = name.rpartition(".")[0]
    return name or None


def _targets(node: ast.Import | ast.ImportFrom, package: str) -> Iterator[str]:
    """The robokit modules an import statement loads (`from p import m` loads `p.m` when it is a module)."""
    if isinstance(node, ast.Import):
        yield from filter(None, (_known(alias.name) for alias in node.names))
        return
    base = node.module or ""
    if node.level:
        parent = package.split(".")[: len(package.split(".")) - node.level + 1]
        base = ".".join([*parent, base] if base else parent)
    for alias in node.names:
        target = f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules() else _known(base)
        if target:
            yield target


def _imports(tree: ast.AST, package: str, in_function: bool = False) -> Iterator[tuple[str, bool]]:
    """(module, inside a function) of every robokit import that runs, skipping `if TYPE_CHECKING:` blocks."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            yield from ((t, f) for child in node.orelse for t, f in _imports(child, package, in_function))
        elif isinstance(node, ast.Import | ast.ImportFrom):
            yield from ((target, in_function) for target in _targets(node, package))
        else:
            inner = in_function or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
            yield from _imports(node, package, inner)


@cache
def graphs() -> tuple[Graph, Graph]:
    """(module-level imports, imports inside functions) per module."""
    top: dict[str, frozenset[str]] = {}
    inner: dict[str, frozenset[str]] = {}
    for name, path in modules().items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        found = list(_imports(ast.parse(path.read_text(), str(path)), package))
        top[name] = frozenset(t for t, f in found if not f and t != name)
        inner[name] = frozenset(t for t, f in found if f and t != name) - top[name]
    return top, inner


def group(module: str) -> str:
    """The package-graph node of `module`: its format folder, else its sub-package, else itself."""
    parts = module.split(".")
    if parts[1:2] == ["converters"] and len(parts) > 2 and (ROOT / "converters" / parts[2]).is_dir():
        return ".".join(parts[:3])
    return ".".join(parts[:2])


def package_graph(top: Graph) -> dict[str, frozenset[str]]:
    edges: dict[str, set[str]] = {}
    for module, targets in top.items():
        edges.setdefault(group(module), set()).update(group(t) for t in targets if group(t) != group(module))
    return {node: frozenset(targets) for node, targets in edges.items()}


def reaches(graph: Graph, start: str, goal: str) -> list[str]:
    """A path of imports from `start` to `goal` (empty when there is none)."""
    paths, seen = [[start]], {start}
    while paths:
        path = paths.pop()
        if path[-1] == goal:
            return path
        for nxt in sorted(graph.get(path[-1], ())):
            if nxt not in seen:
                seen.add(nxt)
                paths.append([*path, nxt])
    return []


def cycles(graph: Graph) -> list[list[str]]:
    """The cycles through each import edge, as paths of imports back to where they start."""
    return [[node, *path] for node in sorted(graph) for nxt in sorted(graph[node])
            if (path := reaches(graph, nxt, node))]


def test_the_graph_sees_the_package() -> None:
    top, _ = graphs()
    assert "robokit.ros.collect" in top["robokit.converters.rosbag.reader"]
    assert "robokit.converters.lerobot.layout" in top["robokit.converters.lerobot.writer"]
    assert {"robokit.converters.mcap", "robokit.sources", "robokit.timeline"} <= set(package_graph(top))


def test_no_cycle_between_sub_packages() -> None:
    assert cycles(package_graph(graphs()[0])) == []


def test_no_cycle_between_modules() -> None:
    assert cycles(graphs()[0]) == []


def test_no_import_inside_a_function_hides_a_cycle() -> None:
    """A function-level import is fine for laziness (heavy libraries, the CLI's start-up), not to dodge a cycle:
    none may lead back to its own module or sub-package, whether the way back runs at import time or not."""
    top, inner = graphs()
    every = {module: top[module] | inner[module] for module in top}
    packages = package_graph(every)
    hidden = [f"{module} → {target} (back: {' → '.join(back)})" for module, targets in sorted(inner.items())
              for target in sorted(targets)
              if (back := reaches(every, target, module) or (group(module) != group(target) and
                                                             reaches(packages, group(target), group(module))))]
    assert hidden == []


MAX_MODULE_LINES = 500


def test_no_module_is_over_500_lines() -> None:
    """A module past 500 lines holds more than one idea: split it along its seams (CONTRIBUTING.md)."""
    long = {name: n for name, path in modules().items() if (n := len(path.read_text().splitlines())) > MAX_MODULE_LINES}
    assert not long, f"modules over {MAX_MODULE_LINES} lines: {long}"
