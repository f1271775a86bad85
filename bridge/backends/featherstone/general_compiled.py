"""The compiled (numba) path of the general engine: kinematics, mass matrix, forward dynamics.

:class:`~.general_engine.GeneralEngine` asks this module first: with numba installed, the
environment variable ``BRIDGE_NUMBA`` not ``0`` and outside :func:`.compiled.numpy_only`, it runs the
kernels of :mod:`.numba_general` (parallel over the batch from :data:`.compiled.PARALLEL_MIN` states,
serial below, :func:`bridge._numba.launch`); otherwise each function returns None and the numpy
algorithms of :mod:`.general` run. Both paths give the same numbers to rounding (the tests compare
them to 1e-12):

* :func:`kinematics` for :func:`.general.kinematics` (at ``set_state``): the link poses, world
  subspaces and world inertias, computed into packed arrays (:attr:`.general.Kinematics.packed`)
  that the lists view and the other kernels read as they are;
* :func:`mass_matrix` for :func:`.general.crba` followed by the engine's ``matrix_back``: the CRBA
  with the change of variables folded in (the mass matrices written in the user's convention);
  :func:`crba` is the compiled :func:`.general.crba` itself (the neutral BODY form);
* :func:`rnea` and :func:`aba` for :func:`.general.rnea` and :func:`.general.aba` (the change of
  variables of the forces and accelerations stays with the engine, in numpy).

The frame quantities, the centre of mass and the momenta stay numpy (on the compiled kinematics).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType

import numpy as np

from bridge import _numba
from bridge._cache import per_model
from bridge.conventions.wide_change import WideChangeOfVariables
from bridge.model.joints import JointKind, plane_axes

from . import compiled
from .general import GeneralTree, Kinematics

__all__ = ["PackedTree", "aba", "crba", "kinematics", "mass_matrix", "packed", "rnea"]


def _import_kernels() -> ModuleType:
    from . import numba_general

    return numba_general


#: :mod:`.numba_general`, or None (numba missing, ``BRIDGE_NUMBA=0``, or the kernels failing to load:
#: then a :class:`bridge.BridgeWarning`); looked up once per process
_kernels = _numba.loader(
    _import_kernels, "the compiled general Featherstone kernels did not load ({}); the numpy path runs"
)


@dataclass(frozen=True, eq=False)
class PackedTree:
    """A :class:`~.general.GeneralTree` as the kernels take it: per body (depth-first, body 0 the
    base), int64 ``parent`` (-1: none), ``start`` and ``width`` (its joint's velocities
    ``start .. start + width`` in the tree's generalized velocity, width 0 to 6) and float64
    ``armature``; for the kinematics, its joint's ``code`` (:data:`.numba_general.FIXED` ...),
    coordinates from ``qstart`` in q, ``axis`` and ``origin`` (3,) and a planar joint's in-plane axes
    ``plane`` (2, 3) in child coordinates, ``rest`` (4, 4) its rest pose in the parent, ``S``
    (6, 6) its subspace in child coordinates (the first ``width`` columns) and the link's spatial
    ``inertia`` (6, 6) in link coordinates."""

    parent: np.ndarray  # (nb,)
    start: np.ndarray  # (nb,)
    width: np.ndarray  # (nb,)
    armature: np.ndarray  # (nb,)
    code: np.ndarray  # (nb,)
    qstart: np.ndarray  # (nb,)
    axis: np.ndarray  # (nb, 3)
    origin: np.ndarray  # (nb, 3)
    plane: np.ndarray  # (nb, 2, 3)
    rest: np.ndarray  # (nb, 4, 4)
    S: np.ndarray  # (nb, 6, 6)
    inertia: np.ndarray  # (nb, 6, 6)


@per_model
def packed(tree: GeneralTree) -> PackedTree:
    """The tree's per-body data as contiguous arrays (made once per tree)."""
    from . import numba_general as k

    i64 = np.int64
    bodies = tree.bodies
    nb = len(bodies)
    codes = {JointKind.PRISMATIC: k.PRISMATIC, JointKind.PLANAR: k.PLANAR, JointKind.BALL: k.BALL,
             JointKind.FREE: k.FREE}  # fmt: skip
    code, plane, S = np.zeros(nb, dtype=i64), np.zeros((nb, 2, 3)), np.zeros((nb, 6, 6))
    for i, b in enumerate(bodies):
        if i and b.kind is not None and b.kind.movable:
            code[i] = k.ROTATIONAL if b.kind.rotational else codes[b.kind]
        if code[i] == k.PLANAR:
            plane[i] = plane_axes(b.axis)
        S[i, :, : b.S.shape[1]] = b.S
    return PackedTree(
        parent=np.array([b.parent for b in bodies], dtype=i64),
        start=np.array([b.v.start for b in bodies], dtype=i64),
        width=np.array([b.v.stop - b.v.start for b in bodies], dtype=i64),
        armature=np.array([b.armature for b in bodies], dtype=np.float64),
        code=code,
        qstart=np.array([b.q.start for b in bodies], dtype=i64),
        axis=np.array([b.axis for b in bodies], dtype=np.float64).reshape(nb, 3),
        origin=np.array([b.origin for b in bodies], dtype=np.float64).reshape(nb, 3),
        plane=plane,
        rest=np.array([b.rest for b in bodies], dtype=np.float64),
        S=S,
        inertia=np.array([b.inertia for b in bodies], dtype=np.float64),
    )


def _available() -> ModuleType | None:
    """:mod:`.numba_general` when the compiled path is taken now, else None."""
    return _kernels() if compiled.available() else None


def kinematics(tree: GeneralTree, world_H_base: np.ndarray, q: np.ndarray) -> Kinematics | None:
    """:func:`.general.kinematics` compiled (``world_H_base`` (N, 4, 4), ``q`` (N, nq) the neutral
    joint positions), with its packed arrays; None off the compiled path."""
    k = _available()
    if k is None:
        return None
    p = packed(tree)
    N, nb = world_H_base.shape[0], len(tree.bodies)
    P = np.empty((N, nb, 4, 4))
    S = np.zeros((N, 6, tree.nv))
    inertias = np.empty((N, nb, 6, 6))
    _numba.launch(
        k.kinematics_par, k.kinematics_ser, N,
        p.parent, p.code, p.qstart, p.start, p.width, p.axis, p.origin, p.plane, p.rest, p.S, p.inertia,
        np.ascontiguousarray(world_H_base, dtype=np.float64), np.ascontiguousarray(q, dtype=np.float64),
        P, S, inertias,
        minimum=compiled.PARALLEL_MIN,
    )  # fmt: skip
    return Kinematics(
        [P[:, i] for i in range(nb)],
        [S[:, :, b.v] for b in tree.bodies],
        [inertias[:, i] for i in range(nb)],
        (S, inertias),
    )


def _subspaces(tree: GeneralTree, kin: Kinematics) -> np.ndarray:
    """The world motion subspaces of every body side by side (N, 6, nv), the tree's velocity order."""
    if kin.packed is not None:
        return kin.packed[0]
    N = kin.poses[0].shape[0]
    S = np.zeros((N, 6, tree.nv))
    for b, Si in zip(tree.bodies, kin.S, strict=True):
        if Si.shape[-1]:
            S[:, :, b.v] = Si
    return S


def _inertias(kin: Kinematics) -> np.ndarray:
    """The world inertias of every body (N, nb, 6, 6)."""
    if kin.packed is not None:
        return kin.packed[1]
    return np.ascontiguousarray(np.stack(kin.inertias, axis=1), dtype=np.float64)


def _run(
    k: ModuleType, tree: GeneralTree, kin: Kinematics, S: np.ndarray, D: np.ndarray, col: np.ndarray
) -> np.ndarray:
    """The CRBA kernel of ``k`` on the batch (see :mod:`.numba_general` for ``S``, ``D``, ``col``)."""
    p = packed(tree)
    N = S.shape[0]
    inertias = _inertias(kin)
    M = np.empty((N, tree.nv, tree.nv))
    _numba.launch(
        k.crba_par, k.crba_ser, N,
        p.parent, p.start, p.width, p.armature, col, np.ascontiguousarray(S, dtype=np.float64),
        inertias, D, M,
        minimum=compiled.PARALLEL_MIN,
    )  # fmt: skip
    return M


def crba(tree: GeneralTree, kin: Kinematics) -> np.ndarray | None:
    """:func:`.general.crba` (N, nv, nv) compiled, or None off the compiled path."""
    k = _available()
    if k is None:
        return None
    col = np.arange(tree.nv, dtype=np.int64)
    return _run(k, tree, kin, _subspaces(tree, kin), np.empty((0, 0, 6)), col)


def _joint_rows(tree: GeneralTree, change: WideChangeOfVariables, N: int) -> np.ndarray:
    """``D`` (N, nv, 6): each target velocity's row of T within its joint's block (identity rows for
    joints without a block), or (0, 0, 6) (the identity) when no joint with a block has armature."""
    armed = {b.v.start for b in tree.bodies if b.armature and b.v.stop > b.v.start}
    if not any(blk.offset in armed for blk in change.blocks):
        return np.empty((0, 0, 6))
    D = np.zeros((N, tree.nv, 6))
    for b in tree.bodies:
        k = b.v.stop - b.v.start
        if k:
            D[:, b.v, :k] = np.eye(k)
    for blk in change.blocks:
        D[:, blk.offset : blk.offset + blk.width, : blk.width] = blk.X
    return D


def mass_matrix(tree: GeneralTree, kin: Kinematics, change: object) -> np.ndarray | None:
    """``T^T (M + A) T`` (N, nv, nv): the mass matrices in the source convention of ``change`` (the
    engine's change of variables to the neutral BODY form, a
    :class:`~bridge.conventions.wide_change.WideChangeOfVariables` of a numpy batch), or None off
    the compiled path or for any other change of variables."""
    k = _available()
    if k is None or not isinstance(change, WideChangeOfVariables):
        return None
    S = change.jacobian_back(_subspaces(tree, kin))  # S_w T: the subspaces in the source's columns
    if not isinstance(S, np.ndarray):
        return None
    back = change.joints.back  # the target column of each source column
    col = np.arange(tree.nv) if back is None else np.argsort(back)
    D = _joint_rows(tree, change, S.shape[0])
    return _run(k, tree, kin, S, D, np.ascontiguousarray(col, dtype=np.int64))


def aba(
    tree: GeneralTree,
    kin: Kinematics,
    nu: np.ndarray,
    tau: np.ndarray,
    gravity: np.ndarray,
    fext: dict[int, np.ndarray] | None = None,
) -> np.ndarray | None:
    """:func:`.general.aba` (N, nv) compiled: ``nu_dot`` for the generalized forces ``tau`` (N, nv)
    at ``nu`` (N, nv) (the neutral BODY form), ``gravity`` (N, 3) and world forces ``fext``
    {body: (N, 6)}; None off the compiled path or when the result is not finite (a joint moving no
    inertia: the numpy path then says what it says in that case)."""
    k = _available()
    if k is None:
        return None
    p = packed(tree)
    S = _subspaces(tree, kin)
    N, nb = S.shape[0], len(tree.bodies)
    inertias = _inertias(kin)
    a0 = np.zeros((N, 6))
    a0[:, :3] = -np.broadcast_to(gravity, (N, 3))
    F = _forces(fext, N, nb)
    out = np.empty((N, tree.nv))
    _numba.launch(
        k.aba_par, k.aba_ser, N,
        p.parent, p.start, p.width, p.armature, S, inertias,
        np.ascontiguousarray(nu, dtype=np.float64), np.ascontiguousarray(tau, dtype=np.float64),
        a0, F, out,
        minimum=compiled.PARALLEL_MIN,
    )  # fmt: skip
    return out if np.isfinite(out).all() else None


def _forces(fext: dict[int, np.ndarray] | None, N: int, nb: int) -> np.ndarray:
    """World forces on the bodies (N, nb, 6), or (0, nb, 6) for none."""
    F = np.zeros((N if fext else 0, nb, 6))
    for i, f in (fext or {}).items():
        F[:, i] = f
    return F


def _rows(x: np.ndarray | None, N: int, nv: int) -> np.ndarray:
    """``x`` (N, nv) as a C-contiguous float64 array, or (0, nv) for None."""
    return (
        np.empty((0, nv))
        if x is None
        else np.ascontiguousarray(np.broadcast_to(x, (N, nv)), dtype=np.float64)
    )


def rnea(
    tree: GeneralTree,
    kin: Kinematics,
    nu: np.ndarray | None,
    nu_dot: np.ndarray | None,
    gravity: np.ndarray,
    fext: dict[int, np.ndarray] | None = None,
) -> np.ndarray | None:
    """:func:`.general.rnea` (N, nv) compiled: the generalized forces (the neutral BODY form) giving
    ``nu_dot`` (N, nv) (None: zero) at ``nu`` (None: zero, without velocity-product terms) under
    ``gravity`` (N, 3) and world forces ``fext`` {body: (N, 6)}; None off the compiled path."""
    k = _available()
    if k is None:
        return None
    p = packed(tree)
    S = _subspaces(tree, kin)
    N, nb, nv = S.shape[0], len(tree.bodies), tree.nv
    a0 = np.zeros((N, 6))
    a0[:, :3] = -np.broadcast_to(gravity, (N, 3))
    out = np.empty((N, nv))
    _numba.launch(
        k.rnea_par, k.rnea_ser, N,
        p.parent, p.start, p.width, p.armature, S, _inertias(kin), _rows(nu, N, nv), _rows(nu_dot, N, nv),
        a0, _forces(fext, N, nb), out,
        minimum=compiled.PARALLEL_MIN,
    )  # fmt: skip
    return out
