"""The neutral model: joint semantics, re-rooting, DOF selection and locking, lumping, validation."""

from __future__ import annotations

import numpy as np
import pytest

import bridge
from bridge.model.model import Frame, Joint, JointKind, Link, Model
from bridge.model.random import DEFAULT_JOINT_KINDS, random_inertia, random_transform
from bridge.spatial import SpatialInertia, Transform
from bridge.spatial.so3 import vee
from tests.helpers import small_model


def _composite_inertia(model: Model, s: np.ndarray) -> np.ndarray:
    """Sum of all link inertias expressed in the base frame (6x6)."""
    fk = model.forward_kinematics(s)
    return sum(link.inertia.transformed(fk[link.name]).as_matrix() for link in model.links)


@pytest.mark.parametrize("kind", ["revolute", "continuous", "prismatic"])
def test_joint_transform_and_motion_subspace(kind: str) -> None:
    rng = np.random.default_rng(0)
    j = Joint(
        "j", kind, "p", "c", random_transform(rng), axis=rng.normal(size=3), axis_origin=rng.normal(size=3)
    )
    s, h = 0.7, 1e-6
    H = j.transform(s).matrix
    if kind != "prismatic":
        # a point on the axis does not move: parent_H_child(s) o = rest o
        o = j.axis_origin
        np.testing.assert_allclose(H[:3, :3] @ o + H[:3, 3], j.parent_H_child.apply(o), atol=1e-14)
    dH = (j.transform(s + h).matrix - j.transform(s - h).matrix) / (2 * h)
    twist = np.linalg.inv(H) @ dH  # child-frame twist per unit velocity
    S = np.concatenate([twist[:3, 3], vee(twist[:3, :3])])
    np.testing.assert_allclose(S, j.motion_subspace, atol=1e-8)
    r = j.reversed()
    assert (r.parent, r.child) == ("c", "p")
    np.testing.assert_allclose(r.transform(s).matrix, np.linalg.inv(H), atol=1e-13)
    rr = r.reversed()
    np.testing.assert_allclose(rr.axis, j.axis, atol=1e-15)
    np.testing.assert_allclose(rr.axis_origin, j.axis_origin, atol=1e-14)
    np.testing.assert_allclose(rr.parent_H_child.matrix, j.parent_H_child.matrix, atol=1e-15)


@pytest.mark.parametrize("seed", range(6))
def test_with_base_keeps_kinematics_and_dynamics_data(seed: int) -> None:
    model = bridge.random_model(10, seed)
    rng = np.random.default_rng(seed)
    for new_base in (model.links[-1].name, model.links[len(model.links) // 2].name):
        rerooted = model.with_base(new_base)
        assert rerooted.base == new_base and rerooted.parent_joint(new_base) is None
        assert rerooted.dof_names == model.dof_names
        assert rerooted.total_mass == pytest.approx(model.total_mass)
        s = rng.uniform(-1, 1, model.n_dofs)
        fa, fb = model.forward_kinematics(s), rerooted.forward_kinematics(s)
        for a in model.link_names:
            for b in model.link_names[:4]:
                np.testing.assert_allclose(
                    (fa[a].inverse() @ fa[b]).matrix, (fb[a].inverse() @ fb[b]).matrix, atol=1e-12
                )
        back = rerooted.with_base(model.base)
        fc = back.forward_kinematics(s)
        for name in model.link_names:
            np.testing.assert_allclose(fc[name].matrix, fa[name].matrix, atol=1e-12)


def test_rerooting_a_chain_at_its_leaf_moves_axis_origins() -> None:
    rng = np.random.default_rng(1)
    inertia = random_inertia(rng)
    links = [Link(f"l{i}", inertia) for i in range(4)]
    joints = [
        Joint(f"j{i}", "revolute", f"l{i}", f"l{i + 1}", random_transform(rng), axis=[0, 0, 1])
        for i in range(3)
    ]
    model = Model("chain", links, joints, (), "l0", ("j0", "j1", "j2"))
    leaf = model.with_base("l3")
    assert [j.parent for j in leaf.depth_first_joints] == ["l3", "l2", "l1"]
    assert any(np.linalg.norm(j.axis_origin) > 1e-3 for j in leaf.joints)


def test_with_dofs_locks_and_releases() -> None:
    model = small_model(np.random.default_rng(2))
    reduced = model.with_dofs(["j3", "j1"], locked={"j2": 0.3})
    assert reduced.dof_names == ("j3", "j1")
    assert reduced.locked_joints == {"j2": 0.3, "j4": 0.0}
    assert reduced.joint("j2").kind is JointKind.FIXED
    s_full = np.array([0.0, 0.3, -0.4, 0.9])  # j4, j2, j3, j1
    fk_full = model.forward_kinematics(s_full)
    fk_red = reduced.forward_kinematics(np.array([-0.4, 0.9]))
    for name in model.link_names:
        np.testing.assert_allclose(fk_red[name].matrix, fk_full[name].matrix, atol=1e-14)
    released = reduced.with_dofs(model.dof_names)
    assert released.locked_joints == {}
    fk = released.forward_kinematics(s_full)
    for name in model.link_names:
        np.testing.assert_allclose(fk[name].matrix, fk_full[name].matrix, atol=1e-14)
    # a locked joint survives re-rooting and can still be released
    rerooted = reduced.with_base("c").with_dofs(model.dof_names)
    fk_r = rerooted.forward_kinematics(s_full)
    for name in model.link_names:
        np.testing.assert_allclose(
            (fk_r["a"].inverse() @ fk_r[name]).matrix, fk_full[name].matrix, atol=1e-13
        )


def test_with_dofs_errors() -> None:
    model = small_model(np.random.default_rng(3))
    with pytest.raises(bridge.UnknownNameError, match=r"unknown joint 'j5'.*did you mean"):
        model.with_dofs(["j5"])
    with pytest.raises(bridge.ModelError, match="'jf' is a fixed joint"):
        model.with_dofs(["jf"])
    with pytest.raises(bridge.ModelError, match="both in the DOF list and locked"):
        model.with_dofs(["j1"], locked={"j1": 0.2})
    with pytest.raises(bridge.ModelError, match="appears twice"):
        model.with_dofs(["j1", "j1"])


@pytest.mark.parametrize("seed", range(5))
def test_lumped_keeps_mass_properties_and_frames(seed: int) -> None:
    model = bridge.random_model(12, seed, joint_kinds=("revolute", "fixed"))
    lumped = model.lumped()
    groups = 1 + sum(1 for j in model.joints if j.movable)
    assert len(lumped.links) == groups
    assert lumped.total_mass == pytest.approx(model.total_mass)
    rng = np.random.default_rng(seed)
    s = rng.uniform(-1, 1, model.n_dofs)
    np.testing.assert_allclose(_composite_inertia(lumped, s), _composite_inertia(model, s), atol=1e-11)
    fa, fb = model.forward_kinematics(s), lumped.forward_kinematics(s)
    for name in model.frame_names:
        la, pa = model.frame_placement(name)
        lb, pb = lumped.frame_placement(name)
        np.testing.assert_allclose((fa[la] @ pa).matrix, (fb[lb] @ pb).matrix, atol=1e-12)


def test_model_validation_errors() -> None:
    unit = SpatialInertia(1.0, [0, 0, 0], np.eye(3) * 0.01)
    T = Transform.identity()
    a, b, c = Link("a", unit), Link("b", unit), Link("c", unit)
    with pytest.raises(bridge.ModelError, match="duplicate name 'a'"):
        Model("m", [a, Link("a", unit)], [], [], "a", ())
    with pytest.raises(bridge.ModelError, match="duplicate name 'b': used by a link and a frame"):
        Model("m", [a, b], [Joint("j", "fixed", "a", "b", T)], [Frame("b", "a", T)], "a", ())
    with pytest.raises(bridge.ModelError, match="duplicate joint name 'j'"):
        Model(
            "m", [a, b, c], [Joint("j", "fixed", "a", "b", T), Joint("j", "fixed", "a", "c", T)], [], "a", ()
        )
    with pytest.raises(bridge.ModelError, match="link 'c' has two parent joints"):
        Model(
            "m",
            [a, b, c],
            [Joint("j1", "fixed", "a", "c", T), Joint("j2", "fixed", "b", "c", T)],
            [],
            "a",
            (),
        )
    with pytest.raises(bridge.ModelError, match=r"links not connected to the base 'a': \['c'\]"):
        Model("m", [a, b, c], [Joint("j1", "fixed", "a", "b", T)], [], "a", ())
    with pytest.raises(bridge.UnknownNameError, match="unknown base link 'z'"):
        Model("m", [a], [], [], "z", ())
    with pytest.raises(bridge.ModelError, match="axis must be a non-zero vector"):
        Joint("j", "revolute", "a", "b", T, axis=[0, 0, 0])
    with pytest.raises(bridge.ModelError, match=r"movable joints missing from the DOF list: \['j'\]"):
        Model("m", [a, b], [Joint("j", "revolute", "a", "b", T, axis=[1, 0, 0])], [], "a", ())
    with pytest.raises(bridge.ModelError, match="joint 'j' is fixed"):
        Model("m", [a, b], [Joint("j", "fixed", "a", "b", T)], [], "a", ("j",))
    with pytest.raises(bridge.ModelError, match="frame 'f' is attached to unknown link 'q'"):
        Model("m", [a], [], [Frame("f", "q", T)], "a", ())
    with pytest.raises(bridge.UnknownNameError, match=r"unknown frame 'tol'.*'tool'"):
        small_model(np.random.default_rng(0)).frame("tol")


def test_forward_kinematics_is_batched() -> None:
    model = bridge.random_model(8, 4)
    rng = np.random.default_rng(4)
    s = rng.uniform(-1, 1, (5, 3, model.n_dofs))
    fk = model.forward_kinematics(s)
    for i in range(5):
        for k in range(3):
            single = model.forward_kinematics(s[i, k])
            for name in model.link_names:
                np.testing.assert_allclose(fk[name].matrix[i, k], single[name].matrix, atol=1e-15)


def test_massless_dofs() -> None:
    rng = np.random.default_rng(5)
    inertia = random_inertia(rng)
    links = [Link("a", inertia), Link("b", SpatialInertia.zero()), Link("c", SpatialInertia.zero())]
    joints = [
        Joint("j1", "revolute", "a", "b", random_transform(rng), axis=[1, 0, 0]),
        Joint("j2", "revolute", "b", "c", random_transform(rng), axis=[0, 1, 0]),
    ]
    model = Model("m", links, joints, (), "a", ("j1", "j2"))
    assert model.massless_dofs == ("j1", "j2")
    kd = bridge.KinDyn(model, "pinocchio")
    kd.set_state(np.eye(4), np.zeros(2), np.zeros(6), np.zeros(2))
    with pytest.raises(bridge.SingularMassMatrixError, match="these joints move no inertia: j1, j2"):
        kd.forward_dynamics(np.zeros(2))


# ------------------------------------------------------------------------------------ random models
def test_random_model_properties() -> None:
    seen_kinds: set[JointKind] = set()
    shuffled = 0
    for seed in range(30):
        model = bridge.random_model(10, seed)
        again = bridge.random_model(10, seed)
        assert [j.parent_H_child.matrix.tolist() for j in model.joints] == [
            j.parent_H_child.matrix.tolist() for j in again.joints
        ]
        assert model.dof_names == again.dof_names
        seen_kinds |= {j.kind for j in model.joints}
        for link in model.links:
            link.inertia.check_physical(link.name, allow_massless=True)
        assert model.massless_dofs == ()
        assert any(np.linalg.norm(j.axis_origin) > 0 for j in model.joints if j.movable) or model.n_dofs == 0
        document = tuple(j.name for j in model.joints if j.movable)
        shuffled += model.dof_names != document
        assert len(model.frames) >= 1
    assert seen_kinds == {JointKind(k) for k in DEFAULT_JOINT_KINDS}
    assert shuffled > 10
    assert bridge.random_model(10, 1).dof_names != bridge.random_model(10, 2).dof_names
    with pytest.raises(bridge.InvalidValueError, match="n_links must be >= 1"):
        bridge.random_model(0)
    with pytest.raises(bridge.InvalidValueError, match=r"unknown joint kinds \['screw'\]"):
        bridge.random_model(3, joint_kinds=("screw",))
