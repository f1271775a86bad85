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
representation: ``nu_F = P T nu`` with T the change of variables to INERTIAL and P the permutation
(halves swapped, joints in Featherstone order), one
:class:`~bridge.conventions.change_of_variables.ChangeOfVariables`
to :data:`FEATHERSTONE` (the swap is part of its base block), so
``nu_dot_F = P (T nu_dot + T_dot nu)``, ``tau = T^T P^T tau_F``, ``M = T^T P^T H_F P T`` and
``J = J_F P T``.

A fixed base has no xfb (None): the model's fixed world is the base link, and q, qd are the joints.

:func:`to_featherstone_state` and :func:`from_featherstone_state` also take JAX arrays (under
``jax.jit``, ``jax.vmap``, ``jax.grad``) and CasADi SX/MX/DM (unbatched; vectors as columns):
they are :func:`~bridge.conventions.native_state.to_native_state` /
:func:`~bridge.conventions.native_state.from_native_state` on :data:`FEATHERSTONE` (``xfb`` is the
base part of its ``(q, v)``). Shapes are checked for every array type (a :class:`StateError`
naming the argument); the unit quaternion only on values (numpy, concrete JAX arrays), not under
tracing nor for symbols. The model stays numpy.
"""

from __future__ import annotations

import numpy as np

from bridge._array import as_float_array
from bridge.conventions.change_of_variables import NEUTRAL, ChangeOfVariables, Convention, change_of_variables
from bridge.conventions.declaration import Axes, BaseVelocity, Configuration, Point, QuaternionOrder
from bridge.conventions.native_state import (
    base_velocity_from_native,
    from_native_state,
    native_base_velocity,
    to_native_state,
)
from bridge.conventions.state import Representation, State
from bridge.errors import BridgeError, StateError
from bridge.model.mimic import require_uncoupled
from bridge.model.model import Model
from bridge.spatial import Transform
from bridge.spatial.conventions import Ordering
from bridge.spatial.xp import check_real, is_foreign, namespace

from .model import FeatherstoneModel, base_placement, to_featherstone

__all__ = [
    "FEATHERSTONE",
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
        require_uncoupled(model, "spatial_v2's joint coordinates")
        return to_featherstone(model)
    raise StateError(f"expected a bridge.Model or a FeatherstoneModel, got {type(model).__name__}")


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
    if not isinstance(state, State):
        raise StateError(f"to_featherstone_state expects a bridge State, got {type(state).__name__}")
    state.check_model(fm)
    if state.ops.name != "numpy":
        return _to_foreign(fm, state)
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
    v = native_base_velocity(state, FEATHERSTONE)
    parts = [H.as_quaternion_wxyz(), H.translation, v]
    batch = np.broadcast_shapes(*(p.shape[:-1] for p in parts))
    xfb = np.concatenate([np.broadcast_to(p, (*batch, p.shape[-1])) for p in parts], axis=-1)
    return xfb, q, qd


def from_featherstone_state(
    model: Model | FeatherstoneModel,
    xfb: object,
    q: object,
    qd: object,
    representation: object = "mixed",
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
    if any(is_foreign(x) for x in (xfb, q, qd, getattr(world_H_base, "matrix", world_H_base))):
        return _from_foreign(fm, xfb, q, qd, representation, world_H_base)
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
    return State(H, s, base_velocity_from_native(H, x[..., 7:13], FEATHERSTONE, rep), s_dot, rep)


def _to_foreign(fm: FeatherstoneModel, state: State) -> tuple:
    """:func:`to_featherstone_state` of a JAX or CasADi state (functional)."""
    o = state.ops
    if fm.floating:
        body_H_base = base_placement(fm).matrix
        if not np.array_equal(body_H_base, np.eye(4)):  # the pose of body 6, the same INERTIAL velocity
            H6 = o.matmul(state.world_H_base.matrix, o.constant(np.linalg.inv(body_H_base), state.s))
            state = State(H6, state.s, state.base_velocity_in("inertial"), state.s_dot, "inertial")
    q, v = to_native_state(fm, state, FEATHERSTONE)
    nq, nv = o.vsize(q), o.vsize(v)
    if not fm.floating:
        return None, q, v
    xfb = o.vcat([o.vpart(q, 0, 7), o.vpart(v, 0, 6)])
    return xfb, o.vpart(q, 7, nq), o.vpart(v, 6, nv)


def _checked(o, x: object, name: str, n: int) -> object:
    """``x`` (..., n) in the namespace ``o`` (a column for CasADi), or a StateError naming it."""
    try:
        check_real(x, f"Featherstone state: {name}")
    except BridgeError as exc:
        raise StateError(str(exc)) from None
    arr = o.asarray(x)
    shape = tuple(arr.shape)
    if (shape[-1:] != (n,)) if o.batched else (shape != (n, 1)):
        raise StateError(f"Featherstone state: {name}: expected trailing shape ({n},), got {shape}")
    return arr


def _from_foreign(
    fm: FeatherstoneModel, xfb: object, q: object, qd: object, representation: object, world_H_base: object
) -> State:
    """:func:`from_featherstone_state` of JAX arrays or CasADi matrices (functional)."""
    o = namespace(xfb, q, qd)
    n = fm.n_real
    q, qd = _checked(o, q, "q", n), _checked(o, qd, "qd", n)
    rep = Representation.parse(representation)
    if not fm.floating:
        if xfb is not None:
            raise StateError(f"model {fm.name!r} has a fixed base: xfb must be None")
        st = from_native_state(fm, q, qd, FEATHERSTONE, rep)
        if world_H_base is None:
            return st
        return State(world_H_base, st.s, st.base_velocity, st.s_dot, rep)
    if xfb is None:
        raise StateError(f"model {fm.name!r} has a floating base: xfb (13,) is required")
    x = _checked(o, xfb, "xfb", 13)
    qn, vn = o.vcat([o.vpart(x, 0, 7), q]), o.vcat([o.vpart(x, 7, 13), qd])
    body_H_base = base_placement(fm).matrix
    if np.array_equal(body_H_base, np.eye(4)):
        return from_native_state(fm, qn, vn, FEATHERSTONE, rep, names=("xfb", "xfb"))
    st = from_native_state(fm, qn, vn, FEATHERSTONE, "inertial", names=("xfb", "xfb"))
    H = o.matmul(st.world_H_base.matrix, o.constant(body_H_base, x))
    return State(H, st.s, st.base_velocity, st.s_dot, "inertial").to(rep)


def _joint_order(model: Model | FeatherstoneModel) -> np.ndarray:
    return _fmodel(model).dof_perm


#: Featherstone's generalized velocity: the base spatial velocity in world coordinates, angular
#: first (bridge's INERTIAL with its halves swapped), joints in body order
FEATHERSTONE = Convention(
    "featherstone",
    BaseVelocity(Point.WORLD_ORIGIN, Axes.WORLD, Axes.WORLD, Ordering.ANGULAR_FIRST),
    joint_order=_joint_order,
    configuration=Configuration(QuaternionOrder.WXYZ, quaternion_first=True),
)


def featherstone_velocity_transform(model: Model | FeatherstoneModel, state: State) -> ChangeOfVariables:
    """The :class:`~bridge.conventions.change_of_variables.ChangeOfVariables` ``nu_F = P T nu`` from the
    state's representation to :data:`FEATHERSTONE` at ``state`` (batched)."""
    return change_of_variables(_fmodel(model), state, NEUTRAL[state.representation], FEATHERSTONE)


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
    return _split(fm, featherstone_velocity_transform(fm, state).acceleration(nd))


def from_featherstone_acceleration(
    model: Model | FeatherstoneModel, state: State, a_fb: object, qdd: object
) -> np.ndarray:
    """``(a_fb, qdd)`` -> the neutral generalized acceleration in the state's representation."""
    fm = _fmodel(model)
    return featherstone_velocity_transform(fm, state).acceleration_back(_join(fm, a_fb, qdd, "qdd"))


def to_featherstone_force(
    model: Model | FeatherstoneModel, state: State, tau: object
) -> tuple[np.ndarray | None, np.ndarray]:
    """Neutral generalized force (state's representation) -> ``(f_fb or None, tau_q)``: ``f_fb`` the
    wrench on the base in world coordinates (angular first), ``tau_q`` the joints in body order."""
    fm = _fmodel(model)
    t = as_float_array(tau, "tau", (fm.n_real + (6 if fm.floating else 0),))
    return _split(fm, featherstone_velocity_transform(fm, state).force(t))


def from_featherstone_force(
    model: Model | FeatherstoneModel, state: State, f_fb: object, tau_q: object
) -> np.ndarray:
    """``(f_fb, tau_q)`` -> the neutral generalized force in the state's representation."""
    fm = _fmodel(model)
    return featherstone_velocity_transform(fm, state).force_back(_join(fm, f_fb, tau_q, "tau"))
