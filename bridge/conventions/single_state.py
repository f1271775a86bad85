"""The change of variables of one unbatched state, generated once from two declarations.

The reference path (:func:`bridge.conventions.change_of_variables.change_of_variables`) evaluates
``X = L_t L_s^-1`` and its derivative for any batch. For one state the engines' hot paths need the
same numbers in a few microseconds, so :class:`SingleBaseChange` compiles the two declarations
once, when an engine is made:

* ``X`` and ``X^-1`` are composed symbolically from the declarations' blocks
  (:meth:`~bridge.conventions.declaration.BaseVelocity.symbolic_matrices`,
  :mod:`bridge.conventions.blocks`); their rotation parts become one index map into the pose
  ``H`` (a single ``H.take``), their skew terms ``c (R^a p)^ R^b`` a small product each (with
  the constant ``k^`` of a body-fixed point, the base COM, in place of ``p^`` where declared);
* ``T_dot nu`` (its base part) is ``L_t (r_t - r_s)`` with ``r = L^-1 L_dot v_B`` of each
  declaration (:meth:`~bridge.conventions.declaration.BaseVelocity.body_rate`): its angular part is
  zero and its linear part ``P_t (c_wv (w x v) + c_q ((v - w x q) x w) + c_c (w x (w x k)))``,
  evaluated lazily in Python floats from the BODY base velocity.

Nothing here is derived a second time: a new declaration gets its single-state path by being
declared. :class:`SingleBias` is the lazy ``T_dot nu`` that
:class:`~bridge.conventions.change_of_variables.ChangeOfVariables` adds, writes or takes off in
Python floats.

This module is neutral: it names no library.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from bridge.conventions.blocks import Block, Term
from bridge.conventions.declaration import BaseVelocity
from bridge.errors import InvalidValueError
from bridge.spatial.conventions import Ordering
from bridge.spatial.xp import NUMPY

__all__ = ["SingleBaseChange", "SingleBias", "SingleStateChange", "single_base_change"]

# flat indices into a (4, 4) pose H: R[i, j] = H.flat[4 i + j]; 12 holds 0.0, 15 holds 1.0
_ZERO, _ONE = 12, 15
_SWAP = np.array([3, 4, 5, 0, 1, 2])


def _rotation_index(b: int | None) -> np.ndarray:
    """(3, 3) flat indices of ``R^b`` into H (None: the zero block)."""
    idx = np.full((3, 3), _ZERO, dtype=np.intp)
    for i in range(3):
        for j in range(3):
            if b == 0:
                idx[i, j] = _ONE if i == j else _ZERO
            elif b == 1:
                idx[i, j] = 4 * i + j
            elif b == -1:
                idx[i, j] = 4 * j + i
    return idx


def _compose(
    left: tuple[Block, Block, Block], right: tuple[Block, Block, Block]
) -> tuple[Block, Block, Block]:
    """The blocks of ``[[A, B], [0, C]] @ [[D, E], [0, F]]`` = ``[[AD, AE + BF], [0, CF]]``."""
    A, B, C = left
    D, E, F = right
    return A @ D, A @ E + B @ F, C @ F


class _Compiled:
    """One (6, 6) matrix of block expressions, compiled: an index map for its rotation parts and
    the skew terms ``(rows, cols, term)`` added after the take."""

    __slots__ = ("_Kk", "_terms", "index", "skews")

    def __init__(
        self, blocks: tuple[Block, Block, Block], row_swap: bool, col_swap: bool, k: tuple | None = None
    ) -> None:
        index = np.full((6, 6), _ZERO, dtype=np.intp)
        skews: list[tuple[slice, slice, Term]] = []
        for (r, c), block in zip(((0, 0), (0, 3), (3, 3)), blocks, strict=True):
            rows, cols = slice(r, r + 3), slice(c, c + 3)
            rot = [t for t in block.terms if not t.skew]
            if len(rot) > 1 or (rot and rot[0].coef != 1.0):
                raise InvalidValueError(
                    f"single-state change of variables: block {block} is not one rotation"
                )
            index[rows, cols] = _rotation_index(rot[0].b if rot else None)
            skews += [(rows, cols, t) for t in block.terms if t.skew]
        if row_swap:
            index = index[_SWAP]
        if col_swap:
            index = index[:, _SWAP]
        self.index = index
        if row_swap or col_swap:
            skews = [(_swapped(r) if row_swap else r, _swapped(c) if col_swap else c, t) for r, c, t in skews]
        self.skews = tuple(skews)
        # each skew term c (R^a p)^ R^b as c R^a p^ R^(b - a): (rows, cols, a, b - a, c, fixed)
        self._terms = tuple((r, c, t.a, t.b - t.a, t.coef, t.fixed) for r, c, t in skews)
        #: k^ (3, 3) of the declaration's body-fixed point (the base COM), when a term has it
        self._Kk = None
        if any(t.fixed for _, _, t in skews):
            if k is None:
                raise InvalidValueError("single-state change of variables: no value for the body-fixed point")
            self._Kk = skew_of_origin([[0.0, 0.0, 0.0, k[0]], [0.0, 0.0, 0.0, k[1]], [0.0, 0.0, 0.0, k[2]]])
        for term in self._terms:
            if term[3] not in (-1, 0, 1):
                raise InvalidValueError(f"single-state change of variables: R^{term[3]} in {term}")

    def __call__(self, H: np.ndarray, rows: list, K: np.ndarray | None = None) -> np.ndarray:
        """The matrix at the pose H (4, 4) (``rows = H.tolist()``; ``K`` the cross-product matrix
        of the origin when already made)."""
        X = H.take(self.index)
        if self._terms:
            if K is None:
                K = skew_of_origin(rows)
            R = H[:3, :3]
            for r, c, a, e, coef, fixed in self._terms:  # coef R^a p^ R^e (k^ for a fixed point)
                M = self._Kk if fixed else K
                M = M if not a else (R if a == 1 else R.T).dot(M)
                if e:
                    M = M.dot(R if e == 1 else R.T)
                if coef == 1.0:
                    X[r, c] += M
                elif coef == -1.0:
                    X[r, c] -= M
                else:
                    X[r, c] += coef * M
        return X


def _swapped(s: slice) -> slice:
    return slice(3, 6) if s.start == 0 else slice(0, 3)


def skew_of_origin(rows: list) -> np.ndarray:
    """``p^`` (3, 3) of the origin of one pose given as its rows (Python floats)."""
    px, py, pz = rows[0][3], rows[1][3], rows[2][3]
    return np.array(((0.0, -pz, py), (pz, 0.0, -px), (-py, px, 0.0)))


class SingleBaseChange:
    """The base block of ``nu_t = T nu_s`` from declaration ``source`` to ``target`` for one state,
    compiled once (see the module docstring).

    Attributes:
        identity: ``X`` is the identity and ``T_dot nu`` zero (nothing to do).
        constant: ``X`` does not depend on the state (an order of halves at most).
        bias_free: ``T_dot nu`` is zero at every state.
    """

    __slots__ = (
        "_P_t",
        "_c_c",
        "_c_q",
        "_c_wv",
        "_k",
        "_lin",
        "_to_body",
        "_x",
        "_x_inv",
        "bias_free",
        "constant",
        "identity",
        "inverse_by_transpose",
    )

    def __init__(self, source: BaseVelocity, target: BaseVelocity) -> None:
        L_t, _ = target.symbolic_matrices()
        L_s, L_s_inv = source.symbolic_matrices()
        _, L_t_inv = target.symbolic_matrices()
        s_swap = source.ordering is Ordering.ANGULAR_FIRST
        t_swap = target.ordering is Ordering.ANGULAR_FIRST
        if source.com is not None and target.com is not None and source.com != target.com:
            raise InvalidValueError("single-state change of variables: two different base COMs")
        self._k = k = source.com if source.com is not None else target.com
        if k is None and (source.needs_model or target.needs_model):
            raise InvalidValueError(
                "single-state change of variables: a base velocity at the base COM needs the model "
                "(BaseVelocity.bound)"
            )
        X_blocks, X_inv_blocks = _compose(L_t, L_s_inv), _compose(L_s, L_t_inv)
        self._x = _Compiled(X_blocks, t_swap, s_swap, k)
        self._x_inv = _Compiled(X_inv_blocks, s_swap, t_swap, k)
        # X^-1 is X^T with its off-diagonal block moved up when the blocks say so (rotations on the
        # diagonal, X^-1's upper block the transpose of X's): a transpose instead of products
        P, Q, S = X_blocks
        self.inverse_by_transpose = not (s_swap or t_swap) and X_inv_blocks == (P.T, Q.T, S.T)
        self._to_body = _Compiled(L_s_inv, False, s_swap, k)  # v_B from the source velocity
        self.constant = not self._x.skews and all(i in (_ZERO, _ONE) for i in self._x.index.ravel().tolist())
        self.identity = self.constant and np.array_equal(self._x.index, _rotation_index6())
        (c_wv_t, c_q_t, c_c_t), (c_wv_s, c_q_s, c_c_s) = target.body_rate(), source.body_rate()
        self._c_wv, self._c_q, self._c_c = c_wv_t - c_wv_s, c_q_t - c_q_s, c_c_t - c_c_s
        self.bias_free = self._c_wv == 0 and self._c_q == 0 and self._c_c == 0
        self._P_t = L_t[0].rotation  # the target's P: R^0 or R^1
        self._lin = slice(3, 6) if t_swap else slice(0, 3)

    @property
    def body_point(self) -> tuple | None:
        """The body-fixed point ``k`` (3,) in base axes (the base COM) the declarations use, or None
        when both take the base or world origin."""
        return self._k

    def matrices(self, H: np.ndarray, rows: list) -> tuple[np.ndarray, np.ndarray]:
        """``(X, X^-1)`` (6, 6) at the pose ``H`` (4, 4) with ``rows = H.tolist()``."""
        return self._x(H, rows), self._x_inv(H, rows)

    def to_body(self, H: np.ndarray, rows: list) -> np.ndarray:
        """``L_s^-1`` (6, 6): the source base velocity -> BODY."""
        return self._to_body(H, rows)

    def pack(self, joints, extra: object = (), work: int | None = None) -> np.ndarray:
        """The constants of the compiled kernels (:mod:`bridge.conventions.single_kernels`, whose
        docstring gives the layout) for this change and the joint order ``joints``
        (:class:`~bridge.conventions.convention.JointOrder`), with an engine's ``extra`` numbers at
        the end and ``work`` the offset of the work array in the array they head (None: right after
        them): one contiguous float64 array."""
        n, nv = joints.n, joints.nv
        perm = np.arange(n) if joints.perm is None else joints.perm
        order = np.arange(nv) if joints.back is None else joints.back
        compiled = (self._x, self._x_inv, self._to_body)
        terms = np.array(
            [
                (which, r.start, c.start, a, e, coef, fixed)
                for which, part in enumerate(compiled)
                for r, c, a, e, coef, fixed in part._terms
            ],
            dtype=np.float64,
        ).ravel()
        extra = np.asarray(extra, dtype=np.float64).ravel()
        start = 13 + 3 * 36 + n + nv  # the terms (single_kernels.PERM + n + nv)
        size = start + terms.size + extra.size
        k = self._k if self._k is not None else (0.0, 0.0, 0.0)
        head = [self._c_wv, self._c_q, self._c_c, 1.0 if self._P_t == 1 else 0.0, self._lin.start, *k]
        head += [n, size, start, start + terms.size, size if work is None else work]
        parts = [head, *(c.index.ravel() for c in compiled), perm, order, terms, extra]
        return np.ascontiguousarray(np.concatenate([np.asarray(x, dtype=np.float64) for x in parts]))

    def bias(self, H: np.ndarray, v_body: np.ndarray) -> SingleBias | None:
        """The lazy ``T_dot nu`` base part from the BODY base velocity ``v_body`` (6,) (a buffer
        read when the bias is evaluated), or None when it is zero."""
        if self.bias_free:
            return None
        return SingleBias(self, H, v_body)


def _rotation_index6() -> np.ndarray:
    eye = np.full((6, 6), _ZERO, dtype=np.intp)
    np.fill_diagonal(eye, _ONE)
    return eye


class SingleBias:
    """``T_dot nu`` (its base part, (6,)) of one state, evaluated on first use from a buffer with
    the BODY base velocity: ``[P_t (c_wv (w x v) + c_q ((v - w x q) x w) + c_c (w x (w x k))); 0]``
    (``k`` the base COM) in the target's
    order (see :class:`SingleBaseChange`). Only the linear half is ever non-zero; when it is
    ``c_wv (w x v)`` alone (every registered pair but body-axes world-origin ones and targets in
    world axes) it is added, written or taken off in three lines of Python floats."""

    __slots__ = ("H", "_c", "_cc", "_i", "_k", "_rotate", "_simple", "change", "v_body")

    def __init__(self, change: SingleBaseChange, H: np.ndarray, v_body: np.ndarray) -> None:
        self.change, self.H, self.v_body = change, H, v_body
        self._c, self._k, self._rotate = change._c_wv, change._c_q, change._P_t == 1
        self._cc = change._c_c
        self._i = change._lin.start
        self._simple = not self._k and not self._rotate and not self._cc

    def linear(self) -> tuple[float, float, float]:
        """The non-zero half (3 Python floats)."""
        vx, vy, vz, wx, wy, wz = self.v_body.tolist()
        c = self._c
        # c (w x v)
        ax, ay, az = c * (wy * vz - wz * vy), c * (wz * vx - wx * vz), c * (wx * vy - wy * vx)
        if self._k:
            qx, qy, qz = self.H[:3, :3].T.dot(self.H[:3, 3]).tolist()
            # u = v - w x q, then c_q (u x w)
            ux, uy, uz = vx - (wy * qz - wz * qy), vy - (wz * qx - wx * qz), vz - (wx * qy - wy * qx)
            k = self._k
            ax += k * (uy * wz - uz * wy)
            ay += k * (uz * wx - ux * wz)
            az += k * (ux * wy - uy * wx)
        if self._cc:
            kx, ky, kz = self.change._k
            # u = w x k, then c_c (w x u)
            ux, uy, uz = wy * kz - wz * ky, wz * kx - wx * kz, wx * ky - wy * kx
            cc = self._cc
            ax += cc * (wy * uz - wz * uy)
            ay += cc * (wz * ux - wx * uz)
            az += cc * (wx * uy - wy * ux)
        if self._rotate:
            (r00, r01, r02), (r10, r11, r12), (r20, r21, r22) = self.H[:3, :3].tolist()
            ax, ay, az = (
                r00 * ax + r01 * ay + r02 * az,
                r10 * ax + r11 * ay + r12 * az,
                r20 * ax + r21 * ay + r22 * az,
            )
        return ax, ay, az

    def __call__(self) -> np.ndarray:
        out = np.zeros(6)
        self.write_into(out)
        return out

    def write_into(self, out: np.ndarray) -> None:
        """Write the non-zero half into ``out`` (6,) (the zero half is not written)."""
        i = self._i
        if self._simple:
            vx, vy, vz, wx, wy, wz = self.v_body.tolist()
            c = self._c
            out[i] = c * (wy * vz - wz * vy)
            out[i + 1] = c * (wz * vx - wx * vz)
            out[i + 2] = c * (wx * vy - wy * vx)
            return
        out[i : i + 3] = self.linear()

    def add_into(self, out: np.ndarray, sign: float = 1.0) -> None:
        """``out += sign T_dot nu`` (6,) without a temporary array."""
        i = self._i
        if self._simple:
            vx, vy, vz, wx, wy, wz = self.v_body.tolist()
            c = sign * self._c
            out[i] += c * (wy * vz - wz * vy)
            out[i + 1] += c * (wz * vx - wx * vz)
            out[i + 2] += c * (wx * vy - wy * vx)
            return
        ax, ay, az = self.linear()
        out[i] += sign * ax
        out[i + 1] += sign * ay
        out[i + 2] += sign * az

    def subtract_from(self, out: np.ndarray) -> None:
        """``out -= T_dot nu`` without a temporary array."""
        i = self._i
        if self._simple:
            vx, vy, vz, wx, wy, wz = self.v_body.tolist()
            c = self._c
            out[i] -= c * (wy * vz - wz * vy)
            out[i + 1] -= c * (wz * vx - wx * vz)
            out[i + 2] -= c * (wx * vy - wy * vx)
            return
        self.add_into(out, -1.0)


def views(work: np.ndarray, bias_free: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """``(X, X^-1, T_dot nu)`` of a compiled work array (:mod:`bridge.conventions.single_kernels`):
    views, ``T_dot nu`` None when the pair has none."""
    return work[:36].reshape(6, 6), work[36:72].reshape(6, 6), None if bias_free else work[108:114]


def _joined(a: np.ndarray, b: np.ndarray) -> np.ndarray | None:
    """The array ``[a; b]`` (contiguous float64) when ``a`` and ``b`` are two adjacent parts of one
    array (a view of it), else None."""
    if a.base is None or a.base is not b.base or not (a.flags.c_contiguous and b.flags.c_contiguous):
        return None
    start = a.__array_interface__["data"][0]
    if b.__array_interface__["data"][0] != start + a.nbytes:
        return None
    whole = a.base.reshape(-1) if a.base.flags.c_contiguous else None
    if whole is None:
        return None
    offset = (start - whole.__array_interface__["data"][0]) // whole.itemsize
    return whole[offset : offset + a.size + b.size]


_CHANGES: dict[tuple[BaseVelocity, BaseVelocity], SingleBaseChange] = {}


def single_base_change(source: BaseVelocity, target: BaseVelocity) -> SingleBaseChange:
    """The :class:`SingleBaseChange` from ``source`` to ``target`` (compiled once per pair)."""
    key = (source, target)
    change = _CHANGES.get(key)
    if change is None:
        change = _CHANGES[key] = SingleBaseChange(source, target)
    return change


class SingleStateChange:
    """The change of variables of one unbatched state from the declaration ``source`` to
    ``target``, refilled for each state: the single-state hot path of an engine whose convention
    is ``target`` (the Pinocchio engine's: BODY with its joint order).

    Made once per velocity buffer: ``v_base`` (6,) and ``v_joints`` (n,) receive the state's
    velocity in the target, ``T [base_velocity; s_dot]`` (``v_base`` unused for a fixed base).
    :meth:`fill` takes the base pose ``H`` (4, 4), its ``rows`` (``H.tolist()``), the base velocity
    (6,) in ``source`` and ``s_dot`` (n,) in the model's order; it writes the velocity and returns
    :attr:`cov`, the :class:`~bridge.conventions.change_of_variables.ChangeOfVariables` of that
    state (the same object every time: its previous values are lost), with ``X`` read off the pose
    by the compiled :class:`SingleBaseChange` and ``T_dot nu`` a lazy :class:`SingleBias`.
    """

    __slots__ = (
        "_bias",
        "_bias_pose",
        "_change",
        "_data",
        "_index",
        "_kernel",
        "_perm",
        "_v",
        "_v_base",
        "_v_body",
        "_v_joints",
        "_views",
        "cov",
        "fill",
        "work",
    )

    def __init__(
        self,
        source: BaseVelocity,
        target: BaseVelocity,
        joints,
        v_base: np.ndarray,
        v_joints: np.ndarray,
    ) -> None:
        from bridge.conventions.change_of_variables import ChangeOfVariables

        change = self._change = single_base_change(source, target)
        floating = bool(joints.nb)
        cov = ChangeOfVariables.__new__(ChangeOfVariables)
        cov.joints, cov.nu, cov.X_dot, cov._bias, cov._bias_fn = joints, None, None, None, None
        cov.X = cov.X_inv = cov._inv_fn = None
        cov.ops = NUMPY
        cov.bias_free = change.bias_free or not floating
        cov.identity = (change.identity or not floating) and joints.perm is None
        self.cov = cov
        self._perm, self._v_base, self._v_joints = joints.perm, v_base, v_joints
        # X^-1 = X^T when X holds rotations only, block-diagonally: then X is one take
        self._index = change._x.index if not change._x.skews else None
        self._bias = self._v_body = self.work = None
        if floating and not change.bias_free:
            # T_dot nu reads the BODY velocity: the target's own buffer when the target is BODY
            self._v_body = v_base if target.is_body and not target.swap else np.zeros(6)
            self._bias = cov._bias_fn = SingleBias(change, np.eye(4), self._v_body)
        # the bias reads the pose only for a target in world axes or a body-axes world-origin term
        self._bias_pose = self._bias is not None and (change._P_t == 1 or bool(change._c_q))
        if floating and change.constant and not change.identity:
            eye = np.eye(4)
            cov.X, cov.X_inv = change.matrices(eye, eye.tolist())
        #: ``fill(H, rows, base_velocity, s_dot)``: write the state's target velocity into the
        #: buffers and return the change of variables (the shortest form for this pair)
        self.fill = self._fill_general
        if not floating or change.constant:
            self.fill = self._fill_constant
        elif (
            self._index is not None
            and (self._bias is None or not self._bias_pose)
            and (self._v_body is None or self._v_body is self._v_base)
        ):
            self.fill = self._fill_rotation

    def compile(self, kernels, data: np.ndarray | None = None) -> bool:
        """Make :attr:`fill` one compiled call (``kernels``: :mod:`bridge.conventions.single_kernels`,
        imported by the caller once numba is known to be there) when the base is floating, X
        depends on the state (else the numpy ``fill`` is a copy or a constant product already) and
        the velocity buffers are one array's two adjacent parts; return whether it did.

        :attr:`work` (:data:`~bridge.conventions.single_kernels.WORK`,) ``[X | X^-1 | scratch |
        T_dot nu]`` then holds the state's numbers, and :attr:`cov`'s ``X``, ``X_inv`` and base bias
        are views of it from now on. ``data``: an engine's own array headed by this change's
        constants (:meth:`SingleBaseChange.pack`, its work offset given), whose kernels write the
        work array themselves (:func:`~bridge.conventions.single_kernels.change_base`); None: the
        constants and the work array of this object's own."""
        change, cov = self._change, self.cov
        v = _joined(self._v_base, self._v_joints)
        if not cov.joints.nb or change.constant or v is None:
            return False
        if data is None:
            consts = change.pack(cov.joints)
            data = np.concatenate([consts, np.zeros(kernels.WORK)])
        self._data = data
        w = int(data[kernels.WORK_AT])
        self.work = work = data[w : w + kernels.WORK]
        self._views = views(work, change.bias_free)
        self._v = v
        cov.X, cov.X_inv, cov._bias = self._views
        cov._bias_fn = cov._inv_fn = None
        self._kernel = kernels.fill
        self.fill = self._fill_compiled
        return True

    def _fill_compiled(self, H: np.ndarray, rows: list, base_velocity: np.ndarray, s_dot: np.ndarray):
        """:meth:`_fill_general` as one compiled call (:meth:`compile`)."""
        try:
            self._kernel(H, base_velocity, s_dot, self._v, self._data)
        except TypeError:  # (the kernel takes contiguous float64 arrays only)
            args = (np.ascontiguousarray(x, dtype=np.float64) for x in (H, base_velocity, s_dot))
            self._kernel(*args, self._v, self._data)
        cov = self.cov
        cov.X, cov.X_inv, cov._bias = self._views
        return cov

    def _fill_constant(self, H: np.ndarray, rows: list, base_velocity: np.ndarray, s_dot: np.ndarray):
        """A fixed base or a constant X: the joints, and the base through the constant."""
        perm = self._perm
        self._v_joints[...] = s_dot if perm is None else s_dot[perm]
        cov = self.cov
        if cov.joints.nb:
            if cov.X is None:
                self._v_base[...] = base_velocity
            else:
                np.dot(cov.X, base_velocity, out=self._v_base)
        return cov

    def _fill_rotation(self, H: np.ndarray, rows: list, base_velocity: np.ndarray, s_dot: np.ndarray):
        """X of rotations only (one take; X^-1 = X^T), T_dot nu read lazily from the target
        velocity (a BODY target) when there is one."""
        perm = self._perm
        self._v_joints[...] = s_dot if perm is None else s_dot[perm]
        cov = self.cov
        cov.X = X = H.take(self._index)
        cov.X_inv = X.T
        cov._bias = None
        np.dot(X, base_velocity, out=self._v_base)
        return cov

    def _fill_general(self, H: np.ndarray, rows: list, base_velocity: np.ndarray, s_dot: np.ndarray):
        """Write the state's target velocity into the buffers and return the change of variables
        (``fill``: this general case, or a shorter one picked when the change is made)."""
        perm = self._perm
        self._v_joints[...] = s_dot if perm is None else s_dot[perm]
        cov = self.cov
        change = self._change
        index = self._index
        if index is not None:
            cov.X = X = H.take(index)
            cov.X_inv = X.T
        elif change.inverse_by_transpose:
            cov.X = X = change._x(H, rows)
            X_inv = X.T.copy()
            X_inv[:3, 3:] = X_inv[3:, :3]
            X_inv[3:, :3] = 0.0
            cov.X_inv = X_inv
        else:  # X^-1 made when first asked for (inverse dynamics never needs it)
            K = skew_of_origin(rows)
            cov.X = X = change._x(H, rows, K)
            cov.X_inv = None
            cov._inv_fn = partial(change._x_inv, H, rows, K)
        cov._bias = None
        np.dot(X, base_velocity, out=self._v_base)
        bias = self._bias
        if bias is not None:
            if self._bias_pose:
                bias.H = H
            if self._v_body is not self._v_base:
                np.dot(change.to_body(H, rows), base_velocity, out=self._v_body)
        return cov
