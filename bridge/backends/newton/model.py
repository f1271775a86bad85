"""bridge Model <-> Newton Model, through Newton's ModelBuilder (no URDF text in between).

``to_newton(model)`` adds one Newton body per bridge link, depth first (its mass, centre of mass and
rotational inertia about the COM, exactly; ``lock_inertia`` so nothing is recomputed from shapes; a
massless link stays massless) and one Newton joint per bridge joint, depth first from the base, in
one articulation: a free joint from the world to the base (floating base) or a fixed joint (fixed
base, at the identity: bridge's fixed base sits at ``world_H_base``, a state quantity that Newton's
joint coordinates do not hold; the engine moves that joint's frame to it). A bridge joint
``parent_H_child(s) = rest @ H(axis, axis_origin, s)`` becomes Newton's ``X_p J(s) X_c^-1`` with
the joint frame at ``axis_origin`` in child axes: ``X_c = (axis_origin, 1)``, ``X_p = rest @ X_c``,
the axis in that frame. Joint damping, stiffness,
targets and limit stiffness are zero (rigid-body dynamics only); limits are kept as bounds (a
bound beyond float32's range as the largest float32); armature is copied. Bodies and joints carry
bridge's names as labels. Newton stores float32: a mass, inertia, length or armature beyond its
range raises an UnsupportedError naming the link or joint (it would be inf in Newton's model).

``from_newton(newton_model)`` reads one articulation back (revolute, prismatic, fixed, free
joints). Newton is float32: values read back are float32 numbers.

Warp is initialized once, quietly (:func:`require_newton`): its log level raised to warnings (no
greeting, device list or module-load lines; a level set higher is kept), and the line its native
library prints when there is no CUDA driver dropped (bridge runs Warp on the CPU).
"""

from __future__ import annotations

import os
import sys
import tempfile
import threading
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from bridge._array import as_float_array
from bridge.errors import BackendError, BridgeWarning, InvalidValueError, ModelError, UnsupportedError
from bridge.model.gravity import gravity_or
from bridge.model.model import Joint, JointKind, JointLimits, Link, Model
from bridge.spatial import SpatialInertia, Transform

__all__ = [
    "FLOAT32_MAX",
    "body_order",
    "finalize",
    "from_newton",
    "newton_builder",
    "refuse_beyond_float32",
    "require_newton",
    "to_newton",
    "xform",
]

#: the warp device bridge runs Newton on
_CPU = "cpu"
#: the largest finite float32 (Newton's arithmetic): model values beyond it would be inf
FLOAT32_MAX = float(np.finfo(np.float32).max)


def require_newton() -> tuple[Any, Any]:
    """``(newton, warp)`` imported, warp initialized quietly (:func:`_init_quietly`) on the CPU, or a
    BackendError naming the extra."""
    try:
        import newton
        import warp as wp
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise BackendError(
            "Newton is not installed: pip install 'bridge-dynamics[newton]' (newton and warp-lang)"
        ) from exc
    _init_quietly(wp)
    wp.set_device(_CPU)
    return newton, wp


_INIT_LOCK = threading.Lock()
_INITIALIZED: list[bool] = []
#: what Warp's native library prints while initializing on a machine without a GPU: bridge runs
#: Warp on the CPU, so it is no news to the user
_NO_GPU = ("Could not find or load the NVIDIA CUDA driver", "Unable to determine CUDA driver version")


def _init_quietly(wp: Any) -> None:
    """``wp.init()`` once, printing nothing: Warp's log level raised to warnings (its greeting and
    its module-load lines are information; a level the user set higher is kept) and what its
    native library writes on the standard error while initializing captured: the lines saying
    there is no GPU dropped, any other line issued as a :class:`bridge.BridgeWarning`."""
    with _INIT_LOCK:
        if _INITIALIZED:
            return
        if wp.config.log_level < wp.LOG_WARNING:
            wp.config.log_level = wp.LOG_WARNING
        said = _native_stderr(wp.init)
        _INITIALIZED.append(True)
    for line in said.splitlines():
        if line.strip() and not any(text in line for text in _NO_GPU):
            warnings.warn(f"Warp: {line.strip()}", BridgeWarning, stacklevel=3)


def _native_stderr(fn: Callable[[], object]) -> str:
    """Call ``fn`` with the process's standard error (file descriptor 2, where C libraries print)
    sent to a temporary file; return what was written there."""
    sys.stderr.flush()
    try:
        saved = os.dup(2)
    except OSError:  # no standard error at all: nothing to capture
        fn()
        return ""
    try:
        with tempfile.TemporaryFile() as capture:
            os.dup2(capture.fileno(), 2)
            try:
                fn()
            finally:
                os.dup2(saved, 2)
            capture.seek(0)
            return capture.read().decode("utf-8", errors="replace")
    finally:
        os.close(saved)


def xform(wp: Any, H: np.ndarray) -> Any:
    """A warp transform (position, quaternion xyzw) of a (4, 4) pose."""
    T = Transform(H, check=False)
    q = T.as_quaternion_wxyz()
    xyzw = (float(q[1]), float(q[2]), float(q[3]), float(q[0]))
    return wp.transform(wp.vec3(*T.translation.tolist()), wp.quat(*xyzw))


def _translation(p: np.ndarray) -> np.ndarray:
    H = np.eye(4)
    H[:3, 3] = p
    return H


def body_order(model: Model) -> tuple[str, ...]:
    """The links in Newton's body order for ``to_newton(model)``: the base, then each joint's child,
    depth first (body ``k`` is the child of joint ``k``)."""
    return (model.base, *(j.child for j in model.depth_first_joints))


def to_newton(model: Model, gravity: object = None) -> Any:
    """The bridge ``model`` as a finalized ``newton.Model`` on the CPU (see the module docstring).

    Joints are depth first from the base (the free or fixed joint of the base first), so
    ``joint_qd`` lists the movable joints in
    :func:`~bridge.backends.newton.state.newton_dof_permutation` order; body ``k`` is the child of
    joint ``k`` (:func:`body_order`), as Newton's Featherstone solver needs (with any other body
    order its steps disagree with Newton's own mass matrix and forces). ``gravity`` (3,): None (the
    default) the model's (its file's, else ``(0, 0, -9.81)``). A mass, inertia, length or
    armature beyond float32's range (Newton stores float32: it would become inf) raises an
    UnsupportedError naming the link or joint.
    """
    return finalize(newton_builder(model, gravity), model)


def finalize(builder: Any, model: Model) -> Any:
    """``builder.finalize()`` on the CPU (inertias as given: bridge checked them when loading)."""
    try:
        return builder.finalize(device=_CPU, skip_validation_inertia=True)
    except (ValueError, RuntimeError) as exc:  # pragma: no cover - Newton refusing a model
        raise BackendError(f"to_newton({model.name!r}): Newton refused the model: {exc}") from exc


def newton_builder(model: Model, gravity: object = (0.0, 0.0, -9.81)) -> Any:
    """The ``newton.ModelBuilder`` of :func:`to_newton`, not finalized (a template: the engine
    replicates it into one world per state, :mod:`bridge.backends.newton.worlds`)."""
    if not isinstance(model, Model):
        raise BackendError(f"to_newton expects a bridge Model, got {type(model).__name__}")
    g = as_float_array(gravity_or(gravity, model), "to_newton: gravity", (3,))
    if g.shape != (3,):
        raise InvalidValueError(f"to_newton: gravity must be one vector (3,) in world axes, not {g.shape}")
    _refuse_unwritable(model)
    refuse_beyond_float32(model, g)
    newton, wp = require_newton()
    builder = newton.ModelBuilder(gravity=tuple(float(x) for x in g))
    body: dict[str, int] = {}
    for name in body_order(model):
        link = model.link(name)
        inertia = link.inertia
        body[link.name] = builder.add_link(
            com=wp.vec3(*np.asarray(inertia.com, dtype=float).tolist()),
            inertia=wp.mat33(*np.asarray(inertia.inertia_com, dtype=float).ravel().tolist()),
            mass=float(inertia.mass),
            label=link.name,
            lock_inertia=True,
        )
    base = body[model.base]
    if model.floating:
        joints = [builder.add_joint_free(base, label=f"{model.base}_free_joint")]
    else:
        joints = [builder.add_joint_fixed(-1, base, label=f"{model.base}_fixed_joint")]
    for j in model.depth_first_joints:
        joints.append(_add_joint(builder, wp, j, body, j.name in set(model.dof_names)))
    builder.add_articulation(joints, label=model.name)
    return builder


def _refuse_unwritable(model: Model) -> None:
    """An UnsupportedError naming the joints Newton cannot hold as bridge means them: planar joints
    (no Newton joint type) and free joints other than the floating base's (Newton 1.8 takes their
    velocity in the joint frame's axes but gives their gravity and Coriolis forces in world axes,
    measured: its dynamics of such a joint are not those of its own coordinates)."""
    planar = [j.name for j in model.joints if j.kind is JointKind.PLANAR]
    if planar:
        raise UnsupportedError(f"model {model.name!r}: Newton has no planar joint type (joints {planar})")
    free = [j.name for j in model.joints if j.kind is JointKind.FREE]
    if free:
        raise UnsupportedError(
            f"model {model.name!r}: Newton gives a free joint's forces in world axes and its velocity in "
            f"the joint frame's, so bridge's Newton builder takes the floating base's only (joints {free})"
        )


def refuse_beyond_float32(model: Model, gravity: np.ndarray | None = None) -> None:
    """An UnsupportedError naming every link whose mass, centre of mass or inertia, and every joint
    whose placement, axis origin or armature, is beyond float32's range (Newton would store inf);
    ``gravity`` too, when given."""
    problems = []
    for link in model.links:
        i = link.inertia
        big = _largest(i.mass, i.com, i.inertia_com)
        if big > FLOAT32_MAX:
            problems.append(f"link {link.name!r} (mass, centre of mass or inertia up to {big:.3g})")
    for j in model.joints:
        big = _largest(j.parent_H_child.translation, j.axis_origin, j.armature)
        if big > FLOAT32_MAX:
            problems.append(f"joint {j.name!r} (placement, axis origin or armature up to {big:.3g})")
    if gravity is not None and _largest(gravity) > FLOAT32_MAX:
        problems.append(f"gravity (up to {_largest(gravity):.3g})")
    if problems:
        raise UnsupportedError(
            f"model {model.name!r}: Newton stores float32 (largest finite {FLOAT32_MAX:.3g}), and these "
            f"values are beyond it: {'; '.join(problems)}"
        )


def _largest(*values: object) -> float:
    return max(float(np.abs(np.asarray(v, dtype=float)).max(initial=0.0)) for v in values)


def _add_joint(builder: Any, wp: Any, j: Joint, body: dict[str, int], movable: bool) -> int:
    """One bridge joint as a Newton joint (see the module docstring for the frames)."""
    parent, child = body[j.parent], body[j.child]
    rest = j.parent_H_child.matrix
    if not (movable and j.movable):
        return builder.add_joint_fixed(
            parent, child, parent_xform=xform(wp, rest), child_xform=wp.transform_identity(), label=j.name
        )
    X_c = _translation(j.axis_origin)
    if j.kind is JointKind.BALL:  # about the centre: frames at it, the child's axes
        return builder.add_joint_ball(
            parent,
            child,
            parent_xform=xform(wp, rest @ X_c),
            child_xform=xform(wp, X_c),
            armature=float(j.armature),
            friction=0.0,
            damping=0.0,
            stiffness=0.0,
            label=j.name,
        )
    common = {
        "parent_xform": xform(wp, rest @ X_c),
        "child_xform": xform(wp, X_c),
        "axis": wp.vec3(*j.axis.tolist()),
        "target_ke": 0.0,
        "target_kd": 0.0,
        "damping": 0.0,
        "stiffness": 0.0,
        "limit_ke": 0.0,
        "limit_kd": 0.0,
        "armature": float(j.armature),
        "friction": 0.0,
        "label": j.name,
    }
    lim = j.limits
    if j.kind is not JointKind.CONTINUOUS and lim.lower is not None and lim.upper is not None:
        # (a bound beyond float32's range is no bound: kept finite, the largest float32)
        common["limit_lower"] = max(float(lim.lower), -FLOAT32_MAX)
        common["limit_upper"] = min(float(lim.upper), FLOAT32_MAX)
    else:
        common["limit_lower"], common["limit_upper"] = -1e10, 1e10
    add = builder.add_joint_prismatic if j.kind is JointKind.PRISMATIC else builder.add_joint_revolute
    return add(parent, child, **common)


# --------------------------------------------------------------------------------------- from Newton
def _pose(x: np.ndarray) -> np.ndarray:
    """(4, 4) of a Newton transform (position, quaternion xyzw) given as 7 numbers."""
    x = np.asarray(x, dtype=float)
    q = x[3:7] / np.linalg.norm(x[3:7])
    return Transform.from_quaternion_wxyz(np.r_[q[3], q[:3]], x[:3]).matrix


def from_newton(newton_model: Any, name: str = "newton") -> Model:
    """A bridge Model from a ``newton.Model`` with one articulation of revolute, prismatic, ball,
    fixed and free joints (a free or fixed joint to the world on its root body)."""
    newton, _ = require_newton()
    if not isinstance(newton_model, newton.Model):
        raise BackendError(f"from_newton expects a newton.Model, got {type(newton_model).__name__}")
    m = newton_model
    labels = list(m.body_label)
    mass, com, inertia = m.body_mass.numpy(), m.body_com.numpy(), m.body_inertia.numpy()
    links = tuple(
        Link(labels[i], SpatialInertia(float(mass[i]), com[i].astype(float), inertia[i].astype(float)))
        for i in range(len(labels))
    )
    types, parents, children = m.joint_type.numpy(), m.joint_parent.numpy(), m.joint_child.numpy()
    X_p, X_c, axes = m.joint_X_p.numpy(), m.joint_X_c.numpy(), m.joint_axis.numpy()
    qd_start = m.joint_qd_start.numpy()
    kinds = {
        int(newton.JointType.REVOLUTE): JointKind.REVOLUTE,
        int(newton.JointType.PRISMATIC): JointKind.PRISMATIC,
        int(newton.JointType.FIXED): JointKind.FIXED,
    }
    lower, upper = m.joint_limit_lower.numpy(), m.joint_limit_upper.numpy()
    armature = m.joint_armature.numpy()
    joints, base, floating = [], None, False
    for k, label in enumerate(m.joint_label):
        t, p, c = int(types[k]), int(parents[k]), int(children[k])
        if p < 0:
            if base is not None:
                raise ModelError("from_newton: more than one body is joined to the world")
            base, floating = labels[c], t == int(newton.JointType.FREE)
            if not floating and t != int(newton.JointType.FIXED):
                raise ModelError(f"from_newton: the root joint {label!r} is neither free nor fixed")
            continue
        if t not in kinds and t != int(newton.JointType.BALL):
            raise ModelError(f"from_newton: joint {label!r} has a type bridge does not model ({t})")
        Hc = _pose(X_c[k])
        rest = _pose(X_p[k]) @ np.linalg.inv(Hc)
        if t == int(newton.JointType.BALL):
            if not np.allclose(Hc[:3, :3], np.eye(3), atol=1e-6):  # (float32)
                raise ModelError(
                    f"from_newton: ball joint {label!r}: its frame on the child is rotated, so its "
                    "quaternion is not the child's rotation (bridge's ball joint); give it the child's axes"
                )
            d = int(qd_start[k])
            ball = {"axis_origin": Hc[:3, 3], "armature": float(armature[d])}
            joints.append(Joint(str(label), JointKind.BALL, labels[p], labels[c], Transform(rest), **ball))
            continue
        kind, extra = kinds[t], {}
        if kind is not JointKind.FIXED:
            d = int(qd_start[k])
            axis = Hc[:3, :3] @ axes[d].astype(float)  # the joint frame's axis in child axes
            lo, hi = float(lower[d]), float(upper[d])
            unbounded = kind is JointKind.REVOLUTE and (lo <= -1e9 or hi >= 1e9)
            kind = JointKind.CONTINUOUS if unbounded else kind
            limits = JointLimits() if unbounded else JointLimits(lower=lo, upper=hi)
            extra = {"axis": axis, "axis_origin": Hc[:3, 3], "limits": limits, "armature": float(armature[d])}
        joints.append(Joint(str(label), kind, labels[p], labels[c], Transform(rest), **extra))
    if base is None:
        raise ModelError("from_newton: no body is joined to the world")
    dofs = tuple(j.name for j in joints if j.kind.movable)
    return Model(name, links, tuple(joints), (), base, dofs, floating)
