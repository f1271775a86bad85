"""The packages show the layers, and each imports only the layers below it.

From the bottom: the base modules (``errors``, ``_array``, ``_cache``, ``_files``, ``_numba``, ``robots``),
``spatial``, ``model``, ``conventions``, ``derivatives``, ``backends``, ``dynamics``, ``validation``,
``datasets``, ``cli``. A module may import its own layer and those below; ``bridge/__init__.py`` (the
public names, imported lazily) may name any. The neutral layers (up to ``derivatives``) import no
dynamics library, and a dynamics library is imported only inside its own backend package (the homes
come from the library registry: each record's ``package`` and ``modules``, so a library registered at
run time brings its own; ``bridge.backends.registry.library_homes``); the array
libraries (JAX, CasADi) only in the array namespace ``bridge.spatial.xp`` / ``xp_casadi``; the data
libraries of the ``datasets`` extra (Dask, pyarrow) only in ``bridge.datasets``. The imports are read
from the source with ``ast`` at any level (module top, inside a function, under ``TYPE_CHECKING``,
through ``importlib.import_module("...")``); nothing of the checked modules is imported (only the
registry, which imports no library), so the whole check takes well under a second."""

from __future__ import annotations

import ast
from collections import defaultdict
from functools import cache
from pathlib import Path

import pytest

from bridge.backends import registry

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "bridge"

#: the layers from the bottom up: a module of layer k may import layers 0..k
LAYERS: tuple[tuple[str, ...], ...] = (
    ("bridge.errors", "bridge._array", "bridge._cache", "bridge._files", "bridge._numba", "bridge.robots"),
    ("bridge.spatial",),
    ("bridge.model",),
    ("bridge.conventions",),
    ("bridge.derivatives",),
    ("bridge.backends",),
    ("bridge.dynamics",),
    ("bridge.validation",),
    ("bridge.datasets",),
    ("bridge.cli",),
)
#: the neutral layers: no dynamics library, no backend
NEUTRAL_LAYERS = 5
#: dynamics library -> the backend package that alone may import it (from the registry's records)
LIBRARY_HOME = registry.library_homes()
#: array libraries -> the modules that alone may import them (array functions come from one place;
#: the jaxsim backend compiles jaxsim's functions with jax.jit / jax.vmap and turns on x64)
ARRAY_HOME = {
    "jax": ("bridge.spatial.xp", "bridge.backends.jaxsim.model", "bridge.backends.jaxsim.compiled"),
    "casadi": ("bridge.spatial.xp_casadi", "bridge.conventions.casadi_functions"),
}
#: the other libraries no module outside their array home (above) may import
OTHER_LIBRARIES = ("casadi", "adam", "jax", "torch")
#: the data libraries (extra [datasets]) -> the package that alone may import them (inside functions:
#: ``import bridge`` and ``bridge --help`` do not import them, tests/datasets/test_lazy_imports.py)
DATA_HOME = {"dask": "bridge.datasets", "distributed": "bridge.datasets", "pyarrow": "bridge.datasets"}
BACKENDS = "bridge.backends"
MAX_TOP_MODULES = 10
MAX_LINES = 700


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


@cache
def imports_of(path: Path, root: Path = ROOT) -> list[tuple[int, str, tuple[str, ...]]]:
    """``(line, statement, modules it may import)`` for every import in ``path``, at any depth,
    sorted by line. ``root`` is the directory holding the ``bridge`` package (parsed once per
    file: the whole check reads the tree once)."""
    source = path.read_text()
    lines = source.splitlines()
    tree = ast.parse(source, filename=str(path))
    module = _module_name(path, root)
    is_package = path.name == "__init__.py"
    found: list[tuple[int, str, tuple[str, ...]]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            text = lines[node.lineno - 1].strip()
            found += [(node.lineno, text, (alias.name,)) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            text = lines[node.lineno - 1].strip()
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
            text = lines[node.lineno - 1].strip()
            found.append((node.lineno, text, (node.args[0].value,)))
    return sorted(found)


def layer_of(module: str) -> int | None:
    """The layer of a ``bridge`` module (None for ``bridge`` itself and for non-bridge modules)."""
    for k, prefixes in enumerate(LAYERS):
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return k
    return None


def _forbidden(module: str, name: str) -> str | None:
    """Why the module ``module`` may not import ``name``, or None."""
    own = layer_of(module)
    top = name.split(".")[0]
    if top in ARRAY_HOME and module in ARRAY_HOME[top]:
        return None
    homes = registry.library_homes()  # (read now: a library registered at run time counts)
    if top in homes or top in OTHER_LIBRARIES:
        home = homes.get(top)
        if own is not None and own < NEUTRAL_LAYERS:
            return f"the dynamics library {top!r}"
        if home is None or not (module == home or module.startswith(home + ".")):
            where = f"only {home} may" if home else "no module may"
            return f"the dynamics library {top!r} ({where})"
        return None
    if top != "bridge" or own is None:
        return None
    target = layer_of(name)
    if target is None:  # ``bridge`` itself
        return None
    if target > own:
        if own < NEUTRAL_LAYERS and target == layer_of(BACKENDS):
            return "a backend"
        return f"a higher layer ({LAYERS[target][0]})"
    return None


def violations(path: Path, root: Path = ROOT) -> list[tuple[int, str, str]]:
    """``(line, statement, why)`` for each forbidden import of ``path``."""
    module = _module_name(path, root)
    if module == "bridge":
        return []
    out = []
    for line, text, names in imports_of(path, root):
        # ``from bridge import x`` names both the package and the submodule: judge the submodule
        candidates = [n for n in names if n != "bridge"] or list(names)
        why = next((w for w in (_forbidden(module, n) for n in candidates) if w), None)
        if why:
            out.append((line, text, why))
    return out


@cache
def _modules() -> tuple[Path, ...]:
    return tuple(sorted(PACKAGE.rglob("*.py")))


def test_every_module_imports_only_its_layer_and_below() -> None:
    bad = [
        f"{path.relative_to(ROOT)}:{line}: imports {why} ({text})"
        for path in _modules()
        for line, text, why in violations(path)
    ]
    assert not bad, "layering violations:\n" + "\n".join(bad)


def test_every_module_has_a_layer() -> None:
    lost = [str(p.relative_to(ROOT)) for p in _modules() if p.parent != PACKAGE or p.name != "__init__.py"]
    lost = [m for m in lost if layer_of(_module_name(ROOT / m, ROOT)) is None]
    assert not lost, f"modules outside every layer: {lost}"


def _package_of(module: str) -> str:
    """The package a module belongs to for the cycle check: ``bridge.X`` or ``bridge.backends.Y``."""
    parts = module.split(".")
    if len(parts) >= 3 and parts[1] == "backends" and (PACKAGE / "backends" / parts[2]).is_dir():
        return ".".join(parts[:3])
    return ".".join(parts[:2])


def test_no_import_cycle_between_packages() -> None:
    graph: dict[str, set[str]] = defaultdict(set)
    for path in _modules():
        module = _module_name(path, ROOT)
        if module == "bridge":
            continue
        src = _package_of(module)
        for _, _, names in imports_of(path):
            for name in names:
                if (name.startswith("bridge.") and (PACKAGE / name.split(".")[1]).exists()) or (
                    name.startswith("bridge.") and (PACKAGE / f"{name.split('.')[1]}.py").exists()
                ):
                    dst = _package_of(name)
                    if dst != src:
                        graph[src].add(dst)
    # depth-first search for a back edge
    state: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append([*stack[stack.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    assert not cycles, "import cycles between packages: " + "; ".join(" -> ".join(c) for c in cycles)


def test_few_modules_at_the_top() -> None:
    top = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(top) <= MAX_TOP_MODULES, f"{len(top)} modules directly under bridge/: {top}"


def test_modules_do_one_job() -> None:
    long = {
        str(p.relative_to(ROOT)): n for p in _modules() if (n := len(p.read_text().splitlines())) > MAX_LINES
    }
    assert not long, f"modules over {MAX_LINES} lines: {long}"


def test_the_layers_are_found() -> None:
    names = {_module_name(p, ROOT) for p in _modules()}
    for prefixes in LAYERS:
        for prefix in prefixes:
            assert any(n == prefix or n.startswith(prefix + ".") for n in names), prefix


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
        "    from bridge.dynamics.kindyn import KinDyn\n"
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
        (18, "a higher layer (bridge.dynamics)"),
    ]
    assert found[1][1] == "from ..backends.pinocchio import to_pinocchio"


def test_backends_import_neither_facade_nor_validation_nor_cli(tmp_path: Path) -> None:
    pkg = tmp_path / "bridge" / "backends" / "toy"
    pkg.mkdir(parents=True)
    sample = pkg / "engine.py"
    sample.write_text(
        "from bridge.conventions.state import State\n"
        "from bridge.dynamics.kindyn import KinDyn\n"
        "from bridge.validation.check import random_states\n"
        "import bridge.cli\n"
        "import mujoco\n"
    )
    found = violations(sample, tmp_path)
    assert [(line, why) for line, _, why in found] == [
        (2, "a higher layer (bridge.dynamics)"),
        (3, "a higher layer (bridge.validation)"),
        (4, "a higher layer (bridge.cli)"),
        (5, "the dynamics library 'mujoco' (only bridge.backends.mujoco may)"),
    ]


@pytest.mark.parametrize("library", sorted(DATA_HOME))
def test_a_data_library_is_imported_in_the_datasets_package_only(library: str) -> None:
    outside = [
        f"{path.relative_to(ROOT)}:{line} ({text})"
        for path in _modules()
        if not _module_name(path, ROOT).startswith(DATA_HOME[library])
        for line, text, names in imports_of(path)
        if any(n.split(".")[0] == library for n in names)
    ]
    assert not outside, f"{library} imported outside {DATA_HOME[library]}: {outside}"


@pytest.mark.parametrize("library", sorted(LIBRARY_HOME))
def test_a_library_is_imported_in_its_backend_only(library: str) -> None:
    outside = [
        f"{path.relative_to(ROOT)}:{line} ({text})"
        for path in _modules()
        if not _module_name(path, ROOT).startswith(LIBRARY_HOME[library])
        for line, text, names in imports_of(path)
        if any(n.split(".")[0] == library for n in names)
    ]
    assert not outside, f"{library} imported outside {LIBRARY_HOME[library]}: {outside}"


def test_a_library_registered_at_run_time_brings_its_home(tmp_path: Path) -> None:
    """A toy record's ``package`` and ``modules`` are all the layering check needs: its library may
    be imported in its package, nowhere else, and by no neutral layer."""
    toy = registry.Library(name="toylib", summary="a toy", package="bridge.backends.toy", modules=("toylib",))
    files = {
        "backends/toy/engine.py": "import toylib\nfrom toylib.sub import x\n",
        "backends/mujoco/engine.py": "import toylib\n",
        "model/sample.py": "import toylib.sub\n",
    }
    for rel, text in files.items():
        (tmp_path / "bridge" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "bridge" / rel).write_text(text)
    found = {rel: [why for _, _, why in violations(tmp_path / "bridge" / rel, tmp_path)] for rel in files}
    assert found == {rel: [] for rel in files}  # an unknown module: not a library of bridge's
    registry.register(toy)
    try:
        assert registry.library_homes()["toylib"] == "bridge.backends.toy"
        found = {rel: [why for _, _, why in violations(tmp_path / "bridge" / rel, tmp_path)] for rel in files}
    finally:
        registry.unregister("toylib")
    assert found == {
        "backends/toy/engine.py": [],
        "backends/mujoco/engine.py": ["the dynamics library 'toylib' (only bridge.backends.toy may)"],
        "model/sample.py": ["the dynamics library 'toylib'"],
    }
    assert "toylib" not in registry.library_homes()


def test_every_backend_package_is_a_registered_home() -> None:
    """Each backend package bridge ships belongs to a record, and each record's package exists."""
    packages = {
        f"bridge.backends.{p.name}" for p in (PACKAGE / "backends").iterdir() if (p / "__init__.py").exists()
    }
    homes = {rec.package for rec in registry.LIBRARIES.values() if rec.package}
    assert packages == homes
    assert set(LIBRARY_HOME) >= {"pinocchio", "idyntree", "mujoco", "pydrake", "newton", "warp", "jaxsim"}
