"""bridge uses the public APIs of the libraries it calls: no private attribute of a library object
(MuJoCo's ``_address``, which handed raw pointers to compiled code, where an error ends the process
instead of raising), no private module (numpy's ``_core._multiarray_umath``), and Newton's internal
kernels only behind the version check of :func:`bridge.backends.newton.accelerations.internal_kernels`
(tested in tests/backends/test_newton.py)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "bridge"

#: private names of other libraries that bridge must not reach for
PRIVATE_ATTRIBUTES = {"_address", "_multiarray_umath", "__array_interface__"}
#: private modules that bridge must not look up by name either
PRIVATE_MODULES = ("._multiarray_umath",)  # (newton._src: its imports are checked)
#: where a private module may be imported: (file, function) of a guard with a tested fallback
GUARDED = {
    ("backends/newton/accelerations.py", "internal_kernels"),  # the checked Newton releases only
    ("cli/app.py", ""),  # typer's copy of click's exceptions, else click's own (try / ImportError)
}
#: bridge's own single-state helper reads ``__array_interface__`` of its own arrays only
OWN_ARRAYS = {"conventions/single_state.py"}


def _modules() -> list[Path]:
    return sorted(ROOT.rglob("*.py"))


def _enclosing(tree: ast.AST) -> dict[ast.AST, str]:
    """Each node -> the name of the function it is in ('' at module level)."""
    where: dict[ast.AST, str] = {}

    def visit(node: ast.AST, name: str) -> None:
        for child in ast.iter_child_nodes(node):
            inner = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else name
            where[child] = inner
            visit(child, inner)

    visit(tree, "")
    return where


def _private_uses(source: str, rel: str) -> list[str]:
    """What the module ``rel`` (its ``source``) reaches of other libraries' private parts."""
    tree = ast.parse(source)
    where = _enclosing(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in PRIVATE_ATTRIBUTES:
            if node.attr == "__array_interface__" and rel in OWN_ARRAYS:
                continue
            found.append(f"line {node.lineno}: .{node.attr}")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if any(m in node.value for m in PRIVATE_MODULES):  # (looked up by name: sys.modules)
                found.append(f"line {node.lineno}: {node.value!r}")
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
            for name in names:
                parts = name.split(".")
                private = any(p.startswith("_") for p in parts[1:])
                if parts[0] != "bridge" and private and (rel, where.get(node, "")) not in GUARDED:
                    found.append(f"line {node.lineno}: import {name}")
    return found


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_private_attribute_or_module_of_another_library(path: Path) -> None:
    rel = str(path.relative_to(ROOT))
    found = _private_uses(path.read_text(encoding="utf-8"), rel)
    assert not found, f"bridge/{rel} reaches into another library's private parts: {found}"


@pytest.mark.parametrize(
    "source",
    [
        "import numpy._core._multiarray_umath",
        "vdot = sys.modules['numpy._core._multiarray_umath'].vdot",
        "from numpy._core._multiarray_umath import vdot",
        "def f():\n    from newton._src.sim import k",
        "x = model._address",
        "p = a.__array_interface__['data'][0]",
    ],
)
def test_the_scan_flags_each_pattern(source: str) -> None:
    """The check flags what it forbids (so that finding nothing means something), and lets the
    version-checked guard through."""
    assert _private_uses(source, "backends/mujoco/single.py")
    guard = "def internal_kernels():\n    from newton._src.sim import k"
    assert not _private_uses(guard, "backends/newton/accelerations.py")
