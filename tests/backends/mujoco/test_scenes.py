"""Scenes from public packages: a robot and free objects, several free bodies, through bridge.

dm_control's composer builds its manipulation and soccer tasks as MJCF models: a fixed Kinova Jaco
arm with its hand and one to five free Duplo bricks, or soccer players (free Ant walkers) and a free
ball on a pitch. MuJoCo compiles each task's MJCF text with its assets (all in the dm-control wheel,
no network); :func:`bridge.from_mujoco` reads the compiled model as a scene (the world body as the
fixed base, a FREE joint to each free body) and every engine that takes it equals MuJoCo's own
numbers in every representation: M, h, ID, FD, Jacobians and site poses to 1e-10 (measured worst
over the tasks below: 2.1e-12, forward dynamics). The mujoco engine joins; iDynTree, which has no
ball or free joint, refuses such a scene by name.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import bridge

mujoco = pytest.importorskip("mujoco", reason="MuJoCo is not installed (pip install '.[mujoco]')")
pytest.importorskip("dm_control", reason="dm-control is not installed (part of the test extra)")

from tests.backends.mujoco_reference import engine_errors, engines_for  # noqa: E402

REPRESENTATIONS = ("body", "inertial", "mixed")


@pytest.fixture(autouse=True, scope="module")
def _mujocos_own_warning_output():
    """Importing dm_control's MuJoCo wrapper (the composer does) sends MuJoCo's C warnings to absl's
    logging for the whole process (``mujoco.set_mju_user_warning``); the other tests see MuJoCo print
    them as users do: MuJoCo's own handler is put back after these tests."""
    before = mujoco.get_mju_user_warning()
    yield
    mujoco.set_mju_user_warning(before)


def _compile(mjcf_model) -> object:
    """MuJoCo's model of a composer MJCF model (its XML text and assets)."""
    return mujoco.MjModel.from_xml_string(mjcf_model.to_xml_string(), mjcf_model.get_assets())


def manipulation_scene(name: str) -> object:
    """The MJCF model of dm_control's manipulation task ``name`` (no physics is made)."""
    from dm_control import manipulation  # noqa: F401 (registers the tasks)
    from dm_control.manipulation.shared import registry

    return registry.get_constructor(name)().root_entity.mjcf_model


def soccer_scene(team_size: int) -> object:
    """The MJCF model of dm_control's soccer task: ``team_size`` Ant walkers a side and a ball."""
    from dm_control.locomotion import soccer

    players = soccer._make_players(team_size, soccer.WalkerType.ANT)
    task = soccer.Task(players=players, arena=soccer.Pitch(size=(32, 24)), ball=soccer.SoccerBall())
    return task.root_entity.mjcf_model


SCENES = {
    "lift_brick": (lambda: manipulation_scene("lift_brick_features"), 1),
    "stack_3_bricks": (lambda: manipulation_scene("stack_3_bricks_features"), 3),
    "reassemble_5_bricks": (lambda: manipulation_scene("reassemble_5_bricks_random_order_features"), 5),
    "soccer_2v2_ants": (lambda: soccer_scene(2), 5),
}


@pytest.mark.parametrize("name", list(SCENES))
def test_composer_scene_equals_mujoco(name: str) -> None:
    make, n_free = SCENES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (absl and dm_control's own deprecation notes)
        mjcf_model = make()
    mm = _compile(mjcf_model)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bridge.BridgeWarning)  # damping, limits, ...: not rigid-body dynamics
        model = bridge.from_mujoco(mm, name)
    kinds = [model.joint(d).kind for d in model.dof_names]
    assert not model.floating and model.base == "world"
    assert kinds.count(bridge.JointKind.FREE) == n_free
    assert all(
        model.joint(d).parent == "world" for d in model.dof_names if model.joint(d).kind.value == "free"
    )
    engines = engines_for(model)
    assert {"pinocchio", "featherstone", "mujoco"} <= set(engines) and "idyntree" not in engines
    with pytest.raises(bridge.BridgeError, match="several coordinates"):
        bridge.KinDyn(model, "idyntree")
    errors = {}
    for k, rep in enumerate(REPRESENTATIONS):
        found = engine_errors(model, _compile(mjcf_model), np.random.default_rng(k), engines, rep)
        errors |= {f"{rep} {q}": v for q, v in found.items()}
    bad = {k: v for k, v in errors.items() if not v <= (1e-12 if k.endswith("sites") else 1e-10)}
    assert not bad, f"{name}: " + ", ".join(f"{k} {v:.1e}" for k, v in bad.items())


def _public_files() -> list[object]:
    from tests.backends.mujoco_reference import MUJOCO_TESTDATA, SUITE

    out = []
    for label, folder, name in (("suite", SUITE, "quadruped"), ("mujoco-testdata", MUJOCO_TESTDATA, "model")):
        path = None if folder is None else folder / f"{name}.xml"
        marks = (
            () if path is not None and path.is_file() else pytest.mark.skip(reason=f"{label} not installed")
        )
        out.append(pytest.param(path, id=f"{label}-{name}", marks=marks))
    return out


@pytest.mark.parametrize("path", _public_files())
def test_cross_validate_on_public_scenes(path) -> None:
    """cross_validate runs and passes on the control suite's quadruped (a robot and a free ball) and
    MuJoCo's own test model (a ball joint, five free bodies), every quantity and identity, on the
    engines that take such joints (the mujoco engine among them)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bridge.BridgeWarning)
        model = bridge.load_mjcf(path)
    assert not model.floating and not model.single_coordinate
    report = bridge.cross_validate(model, engines=engines_for(model), samples=3, seed=1)
    assert "mujoco" in report.engines and report.results and report.ok, "\n" + str(report)
