"""MuJoCo's own URDF compiler next to bridge's loader (``bridge check FILE --native --engines ...,mujoco``):
each recognised cause planted in a small URDF, its finding and its error with and without it."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

import bridge
from bridge.cli import app

mujoco = pytest.importorskip("mujoco", reason="MuJoCo is not installed (pip install '.[mujoco]')")

from bridge.backends.mujoco.native import MujocoLoader  # noqa: E402
from bridge.validation.native import compare_native as _compare_native  # noqa: E402

INERTIA = '<inertia ixx="0.01" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.015"/>'
BAD_INERTIA = '<inertia ixx="0.01" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.05"/>'  # A + B < C
ENGINES = ["pinocchio", "idyntree", "mujoco"]


def compare_native(path: Path, edit=None):
    """MuJoCo's URDF compiler alone against bridge's model: 3 samples (a fixed base)."""
    return _compare_native(path, [MujocoLoader(edit=edit)], samples=3, representations=("mixed",))


def _urdf(tmp_path: Path, body: str, head: str = "") -> Path:
    path = tmp_path / "r.urdf"
    path.write_text(f'<?xml version="1.0"?>\n<robot name="r">{head}\n{body}\n</robot>\n')
    return path


def _link(name: str, inertia: str = INERTIA, extra: str = "") -> str:
    inertial = f'<inertial><origin xyz="0.1 0 0.05"/><mass value="1"/>{inertia}</inertial>' if inertia else ""
    return f'<link name="{name}">{inertial}{extra}</link>'


def _joint(name: str, parent: str, child: str, kind: str = "revolute", extra: str = "") -> str:
    limit = '<limit lower="-1" upper="1" effort="1" velocity="1"/>' if kind == "revolute" else ""
    return (
        f'<joint name="{name}" type="{kind}"><origin xyz="0.2 0 0" rpy="0.1 0 0"/><parent link="{parent}"/>'
        f'<child link="{child}"/><axis xyz="0 1 0"/>{limit}{extra}</joint>'
    )


def _chain(extra_b: str = "", inertia_b: str = INERTIA, joint_extra: str = "") -> str:
    return (
        _link("a")
        + _link("b", inertia_b, extra_b)
        + _link("c")
        + _joint("j", "a", "b", extra=joint_extra)
        + _joint("k", "b", "c", "continuous")
    )


def _finding(out, cause: str):
    found = [f for f in out.findings if f.cause == cause]
    assert len(found) == 1, [f.cause for f in out.findings]
    return found[0]


def _causes(out) -> set[str]:
    return {f.cause for f in out.findings}


def test_plain_file_agrees_and_only_the_root_is_fused(tmp_path: Path) -> None:
    out = compare_native(_urdf(tmp_path, _chain()))
    assert out.worst() < 1e-12
    f = _finding(out, "mujoco_fused_bodies")  # the root is welded to the world and fused into it
    assert f.subjects == ("a",) and f.error_with < 1e-12 and f.error_without < 1e-12
    assert _causes(out) == {"mujoco_fused_bodies", "mujoco_fixed_base"}


def test_damping(tmp_path: Path) -> None:
    out = compare_native(_urdf(tmp_path, _chain(joint_extra='<dynamics damping="0.7"/>')))
    f = _finding(out, "mujoco_damping")
    assert f.subjects == ("j",)
    assert f.error_with > 1e-3 and f.error_without < 1e-12
    assert out.worst("mass_matrix") < 1e-12  # damping is a passive force, not inertia


def test_fused_bodies(tmp_path: Path) -> None:
    body = _chain() + _link("tool") + _joint("mount", "c", "tool", "fixed")
    out = compare_native(_urdf(tmp_path, body))
    f = _finding(out, "mujoco_fused_bodies")
    assert set(f.subjects) == {"a", "tool"}
    assert f.error_with < 1e-12 and f.error_without < 1e-12  # merged, no effect on the dynamics
    assert "mujoco_unexplained" not in _causes(out)


def test_inertia_from_geoms(tmp_path: Path) -> None:
    box = '<collision><geometry><box size="0.1 0.2 0.3"/></geometry></collision>'
    body = _chain() + _link("tip", inertia="", extra=box) + _joint("w", "c", "tip")
    out = compare_native(_urdf(tmp_path, body))
    f = _finding(out, "mujoco_inertia_from_geoms")
    assert f.subjects == ("tip",)
    assert f.error_with > 1e-2 and f.error_without < 1e-12


def test_balanced_inertia_and_refusal_without_it(tmp_path: Path) -> None:
    body = _chain(inertia_b=BAD_INERTIA)
    out = compare_native(_urdf(tmp_path, body, '<mujoco><compiler balanceinertia="true"/></mujoco>'))
    f = _finding(out, "mujoco_balanced_inertia")
    assert f.subjects == ("b",)
    assert f.error_with > 1e-3 and f.error_without < 1e-12
    refused = compare_native(_urdf(tmp_path, body))
    assert "A + B >= C" in _finding(refused, "mujoco_refuses").message and not refused.results


def test_armature_from_an_edited_spec(tmp_path: Path) -> None:
    """A URDF gives MuJoCo no armature; a loader script that sets it (here through ``edit``) does."""

    def edit(spec) -> None:
        spec.joint("k").armature = 0.2

    out = compare_native(_urdf(tmp_path, _chain()), edit=edit)
    f = _finding(out, "mujoco_armature")
    assert f.subjects == ("k",)
    assert f.error_with > 1e-2 and f.error_without < 1e-12


def test_dof_order(tmp_path: Path) -> None:
    body = _link("a") + _link("b") + _link("c") + _joint("j2", "b", "c") + _joint("j1", "a", "b")
    out = compare_native(_urdf(tmp_path, body))
    assert _finding(out, "mujoco_dof_order").subjects == ("j2", "j1")
    assert out.worst() < 1e-12


def test_cross_validate_and_cli_add_mujoco_on_request(tmp_path: Path) -> None:
    path = _urdf(tmp_path, _chain(joint_extra='<dynamics damping="0.7"/>'))
    report = bridge.cross_validate(str(path), native=True, samples=2, engines=ENGINES)
    assert report.engines[-1] == "mujoco URDF compiler" and not report.ok
    assert "mujoco_damping" in {f.cause for f in report.findings}
    plain = bridge.cross_validate(str(path), native=True, samples=2)
    assert "mujoco URDF compiler" not in plain.engines and plain.ok
    result = CliRunner().invoke(app, ["check", str(path), "--native", "--engines", ",".join(ENGINES)])
    assert result.exit_code == 1, result.output
    assert "mujoco_damping" in result.output


def test_inertia_from_geoms_of_a_simple_body(tmp_path: Path) -> None:
    """A slide whose child has its centre of mass on the joint is one of MuJoCo 4's "simple" DOFs,
    whose mass matrix comes from ``dof_M0``, computed when compiling: the URDF's inertia written back
    into the compiled model counts only once MuJoCo's constants are set again (``mj_setConst``),
    else the cause's numbers without it keep the geoms' inertia."""
    box = '<collision><geometry><box size="0.1 0.2 0.3"/></geometry></collision>'
    body = _link("a") + _link("tip", inertia="", extra=box) + _joint("w", "a", "tip", "prismatic")
    out = compare_native(_urdf(tmp_path, body))
    f = _finding(out, "mujoco_inertia_from_geoms")
    assert f.subjects == ("tip",)
    assert f.error_with > 1e-2 and f.error_without < 1e-12
