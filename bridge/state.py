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

import math
import weakref
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING

import numpy as np

from bridge._array import as_float_array
from bridge.errors import BridgeError, InvalidValueError, StateError
from bridge.spatial import Transform
from bridge.spatial.transform import ROTATION_TOLERANCE, ensure_transform

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
        s = _owned(as_float_array(s_arr, "joint positions s", (s_arr.shape[-1],)), s)
        s_dot = _owned(as_float_array(s_dot, "joint velocities s_dot", (s.shape[-1],)), s_dot)
        v = _owned(as_float_array(base_velocity, "base_velocity", (6,)), base_velocity)
        for arr in (s, s_dot, v):
            arr.flags.writeable = False
        object.__setattr__(self, "world_H_base", H)
        object.__setattr__(self, "s", s)
        object.__setattr__(self, "base_velocity", v)
        object.__setattr__(self, "s_dot", s_dot)
        object.__setattr__(self, "representation", Representation.parse(representation))

    @classmethod
    def _trusted(
        cls,
        world_H_base: Transform,
        s: np.ndarray,
        base_velocity: np.ndarray,
        s_dot: np.ndarray,
        representation: Representation,
    ) -> State:
        """A State from arrays that are already validated and owned (no checks, no copies; the
        arrays are made read-only)."""
        for arr in (s, base_velocity, s_dot):
            arr.setflags(write=False)
        obj = cls.__new__(cls)
        object.__setattr__(obj, "world_H_base", world_H_base)
        object.__setattr__(obj, "s", s)
        object.__setattr__(obj, "base_velocity", base_velocity)
        object.__setattr__(obj, "s_dot", s_dot)
        object.__setattr__(obj, "representation", representation)
        return obj

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


_FINITE_WEIGHTS: dict[int, np.ndarray] = {}


def finite_weights(n: int) -> np.ndarray:
    """(n,) weights ``w`` with ``isfinite(x @ w)`` iff every entry of a float vector x is finite.

    ``w = 2**-600`` makes each product at most ~1e128, so the sum never overflows (no warning, no
    false alarm) while an inf or NaN still propagates; one BLAS dot is ~3x cheaper than
    ``np.isfinite(x).all()`` for the short vectors of one state.
    """
    w = _FINITE_WEIGHTS.get(n)
    if w is None:
        w = _FINITE_WEIGHTS[n] = np.full(n, 2.0**-600)
        w.setflags(write=False)
    return w


def all_finite(x: np.ndarray) -> bool:
    """Whether every entry of the float vector ``x`` (one axis) is finite (see :func:`finite_weights`)."""
    return math.isfinite(x.dot(finite_weights(x.shape[0])))


def _owned(arr: np.ndarray, original: object) -> np.ndarray:
    """``arr``, copied if it is the caller's own array (a State must not freeze or alias it)."""
    return arr.copy() if arr is original or arr.base is not None else arr


def _pose_is_valid(H: np.ndarray) -> bool:
    """:func:`pose_rows_valid` of one (4, 4) float array."""
    return pose_rows_valid(H.tolist())


def pose_rows_valid(rows: list) -> bool:
    """Fast check of one pose given as its 4 rows of 4 Python floats (``H.tolist()``): finite,
    last row [0, 0, 0, 1], proper rotation (the tolerances of :class:`Transform`).

    Python floats, no numpy calls: for a single pose this is several times cheaper than the
    vectorised checks of :class:`Transform` (which give the error messages when this says False).
    """
    (a, b, c, x), (d, e, f, y), (g, h, i, z), last = rows
    if last != [0.0, 0.0, 0.0, 1.0]:
        return False
    tol = ROTATION_TOLERANCE
    # R^T R - I entry by entry (NaN fails every comparison)
    if not (
        abs(a * a + d * d + g * g - 1.0) <= tol
        and abs(b * b + e * e + h * h - 1.0) <= tol
        and abs(c * c + f * f + i * i - 1.0) <= tol
        and abs(a * b + d * e + g * h) <= tol
        and abs(a * c + d * f + g * i) <= tol
        and abs(b * c + e * f + h * i) <= tol
    ):
        return False
    return a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g) > 0.0 and math.isfinite(x + y + z)


def single_state_arrays(
    world_H_base: object, s: object, base_velocity: object, s_dot: object, n_dofs: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """Validated copies ``(H (4, 4), s (n,), base_velocity (6,), s_dot (n,))`` of one unbatched state
    of a model with ``n_dofs`` DOFs, or None when the input is batched, invalid or unusual: the
    caller then goes through :class:`State`, which accepts the same inputs and raises the errors.

    This is the hot path of ``KinDyn.set_state``: a handful of cheap calls (one copy of the three
    vectors into one buffer, one finiteness test, the pose checked in Python floats). The vectors
    are views of that buffer, owned by the caller from now on; :meth:`State._trusted` makes them
    read-only.
    """
    try:
        if isinstance(world_H_base, Transform):
            H = world_H_base.matrix  # already checked and read-only
            if H.shape != (4, 4):
                return None
        else:
            H = np.array(world_H_base, dtype=np.float64)
            if H.shape != (4, 4) or not _pose_is_valid(H):
                return None
        if type(s) is not np.ndarray:
            s = np.asarray(s, dtype=np.float64)
        if type(s_dot) is not np.ndarray:
            s_dot = np.asarray(s_dot, dtype=np.float64)
        if type(base_velocity) is not np.ndarray:
            base_velocity = np.asarray(base_velocity, dtype=np.float64)
        shape = (n_dofs,)
        if (
            s.shape != shape
            or s_dot.shape != shape
            or base_velocity.shape != (6,)
            or s.dtype.kind not in "fiu"
            or s_dot.dtype.kind not in "fiu"
            or base_velocity.dtype.kind not in "fiu"
        ):
            return None
        buf = np.empty(2 * n_dofs + 6)
        s_, sd_, v_ = buf[:n_dofs], buf[n_dofs : 2 * n_dofs], buf[2 * n_dofs :]
        s_[...] = s
        sd_[...] = s_dot
        v_[...] = base_velocity
    except (TypeError, ValueError):
        return None
    if not all_finite(buf):  # one finiteness test for all three
        return None
    return H, s_, v_, sd_


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

    def __init__(
        self,
        X: np.ndarray | None,
        X_dot: np.ndarray | None,
        perm: np.ndarray | None,
        n_dofs: int,
        X_inv: np.ndarray | None = None,
    ):
        self.X = X
        self.X_dot = X_dot
        self.perm = perm
        self.n_dofs = n_dofs
        # the inverse of X when known in closed form (products of motion transforms), so that
        # solve/transpose_solve need no linear solve
        self.X_inv = X_inv
        self._inverse_perm: np.ndarray | None = None

    @property
    def floating(self) -> bool:
        return self.X is not None

    @property
    def inverse_perm(self) -> np.ndarray | None:
        if self.perm is None:
            return None
        if self._inverse_perm is None:
            self._inverse_perm = np.argsort(self.perm)
        return self._inverse_perm

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
        if self.X_inv is not None:
            base = np.einsum("...ij,...j->...i", self.X_inv, y[..., :6])
        else:
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
        if self.X_inv is not None:
            base = np.einsum("...ji,...j->...i", self.X_inv, tau[..., :6])
        else:
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


# per-model joint permutations between conventions, computed once (models are immutable)
_PERMS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _joint_perm(model: Model, src: Convention, tgt: Convention) -> np.ndarray | None:
    """``perm`` with ``nu_t[i] = nu_s[perm[i]]`` on the joints; None for the identity."""
    if src is not Convention.PINOCCHIO and tgt is not Convention.PINOCCHIO:
        return None
    cache = _PERMS.get(model)
    if cache is None:
        cache = _PERMS[model] = {}
    key = (src is Convention.PINOCCHIO, tgt is Convention.PINOCCHIO)
    if key not in cache:
        from bridge.backends.pinocchio import pinocchio_dof_permutation

        n = model.n_dofs
        p = pinocchio_dof_permutation(model)
        ps, pt = (p if key[0] else None), (p if key[1] else None)
        # nu_s = nu_c[ps] and nu_t = nu_c[pt] (canonical c)
        inv_s = np.argsort(ps) if ps is not None else np.arange(n)
        perm = inv_s[pt] if pt is not None else inv_s
        if np.array_equal(perm, np.arange(n)):
            perm = None
        else:
            perm.flags.writeable = False
        cache[key] = perm
    return cache[key]


def structured_velocity_transform(
    model: Model, state: State, source: object, target: object
) -> VelocityTransform:
    """Block form of :func:`velocity_transform`."""
    state.check_model(model)
    src, tgt = Convention.parse(source), Convention.parse(target)
    perm = _joint_perm(model, src, tgt)
    n = model.n_dofs
    if not model.floating:
        return VelocityTransform(None, None, perm, n)
    from_body_t, from_body_dot, to_body_t, _ = _base_maps(state, tgt.representation)
    from_body_s, _, to_body, to_body_dot = _base_maps(state, src.representation)
    X = from_body_t @ to_body
    X_dot = from_body_dot @ to_body + from_body_t @ to_body_dot
    return VelocityTransform(X, X_dot, perm, n, X_inv=from_body_s @ to_body_t)


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
