"""Identities that hold whatever the engine, checked on one engine's answers.

Forward dynamics undoes inverse dynamics, the momentum matrices times nu are the momenta,
``C nu + g = h``, ``J_dot nu`` is the frame bias acceleration; and, by central finite differences
along a trajectory integrated with the drawn acceleration, accelerations are time derivatives of
velocities, ``M_dot = C + C^T``, the relative Jacobian times ``s_dot`` is the derivative of the
relative transform and the frame Jacobian derivative is the derivative of the frame Jacobian.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from bridge.conventions.state import State
from bridge.dynamics.integration import integrate
from bridge.dynamics.kindyn import KinDyn
from bridge.errors import SingularMassMatrixError
from bridge.validation.measure import mv, result
from bridge.validation.report import Result

__all__ = ["frame_pairs", "identities"]

#: the time step of the central differences
STEP = 1e-4


def frame_pairs(frames: Sequence[str]) -> list[tuple[str, str]]:
    """(frame, reference) pairs for the relative quantities: every frame w.r.t. the first leaf."""
    if len(frames) < 2:
        return []
    ref = frames[1]
    return [(f, ref) for f in frames if f != ref]


def _relative_twist(H: np.ndarray, H_dot: np.ndarray, rep: str) -> np.ndarray:
    """The velocity of F relative to R from ``R_H_F`` and its time derivative (..., 4, 4), in F
    (body), R (inertial) or F[R] (mixed), linear first."""
    R, R_dot = H[..., :3, :3], H_dot[..., :3, :3]
    p, p_dot = H[..., :3, 3], H_dot[..., :3, 3]
    if rep == "body":
        W = np.swapaxes(R, -1, -2) @ R_dot
        lin = np.einsum("...ji,...j->...i", R, p_dot)
    else:
        W = R_dot @ np.swapaxes(R, -1, -2)
        lin = p_dot - np.einsum("...ij,...j->...i", W, p) if rep == "inertial" else p_dot
    w = np.stack([W[..., 2, 1], W[..., 0, 2], W[..., 1, 0]], axis=-1)
    return np.concatenate([lin, w], axis=-1)


def _accelerations(kd: KinDyn, nu_dot: np.ndarray) -> tuple[np.ndarray | None, np.ndarray]:
    """(base acceleration or None for a fixed base, s_ddot) of a generalized acceleration (n, nv)."""
    model = kd.model
    return (nu_dot[:, :6] if model.floating else None), nu_dot[:, model.nv - model.n_dofs :]


def _algebraic(
    kd: KinDyn, engine: str, rep: str, frames: Sequence[str], nu_dot: np.ndarray, rtol: float
) -> list[Result]:
    """The identities between the answers at the drawn states."""
    model, nu = kd.model, kd.nu
    results = []
    tau = kd.inverse_dynamics(*_accelerations(kd, nu_dot))
    if not model.massless_dofs:
        try:
            fd = kd.forward_dynamics(tau)
        except SingularMassMatrixError:  # reported by the engine comparison
            fd = None
        if fd is not None:
            what = f"{engine}: FD(ID(a)) = a"
            results.append(result("forward_dynamics", rep, what, fd, nu_dot, rtol, M=kd.mass_matrix()))
    if model.floating:  # the base rows of the generalized momentum are the total momentum
        Mnu = mv(kd.mass_matrix(), nu)[..., :6]
        results.append(
            result("total_momentum", rep, f"{engine}: momentum = (M nu)[:6]", kd.total_momentum(), Mnu, rtol)
        )
    h, g = kd.bias_forces(), kd.gravity_forces()
    pairs = [
        (
            "centroidal_momentum_matrix",
            "CMM nu = centroidal momentum",
            mv(kd.centroidal_momentum_matrix(), nu),
            kd.centroidal_momentum(),
        ),
        (
            "total_momentum_jacobian",
            "J nu = total momentum",
            mv(kd.total_momentum_jacobian(), nu),
            kd.total_momentum(),
        ),
        ("coriolis_matrix", "C nu + g = h", mv(kd.coriolis_matrix(), nu) + g, h),
        ("coriolis_forces", "C nu = h - g", kd.coriolis_forces() + g, h),
    ]
    results += [result(q, rep, f"{engine}: {what}", a, b, rtol) for q, what, a, b in pairs]
    for f in frames:
        a, b = mv(kd.frame_jacobian_derivative(f), nu), kd.frame_bias_acc(f)
        results.append(
            result("frame_jacobian_derivative", rep, f"{engine}: J_dot nu = frame_bias_acc", a, b, rtol, f)
        )
    return results


def _moved(kd: KinDyn, engine: str, rep: str, state: State, inputs: dict, k: int) -> tuple[State, KinDyn]:
    """The first ``k`` states, and one KinDyn at a batch of 3k states: them, then them moved by
    +STEP, then by -STEP along the drawn motion (one engine built, not three)."""
    model = kd.model
    sub = State(
        state.world_H_base[:k], state.s[:k], state.base_velocity[:k], state.s_dot[:k], state.representation,
        layout=state.layout,
    )  # fmt: skip
    base_acc, s_ddot = _accelerations(kd, inputs["nu_dot"][:k])
    base_acc = np.zeros((k, 6)) if base_acc is None else base_acc
    parts = [sub] + [integrate(sub, base_acc, s_ddot, dt) for dt in (STEP, -STEP)]
    three = State(
        np.concatenate([p.world_H_base.matrix for p in parts]),
        np.concatenate([p.s for p in parts]),
        np.concatenate([p.base_velocity for p in parts]),
        np.concatenate([p.s_dot for p in parts]),
        rep,
        layout=state.layout,
    )
    kk = KinDyn(model, engine=engine, representation=rep)
    kk.set_robot_state(three, np.concatenate([inputs["gravity"][:k]] * 3))
    return sub, kk


def _differences(
    kd: KinDyn, engine: str, rep: str, state: State, frames: Sequence[str], inputs: dict, k: int, tol: float
) -> list[Result]:
    """The identities by central differences along the motion, on the first ``k`` samples."""
    sub, three = _moved(kd, engine, rep, state, inputs, k)

    def at(value: np.ndarray) -> np.ndarray:  # at the k states
        return value[:k]

    def d(fn) -> np.ndarray:  # the derivative along the motion, by central differences
        value = fn(three)
        return (value[k : 2 * k] - value[2 * k :]) / (2 * STEP)

    base_acc, s_ddot = _accelerations(kd, inputs["nu_dot"][:k])
    tiled = [None if x is None else np.concatenate([x] * 3) for x in (base_acc, s_ddot)]
    results = [
        result(
            "frame_acceleration",
            rep,
            f"{engine}: d/dt frame_velocity",
            at(three.frame_acceleration(f, *tiled)),
            d(lambda kk, f=f: kk.frame_velocity(f)),
            tol,
            f,
        )
        for f in frames
    ]
    results.append(
        result(
            "com_velocity",
            rep,
            f"{engine}: d/dt com_position",
            at(three.com_velocity()),
            d(lambda kk: kk.com_position()),
            tol,
        )
    )
    C = at(three.coriolis_matrix())  # skew symmetry: M_dot = C + C^T
    results.append(
        result(
            "coriolis_matrix",
            rep,
            f"{engine}: M_dot = C + C^T",
            C + np.swapaxes(C, -1, -2),
            d(lambda kk: kk.mass_matrix()),
            tol,
        )
    )
    for f in frames:  # J depends on the configuration only
        results.append(
            result(
                "frame_jacobian_derivative",
                rep,
                f"{engine}: d/dt frame_jacobian",
                at(three.frame_jacobian_derivative(f)),
                d(lambda kk, f=f: kk.frame_jacobian(f)),
                tol,
                f,
            )
        )
    for f, ref in frame_pairs(frames):  # J_rel s_dot: the derivative of the relative transform
        H_dot = d(lambda kk, f=f, ref=ref: kk.relative_transform(f, ref))
        fd = _relative_twist(at(three.relative_transform(f, ref)), H_dot, rep)
        exact = mv(at(three.relative_jacobian(f, ref)), sub.s_dot)
        what = f"{engine}: d/dt relative_transform"
        results.append(result("relative_jacobian", rep, what, exact, fd, tol, f"{f} w.r.t. {ref}"))
    return results


def identities(
    kd: KinDyn,
    engine: str,
    rep: str,
    state: State,
    frames: Sequence[str],
    inputs: dict,
    fd_samples: int,
    rtol: float,
    fd_rtol: float,
) -> list[Result]:
    """Every identity on ``kd`` (set to ``state``, batched): algebraic ones to ``rtol``, those by
    finite differences on the first ``fd_samples`` samples to ``fd_rtol``."""
    results = _algebraic(kd, engine, rep, frames, inputs["nu_dot"], rtol)
    k = min(fd_samples, inputs["nu_dot"].shape[0])
    if k:
        results += _differences(kd, engine, rep, state, frames, inputs, k, fd_rtol)
    return results
