"""Drake's own URDF parser next to bridge's loader (bridge.backends.drake.native): the same physical
states give the same M, h and g to 1e-10, or a finding explains the difference."""

from __future__ import annotations

import logging

import pytest

pytest.importorskip("pydrake", reason="Drake is not installed (pip install 'bridge-dynamics[drake]')")

from bridge.robots import robot_path
from bridge.validation.native import compare_native as _compare_native

DRAKE_PAIR = "drake URDF parser vs bridge"


def compare_native(path):
    """Drake's parser alone against bridge's model: 3 samples, MIXED."""
    return _compare_native(path, ["drake"], samples=3, representations=("mixed",))


@pytest.fixture(autouse=True)
def _quiet_drake():
    """Drake's parser logs a warning per non-physical inertia; keep the test output readable."""
    logger = logging.getLogger("drake")
    level = logger.level
    logger.setLevel(logging.ERROR)
    yield
    logger.setLevel(level)


@pytest.mark.parametrize(
    ("name", "finding"),
    [
        ("iCubGazeboV2_5", "<dynamics damping> of 32 joints"),
        ("solo12", "named 'base_link' for the free base 'base_link'"),
        ("panda", "relations become coupler constraints"),
        ("ur5_robot", "the URDF link 'world' is Drake's world body"),
        ("double_pendulum_continuous", "joint damping"),
    ],
)
def test_drake_parser_agrees_with_bridge(name: str, finding: str) -> None:
    report = compare_native(robot_path(name))
    assert report.ok, str(report)
    assert any(finding in f.message for f in report.findings), str(report)


def test_nonphysical_inertias_are_a_finding() -> None:
    report = compare_native(robot_path("anymal_c_simple_description/anymal"))
    assert not report.ok
    assert report.worst("gravity_forces") < 1e-10  # masses and centres of mass agree
    replaced = [f for f in report.findings if f.cause == "drake_inertia_replaced"]
    assert replaced and "depth_camera_front_camera" in replaced[0].subjects
    assert "'depth_camera_front_camera': rotational inertia" in replaced[0].message
    assert replaced[0].error_without < 1e-10 < replaced[0].error_with  # the whole difference


def test_parser_refusal_is_a_finding() -> None:
    report = compare_native(robot_path("talos_reduced"))
    assert not report.ok and not report.results
    assert any("refuses the file" in f.message and "cannot mimic" in f.message for f in report.findings), str(
        report
    )


# ------------------------------------------------------------------ bridge check --native learns Drake
_INERTIA = '<inertia ixx="0.01" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.015"/>'
_LIMIT = '<limit lower="-1" upper="1" effort="1" velocity="1"/>'


def _planted(tmp_path, body: str) -> str:
    path = tmp_path / "planted.urdf"
    path.write_text(
        f'<?xml version="1.0"?>\n<robot name="planted" xmlns:drake="http://drake.mit.edu">\n{body}\n</robot>\n'
    )
    return str(path)


def _link(name: str, inertia: str = _INERTIA) -> str:
    inertial = f'<inertial><origin xyz="0.1 0 0.05"/><mass value="1"/>{inertia}</inertial>'
    return f'<link name="{name}">{inertial}</link>'


def _joint(name: str, parent: str, child: str, kind: str = "revolute", extra: str = "") -> str:
    limit = _LIMIT if kind == "revolute" else ""
    return (
        f'<joint name="{name}" type="{kind}"><origin xyz="0.2 0 0" rpy="0.1 0 0"/><parent link="{parent}"/>'
        f'<child link="{child}"/><axis xyz="0 1 0"/>{limit}{extra}</joint>'
    )


def _drake_rows(report) -> dict:
    rows = {(r.quantity, r.representation): r.max_rel for r in report.results if r.engines == DRAKE_PAIR}
    assert len(rows) == 9, rows  # M, h, g in every representation
    return rows


def _one(report, cause: str):
    found = [f for f in report.findings if f.cause == cause]
    assert len(found) == 1, [f.cause for f in report.findings]
    return found[0]


def _reference(path: str, quantity: str):
    """bridge's M or h at the states cross_validate(native=True, samples=3, seed=0) uses, per rep."""
    import numpy as np

    import bridge
    from bridge.validation.sampling import random_states

    model = bridge.load_urdf(path)
    states = random_states(model, 3, np.random.default_rng(0))
    out = []
    for rep in ("body", "inertial", "mixed"):
        kd = bridge.KinDyn(model, "pinocchio", rep)
        kd.set_robot_state(states.to(rep))
        out.append((kd, states.to(rep)))
    return out


def test_native_report_has_a_drake_column(tmp_path) -> None:
    import bridge

    path = _planted(tmp_path, _link("a") + _link("b") + _joint("j", "a", "b"))
    report = bridge.cross_validate(path, native=True, samples=2)
    assert report.ok, str(report)
    assert report.engines == ["pinocchio URDF loader", "idyntree URDF loader", "drake URDF parser"]
    assert max(_drake_rows(report).values()) < 1e-12
    assert _one(report, "drake_floating_joint").subjects == ("a",)


def test_world_link_is_welded(tmp_path) -> None:
    import bridge

    body = '<link name="world"/>' + _link("a") + _link("b") + _joint("fix", "world", "a", "fixed")
    report = bridge.cross_validate(_planted(tmp_path, body + _joint("j", "a", "b")), native=True, samples=2)
    assert report.ok, str(report)  # Drake's welded robot agrees with bridge's re-rooted fixed one
    f = _one(report, "drake_world_welded")
    assert f.subjects == ("world", "fix") and f.error_with is None
    assert "drake_floating_joint" not in {g.cause for g in report.findings}


def test_joint_damping_is_kept(tmp_path) -> None:
    import numpy as np

    import bridge

    body = _link("a") + _link("b") + _joint("j", "a", "b", extra='<dynamics damping="0.5"/>')
    path = _planted(tmp_path, body)
    report = bridge.cross_validate(path, native=True, samples=3)
    assert report.ok, str(report)  # rigid-body M, h, g leave damping out
    f = _one(report, "drake_joint_damping")
    assert f.subjects == ("j",) and "largest coefficient 0.5" in f.message
    # with Drake's force elements, h gains 0.5 s_dot on the joint row: exactly that, relative
    expected = max(
        0.5 * abs(st.s_dot[k, 0]) / max(1.0, np.linalg.norm(kd.bias_forces()[k]))
        for kd, st in _reference(path, "h")
        for k in range(3)
    )
    assert f.error_with == pytest.approx(expected, rel=1e-9) and f.error_without < 1e-12


def test_transmission_reflected_inertia_adds_to_M(tmp_path) -> None:
    import numpy as np

    import bridge

    transmission = (
        '<transmission name="t"><type>transmission_interface/SimpleTransmission</type>'
        '<joint name="j"><hardwareInterface>EffortJointInterface</hardwareInterface></joint>'
        '<actuator name="motor"><drake:rotor_inertia value="0.1"/><drake:gear_ratio value="3"/>'
        "</actuator></transmission>"
    )
    path = _planted(tmp_path, _link("a") + _link("b") + _joint("j", "a", "b") + transmission)
    report = bridge.cross_validate(path, native=True, samples=3)
    assert not report.ok  # Drake's M has the reflected inertia 0.1 * 3^2 = 0.9 on j's diagonal
    f = _one(report, "drake_transmissions")
    assert f.subjects == ("j",) and "largest 0.9" in f.message
    expected = max(
        0.9 / max(1.0, np.linalg.norm(kd.mass_matrix()[k]))
        for kd, _ in _reference(path, "M")
        for k in range(3)
    )
    assert f.error_with == pytest.approx(expected, rel=1e-9) and f.error_without < 1e-12
    assert _drake_rows(report)[("gravity_forces", "mixed")] < 1e-12
    assert "drake_unexplained" not in {g.cause for g in report.findings}
    # a transmission without drake: tags is an actuator with no reflected inertia: no effect
    plain = transmission.replace('<drake:rotor_inertia value="0.1"/><drake:gear_ratio value="3"/>', "")
    path = _planted(tmp_path, _link("a") + _link("b") + _joint("j", "a", "b") + plain)
    report = bridge.cross_validate(path, native=True, samples=2)
    assert report.ok and _one(report, "drake_transmissions").error_with is None


def test_mimic_joints_become_couplers(tmp_path) -> None:
    import bridge

    body = (
        _link("a")
        + _link("b")
        + _link("c")
        + _joint("j", "a", "b")
        + _joint("k", "a", "c", extra='<mimic joint="j" multiplier="2" offset="0.1"/>')
    )
    report = bridge.cross_validate(_planted(tmp_path, body), native=True, samples=2)
    assert report.ok, str(report)  # independent DOFs in Drake's M, as in bridge's default
    f = _one(report, "drake_mimic_couplers")
    assert f.subjects == ("k",) and f.message.startswith("1 <mimic> relations") and f.error_with is None


def test_nonphysical_inertia_is_replaced(tmp_path) -> None:
    import bridge

    bad = '<inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.05"/>'  # 0.01 + 0.01 < 0.05
    path = _planted(tmp_path, _link("a") + _link("b", bad) + _joint("j", "a", "b"))
    report = bridge.cross_validate(path, native=True, samples=3)
    assert not report.ok
    f = _one(report, "drake_inertia_replaced")
    assert f.subjects == ("b",) and "'b': rotational inertia" in f.message
    rows = _drake_rows(report)
    assert f.error_with == pytest.approx(max(rows.values())) and f.error_with > 1e-3
    assert f.error_without < 1e-12  # bridge given Drake's inertia agrees
    assert max(v for (q, _), v in rows.items() if q == "gravity_forces") < 1e-12  # mass and COM kept
    assert "drake_unexplained" not in {g.cause for g in report.findings}


def test_info_has_drake_columns(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    """bridge info: how Drake counts (world body, welds, the floating joint) and orders the velocities,
    for bridge's conversion and for Drake's own Parser; the tables still fit 80 columns."""
    import io
    import re

    from rich.console import Console
    from typer.testing import CliRunner

    import bridge
    import bridge.cli
    from bridge.cli.info import describe

    body = _link("a") + _link("b") + _link("c") + _link("d")
    body += _joint("zeta", "a", "b") + _joint("fix", "b", "c", "fixed") + _joint("alpha", "a", "d")
    path = _planted(tmp_path, body)
    model = bridge.load_urdf(path)
    d = describe(model, path)
    k = d["columns"].index("drake")
    counts = {row: values[k] for row, values in d["counts"].items()}
    # 4 links and the world; 3 joints, the weld and the floating joint; 2 DOFs
    assert counts == {
        "links / bodies": 5,
        "joints": 4,
        "fixed joints": 1,
        "DOFs": 2,
        "frames": counts["frames"],
        "nq": 9,
        "nv": 8,
    }
    assert counts["frames"] >= 5  # a body frame per body, and more
    assert d["orders"]["drake"] == [0, 1]  # zeta, alpha: depth first from the base
    j = d["loaders"]["columns"].index("drake")
    assert {row: values[j] for row, values in d["loaders"]["counts"].items()}["links / bodies"] == 5
    assert sorted(d["loaders"]["orders"]["drake"]) == [0, 1]
    assert any(n.startswith("drake counts the 'world' body") for n in d["notes"])

    buffer = io.StringIO()
    monkeypatch.setattr(bridge.cli, "_console", lambda: Console(file=buffer, width=80, force_terminal=True))
    res = CliRunner().invoke(bridge.cli.app, ["info", "iCubGazeboV2_5"])
    assert res.exit_code == 0, res.output
    text = re.sub(r"\x1b\[[0-9;]*m", "", buffer.getvalue())
    assert "…" not in text
    # the counts and DOF-order tables, bridge's and the loaders', and the declared conventions: a
    # header line naming drake each (a column after Drake's, e.g. Newton's, may wrap the headers)
    headers = [line.split() for line in text.splitlines() if "drake" in line.split() and "│" not in line]
    headers = [h for h in headers if h[0] != "-"]  # not the notes
    assert len(headers) == 5, headers
    assert sum("loader" in h for h in headers) == 2, headers
    assert max(len(line.rstrip()) for line in text.splitlines()) <= 80
