"""What users compare: Pinocchio's and iDynTree's *own* URDF loaders on the same file.

Pinocchio's ``buildModelFromUrdf`` (free flyer, its DOF order, LOCAL base velocity, quaternion and
cos/sin configuration) and iDynTree's ``ModelLoader`` + ``KinDynComputations`` (its DOF order, any
representation) are given the same physical state through bridge's state conversion; Pinocchio's
``crba`` / ``nonLinearEffects`` / ``computeGeneralizedGravity`` converted by bridge's converters must
equal iDynTree's native results to 1e-10 (norm-wise relative). No bridge-built foreign model is
involved: only the libraries' own models and bridge's conversion of states and quantities.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

import bridge
from bridge.backends.idyntree import bias_forces, gravity_forces, mass_matrix, set_idyntree_state
from bridge.backends.pinocchio import from_pinocchio
from bridge.robots import robot_names, robot_path
from tests.helpers import assert_close, random_state

REPS = ("body", "inertial", "mixed")
DEFAULT = ["iCubGazeboV2_5", "talos_reduced", "panda", "solo12", "anymal_c_simple_description/anymal"]


def _idyntree_loader(path: str):
    import idyntree.bindings as idyn

    loader = idyn.ModelLoader()
    if not loader.loadModelFromFile(path):
        raise AssertionError(f"iDynTree cannot load {path}")
    return loader.model().copy()


def _idyntree_dofs(im) -> list[str]:
    return [im.getJointName(j) for j in range(im.getNrOfJoints()) if im.getJoint(j).getNrOfDOFs() == 1]


def _skew(r: np.ndarray) -> np.ndarray:
    return np.array([[0.0, -r[2], r[1]], [r[2], 0.0, -r[0]], [-r[1], r[0], 0.0]])


def _drop_massless_link_inertias(pm, path: str, im) -> None:
    """iDynTree's loader turns massless links hanging on fixed joints into frames and drops the
    rotational inertia they may carry (bolt's feet: mass 0, I != 0); Pinocchio keeps it, merged into
    the parent body. Remove it from Pinocchio's model too, so that both describe the same robot."""
    model = bridge.load_urdf(path, mimic="independent", check_inertia=False)
    for link in model.links:
        if im.getLinkIndex(link.name) >= 0 or not np.any(link.inertia.inertia_com):
            continue
        assert link.mass == 0.0, f"iDynTree dropped link {link.name!r} of mass {link.mass}"
        frame = pm.frames[pm.getFrameId(link.name, pin.FrameType.BODY)]
        inertia = pin.Inertia(0.0, np.asarray(link.inertia.com), np.asarray(link.inertia.inertia_com))
        pm.inertias[frame.parentJoint] = pm.inertias[frame.parentJoint] - frame.placement.act(inertia)


def _base_change(pm, base: str, link: str, st, rep: str):
    """iDynTree's floating base must be a link: when its loader made Pinocchio's root link ``base``
    a frame of ``link``, move the state and the quantities to ``link`` (rigidly attached to ``base``).

    Returns (world_H_link, link velocity, T, T_dot nu) with nu_link = T nu_base, T = diag(A, I).
    """
    pd = pm.createData()
    q0 = pin.neutral(pm)
    pin.framesForwardKinematics(pm, pd, q0)
    B_H_L = (
        pd.oMf[pm.getFrameId(base)].inverse() * pd.oMf[pm.getFrameId(link, pin.FrameType.BODY)]
    ).homogeneous
    world_H_B = st.world_H_base.matrix
    world_H_L = world_H_B @ B_H_L
    v, w = st.base_velocity[:3], st.base_velocity[3:]
    n = st.s.shape[-1]
    A = np.eye(6)
    Adot_nu = np.zeros(6)
    if rep == "body":  # L_X_B, constant
        R, p = B_H_L[:3, :3].T, -B_H_L[:3, :3].T @ B_H_L[:3, 3]
        A[:3, :3], A[:3, 3:], A[3:, 3:] = R, _skew(p) @ R, R
    elif rep == "mixed":  # [pdot_L; w] = [pdot_B + w x r; w], r = p_L - p_B in world
        r = world_H_B[:3, :3] @ B_H_L[:3, 3]
        A[:3, 3:] = -_skew(r)
        Adot_nu[:3] = np.cross(w, np.cross(w, r))
    T = np.eye(6 + n)
    T[:6, :6] = A
    T_dot_nu = np.concatenate([Adot_nu, np.zeros(n)])
    return world_H_L, A @ np.concatenate([v, w]), T, T_dot_nu


def compare_native(name: str, samples: int = 2, seed: int = 0) -> None:
    import idyntree.bindings as idyn

    path = str(robot_path(name))
    pm = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer())
    im = _idyntree_loader(path)
    _drop_massless_link_inertias(pm, path, im)
    pd = pm.createData()
    model = from_pinocchio(pm)  # the neutral view of Pinocchio's model, in Pinocchio's DOF order
    theirs = _idyntree_dofs(im)
    assert sorted(theirs) == sorted(model.dof_names), "the loaders see different DOFs"
    base = model.base
    if im.getLinkIndex(base) < 0:  # iDynTree made the root link a frame: use the link it sits on
        base = im.getLinkName(im.getFrameLink(im.getFrameIndex(model.base)))
    perm = np.array([model.dof_index(d) for d in theirs], dtype=int)
    full = np.concatenate([np.arange(6), 6 + perm])
    rng = np.random.default_rng(seed)
    gravity = np.array([0.0, 0.0, -9.81])
    for rep in REPS:
        kd = idyn.KinDynComputations()
        assert kd.loadRobotModel(im)
        assert kd.setFloatingBase(base)
        assert kd.setFrameVelocityRepresentation(
            {
                "body": idyn.BODY_FIXED_REPRESENTATION,
                "inertial": idyn.INERTIAL_FIXED_REPRESENTATION,
                "mixed": idyn.MIXED_REPRESENTATION,
            }[rep]
        )
        for _ in range(samples):
            st = random_state(model, rng, rep)
            q, v = bridge.to_pinocchio_state(model, st)
            M_pin = pin.crba(pm, pd, q)
            M_pin = np.triu(M_pin) + np.triu(M_pin, 1).T
            h_pin = pin.nonLinearEffects(pm, pd, q, v)
            g_pin = pin.computeGeneralizedGravity(pm, pd, q)
            M = bridge.convert_mass_matrix(model, st, M_pin, "pinocchio", rep)
            h = bridge.convert_bias_forces(model, st, h_pin, M_pin, "pinocchio", rep)
            # gravity alone: the same state at rest (no velocity-dependent terms)
            rest = bridge.State(st.world_H_base, st.s, np.zeros(6), np.zeros(model.n_dofs), rep)
            g = bridge.convert_bias_forces(model, rest, g_pin, M_pin, "pinocchio", rep)
            world_H_base, base_velocity = st.world_H_base.matrix, st.base_velocity
            if base != model.base:
                world_H_base, base_velocity, T, T_dot_nu = _base_change(pm, model.base, base, st, rep)
                Ti = np.linalg.inv(T)
                M, h, g = Ti.T @ M @ Ti, Ti.T @ (h - M @ Ti @ T_dot_nu), Ti.T @ g

            set_idyntree_state(kd, world_H_base, st.s[perm], base_velocity, st.s_dot[perm], gravity)
            kd.getWorldTransform(base)  # refresh kinematics (iDynTree 15.1 gravity-force quirk)
            assert_close(M[np.ix_(full, full)], mass_matrix(kd), 1e-10, f"{name} M {rep}")
            assert_close(h[full], bias_forces(kd), 1e-10, f"{name} h {rep}")
            assert_close(g[full], gravity_forces(kd), 1e-10, f"{name} g {rep}")


@pytest.mark.parametrize("name", DEFAULT)
def test_native_loaders_agree(name: str) -> None:
    compare_native(name)


@pytest.mark.slow
@pytest.mark.parametrize("name", robot_names())
def test_native_loaders_agree_all_robots(name: str) -> None:
    path = str(robot_path(name))
    if name == "ur3":  # example-robot-data's ur3.urdf has no links: neither library has a robot
        with pytest.raises(ValueError, match="valid URDF"):
            pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer())
        assert _idyntree_loader(path).getNrOfLinks() == 0
        return
    compare_native(name, samples=1)
