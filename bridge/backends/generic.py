"""Quantities derived from the engine protocol's core alone: their one generic construction (what
:func:`bridge.backends.protocol.derived` gives an engine that does not compute one natively).

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
* the time derivative of a frame Jacobian along the motion (:func:`frame_jacobian_derivative`);
* the total momentum and its Jacobian (the centroidal ones moved to the base's frame) and the
  Coriolis forces ``h - g``.

Each moving body is the child link of a movable joint (or the floating base) together with the links
welded to it. A joint column of every world Jacobian is constant in the joint's child link K, so its
derivative is ``v_K x`` the column; the base columns ``A_X_W`` (W the representation's base frame)
change with the velocity of W. The frames a representation expresses things in (F, A, F[A] for a
frame F) are its declaration's (:mod:`bridge.conventions.frames`). Everything broadcasts over the
state's batch axes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from bridge._cache import ModelCache, per_model
from bridge.conventions.frames import expressed_frame_velocity, frame_force, frame_jacobian, frame_map
from bridge.spatial import Force, Transform
from bridge.spatial.vectors import crf, crm

if TYPE_CHECKING:  # pragma: no cover
    from bridge.backends.protocol import Engine
    from bridge.model.model import Model

__all__ = [
    "centroidal_momentum_matrix",
    "coriolis_forces",
    "coriolis_matrix",
    "frame_jacobian_derivative",
    "relative_jacobian",
    "relative_transform",
    "total_momentum",
    "total_momentum_jacobian",
]


@dataclass(frozen=True)
class _Body:
    """A moving body: its link (a frame), its Jacobian columns (ancestor mask), the columns its own
    joint moves (None for the floating base; several for a planar, ball or free joint) and the
    inertia (6, 6) of it and the links welded to it, in its link's coordinates (None if it carries
    no inertia at all)."""

    link: str
    mask: np.ndarray  # (nv,) bool
    column: slice | None
    inertia: np.ndarray | None


@per_model
def _bodies(model: Model) -> tuple[_Body, ...]:
    """The moving bodies of ``model`` (cached per model); a fixed base and what is welded to it
    does not move and is left out."""
    nb = 6 if model.floating else 0
    nv = model.nv
    # link -> (its moving body, body_H_link)
    body_of: dict[str, tuple[str, Transform]] = {model.base: (model.base, Transform.identity())}
    mask = {model.base: np.zeros(nv, dtype=bool)}
    if model.floating:
        mask[model.base][:6] = True
    column: dict[str, slice | None] = {model.base: None}
    coords = model.coordinates
    for j in model.depth_first_joints:
        if j.movable:
            m = mask[body_of[j.parent][0]].copy()
            cs = coords.v_slice(coords.index[j.name])
            c = slice(nb + cs.start, nb + cs.stop)
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
    return tuple(_Body(k, mask[k], column[k], inertia[k]) for k in mask if model.floating or k != model.base)


def _world_rows(engine: Engine, world_H_frame: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Motion rows (..., 6, k) of a frame F in the engine's representation (F, A or F[A]) -> the same
    motions in world coordinates A (INERTIAL)."""
    return frame_jacobian(world_H_frame, x, engine.representation, "inertial")


def _fbar(f: np.ndarray) -> np.ndarray:
    """(..., 6, 6) matrix of ``u -> u x* f`` for a force f (..., 6), linear first."""
    from bridge.spatial.so3 import skew

    F, N = skew(f[..., :3]), skew(f[..., 3:])
    out = np.zeros((*f.shape[:-1], 6, 6))
    out[..., :3, 3:] = -F
    out[..., 3:, :3] = -F
    out[..., 3:, 3:] = -N
    return out


#: engine -> (its state, _body_terms' per-body terms at that state): the centroidal momentum matrix,
#: the Coriolis matrix and the total momentum Jacobian of one state share them
_TERMS = ModelCache()


def _world_terms(engine: Engine) -> list:
    """Per moving body: (body, world Jacobian (..., 6, nv), world inertia (..., 6, 6) or None), made
    once per state of ``engine`` (an engine belongs to one KinDyn, which calls it under its lock)."""
    state = engine.state
    kept = _TERMS.of(engine)  # (an engine class that takes no weak references: no memo)
    memo = kept.get("terms")
    if memo is not None and memo[0] is state:
        return memo[1]
    terms = []
    for body in _bodies(engine.model):
        H = engine.frame_transform(body.link)
        J = _world_rows(engine, H, engine.frame_jacobian(body.link))
        Y = None
        if body.inertia is not None:  # world inertia A_Xs_K I_K K_X_A
            Xs = Transform(H, check=False).force_matrix()
            Y = Xs @ body.inertia @ np.swapaxes(Xs, -1, -2)
        terms.append((body, J, Y))
    kept["terms"] = (state, terms)
    return terms


def _body_terms(engine: Engine, need_derivative: bool):
    """Per moving body: (world Jacobian (..., 6, nv), world inertia (..., 6, 6)), and the derivative
    of the full world motion-subspace matrix (..., 6, nv) (None unless asked for)."""
    model = engine.model
    terms = _world_terms(engine)
    S_dot = None
    if need_derivative:
        nu = _nu(engine)
        lead = np.broadcast_shapes(*(J.shape[:-2] for _, J, _ in terms), nu.shape[:-1])
        S_dot = np.zeros((*lead, 6, model.nv))
        for body, J, _ in terms:
            v = np.einsum("...ij,...j->...i", J, nu)
            if body.column is not None:  # joint columns, constant in its child link (in BODY form)
                S_dot[..., :, body.column] = crm(v) @ J[..., :, body.column]
            else:  # the floating base: d/dt A_X_W = crm(u_W) A_X_W
                u = expressed_frame_velocity(engine.state.world_H_base, v, engine.representation)
                if u is not None:  # (zero when W is the world)
                    S_dot[..., :, :6] = crm(u) @ J[..., :, :6]
        for (a, b), (_, Xp_inv, Xp_dot) in _wide_blocks(engine).items():
            cols = slice(a, b)
            J_c = terms[_column_body(terms, cols)][1][..., :, cols]
            S_dot[..., :, cols] = S_dot[..., :, cols] + J_c @ (Xp_inv @ Xp_dot)
    return terms, S_dot


def _column_body(terms: list, cols: slice) -> int:
    """The index in ``terms`` of the body whose own joint moves the columns ``cols``."""
    for k, (body, _, _) in enumerate(terms):
        if body.column == cols:
            return k
    raise KeyError(cols)  # pragma: no cover - every joint's columns belong to its child


def _wide_blocks(engine: Engine) -> dict[tuple[int, int], tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """For each planar, ball or free joint whose velocity in the engine's representation is not the
    BODY form: its columns ``(start, stop)`` (absolute, in nu) -> ``(X', X'^-1, X'_dot)``
    (..., w, w), ``X'`` the joint's block from the representation to the BODY form. The joint's
    world Jacobian columns are ``S_w X'`` (``S_w`` constant in the child link), so their derivative
    is ``v_K x J_c + S_w X'_dot = v_K x J_c + J_c X'^-1 X'_dot`` (docs/theory.md, "Joints of several
    coordinates"), and the joint's armature ``a`` (constant in the BODY form) adds
    ``a X'^T X'_dot`` to its diagonal block of the Coriolis matrix."""
    model = engine.model
    if model.single_coordinate:
        return {}
    from bridge.conventions.declaration import BODY_VELOCITY
    from bridge.conventions.joint_blocks import joint_declaration, joint_maps
    from bridge.conventions.state import velocity_declaration
    from bridge.spatial.xp import NUMPY

    rep = velocity_declaration(engine.representation)
    state = engine.state
    coords = model.coordinates
    nb = 6 if model.floating else 0
    out: dict[tuple[int, int], tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
    for k in coords.wide:
        kind = coords.kinds[k]
        if joint_declaration(kind, rep).same_frame(joint_declaration(kind, BODY_VELOCITY)):
            continue
        q_sl, v_sl = coords.q_slice(k), coords.v_slice(k)
        q, v = state.s[..., q_sl], state.s_dot[..., v_sl]
        Xp, Xp_inv, Xp_dot = joint_maps(kind, rep, BODY_VELOCITY, q, v, NUMPY)
        if Xp_dot is not None:
            out[(nb + v_sl.start, nb + v_sl.stop)] = (Xp, Xp_inv, Xp_dot)
    return out


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
    model = engine.model
    for (a, b), (Xp, _, Xp_dot) in _wide_blocks(engine).items():
        armature = model.joint(_joint_at(model, a)).armature
        if armature:
            C[..., a:b, a:b] += armature * np.swapaxes(Xp, -1, -2) @ Xp_dot
    return C


def _joint_at(model: Model, column: int) -> str:
    """The DOF joint whose velocities start at ``column`` of nu."""
    coords = model.coordinates
    start = column - (6 if model.floating else 0)
    return coords.names[int(np.searchsorted(coords.v_start, start))]


@per_model
def _ancestry(model: Model) -> np.ndarray:
    """(nv, nv) with column c the mask of the columns moving the body that column c's joint moves
    (its child link; the floating base for the base columns), made once per model."""
    nv = model.nv
    out = np.zeros((nv, nv))
    for body in _bodies(model):
        if body.column is not None:
            out[:, body.column] = body.mask[:, None]
        else:
            out[:, :6] = body.mask[:, None]
    out.setflags(write=False)
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
    ``-E crm(u_E) S`` with u_E the world velocity of the row frame (F, none, or F[A]); both frames
    and their velocities come from the representation's declaration
    (:func:`bridge.conventions.frames.expressed_frame_velocity`)."""
    model, rep = engine.model, engine.representation
    H = engine.frame_transform(frame)
    S = _world_rows(engine, H, engine.frame_jacobian(frame))
    nu = _nu(engine)
    V = S @ (nu[..., :, None] * _ancestry(model))  # column c: the world velocity of its body
    S_dot = _cross_columns(V, S)
    for (a, b), (_, Xp_inv, Xp_dot) in _wide_blocks(engine).items():  # (see _wide_blocks)
        S_dot[..., :, a:b] = S_dot[..., :, a:b] + S[..., :, a:b] @ (Xp_inv @ Xp_dot)
    if model.floating:  # the base columns A_X_W: d/dt = crm(u_W) A_X_W (V's base columns are v_B)
        u = expressed_frame_velocity(engine.state.world_H_base, V[..., :, 0], rep)
        S_dot[..., :, :6] = 0.0 if u is None else crm(u) @ S[..., :, :6]
    # the rows E S: d/dt (E_X_A S) = E_X_A (S_dot - crm(u_E) S), u_E the world velocity of E
    u_E = expressed_frame_velocity(H, np.einsum("...ij,...j->...i", S, nu), rep)
    if u_E is None:
        return S_dot
    return frame_jacobian(H, S_dot - crm(u_E) @ S, "inertial", rep)


def relative_transform(engine: Engine, frame: str, reference: str) -> np.ndarray:
    """``reference_H_frame`` (..., 4, 4)."""
    return _relative(engine.frame_transform(frame), engine.frame_transform(reference))


def _relative(world_H_frame: np.ndarray, world_H_reference: np.ndarray) -> np.ndarray:
    """``reference_H_frame`` (..., 4, 4) from the two world poses."""
    A_H_R = Transform(world_H_reference, check=False)
    return (A_H_R.inverse() @ Transform(world_H_frame, check=False)).matrix


def relative_jacobian(engine: Engine, frame: str, reference: str) -> np.ndarray:
    """(..., 6, n): the velocity of ``frame`` F relative to ``reference`` R per unit joint velocity,
    expressed in F (BODY), R (INERTIAL) or F[R] (MIXED)."""
    H_F, H_R = engine.frame_transform(frame), engine.frame_transform(reference)
    J_F = _world_rows(engine, H_F, engine.frame_jacobian(frame))
    J_R = _world_rows(engine, H_R, engine.frame_jacobian(reference))
    nb = 6 if engine.model.floating else 0
    # in R's coordinates, R playing the world: then from "inertial" to the representation at R_H_F
    D = frame_jacobian(H_R, (J_F - J_R)[..., :, nb:], "inertial", "body")
    return frame_jacobian(_relative(H_F, H_R), D, "inertial", engine.representation)


def coriolis_forces(engine: Engine) -> np.ndarray:
    """``C nu`` (..., nv): the bias forces without gravity."""
    return engine.bias_forces() - engine.gravity_forces()


def total_momentum(engine: Engine) -> np.ndarray:
    """The total momentum (..., 6), linear first, in the representation's frame of the base (B, A
    or B[A]): the centroidal momentum moved from G[A] to A, then to that frame."""
    A_H_G = Transform.from_translation(engine.com_position())
    h = (A_H_G @ Force(engine.centroidal_momentum())).vector
    return frame_force(engine.state.world_H_base, h, "inertial", engine.representation)


def total_momentum_jacobian(engine: Engine) -> np.ndarray:
    """(..., 6, nv) with ``J nu`` the total momentum (:func:`total_momentum`): the dual action of the
    maps G[A] -> A -> the base's frame on every column of the engine's centroidal momentum matrix
    (native or :func:`centroidal_momentum_matrix`)."""
    from bridge.backends.protocol import derived  # (the protocol imports this module)

    cmm = derived(engine, "centroidal_momentum_matrix")()
    A_Xs = Transform.from_translation(engine.com_position()).force_matrix()
    W_X_A = frame_map(engine.state.world_H_base, engine.representation, "inertial")
    if W_X_A is not None:  # forces map with the transpose of the motions' inverse map
        A_Xs = np.swapaxes(W_X_A, -1, -2) @ A_Xs
    return A_Xs @ cmm
