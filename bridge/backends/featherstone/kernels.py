"""The dynamics kernels on one batch of joint data (:class:`~.joints.Joints`), batch last.

Implemented from the mathematics of Featherstone's *Rigid Body Dynamics Algorithms*, in spatial_v2's
conventions: 6D vectors angular first, motion transforms ``X = plux(E, r)``, forces transformed by
``X^-T``, gravity entering as the fixed world's acceleration ``a0 = -a_grav``, external forces
``fext`` given per internal body in *world* coordinates as forces acting on the body.

* :func:`rnea`: inverse dynamics in body coordinates;
* :func:`velocities`, :func:`accelerations`: world-coordinate body velocities and accelerations;
* :func:`composite`: composite (subtree) inertias; :func:`crba`: the joint-space inertia matrix
  from them and the ancestor products ``S_a . IC_p S_p``; :func:`subtree_momenta`: ``IC_j S_j``;
* :func:`aba`: forward dynamics by the articulated-body algorithm.

Joint armature (``armature`` (nv,) in the tree's velocity order, zeros on a free base) is a rotor
inertia spinning with its joint: the RNEA adds ``armature * qdd``, the CRBA adds it to H's diagonal
and the ABA to the joint-space articulated inertia ``D = S^T IA S + armature`` (so the articulated
inertia passed to the parent, ``IA - U D^-1 U^T``, sees it too). Momenta do not change.

The mass matrix, articulated-body algorithm, Jacobians and accelerations work in world coordinates
(the body poses come from one forward-kinematics pass), where composite and articulated inertias
add without transforms. The recursions run level by level over the compiled tree (:mod:`.tree`):
``J.parents`` reads a level's parents, ``J.add_to_parents`` adds into them.

A free tree's body 0 has the base's spatial velocity in world coordinates as its generalized
velocity (6 entries, angular first), the derivative of that as its generalized acceleration and the
wrench on the base in world coordinates as its generalized force.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from . import compiled
from .batch_math import (
    crf3,
    crm3,
    inertia_apply,
    inertia_matrices,
    rotate_rows,
    solve6,
    x_motion,
    xs_force,
    xt_force,
)
from .joints import IA_ROWS, Joints
from .tree import FREE, Tree

__all__ = ["aba", "accelerations", "composite", "crba", "rnea", "subtree_momenta", "velocities"]

#: the CRBA computes its ancestor products level by level on views (no gather, more numpy calls)
#: for batches of at least this many states, else by two gathers and one product
_CRBA_VIEWS_MIN_N = 320

#: ... and only while that takes at most this many products of views: one per level and ancestor
#: distance, D (D + 1) / 2 for D levels (55 on iCub, 2 million for a chain of 2,000 links)
_CRBA_VIEWS_MAX_CALLS = 1024

#: the gathers take the two sides of at most this many products (pairs x states) at a time
_CRBA_GATHER_MAX = 1 << 18

#: the CRBA's last stage (transpose to sample-major, gather into H) runs on blocks of this many states
#: (fewer when the value array has more than ``_CRBA_BLOCK_VALUES / _CRBA_BLOCK`` rows: long chains)
_CRBA_BLOCK = 128
_CRBA_BLOCK_VALUES = 1 << 16


def rnea(
    J: Joints,
    nu: np.ndarray | None,
    nu_dot: np.ndarray | None,
    a0: np.ndarray,
    fext: Mapping[int, np.ndarray] | None = None,
    armature: np.ndarray | None = None,
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
    if not fext:  # the compiled kernels (numba) when they are usable
        tau = compiled.rnea(J, nu, nu_dot, a0, armature)
        if tau is not None:
            return tau
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
            M[:, 0, 0] = x_motion(J.E0, J.r0, v0)
            M[:, 1, 0] = x_motion(J.E0, J.r0, acc)
            continue
        par = J.parents(Mw if L.prev is None else M[:, :, L.prev], L, "rn_par")
        for k in range(2):
            np.matmul(lv.X[sl], par[:, k].swapaxes(0, 1), out=M[:, k, sl].swapaxes(0, 1))
        R, Rq = L.rev, L.rev_q
        nr = R.stop - R.start
        if nr:
            t1 = J.buf("t_rot1", (2, 2, nr, N))
            t2 = J.buf("t_rot2", (2, 2, nr, N))
            rotate_rows(M[0::3, :, R], M[1::3, :, R], J.lc[Rq], J.ls[Rq], t1, t2)
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
        crf3(M[:, 0], IM[:, 0], out=f, tmp3=J.buf("rn_t3", (3, nb, N)))
        f += IM[:, 1]
    if fext:
        G = J.pose()
        for i, fw in fext.items():
            p = lv.pos[i]
            f[:, p] -= xs_force(G[:3, :, p], G[3, :, p], fw)
    for L in reversed(lv.levels):
        if L.prev is None:
            continue
        sl = slice(L.start, L.stop)
        R, Rq = L.rev, L.rev_q
        nr = R.stop - R.start
        if nr:  # Xj^T: the transposed rotation
            t1 = J.buf("t_rot1", (2, nr, N))
            t2 = J.buf("t_rot2", (2, nr, N))
            rotate_rows(f[0::3, R], f[1::3, R], J.lc[Rq], J.lns[Rq], t1, t2)
        P, Pq = L.pri, L.pri_q
        npr = P.stop - P.start
        if npr:  # n + (q e_z) x fl
            q = J.lq[Pq]
            tc = J.buf("t_rot1", (npr, N))
            f[0, P] -= np.multiply(q, f[4, P], out=tc)
            f[1, P] += np.multiply(q, f[3, P], out=tc)
        t = J.buf("rn_tf", (6, L.n, N))
        np.matmul(lv.XT[sl], f[:, sl].swapaxes(0, 1), out=t.swapaxes(0, 1))
        J.add_to_parents(f[:, L.prev], t, L)
    tau = np.empty((tree.nv, N))
    if nq:  # rows 2 (revolute) and 5 (prismatic) are unchanged by the rotations above
        np.take(f.reshape(6 * nb, N), lv.tau_src, axis=0, out=tau[tree.one_v], mode="clip")
    if tree.free:
        tau[:6] = xt_force(J.E0, J.r0, f[:, 0])
    if armature is not None and nu_dot is not None:
        tau += armature[:, None] * nu_dot
    return tau


def _lv_accumulate(J: Joints, out: np.ndarray, inc: np.ndarray, root: object = None) -> None:
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


def velocities(J: Joints, nu: np.ndarray) -> np.ndarray:
    """World-coordinate body velocities (6, nb, N) (internal body order) for the generalized
    velocity nu (nv, N)."""
    tree, N = J.tree, J.N
    lv, nb, nq = tree.lv, tree.nb, tree.nq
    QD = np.take(nu, lv.vi, axis=0, out=J.buf("v_QD", (nq, N)), mode="clip")
    vJ = np.multiply(J.lv_subspaces()[:, lv.off :], QD, out=J.buf("v_J", (6, nq, N)))
    vl = J.buf("v_lv", (6, nb, N))
    _lv_accumulate(J, vl, vJ, nu[:6] if tree.free else None)
    return np.take(vl, lv.pos, axis=1, out=J.buf("v", (6, nb, N)), mode="clip")


def _bias_increments(J: Joints, v: np.ndarray, nu: np.ndarray) -> np.ndarray:
    """``c_i = v_i x S_i qd_i`` (6, nb, N) (zero for a free base), world coordinates."""
    tree = J.tree
    S = J.subspaces()
    c = J.buf("c", (6, tree.nb, J.N))
    if tree.free:
        c[:, 0] = 0.0
    one, ov = tree.one, tree.one_v
    if tree.nq:
        vJ = np.multiply(S[:, ov], nu[ov], out=J.buf("vJ", (6, tree.nq, J.N)))
        crm3(v[:, one], vJ, out=c[:, one], tmp3=J.buf("t3q", (3, tree.nq, J.N)))
    return c


def accelerations(
    J: Joints, v: np.ndarray, nu: np.ndarray | None, nu_dot: np.ndarray | None, a0: np.ndarray
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


def _lv_composite(J: Joints, consume: bool = False) -> np.ndarray:
    """Composite (subtree) world inertias (9, nb, N) in level order (masses: ``lv.msub``).

    With ``consume`` the sums run in place in the array of :meth:`Joints.lv_inertias`, which J
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
            J.add_to_parents(C[:, L.prev], C[:, L.start : L.stop], L)
    return C


def composite(J: Joints) -> np.ndarray:
    """Composite (subtree) world inertias (9, nb, N) in internal body order (masses:
    ``tree.mass_sub``)."""
    tree = J.tree
    return np.take(_lv_composite(J), tree.lv.pos, axis=1, out=J.buf("C", (9, tree.nb, J.N)), mode="clip")


def _ancestor_products(J: Joints, S: np.ndarray, F: np.ndarray, V: np.ndarray) -> None:
    """The rows ``S_a . F_p`` of the CRBA's value array V (see :class:`CrbaPlan`) from the level-
    order subspaces S (6, nb, N) and the momenta F (6, nq, N)."""
    N, plan, off = J.N, J.tree.lv.crba, J.tree.lv.off
    D = len(plan.levels)
    if N < _CRBA_VIEWS_MIN_N or D * (D + 1) // 2 > _CRBA_VIEWS_MAX_CALLS:
        # few numpy calls: gather both sides of the products, in blocks of pairs for long chains
        P, r0 = plan.anc.size, plan.dots[0][0]
        step = max(1, _CRBA_GATHER_MAX // N)
        for p0 in range(0, P, step):
            p1 = min(p0 + step, P)
            A = np.take(S, plan.anc[p0:p1], axis=1, out=J.buf("S_anc", (6, p1 - p0, N)), mode="clip")
            B = np.take(F, plan.desc[p0:p1], axis=1, out=J.buf("F_desc", (6, p1 - p0, N)), mode="clip")
            np.einsum("cpN,cpN->pN", A, B, out=V[r0 + p0 : r0 + p1])
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


def crba(
    J: Joints, out: np.ndarray | None = None, consume: bool = False, armature: np.ndarray | None = None
) -> np.ndarray:
    """Joint-space inertia matrix (N, nv, nv) by the composite-rigid-body algorithm in world
    coordinates: ``H[a, p] = S_a . (IC_p S_p)`` for dof a's body an ancestor of (or equal to) dof
    p's body, zero for unrelated dofs (a free base's S is the identity: its rows are ``IC_p S_p``).

    Only the tree's pairs are computed, component-major (:func:`_ancestor_products`), into the
    rows of a value array (see :class:`CrbaPlan`); a transpose to sample-major and a gather then
    write both triangles of H, block by block of ``_CRBA_BLOCK`` states (the transpose reads
    across rows: fast for the odd batch widths of :func:`.workspace.padded_width`). ``consume``: see
    :func:`_lv_composite`.
    """
    H = compiled.crba(J, out, armature)  # the compiled kernels (numba) when they are usable
    if H is not None:
        return H
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
        inertia_apply(lv.msub[o], C[:, o], S[:, o], out=F, tmp=J.buf("t_F", (nq, N)))
        _ancestor_products(J, S, F, V)
    else:
        C = _lv_composite(J, consume)
    if tree.free:  # the rows of lv_inertia_rows for the whole tree, then its 36 entries
        C0 = J.buf("C0x", (14, N))
        C0[:9] = C[:, 0]
        np.negative(C[:3, 0], out=C0[9:12])
        C0[12] = lv.msub[0]
        C0[13] = 0.0
        V[:36] = np.take(C0, IA_ROWS, axis=0, out=J.buf("IC0", (36, N)), mode="clip")
    V[plan.K - 1] = 0.0
    if out is None:
        out = np.empty((N, nv, nv))
    out2 = out.reshape(N, nv * nv)
    B = max(1, min(_CRBA_BLOCK, _CRBA_BLOCK_VALUES // plan.K))
    for b0 in range(0, N, B):  # blocks of states whose sample-major values stay in cache
        b1 = min(b0 + B, N)
        Vt = J.buf("Vt", (b1 - b0, plan.K))
        np.copyto(Vt, V[:, b0:b1].T)
        # mode="clip": an unbuffered take straight into ``out`` (the indices are all valid)
        np.take(Vt, plan.gather, axis=1, out=out2[b0:b1], mode="clip")
    if armature is not None:
        out2[:, :: nv + 1] += armature
    return out


def subtree_momenta(
    tree: Tree, C: np.ndarray, S: np.ndarray, out: np.ndarray | None = None, tmp: np.ndarray | None = None
) -> np.ndarray:
    """``F_j = IC_j S_j`` (6, nv, N) for every dof j: composite inertias C (9, nb, N) of
    :func:`composite`, world subspaces S (6, nv, N). A free base's columns are IC_0 itself."""
    F = np.empty(S.shape) if out is None else out
    if tree.free:
        F[:, :6] = inertia_matrices(tree.mass_sub[:1], C[:, :1])[0]
    if tree.nq:
        o, ov = tree.one, tree.one_v
        inertia_apply(tree.mass_sub[o], C[:, o], S[:, ov], out=F[:, ov], tmp=tmp)
    return F


def aba(
    J: Joints,
    nu: np.ndarray,
    tau: np.ndarray,
    a0: np.ndarray,
    fext: Mapping[int, np.ndarray] | None = None,
    armature: np.ndarray | None = None,
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
    if not fext:  # the compiled kernels (numba) when they are usable
        nd = compiled.aba(J, nu, tau, a0, armature)
        if nd is not None:
            return nd
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
        crm3(v[:, o], vJ, out=cinc, tmp3=J.buf("ab_t3q", (3, nq, N)))
    _lv_accumulate(J, ch, cinc, 0.0)  # cumulative bias accelerations
    # bias forces pA = v x* I v + I chat - f_ext, articulated inertias IA = I (world coordinates)
    IV = J.buf("ab_IV", (6, 2, nb, N))
    inertia_apply(lv.mass[:, None], W[:, None], V, out=IV, tmp=J.buf("ab_t", (2, nb, N)))
    # aug[j, i]: IA[i, j] (symmetric) for j < 6, pA[i] for j = 6
    aug = J.buf("ab_aug", (7, 6, nb, N))
    pA = aug[6]
    crf3(v, IV[:, 0], out=pA, tmp3=J.buf("ab_t3", (3, nb, N)))
    pA += IV[:, 1]
    if fext:
        for i, fw in fext.items():
            pA[:, lv.pos[i]] -= fw
    # the dense world inertias: one gather of the rows [m c; IO; -m c; m; 0] (see lv_inertias)
    Wx = J.lv_inertia_rows()
    np.take(Wx, IA_ROWS, axis=0, out=aug[:6].reshape(36, nb, N), mode="clip")
    TQ = np.take(tau, lv.vi, axis=0, out=J.buf("ab_TQ", (nq, N)), mode="clip")
    SA = J.buf("ab_SA", (7, nq, N))  # [U | S.pA], then [U | -u]
    Dinv = J.buf("ab_Dinv", (nq, N))
    u = J.buf("ab_u", (nq, N))
    arm = None if armature is None else armature[lv.vi][:, None]  # level order (nq, 1)
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
        if arm is not None:
            d += arm[qs]
        np.divide(1.0, d, out=d)
        np.subtract(TQ[qs], sa[6], out=u[qs])
        if L.prev is None:
            continue
        np.negative(u[qs], out=sa[6])
        Ud = np.multiply(U, d, out=J.buf("ab_Ud", (6, n, N)))
        # [IA - U D^-1 U^T | pA + U D^-1 u]: one outer product
        A -= np.multiply(sa[:, None], Ud[None], out=J.buf("ab_T", (7, 6, n, N)))
        J.add_to_parents(aug[:, :, L.prev], A, L)
    nu_dot = np.empty((nv, N))
    Ah = J.buf("ab_A", (6, nb, N))  # a - chat (with the world's acceleration a0)
    qdd = J.buf("ab_qdd", (nq, N))
    a0b = np.broadcast_to(a0, (6, N))
    for L in lv.levels:
        sl = slice(L.start, L.stop)
        if L.free:
            # IA a' + pA = f_base with a' = a - a_grav = a + a0
            Ah[:, 0] = solve6(aug[:6, :, 0].swapaxes(0, 1), tau[:6] - pA[:, 0])
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
