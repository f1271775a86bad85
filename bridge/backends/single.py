"""What the single-state hot paths of the library engines (Pinocchio, MuJoCo, Drake) share.

One unbatched state given as arrays is checked as :class:`~bridge.conventions.state.State` checks
it, without building one (:func:`bridge.conventions.state.single_arrays`), the engine's queries
are switched between its single-state path and its general one, the State is rebuilt from the
path's copies on demand (:class:`LibrarySingleState`), and the library's mass matrix is taken back to
the representation with index maps made once (:class:`SingleMatrixBack`); the change of variables
itself is :class:`bridge.conventions.single_state.SingleStateChange`, derived from the two
conventions' declarations.
"""

from __future__ import annotations

from functools import cached_property
from typing import NamedTuple

import numpy as np

from bridge._numba import compile_after
from bridge.conventions.convention import JointOrder
from bridge.conventions.declaration import BaseVelocity, Configuration, QuaternionOrder
from bridge.conventions.single_state import SingleStateChange, single_base_change
from bridge.conventions.state import MODERATE_SQ, State, single_arrays, vdot
from bridge.derivatives.select import compiled_kernels
from bridge.spatial import Transform

# (single_arrays: re-exported from bridge.conventions.state)
__all__ = [
    "COMPILE_AFTER",
    "CompiledSingle",
    "LibrarySingleState",
    "SingleMatrixBack",
    "StateArrays",
    "single_arrays",
]


#: single states (mass matrices for :class:`SingleMatrixBack`) an engine's single-state path
#: serves in numpy before it loads its compiled kernels (numba). Loading them costs a fixed time
#: per process and saves a time per state. Measured 2026-11-29 on the shared 2-core machine (iCub,
#: MIXED, ``set_state`` + M + h + J, fresh processes, numba's cache on disk,
#: ``benchmarks/default_path.py --policies``): numba costs a process 0.61-0.63 s (``import
#: numba``, its first compiled function importing scipy's linear algebra, the kernels the path
#: calls, and 0.13 s more at exit while Python's collector frees numba's objects; 3 to 4 s at load
#: 8), and a state takes 31 us on the numpy path against 15 us compiled, 16 us saved. The
#: ski-rental rule (switch once the numpy path has cost what the load costs: never more than twice
#: the best choice made knowing the loop's length) would switch after ~39,000 states; 20,000
#: switches earlier, for the long loops (100,000 states: 1.95-1.98x raw Pinocchio, against 1.74x
#: compiled from the first state and 2.5-2.6x on numpy only), and still leaves a script of a few
#: thousand states on numpy (it never pays the load). The first process of an installation, with
#: no cache on disk, compiles the kernels its path calls once (10 s to minutes, by the load);
#: ``BRIDGE_NUMBA=0`` never loads numba. The environment variable ``BRIDGE_COMPILE_AFTER``
#: replaces this number for the engines made after it is set (:func:`bridge._numba.compile_after`;
#: ``0``: a script known to run long loads them at once).
COMPILE_AFTER = 20_000


class StateArrays(NamedTuple):
    """One state array of the compiled path and its views (:func:`.single_kernels.layout`)."""

    state: np.ndarray  #: the whole array, headed by the constants
    q: np.ndarray  #: the library's configuration (nq,)
    v: np.ndarray  #: the library's velocity (nv,)
    qv: np.ndarray  #: ``[q | v]``
    vb: np.ndarray  #: the base velocity in the representation (6,)
    H: np.ndarray  #: the base pose (4, 4)
    bias: np.ndarray  #: the library's acceleration of zero source acceleration, ``T_dot nu`` (nv,)
    X: np.ndarray  #: the base block of T (6, 6)
    cov: object  #: the :class:`~bridge.conventions.change_of_variables.ChangeOfVariables` over them


class CompiledSingle:
    """The constants and the two state arrays of a library engine's compiled single-state path
    (floating base, one-coordinate joints): the layout of :mod:`.single_kernels` (``state = [c | q
    | v | base velocity | H | work | 0]``), headed by the change's constants from the two
    declarations (:meth:`~bridge.conventions.single_state.SingleBaseChange.pack`) and the library's
    configuration (where q holds the base position, the quaternion and each joint).

    Attributes:
        k: the kernels (:mod:`.single_kernels`).
        parts: where each part is in the state arrays (:func:`.single_kernels.layout`: ``"X"``,
            ``"vb"`` (the base velocity in the source declaration), ``"bias"`` (``T_dot nu``), ...).
        states: two :class:`StateArrays` (``state``, ``q``, ``v``, ``qv``, ``vb``, ``H``, ``bias``,
            ``X``, ``cov``), views of one state array each (used in turn: the current state's and
            the spare), ``cov`` the ChangeOfVariables of that array, its ``X``, ``X_inv`` and base
            bias views of it (nothing to evaluate per state).
        identity: T is the identity (the representation's convention is the library's).
        in_place: the joint order is the identity (results converted in the library's arrays).
        bias_free, inverse: the change has no ``T_dot nu``; the joint order's inverse (or None).
    """

    def __init__(
        self,
        source: BaseVelocity,
        target: BaseVelocity,
        joints: JointOrder,
        configuration: Configuration,
        q_index: np.ndarray,
    ) -> None:
        """``q_index`` (n,): where each joint of the model's order is in the library's q."""
        from bridge.conventions import single_kernels as ck

        from . import single_kernels as k

        self.k = k
        change = single_base_change(source, target)
        wxyz = 1.0 if configuration.quaternion is QuaternionOrder.WXYZ else 0.0
        extra = [configuration.position_slice.start, configuration.quaternion_slice.start, wxyz, *q_index]
        size = change.pack(joints, extra).size
        parts = self.parts = k.layout(size, joints.n)
        consts = change.pack(joints, extra, parts["work"].start)
        self.identity = change.identity and joints.perm is None
        self.in_place = joints.perm is None
        self.bias_free = change.bias_free
        self.inverse = joints.inverse
        self.states = []
        for _ in range(2):
            a = np.zeros(parts["size"].stop)
            a[:size] = consts
            v = a[parts["v"]]
            fill = SingleStateChange(source, target, joints, v[:6], v[6:])
            fill.compile(ck, a)  # (False for a constant X: the cov's X is that constant)
            views = (a[parts[p]] for p in ("q", "v", "qv", "vb"))
            H, X = a[parts["H"]].reshape(4, 4), a[parts["X"]].reshape(6, 6)
            self.states.append(StateArrays(a, *views, H, a[parts["bias"]], X, fill.cov))
        #: the state array of an engine that writes it in place at every state (its kernel checks
        #: everything before it writes): ``states[0][0]``
        self.state = self.states[0][0]


class LibrarySingleState:
    """Mixin of a library engine with a single-state hot path (its own ``_take_single`` and
    ``_<query>_single`` methods): the arguments checked, switching between that path and the
    general one, and the state rebuilt from the path's copies.

    The engine sets ``_single`` (the path is on, :meth:`_use_single_path`), ``_q1``/``_v1`` (the
    library's q and v of the current single state), ``_vb1`` (its base velocity in the
    representation), ``_rows`` (its pose as ``H.tolist()``), ``_cov1`` (its change of variables)
    and, once, ``_nb``, ``_shape_n`` (``(n,)``), ``_s_index``/``_sd_index`` (where ``s`` and
    ``s_dot`` are in q and v, as index arrays) and ``_zero_base`` (a read-only (6,) zero).
    """

    #: single states this engine's numpy path serves before it loads its compiled kernels: None
    #: for the process's setting (``BRIDGE_COMPILE_AFTER``, else :data:`COMPILE_AFTER`), 0 for the
    #: compiled path from the first state (tests set it on the class)
    COMPILE_AFTER: int | None = None
    _single = False
    _state: State | None = None
    #: a copy of the single state's ``s`` when q does not hold it as it is (e.g. cos/sin pairs)
    _s_copy: np.ndarray | None = None

    #: the compiled path (:class:`CompiledSingle`) once loaded, and until then the arguments that
    #: make it (None: not eligible); single states taken by the numpy path meanwhile
    _kern: CompiledSingle | None = None
    _compiled_type: type = CompiledSingle
    _kern_args: tuple | None = None
    _n_numpy = 0
    _state1: np.ndarray | None = None  # the current state's array when the compiled path set it
    _H1: np.ndarray | None = None
    _rows: list | None = None

    @cached_property
    def _compile_after(self) -> int:
        """:attr:`COMPILE_AFTER`, or the process's setting (read once per engine)."""
        given = self.COMPILE_AFTER
        return compile_after(COMPILE_AFTER) if given is None else given

    def _init_compiled(
        self,
        source: BaseVelocity,
        target: BaseVelocity,
        joints: JointOrder,
        configuration: Configuration,
        q_index: np.ndarray | None,
    ) -> None:
        """Make the compiled path available (loaded after :attr:`_compile_after` single states, with
        numba) when the base is floating and every joint has one coordinate (``q_index`` (n,):
        where each joint of the model's order is in the library's q; None: not eligible)."""
        if q_index is not None and self._nb:
            self._kern_args = (source, target, joints, configuration, q_index)
            if self._compile_after <= 0:
                self._load_compiled()

    def _load_compiled(self) -> None:
        """Load the compiled path (once; it stays off without numba)."""
        args, self._kern_args = self._kern_args, None
        if compiled_kernels() is not None:
            self._kern = self._compiled_type(*args)
            self._mass_back._load()

    def set_single_state(
        self, world_H_base: object, s: object, base_velocity: object, s_dot: object, gravity: np.ndarray
    ) -> bool:
        """Hot path of ``KinDyn.set_state`` for one unbatched state given as arrays (``world_H_base``
        (4, 4) or a Transform, ``s``/``s_dot`` (n,), ``base_velocity`` (6,) in this engine's
        representation, ignored but checked for a fixed base) and a checked ``gravity`` (3,).

        Checks the arrays as :class:`State` does and returns False, changing nothing, when they
        are not one valid state (the caller then builds a State, which raises the error). Four
        float64 arrays of the right shapes take the compiled path once it is loaded (one kernel
        checks them and writes the library's q, v and the change of variables, then the engine's
        ``_commit_compiled(state, gravity)``); anything else the engine's ``_take_single(H, rows, s,
        v, s_dot, gravity)``, which copies them."""
        kern = self._kern
        if kern is not None:
            arrays = kern.states[self._spare]
            try:
                done = kern.k.set_state(world_H_base, s, base_velocity, s_dot, arrays[0])
            except TypeError:  # not four contiguous float64 arrays: the numpy path below
                done = None
            if done is not None:
                if done:
                    self._spare ^= 1
                    self._commit_compiled(arrays, gravity)
                return done
        return self._set_single_numpy(world_H_base, s, base_velocity, s_dot, gravity)

    def _set_single_numpy(
        self, world_H_base: object, s: object, base_velocity: object, s_dot: object, gravity: np.ndarray
    ) -> bool:
        """:meth:`set_single_state`'s numpy path: the arrays checked
        (:func:`~bridge.conventions.state.single_arrays`) and copied by the engine's ``_take_single``,
        counted towards loading the compiled path (:attr:`_compile_after`)."""
        taken = single_arrays(world_H_base, s, base_velocity, s_dot, self._shape_n)
        if taken is None or not self._take_single(*taken, gravity):
            return False
        self._state1 = None
        if self._kern_args is not None:  # (the compiled path, not loaded yet: see COMPILE_AFTER)
            self._n_numpy += 1
            if self._n_numpy >= self._compile_after:
                self._load_compiled()
        return True

    def _acceleration_compiled(self, base_acc: object, s_ddot: object, out: np.ndarray) -> bool | None:
        """The compiled state's ``T nu_dot + T_dot nu`` (nv,) into ``out`` for float64 arrays of the
        right shapes: True, False when it is not finite and moderate, None for other arguments or
        no compiled state (the numpy path then takes them)."""
        if self._state1 is None:
            return None
        try:
            return self._kern.k.acceleration(self._state1, base_acc, s_ddot, out)
        except TypeError:  # not contiguous float64 arrays
            return None

    # the compiled state's conversions of the library's results (kernels of .single_kernels)
    def _matrix_back(self, M: np.ndarray) -> np.ndarray:
        """``T^T M T`` (nv, nv) of the library's fresh symmetric matrix ``M`` (C order; its upper
        triangle read), converted in place when the joint order is the same."""
        k = self._kern
        return M if k.identity else self._fresh_back(M, k.k.matrix_back, k.k.matrix_back_permuted)

    def _force_back(self, x: np.ndarray) -> np.ndarray:
        """``T^T x`` (nv,) of a library's generalized force ``x`` (read only: it may be a view of
        the library's buffers)."""
        out = np.empty(x.shape[0])
        self._kern.k.vector_back_permuted(x, self._state1, out)
        return out

    def _columns_back(self, J: np.ndarray) -> np.ndarray:
        """``J T`` (6, nv) of a library's fresh Jacobian ``J`` (C order), in place when the joint
        order is the same."""
        k = self._kern.k
        return self._fresh_back(J, k.columns_back, k.columns_back_permuted)

    def _fresh_back(self, x: np.ndarray, in_place, permuted) -> np.ndarray:
        """A library's fresh result ``x`` converted by a kernel: ``in_place(x, state)`` when the joint
        order is the same, else ``permuted(x, state, out)`` into a new array."""
        if self._kern.in_place:
            in_place(x, self._state1)
            return x
        out = np.empty_like(x)
        permuted(x, self._state1, out)
        return out

    def _use_single_path(self, single: bool) -> None:
        """Switch between the single-state path (the engine's queries then answer from its
        ``_<query>_single`` methods) and the engine's general one."""
        self._single = single

    @property
    def state(self) -> State:
        """The current state (rebuilt from the copies after ``set_single_state``)."""
        if self._state is None and self._single:
            self._state = self._single_state()
        return self._state

    def _single_state(self) -> State:
        """The current single state, rebuilt from the copies (fresh arrays)."""
        s = self._s_copy if self._s_copy is not None else self._q1[self._s_index]
        sd = self._v1[self._sd_index]
        vb = self._vb1.copy() if self._nb else self._zero_base  # the buffer is reused later
        H = Transform(self._pose1(), check=False)
        return State(H, s, vb, sd, self.representation, check=False)

    def _pose1(self) -> np.ndarray:
        """The single state's base pose (4, 4) (a fresh array)."""
        return np.array(self._rows) if self._state1 is None else self._H1.copy()

    def _acceleration_into(
        self, base_acc: object, s_ddot: object, a: np.ndarray, a_base: np.ndarray, a_joints: np.ndarray
    ) -> tuple | None:
        """Write the library's acceleration ``T nu_dot + T_dot nu`` (nv,) of the raw ``base_acc``
        (6,) (None for a fixed base) and ``s_ddot`` (n,) into ``a`` (its base and joint parts
        ``a_base``, ``a_joints``) and return ``(base_acc, s_ddot)`` as arrays; None, ``a``
        undefined, when they are not one finite and moderate acceleration of the right shapes (the
        caller's general path then raises the errors)."""
        nb = self._nb
        try:
            if type(s_ddot) is not np.ndarray:
                s_ddot = np.asarray(s_ddot, dtype=np.float64)
            if nb and type(base_acc) is not np.ndarray:
                base_acc = np.asarray(base_acc, dtype=np.float64)
        except (TypeError, ValueError, OverflowError):
            return None
        if s_ddot.shape != self._shape_n or s_ddot.dtype.kind not in "fiu":
            return None
        if nb:
            if base_acc.shape != (6,) or base_acc.dtype.kind not in "fiu":
                return None
        elif base_acc is not None:
            return None
        self._cov1.acceleration_into(base_acc, s_ddot, a_base, a_joints)
        if not vdot(a, a) < MODERATE_SQ:  # an inf, a NaN or a huge value (all_moderate)
            return None
        return base_acc, s_ddot


class SingleMatrixBack:
    """``T^T M_t T`` (nv, nv) of one state, ``T = blkdiag(X, P)``, from a library's symmetric mass
    matrix ``M_t`` in its own convention (target), the index map of the joint order made once (and
    ``J_t T``, ``T^T tau_t``: :meth:`columns`, :meth:`force`).

    The base rows become ``X^T M_t[:6]`` (with ``X^T M_t[:6, :6] X`` in the corner), written into
    ``M_t``; one ``take`` then permutes the joints back and mirrors the upper triangle into the
    lower one (no take, the lower base block written from the rows, when the order is the same and
    ``M_t`` is full). With numba, the base block is one compiled call (:mod:`.single_kernels`)
    once the numpy path has served ``compile_after`` mass matrices (:data:`COMPILE_AFTER`).
    """

    __slots__ = ("_C", "_after", "_back", "_columns", "_full", "_idx", "_kernel", "_nb", "_nv", "_rows")

    def __init__(self, joints: JointOrder, compile_after: int = 0, full: bool = True) -> None:
        """``full``: the library's matrices are full symmetric (else only their upper triangle
        is read)."""
        nv = self._nv = joints.nv
        self._nb = joints.nb
        self._C = np.empty((6, 6))  # the compiled base block's scratch
        #: the compiled base block (:mod:`.single_kernels`), None before it is loaded or without numba
        self._kernel = self._columns = self._rows = None
        self._after: int | None = compile_after  # (None: loaded, or numba missing)
        if compile_after <= 0:
            self._load()
        self._back, self._full = joints.back, full
        cols = joints.back if joints.back is not None or full else np.arange(nv)
        if cols is None:
            self._idx = None
        else:
            i, j = cols[:, None], cols[None, :]
            self._idx = np.minimum(i, j) * nv + np.maximum(i, j)

    def _load(self) -> None:
        """Load the compiled base block (once; it stays off without numba)."""
        self._after = None
        if compiled_kernels() is not None:
            from .single_kernels import base_columns, base_congruence, base_rows

            self._kernel, self._columns, self._rows = base_congruence, base_columns, base_rows

    def __call__(self, M: np.ndarray, X: np.ndarray | None) -> np.ndarray:
        """The source matrix from ``M`` (nv, nv), a fresh array the caller gives up (it may be
        overwritten and returned), and the base block ``X`` (6, 6) (None: the identity)."""
        if X is not None and self._nb:
            if self._kernel is not None:
                self._kernel(M, X, self._C)
                return M if self._idx is None else M.take(self._idx)
            if self._after is not None:
                self._after -= 1
                if self._after <= 0:
                    self._load()
            idx = self._idx
            if not self._full:  # mirrored (and permuted) first: the products below read whole rows
                M, idx = M.take(idx), None
            M6 = M[:6]
            G = X.T.dot(M6)
            M6[...] = G
            M6[:, :6] = G[:, :6].dot(X)
            if idx is None:
                M[6:, :6] = G[:, 6:].T
                return M
            return M.take(idx)
        return M if self._idx is None else M.take(self._idx)

    def columns(self, J: np.ndarray, X: np.ndarray | None, cov) -> np.ndarray:
        """``J T`` (m, nv) of a library's Jacobian ``J`` (m, nv), a fresh array the caller gives up
        (overwritten and returned when the order is the same), ``X`` the base block (None: the
        identity) and ``cov`` the state's change of variables (the numpy path)."""
        if X is not None and self._columns is not None:
            self._columns(J, X, J)
            return J if self._back is None else J.take(self._back, axis=1)
        return cov.jacobian_back(J, True)

    def force(self, tau: np.ndarray, X: np.ndarray | None, cov) -> np.ndarray:
        """``T^T tau`` (nv,) of a library's generalized force ``tau`` (nv,) (read, not changed: it
        may be a view of the library's buffer), ``X`` the base block (None: the identity) and
        ``cov`` the state's change of variables (the numpy path)."""
        if X is not None and self._rows is not None:
            out = np.empty(self._nv)
            self._rows(tau, X, out)
            return out if self._back is None else out.take(self._back)
        return cov.force_back(tau)
