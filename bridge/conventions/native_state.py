"""A neutral State to and from a library's own coordinates ``(q, v)``, derived from its declaration.

A :class:`~bridge.conventions.change_of_variables.Convention` with a
:class:`~bridge.conventions.declaration.Configuration` says everything needed:

* ``q`` = the base pose (origin and unit quaternion, in the declared order and place; floating base
  only), then one position per joint in the convention's joint order (a continuous joint as its
  angle, or as ``(cos, sin)`` where declared);
* ``v`` = the base velocity as declared (``L v_B``), then the joint velocities in the same order.

A fixed base has no base coordinates: ``q`` and ``v`` are the joints, and the State read back has
the identity pose. Everything broadcasts over leading batch axes. The libraries' ``to_<lib>_state``
/ ``from_<lib>_state`` are these two functions on their conventions.

This module is neutral: it names no library.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from bridge._array import as_float_array
from bridge._cache import ModelCache
from bridge.conventions.declaration import ContinuousJoint, QuaternionOrder
from bridge.conventions.state import State, velocity_declaration
from bridge.errors import BridgeError, StateError
from bridge.model.model import Model
from bridge.spatial import Transform
from bridge.spatial.quaternions import quaternion_xyzw_to_rotation, rotation_to_quaternion_xyzw
from bridge.spatial.xp import NUMPY, Ops, check_real, has_values, is_foreign, namespace

if TYPE_CHECKING:  # pragma: no cover
    from bridge.conventions.change_of_variables import Convention

__all__ = [
    "JointLayout",
    "base_velocity_from_native",
    "from_native_state",
    "joint_layout",
    "native_base_velocity",
    "to_native_state",
]


@dataclass(frozen=True)
class JointLayout:
    """Where each of the model's DOFs sits in a convention's ``q`` and ``v``.

    ``perm`` (n,): ``v[nb:] = s_dot[perm]``; ``idx_q``/``idx_v`` (n,) each DOF's index in q and v
    (for a model with planar, ball or free joints: n the DOF joints, ``perm`` over them, ``idx_q`` and
    ``idx_v`` each joint's first index, the gathers empty: :mod:`.native_wide` maps such states);
    ``continuous`` (n,) the DOFs stored as ``(cos, sin)`` at ``idx_q``, ``idx_q + 1``; ``nq``, ``nv``
    the sizes; ``floating`` whether q and v start with the base. ``q_gather``: q's joint part is
    ``[s; cos(s_c); sin(s_c)][q_gather]`` (``s_c`` the continuous DOFs); ``s_gather``: s is
    ``[q[idx_q]; atan2(sin, cos) of the continuous DOFs][s_gather]``.
    """

    perm: np.ndarray
    idx_q: np.ndarray
    idx_v: np.ndarray
    continuous: np.ndarray
    nq: int
    nv: int
    floating: bool
    q_gather: np.ndarray
    s_gather: np.ndarray


_LAYOUTS = ModelCache()


def joint_layout(model: Model, convention: Convention) -> JointLayout:
    """The :class:`JointLayout` of ``model`` in ``convention`` (cached per model and convention)."""
    per_model = _LAYOUTS.of(model)
    layout = per_model.get(convention.name)
    if layout is not None:
        return layout
    if not model.single_coordinate:
        layout = per_model[convention.name] = _wide_joint_layout(model, convention)
        return layout
    n = model.n_dofs
    perm = convention.permutation(model)
    perm = np.arange(n, dtype=np.intp) if perm is None else np.asarray(perm, dtype=np.intp)
    config = convention.configuration
    cos_sin = config is not None and config.continuous is ContinuousJoint.COS_SIN
    continuous = np.array(
        [cos_sin and model.joint(d).kind.value == "continuous" for d in model.dof_names], dtype=bool
    )
    q_base, v_base = (7, 6) if model.floating else (0, 0)
    idx_q = np.zeros(n, dtype=np.intp)
    idx_v = np.zeros(n, dtype=np.intp)
    qi = q_base
    for position, k in enumerate(perm.tolist()):
        idx_q[k] = qi
        idx_v[k] = v_base + position
        qi += 2 if continuous[k] else 1
    q_gather, s_gather = _gathers(perm, continuous)
    for a in (perm, idx_q, idx_v, continuous, q_gather, s_gather):
        a.setflags(write=False)
    layout = JointLayout(perm, idx_q, idx_v, continuous, qi, v_base + n, model.floating, q_gather, s_gather)
    per_model[convention.name] = layout
    return layout


def _wide_joint_layout(model: Model, convention: Convention) -> JointLayout:
    """:class:`JointLayout` of a model with joints of several coordinates: one entry per DOF joint."""
    from bridge.conventions.native_wide import wide_layout

    lay = wide_layout(model, convention)
    coords = model.coordinates
    n = len(coords.kinds)
    perm = convention.permutation(model)
    perm = np.arange(n, dtype=np.intp) if perm is None else np.asarray(perm, dtype=np.intp)
    nb = 6 if model.floating else 0
    idx_v = np.zeros(n, dtype=np.intp)
    at = nb
    for k in perm.tolist():
        idx_v[k] = at
        at += coords.kinds[k].nv
    config = convention.configuration
    cos_sin = config is not None and config.continuous is ContinuousJoint.COS_SIN
    continuous = np.array([cos_sin and k.value == "continuous" for k in coords.kinds], dtype=bool)
    empty = np.zeros(0, dtype=np.intp)
    arrays = (perm, np.array(lay.q_start, dtype=np.intp), idx_v, continuous, empty, empty.copy())
    for a in arrays:
        a.setflags(write=False)
    return JointLayout(*arrays[:4], lay.nq, lay.nv, model.floating, *arrays[4:])


def _gathers(perm: np.ndarray, continuous: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The gathers of :class:`JointLayout` (see there)."""
    n = continuous.shape[0]
    c_pos = {k: i for i, k in enumerate(np.flatnonzero(continuous).tolist())}
    nc = len(c_pos)
    q_gather: list[int] = []
    for k in perm.tolist():
        q_gather += [n + c_pos[k], n + nc + c_pos[k]] if continuous[k] else [k]
    s_gather = [n + c_pos[k] if continuous[k] else k for k in range(n)]
    return np.array(q_gather, dtype=np.intp), np.array(s_gather, dtype=np.intp)


def native_base_velocity(state: State, convention: Convention) -> Any:
    """The state's base velocity (..., 6) as ``convention`` writes it (``L v_B``)."""
    H, o = state.world_H_base, state.ops
    L_state_inv = velocity_declaration(state.representation).matrices(H, o)[1]
    L = convention.velocity.matrices(H, o)[0]
    return o.matvec(o.matmul(L, L_state_inv), state.base_velocity)


def base_velocity_from_native(
    world_H_base: Transform, v_native: Any, convention: Convention, representation: object
) -> Any:
    """A base velocity (..., 6) written as ``convention`` writes it, in a neutral representation."""
    o = namespace(world_H_base.matrix, v_native)
    L_inv = convention.velocity.matrices(world_H_base, o)[1]
    L_rep = velocity_declaration(representation).matrices(world_H_base, o)[0]
    return o.matvec(o.matmul(L_rep, L_inv), v_native)


def _require_configuration(convention: Convention):
    config = convention.configuration
    if config is None:
        raise StateError(f"convention {convention.name!r} declares no configuration layout (q)")
    return config


def _check_model(model: object) -> None:
    """StateError unless ``model`` is a bridge Model or a model standing for one (a library model
    with bridge's DOFs, e.g. a FeatherstoneModel)."""
    if not isinstance(model, Model) and not all(
        hasattr(model, a) for a in ("n_dofs", "dof_names", "floating")
    ):
        raise StateError(f"model: expected a bridge Model, got {type(model).__name__}")


def check_model_and_state(model: object, state: object) -> None:
    """Raise :class:`StateError` unless ``model`` is a bridge Model (or a model that stands for one:
    a library model with bridge's DOFs, e.g. a FeatherstoneModel) and ``state`` a State of it."""
    _check_model(model)
    if not isinstance(state, State):
        raise StateError(f"expected a bridge State, got {type(state).__name__}")
    state.check_model(model)


def to_native_state(model: Model, state: State, convention: Convention) -> tuple[Any, Any]:
    """Neutral ``state`` -> ``(q (..., nq), v (..., nv))`` in ``convention`` (see the module
    docstring); numpy, JAX or CasADi as the state's arrays are."""
    check_model_and_state(model, state)
    config = _require_configuration(convention)
    if not model.single_coordinate:
        return _wide(state).to_native_wide(model, state, convention)
    lay = joint_layout(model, convention)
    o = state.ops
    s = state.s
    parts = [s]
    if lay.continuous.any():
        s_c = o.vtake(s, np.flatnonzero(lay.continuous))
        parts += [o.cos(s_c), o.sin(s_c)]
    q_joints = o.vtake(o.vcat(parts) if len(parts) > 1 else s, lay.q_gather)
    v_joints = o.vtake(state.s_dot, lay.perm)
    if not model.floating:
        return _batched(o, q_joints, state), _batched(o, v_joints, state)
    H = state.world_H_base
    R, p = o.pose_parts(H.matrix)
    quat = rotation_to_quaternion_xyzw(R, o)
    if config.quaternion is QuaternionOrder.WXYZ:
        quat = o.vtake(quat, _WXYZ)
    base = [quat, p] if config.quaternion_first else [p, quat]
    q = o.vcat([*base, q_joints])
    v = o.vcat([native_base_velocity(state, convention.bound(model)), v_joints])
    return q, v


def _wide(*arrays: object):
    """:mod:`bridge.conventions.native_wide` (numpy arrays only)."""
    from bridge.conventions import native_wide

    values = [getattr(a, "s", a) for a in arrays]
    if any(is_foreign(a) for a in values):
        raise StateError("a model with joints of several coordinates: states as numpy arrays only")
    return native_wide


def _batched(o: Ops, x: Any, state: State) -> Any:
    """``x`` broadcast to the state's batch (numpy and JAX; a fresh numpy array)."""
    if not o.batched:
        return x
    lead = np.broadcast_shapes(
        state.world_H_base.batch_shape, *(tuple(a.shape[:-1]) for a in (state.s, state.s_dot))
    )
    out = o.broadcast_to(x, (*lead, x.shape[-1]))
    return out.copy() if o is NUMPY else out


def from_native_state(
    model: Model,
    q: object,
    v: object,
    convention: Convention,
    representation: object,
    names: tuple[str, str] = ("q", "v"),
    normalize: bool = False,
) -> State:
    """``(q, v)`` in ``convention`` -> a neutral State in ``representation`` (batched).

    ``names`` name q and v in error messages; ``normalize`` accepts a quaternion of any non-zero
    norm (as MuJoCo does) instead of requiring a unit one.
    """
    _check_model(model)
    config = _require_configuration(convention)
    if not getattr(model, "single_coordinate", True):
        return _wide(q, v).from_native_wide(model, q, v, convention, representation, names, normalize)
    lay = joint_layout(model, convention)
    what = f"{convention.name} state for model {model.name!r}"
    if is_foreign(q) or is_foreign(v):
        return _from_foreign(model, q, v, convention, representation, names, normalize)
    try:
        q = as_float_array(q, names[0], (lay.nq,))
        v = as_float_array(v, names[1], (lay.nv,))
    except BridgeError as exc:
        raise StateError(f"{what}: {exc}") from None
    c = lay.continuous
    s = np.zeros((*q.shape[:-1], model.n_dofs))
    s[..., ~c] = q[..., lay.idx_q[~c]]
    if c.any():
        cs, sn = q[..., lay.idx_q[c]], q[..., lay.idx_q[c] + 1]
        if np.any(np.abs(np.hypot(cs, sn) - 1.0) > 1e-6):
            raise StateError(
                f"{convention.name} state: a continuous joint's (cos, sin) pair is not unit norm"
            )
        s[..., c] = np.arctan2(sn, cs)
    s_dot = v[..., lay.idx_v]
    batch = np.broadcast_shapes(q.shape[:-1], v.shape[:-1])
    if not model.floating:
        return State(Transform.identity(batch), s, np.zeros((*batch, 6)), s_dot, representation)
    H = _base_pose(q, config, normalize, what, names[0], convention.name)
    vb = base_velocity_from_native(H, v[..., :6], convention.bound(model), representation)
    return State(H, s, vb, s_dot, representation)


def _base_pose(q: np.ndarray, config, normalize: bool, what: str, qname: str, name: str) -> Transform:
    """The base pose read from q (``normalize``: any non-zero quaternion norm)."""
    quat = q[..., config.quaternion_slice]
    if normalize:
        norm = np.linalg.norm(quat, axis=-1, keepdims=True)
        if np.any(norm < 1e-12):
            sl = config.quaternion_slice
            raise StateError(f"{what}: zero base quaternion in {qname}[{sl.start}:{sl.stop}]")
        quat = quat / norm
    try:
        if config.quaternion is QuaternionOrder.WXYZ:
            return Transform.from_quaternion_wxyz(quat, q[..., config.position_slice])
        return Transform.from_quaternion_xyzw(quat, q[..., config.position_slice])
    except BridgeError as exc:
        raise StateError(f"{name} state: base {exc}") from None


_WXYZ = np.array([3, 0, 1, 2])  # (x, y, z, w) -> (w, x, y, z)
_XYZW = np.array([1, 2, 3, 0])  # (w, x, y, z) -> (x, y, z, w)


def _from_foreign(
    model: Model,
    q: Any,
    v: Any,
    convention: Convention,
    representation: object,
    names: tuple[str, str],
    normalize: bool,
) -> State:
    """:func:`from_native_state` on JAX arrays or CasADi matrices: the same maps, functional. The
    checks on values (unit quaternion, unit (cos, sin) pairs) run when the inputs have values (the
    numpy path on them); under tracing and for symbols they are skipped."""
    o = namespace(q, v)
    lay = joint_layout(model, convention)
    what = f"{convention.name} state for model {model.name!r}"
    for name, x in zip(names, (q, v), strict=True):
        try:
            check_real(x, name)  # complex always, NaN when it has values
        except BridgeError as exc:
            raise StateError(f"{what}: {exc}") from None
    q, v = o.asarray(q), o.asarray(v)
    for name, x, size in ((names[0], q, lay.nq), (names[1], v, lay.nv)):
        if o.vsize(x) != size or (not o.batched and x.shape[1] != 1):
            raise StateError(f"{what}: {name}: expected shape (..., {size}), got {tuple(x.shape)}")
    if has_values(q) and has_values(v):  # the checks of the numpy path, on the values
        from_native_state(model, np.asarray(q), np.asarray(v), convention, representation, names, normalize)
    first = o.vtake(q, lay.idx_q)
    c = np.flatnonzero(lay.continuous)
    if c.size:
        angles = o.arctan2(o.vtake(q, lay.idx_q[c] + 1), o.vtake(q, lay.idx_q[c]))
        s = o.vtake(o.vcat([first, angles]), lay.s_gather)
    else:
        s = first
    s_dot = o.vtake(v, lay.idx_v)
    if not model.floating:
        H = Transform(o.constant(np.eye(4), q), check=False)
        return State(H, s, o.constant(np.zeros(6), q), s_dot, representation)
    config = convention.configuration
    sl = config.quaternion_slice
    quat = o.vpart(q, sl.start, sl.stop)
    if normalize:
        norm = o.sqrt(o.vdot(quat, quat))
        quat = quat / (norm[..., None] if o.batched else norm)
    if config.quaternion is QuaternionOrder.WXYZ:
        quat = o.vtake(quat, _XYZW)
    pos = config.position_slice
    H = Transform(o.pose(quaternion_xyzw_to_rotation(quat, o), o.vpart(q, pos.start, pos.stop)), check=False)
    vb = base_velocity_from_native(H, o.vpart(v, 0, 6), convention.bound(model), representation)
    return State(H, s, vb, s_dot, representation)
