"""Quantities derived from the engine protocol's core alone: their one generic construction (the
defaults :class:`bridge.backends.base.EngineBase` gives every engine).

Every engine answers frame poses, frame Jacobians, the centre of mass and the state; from those and
the neutral model's link inertias this module builds, exactly (no finite differences), the
quantities a library may or may not offer natively:

* the centroidal momentum matrix, ``sum_K Y_K J_K`` (world momentum Jacobian about the world
  origin) moved to the centre of mass;
* the Coriolis matrix of the rigid-body sum (docs/theory.md, "The Coriolis matrix"):
  ``C = sum_K J_K^T (Y_K J_dot_K + B_K J_K)`` with ``B_K = 1/2 (v_K x* Y_K - Y_K v_K x + (Y_K v_K) xbar*)``,
  in world coordinates (``J_K`` the world Jacobian of moving body K, ``Y_K`` its world inertia,
  ``v_K = J_K nu``). ``C nu = h - g`` and ``M_dot = C + C^T`` hold exactly;
* the relative transform and relative Jacobian of two frames;
* the time derivative of a frame Jacobian along the motion (:func:`frame_jacobian_derivative`).

Each moving body is the child link of a movable joint (or the floating base) together with the links
welded to it. A joint column of every world Jacobian is constant in the joint's child link K, so its
derivative is ``v_K x`` the column; the base columns ``A_X_W`` (W the representation's base frame)
change with the velocity of W. Everything broadcasts over the state's batch axes.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from bridge.conventions.state import Representation
from bridge.spatial import Transform
from bridge.spatial.vectors import crf, crm

if TYPE_CHECKING:  # pragma: no cover
    from bridge.backends.protocol import Engine
    from bridge.model.model import Model

__all__ = [
    "centroidal_momentum_matrix",
    "coriolis_matrix",
    "frame_jacobian_derivative",
    "relative_jacobian",
    "relative_transform",
    "to_world_rows",
]


@dataclass(frozen=True)
class _Body:
    """A moving body: its link (a frame), its Jacobian columns (ancestor mask), the column its own
    joint moves (None for the floating base) and the inertia (6, 6) of it and the links welded to
    it, in its link's coordinates (None if it carries no inertia at all)."""

    link: str
    mask: np.ndarray  # (nv,) bool
    column: int | None
    inertia: np.ndarray | None


_BODIES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _bodies(model: Model) -> tuple[_Body, ...]:
    """The moving bodies of ``model`` (cached per model); a fixed base and what is welded to it
    does not move and is left out."""
    cached = _BODIES.get(model)
    if cached is not None:
        return cached
    nb = 6 if model.floating else 0
    nv = model.nv
    # link -> (its moving body, body_H_link)
    body_of: dict[str, tuple[str, Transform]] = {model.base: (model.base, Transform.identity())}
    mask = {model.base: np.zeros(nv, dtype=bool)}
    if model.floating:
        mask[model.base][:6] = True
    column: dict[str, int | None] = {model.base: None}
    for j in model.depth_first_joints:
        if j.movable:
            m = mask[body_of[j.parent][0]].copy()
            c = nb + model.dof_index(j.name)
            m[c] = True
            body_of[j.child], mask[j.child], column[j.child] = (j.child, Transform.identity()), m, c
        else:
            body, body_H_parent = body_of[j.parent]
            body_of[j.child] = (body, body_H_parent @ j.transform(0.0))
    inertia: dict[str, np.ndarray | None] = dict.fromkeys(mask)
    for link in model.links:
        Y_link = link.inertia.as_matrix()
        if np.any(Y_link):  # a massless link may still carry a rotational inertia
            body, body_H_link = body_of[link.name]
            Xs = body_H_link.force_matrix()
            Y = Xs @ Y_link @ Xs.T
            inertia[body] = Y if inertia[body] is None else inertia[body] + Y
    out = tuple(_Body(k, mask[k], column[k], inertia[k]) for k in mask if model.floating or k != model.base)
    _BODIES[model] = out
    return out


def to_world_rows(rep: Representation, world_H_frame: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Motion rows (..., 6, k) of a frame F in the representation's frame for F (F, A or F[A])
    -> the same motions in world coordinates A (INERTIAL)."""
    if rep is Representation.INERTIAL:
        return x
    H = Transform(world_H_frame, check=False)
    if rep is Representation.MIXED:
        H = Transform.from_translation(H.translation)
    return H.motion_matrix() @ x


def _fbar(f: np.ndarray) -> np.ndarray:
    """(..., 6, 6) matrix of ``u -> u x* f`` for a force f (..., 6), linear first."""
    from bridge.spatial.so3 import skew

    F, N = skew(f[..., :3]), skew(f[..., 3:])
    out = np.zeros((*f.shape[:-1], 6, 6))
    out[..., :3, 3:] = -F
    out[..., 3:, :3] = -F
    out[..., 3:, 3:] = -N
    return out


def _body_terms(engine: Engine, need_derivative: bool):
    """Per moving body: (world Jacobian (..., 6, nv), world inertia (..., 6, 6)), and the derivative
    of the full world motion-subspace matrix (..., 6, nv) (None unless asked for)."""
    model, rep = engine.model, engine.representation
    terms = []
    S_dot = None
    for body in _bodies(model):
        H = engine.frame_transform(body.link)
        J = to_world_rows(rep, H, engine.frame_jacobian(body.link))
        Y = None
        if body.inertia is not None:  # world inertia A_Xs_K I_K K_X_A
            Xs = Transform(H, check=False).force_matrix()
            Y = Xs @ body.inertia @ np.swapaxes(Xs, -1, -2)
        terms.append((body, J, Y))
    if need_derivative:
        nu = _nu(engine)
        lead = np.broadcast_shapes(*(J.shape[:-2] for _, J, _ in terms), nu.shape[:-1])
        S_dot = np.zeros((*lead, 6, model.nv))
        for body, J, _ in terms:
            v = np.einsum("...ij,...j->...i", J, nu)
            if body.column is not None:  # a joint column, constant in its child link
                S_dot[..., :, body.column] = np.einsum("...ij,...j->...i", crm(v), J[..., :, body.column])
            else:  # the floating base: d/dt A_X_W = crm(u_W) A_X_W
                u = _base_frame_velocity(rep, v, nu[..., :6])
                S_dot[..., :, :6] = crm(u) @ J[..., :, :6]
    return terms, S_dot


def _base_frame_velocity(rep: Representation, v_base_world: np.ndarray, nu_base: np.ndarray) -> np.ndarray:
    """World velocity (..., 6) of the frame W the base velocity is expressed in (B, A or B[A])."""
    if rep is Representation.BODY:
        return v_base_world
    if rep is Representation.INERTIAL:
        return np.zeros_like(v_base_world)
    u = np.zeros(np.broadcast_shapes(v_base_world.shape, nu_base.shape))
    u[..., :3] = nu_base[..., :3]  # B[A] translates with the base origin and does not rotate
    return u


def _nu(engine: Engine) -> np.ndarray:
    st = engine.state
    return st.nu if engine.model.floating else st.s_dot


def centroidal_momentum_matrix(engine: Engine) -> np.ndarray:
    """(..., 6, nv): the centroidal momentum (G[A], linear first) per unit generalized velocity."""
    terms, _ = _body_terms(engine, need_derivative=False)
    A = np.zeros((*engine.batch_shape, 6, engine.model.nv))
    for _, J, Y in terms:
        if Y is not None:
            A = A + Y @ J
    c = engine.com_position()
    out = np.array(A, copy=True)
    out[..., 3:, :] -= np.cross(c[..., None, :], np.swapaxes(A[..., :3, :], -1, -2)).swapaxes(-1, -2)
    return np.broadcast_to(out, (*engine.batch_shape, 6, engine.model.nv)).copy()


def coriolis_matrix(engine: Engine) -> np.ndarray:
    """(..., nv, nv) Coriolis matrix in the engine's representation (see the module docstring)."""
    terms, S_dot = _body_terms(engine, need_derivative=True)
    nu = _nu(engine)
    nv = engine.model.nv
    C = np.zeros((*engine.batch_shape, nv, nv))
    for body, J, Y in terms:
        if Y is None:
            continue
        v = np.einsum("...ij,...j->...i", J, nu)
        Yv = np.einsum("...ij,...j->...i", Y, v)
        B = 0.5 * (crf(v) @ Y - Y @ crm(v) + _fbar(Yv))
        J_dot = S_dot * body.mask
        C = C + np.swapaxes(J, -1, -2) @ (Y @ J_dot + B @ J)
    return C


_ANCESTRY: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _ancestry(model: Model) -> np.ndarray:
    """(nv, nv) with column c the mask of the columns moving the body that column c's joint moves
    (its child link; the floating base for the base columns), made once per model."""
    cached = _ANCESTRY.get(model)
    if cached is not None:
        return cached
    nv = model.nv
    out = np.zeros((nv, nv))
    for body in _bodies(model):
        if body.column is not None:
            out[:, body.column] = body.mask
        else:
            out[:, :6] = body.mask[:, None]
    out.setflags(write=False)
    _ANCESTRY[model] = out
    return out


def _cross_columns(v: np.ndarray, m: np.ndarray) -> np.ndarray:
    """``crm(v_c) m_c`` for every column c of (..., 6, k) motions v and m (linear first)."""
    vl, vw = np.swapaxes(v[..., :3, :], -1, -2), np.swapaxes(v[..., 3:, :], -1, -2)
    ml, mw = np.swapaxes(m[..., :3, :], -1, -2), np.swapaxes(m[..., 3:, :], -1, -2)
    lin = np.cross(vw, ml) + np.cross(vl, mw)
    return np.swapaxes(np.concatenate([lin, np.cross(vw, mw)], axis=-1), -1, -2)


def frame_jacobian_derivative(engine: Engine, frame: str) -> np.ndarray:
    """(..., 6, nv): the time derivative of ``engine.frame_jacobian(frame)`` along the motion, so
    that times ``nu`` it is the frame's bias acceleration, in the representation.

    In world coordinates (``S`` the frame's world Jacobian; docs/theory.md, "Frame accelerations",
    the paragraph on ``J_dot^W``): a joint column is constant in the joint's child link K, so its
    derivative is ``v_K x`` the column, ``v_K = S (mask_K nu)``; the base columns ``A_X_W`` change as
    ``crm(u_W) A_X_W`` (u_W the world velocity of the frame W the base velocity is expressed in).
    The rows ``E S`` (E the world-to-F, identity or world-to-F[A] motion transform) then add
    ``-E crm(u_E) S`` with u_E the world velocity of the row frame (F, none, or F[A])."""
    model, rep = engine.model, engine.representation
    H = engine.frame_transform(frame)
    J = engine.frame_jacobian(frame)
    S = to_world_rows(rep, H, J)
    nu = _nu(engine)
    V = S @ (nu[..., :, None] * _ancestry(model))  # column c: the world velocity of its body
    S_dot = _cross_columns(V, S)
    if model.floating:  # the base columns A_X_W: d/dt = crm(u_W) A_X_W (V's base columns are v_B)
        u = _base_frame_velocity(rep, V[..., :, 0], nu[..., :6])
        S_dot[..., :, :6] = crm(u) @ S[..., :, :6]
    if rep is Representation.INERTIAL:
        return S_dot
    v_F = np.einsum("...ij,...j->...i", S, nu)  # the frame's world velocity
    if rep is Representation.MIXED:  # F[A] moves with the origin's velocity and does not rotate
        o = H[..., :3, 3]
        u_E = np.zeros(v_F.shape)
        u_E[..., :3] = v_F[..., :3] + np.cross(v_F[..., 3:], o)
    else:
        u_E = v_F
    D = S_dot - crm(u_E) @ S
    A_H_E = Transform(H, check=False)
    if rep is Representation.MIXED:
        A_H_E = Transform.from_translation(A_H_E.translation)
    return A_H_E.inverse().motion_matrix() @ D


def relative_transform(engine: Engine, frame: str, reference: str) -> np.ndarray:
    """``reference_H_frame`` (..., 4, 4)."""
    A_H_R = Transform(engine.frame_transform(reference), check=False)
    A_H_F = Transform(engine.frame_transform(frame), check=False)
    return (A_H_R.inverse() @ A_H_F).matrix


def relative_jacobian(engine: Engine, frame: str, reference: str) -> np.ndarray:
    """(..., 6, n): the velocity of ``frame`` F relative to ``reference`` R per unit joint velocity,
    expressed in F (BODY), R (INERTIAL) or F[R] (MIXED)."""
    rep = engine.representation
    H_F, H_R = engine.frame_transform(frame), engine.frame_transform(reference)
    J_F = to_world_rows(rep, H_F, engine.frame_jacobian(frame))
    J_R = to_world_rows(rep, H_R, engine.frame_jacobian(reference))
    nb = 6 if engine.model.floating else 0
    D = (J_F - J_R)[..., :, nb:]
    A_H_F, A_H_R = Transform(H_F, check=False), Transform(H_R, check=False)
    if rep is Representation.BODY:
        A_H_E = A_H_F
    elif rep is Representation.INERTIAL:
        A_H_E = A_H_R
    else:
        A_H_E = Transform.from_rotation_translation(A_H_R.rotation, A_H_F.translation, check=False)
    return A_H_E.inverse().motion_matrix() @ D
