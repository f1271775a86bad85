"""Round trips keep every field a format can hold, and a model carries its file's gravity.

``load_sdf(model.to_sdf())`` equals ``model`` field by field (links, inertias, joints, axes, limits,
armature, frames, base, DOF order, gravity, names) for random models (with names SDFormat cannot
hold as they are: a link and a joint of the same name, ``::``, blanks, ``world``, ``u__axis2``
beside a universal joint ``u``), the shipped robots, dm_control's and MuJoCo's MJCF files, Drake's
SDF models and the files under models/; Drake's own parse of the written file agrees with bridge's
(the native-loader comparison). MJCF and URDF keep what they can hold (gravity and armature in MJCF,
neither in URDF, with a warning). The file's gravity is every engine's default: MuJoCo's own
``qfrc_bias`` on a file with ``<option gravity>``, Drake's gravity forces for an SDF world's.
"""

from __future__ import annotations

import dataclasses
import glob
import os
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bridge
from bridge.robots import robot_path
from bridge.spatial import DEFAULT_GRAVITY
from bridge.validation.sampling import random_states
from tests.helpers import float64_engines

MODELS = Path(__file__).resolve().parents[2] / "models"
SITE = Path(np.__file__).resolve().parents[1]
SAMPLES = settings(max_examples=25, suppress_health_check=[HealthCheck.too_slow], deadline=None)


def _close(a: np.ndarray, b: np.ndarray, what: str) -> None:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    scale = max(1.0, float(np.max(np.abs(a), initial=0.0)))
    assert np.max(np.abs(a - b), initial=0.0) <= 1e-12 * scale, f"{what}: {a} != {b}"


def assert_same_model(a: bridge.Model, b: bridge.Model) -> None:
    """Every field of ``a`` in ``b`` (a prismatic joint's axis origin, which does not move anything,
    aside; rotations through roll-pitch-yaw to rounding)."""
    assert (b.name, b.base, b.floating) == (a.name, a.base, a.floating)
    assert b.link_names == a.link_names
    assert b.dof_names == a.dof_names
    assert set(b.joint_names) == set(a.joint_names)
    assert [f.name for f in b.frames] == [f.name for f in a.frames]
    assert b.synthetic_links == a.synthetic_links
    for la in a.links:
        _close(la.inertia.parameters, b.link(la.name).inertia.parameters, f"link {la.name!r} inertia")
    for ja in a.joints:
        jb = b.joint(ja.name)
        assert (jb.kind, jb.parent, jb.child) == (ja.kind, ja.parent, ja.child), ja.name
        _close(ja.parent_H_child.matrix, jb.parent_H_child.matrix, f"joint {ja.name!r} rest")
        _close(ja.axis, jb.axis, f"joint {ja.name!r} axis")
        if ja.kind.rotational:
            _close(ja.axis_origin, jb.axis_origin, f"joint {ja.name!r} axis origin")
        assert jb.armature == ja.armature, ja.name
        if not ja.movable:  # (a fixed joint's limits mean nothing; SDF writes none)
            continue
        limits = dataclasses.asdict(ja.limits)
        if ja.kind is bridge.JointKind.CONTINUOUS:
            limits |= {"lower": None, "upper": None}
        assert dataclasses.asdict(jb.limits) == limits, ja.name
    for fa in a.frames:
        fb = b.frame(fa.name)
        assert fb.link == fa.link
        _close(fa.link_H_frame.matrix, fb.link_H_frame.matrix, f"frame {fa.name!r}")
    if a.gravity is None:
        assert b.gravity is None
    else:
        assert np.array_equal(b.gravity, a.gravity)


def sdf_round_trip(model: bridge.Model) -> bridge.Model:
    with warnings.catch_warnings():
        warnings.simplefilter("error", bridge.BridgeWarning)  # nothing left out
        return bridge.load_sdf(model.to_sdf())


# ------------------------------------------------------------------ random models with hard names
def _renamed(model: bridge.Model, rng: np.random.Generator) -> bridge.Model:
    """Names SDFormat cannot hold as they are: joints named like links, ``::``, blanks, ``world``."""
    link_names = list(model.link_names)
    links = {n: n for n in link_names}
    for n in link_names:
        r = rng.integers(4)
        links[n] = {0: n, 1: f"a::{n}", 2: f" {n} ", 3: n}[int(r)]
    if rng.random() < 0.5 and model.base not in ("world",):
        links[model.base] = "world"  # a URDF's (or MJCF's) world link
    joints = {}
    movable = [j.name for j in model.joints]
    for k, n in enumerate(movable):
        joints[n] = links[link_names[k % len(link_names)]] if rng.random() < 0.5 else n
    if len(movable) >= 2:  # a joint named like the second DOF of a universal joint of another
        joints[movable[1]] = f"{joints[movable[0]]}__axis2"
    if len(set(joints.values())) != len(joints):
        joints = {n: n for n in movable}
    frames = {f.name: f.name for f in model.frames}
    if model.frames:
        frames[model.frames[0].name] = joints[movable[0]] if movable else "f"

    def rl(n):
        return links[n]

    new_links = tuple(bridge.Link(rl(x.name), x.inertia) for x in model.links)
    new_joints = tuple(
        dataclasses.replace(j, name=joints[j.name], parent=rl(j.parent), child=rl(j.child))
        for j in model.joints
    )
    new_frames = tuple(bridge.Frame(frames[f.name], rl(f.link), f.link_H_frame) for f in model.frames)
    names = [x.name for x in new_links] + [f.name for f in new_frames]
    if len(set(names)) != len(names):
        return model
    return model.replace(
        links=new_links,
        joints=new_joints,
        frames=new_frames,
        base=rl(model.base),
        dof_names=tuple(joints[d] for d in model.dof_names),
    )


@SAMPLES
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(1, 9),
    floating=st.booleans(),
    gravity=st.sampled_from([None, (0.0, 0.0, 0.0), (0.0, 0.0, -3.0), (0.1, -2.5, -9.80665)]),
    hard_names=st.booleans(),
)
def test_random_models_round_trip_through_sdf(seed, n, floating, gravity, hard_names) -> None:
    model = bridge.random_model(n, seed, floating=floating, armature_probability=0.4)
    model = model.replace(gravity=gravity)
    if hard_names:
        model = _renamed(model, np.random.default_rng(seed))
    assert_same_model(model, sdf_round_trip(model))


def test_a_link_and_a_joint_of_one_name_write_valid_sdf_that_keeps_the_names() -> None:
    model = _renamed(bridge.random_model(6, 3, floating=False), np.random.default_rng(1))
    j = model.movable_joints[0]
    model = model.replace(
        joints=tuple(dataclasses.replace(x, name=x.child) if x is j else x for x in model.joints),
        dof_names=tuple(j.child if d == j.name else d for d in model.dof_names),
    )
    text = model.to_sdf()
    assert 'bridge:name="' in text and "xmlns:bridge=" in text
    assert_same_model(model, sdf_round_trip(model))
    pytest.importorskip("pydrake")
    from pydrake.multibody.parsing import Parser
    from pydrake.multibody.plant import MultibodyPlant

    plant = MultibodyPlant(0.0)
    Parser(plant).AddModels(file_contents=text, file_type="sdf")  # valid SDFormat for Drake too
    plant.Finalize()
    assert plant.num_velocities() == model.nv


def test_a_universal_joint_beside_a_joint_named_like_its_second_axis() -> None:
    text = """<sdf version="1.9"><model name="m">
      <link name="a"/><link name="b"/><link name="c"/>
      <joint name="u" type="universal"><parent>a</parent><child>b</child>
        <axis><xyz>1 0 0</xyz></axis><axis2><xyz>0 1 0</xyz></axis2></joint>
      <joint name="u__axis2" type="revolute"><parent>b</parent><child>c</child></joint>
    </model></sdf>"""
    model = bridge.load_sdf(text)
    assert "u__axis2" in model.dof_names and len(model.dof_names) == 3
    assert_same_model(model, sdf_round_trip(model))


# ------------------------------------------------------------------ files
def _files() -> list[str]:
    found = sorted(glob.glob(str(SITE / "dm_control" / "suite" / "*.xml")))
    found += sorted(glob.glob(str(SITE / "mujoco" / "**" / "*.xml"), recursive=True))[:40]
    found += sorted(glob.glob(str(SITE / "pydrake" / "**" / "*.sdf"), recursive=True))
    found += sorted(
        str(p) for p in MODELS.rglob("*") if p.suffix in (".xml", ".sdf", ".urdf") and "bad" not in p.parts
    )
    return found


def _load(path: str) -> bridge.Model | None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return bridge.load_model(path)
        except (bridge.BridgeError, RecursionError):  # what bridge refuses (ball joints, ...) stays out
            return None


@pytest.mark.parametrize("path", _files(), ids=lambda p: os.path.relpath(p, SITE) if str(SITE) in p else p)
def test_files_round_trip_through_sdf(path: str) -> None:
    model = _load(path)
    if model is None:
        pytest.skip("bridge refuses the file (its tests say why)")
    assert_same_model(model, sdf_round_trip(model))


@pytest.mark.parametrize("name", ["iCubGazeboV2_5", "panda", "solo12", "ur5", "talos"])
def test_shipped_robots_round_trip_through_sdf(name: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = bridge.load_urdf(robot_path(name))
    for m in (model, model.with_fixed_base(), model.replace(gravity=(0.0, 0.0, -1.62))):
        assert_same_model(m, sdf_round_trip(m))


@pytest.mark.parametrize(
    "path",
    [
        SITE / "dm_control" / "suite" / "cartpole.xml",
        SITE / "dm_control" / "suite" / "finger.xml",
        MODELS / "mjcf" / "arm.xml",
        "cart_pole",
    ],
    ids=str,
)
def test_drake_parses_the_written_sdf_as_bridge_reads_it(path, tmp_path: Path) -> None:
    """Drake's own parse of ``to_sdf``'s file against ``load_sdf``'s model: only explained findings
    (Drake's world gravity left out, its actuators' reflected inertia = the armature)."""
    pytest.importorskip("pydrake")
    from bridge.validation.native import compare_native

    if path == "cart_pole":
        path = next(iter(glob.glob(str(SITE / "pydrake" / "**" / "cart_pole.sdf"), recursive=True)))
    model = _load(str(path))
    out = tmp_path / "written.sdf"
    out.write_text(model.to_sdf())
    report = compare_native(out, libraries=["drake"], samples=2)
    causes = {f.cause for f in report.findings}
    assert not any("unexplained" in c or "refuses" in c for c in causes), report.findings
    if model.gravity is not None and not np.array_equal(model.gravity, DEFAULT_GRAVITY):
        assert "drake_world_gravity" in causes


# ------------------------------------------------------------------ MJCF and URDF keep what they hold
@SAMPLES
@given(seed=st.integers(0, 10_000), gravity=st.sampled_from([(0.0, 0.0, 0.0), (1.0, 0.0, -3.0)]))
def test_mjcf_keeps_gravity_and_armature(seed: int, gravity, tmp_path_factory) -> None:
    pytest.importorskip("mujoco")
    model = bridge.random_model(5, seed, massless_probability=0.0, armature_probability=0.5)
    model = model.replace(gravity=gravity)
    path = tmp_path_factory.mktemp("mjcf") / "m.xml"
    path.write_text(bridge.to_mjcf(model))
    back = bridge.load_mjcf(path)
    assert np.array_equal(back.gravity, gravity)
    assert set(back.dof_names) == set(model.dof_names)  # (in MuJoCo's depth-first order)
    for d in model.dof_names:
        assert back.joint(d).armature == model.joint(d).armature
    back = back.with_dofs(model.dof_names)  # the same dynamics, frames and gravity
    state = random_states(model, 2, np.random.default_rng(seed))
    kd, kb = bridge.KinDyn(model, "pinocchio"), bridge.KinDyn(back, "pinocchio")
    kd.set_robot_state(state)
    kb.set_robot_state(state)
    for name in ("mass_matrix", "bias_forces", "gravity_forces"):
        _close(getattr(kb, name)(), getattr(kd, name)(), name)
    for frame in model.frame_names:
        _close(kb.frame_transform(frame), kd.frame_transform(frame), frame)


def test_urdf_cannot_hold_gravity_or_armature_and_says_so() -> None:
    model = bridge.random_model(5, 2, armature_probability=1.0).replace(gravity=(0.0, 0.0, -3.0))
    with pytest.warns(bridge.BridgeWarning, match="URDF has no gravity"):
        text = model.to_urdf()
    back = bridge.load_urdf(text)
    assert back.gravity is None and not back.has_armature
    for link in model.links:
        _close(link.inertia.parameters, back.link(link.name).inertia.parameters, link.name)
    state = random_states(model, 2, np.random.default_rng(1))
    kd, kb = bridge.KinDyn(model, "pinocchio"), bridge.KinDyn(back.with_dofs(model.dof_names), "pinocchio")
    kd.set_robot_state(state, gravity=(0.0, 0.0, -9.81))
    kb.set_robot_state(state)  # the reloaded model's default: URDF has no gravity
    armature = np.diag(np.r_[np.zeros(6), model.armature])
    _close(kb.mass_matrix() + armature, kd.mass_matrix(), "M without the armature URDF cannot hold")
    _close(kb.bias_forces(), kd.bias_forces(), "h")


# ------------------------------------------------------------------ the file's gravity is the default
GRAVITY_MJCF = """<mujoco model="g">
  <option gravity="0.5 0 -3"/>
  <worldbody>
    <body name="a" pos="0 0 1"><joint name="j1" type="hinge" axis="0 1 0"/>
      <geom type="capsule" size="0.05" fromto="0 0 0 0.3 0 0" mass="1"/>
      <body name="b" pos="0.3 0 0"><joint name="j2" type="hinge" axis="1 0 0"/>
        <geom type="sphere" size="0.05" pos="0.2 0.1 0" mass="0.5"/></body></body>
  </worldbody>
</mujoco>"""


def test_mjcf_option_gravity_is_the_default_of_every_engine_as_mujoco_computes(tmp_path: Path) -> None:
    mujoco = pytest.importorskip("mujoco")
    path = tmp_path / "g.xml"
    path.write_text(GRAVITY_MJCF)
    model = bridge.load_mjcf(path)
    assert model.gravity.tolist() == [0.5, 0.0, -3.0]
    m = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(m)
    rng = np.random.default_rng(0)
    d.qpos[:] = s = rng.normal(size=2)
    d.qvel[:] = sd = rng.normal(size=2)
    mujoco.mj_forward(m, d)
    state = bridge.State(np.eye(4), s, np.zeros(6), sd)
    for engine in float64_engines():
        kd = bridge.KinDyn(model, engine)
        kd.set_state(np.eye(4), s, np.zeros(6), sd)
        _close(kd.bias_forces(), d.qfrc_bias, f"{engine} h")
        _close(bridge.bias_forces(model, state, engine=engine), d.qfrc_bias, f"stateless {engine} h")
        kd.set_state(np.eye(4), s, np.zeros(6), sd, gravity=(0.0, 0.0, -9.81))  # an explicit one overrides
        m.opt.gravity[:] = (0.0, 0.0, -9.81)
        mujoco.mj_forward(m, d)
        _close(kd.bias_forces(), d.qfrc_bias, f"{engine} h, gravity given")
        m.opt.gravity[:] = (0.5, 0.0, -3.0)
        mujoco.mj_forward(m, d)
    report = bridge.cross_validate(model, samples=2)
    assert report.ok, report
    assert bridge.from_mujoco(m).gravity.tolist() == [0.5, 0.0, -3.0]
    m.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_GRAVITY)
    assert bridge.from_mujoco(m).gravity.tolist() == [0.0, 0.0, 0.0]


def test_mjcf_round_trip_writes_the_model_gravity(tmp_path: Path) -> None:
    pytest.importorskip("mujoco")
    path = tmp_path / "g.xml"
    path.write_text(GRAVITY_MJCF)
    model = bridge.load_mjcf(path)
    assert '<option gravity="0.5 0.0 -3.0"/>' in bridge.to_mjcf(model)
    assert '<option gravity="0.0 0.0 -1.0"/>' in bridge.to_mjcf(model, gravity=(0, 0, -1))
    assert np.array_equal(bridge.to_mujoco(model).opt.gravity, [0.5, 0.0, -3.0])


SDF_WORLD = """<sdf version="1.9"><world name="w"><gravity>0 0.25 -3</gravity>
  <model name="m"><link name="a"><inertial><mass>2</mass></inertial></link>
    <link name="b"><pose>0.3 0 0 0 0 0</pose><inertial><pose>0.1 0 0.2 0 0 0</pose><mass>1</mass>
      <inertia><ixx>0.1</ixx><iyy>0.2</iyy><izz>0.3</izz></inertia></inertial></link>
    <joint name="w" type="fixed"><parent>world</parent><child>a</child></joint>
    <joint name="j" type="revolute"><parent>a</parent><child>b</child><axis><xyz>0 1 0</xyz></axis></joint>
  </model></world></sdf>"""


def test_sdf_world_gravity_is_the_default_as_drake_computes_it() -> None:
    pytest.importorskip("pydrake")
    model = bridge.load_sdf(SDF_WORLD)
    assert model.gravity.tolist() == [0.0, 0.25, -3.0]
    plant = bridge.to_drake(model)  # the model's gravity is the plant's
    assert np.array_equal(plant.gravity_field().gravity_vector(), [0.0, 0.25, -3.0])
    assert np.array_equal(bridge.from_drake(plant).gravity, [0.0, 0.25, -3.0])
    context = plant.CreateDefaultContext()
    s = np.array([0.7])
    plant.SetPositions(context, s)
    g_drake = -plant.CalcGravityGeneralizedForces(context)
    for engine in ("drake", "pinocchio"):
        kd = bridge.KinDyn(model, engine)
        kd.set_state(np.eye(4), s, np.zeros(6), np.zeros(1))
        _close(kd.gravity_forces(), g_drake, engine)


def test_model_gravity_is_validated() -> None:
    model = bridge.random_model(3, 0)
    for bad in ([0, 0, np.nan], [True, False, True], "down", [1.0, 2.0], [1j, 0, 0]):
        with pytest.raises(bridge.ModelError, match="gravity"):
            model.replace(gravity=bad)
    g = model.replace(gravity=[0, 0, -1]).gravity
    assert g.dtype == np.float64 and not g.flags.writeable


# ------------------------------------------------------------------ silently wrong numbers
def test_load_sdf_reads_armature_back() -> None:
    model = bridge.random_model(6, 4, armature_probability=1.0)
    assert model.has_armature
    assert np.array_equal(sdf_round_trip(model).armature, model.armature)
    text = """<sdf version="1.9" xmlns:drake="http://drake.mit.edu"><model name="m">
      <link name="a"/><link name="b"/><joint name="j" type="revolute"><parent>a</parent><child>b</child>
      <drake:rotor_inertia>0.5</drake:rotor_inertia><drake:gear_ratio>3</drake:gear_ratio></joint>
      </model></sdf>"""
    assert bridge.load_sdf(text).joint("j").armature == 4.5  # Drake's rotor_inertia * gear_ratio**2


@pytest.mark.parametrize("flag", ["true", "True", "1", " TRUE "])
def test_sdf_pose_in_degrees(flag: str) -> None:
    text = f"""<sdf version="1.9"><model name="m"><link name="a"/><link name="b">
      <pose degrees="{flag}">0 0 0 0 0 90</pose></link>
      <joint name="j" type="fixed"><parent>a</parent><child>b</child></joint></model></sdf>"""
    R = bridge.load_sdf(text).joint("j").parent_H_child.rotation
    _close(R, [[0, -1, 0], [1, 0, 0], [0, 0, 1]], "90 degrees about z")


@pytest.mark.parametrize("flag", ["yes", "no", "on", "deg", ""])
def test_sdf_flags_that_are_not_booleans_are_refused(flag: str) -> None:
    """libsdformat (and Drake) refuse ``degrees="yes"``: no silent radians."""
    text = f"""<sdf version="1.9"><model name="m"><link name="a"><pose degrees="{flag}">0 0 0 0 0 90</pose>
      </link></model></sdf>"""
    with pytest.raises(bridge.SDFError, match="degrees"):
        bridge.load_sdf(text)
    static = f"""<sdf version="1.9"><model name="m"><static>{flag}</static><link name="a"/></model></sdf>"""
    with pytest.raises(bridge.SDFError, match="static"):
        bridge.load_sdf(static)


def test_writers_refuse_wrong_types_and_non_finite_numbers() -> None:
    pytest.importorskip("mujoco")
    model = bridge.random_model(4, 1, massless_probability=0.0)
    for kwargs in (
        {"bound_mass": True},
        {"bound_inertia": False},
        {"bound_mass": "1"},
        {"bound_mass": 1j},
        {"bound_mass": np.nan},
        {"gravity": (0.0, 0.0, np.nan)},
        {"gravity": (0.0, np.inf, 0.0)},
        {"gravity": (1j, 0.0, 0.0)},
    ):
        with pytest.raises(bridge.InvalidValueError):
            bridge.to_mjcf(model, **kwargs)
        with pytest.raises(bridge.InvalidValueError):
            bridge.to_mujoco(model, **kwargs)
    j = model.movable_joints[0]
    for bad in (np.nan, np.inf, True):
        limits = dataclasses.replace(j.limits, effort=bad)
        broken = model.replace(
            joints=tuple(dataclasses.replace(x, limits=limits) if x is j else x for x in model.joints)
        )
        for write in (broken.to_sdf, broken.to_urdf, lambda m=broken: bridge.to_mjcf(m)):
            with pytest.raises(bridge.InvalidValueError, match=repr(j.name)):
                write()
