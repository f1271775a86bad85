"""Robot states, velocity representations and the change of variables T (with its derivative).

A neutral state is ``(world_H_base, s, base_velocity, s_dot)`` with the base velocity in one of
three representations of the base frame B relative to the world A:

* BODY (iDynTree ``BODY_FIXED_REPRESENTATION``, Pinocchio ``LOCAL``): ``B_v_A,B``;
* INERTIAL (``INERTIAL_FIXED_REPRESENTATION``, ``WORLD``): ``A_v_A,B``;
* MIXED (``MIXED_REPRESENTATION``, ``LOCAL_WORLD_ALIGNED``): ``B[A]_v_A,B`` = (d/dt A_o_B, omega in A).

The generalized velocity is ``nu = [base velocity; s_dot]`` (DOF order = ``model.dof_names``). The
``"pinocchio"`` convention is BODY for the base with the joints in Pinocchio's depth-first order.

``velocity_transform(model, state, source, target)`` returns ``(T, T_dot)`` with
``nu_target = T @ nu_source`` and ``T_dot`` the exact time derivative of T along the state's
motion (so ``nu_dot_target = T @ nu_dot_source + T_dot @ nu_source``). Generalized forces are dual:
``tau_source = T^T tau_target``.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING

import numpy as np

from bridge._array import as_float_array
from bridge.errors import BridgeError, InvalidValueError, StateError
from bridge.spatial import Transform
from bridge.spatial.transform import ensure_transform

if TYPE_CHECKING:  # pragma: no cover
    from bridge.model.model import Model

__all__ = ["Convention", "Representation", "State", "VelocityTransform", "velocity_transform"]


class Representation(str, Enum):
    """Velocity representation of a frame F attached to a body, relative to the world A."""

    BODY = "body"
    INERTIAL = "inertial"
    MIXED = "mixed"

    @classmethod
    def parse(cls, value: object) -> Representation:
        """Accept an enum member, its value, or the iDynTree / Pinocchio names (any case)."""
        if isinstance(value, Representation):
            return value
        key = str(getattr(value, "name", value)).strip().lower()
        if key in _ALIASES:
            return _ALIASES[key]
        raise InvalidValueError(
            f"unknown velocity representation {value!r}; use one of 'body', 'inertial', 'mixed' "
            "(or iDynTree's BODY_FIXED/INERTIAL_FIXED/MIXED, Pinocchio's LOCAL/WORLD/LOCAL_WORLD_ALIGNED)"
        )


_ALIASES = {
    "body": Representation.BODY,
    "body_fixed": Representation.BODY,
    "body_fixed_representation": Representation.BODY,
    "local": Representation.BODY,
    "inertial": Representation.INERTIAL,
    "inertial_fixed": Representation.INERTIAL,
    "inertial_fixed_representation": Representation.INERTIAL,
    "world": Representation.INERTIAL,
    "mixed": Representation.MIXED,
    "mixed_representation": Representation.MIXED,
    "local_world_aligned": Representation.MIXED,
}


class Convention(str, Enum):
    """Conventions of the generalized velocity that :func:`velocity_transform` converts between."""

    BODY = "body"
    INERTIAL = "inertial"
    MIXED = "mixed"
    PINOCCHIO = "pinocchio"

    @classmethod
    def parse(cls, value: object) -> Convention:
        if isinstance(value, Convention):
            return value
        if str(value).strip().lower() == "pinocchio":
            return Convention.PINOCCHIO
        return Convention(Representation.parse(value).value)

    @property
    def representation(self) -> Representation:
        """Representation of the base velocity in this convention."""
        return Representation.BODY if self is Convention.PINOCCHIO else Representation(self.value)


def _wrap_state_error(fn):
    def inner(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except StateError:
            raise
        except BridgeError as exc:
            raise StateError(str(exc)) from None

    return inner


@dataclass(frozen=True, eq=False)
class State:
    """A robot state, batched over leading axes.

    Attributes:
        world_H_base: pose of the base link in the world, Transform with batch shape (...).
        s: joint positions (..., n) in the model's DOF order.
        base_velocity: (..., 6) base velocity in ``representation`` (linear first).
        s_dot: joint velocities (..., n).
        representation: the representation of ``base_velocity``.
    """

    world_H_base: Transform
    s: np.ndarray
    base_velocity: np.ndarray
    s_dot: np.ndarray
    representation: Representation = Representation.MIXED

    @_wrap_state_error
    def __init__(
        self,
        world_H_base: object,
        s: object,
        base_velocity: object,
        s_dot: object,
        representation: object = Representation.MIXED,
    ) -> None:
        H = ensure_transform(world_H_base, "world_H_base")
        s_arr = np.asarray(s)
        if s_arr.ndim == 0:
            raise StateError(f"joint positions s: expected shape (..., n), got a scalar {s_arr!r}")
        s = as_float_array(s_arr, "joint positions s", (s_arr.shape[-1],))
        s_dot = as_float_array(s_dot, "joint velocities s_dot", (s.shape[-1],))
        v = as_float_array(base_velocity, "base_velocity", (6,))
        for arr in (s, s_dot, v):
            arr.flags.writeable = False
        object.__setattr__(self, "world_H_base", H)
        object.__setattr__(self, "s", s)
        object.__setattr__(self, "base_velocity", v)
        object.__setattr__(self, "s_dot", s_dot)
        object.__setattr__(self, "representation", Representation.parse(representation))

    @property
    def n_dofs(self) -> int:
        return self.s.shape[-1]

    @property
    def nu(self) -> np.ndarray:
        """Generalized velocity ``[base_velocity; s_dot]`` (..., 6 + n)."""
        batch = np.broadcast_shapes(self.base_velocity.shape[:-1], self.s_dot.shape[:-1])
        return np.concatenate(
            [
                np.broadcast_to(self.base_velocity, (*batch, 6)),
                np.broadcast_to(self.s_dot, (*batch, self.n_dofs)),
            ],
            axis=-1,
        )

    def base_velocity_in(self, representation: object) -> np.ndarray:
        """The base velocity converted to another representation, (..., 6)."""
        target = Representation.parse(representation)
        if target is self.representation:
            return self.base_velocity
        X = base_velocity_matrix(self.world_H_base, self.representation, target)
        return np.einsum("...ij,...j->...i", X, self.base_velocity)

    def to(self, representation: object) -> State:
        """The same physical state with the base velocity in another representation."""
        target = Representation.parse(representation)
        return State(self.world_H_base, self.s, self.base_velocity_in(target), self.s_dot, target)

    def check_model(self, model: Model) -> None:
        """Raise StateError unless the sizes fit ``model``."""
        if self.n_dofs != model.n_dofs:
            raise StateError(
                f"state has {self.n_dofs} joint positions but model {model.name!r} has {model.n_dofs} DOFs"
            )


def _rotation_blocks(R: np.ndarray) -> np.ndarray:
    X = np.zeros((*R.shape[:-2], 6, 6))
    X[..., :3, :3] = R
    X[..., 3:, 3:] = R
    return X


def base_to_body_matrix(world_H_base: Transform, representation: Representation) -> np.ndarray:
    """``B_X_W`` (..., 6, 6): maps the base velocity in ``representation`` (frame W) to BODY."""
    rep = Representation.parse(representation)
    R = world_H_base.rotation
    if rep is Representation.BODY:
        return np.broadcast_to(np.eye(6), (*R.shape[:-2], 6, 6)).copy()
    if rep is Representation.MIXED:
        return _rotation_blocks(np.swapaxes(R, -1, -2))
    return world_H_base.inverse().motion_matrix()


def body_to_base_matrix(world_H_base: Transform, representation: Representation) -> np.ndarray:
    """``W_X_B`` (..., 6, 6): maps the BODY base velocity to ``representation`` (frame W)."""
    rep = Representation.parse(representation)
    R = world_H_base.rotation
    if rep is Representation.BODY:
        return np.broadcast_to(np.eye(6), (*R.shape[:-2], 6, 6)).copy()
    if rep is Representation.MIXED:
        return _rotation_blocks(R)
    return world_H_base.motion_matrix()


def base_velocity_matrix(world_H_base: Transform, source: object, target: object) -> np.ndarray:
    """(..., 6, 6) matrix mapping a base velocity from ``source`` to ``target`` representation."""
    src, tgt = Representation.parse(source), Representation.parse(target)
    return body_to_base_matrix(world_H_base, tgt) @ base_to_body_matrix(world_H_base, src)


def _base_maps(state: State, rep: Representation) -> tuple[np.ndarray, ...]:
    """``(W_X_B, d/dt W_X_B, B_X_W, d/dt B_X_W)`` for the representation frame W of ``rep``.

    With ``v = B_v_A,B`` the body velocity: d/dt A_X_B = A_X_B crm(v) and
    d/dt B_X_A = -crm(v) B_X_A; for W = B[A] only the angular part of v enters (the errata of
    DESIGN.md: d/dt B_X_B[A] = B_X_B[A] crm([0, -omega_A])).
    """
    from bridge.spatial.vectors import crm

    H = state.world_H_base
    v = state.base_velocity_in(Representation.BODY)
    batch = np.broadcast_shapes(H.batch_shape, v.shape[:-1])
    if rep is Representation.BODY:
        eye = np.broadcast_to(np.eye(6), (*batch, 6, 6))
        zero = np.zeros((*batch, 6, 6))
        return eye, zero, eye, zero
    if rep is Representation.MIXED:
        v = np.concatenate([np.zeros_like(v[..., :3]), v[..., 3:]], axis=-1)
        from_body = _rotation_blocks(H.rotation)
        to_body = _rotation_blocks(np.swapaxes(H.rotation, -1, -2))
    else:
        from_body = H.motion_matrix()
        to_body = H.inverse().motion_matrix()
    C = crm(v)
    return from_body, from_body @ C, to_body, -C @ to_body


class VelocityTransform:
    """Block-structured change of variables ``nu_target = T nu_source``.

    ``T = blkdiag(X, P)`` with ``X`` (..., 6, 6) acting on the base velocity (absent for a fixed
    base) and ``P`` a permutation of the joint velocities given as an index array ``perm``
    (``(P s_dot)[i] = s_dot[perm[i]]``; None means identity). ``X_dot`` is the time derivative of X.
    """

    def __init__(self, X: np.ndarray | None, X_dot: np.ndarray | None, perm: np.ndarray | None, n_dofs: int):
        self.X = X
        self.X_dot = X_dot
        self.perm = perm
        self.n_dofs = n_dofs

    @property
    def floating(self) -> bool:
        return self.X is not None

    @property
    def inverse_perm(self) -> np.ndarray | None:
        return None if self.perm is None else np.argsort(self.perm)

    def _perm_matrix(self) -> np.ndarray:
        P = np.eye(self.n_dofs)
        return P if self.perm is None else P[self.perm]

    def matrix(self) -> np.ndarray:
        """Dense T, (..., nv, nv)."""
        P = self._perm_matrix()
        if self.X is None:
            return P
        batch = self.X.shape[:-2]
        n = self.n_dofs
        T = np.zeros((*batch, 6 + n, 6 + n))
        T[..., :6, :6] = self.X
        T[..., 6:, 6:] = P
        return T

    def derivative(self) -> np.ndarray:
        """Dense T_dot, (..., nv, nv)."""
        n = self.n_dofs
        if self.X is None:
            return np.zeros((n, n))
        batch = self.X_dot.shape[:-2]
        Td = np.zeros((*batch, 6 + n, 6 + n))
        Td[..., :6, :6] = self.X_dot
        return Td

    # ---- block-structured products (no dense (6+n)x(6+n) algebra) --------------------------
    @staticmethod
    def _joints(y: np.ndarray, perm: np.ndarray | None) -> np.ndarray:
        return y if perm is None else y[..., perm]

    def apply(self, nu: np.ndarray) -> np.ndarray:
        """``T @ nu`` for (..., nv) vectors."""
        if self.X is None:
            return self._joints(nu, self.perm)
        base = np.einsum("...ij,...j->...i", self.X, nu[..., :6])
        return _cat(base, self._joints(nu[..., 6:], self.perm))

    def apply_derivative(self, nu: np.ndarray) -> np.ndarray:
        """``T_dot @ nu`` for (..., nv) vectors."""
        if self.X is None:
            return np.zeros_like(nu)
        base = np.einsum("...ij,...j->...i", self.X_dot, nu[..., :6])
        return _cat(base, np.zeros((*base.shape[:-1], self.n_dofs)))

    def solve(self, y: np.ndarray) -> np.ndarray:
        """``T^{-1} @ y`` for (..., nv) vectors."""
        if self.X is None:
            return self._joints(y, self.inverse_perm)
        X, yb = np.broadcast_arrays(self.X, y[..., :6, None])
        base = np.linalg.solve(X, yb)[..., 0]
        return _cat(base, self._joints(y[..., 6:], self.inverse_perm))

    def transpose_apply(self, tau: np.ndarray) -> np.ndarray:
        """``T^T @ tau`` for (..., nv) generalized forces (target -> source)."""
        if self.X is None:
            return self._joints(tau, self.inverse_perm)
        base = np.einsum("...ji,...j->...i", self.X, tau[..., :6])
        return _cat(base, self._joints(tau[..., 6:], self.inverse_perm))

    def transpose_solve(self, tau: np.ndarray) -> np.ndarray:
        """``T^{-T} @ tau`` for (..., nv) generalized forces (source -> target)."""
        if self.X is None:
            return self._joints(tau, self.perm)
        Xt, tb = np.broadcast_arrays(np.swapaxes(self.X, -1, -2), tau[..., :6, None])
        base = np.linalg.solve(Xt, tb)[..., 0]
        return _cat(base, self._joints(tau[..., 6:], self.perm))

    def right_apply(self, J: np.ndarray) -> np.ndarray:
        """``J @ T`` for (..., m, nv) matrices (e.g. Jacobians: target -> source)."""
        if self.X is None:
            return self._joints(J, self.inverse_perm)
        base = J[..., :, :6] @ self.X
        return _cat(base, self._joints(J[..., :, 6:], self.inverse_perm))

    def congruence(self, M: np.ndarray) -> np.ndarray:
        """``T^T @ M @ T`` for (..., nv, nv) matrices (e.g. mass matrices: target -> source)."""
        n = self.n_dofs
        ip = self.inverse_perm
        if self.X is None:
            return M if ip is None else M[..., ip[:, None], ip[None, :]]
        if ip is not None:
            idx = np.concatenate([np.arange(6), 6 + ip])
            M = M[..., idx[:, None], idx[None, :]]
        X = self.X
        Xt = np.swapaxes(X, -1, -2)
        batch = np.broadcast_shapes(M.shape[:-2], X.shape[:-2])
        out = np.empty((*batch, 6 + n, 6 + n))
        out[..., :6, :6] = Xt @ M[..., :6, :6] @ X
        out[..., :6, 6:] = Xt @ M[..., :6, 6:]
        out[..., 6:, :6] = M[..., 6:, :6] @ X
        out[..., 6:, 6:] = M[..., 6:, 6:]
        return out


def _cat(base: np.ndarray, joints: np.ndarray) -> np.ndarray:
    """Concatenate base and joint blocks along the last axis, broadcasting the leading axes."""
    lead = np.broadcast_shapes(base.shape[:-1], joints.shape[:-1])
    return np.concatenate(
        [np.broadcast_to(base, (*lead, base.shape[-1])), np.broadcast_to(joints, (*lead, joints.shape[-1]))],
        axis=-1,
    )


def _pinocchio_perm(model: Model, convention: Convention) -> np.ndarray | None:
    if convention is not Convention.PINOCCHIO:
        return None
    from bridge.backends.pinocchio import pinocchio_dof_permutation

    return pinocchio_dof_permutation(model)


def structured_velocity_transform(
    model: Model, state: State, source: object, target: object
) -> VelocityTransform:
    """Block form of :func:`velocity_transform`."""
    state.check_model(model)
    src, tgt = Convention.parse(source), Convention.parse(target)
    ps, pt = _pinocchio_perm(model, src), _pinocchio_perm(model, tgt)
    # joint part: nu_t[i] = nu_s[perm[i]]; with nu_s = nu_c[ps] and nu_t = nu_c[pt] (canonical c)
    n = model.n_dofs
    perm = None
    if ps is not None or pt is not None:
        inv_s = np.argsort(ps) if ps is not None else np.arange(n)
        perm = inv_s[pt] if pt is not None else inv_s
        if np.array_equal(perm, np.arange(n)):
            perm = None
    if not model.floating:
        return VelocityTransform(None, None, perm, n)
    from_body, from_body_dot, _, _ = _base_maps(state, tgt.representation)
    _, _, to_body, to_body_dot = _base_maps(state, src.representation)
    X = from_body @ to_body
    X_dot = from_body_dot @ to_body + from_body @ to_body_dot
    return VelocityTransform(X, X_dot, perm, n)


def velocity_transform(
    model: Model, state: State, source: object, target: object
) -> tuple[np.ndarray, np.ndarray]:
    """``(T, T_dot)`` with ``nu_target = T @ nu_source`` at ``state``, both (..., nv, nv).

    ``source``/``target``: "body", "inertial", "mixed" (base velocity representation, joints in the
    model's DOF order) or "pinocchio" (LOCAL base velocity, Pinocchio's depth-first joint order).
    ``T_dot`` is the exact time derivative of T along the motion described by ``state``.
    """
    vt = structured_velocity_transform(model, state, source, target)
    return vt.matrix(), vt.derivative()
