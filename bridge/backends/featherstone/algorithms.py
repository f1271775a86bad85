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

import math
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


# --------------------------------------------------------------------------- compiled trees
@dataclass(eq=False)
class _Level:
    """One depth level of a compiled tree: the bodies at ``positions[start:stop]`` (see
    :class:`_Levels`), revolute ones first, then prismatic ones (a free root is a level alone).

    ``par`` (n,) are the parents' positions relative to the previous level's start (None for the
    first level, whose parent is the fixed world). ``gather`` says how a child level reads its
    parents' values: ``"bcast"`` (one parent for all: broadcast), ``"same"`` (child k's parent is
    parent k) or ``"take"`` (by the few runs ``segments`` when there are, else a gather); ``add``
    how a level adds its values into its parents: ``"one"`` (a single parent: a sum over the
    level), ``"slice"`` (distinct, consecutive parents), ``"unique"`` (distinct parents) or
    ``"matrix"`` (some parent has several children: a product with the 0/1 matrix ``Bsum``
    (n_prev, n)).
    """

    start: int
    stop: int
    n: int
    free: bool
    rev: slice  # positions of the revolute bodies
    pri: slice  # positions of the prismatic bodies
    rev_q: slice  # the same as 1-DOF indices (position - off)
    pri_q: slice
    par: np.ndarray | None
    prev: slice | None  # positions of the previous level
    gather: str
    segments: list[tuple[slice, slice]] | None
    add: str
    add_slice: slice | None
    Bsum: np.ndarray | None


@dataclass(eq=False)
class _CrbaPlan:
    """Where the CRBA puts every entry of H (see :func:`_crba`).

    The kernel fills the rows of a component-major value array ``V`` (K, N): a free base's
    composite inertia IC_0 (rows 0-35, the 6x6 entries), the momenta ``F_j = IC_j S_j`` of the 1-DOF
    joints (rows ``F_row`` .. + 6 nq, component-major, level order: they are H's base rows), then the
    products ``S_a . F_p`` for every 1-DOF joint p and its ancestor-or-self a at distance k (``dots``:
    per k, the row where its block starts and the first position ``lo`` with k such ancestors: the
    positions lo..nb-1, level by level), and a zero row last. ``levels`` are the 1-DOF levels;
    ``anc``/``desc`` (P,) the ancestor's position and the joint's 1-DOF index of every dot row (for
    small batches: two gathers and one product); ``gather`` (nv * nv,) the row of V holding each
    entry of H (both triangles).
    """

    K: int
    F_row: int
    levels: list[_Level]
    dots: list[tuple[int, int]]
    anc: np.ndarray
    desc: np.ndarray
    gather: np.ndarray


@dataclass(eq=False)
class _Levels:
    """The bodies of a compiled tree reordered by depth ("positions"), so that every depth level is
    a contiguous block and the kernels loop over levels (about 10 for a humanoid), not bodies.

    Each body's frame is also re-labelled by a cyclic permutation of its axes so that its joint
    axis is the z axis (``P_i``, with ``E'_i = P_i E_i``; identity for a free body): then every
    revolute joint rotates rows 0 and 1 of its pose and every prismatic joint moves along row 2,
    and the constants below (in the permuted frames) absorb the permutations.

    Per position: ``A`` (nb, 4, 4) ``[[Et', 0], [rt'^T, 1]]``, so that a child's pose
    ``G = [E'; r^T]`` (4 x 3) before its joint rotation is ``A @ G_parent``; ``X``/``XT`` (nb, 6, 6)
    Xtree' and its transpose; ``I`` (nb, 6, 6) the body inertia in body coordinates; ``K``
    (nb, 4, 4) whose product with G gives three vectors ``y_k`` and ``sqrt(m) c`` (c the centre of
    mass in world) with ``sum_k sig_k y_k y_k^T + m c c^T`` the body's second moment of mass about
    the world origin in world axes (``sig`` (4, nb): signs, all +1 for a physical inertia).
    """

    order: np.ndarray  # (nb,) internal body at each position
    pos: np.ndarray  # (nb,) position of each internal body
    levels: list[_Level]
    off: int  # first position with a 1-DOF joint (1 for a free tree)
    qi: np.ndarray  # (nq,) index in q of the joint at position off + k
    vi: np.ndarray  # (nq,) its velocity index
    tau_src: np.ndarray  # (nq,) for velocity index one_v.start + k: row of the (6 * nb, N) forces
    pos_by_v: np.ndarray  # (nq,) position of the body of velocity one_v.start + k
    rev: slice | np.ndarray  # positions of every revolute / prismatic body
    pri: slice | np.ndarray
    A: np.ndarray
    X: np.ndarray
    XT: np.ndarray
    I: np.ndarray  # noqa: E741
    K: np.ndarray
    sig: np.ndarray | None  # None when every sign is +1
    sqm: np.ndarray  # (nb, 1) square roots of the masses
    mass: np.ndarray  # (nb,)
    msub: np.ndarray  # (nb,) subtree masses
    fk_rows: np.ndarray  # (nb, 3) rows of G holding the rows of E (true axes) of each internal body
    crba: _CrbaPlan


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
    first_body: int  # 1-based index of internal body 0 in the FeatherstoneModel
    mass_sub: np.ndarray  # (nb,) subtree masses
    one: slice  # bodies with a 1-DOF joint (all but a free body 0): a contiguous range
    one_v: slice  # their velocity indices (contiguous too, in body order)
    lv: _Levels


_TREES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _compile(fmodel: FeatherstoneModel, free: bool) -> _Tree:
    """The compiled tree of a model (cached on the model object: compiled once per model)."""
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
    mass_sub = mass.copy()
    for i in range(nb - 1, 0, -1):
        if parent[i] >= 0:
            mass_sub[parent[i]] += mass_sub[i]
    if any(c == FREE for c in code[1:]):  # pragma: no cover - only body 0 of a free tree is free
        raise ModelError("internal: a free body other than the root")
    Et = np.ascontiguousarray(Xtree[:, :3, :3])
    rt = _plux_translation(Xtree)
    tree = _Tree(
        nb=nb,
        parent=parent,
        code=code,
        free=free,
        Xtree=Xtree,
        Et=Et,
        rt=rt,
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
        first_body=start + 1,
        mass_sub=mass_sub,
        one=slice(1 if free else 0, nb),
        one_v=slice(6 if free else 0, nv),
        lv=None,  # type: ignore[arg-type]
    )
    tree.lv = _compile_levels(tree)
    cache[free] = tree
    return tree


def _gather_runs(par: np.ndarray) -> list[tuple[slice, slice]] | None:
    """``par`` as runs ``(children, parents)``: children ``j0:j1`` whose parents are one body
    (a parent slice of length 1, broadcast) or consecutive ones; None when that takes more than 4
    runs (then a gather is cheaper)."""
    runs: list[tuple[slice, slice]] = []
    n, j = len(par), 0
    while j < n:
        k = j + 1
        if k < n and par[k] == par[j]:
            while k < n and par[k] == par[j]:
                k += 1
            runs.append((slice(j, k), slice(int(par[j]), int(par[j]) + 1)))
        else:
            while k < n and par[k] == par[k - 1] + 1:
                k += 1
            runs.append((slice(j, k), slice(int(par[j]), int(par[j]) + k - j)))
        j = k
    return runs if len(runs) <= 4 else None


def _axis_perm(code: int) -> np.ndarray:
    """``sigma`` of the cyclic relabelling of a body's axes that makes its joint axis z: new axis j
    is old axis ``sigma[j]``."""
    if code == FREE:
        return np.arange(3)
    k = code % 3
    return np.array([(k + 1) % 3, (k + 2) % 3, k])


def _range_or_index(idx: list[int]) -> slice | np.ndarray:
    if not idx:
        return slice(0, 0)
    if idx == list(range(idx[0], idx[0] + len(idx))):
        return slice(idx[0], idx[0] + len(idx))
    return np.array(idx, dtype=np.intp)


def _compile_levels(tree: _Tree) -> _Levels:
    """Level order, permuted body frames and the level-order constants (see :class:`_Levels`)."""
    nb, parent, code = tree.nb, tree.parent, tree.code
    depth = [0] * nb
    for i in range(nb):  # parents come first
        depth[i] = 0 if parent[i] < 0 else depth[parent[i]] + 1
    order: list[int] = []
    pos = np.zeros(nb, dtype=np.intp)
    bounds = []
    for d in range(max(depth) + 1 if nb else 0):
        body = [i for i in range(nb) if depth[i] == d]
        kind = {i: (0 if code[i] == FREE else 1 if code[i] < 3 else 2) for i in body}
        body.sort(key=lambda i: (kind[i], pos[parent[i]] if parent[i] >= 0 else -1, i))
        s = len(order)
        for i in body:
            pos[i] = len(order)
            order.append(i)
        bounds.append((s, len(order), [kind[i] for i in body]))
    order_arr = np.array(order, dtype=np.intp)
    off = 1 if tree.free else 0
    levels: list[_Level] = []
    for li, (s, e, kinds) in enumerate(bounds):
        n = e - s
        nrev, npri = kinds.count(1), kinds.count(2)
        first = s + kinds.count(0)
        rev = slice(first, first + nrev)
        pri = slice(first + nrev, first + nrev + npri)
        if li == 0:
            par, prev, gather, add, add_slice, Bsum = None, None, "bcast", "none", None, None
        else:
            ps, pe, _ = bounds[li - 1]
            prev = slice(ps, pe)
            par = np.array([pos[parent[order[j]]] - ps for j in range(s, e)], dtype=np.intp)
            n_prev = pe - ps
            if n_prev == 1:
                gather = "bcast"
            elif n == n_prev and np.array_equal(par, np.arange(n)):
                gather = "same"
            else:
                gather = "take"
            add_slice, Bsum = None, None
            if n_prev == 1:
                add = "one"
            elif len(set(par.tolist())) == n:
                if np.array_equal(par, np.arange(par[0], par[0] + n)):
                    add, add_slice = "slice", slice(int(par[0]), int(par[0]) + n)
                else:
                    add = "unique"
            else:
                add = "matrix"
                Bsum = np.zeros((n_prev, n))
                Bsum[par, np.arange(n)] = 1.0
        levels.append(
            _Level(
                start=s,
                stop=e,
                n=n,
                free=kinds == [0],
                rev=rev,
                pri=pri,
                rev_q=slice(rev.start - off, rev.stop - off),
                pri_q=slice(pri.start - off, pri.stop - off),
                par=par,
                prev=prev,
                gather=gather,
                segments=_gather_runs(par) if gather == "take" else None,
                add=add,
                add_slice=add_slice,
                Bsum=Bsum,
            )
        )
    # constants in the permuted frames
    perm = [_axis_perm(code[i]) for i in range(nb)]
    P = np.zeros((nb, 3, 3))
    for i in range(nb):
        P[i, np.arange(3), perm[i]] = 1.0
    A = np.zeros((nb, 4, 4))
    X = np.zeros((nb, 6, 6))
    Ib = np.zeros((nb, 6, 6))
    K = np.zeros((nb, 4, 4))
    sig = np.ones((nb, 4))
    for j, i in enumerate(order):
        Pi = P[i]
        Pp = P[parent[i]] if parent[i] >= 0 else np.eye(3)
        E = Pi @ tree.Et[i] @ Pp.T
        r = Pp @ tree.rt[i]
        A[j, :3, :3] = E
        A[j, 3, :3] = r
        A[j, 3, 3] = 1.0
        X[j, :3, :3] = E
        X[j, 3:, 3:] = E
        X[j, 3:, :3] = -E @ _skew_np(r)
        P6 = np.zeros((6, 6))
        P6[:3, :3] = P6[3:, 3:] = Pi
        Ib[j] = P6 @ tree.I[i] @ P6.T
        m = tree.mass[i]
        Ic = Pi @ tree.Ic[i] @ Pi.T
        # second moment about the centre of mass: Sigma = tr(Ic)/2 1 - Ic = sum lam_k u_k u_k^T
        lam, U = np.linalg.eigh(0.5 * np.trace(Ic) * np.eye(3) - Ic)
        K[j, :3, :3] = np.sqrt(np.abs(lam))[:, None] * U.T
        sig[j, :3] = np.where(lam < 0, -1.0, 1.0)
        K[j, 3, :3] = np.sqrt(m) * (Pi @ tree.com[i])
        K[j, 3, 3] = np.sqrt(m)
    # rows of G (nb * 4, 3, N) that hold each internal body's true E rows and r
    fk_rows = np.array([np.argsort(perm[i]) for i in range(nb)], dtype=np.intp).reshape(nb, 3)
    nq = tree.nq
    one_pos = order_arr[off:]
    qi = np.array([tree.qidx[i] for i in one_pos], dtype=np.intp)
    vi = np.array([tree.vidx[i] for i in one_pos], dtype=np.intp)
    v0 = tree.one_v.start
    pos_by_v = np.empty(nq, dtype=np.intp)
    tau_src = np.empty(nq, dtype=np.intp)
    for k, i in enumerate(one_pos):
        p = off + k
        pos_by_v[vi[k] - v0] = p
        tau_src[vi[k] - v0] = (2 if code[i] < 3 else 5) * nb + p
    crba = _crba_plan(tree, levels, order_arr, pos, off, vi)
    rev_pos = [p for p in range(nb) if code[order[p]] < 3]
    pri_pos = [p for p in range(nb) if 3 <= code[order[p]] < 6]
    msub = tree.mass_sub[order_arr]
    return _Levels(
        order=order_arr,
        pos=pos,
        levels=levels,
        off=off,
        qi=qi,
        vi=vi,
        tau_src=tau_src,
        pos_by_v=pos_by_v,
        rev=_range_or_index(rev_pos),
        pri=_range_or_index(pri_pos),
        A=A,
        X=X,
        XT=np.ascontiguousarray(np.swapaxes(X, -1, -2)),
        I=Ib,
        K=K,
        sig=None if np.all(sig > 0) else np.ascontiguousarray(sig.T),
        sqm=np.sqrt(tree.mass[order_arr])[:, None],
        mass=np.ascontiguousarray(tree.mass[order_arr]),
        msub=np.ascontiguousarray(msub),
        fk_rows=fk_rows,
        crba=crba,
    )


def _crba_plan(
    tree: _Tree, levels: list[_Level], order: np.ndarray, pos: np.ndarray, off: int, vi: np.ndarray
) -> _CrbaPlan:
    """The rows of the CRBA's value array and H's gather from them (see :class:`_CrbaPlan`)."""
    nb, nq, nv = tree.nb, tree.nq, tree.nv
    ppos = [int(pos[tree.parent[order[p]]]) if tree.parent[order[p]] >= 0 else -1 for p in range(nb)]
    zero = -1  # placeholder for the zero row (known at the end)
    gather = np.full((nv, nv), zero, dtype=np.intp)
    r = 36 if tree.free else 0
    if tree.free:
        gather[:6, :6] = np.arange(36).reshape(6, 6)
    F_row = r
    for p in range(off, nb):
        v = vi[p - off]
        for c in range(6 if tree.free else 0):
            gather[c, v] = gather[v, c] = F_row + c * nq + (p - off)
    r += 6 * nq
    dots: list[tuple[int, int]] = []
    anc: list[int] = []
    desc: list[int] = []
    one_levels = [L for L in levels if not L.free]
    for k, L in enumerate(one_levels):
        lo = L.start
        dots.append((r, lo))
        cur = list(range(lo, nb))
        for _ in range(k):
            cur = [ppos[p] for p in cur]
        anc += cur
        desc += [p - off for p in range(lo, nb)]
        for j, (a, p) in enumerate(zip(cur, range(lo, nb), strict=True)):
            va, vp = vi[a - off], vi[p - off]
            gather[va, vp] = gather[vp, va] = r + j
        r += nb - lo
    gather[gather == zero] = r
    return _CrbaPlan(
        K=r + 1,
        F_row=F_row,
        levels=one_levels,
        dots=dots,
        anc=np.array(anc, dtype=np.intp),
        desc=np.array(desc, dtype=np.intp),
        gather=gather.reshape(-1),
    )


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


def _ia_rows() -> np.ndarray:
    """Row of :meth:`_Joints.lv_inertia_rows` holding each entry (i, j) of a dense angular-first
    inertia ``[[IO, h^], [h^T, m 1]]`` (h = m c), flattened (36,)."""
    rows = np.full((6, 6), 13, dtype=np.intp)
    for i in range(3):
        for j in range(3):
            rows[i, j] = 3 + _SYM_INDEX[i][j]
        rows[3 + i, 3 + i] = 12
    # h^ = [[0, -h2, h1], [h2, 0, -h0], [-h1, h0, 0]]; lower-left -h^
    for i, j, k in ((0, 1, 2), (1, 2, 0), (2, 0, 1)):
        rows[i, 3 + j] = 9 + k  # -h_k
        rows[j, 3 + i] = k
        rows[3 + j, i] = 9 + k
        rows[3 + i, j] = k
    return rows.reshape(36)


_IA_ROWS = _ia_rows()


def _rotate_rows(x: np.ndarray, y: np.ndarray, c: np.ndarray, s: np.ndarray, t1: np.ndarray, t2: np.ndarray):
    """``x, y <- c x + s y, c y - s x`` in place: the coordinate rotation about the third axis by the
    angle of cosine c and sine s (its transpose with -s); ``t1``, ``t2`` scratch arrays of x's
    shape."""
    np.multiply(c, x, out=t1)
    np.multiply(s, y, out=t2)
    t1 += t2
    np.multiply(s, x, out=t2)
    y *= c
    y -= t2
    np.copyto(x, t1)


class _Joints:
    """Joint positions of one batch for a compiled tree, with everything derived from them.

    ``q`` (nq, N) positions of the 1-DOF joints (internal order); ``E0``/``r0`` the free base pose
    (coordinate rotation base_R_world (3, 3, N) and base origin in world (3, N)) or, for a fixed
    tree, an optional pose of the model's fixed world frame in an outer world frame.

    The kernels work in the tree's level order with permuted body frames (see :class:`_Levels`), on
    arrays whose body axis is the second to last (``(..., nb, N)``: every component of a level is one
    contiguous block). ``lc``, ``ls``, ``lns`` (nq, N) are cos q, sin q and -sin q of the joint at
    position off + k, ``lq`` its position. Derived data (computed on first use): :meth:`pose`,
    :meth:`lv_subspaces`, :meth:`lv_inertias`, and in internal body order and true body axes
    :meth:`fk`, :meth:`subspaces` (6, nv, N) and :meth:`world_inertias` (9, nb, N) =
    [m c (3); rotational inertia about the world origin (6, symmetric storage)].
    """

    def __init__(
        self,
        tree: _Tree,
        q: np.ndarray,
        E0: np.ndarray | None = None,
        r0: np.ndarray | None = None,
        arena: dict | None = None,
    ):
        self.tree = tree
        self.q = q
        self.N = N = q.shape[-1] if q.shape[0] else (E0.shape[-1] if E0 is not None else 1)
        self.E0 = E0
        self.r0 = r0
        self.arena = {} if arena is None else arena
        nq = tree.nq
        lq = self.lq = self.buf("lq", (nq, N))
        np.take(q, tree.lv.qi, axis=0, out=lq, mode="clip")  # clip: no buffer
        # cos and sin from t = tan(q / 2): cos q = 2 / (1 + t^2) - 1, sin q = t 2 / (1 + t^2); np.tan is
        # several times faster than np.cos plus np.sin, and the results agree with them to 4e-16
        c = self.lc = self.buf("lc", (nq, N))
        s = self.ls = self.buf("ls", (nq, N))
        np.multiply(lq, 0.5, out=s)
        np.tan(s, out=s)
        np.multiply(s, s, out=c)
        c += 1.0
        np.divide(2.0, c, out=c)
        s *= c
        c -= 1.0
        self.lns = np.negative(s, out=self.buf("lns", (nq, N)))
        self._G: np.ndarray | None = None
        self._Sl: np.ndarray | None = None
        self._Wl: np.ndarray | None = None
        self._fk: tuple[np.ndarray, np.ndarray] | None = None
        self._S: np.ndarray | None = None
        self._W: np.ndarray | None = None

    def buf(self, name: str, shape: tuple[int, ...]) -> np.ndarray:
        """An uninitialised contiguous work array called ``name``: a view of the arena's array of
        that name when it is large enough (large temporaries are not re-allocated call after call,
        and a smaller last chunk reuses them; see :func:`_run_chunks`). The arena keeps, per name,
        the array and its views by shape: a call with a known shape costs two look-ups."""
        entry = self.arena.get(name)
        if entry is not None:
            view = entry[1].get(shape)
            if view is not None:
                return view
        size = math.prod(shape)
        if entry is None or entry[0].size < size or len(entry[1]) > 32:
            # a new array (or too many shapes: batch sizes vary): forget the old views
            entry = self.arena[name] = (np.empty(max(size, 1 if entry is None else entry[0].size)), {})
        view = entry[1][shape] = entry[0][:size].reshape(shape)
        return view

    def parents(self, src: np.ndarray, L: _Level, name: str) -> np.ndarray:
        """The values of level L's parents from ``src`` (..., n_prev, N), the previous level's values
        (or (..., 1, N): the world's, or one value for every body): broadcastable against level L's
        (..., n, N)."""
        if L.gather != "take" or src.shape[-2] == 1:  # (a single value broadcasts to every child)
            return src
        out = self.buf(name, (*src.shape[:-2], L.n, src.shape[-1]))
        if L.segments is None:
            return np.take(src, L.par, axis=-2, out=out, mode="clip")
        for children, parents in L.segments:  # a few copies (np.take first copies a strided src)
            np.copyto(out[..., children, :], src[..., parents, :])
        return out

    # ---- forward kinematics, level order and permuted frames
    def pose(self) -> np.ndarray:
        """``G`` (4, 3, nb, N) in level order: rows 0-2 the coordinate rotation E' = P body_R_world
        (permuted axes; row 2 is the joint axis in world), row 3 the body origin in world. Per
        level: one product per component with the constants ``A`` (the parents' poses through
        Xtree) giving ``M``, then ``[E'0; E'1] = c [M0; M1] + s [M1; -M0]`` for the revolute joints
        and ``r += q E'2`` for the prismatic ones."""
        if self._G is not None:
            return self._G
        tree, N = self.tree, self.N
        lv = tree.lv
        G = self.buf("G", (4, 3, tree.nb, N))
        Gw = self.buf("Gw", (4, 3, 1, N))
        if self.E0 is None:
            Gw[...] = 0.0
            for k in range(3):
                Gw[k, k] = 1.0
        else:
            Gw[:3, :, 0] = self.E0
            Gw[3, :, 0] = self.r0
        for L in lv.levels:
            sl = slice(L.start, L.stop)
            if L.free:
                G[:, :, sl] = Gw
                continue
            par = self.parents(Gw if L.prev is None else G[:, :, L.prev], L, "G_par")
            for c in range(3):
                np.matmul(lv.A[sl], par[:, c].swapaxes(0, 1), out=G[:, c, sl].swapaxes(0, 1))
            R, P = L.rev, L.pri
            if R.stop > R.start:
                E01 = G[:2, :, R]
                sM = np.multiply(self.ls[L.rev_q], E01, out=self.buf("t_rot", E01.shape))  # s [M0; M1]
                E01 *= self.lc[L.rev_q]
                E01[0] += sM[1]
                E01[1] -= sM[0]
            if P.stop > P.start:
                G[3, :, P] += np.multiply(
                    self.lq[L.pri_q], G[2, :, P], out=self.buf("t_rot", (3, P.stop - P.start, N))
                )
        self._G = G
        return G

    def fk(self) -> tuple[np.ndarray, np.ndarray]:
        """``(E, r)``: (nb, 3, 3, N) coordinate rotations body_R_world and (nb, 3, N) body origins in
        world (internal body order), i.e. ``plux(E[i], r[i]) = i_X_world``."""
        if self._fk is None:
            lv = self.tree.lv
            G = self.pose()
            self._fk = (G[lv.fk_rows, :, lv.pos[:, None]], G[3, :, lv.pos])
        return self._fk

    def lv_subspaces(self) -> np.ndarray:
        """World-coordinate motion subspaces (6, nb, N) in level order (a free root's: zero)."""
        if self._Sl is not None:
            return self._Sl
        tree, N = self.tree, self.N
        lv = tree.lv
        G = self.pose()
        S = self.buf("Sl", (6, tree.nb, N))
        if tree.free:
            S[:, 0] = 0.0
        R, P = lv.rev, lv.pri
        a, r = G[2][:, R], G[3][:, R]
        if a.shape[1]:
            S[:3, R] = a
            if isinstance(R, slice):
                _cross3(r, a, out=S[3:, R], tmp=self.buf("t_S", a.shape[1:]))
            else:
                S[3:, R] = _cross3(r, a)
        if G[2][:, P].shape[1]:
            S[:3, P] = 0.0
            S[3:, P] = G[2][:, P]
        self._Sl = S
        return S

    def subspaces(self) -> np.ndarray:
        """World-coordinate motion subspaces (6, nv, N) (velocity order); a free base has the
        identity."""
        if self._S is None:
            tree = self.tree
            S = self.buf("S", (6, tree.nv, self.N))
            if tree.free:
                S[:, :6] = 0.0
                for c in range(6):
                    S[c, c] = 1.0
            if tree.nq:
                S[:, tree.one_v] = self.lv_subspaces()[:, tree.lv.pos_by_v]
            self._S = S
        return self._S

    def lv_inertias(self) -> np.ndarray:
        """World inertias (9, nb, N) in level order: first moments m c (rows 0-2) and rotational
        inertias about the world origin (rows 3-8, symmetric storage xx, xy, xz, yy, yz, zz), world
        coordinates (masses: ``lv.mass``).

        With the second moment ``Sigma = sum_k sig_k y_k y_k^T + m c c^T`` (from the products
        ``K @ G``), the rotational inertia is ``tr(Sigma) 1 - Sigma``.
        """
        if self._Wl is not None:
            return self._Wl
        tree, N = self.tree, self.N
        lv, nb = tree.lv, tree.nb
        G = self.pose()
        Y = self.buf("Y", (4, 3, nb, N))
        for c in range(3):
            np.matmul(lv.K, G[:, c].swapaxes(0, 1), out=Y[:, c].swapaxes(0, 1))
        Ys = Y if lv.sig is None else np.multiply(Y, lv.sig[:, None, :, None], out=self.buf("Ys", Y.shape))
        W = self.buf("Wl", (14, nb, N))[:9]  # rows 9-13: see lv_inertia_rows
        np.multiply(lv.sqm, Y[3], out=W[:3])
        D = np.einsum("kanN,kanN->anN", Y, Ys, out=self.buf("D_W", (3, nb, N)))  # diagonal of Sigma
        np.add(D[1], D[2], out=W[3])
        np.add(D[0], D[2], out=W[6])
        np.add(D[0], D[1], out=W[8])
        np.einsum("knN,kanN->anN", Y[:, 0], Ys[:, 1:], out=W[4:6])  # -(xy, xz)
        np.einsum("knN,knN->nN", Y[:, 1], Ys[:, 2], out=W[7])  # -yz
        np.negative(W[4:6], out=W[4:6])
        np.negative(W[7], out=W[7])
        self._Wl = W
        return W

    def lv_inertia_rows(self) -> np.ndarray:
        """(14, nb, N): :meth:`lv_inertias` (rows 0-8), then ``-m c`` (9-11), the mass (12) and zero
        (13): every entry of the dense 6x6 world inertias (see ``_IA_ROWS``)."""
        W = self.lv_inertias()
        Wx = self.buf("Wl", (14, self.tree.nb, self.N))
        np.negative(W[:3], out=Wx[9:12])
        Wx[12] = self.tree.lv.mass[:, None]
        Wx[13] = 0.0
        return Wx

    def world_inertias(self) -> np.ndarray:
        """``W`` (9, nb, N): first moments m c (rows 0-2) and rotational inertias about the world
        origin (rows 3-8, symmetric storage xx, xy, xz, yy, yz, zz) of every body (internal order),
        world coordinates (masses: ``tree.mass``)."""
        if self._W is None:
            tree = self.tree
            W = self.buf("W", (9, tree.nb, self.N))
            np.take(self.lv_inertias(), tree.lv.pos, axis=1, out=W, mode="clip")
            self._W = W
        return self._W


def _add_to_parents(J: _Joints, dst: np.ndarray, src: np.ndarray, L: _Level) -> None:
    """``dst`` (..., n_prev, N), the previous level's values, += the sum of ``src`` (..., n, N)
    (level L's values) over each parent's children."""
    if L.add == "one":
        if L.n == 1:
            dst += src
        else:
            dst += np.sum(src, axis=-2, keepdims=True, out=J.buf("t_add", dst.shape))
    elif L.add == "slice":
        dst[..., L.add_slice, :] += src
    elif L.add == "unique":
        dst[..., L.par, :] += src
    else:
        dst += np.matmul(L.Bsum, src, out=J.buf("t_add", dst.shape))


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
    ``[IO w + h x v; m v - h x w]``. (W and x may have more axes between n and N, broadcast.)"""
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
    mm = np.asarray(m)
    if mm.ndim == 1:
        mm = mm[:, None]
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
    """Recursive Newton-Euler inverse dynamics in (permuted) body coordinates, level by level.

    ``nu``/``nu_dot`` (nv, N) generalized velocity and acceleration (None = zero); ``a0`` (6, N) or
    (6, 1) the acceleration of the model's fixed world in its own coordinates (``-a_grav``);
    ``fext`` body -> (6, N) force on the body in world coordinates. Returns the generalized forces
    (nv, N).

    Per level: products with the constant Xtree' of the level's bodies carry the parents'
    velocities and accelerations across the tree joints; the joint rotations (about z in the
    permuted frames) mix rows 0/1 and 3/4; ``qd``/``qdd`` enter rows 2 or 5; the bias
    ``crm(v) S qd`` is four products. The body forces ``I a + v x* I v`` are computed for all bodies
    at once; the backward pass rotates each level's forces back and adds their products with
    Xtree'^T into the parents.
    """
    tree, N = J.tree, J.N
    lv = tree.lv
    nb, nq = tree.nb, tree.nq
    M = J.buf("rn_M", (6, 2, nb, N))  # v and a of each body, body coordinates
    QQ = J.buf("rn_QQ", (2, nq, N))
    for k, x in enumerate((nu, nu_dot)):
        if x is None:
            QQ[k] = 0.0
        else:
            np.take(x, lv.vi, axis=0, out=QQ[k], mode="clip")
    a0b = np.broadcast_to(a0, (6, N))
    Mw = J.buf("rn_Mw", (6, 2, 1, N))  # the fixed world
    Mw[:, 0] = 0.0
    Mw[:, 1, 0] = a0b
    for L in lv.levels:
        sl = slice(L.start, L.stop)
        if L.free:
            v0 = nu[:6] if nu is not None else np.zeros((6, N))
            acc = a0b + nu_dot[:6] if nu_dot is not None else a0b
            M[:, 0, 0] = _x_motion(J.E0, J.r0, v0)
            M[:, 1, 0] = _x_motion(J.E0, J.r0, acc)
            continue
        par = J.parents(Mw if L.prev is None else M[:, :, L.prev], L, "rn_par")
        for k in range(2):
            np.matmul(lv.X[sl], par[:, k].swapaxes(0, 1), out=M[:, k, sl].swapaxes(0, 1))
        R, Rq = L.rev, L.rev_q
        nr = R.stop - R.start
        if nr:
            t1 = J.buf("t_rot1", (2, 2, nr, N))
            t2 = J.buf("t_rot2", (2, 2, nr, N))
            _rotate_rows(M[0::3, :, R], M[1::3, :, R], J.lc[Rq], J.ls[Rq], t1, t2)
            M[2, :, R] += QQ[:, Rq]
            # crm(v) e_z qd = [w x e_z; vl x e_z] qd: a rows (0, 3) += qd v rows (1, 4), rows (1, 4) -= ...
            qd = QQ[0, Rq]
            tb = t1[0]
            M[0::3, 1, R] += np.multiply(qd, M[1::3, 0, R], out=tb)
            M[1::3, 1, R] -= np.multiply(qd, M[0::3, 0, R], out=tb)
        P, Pq = L.pri, L.pri_q
        npr = P.stop - P.start
        if npr:
            q = J.lq[Pq]
            tb = J.buf("t_rot1", (2, npr, N))
            M[3, :, P] += np.multiply(q, M[1, :, P], out=tb)  # v - (q e_z) x w, velocities and accelerations
            M[4, :, P] -= np.multiply(q, M[0, :, P], out=tb)
            M[5, :, P] += QQ[:, Pq]
            qd = QQ[0, Pq]
            tc = tb[0]
            M[3, 1, P] += np.multiply(qd, M[1, 0, P], out=tc)  # crm(v) [0; e_z] qd = [0; w x e_z] qd
            M[4, 1, P] -= np.multiply(qd, M[0, 0, P], out=tc)
    f = J.buf("rn_f", (6, nb, N))
    if nu is None:
        np.matmul(lv.I, M[:, 1].swapaxes(0, 1), out=f.swapaxes(0, 1))
    else:
        IM = J.buf("rn_IM", (6, 2, nb, N))
        for k in range(2):
            np.matmul(lv.I, M[:, k].swapaxes(0, 1), out=IM[:, k].swapaxes(0, 1))
        _crf3(M[:, 0], IM[:, 0], out=f, tmp3=J.buf("rn_t3", (3, nb, N)))
        f += IM[:, 1]
    if fext:
        G = J.pose()
        for i, fw in fext.items():
            p = lv.pos[i]
            f[:, p] -= _xs_force(G[:3, :, p], G[3, :, p], fw)
    for L in reversed(lv.levels):
        if L.prev is None:
            continue
        sl = slice(L.start, L.stop)
        R, Rq = L.rev, L.rev_q
        nr = R.stop - R.start
        if nr:  # Xj^T: the transposed rotation
            t1 = J.buf("t_rot1", (2, nr, N))
            t2 = J.buf("t_rot2", (2, nr, N))
            _rotate_rows(f[0::3, R], f[1::3, R], J.lc[Rq], J.lns[Rq], t1, t2)
        P, Pq = L.pri, L.pri_q
        npr = P.stop - P.start
        if npr:  # n + (q e_z) x fl
            q = J.lq[Pq]
            tc = J.buf("t_rot1", (npr, N))
            f[0, P] -= np.multiply(q, f[4, P], out=tc)
            f[1, P] += np.multiply(q, f[3, P], out=tc)
        t = J.buf("rn_tf", (6, L.n, N))
        np.matmul(lv.XT[sl], f[:, sl].swapaxes(0, 1), out=t.swapaxes(0, 1))
        _add_to_parents(J, f[:, L.prev], t, L)
    tau = np.empty((tree.nv, N))
    if nq:  # rows 2 (revolute) and 5 (prismatic) are unchanged by the rotations above
        np.take(f.reshape(6 * nb, N), lv.tau_src, axis=0, out=tau[tree.one_v], mode="clip")
    if tree.free:
        tau[:6] = _xt_force(J.E0, J.r0, f[:, 0])
    return tau


def _lv_accumulate(J: _Joints, out: np.ndarray, inc: np.ndarray, root: object = None) -> None:
    """Fill ``out`` (6, nb, N), level order, from the root down: each body's value is its parent's
    plus its joint's increment ``inc`` (6, nq, N) (1-DOF joints, level order; the fixed world's
    value is zero), a free root's is ``root``."""
    off = J.tree.lv.off
    for L in J.tree.lv.levels:
        sl = slice(L.start, L.stop)
        if L.free:
            out[:, 0] = root
            continue
        qs = slice(L.start - off, L.stop - off)
        if L.prev is None:
            np.copyto(out[:, sl], inc[:, qs])
        else:
            np.add(J.parents(out[:, L.prev], L, "acc_par"), inc[:, qs], out=out[:, sl])


def _velocities(J: _Joints, nu: np.ndarray) -> np.ndarray:
    """World-coordinate body velocities (6, nb, N) (internal body order) for the generalized
    velocity nu (nv, N)."""
    tree, N = J.tree, J.N
    lv, nb, nq = tree.lv, tree.nb, tree.nq
    QD = np.take(nu, lv.vi, axis=0, out=J.buf("v_QD", (nq, N)), mode="clip")
    vJ = np.multiply(J.lv_subspaces()[:, lv.off :], QD, out=J.buf("v_J", (6, nq, N)))
    vl = J.buf("v_lv", (6, nb, N))
    _lv_accumulate(J, vl, vJ, nu[:6] if tree.free else None)
    return np.take(vl, lv.pos, axis=1, out=J.buf("v", (6, nb, N)), mode="clip")


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


def _lv_composite(J: _Joints, consume: bool = False) -> np.ndarray:
    """Composite (subtree) world inertias (9, nb, N) in level order (masses: ``lv.msub``).

    With ``consume`` the sums run in place in the array of :meth:`_Joints.lv_inertias`, which J
    then forgets (a later use computes them again): one copy fewer when nothing needs them after.
    """
    lv = J.tree.lv
    if consume:
        C = J.lv_inertias()
        J._Wl = None
    else:
        C = J.buf("Cl", (9, J.tree.nb, J.N))
        np.copyto(C, J.lv_inertias())
    for L in reversed(lv.levels):
        if L.prev is not None:
            _add_to_parents(J, C[:, L.prev], C[:, L.start : L.stop], L)
    return C


def _composite(J: _Joints) -> np.ndarray:
    """Composite (subtree) world inertias (9, nb, N) in internal body order (masses:
    ``tree.mass_sub``)."""
    tree = J.tree
    return np.take(_lv_composite(J), tree.lv.pos, axis=1, out=J.buf("C", (9, tree.nb, J.N)), mode="clip")


def _ancestor_products(J: _Joints, S: np.ndarray, F: np.ndarray, V: np.ndarray) -> None:
    """The rows ``S_a . F_p`` of the CRBA's value array V (see :class:`_CrbaPlan`) from the level-
    order subspaces S (6, nb, N) and the momenta F (6, nq, N)."""
    N, plan, off = J.N, J.tree.lv.crba, J.tree.lv.off
    if N < _CRBA_VIEWS_MIN_N:  # few numpy calls: gather both sides of every product
        P = plan.anc.size
        A = np.take(S, plan.anc, axis=1, out=J.buf("S_anc", (6, P, N)), mode="clip")
        B = np.take(F, plan.desc, axis=1, out=J.buf("F_desc", (6, P, N)), mode="clip")
        np.einsum("cpN,cpN->pN", A, B, out=V[plan.dots[0][0] : plan.K - 1])
        return
    # per level and ancestor distance k: the ancestors' subspaces are views of the previous level's
    # (k - 1) ones (copies only where the level's parents are not in order)
    prev: list[np.ndarray] = []
    for t, L in enumerate(plan.levels):
        cur = [S[:, L.start : L.stop]]
        cur += [J.parents(a, L, f"S_anc{t}_{k}") for k, a in enumerate(prev)]
        FL = F[:, L.start - off : L.stop - off]
        for k, Sa in enumerate(cur):
            r = plan.dots[k][0] + L.start - plan.dots[k][1]
            np.einsum("cpN,cpN->pN", Sa, FL, out=V[r : r + L.n])
        prev = cur


def _crba(J: _Joints, out: np.ndarray | None = None, consume: bool = False) -> np.ndarray:
    """Joint-space inertia matrix (N, nv, nv) by the composite-rigid-body algorithm in world
    coordinates: ``H[a, p] = S_a . (IC_p S_p)`` for dof a's body an ancestor of (or equal to) dof
    p's body, zero for unrelated dofs (a free base's S is the identity: its rows are ``IC_p S_p``).

    Only the tree's pairs are computed, component-major (:func:`_ancestor_products`), into the
    rows of a value array (see :class:`_CrbaPlan`); a transpose to sample-major and a gather then
    write both triangles of H, block by block of ``_CRBA_BLOCK`` states (the transpose reads
    across rows: fast for the odd batch widths of :func:`_padded_width`). ``consume``: see
    :func:`_lv_composite`.
    """
    tree, N = J.tree, J.N
    lv = tree.lv
    plan = lv.crba
    nv, nq, nb, off = tree.nv, tree.nq, tree.nb, lv.off
    V = J.buf("Vc", (plan.K, N))
    if nq:
        S = J.lv_subspaces()
        C = _lv_composite(J, consume)
        o = slice(off, nb)
        F = V[plan.F_row : plan.F_row + 6 * nq].reshape(6, nq, N)
        _inertia_apply(lv.msub[o], C[:, o], S[:, o], out=F, tmp=J.buf("t_F", (nq, N)))
        _ancestor_products(J, S, F, V)
    else:
        C = _lv_composite(J, consume)
    if tree.free:  # the rows of lv_inertia_rows for the whole tree, then its 36 entries
        C0 = J.buf("C0x", (14, N))
        C0[:9] = C[:, 0]
        np.negative(C[:3, 0], out=C0[9:12])
        C0[12] = lv.msub[0]
        C0[13] = 0.0
        V[:36] = np.take(C0, _IA_ROWS, axis=0, out=J.buf("IC0", (36, N)), mode="clip")
    V[plan.K - 1] = 0.0
    if out is None:
        out = np.empty((N, nv, nv))
    out2 = out.reshape(N, nv * nv)
    B = _CRBA_BLOCK
    for b0 in range(0, N, B):  # blocks of states whose sample-major values stay in cache
        b1 = min(b0 + B, N)
        Vt = J.buf("Vt", (b1 - b0, plan.K))
        np.copyto(Vt, V[:, b0:b1].T)
        # mode="clip": an unbuffered take straight into ``out`` (the indices are all valid)
        np.take(Vt, plan.gather, axis=1, out=out2[b0:b1], mode="clip")
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
    """Articulated-body forward dynamics in world coordinates, level by level: nu_dot (nv, N) for
    the generalized forces ``tau`` (nv, N) (a free base's entries: the wrench on it in world
    coordinates), ``a0`` the world's acceleration (``-a_grav``) and ``fext`` body -> world-coordinate
    force on the body.

    The bias accelerations ``c_i = v_i x S_i qd_i`` are accumulated from the root (``chat_i =
    chat_parent + c_i``) and moved into the bias forces (``p_i + I_i chat_i``): the recursion then
    runs on ``a_i - chat_i``, which has no bias term, so the backward pass never multiplies an
    articulated inertia by a vector. Articulated inertias and bias forces are kept together as
    (6, 7) blocks ``[IA | pA]``: one product ``S^T [IA | pA]`` gives ``U`` and ``S . pA``, one outer
    product updates both.
    """
    tree, N = J.tree, J.N
    lv = tree.lv
    nb, nq, nv, off = tree.nb, tree.nq, tree.nv, lv.off
    S = J.lv_subspaces()
    W = J.lv_inertias()
    o = slice(off, nb)
    QD = np.take(nu, lv.vi, axis=0, out=J.buf("ab_QD", (nq, N)), mode="clip")
    V = J.buf("ab_V", (6, 2, nb, N))  # v and chat of each body, world coordinates
    v, ch = V[:, 0], V[:, 1]
    vJ = np.multiply(S[:, o], QD, out=J.buf("ab_vJ", (6, nq, N)))
    _lv_accumulate(J, v, vJ, nu[:6])  # velocities
    cinc = J.buf("ab_c", (6, nq, N))
    if nq:
        _crm3(v[:, o], vJ, out=cinc, tmp3=J.buf("ab_t3q", (3, nq, N)))
    _lv_accumulate(J, ch, cinc, 0.0)  # cumulative bias accelerations
    # bias forces pA = v x* I v + I chat - f_ext, articulated inertias IA = I (world coordinates)
    IV = J.buf("ab_IV", (6, 2, nb, N))
    _inertia_apply(lv.mass[:, None], W[:, None], V, out=IV, tmp=J.buf("ab_t", (2, nb, N)))
    # aug[j, i]: IA[i, j] (symmetric) for j < 6, pA[i] for j = 6
    aug = J.buf("ab_aug", (7, 6, nb, N))
    pA = aug[6]
    _crf3(v, IV[:, 0], out=pA, tmp3=J.buf("ab_t3", (3, nb, N)))
    pA += IV[:, 1]
    if fext:
        for i, fw in fext.items():
            pA[:, lv.pos[i]] -= fw
    # the dense world inertias: one gather of the rows [m c; IO; -m c; m; 0] (see lv_inertias)
    Wx = J.lv_inertia_rows()
    np.take(Wx, _IA_ROWS, axis=0, out=aug[:6].reshape(36, nb, N), mode="clip")
    TQ = np.take(tau, lv.vi, axis=0, out=J.buf("ab_TQ", (nq, N)), mode="clip")
    SA = J.buf("ab_SA", (7, nq, N))  # [U | S.pA], then [U | -u]
    Dinv = J.buf("ab_Dinv", (nq, N))
    u = J.buf("ab_u", (nq, N))
    for L in reversed(lv.levels):
        if L.free:
            continue
        n = L.n
        qs = slice(L.start - off, L.stop - off)
        A = aug[:, :, L.start : L.stop]
        Sl = S[:, L.start : L.stop]
        sa = np.einsum("jink,ink->jnk", A, Sl, out=SA[:, qs])
        U = sa[:6]
        d = np.einsum("ink,ink->nk", Sl, U, out=Dinv[qs])
        np.divide(1.0, d, out=d)
        np.subtract(TQ[qs], sa[6], out=u[qs])
        if L.prev is None:
            continue
        np.negative(u[qs], out=sa[6])
        Ud = np.multiply(U, d, out=J.buf("ab_Ud", (6, n, N)))
        # [IA - U D^-1 U^T | pA + U D^-1 u]: one outer product
        A -= np.multiply(sa[:, None], Ud[None], out=J.buf("ab_T", (7, 6, n, N)))
        _add_to_parents(J, aug[:, :, L.prev], A, L)
    nu_dot = np.empty((nv, N))
    Ah = J.buf("ab_A", (6, nb, N))  # a - chat (with the world's acceleration a0)
    qdd = J.buf("ab_qdd", (nq, N))
    a0b = np.broadcast_to(a0, (6, N))
    for L in lv.levels:
        sl = slice(L.start, L.stop)
        if L.free:
            # IA a' + pA = f_base with a' = a - a_grav = a + a0
            Ah[:, 0] = _solve6(aug[:6, :, 0].swapaxes(0, 1), tau[:6] - pA[:, 0])
            np.subtract(Ah[:, 0], a0b, out=nu_dot[:6])
            continue
        qs = slice(L.start - off, L.stop - off)
        A = Ah[:, sl]
        np.copyto(A, a0b[:, None] if L.prev is None else J.parents(Ah[:, L.prev], L, "ab_par"))
        t = np.einsum("ink,ink->nk", SA[:6, qs], A, out=qdd[qs])
        np.subtract(u[qs], t, out=t)
        t *= Dinv[qs]
        A += np.multiply(S[:, sl], t, out=J.buf("ab_Sq", (6, L.n, N)))
    if nq:
        nu_dot[lv.vi] = qdd
    return nu_dot


def _solve6(A: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Solve A x = b per sample: A (6, 6, N) symmetric positive definite (a composite or
    articulated inertia), b (6, N). Gaussian elimination without pivoting on the batch-last arrays
    (LAPACK's per-matrix overhead is about a microsecond per 6x6 system) for large batches, LAPACK
    for small ones (fewer numpy calls); raises ``np.linalg.LinAlgError`` on a singular matrix."""
    N = b.shape[-1]
    if N < 16:
        x = np.linalg.solve(np.moveaxis(A, -1, 0), np.moveaxis(b, -1, 0)[..., None])
        return np.moveaxis(x[..., 0], 0, -1)
    M = np.empty((6, 7, N))
    M[:, :6] = A
    M[:, 6] = b
    x = np.empty((6, N))
    with np.errstate(divide="raise", invalid="raise"):
        try:
            for k in range(5):
                f = M[k + 1 :, k] / M[k, k]
                M[k + 1 :, k + 1 :] -= f[:, None] * M[k, k + 1 :]
            for k in range(5, -1, -1):
                r = M[k, 6].copy()
                for j in range(k + 1, 6):
                    r -= M[k, j] * x[j]
                np.divide(r, M[k, k], out=x[k])
        except FloatingPointError:
            raise np.linalg.LinAlgError("singular matrix") from None
    return x


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
def _batch_last(x: np.ndarray, batch: tuple[int, ...], width: int | None = None) -> np.ndarray:
    """(..., k) -> (k, N) with the batch broadcast and flattened; with ``width`` (>= N), (k, width)
    whose extra columns repeat the first state (see :func:`_padded_width`)."""
    k = x.shape[-1]
    n = math.prod(batch)
    if x.shape[:-1] != batch:
        x = np.broadcast_to(x, (*batch, k))
    if width is None or width == n:
        return np.ascontiguousarray(x.reshape(n, k).T)
    out = np.empty((k, width))
    out[:, :n] = x.reshape(n, k).T
    out[:, n:] = out[:, :1]
    return out


def _batch_first(x: np.ndarray, batch: tuple[int, ...]) -> np.ndarray:
    """(k, N) -> (..., k) (the first prod(batch) states: padding dropped)."""
    return np.ascontiguousarray(x[:, : math.prod(batch)].T).reshape(*batch, x.shape[0])


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
    items: dict[int, np.ndarray] | None, batch: tuple[int, ...], width: int | None = None
) -> dict[int, np.ndarray] | None:
    if not items:
        return None
    return {i: _batch_last(x, batch, width) for i, x in items.items()}


def _check_q(x: object, name: str, n: int) -> np.ndarray:
    return as_float_array(x, name, (n,))


def _check_xfb(xfb: object) -> np.ndarray:
    """xfb (..., 13) as a float array, its quaternion checked for unit norm."""
    x = as_float_array(xfb, "xfb", (13,))
    quat = x[..., :4]
    norm = np.sqrt(np.einsum("...i,...i->...", quat, quat))
    if np.any(np.abs(norm - 1.0) > 1e-6):
        raise InvalidValueError(
            f"xfb: the quaternion xfb[0:4] is not unit norm (norm {norm.reshape(-1)[0]:.9g})"
        )
    return x


def _xfb_parts(xfb: object) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    x = _check_xfb(xfb)
    quat = x[..., :4]
    norm = np.linalg.norm(quat, axis=-1)
    return x, rq(quat / norm[..., None]), x[..., 4:7], x[..., 7:13]


def _rq_last(q: np.ndarray) -> np.ndarray:
    """:func:`rq` of unit quaternions stored batch-last (4, N): E (3, 3, N)."""
    w, x, y, z = q
    E = np.empty((3, 3, q.shape[-1]))
    ww, xx, yy, zz = w * w, x * x, y * y, z * z
    xy, xz, yz, wx, wy, wz = x * y, x * z, y * z, w * x, w * y, w * z
    E[0, 0] = ww + xx - yy - zz
    E[0, 1] = 2 * (xy + wz)
    E[0, 2] = 2 * (xz - wy)
    E[1, 0] = 2 * (xy - wz)
    E[1, 1] = ww - xx + yy - zz
    E[1, 2] = 2 * (yz + wx)
    E[2, 0] = 2 * (xz + wy)
    E[2, 1] = 2 * (yz - wx)
    E[2, 2] = ww - xx - yy + zz
    E /= ww + xx + yy + zz
    return E


# --------------------------------------------------------------------------- chunks and arenas
#: public functions process batches in chunks of at most this many states: the work arrays are
#: bounded (about 65 MB after RNEA, CRBA and ABA on iCub) and reused from one chunk/call to the
#: next; each chunk pays the fixed cost of the level loops (about 0.5 to 1.2 ms on iCub)
_CHUNK = 1024

#: the CRBA computes its ancestor products level by level on views (no gather, more numpy calls)
#: for batches of at least this many states, else by two gathers and one product
_CRBA_VIEWS_MIN_N = 320

#: the CRBA's last stage (transpose to sample-major, gather into H) runs on blocks of this many states
_CRBA_BLOCK = 128


def _padded_width(N: int) -> tuple[int, int]:
    """``(Np, w)``: the chunked functions process N states as ``Np = k w >= N`` states, k chunks of
    an odd width ``w`` (at most ``_CHUNK + 1``); the extra states repeat the first one and are dropped.

    Why: the kernels' work arrays are (..., w) with one row per component and body; with w a
    multiple of 512 (batch sizes like 1024 are common) rows 4 kB apart map to the same cache sets
    and every access across rows (the transposes, the small matrix products) misses the cache.
    An odd width costs at most one extra state per chunk and is 5-15 % faster at N = 1024.
    """
    if N <= 1:
        return N, 1
    k = -(-N // _CHUNK)
    w = -(-N // k)
    w += 1 - w % 2
    return k * w, w


class _ArenaStore(threading.local):
    """The work arrays of the last public call in this thread (for one compiled tree)."""

    def __init__(self) -> None:
        self.tree: weakref.ReferenceType | None = None
        self.arena: dict[str, np.ndarray] | None = None


_ARENAS = _ArenaStore()


def _run_chunks(tree: _Tree, N: int, fn) -> None:
    """Call ``fn(sl, arena)`` for the consecutive chunks ``sl`` of N states padded as
    :func:`_padded_width` says (the caller's batch-last arrays have its Np columns).

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
        Np, w = _padded_width(N)
        for start in range(0, Np, w):
            fn(slice(start, start + w), arena)
    finally:
        store.tree = weakref.ref(tree)
        store.arena = arena


def _fext_slice(fx: dict[int, np.ndarray] | None, sl: slice) -> dict[int, np.ndarray] | None:
    return None if fx is None else {i: f[:, sl] for i, f in fx.items()}


# --------------------------------------------------------------------------- public: fixed layout
def _fixed_setup(model: FeatherstoneModel, arrays: dict[str, object], f_ext: object):
    """Check and batch the arguments of a fixed-layout function: arrays (..., NB) -> (NB, Np)
    (``Np`` padded from the N states: see :func:`_padded_width`)."""
    tree = _compile(model, False)
    vals = {k: _check_q(v, k, model.NB) for k, v in arrays.items()}
    batch = np.broadcast_shapes(*(v.shape[:-1] for v in vals.values()))
    fx, batch = _fext_arrays(f_ext, model, tree, batch)
    N = math.prod(batch)
    Np = _padded_width(N)[0]
    vals = {k: _batch_last(v, batch, Np) for k, v in vals.items()}
    return tree, vals, _fext_batch_last(fx, batch, Np), batch, N, Np


def ID(model: FeatherstoneModel, q: object, qd: object, qdd: object, f_ext: object = None) -> np.ndarray:
    """Inverse dynamics (RNEA): joint forces ``tau`` (..., NB) for ``q``, ``qd``, ``qdd`` (..., NB).

    Every body's joint counts (floatbase placeholders included, as spatial_v2's ``ID`` does).
    ``f_ext``: external forces on the bodies in world coordinates (see :func:`_fext_arrays`).
    """
    tree, v, fx, batch, N, Np = _fixed_setup(model, {"q": q, "qd": qd, "qdd": qdd}, f_ext)
    a0 = _gravity_a0(model)
    tau = np.empty((tree.nv, Np))

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
    tree, v, fx, batch, N, Np = _fixed_setup(model, {"q": q, "qd": qd}, f_ext)
    a0 = _gravity_a0(model)
    C = np.empty((tree.nv, Np))
    H = np.empty((Np, tree.nv, tree.nv))

    def chunk(sl: slice, arena: dict) -> None:
        J = _Joints(tree, v["q"][:, sl], arena=arena)
        C[:, sl] = _rnea(J, v["qd"][:, sl], None, a0, _fext_slice(fx, sl))
        _crba(J, out=H[sl], consume=True)  # (after the RNEA: nothing needs J's inertias then)

    _run_chunks(tree, N, chunk)
    return H[:N].reshape(*batch, tree.nv, tree.nv), _batch_first(C, batch)


def FDab(model: FeatherstoneModel, q: object, qd: object, tau: object, f_ext: object = None) -> np.ndarray:
    """Forward dynamics by the articulated-body algorithm: ``qdd`` (..., NB)."""
    tree, v, fx, batch, N, Np = _fixed_setup(model, {"q": q, "qd": qd, "tau": tau}, f_ext)
    a0 = _gravity_a0(model)
    qdd = np.empty((tree.nv, Np))

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
    """A floating-base batch: the compiled free tree, the normalised base quaternion (4, Np), the
    base pose and every other array batch-last (the base velocity ``vals["vw"]``), f_ext
    (batch-last), the batch shape and size N; the arrays have Np >= N columns (padded: see
    :func:`_padded_width`)."""

    tree: _Tree
    quat: np.ndarray  # (4, N)
    E0: np.ndarray  # (3, 3, N)
    r0: np.ndarray  # (3, N)
    vals: dict[str, np.ndarray]
    fext: dict[int, np.ndarray] | None
    batch: tuple[int, ...]
    N: int
    Np: int

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
    x = _check_xfb(xfb)
    vals = {k: _check_q(v, k, n) for k, v in arrays.items()}
    vals.update({k: as_float_array(v, k, (6,)) for k, v in (six or {}).items()})
    batch = np.broadcast_shapes(x.shape[:-1], *(v.shape[:-1] for v in vals.values()))
    fx, batch = _fext_arrays(f_ext, model, tree, batch)
    N = math.prod(batch)
    Np = _padded_width(N)[0]
    xl = _batch_last(x, batch, Np)  # (13, Np)
    q0, q1, q2, q3 = xl[:4]
    quat = xl[:4] / np.sqrt(q0 * q0 + q1 * q1 + q2 * q2 + q3 * q3)
    vals = {k: _batch_last(v, batch, Np) for k, v in vals.items()}
    vals["vw"] = xl[7:13]
    return _FB(tree, quat, _rq_last(quat), xl[4:7], vals, _fext_batch_last(fx, batch, Np), batch, N, Np)


def _xdfb(fb: _FB, a_fb: np.ndarray) -> np.ndarray:
    """``[quaternion rate; position rate; a_fb]`` (..., 13) for the base acceleration a_fb (6, N)."""
    vw = fb.vals["vw"]
    w = vw[:3]
    out = np.empty((13, fb.Np))
    wb = _matvec(fb.E0, w)  # angular velocity in base coordinates
    # q_dot = 1/2 q * (0, w_B) (Hamilton product, w first)
    qw, qv = fb.quat[0], fb.quat[1:]
    np.multiply(qv[0], wb[0], out=out[0])
    out[0] += qv[1] * wb[1]
    out[0] += qv[2] * wb[2]
    out[0] *= -0.5
    _cross3(qv, wb, out=out[1:4])
    out[1:4] += qw * wb
    out[1:4] *= 0.5
    _cross3(w, fb.r0, out=out[4:7])  # velocity of the base origin in world
    out[4:7] += vw[3:]
    out[7:] = a_fb
    return _batch_first(out, fb.batch)


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
        nd[:, sl] = _aba(fb.joints(sl, arena), fb.nu(sl), tau_full, a0, _fext_slice(fb.fext, sl))

    with np.errstate(divide="raise", invalid="raise"):
        try:
            _run_chunks(fb.tree, fb.N, chunk)
        except (FloatingPointError, np.linalg.LinAlgError):
            raise SingularMassMatrixError(
                f"FDfb: model {model.name!r} has a joint that moves no inertia"
            ) from None
    return _xdfb(fb, nd[:6]), _batch_first(nd[6:], fb.batch)


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
        tau0 = _rnea(J, fb.nu(sl), nu_dot, a0, _fext_slice(fb.fext, sl))
        S = J.subspaces()
        C = _composite(J)
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
    return _xdfb(fb, a_fb), _batch_first(tau, fb.batch)


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
    C = np.empty((nv, fb.Np))
    H = np.empty((fb.Np, nv, nv))

    def chunk(sl: slice, arena: dict) -> None:
        J = fb.joints(sl, arena)
        C[:, sl] = _rnea(J, fb.nu(sl), None, a0, _fext_slice(fb.fext, sl))
        _crba(J, out=H[sl], consume=True)  # (after the RNEA: nothing needs J's inertias then)

    _run_chunks(fb.tree, fb.N, chunk)
    return H[: fb.N].reshape(*fb.batch, nv, nv), _batch_first(C, fb.batch)


def CRBA(model: FeatherstoneModel, q: object, xfb: object = None) -> np.ndarray:
    """Joint-space inertia matrix alone: (..., NB, NB) for ``q`` (..., NB), or with ``xfb`` the
    free-base one of a floatbase model (``q`` (..., NB - 6); see :func:`HandCfree`)."""
    if xfb is None:
        tree, v, _, batch, N, Np = _fixed_setup(model, {"q": q}, None)

        def joints(sl: slice, arena: dict) -> _Joints:
            return _Joints(tree, v["q"][:, sl], arena=arena)

    else:
        fb = _fb_setup(model, xfb, {"q": q}, None)
        tree, batch, N, Np, joints = fb.tree, fb.batch, fb.N, fb.Np, fb.joints
    H = np.empty((Np, tree.nv, tree.nv))

    def chunk(sl: slice, arena: dict) -> None:
        _crba(joints(sl, arena), out=H[sl], consume=True)

    _run_chunks(tree, N, chunk)
    return H[:N].reshape(*batch, tree.nv, tree.nv)


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
