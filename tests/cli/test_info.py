"""``bridge info``: one column per installed registered library, built by the library's own
``info_column``; counts, DOF orders, notes (markup shown as text), the own loaders' tables."""

from __future__ import annotations

import pytest

import bridge
from bridge.backends import registry
from bridge.backends.info import ROWS, InfoColumn, LibraryInfo
from bridge.cli.describe import describe
from tests.cli.runner import MODELS, run


def test_info_shows_counts_orders_and_permutation() -> None:
    res = run("info", "iCubGazeboV2_5")
    assert res.exit_code == 0, res.output
    for text in (
        "links / bodies",
        "pinocchio URDF loader",
        "idyntree URDF loader",
        "DOF order",
        "permutation",
    ):
        assert text in res.output


def test_info_warns_and_never_fails_on_a_file_that_loads_with_warnings() -> None:
    res = run("info", str(MODELS / "bad" / "triangle_inertia.urdf"))
    assert res.exit_code == 0, res.output
    assert "warning: " in res.output and "link 'bad_link': principal moments" in res.output
    res = run("info", str(MODELS / "bad" / "mimic.urdf"), "--mimic", "coupled")
    assert res.exit_code == 0, res.output
    assert "1 mimic joints follow their masters" in res.output and "warning" not in res.output
    res = run("info", str(MODELS / "bad" / "triangle_inertia.urdf"), "--strict")
    assert res.exit_code == 2 and "principal moments" in res.output


@pytest.mark.parametrize("name", ["talos_reduced", "iCubGazeboV2_5"])
def test_info_tables_fit_80_columns(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """In an 80-column terminal nothing is cut: full joint names and headers, no ellipsis."""
    import io

    from rich.console import Console

    import bridge
    import bridge.cli

    buffer = io.StringIO()
    monkeypatch.setattr(bridge.cli, "_console", lambda: Console(file=buffer, width=80, force_terminal=True))
    res = run("info", name, "--mimic", "independent")
    assert res.exit_code == 0, res.output
    text = buffer.getvalue()
    assert "…" not in text
    lines = [line.rstrip() for line in text.splitlines()]
    model = bridge.load_urdf(name, mimic="independent")
    for joint in model.dof_names:
        assert any(line.split() and line.split()[0].endswith(joint) for line in lines), joint
    for header in ("featherstone", "pinocchio URDF loader", "idyntree URDF loader"):
        assert any(header in line for line in lines), header
    assert "0-based position of each joint" in text


def test_notes_survive_rich_markup() -> None:
    """Notes with brackets (Featherstone's floatbase xfb layout) are printed as written."""
    res = run("info", str(MODELS / "offsets.urdf"))
    assert res.exit_code == 0, res.output
    assert "xfb = [quaternion w,x,y,z; position; angular, linear velocity in base coordinates]" in res.output


def test_one_column_per_installed_library_from_the_registry() -> None:
    model = bridge.load_urdf(MODELS / "offsets.urdf")
    d = describe(model, MODELS / "offsets.urdf")
    expected = [name for name, rec in registry.LIBRARIES.items() if rec.info is not None and rec.installed]
    assert d["columns"] == ["bridge", *expected]
    assert all(len(values) == len(d["columns"]) for values in d["counts"].values())
    assert list(d["counts"]) == list(ROWS)
    assert all(sorted(order) == list(range(model.n_dofs)) for order in d["orders"].values())
    assert d["loaders"] is not None and "pinocchio URDF loader" in d["loaders"]["columns"]


def _toy_column(model, path=None) -> LibraryInfo:
    """A toy library's column: bridge's own counts, its DOFs in reverse order."""
    n = model.n_dofs
    counts = dict.fromkeys(ROWS, 1) | {"DOFs": n}
    column = InfoColumn("toy", counts, tuple(range(n - 1, -1, -1)), "toy's reversed joints")
    return LibraryInfo(column, None, ("toy counts [everything] once",))


@pytest.fixture
def toy_libraries():
    """A toy library with an info column and one whose dependency is not installed."""
    toy = registry.Library(name="toy", summary="a toy", info=f"{__name__}:_toy_column")
    absent = registry.Library(
        name="absent",
        summary="not installed",
        requires="no_such_module_bridge_test",
        info=f"{__name__}:nowhere",
    )
    registry.register(toy)
    registry.register(absent)
    yield
    registry.unregister("toy")
    registry.unregister("absent")


def test_a_registered_library_gets_its_column_and_an_absent_one_none(toy_libraries) -> None:
    model = bridge.load_urdf(MODELS / "offsets.urdf")
    d = describe(model)
    assert d["columns"][-1] == "toy" and "absent" not in d["columns"]
    assert d["orders"]["toy"] == list(range(model.n_dofs - 1, -1, -1))
    assert d["counts"]["DOFs"][-1] == model.n_dofs and "toy counts [everything] once" in d["notes"]
    res = run("info", str(MODELS / "offsets.urdf"))
    assert res.exit_code == 0, res.output
    assert "toy counts [everything] once" in res.output and "toy's reversed joints" in res.output


def test_an_info_column_gives_every_row() -> None:
    with pytest.raises(bridge.BridgeError, match="counts must give the rows"):
        InfoColumn("bad", {"DOFs": 1}, (0,))


def test_info_conventions_come_from_the_declarations_and_survive_markup() -> None:
    """The conventions table is each registered Convention's declaration; bracketed text prints."""
    from bridge.cli.describe import CONVENTION_ROWS

    d = describe(bridge.load_urdf(MODELS / "offsets.urdf"))
    part = d["conventions"]
    for name in part["columns"]:
        conv = registry.resolve(
            next(r for r in registry.LIBRARIES.values() if name in r.conventions).conventions[name]
        )
        k = part["columns"].index(name)
        cells = {row: part["rows"][row][k] for row in CONVENTION_ROWS}
        if conv.configuration is not None:
            assert cells["quaternion"] == ",".join(conv.configuration.quaternion.value)
        assert cells["angular half"] == f"{conv.velocity.angular_axes.value} axes"
    res = run("info", str(MODELS / "offsets.urdf"))
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())
    for shown in ("[pos; quat; joints]", "[quat; pos; joints]", "[lin; ang] (linear first)", "x,y,z,w"):
        assert shown in text, shown
    assert "xfb = [quaternion w,x,y,z; position; angular, linear velocity in base coordinates]" in text
    assert "declares no convention of its own" in text


def test_a_library_that_is_installed_but_does_not_import_gets_a_note(monkeypatch: pytest.MonkeyPatch) -> None:
    """pydrake under an ASCII locale raises ImportError("initialization failed") on import: the
    library gets a note saying so, the other columns show, no traceback (and its engine says why)."""
    import importlib

    real = importlib.import_module
    broken = registry.library("pinocchio").info.partition(":")[0]

    def import_module(name: str, *args, **kwargs):
        if name == broken:
            try:
                raise UnicodeDecodeError("ascii", b"\xf0", 0, 1, "ordinal not in range(128)")
            except UnicodeDecodeError as cause:
                raise ImportError("initialization failed") from cause
        return real(name, *args, **kwargs)

    monkeypatch.setattr(importlib, "import_module", import_module)
    res = run("info", str(MODELS / "offsets.urdf"))
    assert res.exit_code == 0, res.output
    assert (
        "pinocchio has no column: pinocchio is installed but cannot be imported (initialization failed"
        in (" ".join(res.output.split()))
    )
    assert "UnicodeDecodeError" in res.output and "idyntree URDF loader" in res.output
