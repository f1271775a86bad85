"""A FeatherstoneModel compiled for the batched kernels, and its level schedule.

:func:`compile_tree` turns a model into a :class:`Tree` (0-based bodies, parent -1 = the fixed
world; a *free* tree replaces the floatbase bodies 1-6 by one free body whose generalized velocity
is its spatial velocity in world coordinates, angular first). The tree's :class:`Levels` reorder the
bodies by depth so that the kernels (:mod:`.kernels`) loop over depth levels, not bodies, and
re-label each body's axes so that its joint axis is z; :class:`CrbaPlan` says where the CRBA puts
every entry of the mass matrix.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from bridge.errors import ModelError
from bridge.spatial import skew, vee

from .model import JTYPES, FeatherstoneModel

__all__ = ["FREE", "CrbaPlan", "Level", "Levels", "Tree", "compile_tree"]

FREE = 6  # joint code of a free floating body (internal)


# --------------------------------------------------------------------------- compiled trees
@dataclass(eq=False)
class Level:
    """One depth level of a compiled tree: the bodies at ``positions[start:stop]`` (see
    :class:`Levels`), revolute ones first, then prismatic ones (a free root is a level alone).

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
class CrbaPlan:
    """Where the CRBA puts every entry of H (see :func:`.kernels.crba`).

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
    levels: list[Level]
    dots: list[tuple[int, int]]
    anc: np.ndarray
    desc: np.ndarray
    gather: np.ndarray


@dataclass(eq=False)
class Levels:
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
    levels: list[Level]
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
    nb: int
    nv: int
    ppos: np.ndarray  # (nb,) position of the parent of each position (-1: the fixed world)
    _crba: CrbaPlan | None = field(default=None, repr=False)

    @property
    def crba(self) -> CrbaPlan:
        """The CRBA's plan (:class:`CrbaPlan`), made on first use: O(pairs) in time and memory,
        which a model that never asks for a mass matrix does not pay."""
        plan = self._crba
        if plan is None:
            plan = self._crba = _crba_plan(self)
        return plan


@dataclass(eq=False)
class Tree:
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
    first_body: int  # 1-based index of internal body 0 in the FeatherstoneModel
    mass_sub: np.ndarray  # (nb,) subtree masses
    one: slice  # bodies with a 1-DOF joint (all but a free body 0): a contiguous range
    one_v: slice  # their velocity indices (contiguous too, in body order)
    lv: Levels

    def support(self, i: int) -> np.ndarray:
        """The generalized-velocity indices (sorted) of body i's joint and its ancestors' joints:
        the columns of body i's Jacobian that can be non-zero (none for i < 0, the fixed world)."""
        cols: list[int] = []
        while i >= 0:
            if self.code[i] == FREE:
                cols.extend(range(6))
            else:
                cols.append(self.vidx[i])
            i = self.parent[i]
        return np.array(sorted(cols), dtype=np.intp)


def _tree_topology(fmodel: FeatherstoneModel, free: bool) -> tuple[list[int], list[int], np.ndarray]:
    """``parent`` (nb,) and joint ``code`` (nb,) of the internal bodies (0-based, -1 the fixed
    world) and their ``Xtree`` (nb, 6, 6); a free tree's body 0 is the free body (code FREE,
    identity Xtree) standing for the model's floatbase bodies 1-6."""
    start = 5 if free else 0  # internal 0 = model body start + 1
    nb = fmodel.NB - start
    parent = [fmodel.parent[start + i] - 1 - start for i in range(nb)]
    code = [JTYPES.index(fmodel.jtype[start + i]) for i in range(nb)]
    Xtree = np.array(fmodel.Xtree[start:], dtype=np.float64)
    if free:
        parent[0] = -1
        code[0] = FREE
        Xtree[0] = np.eye(6)
    return parent, code, Xtree


def _mass_properties(inertias: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """From body ``inertias`` (nb, 6, 6) (angular first, body coordinates): the symmetrised
    inertias (nb, 6, 6), the masses (nb,), the centres of mass (nb, 3) and the rotational inertias
    about them (nb, 3, 3), in body coordinates (a massless body's centre of mass is its origin)."""
    inertia = np.array(inertias, dtype=np.float64)
    inertia = 0.5 * (inertia + np.swapaxes(inertia, -1, -2))
    mass = np.trace(inertia[:, 3:, 3:], axis1=1, axis2=2) / 3.0
    # I = [[Ibar, h x], [-h x, m 1]] (angular first): h x is the upper-right block
    hx = inertia[:, :3, 3:]
    h = vee(hx)
    safe = np.where(mass > 0, mass, 1.0)
    com = np.where(mass[:, None] > 0, h / safe[:, None], 0.0)
    Ibar = inertia[:, :3, :3]
    cx = skew(com)
    Ic = Ibar + mass[:, None, None] * (cx @ cx)  # Ibar = Ic - m c^ c^
    return inertia, mass, np.ascontiguousarray(com), np.ascontiguousarray(Ic)


def _velocity_indices(code: list[int], free: bool) -> tuple[list[int], list[int], int, int, np.ndarray]:
    """``vidx`` (nb,), the first generalized-velocity index of each body's joint; ``qidx`` (nb,),
    its index among the 1-DOF joints (-1 for the free body); ``nv``; ``nq``; and ``dof_body``
    (nv,), the body of each velocity index (a free body 0 has indices 0-5)."""
    vidx, qidx = [], []
    nv = 6 if free else 0
    nq = 0
    dof_body = [0] * nv
    for i, c in enumerate(code):
        if c == FREE:
            vidx.append(0)
            qidx.append(-1)
            continue
        vidx.append(nv)
        qidx.append(nq)
        dof_body.append(i)
        nv += 1
        nq += 1
    return vidx, qidx, nv, nq, np.array(dof_body, dtype=np.intp)


def _subtree_masses(mass: np.ndarray, parent: list[int]) -> np.ndarray:
    """The mass of each body's subtree (nb,), itself included (parents come before children)."""
    mass_sub = mass.copy()
    for i in range(len(parent) - 1, 0, -1):
        if parent[i] >= 0:
            mass_sub[parent[i]] += mass_sub[i]
    return mass_sub


def compile_tree(fmodel: FeatherstoneModel, free: bool) -> Tree:
    """The compiled tree of a model: the free tree of a floatbase model (bodies 1-6 one free body)
    with ``free``, else every body with its 1-DOF joint. Compile once per model and keep the result (a
    :class:`~.workspace.Workspace` holds one)."""
    if free and not fmodel.floating:
        raise ModelError(
            f"Featherstone model {fmodel.name!r} has no floating base (the floatbase layout: bodies 1-6 "
            "joints Px, Py, Pz, Rx, Ry, Rz with identity Xtree, bodies 1-5 massless)"
        )
    parent, code, Xtree = _tree_topology(fmodel, free)
    nb = len(parent)
    inertia, mass, com, Ic = _mass_properties(fmodel.I[5 if free else 0 :])
    vidx, qidx, nv, nq, dof_body = _velocity_indices(code, free)
    if any(c == FREE for c in code[1:]):  # pragma: no cover - only body 0 of a free tree is free
        raise ModelError("internal: a free body other than the root")
    tree = Tree(
        nb=nb,
        parent=parent,
        code=code,
        free=free,
        Xtree=Xtree,
        Et=np.ascontiguousarray(Xtree[:, :3, :3]),
        rt=_plux_translation(Xtree),
        I=inertia,
        mass=mass,
        com=com,
        Ic=Ic,
        vidx=vidx,
        qidx=qidx,
        nv=nv,
        nq=nq,
        dof_body=dof_body,
        first_body=(5 if free else 0) + 1,
        mass_sub=_subtree_masses(mass, parent),
        one=slice(1 if free else 0, nb),
        one_v=slice(6 if free else 0, nv),
        lv=None,  # type: ignore[arg-type]
    )
    tree.lv = _compile_levels(tree)
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


def _depth_order(tree: Tree) -> tuple[np.ndarray, np.ndarray, list[tuple[int, int, list[int]]]]:
    """The bodies by depth: ``order`` (nb,), the body at each position; ``pos`` (nb,), the position
    of each body; and per depth level ``(start, stop, kinds)``, its positions and each body's kind
    (0 free, 1 revolute, 2 prismatic). Within a level: by kind, then by the parent's position."""
    nb, parent, code = tree.nb, tree.parent, tree.code
    depth = [0] * nb
    for i in range(nb):  # parents come first
        depth[i] = 0 if parent[i] < 0 else depth[parent[i]] + 1
    by_depth: list[list[int]] = [[] for _ in range(max(depth) + 1 if nb else 0)]
    for i in range(nb):
        by_depth[depth[i]].append(i)
    order: list[int] = []
    pos = np.zeros(nb, dtype=np.intp)
    bounds = []
    for body in by_depth:
        kind = {i: (0 if code[i] == FREE else 1 if code[i] < 3 else 2) for i in body}
        body.sort(key=lambda i: (kind[i], pos[parent[i]] if parent[i] >= 0 else -1, i))
        s = len(order)
        for i in body:
            pos[i] = len(order)
            order.append(i)
        bounds.append((s, len(order), [kind[i] for i in body]))
    return np.array(order, dtype=np.intp), pos, bounds


def _parent_access(par: np.ndarray, n_prev: int) -> tuple[str, str, slice | None, np.ndarray | None]:
    """How a level of ``n = len(par)`` bodies with parents at ``par`` (relative to the previous
    level's start, which has ``n_prev`` bodies) reads and adds into its parents: ``gather``,
    ``add``, ``add_slice`` and ``Bsum`` (n_prev, n) of :class:`Level`."""
    n = len(par)
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
    return gather, add, add_slice, Bsum


def _levels(
    tree: Tree, order: np.ndarray, pos: np.ndarray, bounds: list[tuple[int, int, list[int]]], off: int
) -> list[Level]:
    """The :class:`Level` of every depth level ``bounds`` (see :func:`_depth_order`)."""
    levels: list[Level] = []
    for li, (s, e, kinds) in enumerate(bounds):
        nrev, npri = kinds.count(1), kinds.count(2)
        first = s + kinds.count(0)
        rev = slice(first, first + nrev)
        pri = slice(first + nrev, first + nrev + npri)
        if li == 0:
            par, prev, gather, add, add_slice, Bsum = None, None, "bcast", "none", None, None
        else:
            ps, pe, _ = bounds[li - 1]
            prev = slice(ps, pe)
            par = np.array([pos[tree.parent[order[j]]] - ps for j in range(s, e)], dtype=np.intp)
            gather, add, add_slice, Bsum = _parent_access(par, pe - ps)
        levels.append(
            Level(
                start=s,
                stop=e,
                n=e - s,
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
    return levels


def _permuted_constants(
    tree: Tree, order: np.ndarray, perm: list[np.ndarray]
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per position, in the permuted body frames (``perm``: each body's axis permutation): ``A``
    (nb, 4, 4), ``X`` (nb, 6, 6) Xtree', ``I`` (nb, 6, 6), ``K`` (nb, 4, 4) and the signs ``sig``
    (nb, 4) of :class:`Levels`."""
    nb, parent = tree.nb, tree.parent
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
        X[j, 3:, :3] = -E @ skew(r)
        P6 = np.zeros((6, 6))
        P6[:3, :3] = P6[3:, 3:] = Pi
        Ib[j] = P6 @ tree.I[i] @ P6.T
        K[j], sig[j] = _second_moment_factor(tree, i, Pi)
    return A, X, Ib, K, sig


def _second_moment_factor(tree: Tree, i: int, Pi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``K`` (4, 4) and ``sig`` (4,) of body ``i`` in its permuted frame (``Pi`` (3, 3)): the rows
    ``sqrt|lam_k| u_k^T`` of its second moment about the centre of mass, then ``sqrt(m) [c^T, 1]``."""
    K = np.zeros((4, 4))
    sig = np.ones(4)
    m = tree.mass[i]
    Ic = Pi @ tree.Ic[i] @ Pi.T
    # second moment about the centre of mass: Sigma = tr(Ic)/2 1 - Ic = sum lam_k u_k u_k^T
    lam, U = np.linalg.eigh(0.5 * np.trace(Ic) * np.eye(3) - Ic)
    K[:3, :3] = np.sqrt(np.abs(lam))[:, None] * U.T
    sig[:3] = np.where(lam < 0, -1.0, 1.0)
    K[3, :3] = np.sqrt(m) * (Pi @ tree.com[i])
    K[3, 3] = np.sqrt(m)
    return K, sig


def _dof_positions(tree: Tree, order: np.ndarray, off: int) -> tuple[np.ndarray, ...]:
    """``qi``, ``vi``, ``tau_src`` and ``pos_by_v`` (each (nq,)) of :class:`Levels`."""
    nb, nq, code = tree.nb, tree.nq, tree.code
    one_pos = order[off:]
    qi = np.array([tree.qidx[i] for i in one_pos], dtype=np.intp)
    vi = np.array([tree.vidx[i] for i in one_pos], dtype=np.intp)
    v0 = tree.one_v.start
    pos_by_v = np.empty(nq, dtype=np.intp)
    tau_src = np.empty(nq, dtype=np.intp)
    for k, i in enumerate(one_pos):
        p = off + k
        pos_by_v[vi[k] - v0] = p
        tau_src[vi[k] - v0] = (2 if code[i] < 3 else 5) * nb + p
    return qi, vi, tau_src, pos_by_v


def _compile_levels(tree: Tree) -> Levels:
    """Level order, permuted body frames and the level-order constants (see :class:`Levels`)."""
    nb, code = tree.nb, tree.code
    order, pos, bounds = _depth_order(tree)
    off = 1 if tree.free else 0
    perm = [_axis_perm(code[i]) for i in range(nb)]
    A, X, Ib, K, sig = _permuted_constants(tree, order, perm)
    qi, vi, tau_src, pos_by_v = _dof_positions(tree, order, off)
    return Levels(
        order=order,
        pos=pos,
        levels=_levels(tree, order, pos, bounds, off),
        off=off,
        qi=qi,
        vi=vi,
        tau_src=tau_src,
        pos_by_v=pos_by_v,
        rev=_range_or_index([p for p in range(nb) if code[order[p]] < 3]),
        pri=_range_or_index([p for p in range(nb) if 3 <= code[order[p]] < 6]),
        A=A,
        X=X,
        XT=np.ascontiguousarray(np.swapaxes(X, -1, -2)),
        I=Ib,
        K=K,
        sig=None if np.all(sig > 0) else np.ascontiguousarray(sig.T),
        sqm=np.sqrt(tree.mass[order])[:, None],
        mass=np.ascontiguousarray(tree.mass[order]),
        msub=np.ascontiguousarray(tree.mass_sub[order]),
        # rows of G (nb * 4, 3, N) that hold each internal body's true E rows and r
        fk_rows=np.array([np.argsort(perm[i]) for i in range(nb)], dtype=np.intp).reshape(nb, 3),
        nb=nb,
        nv=tree.nv,
        ppos=np.array([pos[tree.parent[i]] if tree.parent[i] >= 0 else -1 for i in order], dtype=np.intp),
    )


def _crba_plan(lv: Levels) -> CrbaPlan:
    """The rows of the CRBA's value array and H's gather from them (see :class:`CrbaPlan`).

    Time and memory are linear in the number of ancestor-or-self pairs P (the entries of H that
    can be non-zero, up to nq (nq + 1) / 2 for a chain) plus nv^2 for the gather: the ancestors at
    distance k of the positions ``lo_k..nb-1`` are the parents of those at distance k - 1.
    """
    nb, nv, off, vi, ppos = lv.nb, lv.nv, lv.off, lv.vi, lv.ppos
    nq = nb - off
    free = off == 1
    zero = -1  # placeholder for the zero row (known at the end)
    gather = np.full((nv, nv), zero, dtype=np.intp)
    r = 36 if free else 0
    if free:
        gather[:6, :6] = np.arange(36).reshape(6, 6)
    F_row = r
    if free and nq:  # the base rows: F_p, component-major
        rows = F_row + np.arange(6)[:, None] * nq + np.arange(nq)[None, :]
        gather[:6, vi] = rows
        gather[vi, :6] = rows.T
    r += 6 * nq
    dots: list[tuple[int, int]] = []
    anc: list[np.ndarray] = []
    desc: list[np.ndarray] = []
    one_levels = [L for L in lv.levels if not L.free]
    cur = np.empty(0, dtype=np.intp)
    prev_lo = 0
    for k, L in enumerate(one_levels):
        lo = L.start
        dots.append((r, lo))
        # ancestors at distance k of the positions lo..nb-1 (level order: parents come first)
        cur = np.arange(lo, nb, dtype=np.intp) if k == 0 else ppos[cur[lo - prev_lo :]]
        prev_lo = lo
        d = np.arange(lo - off, nq, dtype=np.intp)
        anc.append(cur)
        desc.append(d)
        va, vp = vi[cur - off], vi[d]
        rows = np.arange(r, r + nb - lo, dtype=np.intp)
        gather[va, vp] = rows
        gather[vp, va] = rows
        r += nb - lo
    gather[gather == zero] = r
    return CrbaPlan(
        K=r + 1,
        F_row=F_row,
        levels=one_levels,
        dots=dots,
        anc=np.concatenate(anc) if anc else np.empty(0, dtype=np.intp),
        desc=np.concatenate(desc) if desc else np.empty(0, dtype=np.intp),
        gather=gather.reshape(-1),
    )


def _plux_translation(X: np.ndarray) -> np.ndarray:
    """r of plux(E, r) (..., 6, 6): the lower-left block is -E r^, so r^ = -E^T X21."""
    return vee(-np.swapaxes(X[..., :3, :3], -1, -2) @ X[..., 3:, :3])
