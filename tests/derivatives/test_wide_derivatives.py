"""Derivatives of inverse and forward dynamics on models with planar, ball and free joints.

The reference is bridge's own ID/FD differenced along the documented tangent (central differences,
step 1e-6), with every joint moved by a retraction written here independently of
:mod:`bridge.model.joints` (4x4 matrix exponentials of each joint's velocity read in the
representation, relative to its joint frame): BODY ``H exp(d^)``, INERTIAL ``exp(d^) H``, MIXED
``p + d_lin``, ``exp(d_w^) R``. Every engine that takes such models, every representation.
"""

from __future__ import annotations

import numpy as np
import pytest

import bridge
from bridge.model.joints import JointKind
from tests.docs._math import expm, skew
from tests.helpers import assert_close, random_state, wide_model

REPS = ["body", "inertial", "mixed"]
ENGINES = ["featherstone", "pinocchio"]
STEP = 1e-6


def _hat(d: np.ndarray) -> np.ndarray:
    out = np.zeros((4, 4))
    out[:3, :3] = skew(d[3:])
    out[:3, 3] = d[:3]
    return out


def _move_pose(H: np.ndarray, d: np.ndarray, rep: str) -> np.ndarray:
    if rep == "body":
        return H @ expm(_hat(d))
    if rep == "inertial":
        return expm(_hat(d)) @ H
    out = H.copy()
    out[:3, :3] = expm(skew(d[3:])) @ H[:3, :3]
    out[:3, 3] = H[:3, 3] + d[:3]
    return out


def _quat(R: np.ndarray, like: np.ndarray) -> np.ndarray:
    q = bridge.Transform.from_rotation_translation(R, np.zeros(3)).as_quaternion_wxyz()
    return -q if q @ like < 0 else q


def _move(model: bridge.Model, H: np.ndarray, s: np.ndarray, delta: np.ndarray, rep: str):
    nb = 6 if model.floating else 0
    H2 = _move_pose(H, delta[:6], rep) if nb else H
    c = model.coordinates
    s2 = s.copy()
    for k, kind in enumerate(c.kinds):
        q, d = s[c.q_slice(k)], delta[nb:][c.v_slice(k)]
        if kind is JointKind.FREE:
            P = bridge.Transform.from_quaternion_wxyz(q[3:], q[:3]).matrix
            P2 = _move_pose(P, d, rep)
            s2[c.q_slice(k)] = np.concatenate([P2[:3, 3], _quat(P2[:3, :3], q[3:])])
        elif kind is JointKind.BALL:
            P = bridge.Transform.from_quaternion_wxyz(q).matrix
            P2 = _move_pose(P, np.concatenate([np.zeros(3), d]), rep)
            s2[c.q_slice(k)] = _quat(P2[:3, :3], q)
        elif kind is JointKind.PLANAR:
            cth, sth = np.cos(q[2]), np.sin(q[2])
            P = np.array([[cth, -sth, 0, q[0]], [sth, cth, 0, q[1]], [0, 0, 1, 0], [0, 0, 0, 1.0]])
            P2 = _move_pose(P, np.array([d[0], d[1], 0, 0, 0, d[2]]), rep)
            s2[c.q_slice(k)] = [P2[0, 3], P2[1, 3], q[2] + d[2]]
        else:
            s2[c.q_slice(k)] = q + d
    return H2, s2


def _numeric(kd: bridge.KinDyn, a: np.ndarray, tau: np.ndarray, wrenches) -> list[np.ndarray]:
    model = kd.model
    st = kd.state
    nv, nb = model.nv, model.nv - model.n_dofs
    H0, s0 = st.world_H_base.matrix, st.s
    nu0 = st.nu if nb else st.s_dot.copy()
    rep = kd.representation.value

    def at(H, s, nu):
        kd.set_state(H, s, nu[:6] if nb else np.zeros(6), nu[nb:])
        return (
            kd.inverse_dynamics(a[:6] if nb else None, a[nb:], external_wrenches=wrenches),
            kd.forward_dynamics(tau, external_wrenches=wrenches),
        )

    out = [np.zeros((nv, nv)) for _ in range(4)]
    for k in range(nv):
        e = np.zeros(nv)
        e[k] = STEP
        (ip, fp), (im, fm) = at(*_move(model, H0, s0, e, rep), nu0), at(*_move(model, H0, s0, -e, rep), nu0)
        out[0][:, k], out[2][:, k] = (ip - im) / (2 * STEP), (fp - fm) / (2 * STEP)
        (ip, fp), (im, fm) = at(H0, s0, nu0 + e), at(H0, s0, nu0 - e)
        out[1][:, k], out[3][:, k] = (ip - im) / (2 * STEP), (fp - fm) / (2 * STEP)
    kd.set_state(H0, s0, nu0[:6] if nb else np.zeros(6), nu0[nb:])
    return out


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("rep", REPS)
@pytest.mark.parametrize("floating", [True, False], ids=["floating", "scene"])
def test_derivatives_equal_central_differences_along_the_tangent(
    engine: str, rep: str, floating: bool
) -> None:
    model = wide_model(4 if floating else 9, floating=floating, n_links=6)
    rng = np.random.default_rng(7)
    kd = bridge.KinDyn(model, engine=engine, representation=rep)
    kd.set_robot_state(random_state(model, rng, rep))
    nv, nb = model.nv, model.nv - model.n_dofs
    a, tau = rng.normal(size=nv), rng.normal(size=model.n_dofs)
    wrenches = {model.frame_names[-1]: rng.normal(size=6)}
    num = _numeric(kd, a, tau, wrenches)
    dq, dnu, dnd = kd.inverse_dynamics_derivatives(a[:6] if nb else None, a[nb:], external_wrenches=wrenches)
    fq, fnu, ftau = kd.forward_dynamics_derivatives(tau, external_wrenches=wrenches)
    what = f"{engine} {rep} {'floating' if floating else 'scene'}"
    assert_close(dq, num[0], 1e-6, f"dtau_dq {what}")
    assert_close(dnu, num[1], 1e-6, f"dtau_dnu {what}")
    assert_close(fq, num[2], 1e-6, f"dnudot_dq {what}")
    assert_close(fnu, num[3], 1e-6, f"dnudot_dnu {what}")
    M = kd.mass_matrix()
    assert_close(dnd, M, 1e-12, f"dtau_dnudot = M {what}")
    assert_close(ftau @ M, np.eye(nv), 1e-10, f"dnudot_dtau = M^-1 {what}")
