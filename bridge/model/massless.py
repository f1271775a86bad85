"""Which DOFs move no inertia: the joints whose row of the mass matrix is zero.

A movable joint ``i`` moves the links of its subtree. Its diagonal mass-matrix entry is the
kinetic energy of that subtree per unit joint velocity (times 2):

* prismatic along ``a``: ``M_ii = m``, the subtree's mass;
* revolute about the line through ``o`` along the unit ``a``: ``M_ii = a^T I_o a``, the subtree's
  moment of inertia about that line (each link contributes ``a^T I_c a`` plus ``m d^2``, ``d`` the
  distance of its centre of mass from the line).

The mass matrix is positive semi-definite, so ``M_ii = 0`` makes the whole row and column ``i``
zero: forward dynamics is undefined. That happens when the subtree is massless, and also when all
its mass sits on the joint axis with no moment of inertia about it (a point mass on the axis, a
thin rod along it). ``M_ii`` depends on the positions of the joints inside the subtree, so it is
evaluated at the zero configuration and at two seeded random ones: a DOF is massless when it is
zero (to rounding) at all three, which for a trigonometric polynomial in the joint positions means
identically zero (with probability one).

Everything is computed in base coordinates from :meth:`Model.forward_kinematics`, with the
composite inertias summed over subtrees in one pass (linear in the number of links).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from bridge.model.model import Model

__all__ = ["diagonal_mass_entries", "massless_dofs"]

#: an entry below this fraction of the magnitudes it is summed from is zero (rounding)
RELATIVE_ZERO = 1e-12


def _sample_positions(model: Model, n_random: int = 2) -> np.ndarray:
    """(1 + n_random, n_positions): the neutral positions, then seeded random ones (angles in
    [-pi, pi], 1 m slides, uniformly random rotations of ball and free joints)."""
    rng = np.random.default_rng(20240521)
    if model.single_coordinate:
        span = np.array([np.pi if j.kind.rotational else 1.0 for j in model.movable_joints])
        s = rng.uniform(-1.0, 1.0, size=(n_random, model.n_dofs)) * span
        return np.concatenate([np.zeros((1, model.n_dofs)), s])
    parts = [k.spec.random(rng, (n_random,)) for k in model.coordinates.kinds]
    return np.concatenate([model.neutral_positions()[None], np.concatenate(parts, axis=-1)])


def diagonal_mass_entries(model: Model, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(M_ii, scale)`` (k, n_dofs) at the joint positions ``s`` (k, n_positions): the joint-space
    diagonal of the mass matrix, and the magnitude of the terms it is computed from (its rounding
    error is a small multiple of ``eps * scale``)."""
    k = s.shape[0]
    base_H = model.forward_kinematics(s)
    # per link, in base coordinates: mass m, first moment h = m c, rotational inertia about the
    # base origin I0 (accumulated over subtrees below)
    mass: dict[str, np.ndarray] = {}
    first: dict[str, np.ndarray] = {}
    second: dict[str, np.ndarray] = {}
    for link in model.links:
        H = base_H[link.name]
        R, p = H.rotation, H.translation
        inertia = link.inertia
        m = np.broadcast_to(np.asarray(inertia.mass, dtype=float), (k,))
        c = np.einsum("...ij,j->...i", R, inertia.com) + p
        Ic = R @ inertia.inertia_com @ np.swapaxes(R, -1, -2)
        cc = np.einsum("...i,...i->...", c, c)
        I0 = Ic + m[:, None, None] * (cc[:, None, None] * np.eye(3) - c[:, :, None] * c[:, None, :])
        mass[link.name] = m.copy()
        first[link.name] = m[:, None] * c
        second[link.name] = I0
    for j in reversed(model.depth_first_joints):  # children before parents: subtree sums
        mass[j.parent] = mass[j.parent] + mass[j.child]
        first[j.parent] = first[j.parent] + first[j.child]
        second[j.parent] = second[j.parent] + second[j.child]
    diag = np.zeros((k, model.n_dofs))
    scale = np.zeros((k, model.n_dofs))
    coords = model.coordinates
    for k_joint, j in enumerate(model.movable_joints):
        m, h, I0 = mass[j.child], first[j.child], second[j.child]
        i = int(coords.v_start[k_joint])  # the joint's (first) column
        if j.kind.wide:
            cols = coords.v_slice(k_joint)
            diag[:, cols], scale[:, cols] = _twist_energies(base_H[j.child], j.subspace, m, h, I0)
            continue
        if not j.kind.rotational:
            diag[:, i] = scale[:, i] = m
            continue
        H = base_H[j.child]
        a = np.einsum("...ij,j->...i", H.rotation, j.axis)
        o = np.einsum("...ij,j->...i", H.rotation, j.axis_origin) + H.translation
        ao, ah = np.einsum("...i,...i->...", a, o), np.einsum("...i,...i->...", a, h)
        ho, oo = np.einsum("...i,...i->...", h, o), np.einsum("...i,...i->...", o, o)
        aIa = np.einsum("...i,...ij,...j->...", a, I0, a)
        # a^T I_o a, with I_o = I0 + (m |o|^2 - 2 h.o) 1 + h o^T + o h^T - m o o^T
        diag[:, i] = aIa + m * oo - 2.0 * ho + 2.0 * ah * ao - m * ao * ao
        scale[:, i] = np.abs(aIa) + np.abs(m) * oo + 2.0 * np.linalg.norm(h, axis=-1) * np.sqrt(oo)
    return diag, scale


def _twist_energies(
    H, S: np.ndarray, m: np.ndarray, h: np.ndarray, I0: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``(2 T, scale)`` (k, nv) of each column of a joint's motion subspace ``S`` (6, nv) (child
    coordinates), moved to base coordinates at the pose ``H`` (batch k), for a subtree of mass
    ``m``, first moment ``h`` and second moment ``I0`` about the base origin: for the twist
    ``(v, w)`` at the base origin, ``m v.v + 2 v.(w x h) + w.I0 w``."""
    R, p = H.rotation, H.translation
    w = np.einsum("kij,jn->kin", R, S[3:])
    v = np.einsum("kij,jn->kin", R, S[:3]) + np.cross(p[:, :, None], w, axis=1)
    vv = np.einsum("kin,kin->kn", v, v)
    wxh = np.cross(w, h[:, :, None], axis=1)
    energy = m[:, None] * vv + 2.0 * np.einsum("kin,kin->kn", v, wxh) + np.einsum("kin,kij,kjn->kn", w, I0, w)
    scale = np.abs(m)[:, None] * vv + 2.0 * np.linalg.norm(v, axis=1) * np.linalg.norm(wxh, axis=1)
    scale = scale + np.abs(np.einsum("kin,kij,kjn->kn", w, I0, w))
    return energy, scale


def massless_dofs(model: Model) -> tuple[str, ...]:
    """The DOFs of ``model`` whose mass-matrix diagonal entry is zero at every configuration (see
    the module docstring), in DOF order."""
    if model.n_dofs == 0:
        return ()
    diag, scale = diagonal_mass_entries(model, _sample_positions(model))
    zero = np.all(np.abs(diag) <= RELATIVE_ZERO * scale, axis=0)
    c = model.coordinates
    return tuple(d for i, d in enumerate(model.dof_names) if zero[c.v_slice(i)].any())
