"""spatial_v2-style dynamics functions on a FeatherstoneModel, vectorised over batches of states.

Public functions take leading batch axes (``q`` (..., NB) etc.) and loop over bodies (levels of the
tree) only, in spatial_v2's conventions (see :mod:`.kernels`); external forces ``f_ext`` are given
per body in *world* (fixed-base) coordinates as forces acting on the body (see :func:`_fext_arrays`):

* :func:`ID` (RNEA), :func:`HandC` (CRBA and RNEA), :func:`CRBA` (H alone), :func:`FDab`
  (articulated-body algorithm), :func:`FDcrb` (HandC and a Cholesky solve) on any
  :class:`FeatherstoneModel` (every body with its 1-DOF joint, floatbase placeholders included);
* :func:`IDfb` (joint accelerations given, base unactuated), :func:`FDfb` on a floatbase model:
  bodies 1-6 are one free floating base with state ``xfb = [quaternion (w first) of the
  fixed-to-base rotation; base origin in world; base spatial velocity in world coordinates
  (angular first)]``; ``xdfb = [quaternion rate; position rate; spatial acceleration of the base in
  world coordinates]`` (derivative of xfb's velocity); :func:`IDfree` (base acceleration given:
  the base wrench and joint forces), :func:`HandCfree` and ``CRBA(model, q, xfb)`` in the free-base
  coordinates ``[v_fb; qd]``.

Batches larger than :data:`~.workspace.CHUNK` states are processed in chunks, on the work arrays
of the model's shared :class:`~.workspace.Workspace` (kept from one call to the next).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from bridge._array import as_float_array
from bridge.errors import InvalidValueError, ShapeError, SingularMassMatrixError
from bridge.spatial import cross

from .batch_math import batch_first, batch_last, inertia_apply, inertia_matrices, matvec, solve6
from .joints import Joints
from .kernels import aba, composite, crba, rnea
from .model import FeatherstoneModel
from .quaternions import check_xfb, rq, rq_last, rqd
from .tree import Tree
from .workspace import Workspace, padded_width

__all__ = ["CRBA", "ID", "FDab", "FDcrb", "FDfb", "HandC", "HandCfree", "IDfb", "IDfree", "rq", "rqd"]


def _gravity_a0(fmodel: FeatherstoneModel) -> np.ndarray:
    a0 = np.zeros((6, 1))
    a0[3:, 0] = -fmodel.gravity
    return a0


def _fext_arrays(
    f_ext: object, fmodel: FeatherstoneModel, tree: Tree, batch: tuple[int, ...]
) -> tuple[dict[int, np.ndarray] | None, tuple[int, ...]]:
    """spatial_v2-style external forces -> {internal body: (..., 6)} and the broadcast batch shape.

    Accepted: None; an array (..., NB, 6); a sequence of NB entries (None/empty or (..., 6)); a
    mapping {body (1-based): (..., 6)}. Each is the spatial force (angular first) acting on the body,
    in world coordinates. For a free tree the floatbase placeholders 1-5 must carry zero force.
    """
    if f_ext is None:
        return None, batch
    NB = fmodel.NB
    items: dict[int, np.ndarray] = {}
    if isinstance(f_ext, Mapping):
        raw = {int(k): v for k, v in f_ext.items()}
    elif isinstance(f_ext, np.ndarray) and f_ext.dtype != object:
        arr = as_float_array(f_ext, "f_ext", (NB, 6))
        raw = {i + 1: arr[..., i, :] for i in range(NB)}
    elif isinstance(f_ext, Sequence) or (isinstance(f_ext, np.ndarray) and f_ext.dtype == object):
        seq = list(f_ext)
        if len(seq) != NB:
            raise ShapeError(f"f_ext: expected {NB} entries (one per body), got {len(seq)}")
        raw = {i + 1: x for i, x in enumerate(seq) if x is not None and np.size(x) > 0}
    else:
        raise InvalidValueError(
            f"f_ext: expected an array (..., NB, 6), a list or a mapping, got {type(f_ext).__name__}"
        )
    for body, val in raw.items():
        if not 1 <= body <= NB:
            raise InvalidValueError(f"f_ext: unknown body {body} (bodies are 1..{NB})")
        arr = as_float_array(val, f"f_ext of body {body}", (6,))
        if body < tree.first_body:  # floatbase placeholders 1-5 of a free tree
            if np.any(arr != 0.0):
                raise InvalidValueError(
                    f"f_ext: body {body} is a massless floatbase placeholder; apply forces on the "
                    "floating base to body 6"
                )
            continue
        internal = body - tree.first_body
        items[internal] = items[internal] + arr if internal in items else arr
        batch = np.broadcast_shapes(batch, arr.shape[:-1])
    return items, batch


def _fext_batch_last(
    items: dict[int, np.ndarray] | None, batch: tuple[int, ...], width: int | None = None
) -> dict[int, np.ndarray] | None:
    if not items:
        return None
    return {i: batch_last(x, batch, width) for i, x in items.items()}


def _check_q(x: object, name: str, n: int) -> np.ndarray:
    return as_float_array(x, name, (n,))


def _fext_slice(fx: dict[int, np.ndarray] | None, sl: slice) -> dict[int, np.ndarray] | None:
    return None if fx is None else {i: f[:, sl] for i, f in fx.items()}


# --------------------------------------------------------------------------- public: fixed layout
def _fixed_setup(model: FeatherstoneModel, arrays: dict[str, object], f_ext: object):
    """Check and batch the arguments of a fixed-layout function: arrays (..., NB) -> (NB, Np)
    (``Np`` padded from the N states: see :func:`.workspace.padded_width`)."""
    ws = Workspace.of(model, False)
    vals = {k: _check_q(v, k, model.NB) for k, v in arrays.items()}
    batch = np.broadcast_shapes(*(v.shape[:-1] for v in vals.values()))
    fx, batch = _fext_arrays(f_ext, model, ws.tree, batch)
    N = math.prod(batch)
    Np = padded_width(N)[0]
    vals = {k: batch_last(v, batch, Np) for k, v in vals.items()}
    return ws, vals, _fext_batch_last(fx, batch, Np), batch, N, Np


def ID(model: FeatherstoneModel, q: object, qd: object, qdd: object, f_ext: object = None) -> np.ndarray:
    """Inverse dynamics (RNEA): joint forces ``tau`` (..., NB) for ``q``, ``qd``, ``qdd`` (..., NB).

    Every body's joint counts (floatbase placeholders included, as spatial_v2's ``ID`` does).
    ``f_ext``: external forces on the bodies in world coordinates (see :func:`_fext_arrays`).
    """
    ws, v, fx, batch, N, Np = _fixed_setup(model, {"q": q, "qd": qd, "qdd": qdd}, f_ext)
    tree = ws.tree
    a0 = _gravity_a0(model)
    tau = np.empty((tree.nv, Np))

    def chunk(sl: slice, arena: dict) -> None:
        J = Joints(tree, v["q"][:, sl], arena=arena)
        tau[:, sl] = rnea(J, v["qd"][:, sl], v["qdd"][:, sl], a0, _fext_slice(fx, sl))

    ws.run(N, chunk)
    return batch_first(tau, batch)


def HandC(
    model: FeatherstoneModel, q: object, qd: object, f_ext: object = None
) -> tuple[np.ndarray, np.ndarray]:
    """Joint-space inertia matrix H (..., NB, NB) (CRBA) and bias forces C (..., NB) (RNEA with
    ``qdd = 0``, gravity and ``f_ext`` included): ``tau = H qdd + C``."""
    ws, v, fx, batch, N, Np = _fixed_setup(model, {"q": q, "qd": qd}, f_ext)
    tree = ws.tree
    a0 = _gravity_a0(model)
    C = np.empty((tree.nv, Np))
    H = np.empty((Np, tree.nv, tree.nv))

    def chunk(sl: slice, arena: dict) -> None:
        J = Joints(tree, v["q"][:, sl], arena=arena)
        C[:, sl] = rnea(J, v["qd"][:, sl], None, a0, _fext_slice(fx, sl))
        crba(J, out=H[sl], consume=True)  # (after the RNEA: nothing needs J's inertias then)

    ws.run(N, chunk)
    return H[:N].reshape(*batch, tree.nv, tree.nv), batch_first(C, batch)


def FDab(model: FeatherstoneModel, q: object, qd: object, tau: object, f_ext: object = None) -> np.ndarray:
    """Forward dynamics by the articulated-body algorithm: ``qdd`` (..., NB)."""
    ws, v, fx, batch, N, Np = _fixed_setup(model, {"q": q, "qd": qd, "tau": tau}, f_ext)
    tree = ws.tree
    a0 = _gravity_a0(model)
    qdd = np.empty((tree.nv, Np))

    def chunk(sl: slice, arena: dict) -> None:
        J = Joints(tree, v["q"][:, sl], arena=arena)
        qdd[:, sl] = aba(J, v["qd"][:, sl], v["tau"][:, sl], a0, _fext_slice(fx, sl))

    with np.errstate(divide="raise", invalid="raise"):
        try:
            ws.run(N, chunk)
        except FloatingPointError:
            raise SingularMassMatrixError(
                f"FDab: a joint of model {model.name!r} moves no inertia (zero articulated inertia)"
            ) from None
    return batch_first(qdd, batch)


def _cholesky_solve(H: np.ndarray, b: np.ndarray, what: str) -> np.ndarray:
    """Solve H x = b for (N, n, n) SPD H and (N, n) b through a Cholesky factorisation."""
    try:
        L = np.linalg.cholesky(H)
    except np.linalg.LinAlgError:
        raise SingularMassMatrixError(
            f"{what}: the joint-space inertia matrix is not positive definite"
        ) from None
    y = np.linalg.solve(L, b[..., None])
    return np.linalg.solve(np.swapaxes(L, -1, -2), y)[..., 0]


def FDcrb(model: FeatherstoneModel, q: object, qd: object, tau: object, f_ext: object = None) -> np.ndarray:
    """Forward dynamics through HandC and a Cholesky solve of ``H qdd = tau - C``: (..., NB)."""
    H, C = HandC(model, q, qd, f_ext)
    tau = _check_q(tau, "tau", model.NB)
    batch = np.broadcast_shapes(H.shape[:-2], tau.shape[:-1])
    n = model.NB
    Hf = np.broadcast_to(H, (*batch, n, n)).reshape(-1, n, n)
    rhs = (np.broadcast_to(tau, (*batch, n)) - np.broadcast_to(C, (*batch, n))).reshape(-1, n)
    return _cholesky_solve(Hf, rhs, f"FDcrb of model {model.name!r}").reshape(*batch, n)


# --------------------------------------------------------------------------- public: floating base
@dataclass(eq=False)
class _FB:
    """A floating-base batch: the compiled free tree, the normalised base quaternion (4, Np), the
    base pose and every other array batch-last (the base velocity ``vals["vw"]``), f_ext
    (batch-last), the batch shape and size N; the arrays have Np >= N columns (padded: see
    :func:`.workspace.padded_width`)."""

    ws: Workspace
    quat: np.ndarray  # (4, N)
    E0: np.ndarray  # (3, 3, N)
    r0: np.ndarray  # (3, N)
    vals: dict[str, np.ndarray]
    fext: dict[int, np.ndarray] | None
    batch: tuple[int, ...]
    N: int
    Np: int

    @property
    def tree(self) -> Tree:
        return self.ws.tree

    def joints(self, sl: slice, arena: dict) -> Joints:
        return Joints(self.tree, self.vals["q"][:, sl], self.E0[..., sl], self.r0[:, sl], arena)

    def nu(self, sl: slice) -> np.ndarray:
        """``[v_fb; qd]`` (nv, n) of a chunk."""
        return np.concatenate([self.vals["vw"][:, sl], self.vals["qd"][:, sl]], axis=0)


def _fb_setup(
    model: FeatherstoneModel,
    xfb: object,
    arrays: dict[str, object],
    f_ext: object,
    six: dict[str, object] | None = None,
) -> _FB:
    """Check and batch the arguments of a floating-base function: ``arrays`` (..., NB - 6) and
    ``six`` (..., 6) broadcast with xfb (..., 13) and f_ext."""
    ws = Workspace.of(model, True)
    n = model.NB - 6
    x = check_xfb(xfb)
    vals = {k: _check_q(v, k, n) for k, v in arrays.items()}
    vals.update({k: as_float_array(v, k, (6,)) for k, v in (six or {}).items()})
    batch = np.broadcast_shapes(x.shape[:-1], *(v.shape[:-1] for v in vals.values()))
    fx, batch = _fext_arrays(f_ext, model, ws.tree, batch)
    N = math.prod(batch)
    Np = padded_width(N)[0]
    xl = batch_last(x, batch, Np)  # (13, Np)
    q0, q1, q2, q3 = xl[:4]
    quat = xl[:4] / np.sqrt(q0 * q0 + q1 * q1 + q2 * q2 + q3 * q3)
    vals = {k: batch_last(v, batch, Np) for k, v in vals.items()}
    vals["vw"] = xl[7:13]
    return _FB(ws, quat, rq_last(quat), xl[4:7], vals, _fext_batch_last(fx, batch, Np), batch, N, Np)


def _xdfb(fb: _FB, a_fb: np.ndarray) -> np.ndarray:
    """``[quaternion rate; position rate; a_fb]`` (..., 13) for the base acceleration a_fb (6, N)."""
    vw = fb.vals["vw"]
    w = vw[:3]
    out = np.empty((13, fb.Np))
    wb = matvec(fb.E0, w)  # angular velocity in base coordinates
    # q_dot = 1/2 q * (0, w_B) (Hamilton product, w first)
    qw, qv = fb.quat[0], fb.quat[1:]
    np.multiply(qv[0], wb[0], out=out[0])
    out[0] += qv[1] * wb[1]
    out[0] += qv[2] * wb[2]
    out[0] *= -0.5
    cross(qv, wb, axis=0, out=out[1:4])
    out[1:4] += qw * wb
    out[1:4] *= 0.5
    cross(w, fb.r0, axis=0, out=out[4:7])  # velocity of the base origin in world
    out[4:7] += vw[3:]
    out[7:] = a_fb
    return batch_first(out, fb.batch)


def FDfb(
    model: FeatherstoneModel, xfb: object, q: object, qd: object, tau: object, f_ext: object = None
) -> tuple[np.ndarray, np.ndarray]:
    """Floating-base forward dynamics (base unactuated): ``(xdfb (..., 13), qdd (..., NB - 6))``.

    ``xfb`` (..., 13) as in the module docstring; ``q``, ``qd``, ``tau`` (..., NB - 6) of bodies
    7..NB; ``xdfb = [quaternion rate; position rate; base spatial acceleration in world
    coordinates]``.
    """
    fb = _fb_setup(model, xfb, {"q": q, "qd": qd, "tau": tau}, f_ext)
    a0 = _gravity_a0(model)
    nd = np.empty((fb.tree.nv, fb.Np))

    def chunk(sl: slice, arena: dict) -> None:
        tau_full = np.concatenate([np.zeros((6, sl.stop - sl.start)), fb.vals["tau"][:, sl]], axis=0)
        nd[:, sl] = aba(fb.joints(sl, arena), fb.nu(sl), tau_full, a0, _fext_slice(fb.fext, sl))

    with np.errstate(divide="raise", invalid="raise"):
        try:
            fb.ws.run(fb.N, chunk)
        except (FloatingPointError, np.linalg.LinAlgError):
            raise SingularMassMatrixError(
                f"FDfb: model {model.name!r} has a joint that moves no inertia"
            ) from None
    return _xdfb(fb, nd[:6]), batch_first(nd[6:], fb.batch)


def IDfb(
    model: FeatherstoneModel, xfb: object, q: object, qd: object, qdd: object, f_ext: object = None
) -> tuple[np.ndarray, np.ndarray]:
    """Floating-base inverse dynamics (base unactuated): ``(xdfb (..., 13), tau (..., NB - 6))``.

    Given the joint accelerations, the base acceleration is the one for which the base needs no
    force: with the RNEA at zero base acceleration (base force ``f0``, joint forces ``tau0``) and
    the composite inertia ``IC`` of the whole tree (world coordinates), ``a_base = -IC^-1 f0``
    (relative to gravity) and ``tau = tau0 + S^T IC_i a_base`` for each joint's subtree.
    """
    fb = _fb_setup(model, xfb, {"q": q, "qd": qd, "qdd": qdd}, f_ext)
    tree = fb.tree
    a0 = _gravity_a0(model)
    a_fb = np.empty((6, fb.Np))
    tau = np.empty((tree.nq, fb.Np))

    def chunk(sl: slice, arena: dict) -> None:
        J = fb.joints(sl, arena)
        n = J.N
        # zero base acceleration relative to the gravity field: a_base = a_grav = -a0
        nu_dot = np.concatenate([np.broadcast_to(-a0, (6, n)), fb.vals["qdd"][:, sl]], axis=0)
        tau0 = rnea(J, fb.nu(sl), nu_dot, a0, _fext_slice(fb.fext, sl))
        S = J.subspaces()
        C = composite(J)
        IC0 = inertia_matrices(tree.mass_sub[:1], C[:, :1])[0]
        ab = solve6(IC0, -tau0[:6])  # base acceleration relative to gravity, world coordinates
        o = tree.one
        F = inertia_apply(tree.mass_sub[o], C[:, o], np.broadcast_to(ab[:, None, :], (6, tree.nq, n)))
        tau[:, sl] = tau0[6:] + np.einsum("ikn,ikn->kn", S[:, 6:], F)
        a_fb[:, sl] = ab - a0

    try:
        fb.ws.run(fb.N, chunk)
    except np.linalg.LinAlgError:
        raise SingularMassMatrixError(f"IDfb: model {model.name!r} has a massless floating base") from None
    return _xdfb(fb, a_fb), batch_first(tau, fb.batch)


def IDfree(
    model: FeatherstoneModel,
    xfb: object,
    q: object,
    qd: object,
    a_fb: object,
    qdd: object,
    f_ext: object = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Floating-base inverse dynamics with a *given* base acceleration (the RNEA on the free tree):
    ``(f_fb (..., 6), tau (..., NB - 6))``.

    ``a_fb`` (..., 6) is the base spatial acceleration in world coordinates (the derivative of
    ``xfb[7:13]``); ``f_fb`` is the wrench the base needs, in world coordinates (angular first,
    moment about the world origin). ``IDfree`` with the ``a_fb`` that :func:`IDfb` returns gives
    ``f_fb = 0``.
    """
    fb = _fb_setup(model, xfb, {"q": q, "qd": qd, "qdd": qdd}, f_ext, {"a_fb": a_fb})
    a0 = _gravity_a0(model)
    tau = np.empty((fb.tree.nv, fb.Np))

    def chunk(sl: slice, arena: dict) -> None:
        nu_dot = np.concatenate([fb.vals["a_fb"][:, sl], fb.vals["qdd"][:, sl]], axis=0)
        tau[:, sl] = rnea(fb.joints(sl, arena), fb.nu(sl), nu_dot, a0, _fext_slice(fb.fext, sl))

    fb.ws.run(fb.N, chunk)
    return batch_first(tau[:6], fb.batch), batch_first(tau[6:], fb.batch)


def HandCfree(
    model: FeatherstoneModel, xfb: object, q: object, qd: object, f_ext: object = None
) -> tuple[np.ndarray, np.ndarray]:
    """Joint-space inertia H (..., NB, NB) and bias C (..., NB) of a floatbase model in the free-base
    coordinates ``[v_fb (world, angular first); qd]``: ``[f_fb; tau] = H [a_fb; qdd] + C``."""
    fb = _fb_setup(model, xfb, {"q": q, "qd": qd}, f_ext)
    nv = fb.tree.nv
    a0 = _gravity_a0(model)
    C = np.empty((nv, fb.Np))
    H = np.empty((fb.Np, nv, nv))

    def chunk(sl: slice, arena: dict) -> None:
        J = fb.joints(sl, arena)
        C[:, sl] = rnea(J, fb.nu(sl), None, a0, _fext_slice(fb.fext, sl))
        crba(J, out=H[sl], consume=True)  # (after the RNEA: nothing needs J's inertias then)

    fb.ws.run(fb.N, chunk)
    return H[: fb.N].reshape(*fb.batch, nv, nv), batch_first(C, fb.batch)


def CRBA(model: FeatherstoneModel, q: object, xfb: object = None) -> np.ndarray:
    """Joint-space inertia matrix alone: (..., NB, NB) for ``q`` (..., NB), or with ``xfb`` the
    free-base one of a floatbase model (``q`` (..., NB - 6); see :func:`HandCfree`)."""
    if xfb is None:
        ws, v, _, batch, N, Np = _fixed_setup(model, {"q": q}, None)
        tree = ws.tree

        def joints(sl: slice, arena: dict) -> Joints:
            return Joints(tree, v["q"][:, sl], arena=arena)

    else:
        fb = _fb_setup(model, xfb, {"q": q}, None)
        ws, tree, batch, N, Np, joints = fb.ws, fb.tree, fb.batch, fb.N, fb.Np, fb.joints
    H = np.empty((Np, tree.nv, tree.nv))

    def chunk(sl: slice, arena: dict) -> None:
        crba(joints(sl, arena), out=H[sl], consume=True)

    ws.run(N, chunk)
    return H[:N].reshape(*batch, tree.nv, tree.nv)
