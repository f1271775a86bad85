"""The joint data of one batch of states for a compiled tree (:class:`Joints`).

From the joint positions (and a free base's pose) :class:`Joints` derives, on first use, everything
the kernels (:mod:`.kernels`) share: the bodies' poses by one forward-kinematics pass, their
world-coordinate motion subspaces and inertias, in the tree's level order (:mod:`.tree`) and in
body order. Its work arrays come from an *arena* (a dict of reusable arrays, see
:meth:`Joints.buf`) that a :class:`~.workspace.Workspace` keeps from one batch to the next.
"""

from __future__ import annotations

import math

import numpy as np

from bridge.spatial import cross

from .batch_math import SYM_INDEX
from .tree import Level, Tree

__all__ = ["IA_ROWS", "Joints"]


def _ia_rows() -> np.ndarray:
    """Row of :meth:`Joints.lv_inertia_rows` holding each entry (i, j) of a dense angular-first
    inertia ``[[IO, h^], [h^T, m 1]]`` (h = m c), flattened (36,)."""
    rows = np.full((6, 6), 13, dtype=np.intp)
    for i in range(3):
        for j in range(3):
            rows[i, j] = 3 + SYM_INDEX[i][j]
        rows[3 + i, 3 + i] = 12
    # h^ = [[0, -h2, h1], [h2, 0, -h0], [-h1, h0, 0]]; lower-left -h^
    for i, j, k in ((0, 1, 2), (1, 2, 0), (2, 0, 1)):
        rows[i, 3 + j] = 9 + k  # -h_k
        rows[j, 3 + i] = k
        rows[3 + j, i] = 9 + k
        rows[3 + i, j] = k
    return rows.reshape(36)


IA_ROWS = _ia_rows()


class Joints:
    """Joint positions of one batch for a compiled tree, with everything derived from them.

    ``q`` (nq, N) positions of the 1-DOF joints (internal order); ``E0``/``r0`` the free base pose
    (coordinate rotation base_R_world (3, 3, N) and base origin in world (3, N)) or, for a fixed
    tree, an optional pose of the model's fixed world frame in an outer world frame.

    The kernels work in the tree's level order with permuted body frames (see :class:`Levels`), on
    arrays whose body axis is the second to last (``(..., nb, N)``: every component of a level is one
    contiguous block). ``lc``, ``ls``, ``lns`` (nq, N) are cos q, sin q and -sin q of the joint at
    position off + k, ``lq`` its position. Derived data (computed on first use): :meth:`pose`,
    :meth:`lv_subspaces`, :meth:`lv_inertias`, and in internal body order and true body axes
    :meth:`fk`, :meth:`subspaces` (6, nv, N) and :meth:`world_inertias` (9, nb, N) =
    [m c (3); rotational inertia about the world origin (6, symmetric storage)].
    """

    def __init__(
        self,
        tree: Tree,
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
        and a smaller last chunk reuses them; see :class:`.workspace.Workspace`). The arena keeps, per name,
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

    def parents(self, src: np.ndarray, L: Level, name: str) -> np.ndarray:
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

    def add_to_parents(self, dst: np.ndarray, src: np.ndarray, L: Level) -> None:
        """``dst`` (..., n_prev, N), the previous level's values, += the sum of ``src`` (..., n, N)
        (level L's values) over each parent's children."""
        if L.add == "one":
            if L.n == 1:
                dst += src
            else:
                dst += np.sum(src, axis=-2, keepdims=True, out=self.buf("t_add", dst.shape))
        elif L.add == "slice":
            dst[..., L.add_slice, :] += src
        elif L.add == "unique":
            dst[..., L.par, :] += src
        else:
            dst += np.matmul(L.Bsum, src, out=self.buf("t_add", dst.shape))

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
                cross(r, a, axis=0, out=S[3:, R], scratch=self.buf("t_S", a.shape[1:]))
            else:
                S[3:, R] = cross(r, a, axis=0)
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
        (13): every entry of the dense 6x6 world inertias (see ``IA_ROWS``)."""
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
