"""Rigid-body dynamics algorithms in Featherstone's convention, vectorised over batches of states.

Implemented from the mathematics of Featherstone's *Rigid Body Dynamics Algorithms* (RNEA, CRBA,
ABA and the floating-base variants), in spatial_v2's conventions: 6D vectors angular first, motion
transforms ``X = plux(E, r)``, forces transformed by ``X^-T``, gravity entering as the fixed base's
acceleration ``a_0 = -a_grav``, external forces ``f_ext`` given per body in *world* (fixed-base)
coordinates as forces acting on the body.

Public functions take leading batch axes (``q`` (..., NB) etc.) and loop over bodies only:

* :func:`ID` (RNEA), :func:`HandC` (CRBA and RNEA), :func:`CRBA` (H alone), :func:`FDab`
  (articulated-body algorithm), :func:`FDcrb` (HandC and a Cholesky solve) on any
  :class:`FeatherstoneModel` (every body with its 1-DOF joint, floatbase placeholders included);
* :func:`IDfb` (joint accelerations given, base unactuated), :func:`FDfb` on a floatbase model:
  bodies 1-6 are one free floating base with state ``xfb = [quaternion (w first) of the
  fixed-to-base rotation; base origin in world; base spatial velocity in world coordinates
  (angular first)]``; ``xdfb = [quaternion rate; position rate; spatial acceleration of the base in
  world coordinates]`` (derivative of xfb's velocity); :func:`IDfree` (base acceleration given:
  the base wrench and joint forces), :func:`HandCfree` and ``CRBA(model, q, xfb)`` in the free-base
  coordinates ``[v_fb; qd]``;
* :func:`body_pose`, :func:`body_velocity`, :func:`body_jacobian`, :func:`body_acceleration` for any
  body or placement.

Batches larger than 1024 states are processed in chunks of 1024, whose work arrays are kept for the
next call in the same thread (see :func:`_run_chunks`).

Internally every array keeps the batch as its *last* axis (``(6, N)`` motion vectors, ``(3, 3, N)``
rotations): constant 6x6 matrices (Xtree, inertias) then act through one BLAS product on all
samples, and joint transforms (rotations about / translations along a frame axis) are a handful of
component-wise operations. The inverse dynamics (:func:`_rnea`) works in body coordinates; the mass
matrix, articulated-body algorithm, Jacobians and accelerations work in world coordinates (the
body poses come from one forward-kinematics pass), where composite and articulated inertias add
without transforms.

A *free* tree (floating base) replaces the floatbase bodies 1-6 by one free body whose generalized
velocity is its spatial velocity in world coordinates (6 entries, angular first) and whose
generalized acceleration is the derivative of that; its generalized force is the wrench on the
base in world coordinates.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from bridge._array import as_float_array
from bridge.errors import InvalidValueError, ModelError, ShapeError, SingularMassMatrixError, UnknownNameError
from bridge.spatial import Transform

from .model import JTYPES, FeatherstoneModel

__all__ = [
    "CRBA",
    "ID",
    "FDab",
    "FDcrb",
    "FDfb",
    "HandC",
    "HandCfree",
    "IDfb",
    "IDfree",
    "body_acceleration",
    "body_jacobian",
    "body_pose",
    "body_velocity",
    "rq",
    "rqd",
]

FREE = 6  # joint code of a free floating body (internal)

# crf(v) f = [w x n + vl x fl; w x fl] as one product of gathered rows: rows of v and f
_CRF_A1 = np.array([1, 2, 0, 4, 5, 3, 1, 2, 0])
_CRF_B2 = np.array([2, 0, 1, 5, 3, 4, 5, 3, 4])
_CRF_A2 = np.array([2, 0, 1, 5, 3, 4, 2, 0, 1])
_CRF_B1 = np.array([1, 2, 0, 4, 5, 3, 4, 5, 3])


# --------------------------------------------------------------------------- compiled trees
@dataclass(eq=False)
class _Tree:
    """A FeatherstoneModel compiled for the kernels (0-based bodies, parent -1 = fixed world).

    ``code[i]`` is 0..5 for Rx, Ry, Rz, Px, Py, Pz and FREE (6) for a free floating body (only body
    0 of a free tree). ``vidx[i]`` is the first index of body i's velocity in the generalized
    velocity; ``qidx[i]`` the index of its joint position among the 1-DOF joints.
    """

    nb: int
    parent: list[int]
    code: list[int]
    free: bool
    Xtree: np.ndarray  # (nb, 6, 6)
    XtreeT: np.ndarray  # (nb, 6, 6) transposes, contiguous
    Et: np.ndarray  # (nb, 3, 3) rotation part of Xtree
    rt: np.ndarray  # (nb, 3) translation part of Xtree
    I: np.ndarray  # noqa: E741 - (nb, 6, 6) body inertias (angular first, body coordinates)
    mass: np.ndarray  # (nb,)
    com: np.ndarray  # (nb, 3) centre of mass, body coordinates
    Ic: np.ndarray  # (nb, 3, 3) rotational inertia about the centre of mass, body axes
    vidx: list[int]
    qidx: list[int]
    nv: int
    nq: int  # number of 1-DOF joints
    dof_body: np.ndarray  # (nv,) body of each generalized velocity
    anc: np.ndarray  # (nb, nb) bool, anc[i, j]: j is i or an ancestor of i
    dof_anc: np.ndarray  # (nv, nv) bool, [i, j]: i <= j and dof i's body is an ancestor-or-equal of dof j's
    first_body: int  # 1-based index of internal body 0 in the FeatherstoneModel
    mass_sub: np.ndarray  # (nb,) subtree masses
    one: slice  # bodies with a 1-DOF joint (all but a free body 0): a contiguous range
    one_v: slice  # their velocity indices (contiguous too, in body order)
    rev: np.ndarray  # revolute bodies, their axis index and velocity index
    rev_k: np.ndarray
    rev_v: np.ndarray
    pri: np.ndarray  # prismatic bodies, axis index, velocity index
    pri_k: np.ndarray
    pri_v: np.ndarray
    h_gather: np.ndarray  # (nv * nv,) flat gather of H from S^T F (N, nv, nv + 1), see _crba


_TREES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _compile(fmodel: FeatherstoneModel, free: bool) -> _Tree:
    cache = _TREES.get(fmodel)
    if cache is None:
        cache = _TREES[fmodel] = {}
    if free in cache:
        return cache[free]
    if free and not fmodel.floating:
        raise ModelError(
            f"Featherstone model {fmodel.name!r} has no floating base (the floatbase layout: bodies 1-6 "
            "joints Px, Py, Pz, Rx, Ry, Rz with identity Xtree, bodies 1-5 massless)"
        )
    start = 5 if free else 0  # internal 0 = model body start + 1
    nb = fmodel.NB - start
    parent = [fmodel.parent[start + i] - 1 - start for i in range(nb)]
    code = [JTYPES.index(fmodel.jtype[start + i]) for i in range(nb)]
    if free:
        parent[0] = -1
        code[0] = FREE
    Xtree = np.array(fmodel.Xtree[start:], dtype=np.float64)
    if free:
        Xtree[0] = np.eye(6)
    inertia = np.array(fmodel.I[start:], dtype=np.float64)
    inertia = 0.5 * (inertia + np.swapaxes(inertia, -1, -2))
    mass = np.trace(inertia[:, 3:, 3:], axis1=1, axis2=2) / 3.0
    # I = [[Ibar, h x], [-h x, m 1]] (angular first): h x is the upper-right block
    hx = inertia[:, :3, 3:]
    h = (
        np.stack([hx[:, 2, 1] - hx[:, 1, 2], hx[:, 0, 2] - hx[:, 2, 0], hx[:, 1, 0] - hx[:, 0, 1]], axis=-1)
        / 2
    )
    safe = np.where(mass > 0, mass, 1.0)
    com = np.where(mass[:, None] > 0, h / safe[:, None], 0.0)
    Ibar = inertia[:, :3, :3]
    cx = _skew_np(com)
    Ic = Ibar + mass[:, None, None] * (cx @ cx)  # Ibar = Ic - m c^ c^
    vidx, qidx = [], []
    nv = 6 if free else 0
    nq = 0
    dof_body = [0] * nv
    for i in range(nb):
        if code[i] == FREE:
            vidx.append(0)
            qidx.append(-1)
            continue
        vidx.append(nv)
        qidx.append(nq)
        dof_body.append(i)
        nv += 1
        nq += 1
    anc = np.zeros((nb, nb), dtype=bool)
    for i in range(nb):
        j = i
        while j >= 0:
            anc[i, j] = True
            j = parent[j]
    dof_body_arr = np.array(dof_body, dtype=np.intp)
    # [i, j] = anc[body j, body i], upper triangle (an ancestor's dofs come first)
    dof_anc = np.triu(anc[dof_body_arr[None, :], dof_body_arr[:, None]])
    mass_sub = mass.copy()
    for i in range(nb - 1, 0, -1):
        if parent[i] >= 0:
            mass_sub[parent[i]] += mass_sub[i]
    one = [i for i in range(nb) if code[i] != FREE]
    if any(c == FREE for c in code[1:]):  # pragma: no cover - only body 0 of a free tree is free
        raise ModelError("internal: a free body other than the root")
    rev = [i for i in one if code[i] < 3]
    pri = [i for i in one if 3 <= code[i] < 6]

    def ints(x) -> np.ndarray:
        return np.array(x, dtype=np.intp)

    # H[i, j] = P[min, max] for tree pairs (P[i, j] = S_i . F_j, row length nv + 1), else the zero column
    gather = np.full((nv, nv), nv, dtype=np.intp)
    iu, ju = np.nonzero(dof_anc)
    gather[iu, ju] = iu * (nv + 1) + ju
    gather[ju, iu] = iu * (nv + 1) + ju
    tree = _Tree(
        nb=nb,
        parent=parent,
        code=code,
        free=free,
        Xtree=Xtree,
        XtreeT=np.ascontiguousarray(np.swapaxes(Xtree, -1, -2)),
        Et=np.ascontiguousarray(Xtree[:, :3, :3]),
        rt=_plux_translation(Xtree),
        I=inertia,
        mass=mass,
        com=np.ascontiguousarray(com),
        Ic=np.ascontiguousarray(Ic),
        vidx=vidx,
        qidx=qidx,
        nv=nv,
        nq=nq,
        dof_body=dof_body_arr,
        anc=anc,
        dof_anc=dof_anc,
        first_body=start + 1,
        mass_sub=mass_sub,
        one=slice(1 if free else 0, nb),
        one_v=slice(6 if free else 0, nv),
        rev=ints(rev),
        rev_k=ints([code[i] for i in rev]),
        rev_v=ints([vidx[i] for i in rev]),
        pri=ints(pri),
        pri_k=ints([code[i] - 3 for i in pri]),
        pri_v=ints([vidx[i] for i in pri]),
        h_gather=gather.reshape(-1),
    )
    cache[free] = tree
    return tree


def _skew_np(v: np.ndarray) -> np.ndarray:
    out = np.zeros((*v.shape[:-1], 3, 3))
    out[..., 0, 1] = -v[..., 2]
    out[..., 0, 2] = v[..., 1]
    out[..., 1, 0] = v[..., 2]
    out[..., 1, 2] = -v[..., 0]
    out[..., 2, 0] = -v[..., 1]
    out[..., 2, 1] = v[..., 0]
    return out


def _plux_translation(X: np.ndarray) -> np.ndarray:
    """r of plux(E, r) (..., 6, 6): the lower-left block is -E r^, so r^ = -E^T X21."""
    E = X[..., :3, :3]
    M = -np.swapaxes(E, -1, -2) @ X[..., 3:, :3]
    return (
        np.stack([M[..., 2, 1] - M[..., 1, 2], M[..., 0, 2] - M[..., 2, 0], M[..., 1, 0] - M[..., 0, 1]], -1)
        / 2
    )


# --------------------------------------------------------------------------- batch-last helpers
def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cross product of 3-vectors stored on axis -2 (batch last): (..., 3, N) x (..., 3, N)."""
    a0, a1, a2 = a[..., 0, :], a[..., 1, :], a[..., 2, :]
    b0, b1, b2 = b[..., 0, :], b[..., 1, :], b[..., 2, :]
    out = np.empty(np.broadcast_shapes(a.shape, b.shape))
    np.subtract(a1 * b2, a2 * b1, out=out[..., 0, :])
    np.subtract(a2 * b0, a0 * b2, out=out[..., 1, :])
    np.subtract(a0 * b1, a1 * b0, out=out[..., 2, :])
    return out


def _crf(v: np.ndarray, f: np.ndarray) -> np.ndarray:
    """``crf(v) f = [w x n + vl x fl; w x fl]`` for (6, N) motion v and force f."""
    P = v[_CRF_A1] * f[_CRF_B2]
    P -= v[_CRF_A2] * f[_CRF_B1]
    out = np.empty_like(P[:6])
    np.add(P[0:3], P[3:6], out=out[:3])
    out[3:] = P[6:9]
    return out


def _matvec(E: np.ndarray, x: np.ndarray) -> np.ndarray:
    """(3, 3, N) @ (3, N) per sample."""
    return np.einsum("ijn,jn->in", E, x)


def _tmatvec(E: np.ndarray, x: np.ndarray) -> np.ndarray:
    """(3, 3, N)^T @ (3, N) per sample."""
    return np.einsum("jin,jn->in", E, x)


def _x_motion(E: np.ndarray, r: np.ndarray, m: np.ndarray) -> np.ndarray:
    """``plux(E, r) m = [E w; E (v - r x w)]`` per sample: E (3, 3, N), r (3, N), m (6, N)."""
    out = np.empty(np.broadcast_shapes(m.shape, (*r.shape[:-2], 6, *r.shape[-1:])))
    out[:3] = _matvec(E, m[:3])
    out[3:] = _matvec(E, m[3:] - _cross(r, m[:3]))
    return out


def _xt_force(E: np.ndarray, r: np.ndarray, f: np.ndarray) -> np.ndarray:
    """``plux(E, r)^T f = [E^T n + r x E^T fl; E^T fl]`` (body force -> world force)."""
    fl = _tmatvec(E, f[3:])
    out = np.empty((6, fl.shape[-1]))
    out[3:] = fl
    out[:3] = _tmatvec(E, f[:3]) + _cross(r, fl)
    return out


def _xs_force(E: np.ndarray, r: np.ndarray, f: np.ndarray) -> np.ndarray:
    """``plux(E, r)^-T f = [E (n - r x fl); E fl]`` (world force -> body force)."""
    out = np.empty((6, f.shape[-1]))
    out[:3] = _matvec(E, f[:3] - _cross(r, f[3:]))
    out[3:] = _matvec(E, f[3:])
    return out


# --------------------------------------------------------------------------- joint data of a batch
# symmetric 3x3 matrices are stored as 6 rows [xx, xy, xz, yy, yz, zz]
_SYM = ((0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2))
_SYM_INDEX = ((0, 1, 2), (1, 3, 4), (2, 4, 5))


class _Joints:
    """Joint positions of one batch for a compiled tree, with everything derived from them.

    ``q`` (nq, N) positions of the 1-DOF joints (internal order); ``E0``/``r0`` the free base pose
    (coordinate rotation base_R_world (3, 3, N) and base origin in world (3, N)) or, for a fixed
    tree, an optional pose of the model's fixed world frame in an outer world frame.

    Derived data (computed on first use): forward kinematics, world-coordinate motion subspaces
    ``S`` (6, nv, N) and world inertias ``W`` (9, nb, N) = [m c (3); rotational inertia about the
    world origin (6, symmetric storage)].
    """

    def __init__(
        self,
        tree: _Tree,
        q: np.ndarray,
        E0: np.ndarray | None = None,
        r0: np.ndarray | None = None,
        arena: dict[str, np.ndarray] | None = None,
    ):
        self.tree = tree
        self.q = q
        self.N = q.shape[-1] if q.shape[0] else (E0.shape[-1] if E0 is not None else 1)
        self.E0 = E0
        self.r0 = r0
        self.arena = {} if arena is None else arena
        self.cq = np.cos(q, out=self.buf("cq", q.shape))
        self.sq = np.sin(q, out=self.buf("sq", q.shape))
        self._fk: tuple[np.ndarray, ...] | None = None
        self._S: np.ndarray | None = None
        self._W: np.ndarray | None = None

    def buf(self, name: str, shape: tuple[int, ...]) -> np.ndarray:
        """An uninitialised work array called ``name``: reused from the arena when it has one of this
        shape (large temporaries are not re-allocated call after call; see :func:`_arena`)."""
        a = self.arena.get(name)
        if a is None or a.shape != shape:
            a = self.arena[name] = np.empty(shape)
        return a

    # ---- Xup = XJ(q) Xtree applied to motions and (transposed) to forces, body by body
    def xup_motion(self, i: int, m: np.ndarray) -> np.ndarray:
        """``Xup_i @ m`` for a (6, N) motion in the parent's coordinates (a new array)."""
        tree = self.tree
        y = tree.Xtree[i] @ m
        code = tree.code[i]
        k = code % 3
        a, b = (k + 1) % 3, (k + 2) % 3
        qi = tree.qidx[i]
        if code < 3:
            c, s = self.cq[qi], self.sq[qi]
            ya, yb = y[a::3], y[b::3]  # rows (a, a + 3) and (b, b + 3)
            t = c * ya
            t += s * yb
            yb *= c
            yb -= s * ya
            ya[...] = t
        else:  # prismatic: v' = v - (q e_k) x w
            q = self.q[qi]
            y[3 + a] += q * y[b]
            y[3 + b] -= q * y[a]
        return y

    def xup_force_t(self, i: int, f: np.ndarray) -> np.ndarray:
        """``Xup_i^T @ f`` for a (6, N) force in body i's coordinates (``f`` is overwritten)."""
        tree = self.tree
        code = tree.code[i]
        k = code % 3
        a, b = (k + 1) % 3, (k + 2) % 3
        qi = tree.qidx[i]
        if code < 3:
            c, s = self.cq[qi], self.sq[qi]
            fa, fb = f[a::3], f[b::3]
            t = c * fa
            t -= s * fb
            fb *= c
            fb += s * fa
            fa[...] = t
        else:  # prismatic: n' = n + (q e_k) x fl
            q = self.q[qi]
            f[a] -= q * f[3 + b]
            f[b] += q * f[3 + a]
        return tree.XtreeT[i] @ f

    # ---- forward kinematics in world coordinates
    def fk(self) -> tuple[np.ndarray, np.ndarray]:
        """``(E, r)``: (nb, 3, 3, N) coordinate rotations body_R_world and (nb, 3, N) body origins in
        world, i.e. ``plux(E[i], r[i]) = i_X_world``."""
        return self._kinematics()[:2]

    def _kinematics(self) -> tuple[np.ndarray, ...]:
        """``(E, r, cw, A)``: poses, centres of mass in world (nb, 3, N) and ``Ic E`` (nb, 3, 3, N)."""
        if self._fk is not None:
            return self._fk
        tree, N = self.tree, self.N
        nb = tree.nb
        E = self.buf("E", (nb, 3, 3, N))
        r = self.buf("r", (nb, 3, N))
        cw = self.buf("cw", (nb, 3, N))
        A = self.buf("A", (nb, 3, 3, N))
        for i in range(nb):
            code = tree.code[i]
            Ei, ri = E[i], r[i]
            Ei2 = Ei.reshape(3, 3 * N)
            if code == FREE:
                Ei[...] = self.E0
                ri[...] = self.r0
            else:
                p = tree.parent[i]
                if p >= 0 or self.E0 is not None:
                    Ep, rp = (E[p], r[p]) if p >= 0 else (self.E0, self.r0)
                    Ep2 = Ep.reshape(3, 3 * N)
                    np.matmul(tree.Et[i], Ep2, out=Ei2)
                    np.matmul(tree.rt[i], Ep2, out=ri.reshape(3 * N))
                    ri += rp
                else:
                    Ei[...] = tree.Et[i][:, :, None]
                    ri[...] = tree.rt[i][:, None]
                k = code % 3
                qi = tree.qidx[i]
                if code < 3:
                    a, b = (k + 1) % 3, (k + 2) % 3
                    c, s = self.cq[qi], self.sq[qi]
                    Ea, Eb = Ei[a], Ei[b]
                    t = c * Ea
                    t += s * Eb
                    Eb *= c
                    Eb -= s * Ea
                    Ea[...] = t
                else:
                    ri += self.q[qi] * Ei[k]
            # centre of mass in world (E^T c + r) and Ic E, by two BLAS products
            np.matmul(tree.com[i], Ei2, out=cw[i].reshape(3 * N))
            cw[i] += ri
            np.matmul(tree.Ic[i], Ei2, out=A[i].reshape(3, 3 * N))
        self._fk = (E, r, cw, A)
        return self._fk

    def subspaces(self) -> np.ndarray:
        """World-coordinate motion subspaces (6, nv, N); a free base has the identity."""
        if self._S is not None:
            return self._S
        tree = self.tree
        E, r = self.fk()
        S = self.buf("S", (6, tree.nv, self.N))
        S[...] = 0.0
        if tree.free:
            for c in range(6):
                S[c, c] = 1.0
        if tree.rev.size:
            n, N = tree.rev.size, self.N
            # (n, 3, N): row k of E = the axis in world; the body origins
            w = self.buf("Srev_w", (n, 3, N))
            np.take(E.reshape(-1, 3, N), tree.rev * 3 + tree.rev_k, axis=0, out=w, mode="clip")
            rr = self.buf("Srev_r", (n, 3, N))
            np.take(r, tree.rev, axis=0, out=rr, mode="clip")
            vi = tree.rev_v
            wt = w.transpose(1, 0, 2)
            S[:3, vi] = wt
            lin = self.buf("Srev_lin", (3, n, N))
            S[3:, vi] = _cross3(rr.transpose(1, 0, 2), wt, out=lin, tmp=self.buf("Srev_t", (n, N)))
        if tree.pri.size:
            w = E[tree.pri, tree.pri_k]
            for c in range(3):
                S[3 + c, tree.pri_v] = w[:, c]
        self._S = S
        return S

    def world_inertias(self) -> np.ndarray:
        """``W`` (9, nb, N): first moments m c (rows 0-2) and rotational inertias about the world
        origin (rows 3-8, symmetric storage xx, xy, xz, yy, yz, zz) of every body, world
        coordinates (masses: ``tree.mass``)."""
        if self._W is not None:
            return self._W
        tree, N = self.tree, self.N
        E, _, cw, A = self._kinematics()
        W = self.buf("W", (9, tree.nb, N))
        m = tree.mass[:, None]
        h = W[:3]
        for a in range(3):
            np.multiply(m, cw[:, a], out=h[a])
        mc2 = np.multiply(h[0], cw[:, 0], out=self.buf("mc2", (tree.nb, N)))
        tmp = self.buf("tmp", (tree.nb, N))
        mc2 += np.multiply(h[1], cw[:, 1], out=tmp)
        mc2 += np.multiply(h[2], cw[:, 2], out=tmp)
        R = np.einsum("bain,bajn->bijn", E, A, out=self.buf("R", E.shape))  # E^T Ic E
        for p, (i, j) in enumerate(_SYM):
            # + m (|c|^2 1 - c c^T)
            t = W[3 + p]
            np.multiply(h[i], cw[:, j], out=t)
            np.subtract(R[:, i, j], t, out=t)
            if i == j:
                t += mc2
        self._W = W
        return W


# --------------------------------------------------------------------------- stacked spatial algebra
# These work on (3, n, N) / (6, n, N) stacks (n bodies or dofs, N samples) and never allocate a
# stack-sized temporary: ``tmp`` is an (n, N) scratch array (a fresh one when not given). Large
# temporaries are expensive here beyond their arithmetic: each is a fresh mapping of memory.
def _scratch(shape: tuple[int, ...], tmp: np.ndarray | None) -> np.ndarray:
    return np.empty(shape) if tmp is None else tmp


def _cross3(
    a: np.ndarray, b: np.ndarray, out: np.ndarray | None = None, tmp: np.ndarray | None = None
) -> np.ndarray:
    """Cross product of 3-vectors stored on axis 0: (3, ...) x (3, ...); ``out`` must not alias
    ``a`` or ``b``."""
    shape = np.broadcast_shapes(a.shape, b.shape)
    if out is None:
        out = np.empty(shape)
    t = _scratch(shape[1:], tmp)
    for k, (i, j) in enumerate(((1, 2), (2, 0), (0, 1))):
        np.multiply(a[i], b[j], out=out[k])
        out[k] -= np.multiply(a[j], b[i], out=t)
    return out


def _inertia_apply(
    m: np.ndarray, W: np.ndarray, x: np.ndarray, out: np.ndarray | None = None, tmp: np.ndarray | None = None
) -> np.ndarray:
    """``I x`` for inertias in parameter form (world coordinates), stacked on axis 1:
    m (n,), W (9, n, N) as :meth:`_Joints.world_inertias`, x (6, n, N) -> (6, n, N):
    ``[IO w + h x v; m v - h x w]``."""
    h, I6 = W[:3], W[3:]
    w, v = x[:3], x[3:]
    shape = np.broadcast_shapes(x.shape, (6, *W.shape[1:]))
    if out is None:
        out = np.empty(shape)
    t = _scratch(shape[1:], tmp)
    ang = out[:3]
    _cross3(h, v, out=ang, tmp=t)
    for i in range(3):
        row = ang[i]
        for j in range(3):
            row += np.multiply(I6[_SYM_INDEX[i][j]], w[j], out=t)
    lin = out[3:]
    _cross3(w, h, out=lin, tmp=t)  # -h x w
    mm = np.asarray(m)[:, None]
    for k in range(3):
        lin[k] += np.multiply(mm, v[k], out=t)
    return out


def _crf3(
    v: np.ndarray, f: np.ndarray, out: np.ndarray | None = None, tmp3: np.ndarray | None = None
) -> np.ndarray:
    """``crf(v) f = [w x n + vl x fl; w x fl]`` for (6, ...) stacked vectors; ``tmp3`` (3, ...)."""
    shape = np.broadcast_shapes(v.shape, f.shape)
    if out is None:
        out = np.empty(shape)
    t3 = _scratch((3, *shape[1:]), tmp3)
    t = out[3]  # free until the last product below
    _cross3(v[:3], f[:3], out=out[:3], tmp=t)
    out[:3] += _cross3(v[3:], f[3:], out=t3, tmp=t)
    _cross3(v[:3], f[3:], out=out[3:], tmp=t3[0])
    return out


def _crm3(
    v: np.ndarray, m: np.ndarray, out: np.ndarray | None = None, tmp3: np.ndarray | None = None
) -> np.ndarray:
    """``crm(v) m = [w x mw; w x mv + vl x mw]`` for (6, ...) stacked vectors; ``tmp3`` (3, ...)."""
    shape = np.broadcast_shapes(v.shape, m.shape)
    if out is None:
        out = np.empty(shape)
    t3 = _scratch((3, *shape[1:]), tmp3)
    _cross3(v[:3], m[3:], out=out[3:], tmp=out[0])
    out[3:] += _cross3(v[3:], m[:3], out=t3, tmp=out[0])
    _cross3(v[:3], m[:3], out=out[:3], tmp=t3[0])
    return out


def _inertia_matrices(m: np.ndarray, W: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """Dense 6x6 angular-first inertias (n, 6, 6, N) from parameters m (n,), W (9, n, N)."""
    n, N = W.shape[1], W.shape[2]
    if out is None:
        out = np.empty((n, 6, 6, N))
    for i in range(3):  # the structural zeros: diagonal of h^ and off-diagonal of m 1
        out[:, i, 3 + i] = 0.0
        out[:, 3 + i, i] = 0.0
        for j in range(3):
            if i != j:
                out[:, 3 + i, 3 + j] = 0.0
    h = W[:3]
    for i in range(3):
        for j in range(3):
            out[:, i, j] = W[3 + _SYM_INDEX[i][j]]
        out[:, 3 + i, 3 + i] = m[:, None]
    # upper-right h^, lower-left -h^ = h^T
    for i, j, k, sign in ((0, 1, 2, -1.0), (0, 2, 1, 1.0), (1, 2, 0, -1.0)):
        hk = h[k]
        pos, neg = (out[:, i, 3 + j], out[:, 3 + j, i]), (out[:, j, 3 + i], out[:, 3 + i, j])
        if sign < 0:
            pos, neg = neg, pos
        for dst in pos:
            dst[...] = hk
        for dst in neg:
            np.negative(hk, out=dst)
    return out


# --------------------------------------------------------------------------- kernels (batch last)
def _rnea(
    J: _Joints,
    nu: np.ndarray | None,
    nu_dot: np.ndarray | None,
    a0: np.ndarray,
    fext: Mapping[int, np.ndarray] | None = None,
) -> np.ndarray:
    """Recursive Newton-Euler inverse dynamics in body coordinates.

    ``nu``/``nu_dot`` (nv, N) generalized velocity and acceleration (None = zero); ``a0`` (6, N) or
    (6, 1) the acceleration of the model's fixed world in its own coordinates (``-a_grav``);
    ``fext`` body -> (6, N) force on the body in world coordinates. Returns the generalized forces
    (nv, N).
    """
    tree, N = J.tree, J.N
    nb = tree.nb
    tau = np.empty((tree.nv, N))
    f: list[np.ndarray] = [None] * nb  # type: ignore[list-item]
    v: list[np.ndarray | None] = [None] * nb
    a: list[np.ndarray] = [None] * nb  # type: ignore[list-item]
    a0b = np.broadcast_to(a0, (6, N))
    if fext:
        E, r = J.fk()
    for i in range(nb):
        code = tree.code[i]
        p = tree.parent[i]
        k = code % 3
        if code == FREE:
            vi = _x_motion(J.E0, J.r0, nu[:6]) if nu is not None else None
            acc = a0b + nu_dot[:6] if nu_dot is not None else a0b
            ai = _x_motion(J.E0, J.r0, acc)
        else:
            j = tree.vidx[i]
            col = k if code < 3 else 3 + k
            # velocity
            vp = v[p] if p >= 0 else None
            if nu is not None:
                vi = np.zeros((6, N)) if vp is None else J.xup_motion(i, vp)
                qd = nu[j]
                vi[col] += qd
            else:
                vi = None
            # acceleration
            ai = J.xup_motion(i, a[p] if p >= 0 else a0b)
            if nu_dot is not None:
                ai[col] += nu_dot[j]
            if vp is not None:
                a_, b_ = (k + 1) % 3, (k + 2) % 3
                if code < 3:  # crm(v) e_k qd = [w x e_k; vl x e_k] qd
                    ai[a_::3] += qd * vi[b_::3]
                    ai[b_::3] -= qd * vi[a_::3]
                else:  # crm(v) [0; e_k] qd = [0; w x e_k] qd
                    ai[3 + a_] += qd * vi[b_]
                    ai[3 + b_] -= qd * vi[a_]
        v[i] = vi
        a[i] = ai
        Ii = tree.I[i]
        fi = Ii @ ai
        if vi is not None:
            fi += _crf(vi, Ii @ vi)
        if fext and i in fext:
            fi -= _xs_force(E[i], r[i], fext[i])
        f[i] = fi
    for i in range(nb - 1, -1, -1):
        code = tree.code[i]
        fi = f[i]
        if code == FREE:
            tau[:6] = _xt_force(J.E0, J.r0, fi)
            continue
        k = code % 3
        tau[tree.vidx[i]] = fi[k if code < 3 else 3 + k]
        p = tree.parent[i]
        if p >= 0:
            f[p] += J.xup_force_t(i, fi)
    return tau


def _velocities(J: _Joints, nu: np.ndarray) -> np.ndarray:
    """World-coordinate body velocities (6, nb, N) for the generalized velocity nu (nv, N)."""
    tree = J.tree
    S = J.subspaces()
    v = J.buf("v", (6, tree.nb, J.N))
    for i in range(tree.nb):
        p = tree.parent[i]
        vi = v[:, i]
        if tree.code[i] == FREE:
            vi[...] = nu[:6]
            continue
        j = tree.vidx[i]
        np.multiply(S[:, j], nu[j], out=vi)
        if p >= 0:
            vi += v[:, p]
    return v


def _bias_increments(J: _Joints, v: np.ndarray, nu: np.ndarray) -> np.ndarray:
    """``c_i = v_i x S_i qd_i`` (6, nb, N) (zero for a free base), world coordinates."""
    tree = J.tree
    S = J.subspaces()
    c = J.buf("c", (6, tree.nb, J.N))
    if tree.free:
        c[:, 0] = 0.0
    one, ov = tree.one, tree.one_v
    if tree.nq:
        vJ = np.multiply(S[:, ov], nu[ov], out=J.buf("vJ", (6, tree.nq, J.N)))
        _crm3(v[:, one], vJ, out=c[:, one], tmp3=J.buf("t3q", (3, tree.nq, J.N)))
    return c


def _accelerations(
    J: _Joints, v: np.ndarray, nu: np.ndarray | None, nu_dot: np.ndarray | None, a0: np.ndarray
) -> np.ndarray:
    """World-coordinate spatial accelerations (6, nb, N) of every body (``a0`` that of the world)."""
    tree = J.tree
    S = J.subspaces()
    N = J.N
    inc = _bias_increments(J, v, nu) if nu is not None else np.zeros((6, tree.nb, N))
    a = J.buf("acc", (6, tree.nb, N))
    a0b = np.broadcast_to(a0, (6, N))
    for i in range(tree.nb):
        p = tree.parent[i]
        ai = a[:, i]
        if tree.code[i] == FREE:
            ai[...] = nu_dot[:6] if nu_dot is not None else 0.0
            continue
        j = tree.vidx[i]
        np.add(a[:, p] if p >= 0 else a0b, inc[:, i], out=ai)
        if nu_dot is not None:
            ai += S[:, j] * nu_dot[j]
    return a


def _composite(tree: _Tree, W: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """Composite (subtree) world inertias (9, nb, N) (masses: ``tree.mass_sub``)."""
    if out is None:
        C = W.copy()
    else:
        C = out
        np.copyto(C, W)
    for i in range(tree.nb - 1, 0, -1):
        p = tree.parent[i]
        if p >= 0:
            C[:, p] += C[:, i]
    return C


def _crba(J: _Joints, out: np.ndarray | None = None) -> np.ndarray:
    """Joint-space inertia matrix (N, nv, nv) by the composite-rigid-body algorithm in world
    coordinates: ``H[i, j] = S_i . (IC_j S_j)`` for dof i's body an ancestor of (or equal to) dof
    j's body; one batched matrix product gives every ``S_i . F_j`` and one gather keeps the pairs
    of the tree (both triangles) and zeros the others."""
    tree, N = J.tree, J.N
    nv = tree.nv
    S = J.subspaces()
    C = _composite(tree, J.world_inertias(), out=J.buf("C", (9, tree.nb, N)))
    F = _subtree_momenta(tree, C, S, out=J.buf("F", S.shape), tmp=J.buf("tq", (tree.nq, N)))
    # (6, N, nv) buffers: each sample's (6, nv) block is a BLAS-ready strided matrix
    Sb = J.buf("Sb", (6, N, nv))
    Fb = J.buf("Fb", (6, N, nv + 1))
    Fb[:, :, nv] = 0.0  # the extra zero column is what non-tree pairs gather
    for c in range(6):
        Sb[c] = S[c].T
        Fb[c, :, :nv] = F[c].T
    P = J.buf("P", (N, nv, nv + 1))
    np.matmul(Sb.transpose(1, 2, 0), Fb.transpose(1, 0, 2), out=P)
    if out is None:
        out = np.empty((N, nv, nv))
    # mode="clip": an unbuffered take straight into ``out`` (the indices are all valid)
    np.take(P.reshape(N, nv * (nv + 1)), tree.h_gather, axis=1, out=out.reshape(N, nv * nv), mode="clip")
    return out


def _subtree_momenta(
    tree: _Tree, C: np.ndarray, S: np.ndarray, out: np.ndarray | None = None, tmp: np.ndarray | None = None
) -> np.ndarray:
    """``F_j = IC_j S_j`` (6, nv, N) for every dof j: composite inertias C (9, nb, N) of
    :func:`_composite`, world subspaces S (6, nv, N). A free base's columns are IC_0 itself."""
    F = np.empty(S.shape) if out is None else out
    if tree.free:
        F[:, :6] = _inertia_matrices(tree.mass_sub[:1], C[:, :1])[0]
    if tree.nq:
        o, ov = tree.one, tree.one_v
        _inertia_apply(tree.mass_sub[o], C[:, o], S[:, ov], out=F[:, ov], tmp=tmp)
    return F


def _aba(
    J: _Joints,
    nu: np.ndarray,
    tau: np.ndarray,
    a0: np.ndarray,
    fext: Mapping[int, np.ndarray] | None = None,
) -> np.ndarray:
    """Articulated-body forward dynamics in world coordinates: nu_dot (nv, N) for the generalized
    forces ``tau`` (nv, N) (a free base's entries: the wrench on it in world coordinates), ``a0`` the
    world's acceleration (``-a_grav``) and ``fext`` body -> world-coordinate force on the body."""
    tree, N = J.tree, J.N
    nb = tree.nb
    S = J.subspaces()
    W = J.world_inertias()
    v = _velocities(J, nu)
    IA = _inertia_matrices(tree.mass, W, out=J.buf("IA", (nb, 6, 6, N)))
    momenta = _inertia_apply(tree.mass, W, v, out=J.buf("p", (6, nb, N)), tmp=J.buf("t_nb", (nb, N)))
    pA = _crf3(v, momenta, out=J.buf("pA", (6, nb, N)), tmp3=J.buf("t3_nb", (3, nb, N)))
    if fext:
        for i, fi in fext.items():
            pA[:, i] -= fi
    c = _bias_increments(J, v, nu)
    U: list[np.ndarray] = [None] * nb  # type: ignore[list-item]
    Dinv: list[np.ndarray] = [None] * nb  # type: ignore[list-item]
    u: list[np.ndarray] = [None] * nb  # type: ignore[list-item]
    outer = J.buf("aba_outer", (6, 6, N))
    for i in range(nb - 1, -1, -1):
        if tree.code[i] == FREE:
            continue
        j = tree.vidx[i]
        Si = S[:, j]
        IAi = IA[i]
        pAi = pA[:, i]
        Ui = np.einsum("ijn,jn->in", IAi, Si)
        di = 1.0 / np.einsum("in,in->n", Si, Ui)
        ui = tau[j] - np.einsum("in,in->n", Si, pAi)
        U[i], Dinv[i], u[i] = Ui, di, ui
        p = tree.parent[i]
        if p < 0:
            continue
        Ud = Ui * di
        # articulated inertia seen through the joint, in place: IA_i - U D^-1 U^T
        IAi -= np.multiply(Ud[:, None, :], Ui[None, :, :], out=outer)
        pAi += np.einsum("ijn,jn->in", IAi, c[:, i])
        Ud *= ui
        pAi += Ud
        IA[p] += IAi
        pA[:, p] += pAi
    nu_dot = np.empty((tree.nv, N))
    a = J.buf("acc", (6, nb, N))
    a0b = np.broadcast_to(a0, (6, N))
    for i in range(nb):
        p = tree.parent[i]
        ai = a[:, i]
        if tree.code[i] == FREE:
            # IA a' + pA = f_base with a' = a - a_grav = a + a0
            ai[...] = _solve6(IA[i], tau[:6] - pA[:, i])
            nu_dot[:6] = ai - a0b
            continue
        j = tree.vidx[i]
        np.add(a[:, p] if p >= 0 else a0b, c[:, i], out=ai)
        qdd = (u[i] - np.einsum("in,in->n", U[i], ai)) * Dinv[i]
        ai += S[:, j] * qdd
        nu_dot[j] = qdd
    return nu_dot


def _solve6(A: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Solve A x = b per sample: A (6, 6, N), b (6, N)."""
    At = np.moveaxis(A, -1, 0)
    bt = np.moveaxis(b, -1, 0)[..., None]
    return np.moveaxis(np.linalg.solve(At, bt)[..., 0], 0, -1)


# --------------------------------------------------------------------------- quaternions (spatial_v2)
def rq(quaternion: object) -> np.ndarray:
    """Coordinate rotation E (..., 3, 3) of a unit quaternion (w, x, y, z) (..., 4).

    The quaternion describes the rotation of frame B relative to A (as an active rotation it is
    ``A_R_B``); E is the coordinate transform from A to B, ``E = A_R_B^T = B_R_A`` (Featherstone's
    and spatial_v2's meaning).
    """
    q = as_float_array(quaternion, "quaternion (w, x, y, z)", (4,))
    w, x, y, z = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    n = w * w + x * x + y * y + z * z
    if np.any(np.abs(n - 1.0) > 1e-6):
        raise InvalidValueError(
            f"quaternion (w, x, y, z): not unit norm (norm {np.sqrt(n).reshape(-1)[0]:.9g})"
        )
    E = np.empty((*q.shape[:-1], 3, 3))
    E[..., 0, 0] = w * w + x * x - y * y - z * z
    E[..., 0, 1] = 2 * (x * y + w * z)
    E[..., 0, 2] = 2 * (x * z - w * y)
    E[..., 1, 0] = 2 * (x * y - w * z)
    E[..., 1, 1] = w * w - x * x + y * y - z * z
    E[..., 1, 2] = 2 * (y * z + w * x)
    E[..., 2, 0] = 2 * (x * z + w * y)
    E[..., 2, 1] = 2 * (y * z - w * x)
    E[..., 2, 2] = w * w - x * x - y * y + z * z
    return E / n[..., None, None]


def rqd(quaternion: object, omega_body: object) -> np.ndarray:
    """Quaternion rate (..., 4) for the angular velocity ``omega_body`` (..., 3) of B expressed in B
    coordinates: ``q_dot = 1/2 q * (0, omega_B)`` (Hamilton product, w first)."""
    q = as_float_array(quaternion, "quaternion (w, x, y, z)", (4,))
    om = as_float_array(omega_body, "angular velocity", (3,))
    batch = np.broadcast_shapes(q.shape[:-1], om.shape[:-1])
    q = np.broadcast_to(q, (*batch, 4))
    om = np.broadcast_to(om, (*batch, 3))
    w, v = q[..., :1], q[..., 1:]
    out = np.empty((*batch, 4))
    out[..., :1] = -0.5 * np.sum(v * om, axis=-1, keepdims=True)
    out[..., 1:] = 0.5 * (w * om + np.cross(v, om))
    return out


# --------------------------------------------------------------------------- public API helpers
def _batch_last(x: np.ndarray, batch: tuple[int, ...]) -> np.ndarray:
    """(..., k) -> (k, N) with the batch broadcast and flattened."""
    k = x.shape[-1]
    n = int(np.prod(batch, dtype=int))
    return np.ascontiguousarray(np.broadcast_to(x, (*batch, k)).reshape(n, k).T)


def _batch_first(x: np.ndarray, batch: tuple[int, ...]) -> np.ndarray:
    """(k, N) -> (..., k)."""
    return np.ascontiguousarray(x.T).reshape(*batch, x.shape[0])


def _gravity_a0(fmodel: FeatherstoneModel) -> np.ndarray:
    a0 = np.zeros((6, 1))
    a0[3:, 0] = -fmodel.gravity
    return a0


def _fext_arrays(
    f_ext: object, fmodel: FeatherstoneModel, tree: _Tree, batch: tuple[int, ...]
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
    items: dict[int, np.ndarray] | None, batch: tuple[int, ...]
) -> dict[int, np.ndarray] | None:
    if not items:
        return None
    return {i: _batch_last(x, batch) for i, x in items.items()}


def _check_q(x: object, name: str, n: int) -> np.ndarray:
    return as_float_array(x, name, (n,))


def _xfb_parts(xfb: object) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    x = as_float_array(xfb, "xfb", (13,))
    quat = x[..., :4]
    norm = np.linalg.norm(quat, axis=-1)
    if np.any(np.abs(norm - 1.0) > 1e-6):
        raise InvalidValueError(
            f"xfb: the quaternion xfb[0:4] is not unit norm (norm {norm.reshape(-1)[0]:.9g})"
        )
    return x, rq(quat / norm[..., None]), x[..., 4:7], x[..., 7:13]


# --------------------------------------------------------------------------- chunks and arenas
#: public functions process batches in chunks of at most this many states: the work arrays stay
#: a few MB (cache friendly, bounded memory) and are reused from one chunk/call to the next
_CHUNK = 1024


class _ArenaStore(threading.local):
    """The work arrays of the last public call in this thread (for one compiled tree)."""

    def __init__(self) -> None:
        self.tree: weakref.ReferenceType | None = None
        self.arena: dict[str, np.ndarray] | None = None


_ARENAS = _ArenaStore()


def _run_chunks(tree: _Tree, N: int, fn) -> None:
    """Call ``fn(sl, arena)`` for consecutive slices ``sl`` of at most ``_CHUNK`` of the N states.

    ``arena`` holds the kernels' work arrays (see :meth:`_Joints.buf`). It is reused from the
    previous call in this thread on the same tree: re-allocating tens of MB of temporaries on every
    call costs page faults (glibc returns freed large blocks to the system), which for batches of
    ~1000 states is a third of the run time. A nested call gets its own arena.
    """
    store = _ARENAS
    arena = (
        store.arena if (store.tree is not None and store.tree() is tree and store.arena is not None) else {}
    )
    store.arena = None  # taken
    try:
        for start in range(0, N, _CHUNK):
            fn(slice(start, min(start + _CHUNK, N)), arena)
    finally:
        store.tree = weakref.ref(tree)
        store.arena = arena


def _fext_slice(fx: dict[int, np.ndarray] | None, sl: slice) -> dict[int, np.ndarray] | None:
    return None if fx is None else {i: f[:, sl] for i, f in fx.items()}


# --------------------------------------------------------------------------- public: fixed layout
def _fixed_setup(model: FeatherstoneModel, arrays: dict[str, object], f_ext: object):
    """Check and batch the arguments of a fixed-layout function: arrays (..., NB) -> (NB, N)."""
    tree = _compile(model, False)
    vals = {k: _check_q(v, k, model.NB) for k, v in arrays.items()}
    batch = np.broadcast_shapes(*(v.shape[:-1] for v in vals.values()))
    fx, batch = _fext_arrays(f_ext, model, tree, batch)
    N = int(np.prod(batch, dtype=int))
    return tree, {k: _batch_last(v, batch) for k, v in vals.items()}, _fext_batch_last(fx, batch), batch, N


def ID(model: FeatherstoneModel, q: object, qd: object, qdd: object, f_ext: object = None) -> np.ndarray:
    """Inverse dynamics (RNEA): joint forces ``tau`` (..., NB) for ``q``, ``qd``, ``qdd`` (..., NB).

    Every body's joint counts (floatbase placeholders included, as spatial_v2's ``ID`` does).
    ``f_ext``: external forces on the bodies in world coordinates (see :func:`_fext_arrays`).
    """
    tree, v, fx, batch, N = _fixed_setup(model, {"q": q, "qd": qd, "qdd": qdd}, f_ext)
    a0 = _gravity_a0(model)
    tau = np.empty((tree.nv, N))

    def chunk(sl: slice, arena: dict) -> None:
        J = _Joints(tree, v["q"][:, sl], arena=arena)
        tau[:, sl] = _rnea(J, v["qd"][:, sl], v["qdd"][:, sl], a0, _fext_slice(fx, sl))

    _run_chunks(tree, N, chunk)
    return _batch_first(tau, batch)


def HandC(
    model: FeatherstoneModel, q: object, qd: object, f_ext: object = None
) -> tuple[np.ndarray, np.ndarray]:
    """Joint-space inertia matrix H (..., NB, NB) (CRBA) and bias forces C (..., NB) (RNEA with
    ``qdd = 0``, gravity and ``f_ext`` included): ``tau = H qdd + C``."""
    tree, v, fx, batch, N = _fixed_setup(model, {"q": q, "qd": qd}, f_ext)
    a0 = _gravity_a0(model)
    C = np.empty((tree.nv, N))
    H = np.empty((N, tree.nv, tree.nv))

    def chunk(sl: slice, arena: dict) -> None:
        J = _Joints(tree, v["q"][:, sl], arena=arena)
        C[:, sl] = _rnea(J, v["qd"][:, sl], None, a0, _fext_slice(fx, sl))
        _crba(J, out=H[sl])

    _run_chunks(tree, N, chunk)
    return H.reshape(*batch, tree.nv, tree.nv), _batch_first(C, batch)


def FDab(model: FeatherstoneModel, q: object, qd: object, tau: object, f_ext: object = None) -> np.ndarray:
    """Forward dynamics by the articulated-body algorithm: ``qdd`` (..., NB)."""
    tree, v, fx, batch, N = _fixed_setup(model, {"q": q, "qd": qd, "tau": tau}, f_ext)
    a0 = _gravity_a0(model)
    qdd = np.empty((tree.nv, N))

    def chunk(sl: slice, arena: dict) -> None:
        J = _Joints(tree, v["q"][:, sl], arena=arena)
        qdd[:, sl] = _aba(J, v["qd"][:, sl], v["tau"][:, sl], a0, _fext_slice(fx, sl))

    with np.errstate(divide="raise", invalid="raise"):
        try:
            _run_chunks(tree, N, chunk)
        except FloatingPointError:
            raise SingularMassMatrixError(
                f"FDab: a joint of model {model.name!r} moves no inertia (zero articulated inertia)"
            ) from None
    return _batch_first(qdd, batch)


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
    """A floating-base batch: the compiled free tree, the xfb parts in the caller's shapes
    (normalised-quaternion xfb, E, r, base velocity), the base pose and every other array
    batch-last, f_ext (batch-last), the batch shape and size."""

    tree: _Tree
    x: np.ndarray
    E: np.ndarray
    r: np.ndarray
    vw: np.ndarray
    E0: np.ndarray  # (3, 3, N)
    r0: np.ndarray  # (3, N)
    vals: dict[str, np.ndarray]
    fext: dict[int, np.ndarray] | None
    batch: tuple[int, ...]
    N: int

    def joints(self, sl: slice, arena: dict) -> _Joints:
        return _Joints(self.tree, self.vals["q"][:, sl], self.E0[..., sl], self.r0[:, sl], arena)

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
    tree = _compile(model, True)
    n = model.NB - 6
    x, E, r, vw = _xfb_parts(xfb)
    vals = {k: _check_q(v, k, n) for k, v in arrays.items()}
    vals.update({k: as_float_array(v, k, (6,)) for k, v in (six or {}).items()})
    batch = np.broadcast_shapes(x.shape[:-1], *(v.shape[:-1] for v in vals.values()))
    fx, batch = _fext_arrays(f_ext, model, tree, batch)
    N = int(np.prod(batch, dtype=int))
    E0 = np.ascontiguousarray(np.moveaxis(np.broadcast_to(E, (*batch, 3, 3)).reshape(N, 3, 3), 0, -1))
    vals["vw"] = vw
    vals = {k: _batch_last(v, batch) for k, v in vals.items()}
    return _FB(tree, x, E, r, vw, E0, _batch_last(r, batch), vals, _fext_batch_last(fx, batch), batch, N)


def _xdfb(fb: _FB, a_fb: np.ndarray) -> np.ndarray:
    """``[quaternion rate; position rate; a_fb]`` (..., 13) (xfb's parts broadcast with a_fb)."""
    x, E, r, vw = fb.x, fb.E, fb.r, fb.vw
    w_world = vw[..., :3]
    w_body = np.einsum("...ij,...j->...i", E, w_world)
    quat = x[..., :4] / np.linalg.norm(x[..., :4], axis=-1, keepdims=True)
    qd = rqd(quat, w_body)
    rd = vw[..., 3:] + np.cross(w_world, r)  # velocity of the base origin in world
    batch = np.broadcast_shapes(qd.shape[:-1], a_fb.shape[:-1])
    return np.concatenate(
        [
            np.broadcast_to(qd, (*batch, 4)),
            np.broadcast_to(rd, (*batch, 3)),
            np.broadcast_to(a_fb, (*batch, 6)),
        ],
        axis=-1,
    )


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
    nd = np.empty((fb.tree.nv, fb.N))

    def chunk(sl: slice, arena: dict) -> None:
        tau_full = np.concatenate([np.zeros((6, sl.stop - sl.start)), fb.vals["tau"][:, sl]], axis=0)
        nd[:, sl] = _aba(fb.joints(sl, arena), fb.nu(sl), tau_full, a0, _fext_slice(fb.fext, sl))

    with np.errstate(divide="raise", invalid="raise"):
        try:
            _run_chunks(fb.tree, fb.N, chunk)
        except (FloatingPointError, np.linalg.LinAlgError):
            raise SingularMassMatrixError(
                f"FDfb: model {model.name!r} has a joint that moves no inertia"
            ) from None
    return _xdfb(fb, _batch_first(nd[:6], fb.batch)), _batch_first(nd[6:], fb.batch)


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
    a_fb = np.empty((6, fb.N))
    tau = np.empty((tree.nq, fb.N))

    def chunk(sl: slice, arena: dict) -> None:
        J = fb.joints(sl, arena)
        n = J.N
        # zero base acceleration relative to the gravity field: a_base = a_grav = -a0
        nu_dot = np.concatenate([np.broadcast_to(-a0, (6, n)), fb.vals["qdd"][:, sl]], axis=0)
        tau0 = _rnea(J, fb.nu(sl), nu_dot, a0, _fext_slice(fb.fext, sl))
        S = J.subspaces()
        C = _composite(tree, J.world_inertias(), out=J.buf("C", (9, tree.nb, n)))
        IC0 = _inertia_matrices(tree.mass_sub[:1], C[:, :1])[0]
        ab = _solve6(IC0, -tau0[:6])  # base acceleration relative to gravity, world coordinates
        o = tree.one
        F = _inertia_apply(tree.mass_sub[o], C[:, o], np.broadcast_to(ab[:, None, :], (6, tree.nq, n)))
        tau[:, sl] = tau0[6:] + np.einsum("ikn,ikn->kn", S[:, 6:], F)
        a_fb[:, sl] = ab - a0

    try:
        _run_chunks(tree, fb.N, chunk)
    except np.linalg.LinAlgError:
        raise SingularMassMatrixError(f"IDfb: model {model.name!r} has a massless floating base") from None
    return _xdfb(fb, _batch_first(a_fb, fb.batch)), _batch_first(tau, fb.batch)


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
    tau = np.empty((fb.tree.nv, fb.N))

    def chunk(sl: slice, arena: dict) -> None:
        nu_dot = np.concatenate([fb.vals["a_fb"][:, sl], fb.vals["qdd"][:, sl]], axis=0)
        tau[:, sl] = _rnea(fb.joints(sl, arena), fb.nu(sl), nu_dot, a0, _fext_slice(fb.fext, sl))

    _run_chunks(fb.tree, fb.N, chunk)
    return _batch_first(tau[:6], fb.batch), _batch_first(tau[6:], fb.batch)


def HandCfree(
    model: FeatherstoneModel, xfb: object, q: object, qd: object, f_ext: object = None
) -> tuple[np.ndarray, np.ndarray]:
    """Joint-space inertia H (..., NB, NB) and bias C (..., NB) of a floatbase model in the free-base
    coordinates ``[v_fb (world, angular first); qd]``: ``[f_fb; tau] = H [a_fb; qdd] + C``."""
    fb = _fb_setup(model, xfb, {"q": q, "qd": qd}, f_ext)
    nv = fb.tree.nv
    a0 = _gravity_a0(model)
    C = np.empty((nv, fb.N))
    H = np.empty((fb.N, nv, nv))

    def chunk(sl: slice, arena: dict) -> None:
        J = fb.joints(sl, arena)
        C[:, sl] = _rnea(J, fb.nu(sl), None, a0, _fext_slice(fb.fext, sl))
        _crba(J, out=H[sl])

    _run_chunks(fb.tree, fb.N, chunk)
    return H.reshape(*fb.batch, nv, nv), _batch_first(C, fb.batch)


def CRBA(model: FeatherstoneModel, q: object, xfb: object = None) -> np.ndarray:
    """Joint-space inertia matrix alone: (..., NB, NB) for ``q`` (..., NB), or with ``xfb`` the
    free-base one of a floatbase model (``q`` (..., NB - 6); see :func:`HandCfree`)."""
    if xfb is None:
        tree, v, _, batch, N = _fixed_setup(model, {"q": q}, None)

        def joints(sl: slice, arena: dict) -> _Joints:
            return _Joints(tree, v["q"][:, sl], arena=arena)

    else:
        fb = _fb_setup(model, xfb, {"q": q}, None)
        tree, batch, N, joints = fb.tree, fb.batch, fb.N, fb.joints
    H = np.empty((N, tree.nv, tree.nv))

    def chunk(sl: slice, arena: dict) -> None:
        _crba(joints(sl, arena), out=H[sl])

    _run_chunks(tree, N, chunk)
    return H.reshape(*batch, tree.nv, tree.nv)


# --------------------------------------------------------------------------- public: kinematics
def _resolve_body(model: FeatherstoneModel, body: object, body_H_frame: object) -> tuple[int, Transform]:
    if isinstance(body, str):
        b, pose = model.placement(body)
        if body_H_frame is not None:
            pose = pose @ _as_transform(body_H_frame)
        return b, pose
    b = int(body)
    if not 0 <= b <= model.NB:
        raise UnknownNameError(
            "body", str(body), [str(i) for i in range(model.NB + 1)], where=f"model {model.name!r}"
        )
    return b, (Transform.identity() if body_H_frame is None else _as_transform(body_H_frame))


def _as_transform(x: object) -> Transform:
    from bridge.spatial.transform import ensure_transform

    return ensure_transform(x, "body_H_frame")


def _kin_setup(model: FeatherstoneModel, q: object, xfb: object, extra: dict[str, object]):
    """Joints of a batch for the kinematics functions: a free tree when xfb is given."""
    free = xfb is not None
    tree = _compile(model, free)
    n = tree.nq
    qq = _check_q(q, "q", n)
    vals = {
        k: (None if v is None else as_float_array(v, k, (tree.nv if k != "a_fb" else 6,)))
        for k, v in extra.items()
    }
    shapes = [qq.shape[:-1]] + [v.shape[:-1] for v in vals.values() if v is not None]
    if free:
        x, E, r, _ = _xfb_parts(xfb)
        shapes.append(x.shape[:-1])
    batch = np.broadcast_shapes(*shapes)
    N = int(np.prod(batch, dtype=int))
    if free:
        E0 = np.ascontiguousarray(np.moveaxis(np.broadcast_to(E, (*batch, 3, 3)).reshape(N, 3, 3), 0, -1))
        J = _Joints(tree, _batch_last(qq, batch), E0, _batch_last(r, batch))
    else:
        J = _Joints(tree, _batch_last(qq, batch))
    return tree, J, {k: (None if v is None else _batch_last(v, batch)) for k, v in vals.items()}, batch


def _frame_pose(J: _Joints, tree: _Tree, b: int, pose: Transform) -> tuple[np.ndarray, np.ndarray]:
    """(E (3, 3, N), r (3, N)) of a frame on model body b (1-based; 0 = world)."""
    N = J.N
    Ef = pose.rotation.T  # frame_R_body
    of = pose.translation  # frame origin in body coordinates
    i = b - tree.first_body
    if b == 0 or i < 0:
        if b != 0 and i < 0:
            raise InvalidValueError(f"body {b} is a floatbase placeholder; use body 6 (the floating base)")
        E = np.broadcast_to(Ef[:, :, None], (3, 3, N)).copy()
        return E, np.broadcast_to(of[:, None], (3, N)).copy()
    Eb, rb = J.fk()
    Eb, rb = Eb[i], rb[i]
    E = np.einsum("ij,jkn->ikn", Ef, Eb)
    r = rb + _tmatvec(Eb, np.broadcast_to(of[:, None], (3, N)))
    return E, r


def _body_jacobian_world(J: _Joints, tree: _Tree, b: int) -> np.ndarray:
    """World-coordinate Jacobian (6, nv, N) of model body b (columns of its ancestors' subspaces)."""
    i = b - tree.first_body
    S = J.subspaces()
    Jw = np.zeros((6, tree.nv, J.N))
    if b == 0 or i < 0:
        return Jw
    cols = np.flatnonzero(tree.anc[i][tree.dof_body])
    Jw[:, cols] = S[:, cols]
    return Jw


def _to_coordinates(x: np.ndarray, E: np.ndarray, r: np.ndarray, coordinates: str, force_cols: bool = False):
    if coordinates == "world":
        return x
    if coordinates == "local":
        if x.ndim == 3:  # (6, nv, N)
            return np.stack([_x_motion(E, r, x[:, c]) for c in range(x.shape[1])], axis=1)
        return _x_motion(E, r, x)
    raise InvalidValueError(f"coordinates must be 'world' or 'local', got {coordinates!r}")


def body_pose(
    model: FeatherstoneModel, body: int | str, q: object, xfb: object = None, body_H_frame: object = None
) -> tuple[np.ndarray, np.ndarray]:
    """Pose of a body (1-based index, 0 = world) or a placement name, in the world.

    Returns ``(E (..., 3, 3), r (..., 3))``: E the coordinate rotation frame_R_world and r the frame's
    origin in world coordinates, so ``plux(E, r)`` is frame_X_world. With ``xfb`` (..., 13) the model
    is a floatbase model and ``q`` (..., NB - 6) its real joints; without, ``q`` (..., NB).
    """
    b, pose = _resolve_body(model, body, body_H_frame)
    tree, J, _, batch = _kin_setup(model, q, xfb, {})
    E, r = _frame_pose(J, tree, b, pose)
    return np.moveaxis(E, -1, 0).reshape(*batch, 3, 3), _batch_first(r, batch)


def body_velocity(
    model: FeatherstoneModel,
    body: int | str,
    q: object,
    qd: object,
    xfb: object = None,
    body_H_frame: object = None,
    coordinates: str = "world",
) -> np.ndarray:
    """Spatial velocity (..., 6, angular first) of a body/placement in world coordinates (or in the
    frame's own coordinates with ``coordinates="local"``). ``qd`` is (..., NB), or with ``xfb``
    (..., NB - 6) (the base velocity comes from xfb)."""
    Jw, E, r, nu, batch, _ = _jac_setup(model, body, q, qd, xfb, body_H_frame)
    v = np.einsum("inN,nN->iN", Jw, nu)
    return _batch_first(_to_coordinates(v, E, r, coordinates), batch)


def body_jacobian(
    model: FeatherstoneModel,
    body: int | str,
    q: object,
    xfb: object = None,
    body_H_frame: object = None,
    coordinates: str = "world",
) -> np.ndarray:
    """Jacobian (..., 6, nv) with ``body_velocity = J @ [v_fb; qd]`` (floating, nv = NB) or
    ``J @ qd`` (fixed layout, nv = NB); world or frame (``"local"``) coordinates."""
    b, pose = _resolve_body(model, body, body_H_frame)
    tree, J, _, batch = _kin_setup(model, q, xfb, {})
    E, r = _frame_pose(J, tree, b, pose)
    Jw = _to_coordinates(_body_jacobian_world(J, tree, b), E, r, coordinates)
    return np.moveaxis(Jw, -1, 0).reshape(*batch, 6, tree.nv)


def _jac_setup(model, body, q, qd, xfb, body_H_frame, qdd=None, a_fb=None):
    b, pose = _resolve_body(model, body, body_H_frame)
    tree = _compile(model, xfb is not None)
    if xfb is not None:
        vw = _xfb_parts(xfb)[3]
        qd_ = _check_q(qd, "qd", tree.nq)
        lead = np.broadcast_shapes(vw.shape[:-1], qd_.shape[:-1])
        nu = np.concatenate([np.broadcast_to(vw, (*lead, 6)), np.broadcast_to(qd_, (*lead, tree.nq))], -1)
        nd = None
        if qdd is not None:
            qdd_ = _check_q(qdd, "qdd", tree.nq)
            af = np.zeros(6) if a_fb is None else as_float_array(a_fb, "a_fb", (6,))
            lead = np.broadcast_shapes(af.shape[:-1], qdd_.shape[:-1])
            nd = np.concatenate(
                [np.broadcast_to(af, (*lead, 6)), np.broadcast_to(qdd_, (*lead, tree.nq))], -1
            )
    else:
        nu = qd
        nd = qdd
    tree, J, vals, batch = _kin_setup(model, q, xfb, {"nu": nu, "nu_dot": nd})
    E, r = _frame_pose(J, tree, b, pose)
    return _body_jacobian_world(J, tree, b), E, r, vals["nu"], batch, (J, tree, b, pose, vals["nu_dot"])


def body_acceleration(
    model: FeatherstoneModel,
    body: int | str,
    q: object,
    qd: object,
    qdd: object = None,
    xfb: object = None,
    a_fb: object = None,
    body_H_frame: object = None,
    coordinates: str = "world",
) -> np.ndarray:
    """Spatial acceleration (..., 6) of a body/placement: the time derivative of
    :func:`body_velocity` in the same coordinates (gravity not included). With ``qdd=None`` (and
    ``a_fb=None``) this is the bias acceleration ``J_dot @ nu``. ``a_fb`` (..., 6) is the floating
    base's spatial acceleration in world coordinates."""
    if qdd is None and a_fb is None:
        qdd = np.zeros(_compile(model, xfb is not None).nq)
    elif qdd is None:
        qdd = np.zeros(_compile(model, True).nq)
    _, E, r, nu, batch, (J, tree, b, _, nu_dot) = _jac_setup(model, body, q, qd, xfb, body_H_frame, qdd, a_fb)
    i = b - tree.first_body
    if b == 0 or i < 0:
        return np.zeros((*batch, 6))
    v = _velocities(J, nu)
    a = _accelerations(J, v, nu, nu_dot, np.zeros((6, 1)))[:, i]
    return _batch_first(_to_coordinates(a, E, r, coordinates), batch)
