"""What the real spatial_v2 found in bridge's Featherstone exports (issue 16), checked by numbers.

* the state of a floatbase() export of a fixed-base export: xfb is body 6's pose, the neutral base
  link sits at ``fb.placements[base]`` on body 6 (against Pinocchio through the documented
  conversion, on random models whose base placement is not the identity), and of a
  to_featherstone() floating export (the identity placement);
* ``load_mat``: a 6-element gravity is read as spatial_v2's ``get_gravity`` reads it (its first
  three entries); a jtype given as a struct with a ``code`` field; helical and planar joints raise
  UnsupportedError naming the body and the joint code;
* bridge's floatbase keeps ``Xtree{6} = I`` (spatial_v2's keeps the old ``Xtree{1}``).
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.io

import bridge
from bridge.backends.featherstone import (
    FDfb,
    FeatherstoneModel,
    HandC,
    HandCfree,
    IDfb,
    body_pose,
    featherstone_velocity_transform,
    floatbase,
    from_featherstone,
    from_featherstone_state,
    load_mat,
    rq,
    to_featherstone,
    to_featherstone_state,
)
from bridge.backends.featherstone.model import base_placement
from bridge.spatial.conventions import plux

#: relative tolerance of the comparisons with Pinocchio (norm-wise, see _rel)
RTOL = 1e-10


def _rel(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.linalg.norm(np.asarray(a) - b) / max(1.0, float(np.linalg.norm(b))))


def _floatbase_exports(count: int) -> list[tuple[int, FeatherstoneModel, FeatherstoneModel]]:
    """``(seed, fixed export, its floatbase())`` for ``count`` random models whose floatbase export
    has a well-conditioned free-base mass matrix."""
    out = []
    seed = 0
    while len(out) < count:
        seed += 1
        fm = to_featherstone(bridge.random_model(4, seed=seed).with_fixed_base())
        if fm.parent.count(0) != 1:
            continue  # floatbase needs body 1 to be the only child of the world
        fb = floatbase(fm)
        H, _ = HandCfree(fb, np.r_[1.0, np.zeros(12)], np.zeros(fb.n_real), np.zeros(fb.n_real))
        if np.linalg.cond(H) > 1e8:
            continue  # a massless base link: no well-defined forward dynamics
        out.append((seed, fm, fb))
    return out


def _random_xfb(rng: np.random.Generator) -> np.ndarray:
    quat = rng.normal(size=4)
    return np.concatenate([quat / np.linalg.norm(quat), rng.normal(size=3), rng.normal(size=6)])


def _pinocchio_vs_fdfb(fb: FeatherstoneModel, rng: np.random.Generator) -> tuple[float, float, float]:
    """Relative differences (FDfb, IDfb, state round trip) between bridge's own floating-base
    functions on ``fb`` and Pinocchio on ``from_featherstone(fb)`` set to ``from_featherstone_state``."""
    nm = from_featherstone(fb)
    xfb = _random_xfb(rng)
    q, qd, tau = rng.normal(size=(3, fb.n_real))
    state = from_featherstone_state(fb, xfb, q, qd, "inertial")
    kd = bridge.KinDyn(nm, "pinocchio", "inertial")
    kd.set_robot_state(state)
    ft = featherstone_velocity_transform(fb, state)
    # forward dynamics: tau_F = [0; tau] -> neutral forces -> Pinocchio -> Featherstone accelerations
    xdfb, qdd = FDfb(fb, xfb, q, qd, tau)
    tau_n = ft.force_back(np.concatenate([np.zeros(6), tau]))
    acc = ft.acceleration(kd.forward_dynamics(tau_n[6:]))
    fd = _rel(acc, np.concatenate([xdfb[7:], qdd]))
    # inverse dynamics: the base acceleration IDfb finds, and the joint torques
    xdfb2, tau2 = IDfb(fb, xfb, q, qd, qdd)
    nu_dot = ft.acceleration_back(np.concatenate([xdfb2[7:], qdd]))
    tau_pin = ft.force(kd.inverse_dynamics(nu_dot[:6], nu_dot[6:]))
    idd = _rel(tau_pin, np.concatenate([np.zeros(6), tau2]))
    # round trip of the state: the same rotation (the quaternion's sign is free), position, velocity
    xfb_back, q_back, qd_back = to_featherstone_state(fb, state)
    trip = max(
        _rel(rq(xfb_back[:4]), rq(xfb[:4])), _rel(xfb_back[4:], xfb[4:]), _rel(q_back, q), _rel(qd_back, qd)
    )
    return fd, idd, trip


def test_floatbase_export_state_matches_pinocchio() -> None:
    """floatbase() of a fixed-base export: xfb is body 6's pose, the neutral base link (the first
    joint's child) sits at fb.placements[base] on body 6; FDfb and IDfb agree with Pinocchio through
    from_featherstone_state (before the fix, 0.08 to 34 relative on most of these models)."""
    rng = np.random.default_rng(16)
    exports = _floatbase_exports(10)
    moved = 0
    for seed, _, fb in exports:
        nm = from_featherstone(fb)
        placement = base_placement(fb)
        body, pose = fb.placements[nm.base]
        assert body == 6 and np.array_equal(pose.matrix, placement.matrix)
        moved += not np.allclose(placement.matrix, np.eye(4))
        fd, idd, trip = _pinocchio_vs_fdfb(fb, rng)
        assert fd < RTOL and idd < RTOL and trip < 1e-13, (seed, fd, idd, trip)
    assert moved == len(exports)  # every one of them has a base link away from body 6's frame


def test_floatbase_export_xfb_is_body6_pose() -> None:
    """``world_H_base = world_H_body6 @ body6_H_base`` with world_H_body6 = (rq(xfb[0:4])^T, xfb[4:7])."""
    _, _, fb = _floatbase_exports(1)[0]
    rng = np.random.default_rng(3)
    xfb = _random_xfb(rng)
    q = rng.normal(size=fb.n_real)
    state = from_featherstone_state(fb, xfb, q, np.zeros(fb.n_real), "mixed")
    E, r = body_pose(fb, 6, q, xfb)
    world_H_body6 = np.eye(4)
    world_H_body6[:3, :3], world_H_body6[:3, 3] = E.T, r
    expected = world_H_body6 @ base_placement(fb).matrix
    assert _rel(state.world_H_base.matrix, expected) < 1e-14
    E_b, r_b = body_pose(fb, from_featherstone(fb).base, q, xfb)  # the base link as a placement
    assert _rel(E_b, expected[:3, :3].T) < 1e-14 and _rel(r_b, expected[:3, 3]) < 1e-14


def test_to_featherstone_floating_export_state_matches_pinocchio() -> None:
    """to_featherstone() of a floating model: the base link is body 6's frame (identity placement)."""
    rng = np.random.default_rng(17)
    for seed in (1, 2, 3):
        fb = to_featherstone(bridge.random_model(5, seed=seed))
        np.testing.assert_array_equal(base_placement(fb).matrix, np.eye(4))
        fd, idd, trip = _pinocchio_vs_fdfb(fb, rng)
        assert fd < RTOL and idd < RTOL and trip < 1e-13, (seed, fd, idd, trip)


# --------------------------------------------------------------------------- .mat files
def _cells(items: list[object]) -> np.ndarray:
    out = np.empty((1, len(items)), dtype=object)
    for i, x in enumerate(items):
        out[0, i] = x
    return out


def _two_link_struct(jtype: list[object], gravity: object = None) -> dict[str, object]:
    fm = to_featherstone(bridge.random_model(3, seed=7, joint_kinds=("revolute",)).with_fixed_base())
    struct: dict[str, object] = {
        "NB": float(fm.NB),
        "parent": np.array([fm.parent], dtype=float),
        "jtype": _cells(jtype),
        "Xtree": _cells([np.array(x) for x in fm.Xtree]),
        "I": _cells([np.array(x) for x in fm.I]),
    }
    if gravity is not None:
        struct["gravity"] = np.asarray(gravity, dtype=float).reshape(-1, 1)
    return struct


def _save(tmp_path, struct: dict[str, object], name: str = "m.mat"):
    path = tmp_path / name
    scipy.io.savemat(str(path), {"model": struct})
    return path


def test_load_mat_six_element_gravity_is_get_gravity(tmp_path) -> None:
    """spatial_v2's get_gravity reads g(1:3): a 6-element [0;0;0;0;0;-9.81] is zero gravity there
    (and now in bridge: HandC's C at rest is zero); [0;0;-9.81;...] is the usual gravity."""
    n = 2
    zero = load_mat(_save(tmp_path, _two_link_struct(["Rz", "Ry"], [0, 0, 0, 0, 0, -9.81]), "a.mat"))
    np.testing.assert_array_equal(zero.gravity, [0.0, 0.0, 0.0])
    _, C = HandC(zero, np.array([0.3, -0.4]), np.zeros(n))
    np.testing.assert_array_equal(C, np.zeros(n))
    usual = load_mat(_save(tmp_path, _two_link_struct(["Rz", "Ry"], [0, 0, -9.81, 0, 0, 0]), "b.mat"))
    np.testing.assert_array_equal(usual.gravity, [0.0, 0.0, -9.81])
    plain = load_mat(_save(tmp_path, _two_link_struct(["Rz", "Ry"], [0, 0, -9.81]), "c.mat"))
    _, C1 = HandC(usual, np.array([0.3, -0.4]), np.zeros(n))
    _, C2 = HandC(plain, np.array([0.3, -0.4]), np.zeros(n))
    assert np.abs(C1).max() > 0.1 and np.array_equal(C1, C2)


def test_load_mat_jtype_struct_with_code(tmp_path) -> None:
    """``jtype{i}`` may be a struct with a ``code`` field (jcalc accepts it): a cell of structs and a
    struct array both load, with the same dynamics as the strings."""
    strings = load_mat(_save(tmp_path, _two_link_struct(["Rx", "Pz"]), "s.mat"))
    cell = load_mat(_save(tmp_path, _two_link_struct([{"code": "Rx"}, {"code": "Pz"}]), "c.mat"))
    struct = _two_link_struct(["Rx", "Pz"])
    arr = np.zeros((1, 2), dtype=[("code", object)])
    arr[0, 0]["code"], arr[0, 1]["code"] = "Rx", "Pz"
    struct["jtype"] = arr
    array = load_mat(_save(tmp_path, struct, "a.mat"))
    q, qd = np.array([0.3, 0.2]), np.array([-0.5, 0.7])
    for loaded in (cell, array):
        assert loaded.jtype == ("Rx", "Pz")
        for x, y in zip(HandC(loaded, q, qd), HandC(strings, q, qd), strict=True):
            np.testing.assert_array_equal(x, y)
    bad = _two_link_struct([{"kind": "Rx"}, "Pz"])
    with pytest.raises(bridge.ModelError, match="without a 'code' field"):
        load_mat(_save(tmp_path, bad, "bad.mat"))


def test_unsupported_joints_raise_unsupported_error(tmp_path) -> None:
    """Helical 'H' (a struct with pars.pitch), the planar codes and a planar (3x3) model raise
    UnsupportedError naming the body and the joint code, not numpy's errors."""
    helical = _two_link_struct(["Rz", {"code": "H", "pars": {"pitch": 0.1}}])
    with pytest.raises(bridge.UnsupportedError, match=r"body 2 has joint code 'H' \(helical\)"):
        load_mat(_save(tmp_path, helical, "h.mat"))
    planar = {
        "NB": 3.0,
        "parent": np.array([[0.0, 1.0, 2.0]]),
        "jtype": _cells(["r", "r", "r"]),
        "Xtree": _cells([np.eye(3)] * 3),
        "I": _cells([np.eye(3)] * 3),
    }
    with pytest.raises(bridge.UnsupportedError, match=r"body 1 has joint code 'r' \(planar revolute\)"):
        load_mat(_save(tmp_path, planar, "p.mat"))
    planar["jtype"] = _cells(["R", "R", "R"])  # valid codes, 3x3 matrices: a planar model all the same
    with pytest.raises(bridge.UnsupportedError, match=r"Xtree\{1\} of body 1 is 3x3: a planar model"):
        load_mat(_save(tmp_path, planar, "p2.mat"))
    eye = np.eye(6)[None]
    for code, what in (("px", "planar prismatic"), ("py", "planar prismatic"), ("Q", "unknown")):
        with pytest.raises(bridge.UnsupportedError, match=rf"body 1 has joint code '{code}' \({what}\)"):
            FeatherstoneModel(NB=1, parent=(0,), jtype=(code,), Xtree=eye, I=eye)
    assert FeatherstoneModel(NB=1, parent=(0,), jtype=({"code": "R"},), Xtree=eye, I=eye).jtype == ("Rz",)


# --------------------------------------------------------------------------- Xtree{6}
def test_floatbase_xtree6_is_identity() -> None:
    """bridge's floatbase sets Xtree{6} = I even when the fixed export's Xtree{1} is not the identity
    (spatial_v2's keeps it as Xtree{6}). With I, the chain coordinates q1..q6 that ID and HandC see
    place body 6 exactly where an xfb with the same position and rotation does; with spatial_v2's
    Xtree{6} = Xtree{1} they place it elsewhere (FDfb and IDfb, bridge's and spatial_v2's, ignore
    Xtree{6}). Such a model loads in bridge as a fixed-base model (six 1-DOF joints)."""
    _, fm, fb = _floatbase_exports(1)[0]
    assert not np.allclose(fm.Xtree[0], np.eye(6))
    np.testing.assert_array_equal(fb.Xtree[:6], np.broadcast_to(np.eye(6), (6, 6, 6)))
    # chain coordinates (x, y, z, then angles about x, y, z) of a base pose
    rng = np.random.default_rng(5)
    pos, ang = rng.normal(size=3), rng.normal(size=3)
    q = rng.normal(size=fb.n_real)
    E_chain, r_chain = body_pose(fb, 6, np.concatenate([pos, ang, q]))
    c, s = np.cos(ang), np.sin(ang)
    rx = np.array([[1, 0, 0], [0, c[0], s[0]], [0, -s[0], c[0]]])
    ry = np.array([[c[1], 0, -s[1]], [0, 1, 0], [s[1], 0, c[1]]])
    rz = np.array([[c[2], s[2], 0], [-s[2], c[2], 0], [0, 0, 1]])
    E = rz @ ry @ rx  # coordinate rotation world -> body 6 through the chain
    assert _rel(E_chain, E) < 1e-14 and _rel(r_chain, pos) < 1e-14
    w, x, y, z = _quat_of_coordinate_rotation(E)
    xfb = np.concatenate([[w, x, y, z], pos, np.zeros(6)])
    E_fb, r_fb = body_pose(fb, 6, q, xfb)
    assert _rel(E_fb, E_chain) < 1e-13 and _rel(r_fb, r_chain) < 1e-13
    # spatial_v2's floatbase: Xtree{6} = Xtree{1}; the same chain coordinates move body 6
    sv2 = FeatherstoneModel(
        NB=fb.NB, parent=fb.parent, jtype=fb.jtype, Xtree=np.concatenate([fb.Xtree[:5], fm.Xtree]), I=fb.I
    )
    assert not sv2.floating  # bridge's layout check needs Xtree{1..6} = I: a fixed-base model
    E_sv2, r_sv2 = body_pose(sv2, 6, np.concatenate([pos, ang, q]))
    E5, r5 = body_pose(fb, 5, np.concatenate([pos, ang, q]))  # the chain up to body 5
    expected = plux(rz, np.zeros(3)) @ fm.Xtree[0] @ plux(E5, r5)  # joint 6 after Xtree{6} = Xtree{1}
    assert _rel(plux(E_sv2, r_sv2), expected) < 1e-13
    assert _rel(E_sv2, E_chain) > 1e-3 or _rel(r_sv2, r_chain) > 1e-3


def _quat_of_coordinate_rotation(E: np.ndarray) -> np.ndarray:
    """(w, x, y, z) with rq(quat) = E."""
    R = bridge.Transform.from_rotation_translation(E.T, np.zeros(3)).as_quaternion_wxyz()
    assert _rel(rq(R), E) < 1e-14
    return R
