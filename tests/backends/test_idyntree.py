"""iDynTree backend: models both ways, axis conventions, dynamics against iDynTree's own URDF loader."""

from __future__ import annotations

import dataclasses
import sysconfig
from functools import cache
from pathlib import Path

import idyntree.bindings as idyn
import numpy as np
import pytest

import bridge
from bridge.backends.idyntree import (
    bias_forces,
    from_idyntree,
    gravity_forces,
    idyntree_representation,
    kindyn,
    mass_matrix,
    set_idyntree_state,
    to_idyntree,
)
from bridge.model.model import Frame, Joint, JointKind, JointLimits, Link, Model
from bridge.spatial import SpatialInertia, Transform
from tests.helpers import assert_close, random_transform, small_model

REPS = ("body", "inertial", "mixed")
GRAVITY = np.array([0.0, 0.0, -9.81])


# ---------------------------------------------------------------------------------- models
def _inertia(rng: np.random.Generator, mass: float | None = None) -> SpatialInertia:
    A = rng.normal(size=(3, 3))
    Q, _ = np.linalg.qr(A)
    moments = rng.uniform(0.05, 0.2, 3)
    moments[2] = min(moments[2], moments[0] + moments[1])
    m = rng.uniform(0.5, 3.0) if mass is None else mass
    return SpatialInertia(m, rng.normal(scale=0.2, size=3), Q @ np.diag(moments) @ Q.T)


def rich_model(seed: int = 3) -> Model:
    """Base not first, every joint kind, non-zero axis origins everywhere (also prismatic), limits of
    every shape, a locked joint, a massless link, frames on several links, a shuffled DOF order."""
    rng = np.random.default_rng(seed)
    names = ["l0", "base", "l2", "l3", "l4", "l5", "l6", "l7", "l8"]
    links = [Link(n, _inertia(rng)) for n in names]
    links[7] = Link("l7", SpatialInertia(0.0, np.zeros(3), np.zeros((3, 3))))

    def axis() -> np.ndarray:
        return rng.normal(size=3)

    joints = [
        Joint(
            "r1",
            "revolute",
            "base",
            "l0",
            random_transform(rng),
            axis(),
            axis(),
            JointLimits(-1.0, 2.0, 10, 3),
        ),
        Joint("p1", "prismatic", "l0", "l2", random_transform(rng), axis(), axis(), JointLimits(-0.3, 0.4)),
        Joint(
            "c1", "continuous", "base", "l3", random_transform(rng), axis(), axis(), JointLimits(effort=7.0)
        ),
        Joint("f1", "fixed", "l3", "l4", random_transform(rng)),
        Joint("r2", "revolute", "l4", "l5", random_transform(rng), axis(), axis(), JointLimits(lower=-0.5)),
        Joint(
            "r3", "revolute", "l5", "l6", random_transform(rng), axis(), axis(), JointLimits(-2, 2, None, 9)
        ),
        Joint("p2", "prismatic", "l2", "l7", random_transform(rng), axis(), axis()),
        Joint("r4", "revolute", "l7", "l8", random_transform(rng), [0, 0, 1], axis(), JointLimits(-3, 3)),
    ]
    frames = [
        Frame("tool", "l6", random_transform(rng)),
        Frame("imu", "base", random_transform(rng)),
        Frame("tip", "l8", random_transform(rng)),
    ]
    model = Model("rich", links, joints, frames, "base", ("r4", "p1", "c1", "r2", "r1", "r3", "p2"))
    return model.with_dofs(("r4", "p1", "c1", "r1", "r3", "p2"), locked={"r2": 0.3})


def reference_models() -> dict[str, Model]:
    rng = np.random.default_rng(11)
    small = small_model(rng)
    return {
        "small": small,
        "small_rerooted": small.with_base("f"),
        "rich": rich_model(),
        "rich_rerooted": rich_model().with_base("l8"),
        "rich_fixed": rich_model(5).with_fixed_base(),
        "random_12": bridge.random_model(12, seed=1),
        "random_25_rerooted": _rerooted(bridge.random_model(25, seed=2)),
    }


def _rerooted(model: Model) -> Model:
    return model.with_base(model.links[-1].name)


MODELS = reference_models()


def random_states(model: Model, rng: np.random.Generator, count: int) -> list[tuple[np.ndarray, ...]]:
    n = model.n_dofs
    return [
        (
            random_transform(rng).matrix,
            rng.uniform(-2, 2, n),
            rng.normal(size=6),
            rng.normal(size=n),
            GRAVITY,
        )
        for _ in range(count)
    ]


def idyn_dof_names(im) -> list[str]:
    movable = [k for k in range(im.getNrOfJoints()) if im.getJoint(k).getNrOfDOFs() > 0]
    return [im.getJointName(k) for k in sorted(movable, key=lambda k: im.getJoint(k).getDOFsOffset())]


def idyn_link_names(im) -> list[str]:
    return [im.getLinkName(i) for i in range(im.getNrOfLinks())]


def kd_of(im, rep: str, base: str | None = None):
    kd = idyn.KinDynComputations()
    assert kd.loadRobotModel(im)
    assert kd.setFrameVelocityRepresentation(idyntree_representation(rep))
    if base is not None:
        assert kd.setFloatingBase(base)
    return kd


def dynamics(kd, state) -> tuple[np.ndarray, np.ndarray]:
    set_idyntree_state(kd, *state)
    return mass_matrix(kd), bias_forces(kd)


# ---------------------------------------------------------------------------------- round trip
def assert_same_model(a: Model, b: Model, rng: np.random.Generator) -> None:
    assert b.base == a.base
    assert b.dof_names == a.dof_names
    assert b.floating == a.floating
    assert b.link_names == a.link_names
    for la, lb in zip(a.links, b.links, strict=True):
        np.testing.assert_allclose(lb.inertia.as_matrix(), la.inertia.as_matrix(), rtol=0, atol=1e-12)
    assert sorted(b.joint_names) == sorted(a.joint_names)
    for ja in a.joints:
        jb = b.joint(ja.name)
        assert (jb.parent, jb.child) == (ja.parent, ja.child), ja.name
        expected_kind = ja.kind
        if ja.kind is JointKind.REVOLUTE and ja.limits.lower is None and ja.limits.upper is None:
            expected_kind = JointKind.CONTINUOUS  # documented: iDynTree has no continuous type
        assert jb.kind is expected_kind, ja.name
        np.testing.assert_allclose(jb.parent_H_child.matrix, ja.parent_H_child.matrix, rtol=0, atol=1e-12)
        if ja.movable:
            np.testing.assert_allclose(jb.axis, ja.axis, rtol=0, atol=1e-12)
            np.testing.assert_allclose(jb.axis_origin, ja.axis_origin, rtol=0, atol=1e-12)
            want = ja.limits
            if ja.kind is JointKind.CONTINUOUS:
                want = dataclasses.replace(want, lower=None, upper=None)
            assert jb.limits == want, ja.name
    assert [f.name for f in b.frames] == [f.name for f in a.frames]
    for fa, fb in zip(a.frames, b.frames, strict=True):
        assert fb.link == fa.link
        np.testing.assert_allclose(fb.link_H_frame.matrix, fa.link_H_frame.matrix, rtol=0, atol=1e-12)
    s = rng.uniform(-3, 3, (6, a.n_dofs))
    fa, fb = a.forward_kinematics(s), b.forward_kinematics(s)
    for link in a.link_names:
        np.testing.assert_allclose(fb[link].matrix, fa[link].matrix, rtol=0, atol=1e-12, err_msg=link)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_round_trip_neutral_idyntree_neutral(name: str) -> None:
    model = MODELS[name]
    im = to_idyntree(model)
    assert idyn_dof_names(im) == list(model.dof_names)
    assert im.getLinkName(im.getDefaultBaseLink()) == model.base
    assert im.getNrOfFrames() == len(model.links) + len(model.frames)
    back = from_idyntree(im, floating=model.floating)
    assert_same_model(model, back, np.random.default_rng(0))
    # and once more through iDynTree: the same numbers
    assert_same_model(
        model, from_idyntree(to_idyntree(back), floating=model.floating), np.random.default_rng(1)
    )


@pytest.mark.parametrize("seed", range(8))
def test_round_trip_random_models(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    model = bridge.random_model(int(rng.integers(1, 30)), seed=seed)
    if seed % 2:
        model = model.with_base(model.links[int(rng.integers(len(model.links)))].name)
    assert_same_model(model, from_idyntree(to_idyntree(model)), rng)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_from_idyntree_with_other_base_equals_with_base(name: str) -> None:
    """Reading an iDynTree model from another base reverses joints exactly as Model.with_base."""
    model = MODELS[name]
    im = to_idyntree(model)
    rng = np.random.default_rng(8)
    for base in rng.choice(model.link_names, min(3, len(model.links)), replace=False):
        expected = model.with_base(str(base))
        assert_same_model(expected, from_idyntree(im, base=str(base), floating=model.floating), rng)


def test_joint_data_in_idyntree() -> None:
    """What iDynTree itself reports: axis in child coordinates, motion subspace, limits, offsets."""
    model = MODELS["rich"]
    im = to_idyntree(model)
    for j in model.joints:
        J = im.getJoint(im.getJointIndex(j.name))
        c, p = im.getLinkIndex(j.child), im.getLinkIndex(j.parent)
        np.testing.assert_allclose(
            J.getRestTransform(p, c).asHomogeneousTransform().toNumPy(), j.parent_H_child.matrix, atol=1e-15
        )
        if not j.movable:
            assert J.isFixedJoint() and J.getNrOfDOFs() == 0
            continue
        assert J.getDOFsOffset() == model.dof_index(j.name)
        typed = J.asRevoluteJoint() if j.kind.rotational else J.asPrismaticJoint()
        assert typed is not None and (J.isRevoluteJoint() if j.kind.rotational else J.isPrismaticJoint())
        axis = typed.getAxis(c, p)
        np.testing.assert_allclose(axis.getDirection().toNumPy(), j.axis, atol=1e-15)
        np.testing.assert_allclose(axis.getOrigin().toNumPy(), j.axis_origin, atol=1e-15)
        # velocity of the child w.r.t. the parent per unit joint velocity, child coordinates
        np.testing.assert_allclose(
            J.getMotionSubspaceVector(0, c, p).toNumPy(), j.motion_subspace, atol=1e-15
        )
        s = idyn.VectorDynSize(np.full(model.n_dofs, 0.7))
        np.testing.assert_allclose(
            J.getTransform(s, p, c).asHomogeneousTransform().toNumPy(), j.transform(0.7).matrix, atol=1e-14
        )
    r1 = im.getJoint(im.getJointIndex("r1"))
    assert r1.hasPosLimits() and (r1.getMinPosLimit(0), r1.getMaxPosLimit(0)) == (-1.0, 2.0)
    assert r1.hasEffortLimits() and r1.getEffortLimit(0) == 10.0
    assert r1.hasVelocityLimits() and r1.getVelocityLimit(0) == 3.0
    c1 = im.getJoint(im.getJointIndex("c1"))
    assert not c1.hasPosLimits() and c1.getEffortLimit(0) == 7.0 and not c1.hasVelocityLimits()
    # the locked joint is a FixedJoint at the locked pose
    r2 = im.getJoint(im.getJointIndex("r2"))
    assert r2.isFixedJoint()
    locked = MODELS["rich"].joint("r2")
    np.testing.assert_allclose(
        r2.getRestTransform(im.getLinkIndex("l4"), im.getLinkIndex("l5")).asHomogeneousTransform().toNumPy(),
        locked.original.transform(0.3).matrix,
        atol=1e-15,
    )
    back = from_idyntree(im)
    assert back.joint("r3").limits == JointLimits(-2.0, 2.0, None, 9.0)


def test_one_sided_limits_round_trip() -> None:
    model = MODELS["rich"]
    im = to_idyntree(model.with_dofs((*model.dof_names, "r2")))
    J = im.getJoint(im.getJointIndex("r2"))
    assert J.hasPosLimits() and J.getMinPosLimit(0) == -0.5 and J.getMaxPosLimit(0) > 1e300
    assert from_idyntree(im).joint("r2").limits == JointLimits(-0.5, None)


# ---------------------------------------------------------------------------------- kinematics
@pytest.mark.parametrize("name", sorted(MODELS))
def test_idyntree_world_transforms_match_forward_kinematics(name: str) -> None:
    model = MODELS[name]
    rng = np.random.default_rng(7)
    kd = kindyn(model, "mixed")
    for state in random_states(model, rng, 4):
        set_idyntree_state(kd, *state)
        fk = model.forward_kinematics(state[1])
        for frame in model.frame_names:
            link, link_H_frame = model.frame_placement(frame)
            expected = state[0] @ fk[link].matrix @ link_H_frame.matrix
            got = kd.getWorldTransform(frame).asHomogeneousTransform().toNumPy()
            np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12, err_msg=frame)


# ---------------------------------------------------------------------------------- dynamics
@pytest.mark.parametrize("name", ["small", "rich", "random_25_rerooted"])
def test_rerooted_model_equals_idyntree_floating_base(name: str) -> None:
    """to_idyntree(model.with_base(L)) and iDynTree's setFloatingBase(L) give the same M and h."""
    model = MODELS[name]
    rng = np.random.default_rng(5)
    im = to_idyntree(model)
    for new_base in rng.choice(model.link_names, 3, replace=False):
        rerooted = model.with_base(str(new_base))
        for rep in REPS:
            ours, theirs = kindyn(rerooted, rep), kd_of(im, rep, str(new_base))
            for state in random_states(model, rng, 2):
                M1, h1 = dynamics(ours, state)
                M2, h2 = dynamics(theirs, state)
                assert_close(M1, M2, 1e-10, f"M {new_base} {rep}")
                assert_close(h1, h2, 1e-10, f"h {new_base} {rep}")


def test_fixed_base_joint_blocks_do_not_depend_on_representation() -> None:
    """Module docstring: with a zero base velocity the joint blocks are the fixed-base quantities."""
    model = MODELS["rich_fixed"]
    back = from_idyntree(to_idyntree(model), floating=False)
    assert not back.floating and back.nv == model.n_dofs
    rng = np.random.default_rng(2)
    H, s, _, s_dot, g = random_states(model, rng, 1)[0]
    blocks = []
    for rep in REPS:
        kd = kindyn(model, rep)
        set_idyntree_state(kd, H, s, np.zeros(6), s_dot, g)
        M, h = mass_matrix(kd), bias_forces(kd)
        blocks.append((M[6:, 6:], h[6:], gravity_forces(kd)[6:]))
    for M, h, gr in blocks[1:]:
        assert_close(M, blocks[0][0], 1e-12, "M_ss")
        assert_close(h, blocks[0][1], 1e-12, "h_s")
        assert_close(gr, blocks[0][2], 1e-12, "g_s")
    # and the bias forces minus gravity vanish at zero joint velocity
    kd = kindyn(model, "body")
    set_idyntree_state(kd, H, s, np.zeros(6), np.zeros(model.n_dofs), g)
    assert_close(bias_forces(kd), gravity_forces(kd), 1e-13, "h(0) = g")


# ---------------------------------------------------------------------------------- real robots
def _erd_robots() -> Path:
    return Path(sysconfig.get_paths()["purelib"]) / "cmeel.prefix" / "share" / "example-robot-data" / "robots"


def robot_path(name: str) -> str:
    import icub_models

    if name in icub_models.get_robot_names():
        return str(icub_models.get_model_file(name))
    special = {
        "talos_reduced": "talos_data/robots/talos_reduced.urdf",
        "anymal_c": "anymal_c_simple_description/urdf/anymal.urdf",
    }
    if name in special:
        return str(_erd_robots() / special[name])
    (path,) = sorted(_erd_robots().rglob(f"{name}.urdf"))
    return str(path)


DEFAULT_ROBOTS = ["iCubGazeboV2_5", "talos_reduced", "panda", "ur5_robot", "solo12", "anymal_c"]


def all_robots() -> list[str]:
    import icub_models

    erd = sorted(str(p.relative_to(_erd_robots())) for p in _erd_robots().rglob("*.urdf"))
    return sorted(icub_models.get_robot_names()) + erd


@cache
def idyn_loaded(path: str, joints: tuple[str, ...] | None = None):
    loader = idyn.ModelLoader()
    ok = (
        loader.loadModelFromFile(path)
        if joints is None
        else loader.loadReducedModelFromFile(path, list(joints))
    )
    assert ok, path
    return loader.model().copy()


@cache
def bridge_loaded(path: str) -> Model:
    # as iDynTree's loader: mimic joints are independent DOFs, inertias are taken as written
    # (anymal_c's camera violates the triangle inequality)
    return bridge.load_urdf(path, mimic="independent", check_inertia=False)


def as_loader_sees(model: Model, im) -> Model:
    """The model as iDynTree's full-model loader sees it.

    iDynTree's loader turns massless leaf links into frames and so drops any rotational inertia
    they carry (bolt's feet: mass 0, I != 0): those links get a zero inertia here.
    """
    theirs = set(idyn_link_names(im))
    links = []
    for link in model.links:
        if link.name not in theirs:
            assert link.mass == 0.0, f"iDynTree dropped link {link.name!r} of mass {link.mass}"
            link = Link(link.name, SpatialInertia.zero())
        links.append(link)
    return dataclasses.replace(model, links=tuple(links))


def common_base(model: Model, im) -> tuple[Model, str]:
    """Our base, or (when iDynTree turned our base link into a frame) the link that frame sits on."""
    theirs = set(idyn_link_names(im))
    if model.base in theirs:
        return model, model.base
    link = im.getLinkName(im.getFrameLink(im.getFrameIndex(model.base)))
    return model.with_base(link), link


def compare_with_idyntree_loader(path: str, samples: int = 2, seed: int = 0) -> None:
    model = bridge_loaded(path)
    im = idyn_loaded(path)
    model, base = common_base(as_loader_sees(model, im), im)
    theirs_dofs = idyn_dof_names(im)
    assert sorted(theirs_dofs) == sorted(model.dof_names)
    perm = np.array([model.dof_index(d) for d in theirs_dofs], dtype=int)
    full = np.concatenate([np.arange(6), 6 + perm])
    rng = np.random.default_rng(seed)
    for rep in REPS:
        ours, theirs = kindyn(model, rep), kd_of(im, rep, base)
        for H, s, v, sd, g in random_states(model, rng, samples):
            M1, h1 = dynamics(ours, (H, s, v, sd, g))
            M2, h2 = dynamics(theirs, (H, s[perm], v, sd[perm], g))
            assert_close(M1[np.ix_(full, full)], M2, 1e-10, f"M {rep}")
            assert_close(h1[full], h2, 1e-10, f"h {rep}")


@pytest.mark.parametrize("robot", DEFAULT_ROBOTS)
def test_against_idyntree_urdf_loader(robot: str) -> None:
    compare_with_idyntree_loader(robot_path(robot))


def compare_from_idyntree(path: str, seed: int = 0) -> None:
    im = idyn_loaded(path)
    model = from_idyntree(im)
    assert model.dof_names == tuple(idyn_dof_names(im))
    assert model.base == im.getLinkName(im.getDefaultBaseLink())
    rng = np.random.default_rng(seed)
    for rep in REPS:
        ours, theirs = kindyn(model, rep), kd_of(im, rep)
        for state in random_states(model, rng, 2):
            M1, h1 = dynamics(ours, state)
            M2, h2 = dynamics(theirs, state)
            assert_close(M1, M2, 1e-10, f"M {rep}")
            assert_close(h1, h2, 1e-10, f"h {rep}")


@pytest.mark.parametrize("robot", DEFAULT_ROBOTS)
def test_from_idyntree_loader_model(robot: str) -> None:
    compare_from_idyntree(robot_path(robot))


@pytest.mark.parametrize("robot", ["iCubGazeboV2_5", "talos_reduced"])
def test_from_idyntree_reduced_model(robot: str) -> None:
    path = robot_path(robot)
    full = idyn_loaded(path)
    rng = np.random.default_rng(4)
    joints = tuple(str(j) for j in rng.permutation(idyn_dof_names(full))[:12])
    im = idyn_loaded(path, joints)
    model = from_idyntree(im)
    assert model.dof_names == joints
    for rep in REPS:
        ours, theirs = kindyn(model, rep), kd_of(im, rep)
        for state in random_states(model, rng, 2):
            M1, h1 = dynamics(ours, state)
            M2, h2 = dynamics(theirs, state)
            assert_close(M1, M2, 1e-10, f"M {rep}")
            assert_close(h1, h2, 1e-10, f"h {rep}")
    # the same reduction done by bridge (other joints locked at 0)
    reduced = bridge_loaded(path).with_dofs(joints)
    reduced, base = common_base(reduced, im)
    for rep in REPS:
        ours, theirs = kindyn(reduced, rep), kd_of(im, rep, base)
        for state in random_states(model, rng, 1):
            M1, h1 = dynamics(ours, state)
            M2, h2 = dynamics(theirs, state)
            assert_close(M1, M2, 1e-10, f"reduced M {rep}")
            assert_close(h1, h2, 1e-10, f"reduced h {rep}")


def _deep_massive_link(model: Model, im) -> str:
    """The link furthest from the base (by movable joints) that iDynTree also has as a link."""
    names = set(idyn_link_names(im))
    depth = {model.base: 0}
    for j in model.depth_first_joints:
        depth[j.child] = depth[j.parent] + int(j.movable)
    candidates = [n for n in model.link_names if n in names and model.link(n).mass > 0]
    return max(candidates, key=lambda n: (depth[n], n))


@pytest.mark.parametrize("robot", ["iCubGazeboV2_5", "talos_reduced", "panda"])
def test_rerooted_robot_against_idyntree_floating_base(robot: str) -> None:
    path = robot_path(robot)
    model = bridge_loaded(path)
    im = idyn_loaded(path)
    link = _deep_massive_link(model, im)
    rerooted = model.with_base(link)
    assert any(j.movable and np.linalg.norm(j.axis_origin) > 1e-3 for j in rerooted.joints)
    theirs_dofs = idyn_dof_names(im)
    perm = np.array([rerooted.dof_index(d) for d in theirs_dofs], dtype=int)
    full = np.concatenate([np.arange(6), 6 + perm])
    rng = np.random.default_rng(9)
    for rep in REPS:
        ours, theirs = kindyn(rerooted, rep), kd_of(im, rep, link)
        for H, s, v, sd, g in random_states(rerooted, rng, 2):
            M1, h1 = dynamics(ours, (H, s, v, sd, g))
            M2, h2 = dynamics(theirs, (H, s[perm], v, sd[perm], g))
            assert_close(M1[np.ix_(full, full)], M2, 1e-10, f"M {link} {rep}")
            assert_close(h1[full], h2, 1e-10, f"h {link} {rep}")


@pytest.mark.slow
@pytest.mark.parametrize("robot", all_robots())
def test_sweep_all_robots(robot: str) -> None:
    path = robot_path(robot) if not robot.endswith(".urdf") else str(_erd_robots() / robot)
    try:
        bridge_loaded(path)
    except bridge.URDFError:  # ur3.urdf has no links at all: iDynTree reads an empty model
        assert idyn_loaded(path).getNrOfLinks() == 0
        with pytest.raises(bridge.ModelError, match="no links"):
            from_idyntree(idyn_loaded(path))
        return
    compare_with_idyntree_loader(path, samples=1)
    compare_from_idyntree(path)


# ---------------------------------------------------------------------------------- helpers and errors
def test_kindyn_settings() -> None:
    model = MODELS["rich"]
    for rep, value in zip(
        REPS,
        (idyn.BODY_FIXED_REPRESENTATION, idyn.INERTIAL_FIXED_REPRESENTATION, idyn.MIXED_REPRESENTATION),
        strict=True,
    ):
        kd = kindyn(model, rep)
        assert kd.getFrameVelocityRepresentation() == value
        assert kd.getFloatingBase() == "base"
        assert kd.getNrOfDegreesOfFreedom() == model.n_dofs
        described = kd.getDescriptionOfDegreesOfFreedom().splitlines()
        assert [line.split("Name: ")[1] for line in described] == list(model.dof_names)
        assert idyntree_representation(value) == value
        assert idyntree_representation(bridge.Representation(rep)) == value
    assert idyntree_representation("LOCAL_WORLD_ALIGNED") == idyn.MIXED_REPRESENTATION


def test_state_helpers_shapes_and_values() -> None:
    model = MODELS["small"]
    rng = np.random.default_rng(3)
    kd = kindyn(model, "inertial")
    H, s, v, sd, g = random_states(model, rng, 1)[0]
    set_idyntree_state(kd, Transform(H), s, v, sd, g)
    np.testing.assert_allclose(kd.getWorldBaseTransform().asHomogeneousTransform().toNumPy(), H, atol=1e-15)
    np.testing.assert_allclose(kd.getBaseTwist().toNumPy(), v, atol=1e-15)
    M, h = mass_matrix(kd), bias_forces(kd)
    assert M.shape == (model.nv, model.nv) and h.shape == (model.nv,)
    assert_close(M, M.T, 1e-14, "M symmetric")
    assert np.all(np.linalg.eigvalsh(M) > 0)
    # h = ID(nu_dot = 0) and M a + h = ID(a), with iDynTree's own inverse dynamics
    a = rng.normal(size=model.nv)
    ext = idyn.LinkWrenches(kd.model())
    ext.zero()
    tau = idyn.FreeFloatingGeneralizedTorques(kd.model())
    assert kd.inverseDynamics(a[:6], a[6:], ext, tau)
    assert_close(np.concatenate([tau.baseWrench().toNumPy(), tau.jointTorques().toNumPy()]), M @ a + h, 1e-12)


def test_bad_representation_names_valid_values() -> None:
    with pytest.raises(bridge.BridgeError, match="'body', 'inertial', 'mixed'") as err:
        kindyn(MODELS["small"], "sideways")
    assert isinstance(err.value, ValueError)
    with pytest.raises(bridge.InvalidValueError, match="unknown velocity representation 7"):
        idyntree_representation(7)


def test_model_idyntree_rejects_raises_backend_error() -> None:
    model = MODELS["small"]
    bad = dataclasses.replace(model)
    # bypass bridge's own validation: a frame named like a link, which iDynTree refuses
    object.__setattr__(bad, "frames", (*model.frames, Frame("b", "a", Transform.identity())))
    with pytest.raises(bridge.BackendError, match="iDynTree rejected frame 'b'"):
        to_idyntree(bad)
    with pytest.raises(bridge.BackendError, match="expects a bridge Model"):
        to_idyntree("model.urdf")  # type: ignore[arg-type]


def _idyn_model(n_links: int, edges: list[tuple[int, int]], spherical: bool = False):
    im = idyn.Model()
    for i in range(n_links):
        link = idyn.Link()
        link.setInertia(idyn.SpatialInertia(1.0, idyn.Position(0, 0, 0), idyn.RotationalInertia(np.eye(3))))
        assert im.addLink(f"L{i}", link) == i
    for k, (a, b) in enumerate(edges):
        J = idyn.SphericalJoint() if spherical and k == 0 else idyn.RevoluteJoint()
        J.setAttachedLinks(a, b)
        J.setRestTransform(idyn.Transform.Identity())
        if not (spherical and k == 0):
            J.setAxis(idyn.Axis(idyn.Direction(0, 0, 1), idyn.Position(0, 0, 0)), b, a)
        assert im.addJoint(f"J{k}", J) == k
    return im


def test_from_idyntree_errors() -> None:
    with pytest.raises(bridge.ModelError, match="joint 'J2' closes a kinematic loop"):
        from_idyntree(_idyn_model(3, [(0, 1), (1, 2), (2, 0)]))
    with pytest.raises(bridge.ModelError, match=r"not connected.*\['L3'\]"):
        from_idyntree(_idyn_model(4, [(0, 1), (1, 2)]))
    with pytest.raises(bridge.ModelError, match="no links"):
        from_idyntree(idyn.Model())
    with pytest.raises(bridge.UnknownNameError, match="unknown base link 'L7'"):
        from_idyntree(_idyn_model(3, [(0, 1), (1, 2)]), base="L7")
    with pytest.raises(bridge.UnsupportedError, match="'J0' is a spherical joint"):
        from_idyntree(_idyn_model(2, [(0, 1)], spherical=True))
    with pytest.raises(bridge.BackendError, match="expects an iDynTree Model"):
        from_idyntree(MODELS["small"])
    ok = from_idyntree(_idyn_model(3, [(0, 1), (1, 2)]), base="L2", floating=False, name="chain")
    assert (ok.base, ok.name, ok.floating) == ("L2", "chain", False)
    assert [(j.parent, j.child) for j in ok.joints] == [("L1", "L0"), ("L2", "L1")]
    assert all(j.kind is JointKind.CONTINUOUS for j in ok.joints)


def test_from_idyntree_accepts_loader_and_kindyn() -> None:
    model = MODELS["small"]
    assert from_idyntree(kindyn(model, "body")).dof_names == model.dof_names
    path = robot_path("panda")
    loader = idyn.ModelLoader()
    assert loader.loadModelFromFile(path)
    assert from_idyntree(loader).dof_names == tuple(idyn_dof_names(idyn_loaded(path)))


def test_state_helper_errors() -> None:
    model = MODELS["small"]
    kd = kindyn(model, "mixed")
    n = model.n_dofs
    with pytest.raises(bridge.ShapeError, match="s: expected shape"):
        set_idyntree_state(kd, np.eye(4), np.zeros(n + 1), np.zeros(6), np.zeros(n))
    with pytest.raises(bridge.ShapeError, match="iDynTree takes one state"):
        set_idyntree_state(kd, np.eye(4), np.zeros((2, n)), np.zeros(6), np.zeros(n))
    with pytest.raises(bridge.ShapeError, match="base_velocity"):
        set_idyntree_state(kd, np.eye(4), np.zeros(n), np.zeros(3), np.zeros(n))
    with pytest.raises(bridge.InvalidValueError, match="gravity: contains NaN"):
        set_idyntree_state(kd, np.eye(4), np.zeros(n), np.zeros(6), np.zeros(n), [0, 0, np.nan])
