"""The shape of the library itself: no import circle among symgen's modules (every import
statement counts, those inside functions too) and no module over 520 lines (issue #21; raised from 450 while the
joint-model redesign of issue #36 replaces splits made for size by a layout by role)."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "symgen"
MAX_LINES = 520
pytestmark = pytest.mark.timeout(60)


def _modules() -> dict:
    """``{dotted name: path}`` of every module of the package (a package is its ``__init__``)."""
    out = {}
    for path in ROOT.rglob("*.py"):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _targets(module: str, path: Path, node, modules: dict) -> list:
    """The symgen modules an import statement loads (a name taken from a package is the
    package, unless it is a submodule of it)."""
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    else:
        base = module if path.name == "__init__.py" else module.rpartition(".")[0]
        for _ in range(max(node.level - 1, 0)):
            base = base.rpartition(".")[0]
        target = node.module if not node.level else ".".join(p for p in (base, node.module) if p)
        names = [f"{target}.{a.name}" if f"{target}.{a.name}" in modules else target for a in node.names]
    out = []
    for name in names:
        while name and name not in modules:        # symgen.x.y.attribute -> symgen.x.y
            name = name.rpartition(".")[0]
        if name and name != module:
            out.append(name)
    return out


def import_graph() -> dict:
    modules = _modules()
    graph = {}
    for module, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        graph[module] = {t for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))
                         for t in _targets(module, path, node, modules)}
    return graph


def circles(graph: dict) -> list:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index, low, stack, on, found, counter = {}, {}, [], set(), [], 0
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on.add(start)
        while work:
            v, children = work[-1]
            w = next(children, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                component = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    component.append(w)
                    if w == v:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_circles_finds_a_planted_circle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert circles(graph) == [["a", "b", "c"]]


def test_no_import_circle_in_symgen():
    graph = import_graph()
    assert "symgen.quantities" in graph and "symgen.mimic" in graph["symgen.quantities"]
    assert circles(graph) == []


def test_no_module_over_max_lines():
    long = {str(p.relative_to(ROOT.parent)): n for p in ROOT.rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert long == {}
