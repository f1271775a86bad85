"""``bridge check FILE --native`` / ``cross_validate(path, native=True)``: the libraries' own loaders
compared, each recognised cause planted in a small URDF and its finding and numbers asserted."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

import bridge
from bridge.cli import app
from bridge.robots import robot_names

PAIR = "pinocchio URDF loader vs idyntree URDF loader"

MODELS = Path(__file__).resolve().parents[2] / "models"
INERTIA = '<inertia ixx="0.01" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.015"/>'


def _urdf(tmp_path: Path, body: str, name: str = "r") -> Path:
    path = tmp_path / f"{name}.urdf"
    path.write_text(f'<?xml version="1.0"?>\n<robot name="{name}">\n{body}\n</robot>\n')
    return path


def _link(name: str, mass: float = 1.0, inertia: str = INERTIA) -> str:
    inertial = f'<inertial><origin xyz="0.1 0 0.05"/><mass value="{mass}"/>{inertia}</inertial>'
    return f'<link name="{name}">{inertial}</link>'


def _joint(name: str, parent: str, child: str, kind: str = "revolute", extra: str = "") -> str:
    limit = '<limit lower="-1" upper="1" effort="1" velocity="1"/>' if kind == "revolute" else ""
    return (
        f'<joint name="{name}" type="{kind}"><origin xyz="0.2 0 0" rpy="0.1 0 0"/><parent link="{parent}"/>'
        f'<child link="{child}"/><axis xyz="0 1 0"/>{limit}{extra}</joint>'
    )


def _finding(report, cause: str):
    found = [f for f in report.findings if f.cause == cause]
    assert len(found) == 1, [f.cause for f in report.findings]
    return found[0]


def test_agreement_on_a_plain_file_has_no_disagreement_finding() -> None:
    report = bridge.cross_validate(str(MODELS / "offsets.urdf"), native=True, samples=2)
    assert report.ok and report.engines[:2] == ["pinocchio URDF loader", "idyntree URDF loader"]
    assert {r.quantity for r in report.results} == {"mass_matrix", "bias_forces", "gravity_forces"}
    assert all(f.error_with is None for f in report.findings)


def test_massless_link_with_inertia_dropped_by_idyntree(tmp_path: Path) -> None:
    foot = '<link name="foot"><inertial><mass value="0"/>' + INERTIA + "</inertial></link>"
    path = _urdf(
        tmp_path,
        _link("a") + _link("b") + foot + _joint("j", "a", "b") + _joint("ankle", "b", "foot", "fixed"),
    )
    report = bridge.cross_validate(str(path), native=True, samples=3)
    assert not report.ok  # they disagree: exit 1
    f = _finding(report, "massless_inertia_dropped")
    assert f.subjects == ("foot",)
    assert f.error_with > 1e-4 and f.error_without < 1e-12  # the whole difference, and nothing else
    assert f.error_with == pytest.approx(max(r.max_rel for r in report.results if r.engines == PAIR))
    assert "unexplained" not in {g.cause for g in report.findings}
    assert _finding(report, "nonphysical_inertia").subjects == ("foot",)
    assert "(all explained)" in report.notes[0]


def test_massless_root_link_is_a_frame_in_idyntree(tmp_path: Path) -> None:
    world = '<link name="world"/>'
    path = _urdf(
        tmp_path,
        world + _link("a") + _link("b") + _joint("fix", "world", "a", "fixed") + _joint("j", "a", "b"),
    )
    report = bridge.cross_validate(str(path), native=True, samples=3)
    assert report.ok, str(report)
    f = _finding(report, "root_link_is_frame")
    assert f.subjects == ("world",) and "'a'" in f.message and f.error_with is None


def test_mimic_joints_and_dof_order(tmp_path: Path) -> None:
    body = (
        _link("a")
        + _link("b")
        + _link("c")
        + _link("d")
        + _joint("zeta", "a", "b")
        + _joint("alpha", "b", "c")
        + _joint("beta", "a", "d", extra='<mimic joint="zeta"/>')
    )
    report = bridge.cross_validate(str(_urdf(tmp_path, body)), native=True, samples=2)
    assert report.ok, str(report)
    assert _finding(report, "mimic_joints").subjects == ("beta",)
    assert "dof_order" in {f.cause for f in report.findings} or all(
        f.cause != "unexplained" for f in report.findings
    )


def test_cli_native_exit_codes_and_findings(tmp_path: Path) -> None:
    runner = CliRunner()
    res = runner.invoke(
        app, ["check", str(MODELS / "offsets.urdf"), "--native", "--samples", "2"], env={"COLUMNS": "200"}
    )
    assert res.exit_code == 0, res.output
    assert "pinocchio URDF loader vs idyntree URDF" in res.output and "all engines agree" in res.output
    res = runner.invoke(app, ["check", "bolt", "--native", "--samples", "2"], env={"COLUMNS": "200"})
    assert res.exit_code == 1, res.output
    assert (
        "massless_inertia_dropped" in res.output
        and "FL_FOOT" in res.output
        and "without this cause" in res.output
    )
    assert "(all explained)" in res.output


REPRESENTATIVE = ["iCubGazeboV2_5", "panda", "bolt", "ur5_robot", "talos_reduced", "solo12"]


def _nothing_unexplained(name: str) -> None:
    try:
        report = bridge.cross_validate(name, native=True, samples=1)
    except (bridge.BackendError, bridge.URDFError) as exc:  # ur3 has no links: no loader takes it
        assert name == "ur3", str(exc)
        return
    assert not {"unexplained", "drake_unexplained"} & {f.cause for f in report.findings}, str(report)
    if not report.ok:
        assert any(f.error_with is not None for f in report.findings), str(report)


@pytest.mark.parametrize("name", REPRESENTATIVE)
def test_shipped_robots_nothing_unexplained(name: str) -> None:
    _nothing_unexplained(name)


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n in robot_names() if n not in REPRESENTATIVE])
def test_every_shipped_robot_nothing_unexplained(name: str) -> None:
    _nothing_unexplained(name)
