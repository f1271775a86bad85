"""Featherstone's algorithms for joints of any width, in world coordinates, batched.

The reference dynamics of a model with planar, ball and free joints anywhere (and one-coordinate
joints): one body per link in depth-first order, each joint's motion subspace ``S`` (6, nv) constant
in child coordinates (:mod:`bridge.model.joints`), so every joint's velocity is the neutral BODY
form and ``d/dt S_w = v x S_w`` in world coordinates. Implemented from the mathematics of
Featherstone's *Rigid Body Dynamics Algorithms* (chapters 5-7) in the neutral conventions: 6D
vectors linear first, spatial velocities and forces in world coordinates about the world origin,
spatial inertias ``[[m 1, -m c^], [m c^, I_c - m c^ c^]]``:

* :func:`kinematics`: the links' poses and world motion subspaces ``S_w = Ad(o_H_i) S``;
* :func:`velocities`: ``v_i = v_parent + S_w q_dot``, and the velocity-product accelerations
  ``c_i = v_i x S_w q_dot``;
* :func:`rnea`: ``a_i = a_parent + S_w q_ddot + c_i``, ``f_i = I a_i + v_i x* I v_i - f_ext``,
  ``tau_i = S_w^T f_i`` accumulated from the leaves;
* :func:`crba`: the composite inertias ``I^c`` and ``M_ij = S_w,i^T I^c_i S_w,j`` for j on i's path;
* :func:`aba`: the articulated-body algorithm, ``D = S^T I^A S`` inverted per joint.

A floating base is a free joint from the world with ``S = 1`` (its velocity the BODY base velocity,
its force the body wrench); a fixed base sits at ``world_H_base``. Arrays are (N, ...) with the
batch first; the Python loops run over bodies, never over samples.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from bridge.model.model import Model
from bridge.spatial import skew

__all__ = ["GeneralTree", "Kinematics", "aba", "crba", "kinematics", "rnea", "velocities"]


@dataclass(frozen=True, eq=False)
class Body:
    """One link: its parent body (-1: none), the joint's rest pose in the parent (4, 4), its
    subspace S (6, nv) in child coordinates, its spatial inertia (6, 6) in link coordinates, and its
    joint's coordinates in q (neutral positions) and in the generalized velocity (after the base)."""

    name: str
    parent: int
    rest: np.ndarray
    kind: object
    axis: np.ndarray
    origin: np.ndarray
    S: np.ndarray
    inertia: np.ndarray
    q: slice
    v: slice
    armature: float


def _inertia_matrix(mass: float, com: np.ndarray, I_com: np.ndarray) -> np.ndarray:
    """``[[m 1, -m c^], [m c^, I_c - m c^ c^]]`` (6, 6), linear first, in the link's coordinates."""
    C = skew(com)
    out = np.zeros((6, 6))
    out[:3, :3] = mass * np.eye(3)
    out[:3, 3:] = -mass * C
    out[3:, :3] = mass * C
    out[3:, 3:] = I_com - mass * C @ C
    return out


class GeneralTree:
    """The model as bodies in depth-first order (body 0 the base), made once per model."""

    def __init__(self, model: Model) -> None:
        self.model = model
        self.floating = model.floating
        coords = model.coordinates
        nb = 6 if model.floating else 0
        self.nv = model.nv
        index = {model.base: 0}
        link = model.link(model.base)
        base_S = np.eye(6) if model.floating else np.zeros((6, 0))
        bodies = [
            Body(
                model.base, -1, np.eye(4), None, np.zeros(3), np.zeros(3), base_S,
                _inertia_matrix(link.mass, link.inertia.com, link.inertia.inertia_com),
                slice(0, 0), slice(0, nb), 0.0,
            )
        ]  # fmt: skip
        for j in model.depth_first_joints:
            link = model.link(j.child)
            if j.movable:
                k = coords.index[j.name]
                q_sl, v_sl = coords.q_slice(k), coords.v_slice(k)
                v_sl = slice(nb + v_sl.start, nb + v_sl.stop)
            else:
                q_sl = v_sl = slice(0, 0)
            index[j.child] = len(bodies)
            bodies.append(
                Body(
                    j.child,
                    index[j.parent],
                    j.parent_H_child.matrix,
                    j.kind,
                    j.axis,
                    j.axis_origin,
                    j.subspace if j.movable else np.zeros((6, 0)),
                    _inertia_matrix(link.mass, link.inertia.com, link.inertia.inertia_com),
                    q_sl,
                    v_sl,
                    j.armature,
                )
            )
        self.bodies = tuple(bodies)
        self.index = index
        self.total_mass = float(model.total_mass)

    @cached_property
    def children(self) -> list[list[int]]:
        out: list[list[int]] = [[] for _ in self.bodies]
        for i, b in enumerate(self.bodies):
            if b.parent >= 0:
                out[b.parent].append(i)
        return out

    def support(self, i: int) -> list[int]:
        """The bodies from ``i`` up to the base (``i`` first)."""
        out = []
        while i >= 0:
            out.append(i)
            i = self.bodies[i].parent
        return out


def _adjoint(H: np.ndarray) -> np.ndarray:
    """``Ad(H)`` (N, 6, 6), linear first: body twists -> world twists about the world origin."""
    R, p = H[..., :3, :3], H[..., :3, 3]
    out = np.zeros((*H.shape[:-2], 6, 6))
    out[..., :3, :3] = R
    out[..., 3:, 3:] = R
    out[..., :3, 3:] = skew(p) @ R
    return out


def _inverse_adjoint(H: np.ndarray) -> np.ndarray:
    """``Ad(H)^-1`` (N, 6, 6)."""
    R, p = H[..., :3, :3], H[..., :3, 3]
    RT = np.swapaxes(R, -1, -2)
    out = np.zeros((*H.shape[:-2], 6, 6))
    out[..., :3, :3] = RT
    out[..., 3:, 3:] = RT
    out[..., :3, 3:] = -RT @ skew(p)
    return out


def cross_motion(v: np.ndarray, m: np.ndarray) -> np.ndarray:
    """``v x m`` for twists v (N, 6) and motions m (N, 6) or columns (N, 6, k), linear first."""
    if m.ndim == v.ndim + 1:
        return np.stack([cross_motion(v, m[..., k]) for k in range(m.shape[-1])], axis=-1)
    w, u = v[..., 3:], v[..., :3]
    return np.concatenate(
        [np.cross(w, m[..., :3]) + np.cross(u, m[..., 3:]), np.cross(w, m[..., 3:])], axis=-1
    )


def cross_force(v: np.ndarray, f: np.ndarray) -> np.ndarray:
    """``v x* f`` for a twist v (N, 6) and a force f (N, 6) (linear first: force, then torque)."""
    w, u = v[..., 3:], v[..., :3]
    return np.concatenate(
        [np.cross(w, f[..., :3]), np.cross(u, f[..., :3]) + np.cross(w, f[..., 3:])], axis=-1
    )


@dataclass
class Kinematics:
    """The links' poses ``o_H_i`` (N, 4, 4), world motion subspaces ``S_w`` (N, 6, nv_i) and world
    inertias (N, 6, 6), per body; ``packed``: the same as the compiled kernels' arrays (the subspaces
    side by side (N, 6, nv), the inertias (N, nb, 6, 6)) when the compiled kinematics made them (the
    lists then hold views into them), else None."""

    poses: list[np.ndarray]
    S: list[np.ndarray]
    inertias: list[np.ndarray]
    packed: tuple[np.ndarray, np.ndarray] | None = None


def kinematics(tree: GeneralTree, world_H_base: np.ndarray, q: np.ndarray) -> Kinematics:
    """Forward kinematics of a batch: ``world_H_base`` (N, 4, 4), joint positions ``q`` (N, nq)."""
    poses: list[np.ndarray] = []
    S: list[np.ndarray] = []
    inertias: list[np.ndarray] = []
    N = world_H_base.shape[0]
    for i, b in enumerate(tree.bodies):
        if i == 0:
            H = world_H_base
        else:
            rest = poses[b.parent] @ b.rest
            if b.kind is None or not b.kind.movable:
                H = rest
            else:
                qj = q[:, b.q] if b.kind.nq > 1 else q[:, b.q.start : b.q.start + 1]
                H = rest @ b.kind.spec.motion(qj, b.axis, b.origin)
        poses.append(H)
        inv = _inverse_adjoint(H)
        S.append(_adjoint(H) @ b.S if b.S.shape[1] else np.zeros((N, 6, 0)))
        inertias.append(np.swapaxes(inv, -1, -2) @ b.inertia @ inv)
    return Kinematics(poses, S, inertias)


def velocities(
    tree: GeneralTree, kin: Kinematics, nu: np.ndarray
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """``(v_i, c_i)`` (N, 6) per body: world twists and velocity-product accelerations
    ``v_i x S_w q_dot`` for the generalized velocities ``nu`` (N, nv) (BODY joint velocities)."""
    N = nu.shape[0]
    v: list[np.ndarray] = []
    c: list[np.ndarray] = []
    for i, b in enumerate(tree.bodies):
        vp = v[b.parent] if b.parent >= 0 else np.zeros((N, 6))
        if kin.S[i].shape[-1]:
            vJ = np.einsum("nij,nj->ni", kin.S[i], nu[:, b.v])
            vi = vp + vJ
            c.append(cross_motion(vi, vJ))
        else:
            vi = vp
            c.append(np.zeros((N, 6)))
        v.append(vi)
    return v, c


def accelerations(
    tree: GeneralTree, kin: Kinematics, v_c: tuple[list, list], nu_dot: np.ndarray | None, a0: np.ndarray
) -> list[np.ndarray]:
    """World spatial accelerations (N, 6) per body, ``a0`` (N, 6) the world's (``(-g, 0)`` for
    gravity, zero for the bodies' own accelerations)."""
    _, c = v_c
    a: list[np.ndarray] = []
    for i, b in enumerate(tree.bodies):
        ap = a[b.parent] if b.parent >= 0 else a0
        ai = ap + c[i]
        if nu_dot is not None and kin.S[i].shape[-1]:
            ai = ai + np.einsum("nij,nj->ni", kin.S[i], nu_dot[:, b.v])
        a.append(ai)
    return a


def rnea(
    tree: GeneralTree,
    kin: Kinematics,
    nu: np.ndarray | None,
    nu_dot: np.ndarray | None,
    gravity: np.ndarray,
    fext: dict[int, np.ndarray] | None = None,
) -> np.ndarray:
    """Inverse dynamics (N, nv): the generalized forces (BODY joint forces, the body wrench on a
    floating base) giving ``nu_dot`` (N, nv) at ``nu`` (None: zero) under ``gravity`` (N, 3), with
    world forces ``fext`` {body: (N, 6)} acting on the bodies."""
    N = gravity.shape[0]
    a0 = np.concatenate([-gravity, np.zeros((N, 3))], axis=-1)
    zero = np.zeros((N, tree.nv))
    v_c = velocities(tree, kin, zero if nu is None else nu)
    a = accelerations(tree, kin, v_c, nu_dot, a0)
    v = v_c[0]
    f: list[np.ndarray] = []
    for i in range(len(tree.bodies)):
        inertia = kin.inertias[i]
        fi = np.einsum("nij,nj->ni", inertia, a[i])
        if nu is not None:
            fi = fi + cross_force(v[i], np.einsum("nij,nj->ni", inertia, v[i]))
        if fext and i in fext:
            fi = fi - fext[i]
        f.append(fi)
    tau = np.zeros((N, tree.nv))
    for i in range(len(tree.bodies) - 1, -1, -1):
        b = tree.bodies[i]
        if kin.S[i].shape[-1]:
            tau[:, b.v] = np.einsum("nij,ni->nj", kin.S[i], f[i])
            if b.armature and nu_dot is not None:
                tau[:, b.v] += b.armature * nu_dot[:, b.v]
        if b.parent >= 0:
            f[b.parent] = f[b.parent] + f[i]
    return tau


def composite(tree: GeneralTree, kin: Kinematics) -> list[np.ndarray]:
    """Composite (subtree) inertias (N, 6, 6) in world coordinates, per body."""
    Ic = [inertia.copy() for inertia in kin.inertias]
    for i in range(len(tree.bodies) - 1, 0, -1):
        Ic[tree.bodies[i].parent] += Ic[i]
    return Ic


def crba(tree: GeneralTree, kin: Kinematics) -> np.ndarray:
    """The mass matrix (N, nv, nv) (with the joints' armature)."""
    N = kin.poses[0].shape[0]
    Ic = composite(tree, kin)
    M = np.zeros((N, tree.nv, tree.nv))
    for i, b in enumerate(tree.bodies):
        Si = kin.S[i]
        if not Si.shape[-1]:
            continue
        F = Ic[i] @ Si
        M[:, b.v, b.v] = np.swapaxes(Si, -1, -2) @ F
        if b.armature:
            idx = np.arange(b.v.start, b.v.stop)
            M[:, idx, idx] += b.armature
        j = b.parent
        while j >= 0:
            Sj = kin.S[j]
            if Sj.shape[-1]:
                block = np.swapaxes(Sj, -1, -2) @ F
                vj = tree.bodies[j].v
                M[:, vj, b.v] = block
                M[:, b.v, vj] = np.swapaxes(block, -1, -2)
            j = tree.bodies[j].parent
    return M


def aba(
    tree: GeneralTree,
    kin: Kinematics,
    nu: np.ndarray,
    tau: np.ndarray,
    gravity: np.ndarray,
    fext: dict[int, np.ndarray] | None = None,
) -> np.ndarray:
    """Forward dynamics (N, nv) by the articulated-body algorithm: ``nu_dot`` for the generalized
    forces ``tau`` (N, nv) at ``nu`` (N, nv), ``gravity`` (N, 3), world forces ``fext``."""
    N = gravity.shape[0]
    v, c = velocities(tree, kin, nu)
    n = len(tree.bodies)
    IA = [inertia.copy() for inertia in kin.inertias]
    pA = []
    for i in range(n):
        p = cross_force(v[i], np.einsum("nij,nj->ni", kin.inertias[i], v[i]))
        if fext and i in fext:
            p = p - fext[i]
        pA.append(p)
    U: list = [None] * n
    Dinv: list = [None] * n
    u: list = [None] * n
    for i in range(n - 1, -1, -1):
        b = tree.bodies[i]
        S = kin.S[i]
        if S.shape[-1]:
            Ui = IA[i] @ S
            D = np.swapaxes(S, -1, -2) @ Ui
            if b.armature:
                D = D + b.armature * np.eye(S.shape[-1])
            Di = np.linalg.inv(D)
            ui = tau[:, b.v] - np.einsum("nij,ni->nj", S, pA[i])
            U[i], Dinv[i], u[i] = Ui, Di, ui
            Ia = IA[i] - Ui @ Di @ np.swapaxes(Ui, -1, -2)
            pa = pA[i] + np.einsum("nij,nj->ni", Ia, c[i]) + np.einsum("nij,nj->ni", Ui @ Di, ui)
        else:
            Ia, pa = IA[i], pA[i] + np.einsum("nij,nj->ni", IA[i], c[i])
        if b.parent >= 0:
            IA[b.parent] = IA[b.parent] + Ia
            pA[b.parent] = pA[b.parent] + pa
    nu_dot = np.zeros((N, tree.nv))
    a0 = np.concatenate([-gravity, np.zeros((N, 3))], axis=-1)
    a: list[np.ndarray] = []
    for i, b in enumerate(tree.bodies):
        ap = (a[b.parent] if b.parent >= 0 else a0) + c[i]
        S = kin.S[i]
        if S.shape[-1]:
            qdd = np.einsum("nij,nj->ni", Dinv[i], u[i] - np.einsum("nij,ni->nj", U[i], ap))
            nu_dot[:, b.v] = qdd
            ap = ap + np.einsum("nij,nj->ni", S, qdd)
        a.append(ap)
    return nu_dot
