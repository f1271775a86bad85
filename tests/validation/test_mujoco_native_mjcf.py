"""MuJoCo's own compiler on MJCF files next to bridge's model of them (``bridge check FILE.xml --native``):
the hand-written models, control-suite files and planted causes, each explained (nothing unexplained),
and the loaders that read no MJCF left out with a note."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

mujoco = pytest.importorskip("mujoco", reason="MuJoCo is not installed (pip install '.[mujoco]')")

from bridge.backends.mujoco.native import MujocoLoader  # noqa: E402
from bridge.backends.mujoco.native_mjcf import MjcfLoader  # noqa: E402
from bridge.validation.native import compare_native  # noqa: E402
from tests.cli.runner import MODELS, run  # noqa: E402

MJCF = MODELS / "mjcf"
_DM = importlib.util.find_spec("dm_control")
SUITE = Path(next(iter(_DM.submodule_search_locations)), "suite") if _DM else None
needs_suite = pytest.mark.skipif(SUITE is None, reason="dm-control is not installed")


def _native(path: Path, loaders=None, samples: int = 2):
    return compare_native(path, loaders, samples=samples)


def _causes(report) -> dict[str, object]:
    return {f.cause: f for f in report.findings}


def _all_explained(report) -> None:
    assert report.engines == ["mujoco MJCF compiler"]
    assert "mujoco_unexplained" not in _causes(report)
    for note in report.notes:
        assert "without the causes" not in note or "(all explained)" in note, note


def test_the_loaders_reading_no_mjcf_are_left_out_with_a_note() -> None:
    report = _native(MJCF / "humanoid_hips.xml")
    assert report.ok and report.worst() < 1e-12  # nothing MuJoCo adds: bridge's numbers exactly
    assert any("pinocchio's own loader reads URDF, not MJCF: left out" in n for n in report.notes)
    assert any("idyntree's own loader reads URDF, not MJCF: left out" in n for n in report.notes)
    assert set(_causes(report)) == {"mujoco_inertia_from_geoms"}  # taken over as compiled: no numbers
    assert _causes(report)["mujoco_inertia_from_geoms"].error_with is None


def test_damping_is_explained_and_armature_is_no_difference() -> None:
    report = _native(MJCF / "arm.xml")  # armature on two joints, damping on every joint
    _all_explained(report)
    f = _causes(report)["mujoco_damping"]
    assert "wrist_roll" in f.subjects and f.error_with > 1e-3 and f.error_without < 1e-12
    assert "mujoco_armature" not in _causes(report)  # bridge's model carries the joints' armature
    assert max(r.max_rel for r in report.results if r.quantity == "mass_matrix") < 1e-12


def test_gravcomp_and_fluid_forces() -> None:
    report = _native(MJCF / "passive_extras.xml")
    _all_explained(report)
    causes = _causes(report)
    assert causes["mujoco_gravcomp"].subjects == ("boom",) and causes["mujoco_gravcomp"].error_with > 1e-2
    assert causes["mujoco_fluid"].error_with > 1e-2


def test_free_joint_armature_planted_with_an_edit() -> None:
    def edit(spec) -> None:
        spec.joint("hull_free").armature = 0.3

    report = _native(MJCF / "passive_extras.xml", [MujocoLoader(edit=edit)])
    _all_explained(report)
    f = _causes(report)["mujoco_armature"]
    assert f.subjects == ("hull_free",) and f.error_with > 1e-3
    assert max(r.max_rel for r in report.results if r.quantity == "mass_matrix") > 1e-3


def test_compiler_inertia_options_are_named(tmp_path: Path) -> None:
    path = tmp_path / "balanced.xml"
    path.write_text(
        '<mujoco model="balanced"><compiler balanceinertia="true"/><worldbody><body name="a">'
        '<joint name="j" axis="0 1 0"/><inertial pos="0.1 0 0" mass="1" diaginertia="0.01 0.02 0.05"/>'
        "</body></worldbody></mujoco>"
    )
    report = _native(path, [MjcfLoader()])
    f = _causes(report)["mujoco_balanced_inertia"]
    assert f.subjects == ("a",) and report.ok  # bridge's model has the balanced inertia too


@needs_suite
@pytest.mark.parametrize(
    ("name", "causes"),
    [
        ("cheetah", {"mujoco_damping"}),
        ("swimmer", {"mujoco_fluid"}),
        ("fish", {"mujoco_damping", "mujoco_tendons", "mujoco_fluid"}),
        ("finger", {"mujoco_damping"}),
        ("humanoid", {"mujoco_damping"}),
        ("quadruped", {"mujoco_damping"}),  # a scene: the quadruped and a free ball
        ("dog", {"mujoco_damping"}),  # a scene too; the tail's springdamper is a spring (removed with it)
    ],
)
def test_control_suite_files_are_explained(name: str, causes: set[str]) -> None:
    report = _native(SUITE / f"{name}.xml")
    _all_explained(report)
    found = _causes(report)
    assert causes <= set(found), sorted(found)
    for cause in causes:
        assert found[cause].error_without is not None


def test_check_native_on_mjcf_from_the_command_line() -> None:
    res = run("check", str(MJCF / "arm.xml"), "--native", "--samples", "2")
    assert res.exit_code == 1, res.output  # damping: a difference, explained
    for text in ("mujoco MJCF compiler vs bridge", "mujoco_damping", "all explained", "reads URDF, not MJCF"):
        assert text in " ".join(res.output.split()), text
    res = run("check", str(MJCF / "humanoid_hips.xml"), "--native", "--engines", "pinocchio,mujoco")
    assert res.exit_code == 0, res.output


def test_scene_with_a_ball_and_free_bodies_compared_in_every_representation() -> None:
    """MuJoCo's own test model (a ball joint, five free bodies, unnamed free joints read as
    "joint<id>"): every joint's qpos and qvel entries go to MuJoCo's (a ball's 4 and 3, a free joint's
    7 and 6), each representation is measured (the free joints' velocities change with it), and what
    differs is explained."""
    testdata = importlib.util.find_spec("mujoco")
    path = Path(next(iter(testdata.submodule_search_locations)), "testdata", "model.xml")
    if not path.is_file():
        pytest.skip("the mujoco wheel has no testdata/model.xml")
    report = compare_native(path, None, samples=2, representations=("body", "inertial", "mixed"))
    _all_explained(report)
    assert {r.representation for r in report.results} == {"body", "inertial", "mixed"}
    assert max(r.max_rel for r in report.results if r.quantity == "mass_matrix") < 1e-12
