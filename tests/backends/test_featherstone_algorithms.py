"""Featherstone algorithms checked in Featherstone's own convention, written out by hand.

* a single free-floating rigid body: ``a = I^-1 (f - v x* I v) + a_grav`` (FDfb, IDfb, IDfree);
* a two-link planar arm with revolute-z joints: closed-form H(q), C(q, qd) and g(q) (ID, HandC, FDab,
  FDcrb, external forces through the tip Jacobian);
* batched calls equal single calls; the floating-base functions agree with each other and with the
  kinematics functions; the quaternion conventions of xfb.
"""

from __future__ import annotations

import numpy as np
import pytest

import bridge
from bridge.backends.featherstone import (
    CRBA,
    ID,
    FDab,
    FDcrb,
    FDfb,
    FeatherstoneModel,
    HandC,
    HandCfree,
    IDfb,
    IDfree,
    body_acceleration,
    body_jacobian,
    body_pose,
    body_velocity,
    rq,
    rqd,
    to_featherstone,
    to_featherstone_state,
)
from bridge.robots import robot_path
from bridge.spatial.conventions import plux
from tests.helpers import assert_close, random_state, small_model


# --------------------------------------------------------------------------- hand-written spatial algebra
def skew(v):
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


def crm(v):
    """Motion cross product matrix (angular first): [[w^, 0], [v^, w^]]."""
    out = np.zeros((6, 6))
    out[:3, :3] = skew(v[:3])
    out[3:, :3] = skew(v[3:])
    out[3:, 3:] = skew(v[:3])
    return out


def crf(v):
    return -crm(v).T


def mci(m, c, Ic):
    """Spatial inertia (angular first) about the frame origin of mass m, centre of mass c, Ic."""
    C = skew(c)
    return np.block([[Ic + m * C @ C.T, m * C], [m * C.T, m * np.eye(3)]])


def quat_mul(a, b):
    w1, v1, w2, v2 = a[0], a[1:], b[0], b[1:]
    return np.concatenate([[w1 * w2 - v1 @ v2], w1 * v2 + w2 * v1 + np.cross(v1, v2)])


def random_xfb(rng):
    q = rng.normal(size=4)
    return np.concatenate([q / np.linalg.norm(q), rng.normal(size=3), rng.normal(size=6)])


# --------------------------------------------------------------------------- single rigid body
def single_body(I_body) -> FeatherstoneModel:
    zeros = np.zeros((6, 6))
    return FeatherstoneModel(
        NB=6,
        parent=(0, 1, 2, 3, 4, 5),
        jtype=("Px", "Py", "Pz", "Rx", "Ry", "Rz"),
        Xtree=np.broadcast_to(np.eye(6), (6, 6, 6)),
        I=np.array([zeros] * 5 + [I_body]),
        gravity=[0.3, -0.2, -9.81],
    )


def test_single_free_body_forward_dynamics() -> None:
    rng = np.random.default_rng(0)
    I_b = mci(2.5, [0.1, -0.2, 0.05], np.array([[0.3, 0.01, 0.02], [0.01, 0.4, -0.03], [0.02, -0.03, 0.5]]))
    model = single_body(I_b)
    assert model.floating
    a_grav = np.concatenate([np.zeros(3), model.gravity])
    for _ in range(5):
        xfb = random_xfb(rng)
        f = rng.normal(size=6)  # external force on the body, world coordinates
        E, r, v = rq(xfb[:4]), xfb[4:7], xfb[7:]
        X = plux(E, r)  # body_X_world
        Iw = X.T @ I_b @ X  # inertia in world coordinates
        expected = np.linalg.solve(Iw, f - crf(v) @ Iw @ v) + a_grav
        xdfb, qdd = FDfb(model, xfb, np.zeros(0), np.zeros(0), np.zeros(0), {6: f})
        assert qdd.shape == (0,)
        assert_close(xdfb[7:], expected, 1e-12, "a_fb")
        # the same in body coordinates: a_B = I^-1 (f_B - v_B x* I v_B) + a_grav_B
        vB, fB = X @ v, np.linalg.solve(X.T, f)
        aB = np.linalg.solve(I_b, fB - crf(vB) @ I_b @ vB) + X @ a_grav
        assert_close(X @ xdfb[7:], aB, 1e-12, "a_fb in body coordinates")
        # quaternion rate 1/2 q * (0, w_B) and the velocity of the base origin
        wB = E @ v[:3]
        assert_close(xdfb[:4], 0.5 * quat_mul(xfb[:4], np.concatenate([[0.0], wB])), 1e-13, "quaternion rate")
        assert_close(xdfb[4:7], v[3:] + np.cross(v[:3], r), 1e-13, "position rate")
        # IDfb of a body without joints is the same forward problem; IDfree gives the force back
        xdfb2, tau = IDfb(model, xfb, np.zeros(0), np.zeros(0), np.zeros(0), {6: f})
        assert tau.shape == (0,)
        assert_close(xdfb2, xdfb, 1e-12, "IDfb")
        f_fb, _ = IDfree(model, xfb, np.zeros(0), np.zeros(0), xdfb[7:], np.zeros(0))
        assert_close(f_fb, f, 1e-11, "IDfree")


def test_single_body_free_fall_and_torque_free_spin() -> None:
    """No force: the body falls with gravity; a spin about a principal axis through the centre of
    mass stays a pure spin (no gyroscopic acceleration)."""
    I_b = mci(1.0, [0.0, 0.0, 0.0], np.diag([0.1, 0.2, 0.3]))
    model = single_body(I_b)
    r, w = np.array([0.5, -0.2, 1.0]), np.array([3.0, 0.0, 0.0])  # spin about the body x axis
    # the centre of mass (the base origin) at rest: the world-origin point moves with v_O = r x w
    xfb = np.concatenate([[1.0, 0, 0, 0], r, w, np.cross(r, w)])
    xdfb, _ = FDfb(model, xfb, [], [], [])
    # no angular acceleration, and with v_c = 0 the spatial linear acceleration is gravity
    np.testing.assert_allclose(xdfb[7:10], 0.0, atol=1e-14)
    np.testing.assert_allclose(xdfb[10:], model.gravity, atol=1e-12)
    np.testing.assert_allclose(xdfb[4:7], 0.0, atol=1e-15)  # the base origin does not move


# --------------------------------------------------------------------------- two-link planar arm
M1, M2, L1, L2, IZ1, IZ2, G = 1.3, 0.7, 0.9, 0.6, 0.02, 0.01, 9.81


def two_link() -> FeatherstoneModel:
    """Revolute-z joints; mass m_i at distance l_i along the link with a z inertia Iz_i about it."""
    return FeatherstoneModel(
        NB=2,
        parent=(0, 1),
        jtype=("Rz", "Rz"),
        Xtree=np.array([np.eye(6), plux(np.eye(3), [L1, 0, 0])]),
        I=np.array(
            [
                mci(M1, [L1, 0, 0], np.diag([IZ1 / 2, IZ1 / 2, IZ1])),
                mci(M2, [L2, 0, 0], np.diag([IZ2 / 2, IZ2 / 2, IZ2])),
            ]
        ),
        gravity=[0.0, -G, 0.0],  # in the plane of motion
    )


def two_link_closed_form(q, qd):
    c2, s2 = np.cos(q[1]), np.sin(q[1])
    H = np.array(
        [
            [
                IZ1 + IZ2 + M1 * L1**2 + M2 * (L1**2 + L2**2 + 2 * L1 * L2 * c2),
                IZ2 + M2 * (L2**2 + L1 * L2 * c2),
            ],
            [IZ2 + M2 * (L2**2 + L1 * L2 * c2), IZ2 + M2 * L2**2],
        ]
    )
    h = M2 * L1 * L2 * s2
    C = np.array([-h * (2 * qd[0] * qd[1] + qd[1] ** 2), h * qd[0] ** 2])
    g = np.array(
        [
            (M1 + M2) * G * L1 * np.cos(q[0]) + M2 * G * L2 * np.cos(q[0] + q[1]),
            M2 * G * L2 * np.cos(q[0] + q[1]),
        ]
    )
    return H, C, g


def test_two_link_arm_id_handc_fd() -> None:
    model = two_link()
    rng = np.random.default_rng(1)
    for _ in range(10):
        q, qd, qdd = rng.uniform(-3, 3, 2), rng.normal(size=2), rng.normal(size=2)
        H_ref, C_ref, g_ref = two_link_closed_form(q, qd)
        tau_ref = H_ref @ qdd + C_ref + g_ref
        assert_close(ID(model, q, qd, qdd), tau_ref, 1e-12, "ID")
        H, C = HandC(model, q, qd)
        assert_close(H, H_ref, 1e-12, "H")
        assert_close(C, C_ref + g_ref, 1e-12, "C")
        assert_close(CRBA(model, q), H_ref, 1e-12, "CRBA")
        assert_close(FDab(model, q, qd, tau_ref), qdd, 1e-12, "FDab")
        assert_close(FDcrb(model, q, qd, tau_ref), qdd, 1e-12, "FDcrb")
        # without gravity: C only
        flat = model.with_gravity([0, 0, -G])  # gravity normal to the plane does no work
        assert_close(ID(flat, q, qd, qdd), H_ref @ qdd + C_ref, 1e-12, "ID, gravity along z")


def test_two_link_arm_tip_force_through_the_jacobian() -> None:
    """A force F at the tip (world coordinates) changes the joint forces by -J^T F (f_ext acts on
    the body and is given as a spatial force in world coordinates: [p x F; F])."""
    model = two_link()
    rng = np.random.default_rng(2)
    q, qd, qdd = rng.uniform(-3, 3, 2), rng.normal(size=2), rng.normal(size=2)
    F = np.array([1.5, -0.7, 0.0])
    s1, c1 = np.sin(q[0]), np.cos(q[0])
    s12, c12 = np.sin(q.sum()), np.cos(q.sum())
    p = np.array([L1 * c1 + L2 * c12, L1 * s1 + L2 * s12, 0.0])
    Jp = np.array([[-L1 * s1 - L2 * s12, -L2 * s12], [L1 * c1 + L2 * c12, L2 * c12], [0.0, 0.0]])
    f_world = np.concatenate([np.cross(p, F), F])
    for f_ext in ({2: f_world}, [None, f_world], np.stack([np.zeros(6), f_world])):
        d_tau = ID(model, q, qd, qdd, f_ext) - ID(model, q, qd, qdd)
        assert_close(d_tau, -Jp.T @ F, 1e-12, "ID with f_ext")
    tau = ID(model, q, qd, qdd, {2: f_world})
    assert_close(FDab(model, q, qd, tau, {2: f_world}), qdd, 1e-12, "FDab with f_ext")
    assert_close(FDcrb(model, q, qd, tau, {2: f_world}), qdd, 1e-12, "FDcrb with f_ext")
    H, C = HandC(model, q, qd, {2: f_world})
    assert_close(H @ qdd + C, tau, 1e-12, "HandC with f_ext")
    # kinematics of the tip: the placement (body 2, translation l2 along x)
    tip = np.eye(4)
    tip[0, 3] = L2
    E, r = body_pose(model, 2, q, body_H_frame=tip)
    assert_close(r, p, 1e-14, "tip position")
    Jw = body_jacobian(model, 2, q, body_H_frame=tip)
    # world Jacobian (angular first) of the body: linear part at the tip = v_O + w x p
    J_tip = Jw[3:] - skew(p) @ Jw[:3]
    assert_close(J_tip, Jp, 1e-13, "tip Jacobian")
    v = body_velocity(model, 2, q, qd, body_H_frame=tip, coordinates="local")
    assert_close(v[3:], E @ (Jp @ qd), 1e-13, "tip velocity in the tip frame")


# --------------------------------------------------------------------------- batches
def _random_args(rng, n, batch):
    return [rng.normal(size=(*batch, n)) for _ in range(3)]


def test_batched_calls_equal_single_calls() -> None:
    model = to_featherstone(bridge.random_model(10, 3))
    rng = np.random.default_rng(3)
    nb, n, N = model.NB, model.n_real, 4
    q, qd, qdd = _random_args(rng, nb, (N,))
    fx = rng.normal(size=(N, nb, 6))
    fx[:, :5] = 0.0  # placeholders carry no force (needed by the floating-base functions)
    xfb = np.stack([random_xfb(rng) for _ in range(N)])
    qf, qdf, qddf = _random_args(rng, n, (N,))
    fxf = {b: fx[:, b - 1] for b in range(6, nb + 1)}
    batched = {
        "ID": ID(model, q, qd, qdd, fx),
        "HandC": HandC(model, q, qd, fx),
        "FDab": FDab(model, q, qd, qdd, fx),
        "FDcrb": FDcrb(model, q, qd, qdd, fx),
        "FDfb": FDfb(model, xfb, qf, qdf, qddf, fxf),
        "IDfb": IDfb(model, xfb, qf, qdf, qddf, fxf),
        "IDfree": IDfree(model, xfb, qf, qdf, qddf[:, :6] * 0 + 1.0, qddf, fxf),
        "HandCfree": HandCfree(model, xfb, qf, qdf, fxf),
        "acc": body_acceleration(model, nb, qf, qdf, qddf, xfb=xfb, a_fb=qddf[:, :6] * 0 + 1.0),
    }
    for k in range(N):
        single = {
            "ID": ID(model, q[k], qd[k], qdd[k], fx[k]),
            "HandC": HandC(model, q[k], qd[k], fx[k]),
            "FDab": FDab(model, q[k], qd[k], qdd[k], fx[k]),
            "FDcrb": FDcrb(model, q[k], qd[k], qdd[k], fx[k]),
            "FDfb": FDfb(model, xfb[k], qf[k], qdf[k], qddf[k], {b: f[k] for b, f in fxf.items()}),
            "IDfb": IDfb(model, xfb[k], qf[k], qdf[k], qddf[k], {b: f[k] for b, f in fxf.items()}),
            "IDfree": IDfree(
                model, xfb[k], qf[k], qdf[k], np.ones(6), qddf[k], {b: f[k] for b, f in fxf.items()}
            ),
            "HandCfree": HandCfree(model, xfb[k], qf[k], qdf[k], {b: f[k] for b, f in fxf.items()}),
            "acc": body_acceleration(model, nb, qf[k], qdf[k], qddf[k], xfb=xfb[k], a_fb=np.ones(6)),
        }
        for name, value in single.items():
            got = batched[name]
            pairs = zip(got, value, strict=True) if isinstance(value, tuple) else [(got, value)]
            for g, s in pairs:
                np.testing.assert_allclose(g[k], s, rtol=1e-12, atol=1e-12, err_msg=name)


def test_chunked_batches_equal_one_chunk(monkeypatch) -> None:
    """Batches larger than the chunk size are processed chunk by chunk with reused work arrays."""
    from bridge.backends.featherstone import kernels, workspace

    model = to_featherstone(bridge.random_model(9, 4))
    rng = np.random.default_rng(9)
    N, n = 7, model.n_real
    xfb = np.stack([random_xfb(rng) for _ in range(N)])
    q, qd, tau = _random_args(rng, n, (N,))
    qf, qdf, qddf = _random_args(rng, model.NB, (N,))
    calls = {
        "FDfb": lambda: FDfb(model, xfb, q, qd, tau),
        "IDfb": lambda: IDfb(model, xfb, q, qd, tau),
        "IDfree": lambda: IDfree(model, xfb, q, qd, xfb[:, 7:], tau),
        "HandCfree": lambda: HandCfree(model, xfb, q, qd),
        "CRBA": lambda: CRBA(model, q, xfb),
        "ID": lambda: ID(model, qf, qdf, qddf),
        "HandC": lambda: HandC(model, qf, qdf),
        "FDab": lambda: FDab(model, qf, qdf, qddf),
    }
    whole = {k: f() for k, f in calls.items()}
    # chunks of 5, 5 (odd widths: 7 states padded to 10), then 3, 3, 3 (7 padded to 9); the CRBA's
    # last stage in blocks of 2 states
    monkeypatch.setattr(kernels, "_CRBA_BLOCK", 2)
    for chunk in (4, 3):
        monkeypatch.setattr(workspace, "CHUNK", chunk)
        for k, f in calls.items():
            for _ in range(2):  # the second call reuses the arena of the first
                got = f()
                for g, w in zip(
                    got if isinstance(got, tuple) else [got],
                    whole[k] if isinstance(got, tuple) else [whole[k]],
                    strict=True,
                ):
                    assert_close(g, w, 1e-11, k)


def _dense_mass_matrix(model: FeatherstoneModel, q: np.ndarray, xfb: np.ndarray | None) -> np.ndarray:
    """``H = sum_b J_b^T (X_b^T I_b X_b) J_b`` from the world Jacobians and poses of every body
    (b_X_world = plux(E, r)): the mass matrix without the CRBA."""
    H = np.zeros((model.NB, model.NB))
    for b in range(1 if xfb is None else 6, model.NB + 1):
        E, r = body_pose(model, b, q, xfb)
        X = plux(E, r)
        Jb = body_jacobian(model, b, q, xfb)
        H += Jb.T @ X.T @ model.I[b - 1] @ X @ Jb
    return H


#: random trees (28 links, no fixed joints) whose levels read their parents every way: chains and
#: side branches (branching 0.3), random recursive trees (1.0: levels with scattered parents)
BRANCHY = [(0.3, 100), (0.3, 101), (1.0, 100), (1.0, 101)]


def _branchy(branching: float, seed: int) -> FeatherstoneModel:
    kinds = ("revolute", "continuous", "prismatic")
    return to_featherstone(bridge.random_model(28, seed, branching=branching, joint_kinds=kinds))


@pytest.mark.parametrize("views", [False, True, "blocks"], ids=["gathers", "views", "gather-blocks"])
@pytest.mark.parametrize(("branching", "seed"), BRANCHY)
def test_mass_matrix_of_branchy_trees_is_the_sum_over_bodies(
    branching: float, seed: int, views: bool | str, monkeypatch
) -> None:
    """CRBA, HandC and HandCfree on wide random trees (every way a level reads its parents: one
    parent, in order, a few runs, a gather; the ancestor products of small and of large batches;
    the gathers in blocks of a few pairs and the last stage state by state, as for long chains)
    = the dense sum over bodies; ID = H qdd + C and FDab = FDcrb on the same trees."""
    from bridge.backends.featherstone import kernels

    monkeypatch.setattr(kernels, "_CRBA_VIEWS_MIN_N", 0 if views is True else 10**9)
    if views == "blocks":
        monkeypatch.setattr(kernels, "_CRBA_GATHER_MAX", 7)
        monkeypatch.setattr(kernels, "_CRBA_BLOCK_VALUES", 1)
    rng = np.random.default_rng(seed)
    model = _branchy(branching, seed)
    N = 3 + seed % 2  # odd and even batches
    xfb = np.stack([random_xfb(rng) for _ in range(N)])
    q, qd, qdd = _random_args(rng, model.NB, (N,))
    qf = q[:, 6:]
    H = CRBA(model, q)
    Hf = CRBA(model, qf, xfb)
    Hc, C = HandC(model, q, qd)
    Hcf, _ = HandCfree(model, xfb, qf, qd[:, 6:])
    for k in range(N):
        assert_close(H[k], _dense_mass_matrix(model, q[k], None), 1e-12, "CRBA fixed")
        assert_close(Hf[k], _dense_mass_matrix(model, qf[k], xfb[k]), 1e-12, "CRBA free")
    assert_close(Hc, H, 1e-14, "HandC H")
    assert_close(Hcf, Hf, 1e-14, "HandCfree H")
    assert_close(ID(model, q, qd, qdd), np.einsum("nij,nj->ni", H, qdd) + C, 1e-10, "ID = H qdd + C")
    assert_close(FDab(model, q, qd, qdd), FDcrb(model, q, qd, qdd), 1e-9, "FDab = FDcrb")


def test_levels_read_their_parents_every_way() -> None:
    """The trees of the test above cover every gather kind, the gather fallback included."""
    from bridge.backends.featherstone.tree import compile_tree

    kinds = set()
    for branching, seed in BRANCHY:
        model = _branchy(branching, seed)
        for free in (False, True):
            for L in compile_tree(model, free).lv.levels[1:]:
                kinds.add(L.gather if L.gather != "take" else ("take", L.segments is None))
    assert kinds >= {"bcast", "same", ("take", False), ("take", True)}


def test_parent_runs_and_chunk_widths() -> None:
    from bridge.backends.featherstone.tree import _gather_runs
    from bridge.backends.featherstone.workspace import CHUNK, padded_width

    par = np.array([0, 0, 0, 1, 2])
    assert _gather_runs(par) == [(slice(0, 3), slice(0, 1)), (slice(3, 5), slice(1, 3))]
    assert _gather_runs(np.array([2, 0, 3, 1, 4, 0])) is None  # too many runs: a gather
    for N in (1, 2, 7, 64, 1023, 1024, 1025, 4096, 8192, 10_000):
        Np, w = padded_width(N)
        assert w % 2 == 1 and w <= CHUNK + 1 and Np % w == 0 and N <= Np < N + Np // w + 1
    assert padded_width(1024) == (1025, 1025)
    assert padded_width(0)[0] == 0


def test_leading_batch_axes_broadcast() -> None:
    model = two_link()
    rng = np.random.default_rng(4)
    q = rng.normal(size=(2, 3, 2))
    qd = rng.normal(size=(3, 2))  # broadcasts against (2, 3)
    qdd = rng.normal(size=2)
    tau = ID(model, q, qd, qdd)
    assert tau.shape == (2, 3, 2)
    H, C = HandC(model, q, qd)
    assert H.shape == (2, 3, 2, 2) and C.shape == (2, 3, 2)
    for i in range(2):
        for j in range(3):
            H_ref, C_ref, g_ref = two_link_closed_form(q[i, j], qd[j])
            assert_close(tau[i, j], H_ref @ qdd + C_ref + g_ref, 1e-12)
    assert FDab(model, q, qd, tau).shape == (2, 3, 2)


# --------------------------------------------------------------------------- floating-base consistency
def test_floating_base_functions_agree() -> None:
    model = to_featherstone(bridge.load_urdf(robot_path("iCubGazeboV2_5")))
    rng = np.random.default_rng(5)
    n = model.n_real
    xfb = random_xfb(rng)
    q, qd, tau = rng.uniform(-1, 1, n), rng.normal(size=n), rng.normal(size=n) * 5
    xdfb, qdd = FDfb(model, xfb, q, qd, tau)
    # IDfb with FDfb's joint accelerations gives back the torques and the base acceleration
    xdfb2, tau2 = IDfb(model, xfb, q, qd, qdd)
    assert_close(tau2, tau, 1e-9, "IDfb tau")
    assert_close(xdfb2, xdfb, 1e-9, "IDfb xdfb")
    # the RNEA with that base acceleration needs no base force
    f_fb, tau3 = IDfree(model, xfb, q, qd, xdfb[7:], qdd)
    assert_close(f_fb, np.zeros(6), 1e-9, "IDfree base force")
    assert_close(tau3, tau, 1e-9, "IDfree tau")
    # H [a; qdd] + C = [0; tau]
    H, C = HandCfree(model, xfb, q, qd)
    assert_close(
        H @ np.concatenate([xdfb[7:], qdd]) + C, np.concatenate([np.zeros(6), tau]), 1e-9, "HandCfree"
    )
    assert_close(CRBA(model, q, xfb), H, 1e-13, "CRBA")
    np.testing.assert_allclose(H, H.T, atol=0)
    assert np.all(np.linalg.eigvalsh(H) > 0)


def test_kinematics_functions_match_the_pinocchio_engine() -> None:
    """body_pose/velocity/jacobian/acceleration of placements = KinDyn (Pinocchio) in INERTIAL."""
    neutral = small_model(np.random.default_rng(6))
    model = to_featherstone(neutral)
    rng = np.random.default_rng(7)
    st = random_state(neutral, rng, "inertial")
    xfb, q, qd = to_featherstone_state(neutral, st)
    kd = bridge.KinDyn(neutral, "pinocchio", "inertial")
    kd.set_robot_state(st)
    swap = [3, 4, 5, 0, 1, 2]
    for frame in neutral.frame_names:
        E, r = body_pose(model, frame, q, xfb)
        H = kd.frame_transform(frame)
        assert_close(E, H[:3, :3].T, 1e-13, f"pose of {frame}")
        assert_close(r, H[:3, 3], 1e-13, f"origin of {frame}")
        assert_close(body_velocity(model, frame, q, qd, xfb)[swap], kd.frame_velocity(frame), 1e-12, frame)
        Jw = body_jacobian(model, frame, q, xfb)
        assert Jw.shape == (6, model.NB)
        assert_close(Jw @ np.concatenate([xfb[7:], qd]), body_velocity(model, frame, q, qd, xfb), 1e-12)
        bias = body_acceleration(model, frame, q, qd, xfb=xfb)
        assert_close(bias[swap], kd.frame_bias_acc(frame), 1e-12, f"bias of {frame}")
        # local coordinates: the frame's own axes and origin
        v_local = body_velocity(model, frame, q, qd, xfb, coordinates="local")
        assert_close(v_local, plux(E, r) @ body_velocity(model, frame, q, qd, xfb), 1e-12)


# --------------------------------------------------------------------------- quaternions
def test_rq_is_the_coordinate_transform_and_rqd_the_derivative() -> None:
    rng = np.random.default_rng(8)
    st = random_state(small_model(rng), rng, "body")
    xfb, _, _ = to_featherstone_state(small_model(np.random.default_rng(8)), st)
    # rq(q) = E = base_R_world
    assert_close(rq(xfb[:4]), st.world_H_base.rotation.T, 1e-14, "rq")
    # rqd integrates the rotation: R(t + h) = R exp(h w_B^)
    wB = rng.normal(size=3)
    h = 1e-6
    from bridge.spatial.so3 import so3_exp

    R1 = st.world_H_base.rotation @ so3_exp(h * wB)
    q1 = xfb[:4] + h * rqd(xfb[:4], wB)
    assert_close(rq(q1 / np.linalg.norm(q1)), R1.T, 1e-10, "rqd")
    with pytest.raises(bridge.InvalidValueError, match="unit"):
        rq([1.0, 1.0, 0.0, 0.0])


# --------------------------------------------------------------------------- errors
def test_argument_errors() -> None:
    model = two_link()
    with pytest.raises(bridge.ShapeError, match="qd"):
        ID(model, np.zeros(2), np.zeros(3), np.zeros(2))
    with pytest.raises(bridge.InvalidValueError, match="NaN"):
        ID(model, [np.nan, 0], np.zeros(2), np.zeros(2))
    with pytest.raises(bridge.ModelError, match="no floating base"):
        FDfb(model, random_xfb(np.random.default_rng(0)), [], [], [])
    with pytest.raises(bridge.InvalidValueError, match="unknown body 3"):
        ID(model, np.zeros(2), np.zeros(2), np.zeros(2), {3: np.ones(6)})
    with pytest.raises(bridge.ShapeError, match="2 entries"):
        ID(model, np.zeros(2), np.zeros(2), np.zeros(2), [np.ones(6)])
    floating = single_body(mci(1.0, [0, 0, 0], np.eye(3)))
    xfb = random_xfb(np.random.default_rng(1))
    with pytest.raises(bridge.InvalidValueError, match="placeholder"):
        FDfb(floating, xfb, [], [], [], {3: np.ones(6)})
    bad = xfb.copy()
    bad[0] += 1.0
    with pytest.raises(bridge.InvalidValueError, match="unit norm"):
        FDfb(floating, bad, [], [], [])
    massless = FeatherstoneModel(
        NB=2,
        parent=(0, 1),
        jtype=("Rz", "Rz"),
        Xtree=np.broadcast_to(np.eye(6), (2, 6, 6)),
        I=np.zeros((2, 6, 6)),
    )
    with pytest.raises(bridge.SingularMassMatrixError):
        FDab(massless, np.zeros(2), np.zeros(2), np.zeros(2))
    with pytest.raises(bridge.SingularMassMatrixError):
        FDcrb(massless, np.zeros(2), np.zeros(2), np.zeros(2))
    with pytest.raises(bridge.InvalidValueError, match="coordinates"):
        body_velocity(model, 2, np.zeros(2), np.zeros(2), coordinates="mixed")


def test_workspace_is_shared_per_model_and_a_nested_call_gets_its_own_arena() -> None:
    """The spatial_v2 functions run on the model's shared workspace (the tree compiled once, the
    work arrays kept between calls); a call while it is in use gets fresh work arrays; the engine
    holds a workspace of its own."""
    from bridge.backends.featherstone.engine import FeatherstoneEngine
    from bridge.backends.featherstone.workspace import Workspace

    neutral = bridge.random_model(5, 11)
    model = to_featherstone(neutral)
    ws = Workspace.of(model, False)
    assert Workspace.of(model, False) is ws and Workspace.of(model, True) is not ws
    rng = np.random.default_rng(11)
    q, qd, qdd = _random_args(rng, model.NB, (3,))
    tau = ID(model, q, qd, qdd)
    assert ws.arena  # the work arrays of the call are kept
    arenas = []

    def nested(sl: slice, arena: dict) -> None:
        arenas.append(arena)
        assert_close(ID(model, q, qd, qdd), tau, 1e-14, "nested ID")  # runs while ws is in use

    ws.run(3, nested)
    assert arenas[0] is ws.arena
    eng = FeatherstoneEngine(neutral, bridge.Representation.MIXED)
    assert eng.workspace is not Workspace.of(model, True) and eng.tree is Workspace.of(model, True).tree
