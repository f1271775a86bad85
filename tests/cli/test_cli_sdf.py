"""The command line takes SDFormat wherever it takes URDF (detected by content): check, info,
convert (to URDF, MJCF; SDF when the writer is there), the loading options, check --native."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.runner import MODELS, run

OFFSETS = MODELS / "sdf" / "offsets.sdf"
UNIVERSAL = MODELS / "sdf" / "universal.sdf"


def test_check_and_info_take_sdf() -> None:
    res = run("check", str(UNIVERSAL), "--samples", "2", "--engines", "pinocchio,featherstone")
    assert res.exit_code == 0, res.output
    assert "all engines agree" in res.output
    res = run("info", str(UNIVERSAL))
    assert res.exit_code == 0, res.output
    assert "cardan__axis2" in res.output and "fixed base" in res.output


def test_loading_options_apply_to_sdf(tmp_path: Path) -> None:
    import bridge

    out = tmp_path / "wheel.urdf"
    res = run("convert", str(OFFSETS), "-o", str(out), "--base", "wheel", "--joints", "shoulder,tilt")
    assert res.exit_code == 0, res.output
    model = bridge.load_urdf(out)
    assert model.base == "wheel" and model.dof_names == ("shoulder", "tilt")
    res = run("info", str(OFFSETS), "--fixed-base")
    assert res.exit_code == 0, res.output
    assert "fixed base" in res.output


def test_convert_sdf_to_urdf_and_mjcf_keeps_the_model(tmp_path: Path) -> None:
    import numpy as np

    import bridge

    urdf = tmp_path / "offsets.urdf"
    assert run("convert", str(OFFSETS), "-o", str(urdf)).exit_code == 0
    source, written = bridge.load_sdf(OFFSETS), bridge.load_urdf(urdf)
    assert written.dof_names == source.dof_names and written.base == source.base
    for a in source.links:
        expected = a.inertia.as_matrix()
        np.testing.assert_allclose(written.link(a.name).inertia.as_matrix(), expected, atol=1e-15)
    for a in source.joints:
        b = written.joint(a.name)
        np.testing.assert_allclose(b.transform(0.3).matrix, a.transform(0.3).matrix, atol=1e-15)
    pytest.importorskip("mujoco")
    res = run("convert", str(OFFSETS), "-o", str(tmp_path / "offsets.xml"))
    assert res.exit_code == 0, res.output


def test_convert_to_sdf_needs_the_writer(tmp_path: Path) -> None:
    """``-o X.sdf`` writes through ``Model.to_sdf`` (the SDF writer); without it, exit 2 saying so."""
    import bridge

    out = tmp_path / "out.sdf"
    res = run("convert", str(OFFSETS), "-o", str(out))
    if hasattr(bridge.Model, "to_sdf"):
        assert res.exit_code == 0, res.output
        assert bridge.load_sdf(out).dof_names == bridge.load_sdf(OFFSETS).dof_names
    else:
        assert res.exit_code == 2 and "cannot write SDFormat" in res.output
        assert not out.exists()


def test_bad_sdf_exits_2_naming_the_element(tmp_path: Path) -> None:
    bad = tmp_path / "bad.sdf"
    bad.write_text(
        '<sdf version="1.9"><model name="m"><link name="a"/><link name="b"/>'
        '<joint name="j" type="screw"><parent>a</parent><child>b</child></joint></model></sdf>'
    )
    res = run("check", str(bad))
    assert res.exit_code == 2
    assert "joint 'j' has type 'screw'" in " ".join(res.output.split())


def test_check_native_on_ball_joints_and_free_bodies() -> None:
    """``bridge check FILE.sdf --native`` on ball joints (one in a rotated frame) and free bodies:
    bridge's engines agree, and Drake's parser with bridge's model, explained."""
    pytest.importorskip("pydrake")
    for name in ("ball_arm.sdf", "ball_scene.sdf"):
        res = run("check", str(UNIVERSAL.parent / name), "--native", "--samples", "2")
        assert res.exit_code == 0, res.output
        text = " ".join(res.output.split())
        assert "drake SDFormat parser vs bridge" in text
        assert "drake_joint_frames" in text, text  # (rotated ball joint frames, free bodies' poses)
        assert ("drake_floating_joint" in text) == (name == "ball_scene.sdf"), text


def test_check_native_compares_drakes_sdformat_parser() -> None:
    pytest.importorskip("pydrake")
    res = run("check", str(UNIVERSAL), "--native", "--samples", "2")
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())
    assert "drake SDFormat parser vs bridge" in text
    assert "drake_universal_joints" in text
    assert "pinocchio's own loader reads URDF, not SDF: left out" in text
