"""An iDynTree model built in code (no URDF anywhere) becomes a Pinocchio model and back.

The model is written the way an iDynTree user may write it: links added in an arbitrary order, a
default base that is not the first link, a joint attached "backwards" (its first link is the one
further from the base, so its rest transform and axis are given from the other side), axes with
non-zero origins, a fixed joint and an additional frame. Its dynamics through every bridge engine
(Pinocchio via ``to_pinocchio``, Featherstone) must equal iDynTree's own ``KinDynComputations`` on
the hand-built model, in every representation; and iDynTree -> neutral -> Pinocchio -> neutral ->
iDynTree must keep them.
"""

from __future__ import annotations

import idyntree.bindings as idyn
import numpy as np
import pytest

import bridge
from bridge.backends.idyntree import (
    bias_forces,
    from_idyntree,
    mass_matrix,
    set_idyntree_state,
    to_idyntree,
)
from bridge.backends.pinocchio import from_pinocchio, to_pinocchio
from tests.helpers import assert_close, random_state, random_transform

REPS = ("body", "inertial", "mixed")
IDYN_REP = {
    "body": idyn.BODY_FIXED_REPRESENTATION,
    "inertial": idyn.INERTIAL_FIXED_REPRESENTATION,
    "mixed": idyn.MIXED_REPRESENTATION,
}


def _transform(rng: np.random.Generator):
    T = random_transform(rng)
    return idyn.Transform(idyn.Rotation(np.array(T.rotation)), idyn.Position(np.array(T.translation)))


def _inertia(rng: np.random.Generator):
    A = rng.normal(size=(3, 3))
    I_c = A @ A.T + 0.1 * np.eye(3)  # physical: about the COM, then shifted to the link origin
    m = rng.uniform(0.5, 3.0)
    c = rng.normal(size=3) * 0.1
    I_o = I_c + m * (c @ c * np.eye(3) - np.outer(c, c))
    return idyn.SpatialInertia(m, idyn.Position(c), idyn.RotationalInertia(I_o))


def _axis(rng: np.random.Generator):
    d = rng.normal(size=3)
    return idyn.Axis(idyn.Direction(d / np.linalg.norm(d)), idyn.Position(rng.normal(size=3) * 0.2))


def build_idyntree_model(seed: int = 0):
    rng = np.random.default_rng(seed)
    im = idyn.Model()
    idx = {}
    for name in ("hand", "torso", "arm", "leg", "head"):  # not in tree order
        link = idyn.Link()
        link.setInertia(_inertia(rng))
        idx[name] = im.addLink(name, link)

    def movable(kind, first: str, second: str, axis_in: str):
        J = idyn.RevoluteJoint() if kind == "revolute" else idyn.PrismaticJoint()
        J.setAttachedLinks(idx[first], idx[second])
        J.setRestTransform(_transform(rng))  # first_H_second at zero position
        other = second if axis_in == first else first
        J.setAxis(_axis(rng), idx[axis_in], idx[other])
        return J

    # arm is the base; "wrist" is attached backwards: hand first, arm second, axis in hand's frame
    assert im.addJoint("shoulder", movable("revolute", "torso", "arm", "arm")) >= 0
    assert im.addJoint("wrist", movable("prismatic", "hand", "arm", "hand")) >= 0
    assert im.addJoint("neck", movable("revolute", "torso", "head", "head")) >= 0
    hip = idyn.FixedJoint()
    hip.setAttachedLinks(idx["torso"], idx["leg"])
    hip.setRestTransform(_transform(rng))
    assert im.addJoint("hip", hip) >= 0
    assert im.addAdditionalFrameToLink("hand", "tool", _transform(rng))
    assert im.setDefaultBaseLink(idx["arm"])
    return im


def _native(im, base: str, rep: str, state, frames=("tool", "leg")):
    kd = idyn.KinDynComputations()
    assert kd.loadRobotModel(im)
    assert kd.setFloatingBase(base)
    assert kd.setFrameVelocityRepresentation(IDYN_REP[rep])
    set_idyntree_state(kd, state.world_H_base, state.s, state.base_velocity, state.s_dot)
    poses = {}
    for f in frames:
        H = kd.getWorldTransform(f).asHomogeneousTransform()  # keep the temporary alive while copying
        poses[f] = np.array(H.toNumPy())
    return mass_matrix(kd), bias_forces(kd), poses


@pytest.mark.parametrize("seed", range(3))
def test_idyntree_model_built_in_code_through_every_engine(seed: int) -> None:
    im = build_idyntree_model(seed)
    model = from_idyntree(im, name="hand_built")
    assert model.base == "arm" and model.dof_names == ("shoulder", "wrist", "neck")
    assert {f.name for f in model.frames} == {"tool"}
    rng = np.random.default_rng(100 + seed)
    for rep in REPS:
        st = random_state(model, rng, rep)
        M, h, poses = _native(im, "arm", rep, st)
        for engine in ("pinocchio", "featherstone", "idyntree"):
            kd = bridge.KinDyn(model, engine, rep)
            kd.set_robot_state(st)
            assert_close(kd.mass_matrix(), M, 1e-10, f"{engine} M {rep}")
            assert_close(kd.bias_forces(), h, 1e-10, f"{engine} h {rep}")
            for frame, pose in poses.items():
                assert_close(kd.frame_transform(frame), pose, 1e-12, f"{engine} {frame}")


@pytest.mark.parametrize("seed", range(3))
def test_idyntree_to_pinocchio_and_back(seed: int) -> None:
    im = build_idyntree_model(seed)
    model = from_idyntree(im, name="hand_built")
    pm = to_pinocchio(model)
    assert pm.nv == 6 + 3 and pm.existFrame("tool") and pm.existFrame("leg")
    back = from_pinocchio(pm)
    assert set(back.dof_names) == set(model.dof_names)
    again = to_idyntree(back.with_dofs(model.dof_names))
    rng = np.random.default_rng(200 + seed)
    for rep in REPS:
        st = random_state(model, rng, rep)
        M1, h1, p1 = _native(im, "arm", rep, st)
        M2, h2, p2 = _native(again, back.base, rep, st)
        assert_close(M2, M1, 1e-10, f"M {rep}")
        assert_close(h2, h1, 1e-10, f"h {rep}")
        for frame in p1:
            assert_close(p2[frame], p1[frame], 1e-12, frame)


def test_rerooted_at_another_link_of_the_hand_built_model() -> None:
    """Choosing another iDynTree base (with_base in bridge, setFloatingBase in iDynTree) agrees."""
    im = build_idyntree_model(5)
    model = from_idyntree(im, base="hand")
    assert model.base == "hand"
    rng = np.random.default_rng(7)
    for rep in REPS:
        st = random_state(model, rng, rep)
        M, h, _ = _native(im, "hand", rep, st)
        kd = bridge.KinDyn(model, "pinocchio", rep)
        kd.set_robot_state(st)
        assert_close(kd.mass_matrix(), M, 1e-10, f"M {rep}")
        assert_close(kd.bias_forces(), h, 1e-10, f"h {rep}")
