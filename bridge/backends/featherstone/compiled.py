"""The compiled (numba) path of the batched RNEA, CRBA and ABA, and when it is taken.

:func:`.kernels.rnea`, :func:`.kernels.crba` and :func:`.kernels.aba` call :func:`rnea`,
:func:`crba` and :func:`aba` here first: with numba installed (the ``fast`` extra), the
environment variable ``BRIDGE_NUMBA`` not ``0`` and no external forces, they run
:mod:`.numba_kernels` (in parallel over the batch with numba's threads, ``numba.set_num_threads``,
from :data:`PARALLEL_MIN` states; serially below) and return the result; otherwise None, and the
numpy kernels run. Both give the same numbers to rounding (the tests compare them to 1e-12).

:func:`numpy_only` switches the compiled path off in a ``with`` block (the tests and benchmarks
compare the two paths in one process). numba is imported at the first call, not before.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import ModuleType

import numpy as np

from bridge import _numba
from bridge._cache import per_model
from bridge.conventions.convention import Convention, JointOrder
from bridge.conventions.single_state import single_base_change
from bridge.errors import InvalidValueError
from bridge.model.model import Model
from bridge.spatial import vee

from .batch_math import x_motion
from .joints import Joints
from .state import FEATHERSTONE
from .tree import FREE, Tree

__all__ = ["PARALLEL_MIN", "aba", "available", "crba", "mass_matrix", "numpy_only", "packed_change", "rnea"]

#: batches of at least this many states run the parallel kernels (smaller ones the serial ones: a
#: parallel launch costs a few microseconds)
PARALLEL_MIN = _numba.PARALLEL_MIN

_OFF = threading.local()  # numpy_only() depth of this thread


def _import_kernels() -> ModuleType:
    from . import numba_kernels

    return numba_kernels


#: :mod:`.numba_kernels`, or None: numba missing or ``BRIDGE_NUMBA=0`` (:func:`bridge._numba.enabled`),
#: or the kernels failing to load (then a :class:`bridge.BridgeWarning`); looked up once per process
_kernels = _numba.loader(
    _import_kernels, "the compiled Featherstone kernels did not load ({}); the numpy kernels run"
)


def _import_mass() -> ModuleType:
    from . import numba_mass

    return numba_mass


#: :mod:`.numba_mass` (the mass matrices of a large batch in one launch), or None, as :data:`_kernels`
_mass_kernels = _numba.loader(
    _import_mass, "the compiled Featherstone mass matrix did not load ({}); the chunked path runs"
)


def available() -> bool:
    """Whether the compiled path is taken now (numba usable and not inside :func:`numpy_only`)."""
    return getattr(_OFF, "depth", 0) == 0 and _kernels() is not None


@contextmanager
def numpy_only() -> Iterator[None]:
    """Run the numpy kernels only (in this thread) inside the ``with`` block."""
    _OFF.depth = getattr(_OFF, "depth", 0) + 1
    try:
        yield
    finally:
        _OFF.depth -= 1


@dataclass(eq=False)
class _Constants:
    """A compiled tree's constants as the kernels take them (internal body order, float64/int64)."""

    parent: np.ndarray  # (nb,)
    code: np.ndarray  # (nb,)
    vidx: np.ndarray  # (nb,)
    qidx: np.ndarray  # (nb,) (-1 for a free body)
    lvq: np.ndarray  # (nb,) row of the joint's cosine and sine in Joints.lc / Joints.ls (level order)
    Et: np.ndarray  # (nb, 3, 3) Xtree = plux(Et, rt)
    rt: np.ndarray  # (nb, 3)
    I6: np.ndarray  # (nb, 6, 6) body inertias, body coordinates, angular first
    mass: np.ndarray  # (nb,)
    h: np.ndarray  # (nb, 3) first moments of mass
    Ibar: np.ndarray  # (nb, 3, 3) rotational inertias about the body origins


@per_model
def _constants(tree: Tree) -> _Constants:
    """The tree's constants as contiguous arrays for the kernels (made once per tree)."""
    i64 = np.int64
    return _Constants(
        parent=np.array(tree.parent, dtype=i64),
        code=np.array(tree.code, dtype=i64),
        vidx=np.array(tree.vidx, dtype=i64),
        qidx=np.array(tree.qidx, dtype=i64),
        lvq=np.maximum(np.asarray(tree.lv.pos, dtype=i64) - tree.lv.off, 0),
        Et=np.ascontiguousarray(tree.Et, dtype=np.float64),
        rt=np.ascontiguousarray(tree.rt, dtype=np.float64),
        I6=np.ascontiguousarray(tree.I, dtype=np.float64),
        mass=np.ascontiguousarray(tree.mass, dtype=np.float64),
        h=np.ascontiguousarray(vee(tree.I[:, :3, 3:])),
        Ibar=np.ascontiguousarray(tree.I[:, :3, :3]),
    )


def _c(x: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(x, dtype=np.float64)


def _pose(J: Joints) -> tuple[np.ndarray, np.ndarray]:
    """The base pose ``(E0 (9, N), r0 (3, N))`` of a free tree (placeholders for a fixed one)."""
    if J.tree.code and J.tree.code[0] == FREE:
        return _c(J.E0).reshape(9, -1), _c(J.r0)
    return np.zeros((9, 1)), np.zeros((3, 1))


def _zero_rows(x: np.ndarray | None, N: int) -> np.ndarray:
    return np.empty((0, N)) if x is None else _c(x)


def _armature(armature: np.ndarray | None) -> np.ndarray:
    return np.empty(0) if armature is None else _c(armature)


def _run(name: str, N: int, *args: np.ndarray) -> None:
    """The serial kernel ``name`` on one block, or the parallel one on a few blocks per thread
    (:func:`bridge._numba.launch`)."""
    k = _kernels()
    _numba.launch(getattr(k, f"{name}_par"), getattr(k, f"{name}_ser"), N, *args, minimum=PARALLEL_MIN)


def rnea(
    J: Joints, nu: np.ndarray | None, nu_dot: np.ndarray | None, a0: np.ndarray, armature: np.ndarray | None
) -> np.ndarray | None:
    """:func:`.kernels.rnea` without external forces (nv, N), or None off the compiled path."""
    if not available():
        return None
    t, N = _constants(J.tree), J.N
    E0, r0 = _pose(J)
    tau = np.empty((J.tree.nv, N))
    a0 = _c(np.broadcast_to(a0, (6, a0.shape[-1])))
    _run(
        "rnea", N,
        t.parent, t.code, t.vidx, t.qidx, t.lvq, t.Et, t.rt, t.I6, _c(J.q), _c(J.lc), _c(J.ls), E0, r0,
        _zero_rows(nu, N), _zero_rows(nu_dot, N), a0, _armature(armature), tau,
    )  # fmt: skip
    return tau


def crba(
    J: Joints, out: np.ndarray | None, armature: np.ndarray | None, back: tuple | None = None
) -> np.ndarray | None:
    """:func:`.kernels.crba` (N, nv, nv) (into ``out`` when it is a C-contiguous float64 array), or
    None off the compiled path. ``back``: ``(X, perm, nb)`` of
    :meth:`bridge.conventions.change_of_variables.ChangeOfVariables.kernel_arguments`, to return
    ``T^T H T`` instead, each matrix written in the source convention as the CRBA makes it."""
    if not available():
        return None
    t, N, nv = _constants(J.tree), J.N, J.tree.nv
    E0, r0 = _pose(J)
    H = (
        out
        if out is not None and out.flags.c_contiguous and out.dtype == np.float64
        else np.empty((N, nv, nv))
    )
    X, ix = np.empty((0, 6, 6)), np.arange(nv)
    if back is not None:
        X, perm, _ = back
        if perm.shape[0]:
            ix = np.argsort(perm)  # the row of each of the tree's velocities
    _run(
        "crba", N,
        t.parent, t.code, t.vidx, t.qidx, t.lvq, t.Et, t.rt, t.mass, t.h, t.Ibar,
        _c(J.q), _c(J.lc), _c(J.ls), E0, r0, _armature(armature), H, X, ix.astype(np.int64),
    )  # fmt: skip
    if out is not None and H is not out:
        out[...] = H
        return out
    return H


def aba(
    J: Joints, nu: np.ndarray, tau: np.ndarray, a0: np.ndarray, armature: np.ndarray | None
) -> np.ndarray | None:
    """:func:`.kernels.aba` without external forces (nv, N), or None off the compiled path or when
    the result is not finite (a joint or the base moving no inertia: the numpy kernel then says what
    it says in that case)."""
    if not available():
        return None
    t, N = _constants(J.tree), J.N
    E0, r0 = _pose(J)
    nud = np.empty((J.tree.nv, N))
    if not J.tree.free and J.E0 is not None:  # the world's acceleration in the fixed base's coordinates
        a0 = x_motion(J.E0, J.r0, np.broadcast_to(a0, (6, N)))
    a0 = _c(np.broadcast_to(a0, (6, a0.shape[-1])))
    _run(
        "aba", N,
        t.parent, t.code, t.vidx, t.qidx, t.lvq, t.Et, t.rt, t.mass, t.h, t.Ibar,
        _c(J.q), _c(J.lc), _c(J.ls), E0, r0,
        _c(nu), _c(tau), a0, _armature(armature), nud,
    )  # fmt: skip
    return nud if np.isfinite(nud).all() else None


def mass_matrix(
    tree: Tree,
    pose: np.ndarray,
    s: np.ndarray,
    fperm: np.ndarray,
    armature: np.ndarray | None,
    change: tuple[np.ndarray, np.ndarray],
) -> np.ndarray | None:
    """The mass matrices ``T^T H T`` (N, nv, nv) of N states in one launch of :mod:`.numba_mass`,
    or None off the compiled path.

    ``pose`` (N, 4, 4) ``world_H_base`` and ``s`` (N, k) the joint positions in the model's order
    (read in place when C-contiguous float64); ``fperm`` (nq,) int64: ``q[r] = s[fperm[r]]``;
    ``change``: ``(c, ix)``, the packed base block of T
    (:meth:`bridge.conventions.single_state.SingleBaseChange.pack`, or (0,) for a fixed base) and
    the row of the result of each of the tree's velocities. The result is a new array that the
    kernel writes whole."""
    if not available():
        return None
    k = _mass_kernels()
    if k is None:
        return None
    t, nv = _constants(tree), tree.nv
    c, ix = change
    M = np.empty((s.shape[0], nv, nv))
    _numba.launch(
        k.mass_par, k.mass_ser, s.shape[0],
        t.parent, t.code, t.vidx, t.qidx, t.Et, t.rt, t.mass, t.h, t.Ibar, fperm, _c(pose), _c(s),
        _armature(armature), c, ix, M,
        minimum=PARALLEL_MIN,
    )  # fmt: skip
    return M


def packed_change(model: Model, source: Convention) -> tuple[np.ndarray, np.ndarray] | None:
    """``(c, ix)``: T from ``source`` to :data:`~.state.FEATHERSTONE` for ``model`` as
    :func:`mass_matrix` takes it, derived from the two conventions: the base block's packed
    constants (:meth:`~bridge.conventions.single_state.SingleBaseChange.pack` of their velocity
    declarations; (0,) for a fixed base) and, for each of the tree's velocities, its row in the
    source's order (:class:`~bridge.conventions.convention.JointOrder`'s ``forward_full``); None
    when the declarations have no single-state form."""
    joints = JointOrder.between(model, source, FEATHERSTONE)
    c = np.empty(0)
    if joints.nb:
        try:
            change = single_base_change(source.bound(model).velocity, FEATHERSTONE.bound(model).velocity)
        except InvalidValueError:
            return None
        c = change.pack(joints)
    full = joints.forward_full  # the source row of each target row
    ix = np.arange(joints.nv) if full is None else full
    return c, np.ascontiguousarray(ix, dtype=np.int64)
