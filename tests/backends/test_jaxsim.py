"""The jaxsim backend: jaxsim's conventions measured on raw jaxsim calls, the "jaxsim" engine against
Pinocchio and bridge's Featherstone engine (1e-10 relative) on the small model, random trees, iCub
and example-robot-data robots, floating and fixed, in the three representations, and what jaxsim
cannot represent refused with a reason. Skipped only when jaxsim is not installed.

jaxsim compiles its functions per model, representation and batch size (seconds each, minutes on a
loaded machine): the default run keeps to the small model in MIXED; the other representations, the
fixed base, gravity and wrenches, iCub, the robots and the random trees are marked slow
(``--runslow``).
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("jaxsim", reason="jaxsim is not installed (pip install 'bridge-dynamics[jaxsim]')")

import bridge
from bridge.backends import registry
from bridge.backends.jaxsim import JAXSIM_CONVENTIONS, jaxsim_joint_names, to_jaxsim_state
from bridge.backends.jaxsim.model import to_jaxsim, unsupported
from bridge.backends.jaxsim.state import from_jaxsim_state
from bridge.conventions.state import Representation
from bridge.robots import robot_path
from bridge.validation.check import available_engines, cross_validate
from tests.helpers import assert_close, random_state, renamed, small_model

ENGINES = ("pinocchio", "featherstone", "jaxsim")
REPS = ("body", "inertial", "mixed")


def _ok(report) -> None:
    assert report.results, "cross-validation compared nothing"
    assert "jaxsim" in report.engines
    assert report.ok, "\n" + str(report)


def _data(model: bridge.Model, st: bridge.State):
    """jaxsim's own data at ``st`` (built from jaxsim's (q, v) of the state's representation)."""
    import jaxsim.api as js
    from jaxsim import VelRepr

    q, v = to_jaxsim_state(model, st, st.representation)
    name = {"body": "Body", "inertial": "Inertial", "mixed": "Mixed"}[st.representation.value]
    return js.data.JaxSimModelData.build(
        model=to_jaxsim(model),
        base_position=q[:3],
        base_quaternion=q[3:7],
        joint_positions=q[7:],
        base_linear_velocity=v[:3],
        base_angular_velocity=v[3:6],
        joint_velocities=v[6:],
        velocity_representation=getattr(VelRepr, name),
    )


@pytest.fixture(scope="module")
def small():
    return small_model(np.random.default_rng(0))


# ------------------------------------------------------------------ jaxsim's conventions, measured
def test_joint_order_is_jaxsims(small) -> None:
    """jaxsim's joints: breadth first from the base, children by name (not the DOF order)."""
    js_model = to_jaxsim(small)
    assert tuple(js_model.joint_names()) == jaxsim_joint_names(small)
    assert jaxsim_joint_names(small) != small.dof_names


def test_q_is_position_then_quaternion_wxyz(small) -> None:
    st = random_state(small, np.random.default_rng(1), "mixed")
    d = _data(small, st)
    np.testing.assert_allclose(np.asarray(d.base_position), st.world_H_base.translation, atol=1e-15)
    np.testing.assert_allclose(
        np.asarray(d.base_quaternion), st.world_H_base.as_quaternion_wxyz(), atol=1e-15
    )
    np.testing.assert_allclose(np.asarray(d.base_transform), st.world_H_base.matrix, atol=1e-14)
    perm = JAXSIM_CONVENTIONS[Representation.MIXED].permutation(small)
    np.testing.assert_array_equal(np.asarray(d.joint_positions), st.s[perm])


@pytest.mark.parametrize("rep", REPS)
def test_base_velocity_is_the_representation_linear_first(small, rep: str) -> None:
    """jaxsim's base velocity in VelRepr.X is bridge's representation X, linear first."""
    st = random_state(small, np.random.default_rng(2), rep)
    d = _data(small, st)
    np.testing.assert_allclose(np.asarray(d.base_velocity), st.base_velocity, atol=1e-14)
    mixed = st.to("mixed")
    with d.switch_velocity_representation(__import__("jaxsim").VelRepr.Mixed):
        np.testing.assert_allclose(np.asarray(d.base_velocity), mixed.base_velocity, atol=1e-12)


@pytest.mark.parametrize("rep", REPS)
def test_state_round_trip(small, rep: str) -> None:
    st = random_state(small, np.random.default_rng(3), rep, batch=(2,))
    q, v = to_jaxsim_state(small, st, rep)
    back = from_jaxsim_state(small, q, v, rep, native=rep)
    assert_close(back.world_H_base.matrix, st.world_H_base.matrix, 1e-14)
    assert_close(back.s, st.s, 1e-15)
    assert_close(back.base_velocity, st.base_velocity, 1e-14)  # through the rotation of the pose
    assert_close(back.s_dot, st.s_dot, 1e-15)


# ------------------------------------------------------------------ the engine
SLOW = pytest.mark.slow


@pytest.mark.parametrize(
    ("floating", "rep"),
    [
        (True, "mixed"),
        pytest.param(True, "body", marks=SLOW),
        pytest.param(True, "inertial", marks=SLOW),
        pytest.param(False, "mixed", marks=SLOW),
        pytest.param(False, "body", marks=SLOW),
        pytest.param(False, "inertial", marks=SLOW),
    ],
)
def test_engine_small_model(floating: bool, rep: str) -> None:
    """Every quantity against Pinocchio and Featherstone (1e-10): axis origins, a fixed joint, a
    frame (the default run: floating, MIXED, without the engine-independent identities)."""
    model = small_model(np.random.default_rng(0), floating)
    slow = not (floating and rep == "mixed")
    report = cross_validate(
        model, engines=ENGINES, samples=2, seed=1, representations=(rep,), identities=slow
    )
    _ok(report)


@pytest.mark.slow
def test_engine_random_gravity_batches_and_wrenches() -> None:
    """Another gravity per sample (jaxsim's is fixed in its model), a batch of states, external
    wrenches on a link and on a frame, in the three representations."""
    rng = np.random.default_rng(4)
    model = small_model(rng)
    for rep in REPS:
        st = random_state(model, rng, rep, batch=(3,))
        g = rng.normal(size=(3, 3)) * 5
        nu_dot = rng.normal(size=(3, model.nv))
        f = {"tool": rng.normal(size=(3, 6)), model.base: rng.normal(size=(3, 6))}
        out = []
        for engine in ("jaxsim", "pinocchio"):
            kd = bridge.KinDyn(model, engine, rep)
            kd.set_robot_state(st, g)
            tau = kd.inverse_dynamics(nu_dot[:, :6], nu_dot[:, 6:], f)
            fd = kd.forward_dynamics(tau, f)
            out.append((kd.mass_matrix(), kd.bias_forces(), kd.gravity_forces(), tau, fd))
        for a, b in zip(*out, strict=True):
            assert_close(a, b, 1e-10, rep)
        assert_close(out[0][4], nu_dot, 1e-9, rep)


@pytest.mark.slow
def test_engine_icub() -> None:
    """iCub (icub-models), floating and fixed: a real robot with fixed joints and frames."""
    model = bridge.load_urdf(robot_path("iCubGazeboV2_5"))
    assert unsupported(model) is None
    frames = [f for f in (model.base, "l_sole", "r_hand", "head") if f in model.frame_names]
    for m in (model, model.with_fixed_base()):
        _ok(cross_validate(m, engines=ENGINES, samples=2, frames=frames))


ROBOTS = ("panda", "solo12", "anymal", "talos")


@pytest.mark.slow
@pytest.mark.parametrize("name", ROBOTS)
@pytest.mark.parametrize("floating", [True, False])
def test_engine_robots(name: str, floating: bool) -> None:
    """example-robot-data robots jaxsim accepts (a URDF whose root link is 'world' is not one)."""
    model = bridge.load_urdf(robot_path(name))
    model = model if floating else model.with_fixed_base()
    reason = unsupported(model)
    if reason is not None:
        pytest.skip(reason)
    _ok(cross_validate(model, engines=ENGINES, samples=2, representations=("mixed",)))


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(6))
def test_engine_random_models(seed: int) -> None:
    model = bridge.random_model(10, seed, floating=seed % 2 == 0, massless_probability=0.0)
    if seed >= 3:
        model = model.with_base(model.links[-1].name)  # re-rooted: axis origins everywhere
    _ok(cross_validate(model, engines=ENGINES, samples=2))


def test_joints_named_like_links_and_frames() -> None:
    """URDF keeps link and joint names apart, jaxsim (and SDFormat) do not: jaxsim gets the unique SDF
    names of to_sdf, and the engine agrees with Pinocchio under the model's own names."""
    model = small_model(np.random.default_rng(0), True)
    joints = {"j1": "b", "j2": "a", "j3": "tool", "jf": "e", "j4": "j4"}  # child, base, frame, fixed, none
    model = renamed(model, {n: n for n in model.link_names}, joints, {"tool": "tool"})
    assert set(model.joint_names) & set(model.frame_names) == {"a", "b", "e", "tool"}
    assert set(jaxsim_joint_names(model)) == set(model.dof_names)
    js = to_jaxsim(model)
    assert set(js.joint_names()).isdisjoint(js.link_names())
    report = cross_validate(
        model, engines=ENGINES, samples=2, seed=4, representations=("mixed",), identities=False
    )
    _ok(report)


# ------------------------------------------------------------------ what jaxsim cannot represent
def test_unsupported_models_are_left_out_with_a_reason() -> None:
    model = bridge.random_model(8, 2, massless_probability=0.0, armature_probability=1.0)
    with pytest.raises(bridge.UnsupportedError, match="armature"):
        bridge.KinDyn(model, "jaxsim")
    massless = bridge.random_model(12, 5, massless_probability=0.6, allow_singular=False)
    reason = unsupported(massless)
    if reason is not None:
        assert "massless" in reason
        with pytest.raises(bridge.UnsupportedError, match="massless"):
            bridge.KinDyn(massless, "jaxsim")


def test_jaxsim_is_compared_on_request() -> None:
    assert "jaxsim" in registry.available_engines() and "jaxsim" not in available_engines()
    report = cross_validate(small_model(np.random.default_rng(9)), samples=1, representations=("mixed",))
    assert "jaxsim" not in report.engines
    assert any("'jaxsim' compared on request" in n for n in report.notes)


def test_import_bridge_does_not_import_jax() -> None:
    code = (
        "import sys, bridge; from bridge.conventions.convert import convention; convention('jaxsim'); "
        "print('jax' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# ------------------------------------------------------------------ fixed bases welded to the world
FIXED_MJCF = """<mujoco model="named like links">
  <option gravity="0 0 -3"/>
  <worldbody>
    <site name="on_world" pos="0 0 0.1"/>
    <body name="upper" pos="0 0 1"><joint name="upper" type="hinge" axis="0 1 0"/>
      <geom type="capsule" size="0.05" fromto="0 0 0 0.3 0 0" mass="1"/>
      <body name="lower" pos="0.3 0 0"><joint name="lower" type="hinge" axis="1 0 0"/>
        <geom type="sphere" size="0.05" pos="0.2 0.1 0" mass="0.5"/></body></body>
    <body name="side" pos="0.5 0 0"><joint name="slide" type="slide" axis="1 0 0"/>
      <geom type="box" size="0.1 0.1 0.1" mass="2"/></body>
  </worldbody>
</mujoco>"""


def test_fixed_base_mjcf_with_a_massless_world_and_joints_named_like_bodies(tmp_path) -> None:
    """The world body of a fixed-base MJCF file is a massless base welded to the world: jaxsim takes
    it (the SDF bridge writes: the world as a link welded to SDFormat's world, joints and bodies of
    one name under unique SDF names) and agrees with Pinocchio, in the file's gravity."""
    pytest.importorskip("mujoco")
    path = tmp_path / "fixed.xml"
    path.write_text(FIXED_MJCF)
    model = bridge.load_mjcf(path)
    assert model.base == "world" and not model.floating and model.link("world").mass == 0.0
    assert unsupported(model) is None
    state = random_state(model, np.random.default_rng(4))
    for rep in ("mixed",):
        kd, ref = bridge.KinDyn(model, "jaxsim", rep), bridge.KinDyn(model, "pinocchio", rep)
        for k in (kd, ref):
            k.set_robot_state(state.to(rep))
        for name in ("mass_matrix", "bias_forces", "gravity_forces"):
            assert_close(getattr(kd, name)(), getattr(ref, name)(), 1e-10, name)
        for frame in ("on_world", "lower", "side"):
            assert_close(kd.frame_jacobian(frame), ref.frame_jacobian(frame), 1e-10, frame)
        assert_close(kd.com_position(), ref.com_position(), 1e-10, "com")
