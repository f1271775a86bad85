"""Robot states and velocity representations.

A neutral state is ``(world_H_base, s, base_velocity, s_dot)`` with the base velocity in one of
three representations of the base frame B relative to the world A:

* BODY (iDynTree ``BODY_FIXED_REPRESENTATION``, Pinocchio ``LOCAL``): ``B_v_A,B``;
* INERTIAL (``INERTIAL_FIXED_REPRESENTATION``, ``WORLD``): ``A_v_A,B``;
* MIXED (``MIXED_REPRESENTATION``, ``LOCAL_WORLD_ALIGNED``): ``B[A]_v_A,B`` = (d/dt A_o_B, omega in A).

The generalized velocity is ``nu = [base velocity; s_dot]`` (DOF order = ``model.dof_names``).
A model with planar, ball or free joints (:mod:`bridge.model.joints`) has ``nq`` positions and
``nv`` velocities per joint: its states carry the model's :class:`~bridge.model.joints.Coordinates`
(``layout=``), and the representation applies to each such joint's velocity as it does to the
base's, relative to the joint's frame (docs/theory.md, "Joints of several coordinates").
The base-velocity matrices here define the three representations; the change of variables between
whole generalized velocities (and foreign conventions) is :mod:`bridge.conventions.change_of_variables`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING

import numpy as np

from bridge._array import as_float_array, broadcast_batch
from bridge.conventions.declaration import BODY_VELOCITY, INERTIAL_VELOCITY, MIXED_VELOCITY, BaseVelocity
from bridge.errors import BridgeError, InvalidValueError, StateError
from bridge.spatial import DEFAULT_GRAVITY, Transform
from bridge.spatial.transform import ORTHONORMAL_TOLERANCE, ensure_transform
from bridge.spatial.xp import NUMPY, Ops, check_real, is_foreign, namespace

if TYPE_CHECKING:  # pragma: no cover
    from bridge.model.joints import Coordinates
    from bridge.model.model import Model

__all__ = [
    "DEFAULT_GRAVITY",
    "Representation",
    "State",
    "base_velocity_matrix",
    "single_arrays",
    "single_state_arrays",
    "velocity_declaration",
]


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
        s: joint positions (..., n) in the model's DOF order; (..., nq) with joints of several
            coordinates (a ball joint's unit quaternion (w, x, y, z), a free joint's position and
            quaternion, a planar joint's (x, y, theta)).
        base_velocity: (..., 6) base velocity in ``representation`` (linear first).
        s_dot: joint velocities (..., n); (..., nv) with joints of several coordinates, each in
            ``representation`` relative to its joint frame.
        representation: the representation of ``base_velocity`` (and of each free, ball and planar
            joint's velocity).
        layout: the model's :class:`~bridge.model.joints.Coordinates` when it has joints of several
            coordinates (None: one position and one velocity per joint).
    """

    world_H_base: Transform
    s: np.ndarray
    base_velocity: np.ndarray
    s_dot: np.ndarray
    representation: Representation = Representation.MIXED
    layout: Coordinates | None = None

    @_wrap_state_error
    def __init__(
        self,
        world_H_base: object,
        s: object,
        base_velocity: object,
        s_dot: object,
        representation: object = Representation.MIXED,
        *,
        check: bool = True,
        layout: object = None,
    ) -> None:
        """Validate and copy the arrays (a State never aliases the caller's arrays).

        ``layout``: the model (or its :attr:`~bridge.model.model.Model.coordinates`) for a model with
        planar, ball or free joints: the sizes of s and s_dot follow it and each quaternion must be
        of unit norm (to 1e-6; normalised). ``check=False`` is for arrays that are already validated
        and owned: ``world_H_base`` a Transform, the vectors float arrays of the right shapes,
        ``representation`` a Representation; no checks and no copies (the vectors are made
        read-only).
        """
        layout = _layout(layout)
        object.__setattr__(self, "layout", layout)
        if any(map(is_foreign, (getattr(world_H_base, "matrix", world_H_base), s, base_velocity, s_dot))):
            _init_foreign(self, world_H_base, s, base_velocity, s_dot, representation)
            return
        if not check:
            for arr in (s, base_velocity, s_dot):
                arr.setflags(write=False)
            object.__setattr__(self, "world_H_base", world_H_base)
            object.__setattr__(self, "s", s)
            object.__setattr__(self, "base_velocity", base_velocity)
            object.__setattr__(self, "s_dot", s_dot)
            object.__setattr__(self, "representation", representation)
            return
        H = ensure_transform(world_H_base, "world_H_base")
        s_arr = as_float_array(s, "joint positions s", ())
        if s_arr.ndim == 0:
            raise StateError(f"joint positions s: expected shape (..., n), got a scalar {s_arr!r}")
        nq = s_arr.shape[-1] if layout is None else layout.nq
        s = _owned(as_float_array(s_arr, "joint positions s", (nq,)), s)
        nv = s.shape[-1] if layout is None else layout.nv
        if layout is None and np.ndim(s_dot) >= 1 and np.shape(s_dot)[-1] != nv:
            raise StateError(
                f"joint velocities s_dot: expected shape (..., {nv}) like s, got {np.shape(s_dot)} (a model "
                "with ball or free joints has more positions than velocities: State(..., layout=model))"
            )
        s_dot = _owned(as_float_array(s_dot, "joint velocities s_dot", (nv,)), s_dot)
        if layout is not None:
            s = _unit_quaternions(s, layout)
        v = _owned(as_float_array(base_velocity, "base_velocity", (6,)), base_velocity)
        broadcast_batch(
            "state (world_H_base, s, base_velocity, s_dot)",
            H.batch_shape,
            s.shape[:-1],
            v.shape[:-1],
            s_dot.shape[:-1],
        )
        for arr in (s, s_dot, v):
            arr.flags.writeable = False
        object.__setattr__(self, "world_H_base", H)
        object.__setattr__(self, "s", s)
        object.__setattr__(self, "base_velocity", v)
        object.__setattr__(self, "s_dot", s_dot)
        object.__setattr__(self, "representation", Representation.parse(representation))

    @property
    def ops(self) -> Ops:
        """The array namespace of the state's arrays (numpy, JAX or CasADi)."""
        ops = self.__dict__.get("_ops")
        if ops is None:
            ops = namespace(self.world_H_base.matrix, self.base_velocity, self.s, self.s_dot)
            object.__setattr__(self, "_ops", ops)
        return ops

    @property
    def n_dofs(self) -> int:
        """Number of joint velocities (the length of s_dot)."""
        return self.ops.vsize(self.s_dot)

    def with_layout(self, layout: object) -> State:
        """This state with the joint layout of a model (or :class:`~bridge.model.joints.Coordinates`)
        attached: checked as :class:`State` checks it."""
        return State(
            self.world_H_base, self.s, self.base_velocity, self.s_dot, self.representation, layout=layout
        )

    @property
    def nu(self) -> np.ndarray:
        """Generalized velocity ``[base_velocity; s_dot]`` (..., 6 + n)."""
        o = self.ops
        if o is not NUMPY:
            return o.vcat([self.base_velocity, self.s_dot])
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
        return self.ops.matvec(X, self.base_velocity)

    def to(self, representation: object) -> State:
        """The same physical state with the base velocity (and the velocity of each free, ball and
        planar joint) in another representation."""
        target = Representation.parse(representation)
        s_dot = self.s_dot
        if self.layout is not None and target is not self.representation:
            from bridge.conventions.joint_blocks import convert_joint_velocities

            s_dot = convert_joint_velocities(
                self.layout,
                self.s,
                self.s_dot,
                velocity_declaration(self.representation),
                velocity_declaration(target),
                self.ops,
            )
        return State(
            self.world_H_base, self.s, self.base_velocity_in(target), s_dot, target, layout=self.layout
        )

    def check_model(self, model: Model) -> None:
        """Raise StateError unless the sizes (and the joint layout) fit ``model``."""
        coords = getattr(model, "coordinates", None)  # (a library model standing for one has none)
        wide = coords is not None and not coords.single
        if wide and (self.layout is None or self.layout.kinds != coords.kinds):
            raise StateError(
                f"model {model.name!r} has joints of several coordinates ({coords.describe()}): make "
                "its states with State(..., layout=model) (KinDyn.set_state and bridge's converters do)"
            )
        nq = getattr(model, "n_positions", model.n_dofs)
        if self.ops.vsize(self.s) != nq or self.n_dofs != model.n_dofs:
            if nq == model.n_dofs and self.ops.vsize(self.s) == self.n_dofs:
                raise StateError(
                    f"state has {self.n_dofs} joint positions but model {model.name!r} "
                    f"has {model.n_dofs} DOFs"
                )
            raise StateError(
                f"state has {self.ops.vsize(self.s)} joint positions and {self.n_dofs} joint velocities but "
                f"model {model.name!r} has {nq} and {model.n_dofs}"
            )


def _layout(layout: object) -> Coordinates | None:
    """``layout=`` of :class:`State`: a Model or Coordinates -> its Coordinates (None when every
    joint has one coordinate)."""
    if layout is None:
        return None
    coords = getattr(layout, "coordinates", layout)
    if not hasattr(coords, "kinds") or not hasattr(coords, "wide"):
        raise StateError(f"layout: expected a bridge Model or its coordinates, got {type(layout).__name__}")
    return None if coords.single else coords


def _unit_quaternions(s: np.ndarray, layout: Coordinates) -> np.ndarray:
    """``s`` (a fresh array) with each ball and free joint's quaternion checked (finite, unit norm to
    1e-6) and normalised."""
    for k in layout.wide:
        sl = layout.kinds[k].spec.quaternion_slice
        if sl is None:
            continue
        q_sl = layout.q_slice(k)
        quat = s[..., q_sl.start + sl.start : q_sl.start + sl.stop]
        norm = np.linalg.norm(quat, axis=-1, keepdims=True)
        if np.any(np.abs(norm - 1.0) > 1e-6):
            raise StateError(
                f"joint positions s: the quaternion of {layout.kinds[k].value} joint {layout.names[k]!r} "
                f"(s[{q_sl.start + sl.start}:{q_sl.start + sl.stop}], w x y z) is not of unit norm"
            )
        if not s.flags.writeable:
            s = s.copy()
        s[..., q_sl.start + sl.start : q_sl.start + sl.stop] = quat / norm
    return s


#: the weights of :func:`finite_weights` by length, made on first use (read-only arrays)
FINITE_WEIGHTS: dict[int, np.ndarray] = {}


def finite_weights(n: int) -> np.ndarray:
    """(n,) weights ``w`` with ``isfinite(x @ w)`` iff every entry of a float vector x is finite.

    ``w = 2**-600`` makes each product at most ~1e128, so the sum never overflows (no warning, no
    false alarm) while an inf or NaN still propagates; one BLAS dot is ~3x cheaper than
    ``np.isfinite(x).all()`` for the short vectors of one state.
    """
    w = FINITE_WEIGHTS.get(n)
    if w is None:
        w = FINITE_WEIGHTS[n] = np.full(n, 2.0**-600)
        w.setflags(write=False)
    return w


def all_finite(x: np.ndarray) -> bool:
    """Whether every entry of the float vector ``x`` (one axis) is finite (see :func:`finite_weights`)."""
    return math.isfinite(x.dot(finite_weights(x.shape[0])))


#: inputs of the single-state hot paths are "moderate" below this magnitude: with a model of
#: moderate size (see ``KinDyn``) no float64 product of the dynamics can overflow, so their results
#: need no finiteness check; larger (or non-finite) inputs take the general, checked path
MODERATE = 1e50
MODERATE_SQ = MODERATE * MODERATE
#: the dot product of all_moderate (see there): numpy's public ``vdot`` (no overflow warning)
vdot = np.vdot
_vdot = vdot


def all_moderate(x: np.ndarray) -> bool:
    """Whether the float vector ``x`` (one axis) is finite with ``||x|| < MODERATE`` (one BLAS dot;
    False for any inf or NaN). ``np.vdot`` rather than ``x.dot``: the same product, without numpy's
    overflow warning for huge entries (whose square overflows to inf, which fails the test)."""
    return _vdot(x, x) < MODERATE_SQ


def _init_foreign(
    state: State,
    world_H_base: object,
    s: object,
    base_velocity: object,
    s_dot: object,
    representation: object,
) -> None:
    """A State over JAX arrays or CasADi matrices (:mod:`bridge.spatial.xp`): kept as they are (no
    copy, nothing turned into numpy); shapes are checked, and the pose's values when it has values
    (skipped under tracing and for symbols). A numpy argument among them joins the namespace."""
    o = namespace(getattr(world_H_base, "matrix", world_H_base), s, base_velocity, s_dot)
    for name, x in (
        ("world_H_base", getattr(world_H_base, "matrix", world_H_base)),
        ("joint positions s", s),
        ("base_velocity", base_velocity),
        ("joint velocities s_dot", s_dot),
    ):
        check_real(x, name)  # complex always; NaN when it has values
    H = world_H_base if isinstance(world_H_base, Transform) else Transform(o.asarray(world_H_base))
    s, base_velocity, s_dot = (o.asarray(x) for x in (s, base_velocity, s_dot))
    layout = state.layout
    n = o.vsize(s) if layout is None else layout.nv
    checks = [("base_velocity", base_velocity, 6), ("joint velocities s_dot", s_dot, n)]
    if layout is not None:
        checks.append(("joint positions s", s, layout.nq))
    for name, x, size in checks:
        if o.vsize(x) != size or (not o.batched and x.shape[1] != 1):
            raise StateError(f"{name}: expected shape (..., {size}), got {tuple(x.shape)}")
    if o.batched:
        broadcast_batch(
            "state (world_H_base, s, base_velocity, s_dot)",
            H.batch_shape,
            tuple(s.shape[:-1]),
            tuple(base_velocity.shape[:-1]),
            tuple(s_dot.shape[:-1]),
        )
    for field_, value in (
        ("world_H_base", H),
        ("s", s),
        ("base_velocity", base_velocity),
        ("s_dot", s_dot),
        ("representation", Representation.parse(representation)),
    ):
        object.__setattr__(state, field_, value)


def _owned(arr: np.ndarray, original: object) -> np.ndarray:
    """``arr``, copied if it is the caller's own array (a State must not freeze or alias it)."""
    return arr.copy() if arr is original or arr.base is not None else arr


def _pose_is_valid(H: np.ndarray) -> bool:
    """:func:`pose_rows_valid` of one (4, 4) float array."""
    return pose_rows_valid(H.tolist())


def pose_rows_valid(rows: list) -> bool:
    """Fast check of one pose given as its 4 rows of 4 Python floats (``H.tolist()``): finite with a
    moderate translation (``|p| < MODERATE``), last row [0, 0, 0, 1], proper rotation orthonormal to
    rounding (a rotation further from orthonormal, within the tolerance of :class:`Transform`, says
    False: :class:`Transform` then replaces it by the nearest rotation, the same for every engine).

    Python floats, no numpy calls: for a single pose this is several times cheaper than the
    vectorised checks of :class:`Transform` (which give the error messages when this says False).
    """
    (a, b, c, x), (d, e, f, y), (g, h, i, z), last = rows
    if last != [0.0, 0.0, 0.0, 1.0]:
        return False
    return pose_entries_valid(a, b, c, x, d, e, f, y, g, h, i, z)


def pose_entries_valid(
    a: float, b: float, c: float, x: float, d: float, e: float, f: float, y: float,
    g: float, h: float, i: float, z: float,
) -> bool:  # fmt: skip
    """:func:`pose_rows_valid` of the first three rows ``[R | p]`` of a pose, as scalars (compiled
    as it is by the numba kernels of the engines' single-state paths)."""
    tol = ORTHONORMAL_TOLERANCE
    lo, hi = 1.0 - tol, 1.0 + tol
    # R^T R - I entry by entry, as chained comparisons (no abs() calls; NaN fails every comparison)
    if not (
        lo <= a * a + d * d + g * g <= hi
        and lo <= b * b + e * e + h * h <= hi
        and lo <= c * c + f * f + i * i <= hi
        and -tol <= a * b + d * e + g * h <= tol
        and -tol <= a * c + d * f + g * i <= tol
        and -tol <= b * c + e * f + h * i <= tol
    ):
        return False
    det = a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g)
    return det > 0.0 and x * x + y * y + z * z < MODERATE_SQ


_F64 = np.dtype(np.float64)


def single_arrays(
    world_H_base: object, s: object, base_velocity: object, s_dot: object, shape_n: tuple[int]
) -> tuple[np.ndarray, list, np.ndarray, np.ndarray, np.ndarray] | None:
    """``(H (4, 4), rows = H.tolist(), s, base_velocity, s_dot)`` as arrays of one unbatched state
    of ``shape_n = (n,)`` DOFs with a valid pose (:func:`pose_rows_valid`), or None when they are
    not (batched, of other shapes or kinds, or an invalid pose: the caller's :class:`State` then
    raises). Nothing is copied (``H`` and the vectors may be the caller's arrays) and the vectors
    are not checked for finiteness: the caller copies them into its buffers and tests those (one
    dot product, :func:`all_moderate`)."""
    H = world_H_base
    try:
        if type(H) is not np.ndarray or H.dtype is not _F64:
            H = np.asarray(H.matrix if isinstance(H, Transform) else H, dtype=np.float64)
        if type(s) is not np.ndarray:
            s = np.asarray(s, dtype=np.float64)
        if type(s_dot) is not np.ndarray:
            s_dot = np.asarray(s_dot, dtype=np.float64)
        if type(base_velocity) is not np.ndarray:
            base_velocity = np.asarray(base_velocity, dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        return None
    if (
        H.shape != (4, 4)
        or s.shape != shape_n
        or s_dot.shape != shape_n
        or base_velocity.shape != (6,)
        or s.dtype.kind not in "fiu"
        or s_dot.dtype.kind not in "fiu"
        or base_velocity.dtype.kind not in "fiu"
    ):
        return None
    rows = H.tolist()
    if not pose_rows_valid(rows):
        return None
    return H, rows, s, base_velocity, s_dot


def single_state_arrays(
    world_H_base: object, s: object, base_velocity: object, s_dot: object, n_dofs: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """Validated copies ``(H (4, 4), s (n,), base_velocity (6,), s_dot (n,))`` of one unbatched state
    of a model with ``n_dofs`` DOFs, or None when the input is batched, invalid or unusual: the
    caller then goes through :class:`State`, which accepts the same inputs and raises the errors.

    This is the hot path of ``KinDyn.set_state`` for the engines without their own: the arrays
    checked by :func:`single_arrays`, one copy of the three vectors into one buffer, one finiteness
    test. The vectors are views of that buffer, owned by the caller from now on;
    ``State(..., check=False)`` makes them read-only.
    """
    taken = single_arrays(world_H_base, s, base_velocity, s_dot, (n_dofs,))
    if taken is None:
        return None
    H, _, s, base_velocity, s_dot = taken
    if not isinstance(world_H_base, Transform):  # (a Transform's matrix is read-only already)
        H = _owned(H, world_H_base)
    buf = np.empty(2 * n_dofs + 6)
    s_, sd_, v_ = buf[:n_dofs], buf[n_dofs : 2 * n_dofs], buf[2 * n_dofs :]
    try:
        s_[...] = s
        sd_[...] = s_dot
        v_[...] = base_velocity
    except (TypeError, ValueError, OverflowError):
        return None
    if not all_moderate(buf):  # one test for all three: finite and moderate
        return None
    return H, s_, v_, sd_


def velocity_declaration(representation: object) -> BaseVelocity:
    """The :class:`~bridge.conventions.declaration.BaseVelocity` a neutral representation is:
    BODY ``B_v_A,B``, INERTIAL ``A_v_A,B`` (the spatial velocity), MIXED ``B[A]_v_A,B``."""
    return _DECLARATIONS[Representation.parse(representation)]


_DECLARATIONS = {
    Representation.BODY: BODY_VELOCITY,
    Representation.INERTIAL: INERTIAL_VELOCITY,
    Representation.MIXED: MIXED_VELOCITY,
}


def base_velocity_matrix(world_H_base: Transform, source: object, target: object) -> np.ndarray:
    """(..., 6, 6) matrix mapping a base velocity from ``source`` to ``target`` representation
    (``L_target L_source^-1`` of their declarations)."""
    src, tgt = velocity_declaration(source), velocity_declaration(target)
    o = namespace(getattr(world_H_base, "matrix", world_H_base))
    L_src_inv = src.matrices(world_H_base, o, (False, True))[1]
    if tgt.is_body and not tgt.swap:  # L is the identity
        return L_src_inv
    return o.matmul(tgt.matrices(world_H_base, o, (True, False))[0], L_src_inv)
