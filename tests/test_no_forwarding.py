"""No robot travels in a forwarding view, and no code asks a robot what it is by name.

A class that forwards attributes through ``__getattr__`` hands out the inner object's methods,
which then miss the wrapper's overrides; a ``getattr(robot, "full", robot)`` probe decides what a
robot is by whether an attribute happens to exist. Every robot kind is a frozen dataclass with its
choices as fields (:class:`symgen.model.Robot`) or a constrained system with its tree and embedding
as fields (:mod:`symgen.constrained`), and answers the same questions explicitly. This test walks
the AST of ``symgen/``.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "symgen"

#: classes allowed a ``__getattr__``, with why: they wrap a module or an oracle, never a robot
FORWARDING_ALLOWED = {
    ("verify.py", "_JaxAsNumpy"): "the package's JAX module, any of its functions, with NumPy results",
    ("verify.py", "_Memo"): "an oracle, any of its methods, memoized per state",
}

#: names a robot goes by in symgen's code: a probe of one of them by a literal attribute name is refused
ROBOT_NAMES = {"robot", "r", "model", "full", "tree", "view", "system", "reduced", "embedded", "closed", "coupled"}


def violations(source: str, filename: str) -> list[str]:
    """What this test refuses in ``source``: classes defining ``__getattr__`` (but the allowed ones;
    a module-level ``__getattr__``, for lazy imports, is fine), and ``getattr`` / ``hasattr`` of a
    robot-like name with a literal attribute name."""
    out = []
    for node in ast.walk(ast.parse(source, filename)):
        if isinstance(node, ast.ClassDef):
            if (filename, node.name) in FORWARDING_ALLOWED:
                continue
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name == "__getattr__":
                    out.append(f"{filename}:{item.lineno}: class {node.name} forwards attributes (__getattr__)")
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr")
              and len(node.args) >= 2 and isinstance(node.args[0], ast.Name) and node.args[0].id in ROBOT_NAMES
              and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str)):
            out.append(f"{filename}:{node.lineno}: {node.func.id}({node.args[0].id}, {node.args[1].value!r}) "
                       f"asks a robot what it is")
    return out


def test_no_class_forwards_and_no_robot_is_probed():
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        found += violations(path.read_text(encoding="utf-8"), path.relative_to(ROOT).as_posix())
    assert not found, "\n".join(found)


@pytest.mark.parametrize("source, what", [
    ("class View:\n    def __getattr__(self, name):\n        return getattr(self._robot, name)\n", "forwards"),
    ("def f(robot):\n    return getattr(robot, 'full', robot)\n", "getattr(robot, 'full')"),
    ("def f(r):\n    return hasattr(r, 'solve_loops')\n", "hasattr(r, 'solve_loops')"),
])
def test_the_check_refuses_a_view_and_a_probe(source, what):
    found = violations(source, "example.py")
    assert len(found) == 1 and what in found[0]


def test_the_check_allows_lazy_imports_and_wrapped_modules():
    lazy = "def __getattr__(name):\n    import importlib\n    return importlib.import_module(name)\n"
    assert violations(lazy, "example.py") == []
    assert violations("def f(pkg, name):\n    return getattr(pkg, 'jax', None), getattr(robot, name)\n",
                      "example.py") == []
