"""The neutral layers import no backend and no dynamics library.

bridge/spatial/, bridge/model/, bridge/state.py, the change-of-variables module and the
derivatives' chain rule (bridge/derivatives.py, single_derivatives.py, derivatives_kernels.py) sit
below the backends: an import of ``bridge.backends`` (absolute or relative) or of a dynamics
library from them, at any level (module top, inside a function, under ``TYPE_CHECKING``, through
``importlib.import_module("...")``), makes the arrows run back up. The imports are read from the
source with ``ast``; nothing is imported.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "bridge"
NEUTRAL = sorted(
    [
        *(PACKAGE / "spatial").rglob("*.py"),
        *(PACKAGE / "model").rglob("*.py"),
        PACKAGE / "state.py",
        *[p for p in (PACKAGE / "change_of_variables.py", PACKAGE / "single_to_body.py") if p.exists()],
        PACKAGE / "single_to_mixed.py",
        PACKAGE / "derivatives.py",
        PACKAGE / "single_derivatives.py",
        PACKAGE / "derivatives_kernels.py",
        *(p for d in (PACKAGE / "change_of_variables",) if d.is_dir() for p in d.rglob("*.py")),
    ]
)
LIBRARIES = ("pinocchio", "idyntree", "mujoco", "pydrake", "casadi", "adam", "jax", "torch")
BACKENDS = "bridge.backends"


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _absolute(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    """The absolute module an ``ImportFrom`` reads from (relative levels resolved)."""
    if not node.level:
        return node.module or ""
    package = module.split(".") if is_package else module.split(".")[:-1]
    base = package[: len(package) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def _forbidden(name: str) -> str | None:
    """Why importing the module ``name`` is forbidden in a neutral layer, or None."""
    if name == BACKENDS or name.startswith(BACKENDS + "."):
        return "a backend"
    top = name.split(".")[0]
    if top in LIBRARIES:
        return f"the dynamics library {top!r}"
    return None


def imports_of(path: Path, root: Path = ROOT) -> list[tuple[int, str, tuple[str, ...]]]:
    """``(line, statement, modules it may import)`` for every import in ``path``, at any depth,
    sorted by line. ``root`` is the directory holding the ``bridge`` package."""
    source = path.read_text()
    tree = ast.parse(source, filename=str(path))
    module = _module_name(path, root)
    is_package = path.name == "__init__.py"
    found: list[tuple[int, str, tuple[str, ...]]] = []
    for node in ast.walk(tree):
        text = (ast.get_source_segment(source, node) or "").split("\n")[0]
        if isinstance(node, ast.Import):
            found += [(node.lineno, text, (alias.name,)) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            origin = _absolute(node, module, is_package)
            # ``from bridge import backends`` / ``from .. import backends`` import a submodule
            found.append((node.lineno, text, (origin, *(f"{origin}.{a.name}" for a in node.names))))
        elif (
            isinstance(node, ast.Call)
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
            and (
                (isinstance(node.func, ast.Name) and node.func.id in ("import_module", "__import__"))
                or (isinstance(node.func, ast.Attribute) and node.func.attr == "import_module")
            )
        ):
            found.append((node.lineno, text, (node.args[0].value,)))
    return sorted(found)


def violations(path: Path, root: Path = ROOT) -> list[tuple[int, str, str]]:
    """``(line, statement, why)`` for each forbidden import of ``path``."""
    out = []
    for line, text, names in imports_of(path, root):
        why = next((w for w in map(_forbidden, names) if w), None)
        if why:
            out.append((line, text, why))
    return out


@pytest.mark.parametrize("path", NEUTRAL, ids=lambda p: str(p.relative_to(ROOT)))
def test_neutral_module_imports_no_backend_and_no_library(path: Path) -> None:
    bad = violations(path)
    assert not bad, f"{path.relative_to(ROOT)} is a neutral layer but imports " + "; ".join(
        f"{why} at line {line} ({text})" for line, text, why in bad
    )


def test_the_neutral_layers_are_found() -> None:
    names = {str(p.relative_to(ROOT)) for p in NEUTRAL}
    assert {"bridge/state.py", "bridge/spatial/transform.py", "bridge/model/model.py"} <= names


def test_the_checker_sees_every_form_of_import(tmp_path: Path) -> None:
    pkg = tmp_path / "bridge" / "model"
    pkg.mkdir(parents=True)
    sample = pkg / "sample.py"
    sample.write_text(
        "import numpy as np\n"
        "from bridge.spatial import Transform\n"
        "import pinocchio as pin\n"
        "def f():\n"
        "    from ..backends.pinocchio import to_pinocchio\n"
        "    from .. import backends\n"
        "    from bridge import backends as b\n"
        "    import jax.numpy as jnp\n"
        "    from pydrake.all import MultibodyPlant\n"
        "    import importlib\n"
        "    return importlib.import_module('mujoco')\n"
        "from adamx import y\n"
        "from . import random\n"
        "from bridge.model.model import Model\n"
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    import idyntree.bindings as idyn\n"
    )
    found = violations(sample, tmp_path)
    assert [(line, why) for line, _, why in found] == [
        (3, "the dynamics library 'pinocchio'"),
        (5, "a backend"),
        (6, "a backend"),
        (7, "a backend"),
        (8, "the dynamics library 'jax'"),
        (9, "the dynamics library 'pydrake'"),
        (11, "the dynamics library 'mujoco'"),
        (17, "the dynamics library 'idyntree'"),
    ]
    assert found[1][1] == "from ..backends.pinocchio import to_pinocchio"
