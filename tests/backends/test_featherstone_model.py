"""Featherstone models: to/from the neutral Model, joint frames, .mat files, floatbase layout, errors."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.io

import bridge
from bridge.backends.featherstone import (
    FeatherstoneModel,
    HandC,
    floatbase,
    from_featherstone,
    load_mat,
    save_mat,
    to_featherstone,
)
from bridge.backends.featherstone.model import FLOATBASE_JTYPES, JTYPES, joint_frame_rotation
from bridge.model.model import Joint, Link, Model
from bridge.robots import robot_path
from bridge.spatial import SpatialInertia, Transform
from bridge.spatial.conventions import plux
from tests.helpers import assert_close, random_state, small_model


def _icub() -> Model:
    return bridge.load_urdf(robot_path("iCubGazeboV2_5"))


# --------------------------------------------------------------------------- structure
def test_public_names_are_exported() -> None:
    assert bridge.to_featherstone is to_featherstone
    assert bridge.from_featherstone is from_featherstone


def test_floating_layout_on_icub() -> None:
    model = _icub()
    fm = to_featherstone(model)
    n = model.n_dofs
    assert fm.floating and 6 + n == fm.NB and fm.n_real == n and fm.first_real == 7
    assert fm.parent[:6] == (0, 1, 2, 3, 4, 5)
    assert fm.jtype[:6] == FLOATBASE_JTYPES
    assert all(j in JTYPES for j in fm.jtype)
    assert all(0 <= p < i for i, p in enumerate(fm.parent, start=1))
    assert all(p >= 6 for p in fm.parent[6:])
    np.testing.assert_array_equal(fm.Xtree[:6], np.broadcast_to(np.eye(6), (6, 6, 6)))
    assert not np.any(fm.I[:5])
    # body 6 is the base link, its inertia the lumped base inertia (angular first)
    assert fm.body_names[5] == model.base
    # every link and frame of the neutral model has a placement
    assert set(fm.placements) == set(model.frame_names)
    assert fm.placement(model.base) == (6, fm.placements[model.base][1])
    # q order is depth first; dof_perm maps the model's DOF order to it
    assert [fm.joint_names[b - 1] for b in range(7, fm.NB + 1)] == [model.dof_names[k] for k in fm.dof_perm]
    assert abs(fm.total_mass - model.total_mass) < 1e-12 * model.total_mass
    # cached per model
    assert to_featherstone(model) is fm


def test_fixed_base_layout_keeps_the_base_inertia() -> None:
    model = small_model(np.random.default_rng(1), floating=False)
    fm = to_featherstone(model)
    assert not fm.floating and model.n_dofs == fm.NB and fm.first_real == 1
    assert fm.placement(model.base)[0] == 0
    base_mass = fm.base_inertia[3:, 3:].trace() / 3
    assert abs(base_mass - model.link(model.base).mass) < 1e-12
    assert abs(fm.total_mass - model.total_mass) < 1e-12


@pytest.mark.parametrize(
    "axis",
    [
        [1, 0, 0],
        [0, 1, 0],
        [0, 0, 1],
        [-1, 0, 0],
        [0, -1, 0],
        [0, 0, -1],
        [0.3, -0.2, 0.9],
        [-0.5, 0.1, 0.2],
        [0.0, -1.0, 1e-9],
    ],
)
def test_joint_frame_rotation_aligns_the_axis(axis: list[float]) -> None:
    d = np.array(axis, dtype=float)
    d /= np.linalg.norm(d)
    k, R = joint_frame_rotation(d)
    np.testing.assert_allclose(R @ np.eye(3)[k], d, atol=1e-15)
    np.testing.assert_allclose(R.T @ R, np.eye(3), atol=1e-15)
    assert np.linalg.det(R) > 0
    if np.max(np.abs(np.abs(d) - np.eye(3)[k])) == 0.0 and d[k] > 0:
        np.testing.assert_array_equal(R, np.eye(3))  # +x/+y/+z: the child's own axes
    if d[k] < 0 and np.max(np.abs(np.abs(d) - np.eye(3)[k])) == 0.0:
        # a negated axis: 180 degrees about another axis
        np.testing.assert_allclose(np.trace(R), -1.0, atol=1e-15)


def _one_joint_model(axis, kind="revolute") -> Model:
    inertia = SpatialInertia(2.0, [0.1, 0.2, -0.1], np.diag([0.1, 0.2, 0.25]))
    links = [Link("a", inertia), Link("b", inertia)]
    rest = Transform.from_rpy([0.1, -0.4, 0.3], [0.2, 0.0, 0.5])
    joint = Joint("j", kind, "a", "b", rest, axis=axis, axis_origin=[0.1, -0.2, 0.05])
    return Model("one", links, [joint], [], "a", ("j",), floating=False)


@pytest.mark.parametrize("kind", ["revolute", "prismatic"])
@pytest.mark.parametrize("axis", [[0, 0, -1], [0, -1, 0], [-1, 0, 0], [0, 1, 0], [0.2, 0.5, -0.7]])
def test_joint_types_and_frames_reproduce_the_joint_motion(axis, kind) -> None:
    """The body frame (joint frame J) moves as the neutral child moves: J = child @ child_H_J."""
    model = _one_joint_model(axis, kind)
    fm = to_featherstone(model)
    d = np.asarray(axis, float) / np.linalg.norm(axis)
    k = int(np.argmax(np.abs(d)))
    assert fm.jtype == (("P" if kind == "prismatic" else "R") + "xyz"[k],)
    from bridge.backends.featherstone import body_pose

    for s in (0.0, 0.7, -1.3):
        E, r = body_pose(fm, "b", [s])
        H = model.forward_kinematics([s])["b"]
        np.testing.assert_allclose(E, H.rotation.T, atol=1e-14)
        np.testing.assert_allclose(r, H.translation, atol=1e-14)


# --------------------------------------------------------------------------- round trips
def _compare_dynamics(m1: Model, m2: Model, seed: int = 0) -> None:
    """The featherstone engine on m1 and the pinocchio engine on m2 agree on every frame."""
    rng = np.random.default_rng(seed)
    assert m2.dof_names == m1.dof_names
    assert set(m1.frame_names) <= set(m2.frame_names)
    st = random_state(m1, rng, "mixed", batch=(3,))
    kd1 = bridge.KinDyn(m1, "featherstone", "mixed")
    kd2 = bridge.KinDyn(m2, "pinocchio", "mixed")
    for kd in (kd1, kd2):
        kd.set_robot_state(st)
    assert_close(kd2.mass_matrix(), kd1.mass_matrix(), what="M")
    assert_close(kd2.bias_forces(), kd1.bias_forces(), what="h")
    assert_close(kd2.com_position(), kd1.com_position(), what="com")
    for f in m1.frame_names:
        assert_close(kd2.frame_transform(f), kd1.frame_transform(f), what=f"pose of {f}")
        assert_close(kd2.frame_jacobian(f), kd1.frame_jacobian(f), what=f"J of {f}")


@pytest.mark.parametrize("floating", [True, False])
def test_from_featherstone_round_trip_keeps_dynamics_and_frames(floating: bool) -> None:
    model = small_model(np.random.default_rng(2), floating)
    back = from_featherstone(to_featherstone(model))
    assert back.floating == floating and back.base == model.base
    assert set(back.frame_names) == set(model.frame_names)
    assert {j.name for j in back.joints} == set(model.dof_names)
    _compare_dynamics(model, back)


def test_from_featherstone_round_trip_on_random_and_real_models() -> None:
    for model in (bridge.random_model(12, 5), bridge.random_model(9, 6, floating=False), _icub()):
        _compare_dynamics(model, from_featherstone(to_featherstone(model)), seed=1)


def _two_link() -> FeatherstoneModel:
    def mci(m, c, Ic):
        C = np.array([[0, -c[2], c[1]], [c[2], 0, -c[0]], [-c[1], c[0], 0]])
        return np.block([[Ic + m * C @ C.T, m * C], [m * C.T, m * np.eye(3)]])

    return FeatherstoneModel(
        NB=2,
        parent=(0, 1),
        jtype=("Rz", "Ry"),
        Xtree=np.array([plux(np.eye(3), [0, 0, 0.1]), plux(np.eye(3), [1.0, 0, 0])]),
        I=np.array(
            [
                mci(2.0, [0.5, 0, 0], np.diag([0.1, 0.2, 0.3])),
                mci(1.0, [0.4, 0.1, 0], np.diag([0.1, 0.1, 0.1])),
            ]
        ),
        gravity=[0, 0, -9.81],
    )


def test_from_featherstone_without_metadata() -> None:
    fm = _two_link()
    model = from_featherstone(fm)
    assert model.link_names == ("body0", "body1", "body2")
    assert model.dof_names == ("joint1", "joint2") and not model.floating
    assert model.joint("joint2").parent == "body1"
    np.testing.assert_allclose(model.joint("joint2").axis, [0, 1, 0])
    rng = np.random.default_rng(3)
    q, qd = rng.normal(size=2), rng.normal(size=2)
    kd = bridge.KinDyn(model, "pinocchio", "mixed")
    kd.set_state(np.eye(4), q, np.zeros(6), qd)
    H, C = HandC(fm, q, qd)
    assert_close(kd.mass_matrix(), H, what="H")
    assert_close(kd.bias_forces(), C, what="C")
    # and back again: the same spatial_v2 fields
    again = to_featherstone(model)
    np.testing.assert_allclose(again.Xtree, fm.Xtree, atol=1e-15)
    np.testing.assert_allclose(again.I, fm.I, atol=1e-14)
    assert again.jtype == fm.jtype and again.parent == fm.parent


# --------------------------------------------------------------------------- .mat files
def _assert_same_model(a: FeatherstoneModel, b: FeatherstoneModel) -> None:
    assert (a.NB, a.parent, a.jtype, a.floating) == (b.NB, b.parent, b.jtype, b.floating)
    np.testing.assert_array_equal(a.Xtree, b.Xtree)
    np.testing.assert_array_equal(a.I, b.I)
    np.testing.assert_array_equal(a.gravity, b.gravity)
    assert (a.name, a.base, a.body_names, a.joint_names, a.joint_kinds, a.dof_names) == (
        b.name,
        b.base,
        b.body_names,
        b.joint_names,
        b.joint_kinds,
        b.dof_names,
    )
    np.testing.assert_array_equal(a.dof_perm, b.dof_perm)
    np.testing.assert_array_equal(a.base_inertia, b.base_inertia)
    assert a.placements.keys() == b.placements.keys()
    for n, (body, H) in a.placements.items():
        assert b.placements[n][0] == body
        np.testing.assert_array_equal(b.placements[n][1].matrix, H.matrix)


@pytest.mark.parametrize("floating", [True, False])
def test_mat_round_trip(tmp_path, floating: bool) -> None:
    model = small_model(np.random.default_rng(4), floating)
    fm = to_featherstone(model, gravity=[0.1, 0.2, -9.7])
    path = tmp_path / "model.mat"
    save_mat(fm, path)
    _assert_same_model(fm, load_mat(path))
    # the file holds spatial_v2's struct: NB double, parent row, jtype/Xtree/I 1xNB cells, gravity 3x1
    raw = scipy.io.loadmat(str(path))["model"][0, 0]
    assert raw["NB"].dtype == np.float64 and raw["NB"].item() == fm.NB
    assert raw["parent"].shape == (1, fm.NB) and raw["parent"].dtype == np.float64
    for cell in ("jtype", "Xtree", "I"):
        assert raw[cell].shape == (1, fm.NB) and raw[cell].dtype == object
    assert raw["jtype"][0, 0].item() == fm.jtype[0]
    assert raw["Xtree"][0, -1].shape == (6, 6)
    assert raw["gravity"].shape == (3, 1)


def test_mat_round_trip_icub(tmp_path) -> None:
    fm = to_featherstone(_icub())
    save_mat(fm, tmp_path / "icub.mat")
    _assert_same_model(fm, load_mat(tmp_path / "icub.mat"))


def test_save_mat_writes_atomically_and_load_mat_refuses_what_is_not_a_file(tmp_path, monkeypatch) -> None:
    """save_mat writes through bridge._files.write_atomic: a failure mid-way leaves the old file,
    replace=False refuses an existing one, a FIFO is refused (not waited on); load_mat likewise."""
    import errno
    import os

    from bridge import _files

    fm = to_featherstone(small_model(np.random.default_rng(4), True))
    path = tmp_path / "model.mat"
    path.write_bytes(b"old")
    with pytest.raises(bridge.FileAccessError, match="exists"):
        save_mat(fm, path, replace=False)
    with monkeypatch.context() as m:
        m.setattr(_files.os, "fsync", lambda fd: (_ for _ in ()).throw(OSError(errno.ENOSPC, "No space")))
        with pytest.raises(bridge.FileAccessError, match="no space"):
            save_mat(fm, path)
    assert path.read_bytes() == b"old" and [p.name for p in tmp_path.iterdir()] == ["model.mat"]
    save_mat(fm, path)
    _assert_same_model(fm, load_mat(path))
    fifo = tmp_path / "fifo.mat"
    os.mkfifo(fifo)
    for call in (lambda: save_mat(fm, fifo), lambda: load_mat(fifo)):
        with pytest.raises(bridge.FileAccessError, match="FIFO"):
            call()


def test_load_plain_spatial_v2_struct(tmp_path) -> None:
    """A struct as MATLAB writes it (no bridge metadata, no gravity field, jtype 'R' shorthand)."""
    fm = _two_link()
    jt = np.empty((1, 2), dtype=object)
    jt[0, 0], jt[0, 1] = "R", "Ry"
    X = np.empty((1, 2), dtype=object)
    I = np.empty((1, 2), dtype=object)  # noqa: E741
    for i in range(2):
        X[0, i], I[0, i] = fm.Xtree[i], fm.I[i]
    struct = {"NB": 2.0, "parent": np.array([[0.0, 1.0]]), "jtype": jt, "Xtree": X, "I": I, "appearance": 1.0}
    scipy.io.savemat(str(tmp_path / "plain.mat"), {"robot": struct})
    loaded = load_mat(tmp_path / "plain.mat")
    assert loaded.jtype == ("Rz", "Ry") and loaded.name == "plain"
    np.testing.assert_array_equal(loaded.gravity, [0.0, 0.0, -9.81])
    np.testing.assert_array_equal(loaded.Xtree, fm.Xtree)
    assert not loaded.floating and loaded.placements == {}


def test_mat_errors(tmp_path) -> None:
    with pytest.raises(bridge.ModelFileNotFoundError, match=r"nope\.mat"):
        load_mat(tmp_path / "nope.mat")
    scipy.io.savemat(str(tmp_path / "bad.mat"), {"model": {"NB": 1.0, "parent": 0.0}})
    with pytest.raises(bridge.ModelError, match="no field 'jtype'"):
        load_mat(tmp_path / "bad.mat")
    scipy.io.savemat(str(tmp_path / "two.mat"), {"a": {"NB": 1.0}, "b": {"NB": 2.0}})
    with pytest.raises(bridge.ModelError, match="no struct"):
        load_mat(tmp_path / "two.mat")


# --------------------------------------------------------------------------- floatbase and validation
def test_floatbase_of_a_fixed_model() -> None:
    fixed = small_model(np.random.default_rng(5), floating=False)
    fm = to_featherstone(fixed)
    # a fixed model whose body 1 is the only child of the world: hang the tree from one joint first
    single_root = FeatherstoneModel(
        NB=3, parent=(0, 1, 1), jtype=("Rz", "Px", "Ry"), Xtree=fm.Xtree[:3], I=fm.I[:3]
    )
    fb = floatbase(single_root)
    assert fb.floating and fb.NB == 8 and fb.parent == (0, 1, 2, 3, 4, 5, 6, 6)
    assert fb.jtype[6:] == ("Px", "Ry")
    np.testing.assert_array_equal(fb.I[5], single_root.I[0])
    with pytest.raises(bridge.ModelError, match="only child of the world"):
        floatbase(fm)  # two bodies hang from the world
    with pytest.raises(bridge.ModelError):
        floatbase(fb)


def test_model_validation_errors() -> None:
    eye = np.eye(6)[None]
    with pytest.raises(bridge.ModelError, match="regular numbering"):
        FeatherstoneModel(NB=1, parent=(1,), jtype=("Rz",), Xtree=eye, I=eye)
    with pytest.raises(bridge.UnsupportedError, match="'H'"):
        FeatherstoneModel(NB=1, parent=(0,), jtype=("H",), Xtree=eye, I=eye)
    with pytest.raises(bridge.ShapeError, match="Xtree and I"):
        FeatherstoneModel(NB=2, parent=(0, 1), jtype=("Rz", "Rz"), Xtree=eye, I=eye)
    with pytest.raises(bridge.ModelError, match="Xtree of body 1"):
        FeatherstoneModel(NB=1, parent=(0,), jtype=("Rz",), Xtree=2 * eye, I=eye)
    with pytest.raises(bridge.ModelError, match="floatbase layout"):
        FeatherstoneModel(NB=1, parent=(0,), jtype=("Rz",), Xtree=eye, I=eye, floating=True)
    fm = to_featherstone(small_model(np.random.default_rng(6)))
    with pytest.raises(bridge.UnknownNameError, match="tool"):
        fm.placement("tol")
    with pytest.raises(bridge.ModelError):
        to_featherstone("not a model")  # type: ignore[arg-type]


def test_gravity_and_spatial_v2_fields() -> None:
    model = small_model(np.random.default_rng(7))
    fm = to_featherstone(model, gravity=[0.0, -9.81, 0.0])
    assert fm is not to_featherstone(model)
    np.testing.assert_array_equal(fm.gravity, [0.0, -9.81, 0.0])
    fields = fm.spatial_v2_fields()
    assert fields["NB"] == fm.NB and fields["jtype"] == list(fm.jtype) and len(fields["Xtree"]) == fm.NB
    g = fm.with_gravity([0, 0, -1.0])
    np.testing.assert_array_equal(g.gravity, [0, 0, -1.0])
    assert repr(fm).startswith("FeatherstoneModel('small'")
