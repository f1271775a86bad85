"""Coupled mimic joints as Pinocchio's own JointModelMimic: ``to_pinocchio(coupled_model)``, the
Pinocchio engine running on it, checked against Pinocchio's ``buildModelFromUrdf(..., mimic=True)``
and against the other engines (which project the full model) to 1e-10; what the other
conversions do with a coupled model."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

import bridge
from bridge.backends.coupled import CoupledEngine
from bridge.backends.pinocchio.coupled import PinocchioMimicEngine
from bridge.backends.pinocchio.mimic import mimic_problem, pinocchio_joint_order
from bridge.backends.pinocchio.native import dynamics, load_urdf_model, native_layout, native_state
from bridge.cli.info import describe
from bridge.model.mimic import CoupledModel
from bridge.validation.check import random_states

MODELS = Path(__file__).resolve().parents[2] / "models"
OFFSETS = str(MODELS / "mimic_offsets.urdf")
#: robots whose mimic joints Pinocchio's own loader takes (mimic=True)
ACCEPTED = [OFFSETS, "panda", "pr2", "tiago_pro"]
REPS = ("body", "inertial", "mixed")


def _load(name: str) -> CoupledModel:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bridge.NonPhysicalInertiaWarning)
        return bridge.load_urdf(name, mimic="coupled")


def _rel(a: object, b: object) -> float:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.max(np.abs(a - b)) / max(1.0, np.max(np.abs(b))))


# ---------------------------------------------------------------------------------- the model
@pytest.mark.parametrize("name", [*ACCEPTED, "talos_full_v2"])
def test_to_pinocchio_builds_native_mimic_joints(name: str) -> None:
    model = _load(name)
    pm = bridge.to_pinocchio(model)
    n_cont = sum(model.joint(d).kind.value == "continuous" for d in model.dof_names)
    assert pm.nv == model.nv and pm.nq == model.nv + 1 + n_cont  # quaternion base, (cos, sin)
    mimicking = {pm.names[j] for j in pm.mimicking_joints}
    assert mimicking == {m.joint for m in model.mimics}
    for m in model.mimics:
        jid = pm.getJointId(m.joint)
        assert pm.joints[jid].shortname() == "JointModelMimic"
        joint = pm.joints[jid].extract()
        assert joint.scaling == pytest.approx(m.multiplier) and joint.offset == pytest.approx(m.offset)
        master = pm.joints[pm.getJointId(m.master)]
        assert pm.getJointId(m.master) < jid  # Pinocchio's numbering: the master first
        assert (joint.idx_q, joint.idx_v) == (master.idx_q, master.idx_v)  # the master's coordinates
    # the layout bridge uses for states is Pinocchio's
    layout = bridge.backends.pinocchio.pinocchio_layout(model)
    for k, name_k in enumerate(model.dof_names):
        joint = pm.joints[pm.getJointId(name_k)]
        assert (layout.idx_q[k], layout.idx_v[k]) == (joint.idx_q, joint.idx_v)


@pytest.mark.parametrize("name", ACCEPTED)
def test_native_model_equals_pinocchios_own_mimic_model(name: str) -> None:
    """M, h, g, ID, FD and every link's Jacobian of to_pinocchio(coupled) equal those of
    buildModelFromUrdf(..., mimic=True), mapped by joint names, at random states."""
    model = _load(name)
    mine = bridge.to_pinocchio(model)
    own = load_urdf_model(str(bridge.robots.resolve_model_path(name)), mimic=True)
    lay_mine, lay_own = native_layout(mine), native_layout(own)
    assert set(lay_mine.dof_names) == set(lay_own.dof_names) == set(model.dof_names)
    # own v[k] = mine v[perm[k]]
    where = {n: i for n, i in zip(lay_mine.dof_names, lay_mine.idx_v, strict=True)}
    perm = np.arange(own.nv)
    for n, i in zip(lay_own.dof_names, lay_own.idx_v, strict=True):
        perm[i] = where[n]
    rng = np.random.default_rng(11)
    states = random_states(model, 3, rng).to("body")
    links = [f.name for f in own.frames if f.type == pin.FrameType.BODY and mine.existFrame(f.name)]
    assert len(links) >= 3
    for k in range(3):
        H = states.world_H_base.matrix[k]
        pos = dict(zip(model.dof_names, states.s[k], strict=True))
        vel = dict(zip(model.dof_names, states.s_dot[k], strict=True))
        q_m, v_m = native_state(mine, lay_mine, H, states.base_velocity[k], pos, vel)
        q_o, v_o = native_state(own, lay_own, H, states.base_velocity[k], pos, vel)
        np.testing.assert_array_equal(v_m[perm], v_o)
        a_o, tau_o = rng.normal(size=own.nv), rng.normal(size=own.nv)
        a_m, tau_m = np.empty(own.nv), np.empty(own.nv)
        a_m[perm], tau_m[perm] = a_o, tau_o
        ref = dynamics(own, q_o, v_o, a=a_o, tau=tau_o)
        got = dynamics(mine, q_m, v_m, a=a_m, tau=tau_m)
        for quantity, value in got.items():
            value = value[np.ix_(perm, perm)] if quantity == "mass_matrix" else value[perm]
            assert _rel(value, ref[quantity]) < 1e-10, (name, quantity, _rel(value, ref[quantity]))
        d_m, d_o = mine.createData(), own.createData()
        for link in links:
            J_m = pin.computeFrameJacobian(mine, d_m, q_m, mine.getFrameId(link), pin.LOCAL)
            J_o = pin.computeFrameJacobian(own, d_o, q_o, own.getFrameId(link), pin.LOCAL)
            assert _rel(J_m.reshape(6, -1)[:, perm], J_o.reshape(6, -1)) < 1e-10, (name, link)


def test_pinocchio_loader_refuses_talos_and_bridge_orders_the_masters_first() -> None:
    """Pinocchio 4.1's loader refuses talos_full_v2 with mimic=True (a mimic joint comes before its
    master in its joint order); bridge visits the master's subtree first."""
    path = str(bridge.robots.resolve_model_path("talos_full_v2"))
    refusal = "The parent joint of the mimic joint is not in the kinematic tree"
    with pytest.raises(bridge.BackendError, match=refusal):
        load_urdf_model(path, mimic=True)
    model = _load("talos_full_v2")
    assert len(model.mimics) == 12 and mimic_problem(model) is None
    order = [j.name for j in pinocchio_joint_order(model)]
    assert sorted(order) == sorted(model.joint_names)
    for m in model.mimics:
        assert order.index(m.master) < order.index(m.joint)
    # Pinocchio's loader numbers the joints in its own depth-first order (mimic=False shows it), where
    # some mimic joints come before their master: that is what it trips on
    own = load_urdf_model(path, mimic=False)
    assert any(own.getJointId(m.master) > own.getJointId(m.joint) for m in model.mimics)


# ---------------------------------------------------------------------------------- the engine
def _quantities(kd: bridge.KinDyn, model: CoupledModel, rng: np.random.Generator) -> dict[str, np.ndarray]:
    nb = 6 if model.floating else 0
    frame, ref = model.link_names[-1], model.link_names[1]
    nu_dot = rng.normal(size=model.nv)
    tau = rng.normal(size=model.n_dofs)
    w = {frame: rng.normal(size=6)}
    base = nu_dot[:nb] if nb else None
    return {
        "M": kd.mass_matrix(),
        "h": kd.bias_forces(),
        "g": kd.gravity_forces(),
        "ID": kd.inverse_dynamics(base, nu_dot[nb:]),
        "ID_f": kd.inverse_dynamics(base, nu_dot[nb:], w),
        "FD": kd.forward_dynamics(tau),
        "FD_f": kd.forward_dynamics(tau, w),
        "J": kd.frame_jacobian(frame),
        "Jdot_nu": kd.frame_bias_acc(frame),
        "a": kd.frame_acceleration(frame, base, nu_dot[nb:]),
        "v": kd.frame_velocity(frame),
        "com": kd.com_position(),
        "J_com": kd.com_jacobian(),
        "h_G": kd.centroidal_momentum(),
        "A_G": kd.centroidal_momentum_matrix(),
        "C": kd.coriolis_matrix(),
        "J_rel": kd.relative_jacobian(frame, ref),
        "M_again": kd.mass_matrix(),  # Pinocchio's crba in LOCAL adds mimic terms again on a 2nd call
    }


@pytest.mark.parametrize("name", [OFFSETS, "panda"])
@pytest.mark.parametrize("floating", [True, False])
def test_native_engine_equals_projected_engines(name: str, floating: bool) -> None:
    """KinDyn(coupled, "pinocchio") runs on Pinocchio's mimic joints; every quantity equals the
    projected full model of Pinocchio, iDynTree and Featherstone, batched and single, to 1e-10."""
    model = _load(name)
    if not floating:
        model = model.with_fixed_base()
    states = random_states(model, 3, np.random.default_rng(3))
    for rep in REPS:
        st = states.to(rep)
        native = bridge.KinDyn(model, engine="pinocchio", representation=rep)
        assert isinstance(native._engine, PinocchioMimicEngine)
        for engine in ("featherstone", "idyntree"):
            other = bridge.KinDyn(model, engine=engine, representation=rep)
            assert isinstance(other._engine, CoupledEngine)
            for single in (False, True):
                for kd in (native, other):
                    if single:
                        kd.set_state(st.world_H_base.matrix[1], st.s[1], st.base_velocity[1], st.s_dot[1])
                    else:
                        kd.set_robot_state(st)
                a = _quantities(native, model, np.random.default_rng(7))
                b = _quantities(other, model, np.random.default_rng(7))
                for q in a:
                    err = _rel(a[q], b[q])
                    assert err < 1e-10, (name, floating, rep, engine, single, q, err)
    # the projection of the full model on Pinocchio itself, too
    kp = bridge.KinDyn(model, engine="pinocchio", representation="mixed")
    proj = CoupledEngine(type(kp._engine).__mro__[1], model, kp.representation)
    kp.set_robot_state(states)
    proj.set_state(states, np.array([0.0, 0.0, -9.81]))
    assert _rel(kp.mass_matrix(), proj.mass_matrix()) < 1e-10


def test_talos_engines_agree() -> None:
    """On Talos (refused by Pinocchio's own mimic loader) the native Pinocchio engine and the
    projected iDynTree and Featherstone engines agree on M, h, ID, FD and a Jacobian."""
    model = _load("talos_full_v2")
    st = random_states(model, 2, np.random.default_rng(5))
    rng = np.random.default_rng(6)
    nu_dot, tau = rng.normal(size=(2, model.nv)), rng.normal(size=(2, model.n_dofs))
    out = {}
    for engine in ("pinocchio", "idyntree", "featherstone"):
        kd = bridge.KinDyn(model, engine=engine, representation="mixed")
        kd.set_robot_state(st)
        out[engine] = {
            "M": kd.mass_matrix(),
            "h": kd.bias_forces(),
            "ID": kd.inverse_dynamics(nu_dot[:, :6], nu_dot[:, 6:]),
            "FD": kd.forward_dynamics(tau),
            "J": kd.frame_jacobian("gripper_left_fingertip_3_link"),
        }
    assert isinstance(bridge.KinDyn(model, engine="pinocchio")._engine, PinocchioMimicEngine)
    for engine in ("idyntree", "featherstone"):
        for q, value in out[engine].items():
            assert _rel(out["pinocchio"][q], value) < 1e-10, (engine, q)


def test_pinocchio_convention_lists_the_independent_dofs() -> None:
    model = _load(OFFSETS)
    st = random_states(model, 2, np.random.default_rng(8))
    q, v = bridge.to_pinocchio_state(model, st)
    pm = bridge.to_pinocchio(model)
    assert q.shape == (2, pm.nq) and v.shape == (2, pm.nv)
    T, _ = bridge.velocity_transform(model, st, "mixed", "pinocchio")
    assert T.shape == (2, model.nv, model.nv)
    nu = np.concatenate([st.base_velocity, st.s_dot], axis=-1)
    np.testing.assert_allclose(np.einsum("kij,kj->ki", T, nu), v, rtol=1e-12, atol=1e-12)
    back = bridge.from_pinocchio_state(model, q[0], v[0], "mixed")
    np.testing.assert_allclose(back.s, st.s[0], atol=1e-12)


# ---------------------------------------------------------------------------------- the rest
def test_other_conversions_of_a_coupled_model() -> None:
    model = _load(OFFSETS)
    st = random_states(model, 1, np.random.default_rng(9))
    # model converters of libraries without mimic joints convert the full model
    assert bridge.to_idyntree(model).getNrOfDOFs() == model.full.n_dofs
    assert bridge.to_featherstone(model).NB == bridge.to_featherstone(model.full).NB
    # their coordinates refuse a coupled state, saying what to do
    for target in ("featherstone", "mujoco", "drake"):
        if target == "drake":
            pytest.importorskip("pydrake")
        with pytest.raises(bridge.BridgeError, match=r"mimic joints coupled .*model\.full"):
            bridge.velocity_transform(model, st, "mixed", target)
    with pytest.raises(bridge.BridgeError, match=r"model\.full_positions"):
        bridge.convert_velocity(model, st, np.zeros(model.nv), "body", "featherstone")
    with pytest.raises(bridge.BridgeError, match="mimic joints coupled"):
        bridge.backends.featherstone.to_featherstone_state(model, st)
    # Pinocchio's mimic model does not come back as a plain model
    with pytest.raises(bridge.BackendError, match=r"mimic joint .*mimic='coupled'"):
        bridge.from_pinocchio(bridge.to_pinocchio(model))
    # bridge info shows the full model, with a note
    info = describe(model)
    assert any("mimic joints follow their masters" in n for n in info["notes"])


_INERTIAL = (
    '<inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial>'
)
_LIMIT = '<limit lower="-1" upper="1" effort="1" velocity="1"/>'
_CHAIN = (
    '<robot name="chain">'
    + "".join(f'<link name="{n}">{_INERTIAL}</link>' for n in "abc")
    + '<joint name="j1" type="{kind1}"><parent link="a"/><child link="b"/><axis xyz="0 0 1"/>'
    + "{limit1}{mimic1}</joint>"
    + '<joint name="j2" type="revolute"><origin xyz="0.1 0 0"/><parent link="b"/><child link="c"/>'
    + '<axis xyz="0 1 0"/>'
    + _LIMIT
    + "{mimic2}</joint></robot>"
)


@pytest.mark.parametrize(
    ("kind1", "limit1", "mimic1", "mimic2", "why"),
    [
        ("continuous", "", "", '<mimic joint="j1" multiplier="2"/>', "continuous"),
        ("revolute", _LIMIT, '<mimic joint="j2" multiplier="2"/>', "", "ancestor of its master"),
    ],
)
def test_mimic_joints_pinocchio_cannot_take(
    kind1: str, limit1: str, mimic1: str, mimic2: str, why: str
) -> None:
    """A continuous master, or a master below its mimic joint: to_pinocchio says why, and
    KinDyn(engine="pinocchio") projects the full model instead (agreeing with Featherstone)."""
    xml = _CHAIN.format(kind1=kind1, limit1=limit1, mimic1=mimic1, mimic2=mimic2)
    model = bridge.load_urdf(xml, mimic="coupled")
    assert why in mimic_problem(model)
    with pytest.raises(bridge.BackendError, match=f"{why}.*mimic='independent'"):
        bridge.to_pinocchio(model)
    st = random_states(model, 2, np.random.default_rng(1))
    M = {}
    for engine in ("pinocchio", "featherstone"):
        kd = bridge.KinDyn(model, engine=engine)
        assert isinstance(kd._engine, CoupledEngine)
        kd.set_robot_state(st)
        M[engine] = kd.mass_matrix()
    assert _rel(M["pinocchio"], M["featherstone"]) < 1e-10
