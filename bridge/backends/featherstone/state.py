"""Neutral states and generalized quantities to and from Featherstone's floating-base convention.

A floating-base state is spatial_v2's ``xfb`` (13,) plus the real joints in Featherstone body order:

* ``xfb[0:4]``: unit quaternion (w, x, y, z) of the fixed-to-base rotation: as an active rotation it
  is ``world_R_base``, and ``rq(xfb[0:4]) = E = base_R_world`` is the coordinate transform;
* ``xfb[4:7]``: the base origin in world coordinates;
* ``xfb[7:13]``: the base spatial velocity in world coordinates, angular first — bridge's INERTIAL
  representation with its halves swapped.

Featherstone's generalized velocity is therefore ``nu_F = [v_fb (world, angular first); qd]``, its
acceleration ``[a_fb; qdd]`` with ``a_fb`` the time derivative of ``v_fb`` (a spatial acceleration,
not a classical one), and its generalized force ``[f_fb; tau]`` with ``f_fb`` the wrench on the base
in world coordinates (angular first, moment about the world origin). From a neutral
representation: ``nu_F = P T nu`` with T the change of variables to INERTIAL
(:func:`bridge.state.velocity_transform`) and P the permutation (halves swapped, joints in
Featherstone order), so ``nu_dot_F = P (T nu_dot + T_dot nu)``, ``tau = T^T P^T tau_F``,
``M = T^T P^T H_F P T`` and ``J = J_F P T``.

A fixed base has no xfb (None): the model's fixed world is the base link, and q, qd are the joints.
"""

from __future__ import annotations

import numpy as np

from bridge._array import as_float_array
from bridge.errors import BridgeError, StateError
from bridge.model.model import Model
from bridge.spatial import Transform
from bridge.spatial.conventions import to_angular_first, to_linear_first
from bridge.state import Representation, State, structured_velocity_transform

from .model import FeatherstoneModel, base_placement, to_featherstone

__all__ = [
    "FeatherstoneTransform",
    "featherstone_velocity_transform",
    "from_featherstone_acceleration",
    "from_featherstone_force",
    "from_featherstone_state",
    "to_featherstone_acceleration",
    "to_featherstone_force",
    "to_featherstone_state",
]

_SWAP = np.array([3, 4, 5, 0, 1, 2])


def _fmodel(model: Model | FeatherstoneModel) -> FeatherstoneModel:
    if isinstance(model, FeatherstoneModel):
        return model
    if isinstance(model, Model):
        return to_featherstone(model)
    raise StateError(f"expected a bridge.Model or a FeatherstoneModel, got {type(model).__name__}")


def featherstone_index(fm: FeatherstoneModel) -> tuple[np.ndarray, np.ndarray]:
    """``(fidx, inv)``: ``x_F = x_N[..., fidx]`` from a neutral INERTIAL generalized vector (linear
    first base, model DOF order) to Featherstone's, and ``x_N = x_F[..., inv]``."""
    perm = np.asarray(fm.dof_perm, dtype=np.intp)
    fidx = np.concatenate([_SWAP, 6 + perm]) if fm.floating else perm.copy()
    inv = np.argsort(fidx)
    return fidx, inv


def to_featherstone_state(
    model: Model | FeatherstoneModel, state: State
) -> tuple[np.ndarray | None, np.ndarray, np.ndarray]:
    """Neutral state -> ``(xfb (..., 13) or None for a fixed base, q (..., n), qd (..., n))``.

    q and qd hold the real joints in Featherstone body order (bodies 7..NB, or 1..NB for a fixed
    base); see the module docstring for xfb. The state is one of ``from_featherstone(model)`` (or of
    ``model`` itself when it is a neutral Model): xfb is the pose of body 6, i.e. ``world_H_base @
    base_placement(model).inverse()`` (the same pose unless the model comes from :func:`floatbase`).
    """
    fm = _fmodel(model)
    state.check_model(fm)
    perm = fm.dof_perm
    q = state.s[..., perm]
    qd = state.s_dot[..., perm]
    if not fm.floating:
        return None, q, qd
    H = state.world_H_base
    body_H_base = base_placement(fm)
    if not np.array_equal(body_H_base.matrix, np.eye(4)):
        H = H @ body_H_base.inverse()  # world_H_body6
    # the INERTIAL velocity (world coordinates) is the same for every frame fixed on the base
    v = to_angular_first(state.base_velocity_in(Representation.INERTIAL))
    parts = [H.as_quaternion_wxyz(), H.translation, v]
    batch = np.broadcast_shapes(*(p.shape[:-1] for p in parts))
    xfb = np.concatenate([np.broadcast_to(p, (*batch, p.shape[-1])) for p in parts], axis=-1)
    return xfb, q, qd


def from_featherstone_state(
    model: Model | FeatherstoneModel,
    xfb: object,
    q: object,
    qd: object,
    representation: object = Representation.MIXED,
    world_H_base: object = None,
) -> State:
    """``(xfb, q, qd)`` -> a neutral State in ``representation``.

    For a fixed base ``xfb`` must be None; ``world_H_base`` (default identity) places the base.
    The state is one of ``from_featherstone(model)``: its base link sits at
    :func:`~.model.base_placement` on body 6, so ``world_H_base = world_H_body6 @ body6_H_base``
    (``world_H_body6`` from xfb; the same pose unless the model comes from :func:`floatbase`).
    """
    from .quaternions import rq

    fm = _fmodel(model)
    n = fm.n_real
    try:
        q = as_float_array(q, "q", (n,))
        qd = as_float_array(qd, "qd", (n,))
    except BridgeError as exc:
        raise StateError(f"Featherstone state of model {fm.name!r}: {exc}") from None
    inv = np.argsort(fm.dof_perm)
    s, s_dot = q[..., inv], qd[..., inv]
    rep = Representation.parse(representation)
    if not fm.floating:
        if xfb is not None:
            raise StateError(f"model {fm.name!r} has a fixed base: xfb must be None")
        H = Transform.identity() if world_H_base is None else world_H_base
        return State(H, s, np.zeros(6), s_dot, rep)
    if xfb is None:
        raise StateError(f"model {fm.name!r} has a floating base: xfb (13,) is required")
    try:
        x = as_float_array(xfb, "xfb", (13,))
        E = rq(x[..., :4])
    except BridgeError as exc:
        raise StateError(f"Featherstone state of model {fm.name!r}: {exc}") from None
    H = Transform.from_rotation_translation(np.swapaxes(E, -1, -2), x[..., 4:7], check=False)
    body_H_base = base_placement(fm)
    if not np.array_equal(body_H_base.matrix, np.eye(4)):
        H = H @ body_H_base
    st = State(H, s, to_linear_first(x[..., 7:13]), s_dot, Representation.INERTIAL)
    return st if rep is Representation.INERTIAL else st.to(rep)


class FeatherstoneTransform:
    """The change of variables ``nu_F = P T nu`` from a neutral representation (the state's) to
    Featherstone's generalized velocity, with the maps of accelerations, forces, matrices."""

    def __init__(self, model: Model | FeatherstoneModel, state: State):
        fm = _fmodel(model)
        self.fmodel = fm
        self.state = state
        self.vt = structured_velocity_transform(fm, state, state.representation, Representation.INERTIAL)
        self.fidx, self.inv = featherstone_index(fm)
        self.nu = state.nu if fm.floating else state.s_dot

    def velocity(self, nu: np.ndarray) -> np.ndarray:
        """``nu_F = P T nu`` (..., nv)."""
        return self.vt.apply(nu)[..., self.fidx]

    def acceleration(self, nu_dot: np.ndarray) -> np.ndarray:
        """``nu_dot_F = P (T nu_dot + T_dot nu)`` (..., nv)."""
        return (self.vt.apply(nu_dot) + self.vt.apply_derivative(self.nu))[..., self.fidx]

    def acceleration_back(self, nu_dot_F: np.ndarray) -> np.ndarray:
        """``nu_dot = T^-1 (P^T nu_dot_F - T_dot nu)`` (..., nv)."""
        return self.vt.solve(nu_dot_F[..., self.inv] - self.vt.apply_derivative(self.nu))

    def force(self, tau: np.ndarray) -> np.ndarray:
        """``tau_F = P T^-T tau`` (..., nv)."""
        return self.vt.transpose_solve(tau)[..., self.fidx]

    def force_back(self, tau_F: np.ndarray) -> np.ndarray:
        """``tau = T^T P^T tau_F`` (..., nv)."""
        return self.vt.transpose_apply(tau_F[..., self.inv])

    def matrix_back(self, H_F: np.ndarray) -> np.ndarray:
        """``M = T^T P^T H_F P T`` (..., nv, nv)."""
        inv = self.inv
        return self.vt.congruence(H_F[..., inv[:, None], inv[None, :]])

    def jacobian_back(self, J_F: np.ndarray) -> np.ndarray:
        """``J = J_F P T`` (..., m, nv)."""
        return self.vt.right_apply(J_F[..., self.inv])


def featherstone_velocity_transform(model: Model | FeatherstoneModel, state: State) -> FeatherstoneTransform:
    """The :class:`FeatherstoneTransform` at ``state`` (from the state's representation)."""
    return FeatherstoneTransform(model, state)


def _split(fm: FeatherstoneModel, x: np.ndarray) -> tuple[np.ndarray | None, np.ndarray]:
    return (x[..., :6], x[..., 6:]) if fm.floating else (None, x)


def _join(fm: FeatherstoneModel, base: object, joints: object, what: str) -> np.ndarray:
    n = fm.n_real
    j = as_float_array(joints, what, (n,))
    if not fm.floating:
        return j
    b = as_float_array(base, f"{what} (base part)", (6,))
    batch = np.broadcast_shapes(b.shape[:-1], j.shape[:-1])
    return np.concatenate([np.broadcast_to(b, (*batch, 6)), np.broadcast_to(j, (*batch, n))], axis=-1)


def to_featherstone_acceleration(
    model: Model | FeatherstoneModel, state: State, nu_dot: object
) -> tuple[np.ndarray | None, np.ndarray]:
    """Neutral generalized acceleration (state's representation) -> ``(a_fb or None, qdd)``:
    ``a_fb`` the base spatial acceleration in world coordinates (angular first)."""
    fm = _fmodel(model)
    nd = as_float_array(nu_dot, "nu_dot", (fm.n_real + (6 if fm.floating else 0),))
    return _split(fm, FeatherstoneTransform(fm, state).acceleration(nd))


def from_featherstone_acceleration(
    model: Model | FeatherstoneModel, state: State, a_fb: object, qdd: object
) -> np.ndarray:
    """``(a_fb, qdd)`` -> the neutral generalized acceleration in the state's representation."""
    fm = _fmodel(model)
    return FeatherstoneTransform(fm, state).acceleration_back(_join(fm, a_fb, qdd, "qdd"))


def to_featherstone_force(
    model: Model | FeatherstoneModel, state: State, tau: object
) -> tuple[np.ndarray | None, np.ndarray]:
    """Neutral generalized force (state's representation) -> ``(f_fb or None, tau_q)``: ``f_fb`` the
    wrench on the base in world coordinates (angular first), ``tau_q`` the joints in body order."""
    fm = _fmodel(model)
    t = as_float_array(tau, "tau", (fm.n_real + (6 if fm.floating else 0),))
    return _split(fm, FeatherstoneTransform(fm, state).force(t))


def from_featherstone_force(
    model: Model | FeatherstoneModel, state: State, f_fb: object, tau_q: object
) -> np.ndarray:
    """``(f_fb, tau_q)`` -> the neutral generalized force in the state's representation."""
    fm = _fmodel(model)
    return FeatherstoneTransform(fm, state).force_back(_join(fm, f_fb, tau_q, "tau"))
