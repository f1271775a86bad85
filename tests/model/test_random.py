"""bridge.random_model: reproducible, varied and always dynamically well-posed random trees."""

from __future__ import annotations

import numpy as np
import pytest

import bridge
from bridge.model.model import Joint, JointKind, Model
from bridge.model.random import (
    DEFAULT_JOINT_KINDS,
    _screws_independent,
    random_inertia,
    random_model,
    random_transform,
)
from bridge.spatial import Transform

_AXES = [tuple(v) for v in (*np.eye(3), *(-np.eye(3)))]


def _fingerprint(model: Model) -> list:
    """Every number and name of a model, for exact comparisons."""
    return [
        model.name,
        model.base,
        model.floating,
        model.dof_names,
        [(link.name, link.inertia.parameters.tolist()) for link in model.links],
        [
            (
                j.name,
                j.kind,
                j.parent,
                j.child,
                j.parent_H_child.matrix.tolist(),
                j.axis.tolist(),
                j.axis_origin.tolist(),
                j.limits,
            )
            for j in model.joints
        ],
        [(f.name, f.link, f.link_H_frame.matrix.tolist()) for f in model.frames],
    ]


def _mass_matrix(model: Model, s: np.ndarray) -> np.ndarray:
    """M = sum_i J_i^T I_i J_i with body Jacobians J_i in link coordinates (written out here)."""
    fk = model.forward_kinematics(s)
    base = 6 if model.floating else 0
    M = np.zeros((model.nv, model.nv))
    for link in model.links:
        i_H_base = fk[link.name].inverse()
        J = np.zeros((6, model.nv))
        if model.floating:  # base velocity in base coordinates
            J[:, :6] = i_H_base.motion_matrix()
        name = link.name
        while name != model.base:
            j = model.parent_joint(name)
            if j.movable:
                J[:, base + model.dof_index(j.name)] = (
                    i_H_base @ fk[j.child]
                ).motion_matrix() @ j.motion_subspace
            name = j.parent
        M += J.T @ link.inertia.as_matrix() @ J
    return M


def _parents(model: Model) -> dict[str, str]:
    return {j.child: j.parent for j in model.joints}


def _depth(model: Model) -> int:
    parents = _parents(model)

    def depth(name: str) -> int:
        return 0 if name == model.base else 1 + depth(parents[name])

    return max(depth(n) for n in model.link_names)


def test_same_seed_same_model_and_generators() -> None:
    for seed in range(10):
        assert _fingerprint(random_model(9, seed)) == _fingerprint(random_model(9, seed))
        assert _fingerprint(bridge.random_model(9, seed)) == _fingerprint(random_model(9, seed))
        a = random_model(9, np.random.default_rng(seed))
        b = random_model(9, np.random.default_rng(seed))
        assert _fingerprint(a) == _fingerprint(b)
    # a Generator is advanced: two calls with the same generator give two different models
    rng = np.random.default_rng(0)
    assert _fingerprint(random_model(9, rng)) != _fingerprint(random_model(9, rng))
    # different seeds, different models
    prints = [_fingerprint(random_model(9, seed)) for seed in range(10)]
    assert all(prints[i] != prints[k] for i in range(10) for k in range(i))
    assert len({random_model(9, seed).dof_names for seed in range(10)}) > 5


def test_structure_names_and_sizes() -> None:
    for seed in range(20):
        n = 1 + seed % 13
        model = random_model(n, seed, n_frames=seed % 4, floating=seed % 2 == 0)
        assert model.link_names == tuple(f"link{i}" for i in range(n))
        assert model.joint_names == tuple(f"joint{i}" for i in range(1, n))
        assert [j.child for j in model.joints] == [f"link{i}" for i in range(1, n)]
        for i, j in enumerate(model.joints, start=1):  # parents come first: document order is valid
            assert int(j.parent.removeprefix("link")) < i
        assert model.base == "link0" and model.floating == (seed % 2 == 0)
        assert [f.name for f in model.frames] == [f"frame{k}" for k in range(seed % 4)]
        assert all(f.link in model.link_names for f in model.frames)
        assert sorted(model.dof_names) == sorted(j.name for j in model.joints if j.movable)
    assert len(random_model(9, 0).frames) == 3  # default: a third of the links
    single = random_model(1, 0)
    assert single.n_dofs == 0 and single.joints == () and len(single.frames) == 1
    assert single.total_mass > 0


def test_every_joint_kind_axis_kind_and_shape_appears() -> None:
    kinds: set[JointKind] = set()
    aligned = general = shuffled = branched = 0
    for seed in range(30):
        model = random_model(10, seed)
        kinds |= {j.kind for j in model.joints}
        for j in model.joints:
            if j.movable:
                np.testing.assert_allclose(np.linalg.norm(j.axis), 1.0, rtol=1e-15)
                if tuple(j.axis) in _AXES:
                    aligned += 1
                else:
                    general += 1
                    assert np.max(np.abs(j.axis)) < 1.0
        document = tuple(j.name for j in model.joints if j.movable)
        shuffled += model.dof_names != document
        children = [j.parent for j in model.joints]
        branched += len(set(children)) < len(children)
    assert kinds == {JointKind(k) for k in DEFAULT_JOINT_KINDS}
    assert aligned > 30 and general > 60, (aligned, general)
    every = set()
    for seed in range(10):
        every |= {j.kind for j in random_model(10, seed, joint_kinds=list(JointKind)).joints}
    assert every == set(JointKind)
    assert shuffled > 20
    assert branched > 20


def test_rest_transforms_axis_origins_and_limits() -> None:
    for seed in range(15):
        model = random_model(10, seed)
        for j in model.joints:
            R = j.parent_H_child.rotation
            np.testing.assert_allclose(R @ R.T, np.eye(3), atol=1e-14)
            assert np.linalg.det(R) == pytest.approx(1.0, abs=1e-14)
            assert 0.1 - 1e-12 <= np.linalg.norm(j.parent_H_child.translation) <= 1.0 + 1e-12
            if j.movable:  # axis line off the child origin, within 0.05..0.4 m
                assert 0.05 - 1e-12 <= np.linalg.norm(j.axis_origin) <= 0.4 + 1e-12
            else:
                assert not np.any(j.axis) and not np.any(j.axis_origin)
            if j.kind in (JointKind.REVOLUTE, JointKind.PRISMATIC):
                assert j.limits.lower < 0 < j.limits.upper and j.limits.effort > 0 and j.limits.velocity > 0
            elif j.kind is JointKind.CONTINUOUS:
                assert j.limits.lower is None and j.limits.upper is None and j.limits.effort > 0
        plain = random_model(10, seed, axis_origin=False)
        assert all(not np.any(j.axis_origin) for j in plain.joints)
        assert plain.n_dofs > 0 or seed != 0


def test_inertias_are_physically_consistent() -> None:
    massless = 0
    for seed in range(30):
        model = random_model(10, seed)
        assert model.links[0].mass > 0  # never a massless base, never a massless model
        for link in model.links:
            link.inertia.check_physical(link.name, allow_massless=True)
            if link.mass == 0:
                massless += 1
                assert not np.any(link.inertia.parameters)  # exactly zero
                continue
            assert 0.1 <= link.mass <= 10.0
            moments = np.linalg.eigvalsh(link.inertia.inertia_com)
            assert moments[0] > 0 and moments[0] + moments[1] > moments[2] * (1 + 1e-6)  # strictly
            assert np.all(np.abs(link.inertia.com) <= 0.2)
    assert massless > 10
    assert all(link.mass > 0 for link in random_model(20, 1, massless_probability=0.0).links)
    rng = np.random.default_rng(0)
    for _ in range(50):
        inertia = random_inertia(rng, (2.0, 3.0))
        inertia.check_physical()
        assert 2.0 <= inertia.mass <= 3.0
        assert not np.allclose(inertia.inertia_com, np.diag(np.diag(inertia.inertia_com)))  # rotated axes
    T = random_transform(rng, 0.5)
    assert np.all(np.abs(T.translation) <= 0.5)


@pytest.mark.parametrize("floating", [True, False])
def test_mass_matrix_is_never_singular(floating: bool) -> None:
    """Massless links are placed so that every movable joint moves inertia and none cancel."""
    rng = np.random.default_rng(1)
    worst = np.inf
    for seed in range(40):
        model = random_model(4 + seed % 10, seed, floating=floating, massless_probability=0.4)
        assert model.massless_dofs == ()
        # the rule that guarantees it: a massless link has a massive parent, and is a leaf only behind
        # a fixed joint (so every movable joint's subtree carries mass)
        for j in model.joints:
            if model.link(j.child).mass == 0:
                assert model.link(j.parent).mass > 0
                if not model.child_joints(j.child):
                    assert not j.movable
        if model.nv:
            ev = np.linalg.eigvalsh(_mass_matrix(model, rng.uniform(-2, 2, model.n_dofs)))
            worst = min(worst, ev[0] / ev[-1])
    assert worst > 1e-8


def test_allow_singular_can_leave_joints_moving_no_inertia() -> None:
    singular = 0
    for seed in range(10):
        model = random_model(8, seed, massless_probability=0.9, allow_singular=True, floating=False)
        assert model.links[0].mass > 0
        if model.massless_dofs:
            singular += 1
            ev = np.linalg.eigvalsh(_mass_matrix(model, np.zeros(model.n_dofs)))
            assert ev[0] <= 1e-12 * ev[-1]  # the check above would have caught it
    assert singular > 5


def test_branching_controls_the_shape() -> None:
    for seed in range(5):
        chain = random_model(8, seed, branching=0.0)
        assert [j.parent for j in chain.joints] == [f"link{i}" for i in range(7)]
        assert _depth(chain) == 7
    depths = [_depth(random_model(12, seed, branching=1.0)) for seed in range(10)]
    assert max(depths) < 11  # uniform random recursive trees are bushy
    default = [_depth(random_model(12, seed)) for seed in range(10)]
    assert max(default) >= 6 and np.mean(default) > np.mean(depths)


def test_options() -> None:
    only = random_model(10, 3, joint_kinds=("prismatic", "fixed"))
    assert {j.kind for j in only.joints} <= {JointKind.PRISMATIC, JointKind.FIXED}
    assert {j.kind for j in random_model(6, 3, joint_kinds="continuous").joints} == {JointKind.CONTINUOUS}
    assert {j.kind for j in random_model(6, 3, joint_kinds=[JointKind.REVOLUTE]).joints} == {
        JointKind.REVOLUTE
    }
    rigid = random_model(5, 3, joint_kinds=("fixed",))
    assert rigid.n_dofs == 0 and rigid.forward_kinematics(np.zeros(0))["link4"].matrix.shape == (4, 4)
    ordered = random_model(12, 3, shuffle_dofs=False)
    assert ordered.dof_names == tuple(j.name for j in ordered.joints if j.movable)
    assert len(random_model(6, 3, n_frames=0).frames) == 0


@pytest.mark.parametrize(
    ("kwargs", "error", "pattern"),
    [
        ({"n_links": 0}, bridge.InvalidValueError, r"n_links must be >= 1, got 0"),
        ({"n_links": -3}, bridge.InvalidValueError, r"n_links must be >= 1, got -3"),
        ({"n_links": 2.5}, bridge.InvalidValueError, r"n_links must be an integer >= 1, got 2.5"),
        ({"n_links": True}, bridge.InvalidValueError, r"n_links must be an integer"),
        ({"joint_kinds": ("revolute", "screw")}, bridge.InvalidValueError, r"unknown joint kinds \['screw'"),
        ({"joint_kinds": ()}, bridge.InvalidValueError, r"joint_kinds is empty"),
        (
            {"massless_probability": 1.5},
            bridge.InvalidValueError,
            r"massless_probability must be in \[0, 1\]",
        ),
        ({"branching": -0.1}, bridge.InvalidValueError, r"branching must be in \[0, 1\]"),
        ({"branching": "x"}, bridge.InvalidValueError, r"branching must be a number"),
        ({"n_frames": -1}, bridge.InvalidValueError, r"n_frames must be an integer >= 0, got -1"),
        ({"seed": "abc"}, bridge.InvalidValueError, r"seed must be an int, a numpy Generator or None"),
    ],
)
def test_argument_errors(kwargs: dict, error: type, pattern: str) -> None:
    args = {"n_links": 5, **kwargs}
    with pytest.raises(error, match=pattern):
        random_model(**args)
    with pytest.raises(ValueError):  # also the built-in family
        random_model(**args)


def test_massless_link_screw_check() -> None:
    """Two joints around a massless link must not be able to cancel each other's motion."""
    up = Transform.from_translation([0.0, 0.0, 0.3])
    into = Joint("j1", "revolute", "p", "b", up, axis=[0, 0, 1])
    coaxial = Joint("j2", "continuous", "b", "c", up, axis=[0, 0, -1], axis_origin=[0, 0, 0.2])
    parallel = Joint("j3", "continuous", "b", "c", up, axis=[0, 0, 1], axis_origin=[0.1, 0, 0])
    assert not _screws_independent(into, coaxial)
    assert _screws_independent(into, parallel)
    slide = Joint("p1", "prismatic", "p", "b", up, axis=[1, 0, 0])
    assert not _screws_independent(slide, Joint("p2", "prismatic", "b", "c", up, axis=[-2, 0, 0]))
    assert _screws_independent(slide, Joint("p3", "prismatic", "b", "c", up, axis=[0, 1, 0]))
    assert _screws_independent(slide, into.reversed().reversed())
