"""Kinematics of a FeatherstoneModel's bodies and placements, vectorised over batches of states.

:func:`body_pose`, :func:`body_velocity`, :func:`body_jacobian` and :func:`body_acceleration` take a
body (1-based index, 0 = the fixed world) or a placement name, ``q`` (..., NB) or, with ``xfb``
(..., 13) on a floatbase model, ``q`` (..., NB - 6) (see :mod:`.spatial_v2` for xfb). Velocities and
accelerations are spatial (angular first), in world coordinates or in the frame's own
(``coordinates="local"``).
"""

from __future__ import annotations

import numpy as np

from bridge._array import as_float_array
from bridge.errors import InvalidValueError, UnknownNameError
from bridge.spatial import Transform
from bridge.spatial.transform import ensure_transform

from .batch_math import batch_first, batch_last, tmatvec, x_motion
from .joints import Joints
from .kernels import accelerations, velocities
from .model import FeatherstoneModel
from .quaternions import xfb_parts
from .tree import Tree
from .workspace import Workspace

__all__ = ["body_acceleration", "body_jacobian", "body_pose", "body_velocity"]


def _resolve_body(model: FeatherstoneModel, body: object, body_H_frame: object) -> tuple[int, Transform]:
    if isinstance(body, str):
        b, pose = model.placement(body)
        if body_H_frame is not None:
            pose = pose @ _as_transform(body_H_frame)
        return b, pose
    b = int(body)
    if not 0 <= b <= model.NB:
        raise UnknownNameError(
            "body", str(body), [str(i) for i in range(model.NB + 1)], where=f"model {model.name!r}"
        )
    return b, (Transform.identity() if body_H_frame is None else _as_transform(body_H_frame))


def _as_transform(x: object) -> Transform:
    return ensure_transform(x, "body_H_frame")


def _as_joints(x: object, name: str, n: int) -> np.ndarray:
    return as_float_array(x, name, (n,))


def _kin_setup(model: FeatherstoneModel, q: object, xfb: object, extra: dict[str, object]):
    """Joints of a batch for the kinematics functions: a free tree when xfb is given."""
    free = xfb is not None
    tree = Workspace.of(model, free).tree
    n = tree.nq
    qq = _as_joints(q, "q", n)
    vals = {
        k: (None if v is None else as_float_array(v, k, (tree.nv if k != "a_fb" else 6,)))
        for k, v in extra.items()
    }
    shapes = [qq.shape[:-1]] + [v.shape[:-1] for v in vals.values() if v is not None]
    if free:
        x, E, r, _ = xfb_parts(xfb)
        shapes.append(x.shape[:-1])
    batch = np.broadcast_shapes(*shapes)
    N = int(np.prod(batch, dtype=int))
    if free:
        E0 = np.ascontiguousarray(np.moveaxis(np.broadcast_to(E, (*batch, 3, 3)).reshape(N, 3, 3), 0, -1))
        J = Joints(tree, batch_last(qq, batch), E0, batch_last(r, batch))
    else:
        J = Joints(tree, batch_last(qq, batch))
    return tree, J, {k: (None if v is None else batch_last(v, batch)) for k, v in vals.items()}, batch


def _frame_pose(J: Joints, tree: Tree, b: int, pose: Transform) -> tuple[np.ndarray, np.ndarray]:
    """(E (3, 3, N), r (3, N)) of a frame on model body b (1-based; 0 = world)."""
    N = J.N
    Ef = pose.rotation.T  # frame_R_body
    of = pose.translation  # frame origin in body coordinates
    i = b - tree.first_body
    if b == 0 or i < 0:
        if b != 0 and i < 0:
            raise InvalidValueError(f"body {b} is a floatbase placeholder; use body 6 (the floating base)")
        E = np.broadcast_to(Ef[:, :, None], (3, 3, N)).copy()
        return E, np.broadcast_to(of[:, None], (3, N)).copy()
    Eb, rb = J.fk()
    Eb, rb = Eb[i], rb[i]
    E = np.einsum("ij,jkn->ikn", Ef, Eb)
    r = rb + tmatvec(Eb, np.broadcast_to(of[:, None], (3, N)))
    return E, r


def _body_jacobian_world(J: Joints, tree: Tree, b: int) -> np.ndarray:
    """World-coordinate Jacobian (6, nv, N) of model body b (columns of its ancestors' subspaces)."""
    i = b - tree.first_body
    S = J.subspaces()
    Jw = np.zeros((6, tree.nv, J.N))
    if b == 0 or i < 0:
        return Jw
    cols = tree.support(i)
    Jw[:, cols] = S[:, cols]
    return Jw


def _to_coordinates(x: np.ndarray, E: np.ndarray, r: np.ndarray, coordinates: str) -> np.ndarray:
    """World-coordinate motions (6, N) or (6, nv, N) as they are (``"world"``) or in the frame
    ``plux(E, r)`` (``"local"``)."""
    if coordinates == "world":
        return x
    if coordinates == "local":
        if x.ndim == 3:  # (6, nv, N)
            return np.stack([x_motion(E, r, x[:, c]) for c in range(x.shape[1])], axis=1)
        return x_motion(E, r, x)
    raise InvalidValueError(f"coordinates must be 'world' or 'local', got {coordinates!r}")


def body_pose(
    model: FeatherstoneModel, body: int | str, q: object, xfb: object = None, body_H_frame: object = None
) -> tuple[np.ndarray, np.ndarray]:
    """Pose of a body (1-based index, 0 = world) or a placement name, in the world.

    Returns ``(E (..., 3, 3), r (..., 3))``: E the coordinate rotation frame_R_world and r the frame's
    origin in world coordinates, so ``plux(E, r)`` is frame_X_world. With ``xfb`` (..., 13) the model
    is a floatbase model and ``q`` (..., NB - 6) its real joints; without, ``q`` (..., NB).
    """
    b, pose = _resolve_body(model, body, body_H_frame)
    tree, J, _, batch = _kin_setup(model, q, xfb, {})
    E, r = _frame_pose(J, tree, b, pose)
    return np.moveaxis(E, -1, 0).reshape(*batch, 3, 3), batch_first(r, batch)


def body_velocity(
    model: FeatherstoneModel,
    body: int | str,
    q: object,
    qd: object,
    xfb: object = None,
    body_H_frame: object = None,
    coordinates: str = "world",
) -> np.ndarray:
    """Spatial velocity (..., 6, angular first) of a body/placement in world coordinates (or in the
    frame's own coordinates with ``coordinates="local"``). ``qd`` is (..., NB), or with ``xfb``
    (..., NB - 6) (the base velocity comes from xfb)."""
    Jw, E, r, nu, batch, _ = _jac_setup(model, body, q, qd, xfb, body_H_frame)
    v = np.einsum("inN,nN->iN", Jw, nu)
    return batch_first(_to_coordinates(v, E, r, coordinates), batch)


def body_jacobian(
    model: FeatherstoneModel,
    body: int | str,
    q: object,
    xfb: object = None,
    body_H_frame: object = None,
    coordinates: str = "world",
) -> np.ndarray:
    """Jacobian (..., 6, nv) with ``body_velocity = J @ [v_fb; qd]`` (floating, nv = NB) or
    ``J @ qd`` (fixed layout, nv = NB); world or frame (``"local"``) coordinates."""
    b, pose = _resolve_body(model, body, body_H_frame)
    tree, J, _, batch = _kin_setup(model, q, xfb, {})
    E, r = _frame_pose(J, tree, b, pose)
    Jw = _to_coordinates(_body_jacobian_world(J, tree, b), E, r, coordinates)
    return np.moveaxis(Jw, -1, 0).reshape(*batch, 6, tree.nv)


def _jac_setup(model, body, q, qd, xfb, body_H_frame, qdd=None, a_fb=None):
    b, pose = _resolve_body(model, body, body_H_frame)
    tree = Workspace.of(model, xfb is not None).tree
    if xfb is not None:
        vw = xfb_parts(xfb)[3]
        qd_ = _as_joints(qd, "qd", tree.nq)
        lead = np.broadcast_shapes(vw.shape[:-1], qd_.shape[:-1])
        nu = np.concatenate([np.broadcast_to(vw, (*lead, 6)), np.broadcast_to(qd_, (*lead, tree.nq))], -1)
        nd = None
        if qdd is not None:
            qdd_ = _as_joints(qdd, "qdd", tree.nq)
            af = np.zeros(6) if a_fb is None else as_float_array(a_fb, "a_fb", (6,))
            lead = np.broadcast_shapes(af.shape[:-1], qdd_.shape[:-1])
            nd = np.concatenate(
                [np.broadcast_to(af, (*lead, 6)), np.broadcast_to(qdd_, (*lead, tree.nq))], -1
            )
    else:
        nu = qd
        nd = qdd
    tree, J, vals, batch = _kin_setup(model, q, xfb, {"nu": nu, "nu_dot": nd})
    E, r = _frame_pose(J, tree, b, pose)
    return _body_jacobian_world(J, tree, b), E, r, vals["nu"], batch, (J, tree, b, pose, vals["nu_dot"])


def body_acceleration(
    model: FeatherstoneModel,
    body: int | str,
    q: object,
    qd: object,
    qdd: object = None,
    xfb: object = None,
    a_fb: object = None,
    body_H_frame: object = None,
    coordinates: str = "world",
) -> np.ndarray:
    """Spatial acceleration (..., 6) of a body/placement: the time derivative of
    :func:`body_velocity` in the same coordinates (gravity not included). With ``qdd=None`` (and
    ``a_fb=None``) this is the bias acceleration ``J_dot @ nu``. ``a_fb`` (..., 6) is the floating
    base's spatial acceleration in world coordinates."""
    if qdd is None and a_fb is None:
        qdd = np.zeros(Workspace.of(model, xfb is not None).tree.nq)
    elif qdd is None:
        qdd = np.zeros(Workspace.of(model, True).tree.nq)
    _, E, r, nu, batch, (J, tree, b, _, nu_dot) = _jac_setup(model, body, q, qd, xfb, body_H_frame, qdd, a_fb)
    i = b - tree.first_body
    if b == 0 or i < 0:
        return np.zeros((*batch, 6))
    v = velocities(J, nu)
    a = accelerations(J, v, nu, nu_dot, np.zeros((6, 1)))[:, i]
    return batch_first(_to_coordinates(a, E, r, coordinates), batch)
