"""The neutral Model: joint semantics, re-rooting, DOF selection and locking, lumping, validation.

Property-style: most tests run over many random models (every joint kind, axes in arbitrary and in
coordinate directions, non-zero axis origins, massless links) and compare against definitions
written out independently here (Rodrigues' formula, finite differences, summed link inertias).
"""

from __future__ import annotations

import numpy as np
import pytest

import bridge
from bridge.model.model import Frame, Joint, JointKind, JointLimits, Link, Model
from bridge.model.random import random_inertia, random_model, random_transform
from bridge.spatial import SpatialInertia, Transform
from tests.helpers import small_model

SEEDS = range(8)


# ----------------------------------------------------------------------------------------- helpers
def _hat(w: np.ndarray) -> np.ndarray:
    return np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])


def _rodrigues(axis: np.ndarray, angle: float) -> np.ndarray:
    """Rotation by ``angle`` about the unit ``axis`` (written out, independent of bridge.spatial.so3)."""
    K = _hat(axis)
    return np.eye(3) + np.sin(angle) * K + (1.0 - np.cos(angle)) * (K @ K)


def _homogeneous(R: np.ndarray, p: np.ndarray) -> np.ndarray:
    H = np.eye(4)
    H[:3, :3] = R
    H[:3, 3] = p
    return H


def _expected_joint_transform(j: Joint, s: float) -> np.ndarray:
    """rest @ (rotation by s about the line through axis_origin) or rest @ (translation s * axis)."""
    rest = j.parent_H_child.matrix
    if j.kind.rotational:
        o = j.axis_origin
        motion = _homogeneous(np.eye(3), o) @ _homogeneous(_rodrigues(j.axis, s), np.zeros(3))
        motion = motion @ _homogeneous(np.eye(3), -o)
    elif j.kind is JointKind.PRISMATIC:
        motion = _homogeneous(np.eye(3), s * j.axis)
    else:
        motion = np.eye(4)
    return rest @ motion


def _finite_difference_subspace(j: Joint, s: float, h: float = 1e-3) -> np.ndarray:
    """Child-frame twist per unit joint velocity, vee(inv(H) dH/ds), from a 5-point stencil."""
    H = lambda x: j.transform(x).matrix  # noqa: E731
    dH = (-H(s + 2 * h) + 8 * H(s + h) - 8 * H(s - h) + H(s - 2 * h)) / (12 * h)
    T = np.linalg.inv(H(s)) @ dH
    W = T[:3, :3]
    return np.concatenate([T[:3, 3], [W[2, 1], W[0, 2], W[1, 0]]])


def _assert_same_joint(a: Joint, b: Joint, atol: float = 1e-13) -> None:
    assert (a.name, a.kind, a.parent, a.child) == (b.name, b.kind, b.parent, b.child)
    np.testing.assert_allclose(a.parent_H_child.matrix, b.parent_H_child.matrix, atol=atol)
    np.testing.assert_allclose(a.axis, b.axis, atol=atol)
    np.testing.assert_allclose(a.axis_origin, b.axis_origin, atol=atol)
    assert a.limits == b.limits
    assert (a.original is None) == (b.original is None)
    assert a.locked_position == b.locked_position


def _world(model: Model, s: np.ndarray) -> dict[str, np.ndarray]:
    """base_H_frame (..., 4, 4) of every frame (links and extra frames) at positions s."""
    fk = model.forward_kinematics(s)
    out = {}
    for name in model.frame_names:
        link, link_H_frame = model.frame_placement(name)
        out[name] = (fk[link] @ link_H_frame).matrix
    return out


def _composite(model: Model, s: np.ndarray) -> SpatialInertia:
    """Whole-body spatial inertia in the base frame: the sum of the transformed link inertias."""
    fk = model.forward_kinematics(s)
    total = None
    for link in model.links:
        moved = link.inertia.transformed(fk[link.name])
        total = moved if total is None else total + moved
    return total


def _path_to_base(model: Model, link: str) -> list[str]:
    """Names of the joints from ``link`` up to the base."""
    out = []
    while link != model.base:
        j = model.parent_joint(link)
        out.append(j.name)
        link = j.parent
    return out


def _subtree_masses(model: Model) -> dict[str, float]:
    total = {name: model.link(name).mass for name in model.link_names}
    for j in reversed(model.depth_first_joints):
        total[j.parent] += total[j.child]
    return total


# ----------------------------------------------------------------------------------- joint semantics
@pytest.mark.parametrize("kind", ["revolute", "continuous", "prismatic", "fixed"])
def test_joint_transform_is_rest_times_motion_about_the_axis_line(kind: str) -> None:
    rng = np.random.default_rng(10)
    for _ in range(20):
        axis = rng.normal(size=3) if kind != "fixed" else np.zeros(3)
        origin = rng.normal(size=3) if kind != "fixed" else np.zeros(3)
        j = Joint("j", kind, "p", "c", random_transform(rng), axis=axis, axis_origin=origin)
        if kind != "fixed":
            np.testing.assert_allclose(np.linalg.norm(j.axis), 1.0, rtol=1e-15)
            np.testing.assert_allclose(j.axis, axis / np.linalg.norm(axis), rtol=1e-15)
        positions = rng.uniform(-4, 4, 5)
        batched = j.transform(positions).matrix
        assert batched.shape == (5, 4, 4)
        for k, s in enumerate(positions):
            expected = _expected_joint_transform(j, s)
            np.testing.assert_allclose(j.transform(s).matrix, expected, atol=1e-13)
            np.testing.assert_allclose(batched[k], expected, atol=1e-13)
        np.testing.assert_allclose(j.transform(0.0).matrix, j.parent_H_child.matrix, atol=1e-15)
        if j.kind.rotational:  # a point on the axis line keeps its place in the parent frame
            p = j.axis_origin + 0.37 * j.axis
            np.testing.assert_allclose(j.transform(1.1).apply(p), j.parent_H_child.apply(p), atol=1e-13)


def test_joint_semantics_on_random_model_joints() -> None:
    """Every movable joint of many random models: transform, motion subspace, reversal."""
    rng = np.random.default_rng(11)
    count = {kind: 0 for kind in JointKind if kind.single or not kind.movable}  # (wide kinds: test_joints)
    for seed in range(12):
        for j in random_model(10, seed).joints:
            count[j.kind] += 1
            s = float(rng.uniform(-3, 3))
            np.testing.assert_allclose(j.transform(s).matrix, _expected_joint_transform(j, s), atol=1e-13)
            if j.movable:
                np.testing.assert_allclose(_finite_difference_subspace(j, s), j.motion_subspace, atol=1e-9)
            else:
                np.testing.assert_array_equal(j.motion_subspace, np.zeros(6))
            r = j.reversed()
            assert (r.name, r.kind, r.parent, r.child) == (j.name, j.kind, j.child, j.parent)
            np.testing.assert_allclose(
                r.transform(s).matrix, np.linalg.inv(j.transform(s).matrix), atol=1e-13
            )
            _assert_same_joint(r.reversed(), j)
    assert all(c > 5 for c in count.values()), count


@pytest.mark.parametrize("kind", ["revolute", "continuous", "prismatic"])
def test_motion_subspace_matches_finite_differences(kind: str) -> None:
    rng = np.random.default_rng(12)
    for axis in (*np.eye(3), -np.eye(3)[1], rng.normal(size=3), rng.normal(size=3)):
        j = Joint("j", kind, "p", "c", random_transform(rng), axis=axis, axis_origin=rng.normal(size=3))
        for s in rng.uniform(-3, 3, 3):
            np.testing.assert_allclose(_finite_difference_subspace(j, s), j.motion_subspace, atol=1e-9)
        if kind == "prismatic":  # the axis origin does not matter for a prismatic joint
            np.testing.assert_array_equal(j.motion_subspace, np.concatenate([j.axis, np.zeros(3)]))
        else:
            np.testing.assert_allclose(j.motion_subspace[:3], np.cross(j.axis_origin, j.axis), atol=1e-15)


def test_reversed_joint_is_the_inverse_at_the_same_position() -> None:
    rng = np.random.default_rng(13)
    for kind in ("revolute", "continuous", "prismatic", "fixed"):
        movable = kind != "fixed"
        j = Joint(
            "j",
            kind,
            "p",
            "c",
            random_transform(rng),
            axis=rng.normal(size=3) if movable else np.zeros(3),
            axis_origin=rng.normal(size=3) if movable else np.zeros(3),
            limits=JointLimits(-1.0, 2.0, 5.0, 3.0),
        )
        r = j.reversed()
        s = rng.uniform(-3, 3, 7)
        np.testing.assert_allclose(
            r.transform(s).matrix @ j.transform(s).matrix, np.broadcast_to(np.eye(4), (7, 4, 4)), atol=1e-13
        )
        assert r.limits == j.limits
        if movable:  # the reversed axis line is the same line, seen from the other side
            np.testing.assert_allclose(r.axis, -(j.parent_H_child.rotation @ j.axis), atol=1e-15)
            np.testing.assert_allclose(r.axis_origin, j.parent_H_child.apply(j.axis_origin), atol=1e-14)
        _assert_same_joint(r.reversed(), j)
    # a locked joint keeps its definition when reversed and can still be released on the other side
    j = Joint("j", "revolute", "p", "c", random_transform(rng), axis=[0, 1, 0], axis_origin=[0.1, 0, 0.2])
    locked = j.locked(0.6)
    assert locked.kind is JointKind.FIXED and locked.locked_position == 0.6
    np.testing.assert_allclose(locked.transform().matrix, j.transform(0.6).matrix, atol=1e-15)
    rl = locked.reversed()
    np.testing.assert_allclose(rl.transform().matrix, rl.original.transform(0.6).matrix, atol=1e-13)
    _assert_same_joint(rl.original.reversed(), j)
    with pytest.raises(bridge.ModelError, match="joint 'f' is fixed"):
        Joint("f", "fixed", "p", "c", Transform.identity()).locked(0.1)


# ------------------------------------------------------------------------------------------ with_base
@pytest.mark.parametrize("seed", SEEDS)
def test_with_base_keeps_relative_kinematics(seed: int) -> None:
    model = random_model(9, seed)
    rng = np.random.default_rng(seed)
    s = rng.uniform(-2, 2, (3, model.n_dofs))
    world = _world(model, s)
    composite = _composite(model, s)
    for new_base in model.link_names:
        rerooted = model.with_base(new_base)
        assert rerooted.base == new_base and rerooted.parent_joint(new_base) is None
        assert rerooted.dof_names == model.dof_names
        assert rerooted.link_names == model.link_names and rerooted.joint_names == model.joint_names
        assert rerooted.total_mass == model.total_mass
        assert rerooted.floating == model.floating
        # new_base_H_x = inv(old_H_new_base) @ old_H_x for every frame (so every pair agrees)
        new_H_old = np.linalg.inv(world[new_base])
        moved = _world(rerooted, s)
        for name in model.frame_names:
            np.testing.assert_allclose(moved[name], new_H_old @ world[name], atol=1e-12)
        a, b = model.link_names[-1], model.frame_names[-1]
        np.testing.assert_allclose(
            np.linalg.inv(moved[a]) @ moved[b], np.linalg.inv(world[a]) @ world[b], atol=1e-12
        )
        # the whole-body inertia is the same body seen from the new base
        expected = composite.transformed(Transform(new_H_old))
        np.testing.assert_allclose(_composite(rerooted, s).as_matrix(), expected.as_matrix(), atol=1e-10)
        # joints on the path to the old base are reversed, the others untouched
        path = set(_path_to_base(model, new_base))
        for old in model.joints:
            new = rerooted.joint(old.name)
            if old.name in path:
                assert (new.parent, new.child) == (old.child, old.parent)
                _assert_same_joint(new.reversed(), old)
            else:
                _assert_same_joint(new, old, atol=0.0)
        # and back again
        back = rerooted.with_base(model.base)
        for old in model.joints:
            _assert_same_joint(back.joint(old.name), old)
        np.testing.assert_allclose(
            back.forward_kinematics(s)[model.link_names[-1]].matrix, world[model.link_names[-1]], atol=1e-12
        )
    assert model.with_base(model.base) is model
    with pytest.raises(bridge.UnknownNameError, match=r"unknown link 'link99'.*did you mean"):
        model.with_base("link99")


def test_with_base_makes_axis_origins_non_zero() -> None:
    """A URDF-like model (zero axis origins) re-rooted: the reversed joints get non-zero origins."""
    for seed in range(6):
        model = random_model(8, seed, axis_origin=False)
        assert all(np.all(j.axis_origin == 0) for j in model.joints)
        leaf = model.link_names[-1]
        rerooted = model.with_base(leaf)
        for name in _path_to_base(model, leaf):
            j = rerooted.joint(name)
            if j.movable:  # the origin is the old rest translation, at least 0.1 m long
                assert np.linalg.norm(j.axis_origin) > 0.09
                np.testing.assert_allclose(j.axis_origin, model.joint(name).parent_H_child.translation)


def test_with_base_at_the_leaf_of_a_chain() -> None:
    rng = np.random.default_rng(14)
    inertia = random_inertia(rng)
    links = [Link(f"l{i}", inertia) for i in range(5)]
    kinds = ["revolute", "prismatic", "fixed", "continuous"]
    joints = [
        Joint(
            f"j{i}",
            kinds[i],
            f"l{i}",
            f"l{i + 1}",
            random_transform(rng),
            axis=[0, 0, 1] if kinds[i] != "fixed" else [0, 0, 0],
        )
        for i in range(4)
    ]
    model = Model(
        "chain", links, joints, [Frame("tip", "l4", random_transform(rng))], "l0", ("j3", "j0", "j1")
    )
    leaf = model.with_base("l4")
    assert [(j.name, j.parent, j.child) for j in leaf.depth_first_joints] == [
        ("j3", "l4", "l3"),
        ("j2", "l3", "l2"),
        ("j1", "l2", "l1"),
        ("j0", "l1", "l0"),
    ]
    assert leaf.parent_joint("l4") is None and leaf.parent_joint("l0").name == "j0"
    assert leaf.dof_names == ("j3", "j0", "j1")
    # the revolute joints' axis lines no longer pass through the child origins
    assert np.linalg.norm(leaf.joint("j0").axis_origin) > 1e-3
    assert np.linalg.norm(leaf.joint("j3").axis_origin) > 1e-3
    s = rng.uniform(-2, 2, (4, 3))
    full, rerooted = _world(model, s), _world(leaf, s)
    l4_H_l0 = np.linalg.inv(full["l4"])
    for name in model.frame_names:
        np.testing.assert_allclose(rerooted[name], l4_H_l0 @ full[name], atol=1e-12)


# ------------------------------------------------------------------------------------------ with_dofs
@pytest.mark.parametrize("seed", SEEDS)
def test_with_dofs_orders_locks_and_releases(seed: int) -> None:
    model = random_model(10, seed, joint_kinds=("revolute", "continuous", "prismatic"))
    rng = np.random.default_rng(seed)
    n = model.n_dofs
    perm = [model.dof_names[k] for k in rng.permutation(n)]
    free, rest = perm[: n // 2], perm[n // 2 :]
    given = {name: float(rng.uniform(-1, 1)) for name in rest[::2]}  # the others default to 0
    reduced = model.with_dofs(free, locked=given)
    assert reduced.dof_names == tuple(free)
    expected_locked = {name: given.get(name, 0.0) for name in rest}
    assert reduced.locked_joints == expected_locked
    for name in rest:
        j = reduced.joint(name)
        assert j.kind is JointKind.FIXED and not j.movable
        _assert_same_joint(j.original, model.joint(name), atol=0.0)
    assert reduced.total_mass == model.total_mass and reduced.floating == model.floating

    s_red = rng.uniform(-2, 2, (4, len(free)))
    s_full = np.zeros((4, n))
    for k, name in enumerate(free):
        s_full[:, model.dof_index(name)] = s_red[:, k]
    for name, pos in expected_locked.items():
        s_full[:, model.dof_index(name)] = pos
    full, red = _world(model, s_full), _world(reduced, s_red)
    for name in model.frame_names:
        np.testing.assert_allclose(red[name], full[name], atol=1e-13)

    # leaving locked joints out again keeps their positions; naming them in `locked` moves them
    again = reduced.with_dofs(free[::-1], locked={rest[0]: 0.25})
    assert again.dof_names == tuple(free[::-1])
    assert again.locked_joints == {**expected_locked, rest[0]: 0.25}

    # releasing restores the full model, in any order
    released = reduced.with_dofs(model.dof_names)
    assert released.locked_joints == {} and released.dof_names == model.dof_names
    for j in model.joints:
        _assert_same_joint(released.joint(j.name), j, atol=0.0)
    shuffled = list(model.dof_names)[::-1]
    back = reduced.with_dofs(shuffled)
    s_back = s_full[:, [model.dof_index(d) for d in shuffled]]
    for name, H in _world(back, s_back).items():
        np.testing.assert_allclose(H, full[name], atol=1e-13)


def test_locked_joints_survive_rerooting() -> None:
    model = random_model(9, 3, joint_kinds=("revolute", "prismatic", "fixed"))
    rng = np.random.default_rng(3)
    locked = {d: float(rng.uniform(-1, 1)) for d in model.dof_names[1::2]}
    free = [d for d in model.dof_names if d not in locked]
    reduced = model.with_dofs(free, locked)
    leaf = model.link_names[-1]
    rerooted = reduced.with_base(leaf)
    assert rerooted.locked_joints == locked
    s = rng.uniform(-2, 2, model.n_dofs)
    for d, pos in locked.items():
        s[model.dof_index(d)] = pos
    full = _world(model, s)
    released = rerooted.with_dofs(model.dof_names)
    assert released.locked_joints == {}
    new_H_old = np.linalg.inv(full[leaf])
    for name, H in _world(released, s).items():
        np.testing.assert_allclose(H, new_H_old @ full[name], atol=1e-12)


def test_with_dofs_errors() -> None:
    model = small_model(np.random.default_rng(15))
    with pytest.raises(
        bridge.UnknownNameError,
        match=r"unknown joint 'j5' in model 'small'; did you mean .*'j4'",
    ):
        model.with_dofs(["j1", "j5"])
    with pytest.raises(KeyError, match=r"unknown joint 'jx1'.*did you mean 'j1'"):
        model.with_dofs(["j1"], locked={"jx1": 0.3})
    with pytest.raises(bridge.ModelError, match="joint 'jf' is a fixed joint"):
        model.with_dofs(["jf", "j1"])
    with pytest.raises(bridge.ModelError, match="joint 'jf' is a fixed joint"):
        model.with_dofs(["j1"], locked={"jf": 0.0})
    with pytest.raises(bridge.ModelError, match=r"both in the DOF list and locked: \['j2'\]"):
        model.with_dofs(["j1", "j2"], locked={"j2": 0.2})
    with pytest.raises(bridge.ModelError, match="joint 'j1' appears twice in the DOF list"):
        model.with_dofs(["j1", "j3", "j1"])
    assert issubclass(bridge.UnknownNameError, bridge.BridgeError)
    # locking every DOF is allowed: a rigid robot
    rigid = model.with_dofs([])
    assert rigid.n_dofs == 0 and rigid.nv == 6
    assert set(rigid.locked_joints) == set(model.dof_names)


# ------------------------------------------------------------------------------------------ lumped
@pytest.mark.parametrize("seed", SEEDS)
def test_lumped_keeps_mass_properties_and_frames(seed: int) -> None:
    model = random_model(12, seed)
    rng = np.random.default_rng(seed)
    # lock a couple of joints too: they are merged like fixed joints
    locked = {d: float(rng.uniform(-1, 1)) for d in model.dof_names[:2]}
    for source in (model, model.with_dofs(model.dof_names[2:], locked)):
        lumped = source.lumped()
        assert len(lumped.links) == 1 + source.n_dofs  # one body per movable-joint group
        assert set(lumped.link_names) == {source.base} | {j.child for j in source.joints if j.movable}
        assert all(j.movable for j in lumped.joints)
        assert lumped.dof_names == source.dof_names and lumped.base == source.base
        assert lumped.total_mass == pytest.approx(source.total_mass, rel=1e-14)
        s = rng.uniform(-2, 2, (3, source.n_dofs))
        before, after = _composite(source, s), _composite(lumped, s)
        np.testing.assert_allclose(after.mass, before.mass, rtol=1e-14)
        np.testing.assert_allclose(after.com, before.com, atol=1e-12)  # whole-body centre of mass
        np.testing.assert_allclose(after.as_matrix(), before.as_matrix(), atol=1e-10)
        for link in lumped.links:
            link.inertia.check_physical(link.name, allow_massless=True)
        # every link and extra frame is still a frame, at the same place
        assert set(lumped.frame_names) == set(source.frame_names)
        wa, wb = _world(source, s), _world(lumped, s)
        for name in source.frame_names:
            np.testing.assert_allclose(wb[name], wa[name], atol=1e-12)


def test_lumped_small_model_by_hand() -> None:
    model = small_model(np.random.default_rng(16))
    lumped = model.lumped()
    assert lumped.link_names == ("a", "b", "c", "d", "f")
    assert lumped.joint_names == ("j1", "j2", "j3", "j4")
    jf = model.joint("jf")
    assert lumped.frame_placement("e")[0] == "d"
    np.testing.assert_allclose(lumped.frame_placement("e")[1].matrix, jf.parent_H_child.matrix, atol=0)
    link, d_H_tool = lumped.frame_placement("tool")
    assert link == "d"
    np.testing.assert_allclose(
        d_H_tool.matrix, jf.parent_H_child.matrix @ model.frame("tool").link_H_frame.matrix, atol=1e-15
    )
    np.testing.assert_allclose(
        lumped.joint("j4").parent_H_child.matrix,
        (jf.parent_H_child @ model.joint("j4").parent_H_child).matrix,
        atol=1e-15,
    )
    expected = model.link("d").inertia + model.link("e").inertia.transformed(jf.parent_H_child)
    assert lumped.link("d").inertia.allclose(expected)
    # nothing to merge: the same bodies
    again = lumped.lumped()
    assert again.link_names == lumped.link_names
    for a, b in zip(again.links, lumped.links, strict=True):
        assert a.inertia.allclose(b.inertia)


# ------------------------------------------------------------------------------------------ validation
def test_model_validation_errors() -> None:
    unit = SpatialInertia(1.0, [0, 0, 0], np.eye(3) * 0.01)
    T = Transform.identity()
    a, b, c = Link("a", unit), Link("b", unit), Link("c", unit)

    def rev(name: str, parent: str, child: str) -> Joint:
        return Joint(name, "revolute", parent, child, T, axis=[1, 0, 0])

    def fix(name: str, parent: str, child: str) -> Joint:
        return Joint(name, "fixed", parent, child, T)

    cases = [
        # duplicate names
        (bridge.ModelError, r"duplicate name 'a'", lambda: Model("m", [a, Link("a", unit)], [], [], "a", ())),
        (
            bridge.ModelError,
            r"duplicate name 'b': used by a link and a frame",
            lambda: Model("m", [a, b], [fix("j", "a", "b")], [Frame("b", "a", T)], "a", ()),
        ),
        (
            bridge.ModelError,
            r"duplicate name 'f': used by a frame and a frame",
            lambda: Model("m", [a], [], [Frame("f", "a", T), Frame("f", "a", T)], "a", ()),
        ),
        (
            bridge.ModelError,
            r"duplicate joint name 'j'",
            lambda: Model("m", [a, b, c], [fix("j", "a", "b"), fix("j", "a", "c")], [], "a", ()),
        ),
        # topology
        (
            bridge.ModelError,
            r"link 'c' has two parent joints \('j1' and 'j2'\)",
            lambda: Model("m", [a, b, c], [fix("j1", "a", "c"), fix("j2", "b", "c")], [], "a", ()),
        ),
        (
            bridge.ModelError,
            r"links not connected to the base 'a': \['c'\]",
            lambda: Model("m", [a, b, c], [fix("j1", "a", "b")], [], "a", ()),
        ),
        (  # a loop that does not reach the base
            bridge.ModelError,
            r"links not connected to the base 'a': \['b', 'c'\].*loop",
            lambda: Model("m", [a, b, c], [fix("j1", "b", "c"), fix("j2", "c", "b")], [], "a", ()),
        ),
        (  # a loop through the base
            bridge.ModelError,
            r"joint 'j2' has the base link 'a' as its child",
            lambda: Model("m", [a, b], [fix("j1", "a", "b"), fix("j2", "b", "a")], [], "a", ()),
        ),
        (
            bridge.ModelError,
            r"joint 'j1' refers to unknown link 'q'",
            lambda: Model("m", [a, b], [fix("j1", "a", "q")], [], "a", ()),
        ),
        (bridge.UnknownNameError, r"unknown base link 'z'", lambda: Model("m", [a], [], [], "z", ())),
        (
            bridge.UnknownNameError,
            r"unknown base link 'bb'.*did you mean 'b'",
            lambda: Model("m", [a, b], [fix("j", "a", "b")], [], "bb", ()),
        ),
        (
            bridge.ModelError,
            r"frame 'f' is attached to unknown link 'q'",
            lambda: Model("m", [a], [], [Frame("f", "q", T)], "a", ()),
        ),
        # joint data
        (
            bridge.ModelError,
            r"joint 'j': axis must be a non-zero vector",
            lambda: Joint("j", "revolute", "a", "b", T, axis=[0, 0, 0]),
        ),
        (
            bridge.ModelError,
            r"joint 'p': axis must be a non-zero vector",
            lambda: Joint("p", "prismatic", "a", "b", T, axis=[0, 0, 1e-14]),
        ),
        (bridge.ModelError, r"joint 'j': unknown kind 'screw'", lambda: Joint("j", "screw", "a", "b", T)),
        # DOF list
        (
            bridge.ModelError,
            r"movable joints missing from the DOF list: \['j'\]",
            lambda: Model("m", [a, b], [rev("j", "a", "b")], [], "a", ()),
        ),
        (
            bridge.ModelError,
            r"joint 'j' is fixed",
            lambda: Model("m", [a, b], [fix("j", "a", "b")], [], "a", ("j",)),
        ),
        (
            bridge.ModelError,
            r"joint 'j' appears twice in the DOF list",
            lambda: Model("m", [a, b], [rev("j", "a", "b")], [], "a", ("j", "j")),
        ),
        (
            bridge.UnknownNameError,
            r"unknown joint 'jj'.*did you mean 'j'",
            lambda: Model("m", [a, b], [rev("j", "a", "b")], [], "a", ("j", "jj")),
        ),
    ]
    for error, pattern, build in cases:
        with pytest.raises(error, match=pattern):
            build()
    # the families are also the built-in exceptions a caller expects
    with pytest.raises(ValueError):
        Model("m", [a, Link("a", unit)], [], [], "a", ())
    with pytest.raises(KeyError):
        Model("m", [a], [], [], "z", ())


def test_lookup_errors_name_the_missing_item() -> None:
    model = small_model(np.random.default_rng(17))
    with pytest.raises(bridge.UnknownNameError, match=r"unknown frame 'tol'.*'tool'"):
        model.frame("tol")
    with pytest.raises(bridge.UnknownNameError, match=r"unknown link 'aa'.*did you mean 'a'"):
        model.link("aa")
    with pytest.raises(bridge.UnknownNameError, match=r"unknown joint 'j9'.*did you mean"):
        model.joint("j9")
    with pytest.raises(bridge.UnknownNameError, match=r"unknown DOF 'jf'"):
        model.dof_index("jf")
    assert model.frame("a").link == "a" and model.frame("tool").link == "e"
    assert model.dof_index("j3") == 2


# ------------------------------------------------------------------------------------------ kinematics
def test_forward_kinematics_is_batched() -> None:
    model = random_model(8, 4)
    rng = np.random.default_rng(18)
    s = rng.uniform(-2, 2, (5, 3, model.n_dofs))
    fk = model.forward_kinematics(s)
    assert all(H.matrix.shape == (5, 3, 4, 4) for H in fk.values())
    assert set(fk) == set(model.link_names)
    for i in range(5):
        for k in range(3):
            single = model.forward_kinematics(s[i, k])
            for name in model.link_names:
                np.testing.assert_array_equal(fk[name].matrix[i, k], single[name].matrix)
    np.testing.assert_array_equal(fk[model.base].matrix, np.broadcast_to(np.eye(4), (5, 3, 4, 4)))
    with pytest.raises(bridge.ShapeError, match="joint positions s"):
        model.forward_kinematics(np.zeros(model.n_dofs + 1))


def test_forward_kinematics_composes_joint_transforms() -> None:
    """base_H_child = base_H_parent @ parent_H_child(s) along every joint, in DOF order."""
    for seed in range(5):
        model = random_model(9, 100 + seed)
        s = np.random.default_rng(seed).uniform(-2, 2, model.n_dofs)
        fk = model.forward_kinematics(s)
        for j in model.joints:
            pos = s[model.dof_index(j.name)] if j.movable else 0.0
            np.testing.assert_allclose(
                fk[j.child].matrix, fk[j.parent].matrix @ _expected_joint_transform(j, pos), atol=1e-12
            )


def test_massless_dofs_and_subtree_masses() -> None:
    rng = np.random.default_rng(19)
    inertia = random_inertia(rng)
    zero = SpatialInertia.zero()
    links = [Link("a", inertia), Link("b", zero), Link("c", zero), Link("d", inertia), Link("e", zero)]
    joints = [
        Joint("j1", "revolute", "a", "b", random_transform(rng), axis=[1, 0, 0]),
        Joint("j2", "prismatic", "b", "c", random_transform(rng), axis=[0, 1, 0]),
        Joint("j3", "continuous", "b", "d", random_transform(rng), axis=[0, 0, 1]),
        Joint("j4", "fixed", "a", "e", random_transform(rng)),
    ]
    model = Model("m", links, joints, (), "a", ("j3", "j2", "j1"))
    assert model.massless_dofs == ("j2",)  # j1 moves d; j2 moves only the massless c
    masses = _subtree_masses(model)
    assert masses["c"] == 0.0 and masses["b"] == pytest.approx(inertia.mass)


def test_synthetic_links_survive_every_derived_model() -> None:
    """``synthetic_links`` (links bridge created, e.g. an MJCF body's joint chain) is kept by
    re-rooting, DOF selection, base changes, lumping and mimic coupling; it must be a set of names."""
    from bridge.model.mimic import Mimic, couple

    model = random_model(6, seed=3, joint_kinds=("revolute",))
    marked = model.replace(synthetic_links={"link2", "link3"})
    assert model.synthetic_links == frozenset() and marked.synthetic_links == {"link2", "link3"}
    leaf = marked.links[-1].name
    derived = (
        marked.with_base(leaf),
        marked.with_dofs(marked.dof_names[1:]),
        marked.with_fixed_base(),
        marked.lumped(),
        couple(marked, [Mimic(marked.dof_names[1], marked.dof_names[0], 2.0, 0.0)]),
    )
    for m in derived:
        assert m.synthetic_links == {"link2", "link3"}
    for bad in ("link2", 7, [["link2"]], [3]):
        with pytest.raises(bridge.ModelError, match="synthetic_links"):
            model.replace(synthetic_links=bad)
