"""The command line takes MJCF wherever it takes URDF (detected by content) and writes MJCF."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.cli.runner import MODELS, run

mujoco = pytest.importorskip("mujoco", reason="MuJoCo is not installed (pip install '.[mujoco]')")

HIPS = MODELS / "mjcf" / "humanoid_hips.xml"


def test_check_and_info_take_mjcf() -> None:
    res = run("check", str(HIPS), "--samples", "2")
    assert res.exit_code == 0, res.output
    assert "mujoco" in res.output
    res = run("info", str(HIPS))
    assert res.exit_code == 0, res.output
    assert "right_hip_z" in res.output


def test_urdf_options_on_mjcf_exit_2() -> None:
    res = run("check", str(HIPS), "--fixed-base")
    assert res.exit_code == 2 and "URDF files only" in res.output


def test_convert_mjcf_to_mjcf_and_urdf(tmp_path: Path) -> None:
    """-o out.xml writes MJCF with MuJoCo's numbers of the source file; -o out.urdf writes URDF."""
    import bridge

    out = tmp_path / "hips.xml"
    res = run("convert", str(HIPS), "-o", str(out))
    assert res.exit_code == 0, res.output
    written, original = mujoco.MjModel.from_xml_path(str(out)), mujoco.MjModel.from_xml_path(str(HIPS))
    d1, d2 = mujoco.MjData(written), mujoco.MjData(original)
    d1.qpos[:] = d2.qpos[:] = np.r_[
        0.1, 0.2, 1.0, 1.0, 0.0, 0.0, 0.0, np.linspace(-0.5, 0.5, original.nq - 7)
    ]
    for m, d in ((written, d1), (original, d2)):
        mujoco.mj_forward(m, d)
    M1, M2 = np.zeros((original.nv,) * 2), np.zeros((original.nv,) * 2)
    mujoco.mj_fullM(written, d1, M1)
    mujoco.mj_fullM(original, d2, M2)
    np.testing.assert_allclose(M1, M2, rtol=0, atol=1e-12 * np.abs(M2).max())
    urdf = tmp_path / "hips.urdf"
    res = run("convert", str(HIPS), "-o", str(urdf))
    assert res.exit_code == 0, res.output
    assert bridge.load_urdf(urdf).n_dofs == 11  # 17 velocities: 6 of the floating base
