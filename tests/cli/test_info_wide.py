"""``bridge info`` on models with ball, free and planar joints: Drake's column (its joint types, its
order) and the command's exit status.

Every column runs on them (Pinocchio's reads each joint's first index from
``bridge.conventions.native_state.joint_layout``, one entry per DOF joint for such models)."""

from __future__ import annotations

import warnings

import pytest

import bridge
from tests.cli.runner import MODELS, run

WIDE_URDF = MODELS / "wide" / "floating_planar.urdf"
BALL_SDF = MODELS / "sdf" / "ball_arm.sdf"


@pytest.mark.parametrize("path", [WIDE_URDF, BALL_SDF], ids=lambda p: p.name)
def test_info_runs_on_wide_models(path) -> None:
    res = run("info", str(path))
    assert res.exit_code == 0, res.output
    assert "drake" in res.output and "Traceback" not in res.output


def test_drakes_column_of_wide_models() -> None:
    pytest.importorskip("pydrake")
    from bridge.backends.drake.info import info_column

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bridge.URDFWarning)
        model = bridge.load_urdf(WIDE_URDF)
    info = info_column(model, str(WIDE_URDF))
    assert info.column.counts["nv"] == model.nv and info.column.counts["DOFs"] == model.n_dofs
    # each DOF joint's first velocity after the base: slide (3), shoulder (1), glide (3), skate (3), tether
    assert info.column.order == (0, 3, 4, 7, 10)
    # Drake's own parser: 'tether' (a floating joint) is not a joint there; the base's six entries left out
    assert info.loader.order[:4] == info.column.order[:4] and info.loader.order[4] == -1
    assert "planar joints (q = v = x, y, theta in F)" in info.notes[0]
    ball = bridge.load_sdf(BALL_SDF)
    note = info_column(ball).notes[0]
    assert "ball_rpy" in note and "roll, pitch, yaw" in note
