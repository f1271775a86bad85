"""Newton's per-body states (``body_q``, ``body_qd``) as bridge's link poses and frame velocities.

Newton writes each body's pose as ``body_q = [origin (3); quaternion x, y, z, w]`` and its twist
as ``body_qd = [velocity of the body's centre of mass; angular velocity]``, both in world axes. That
twist is the declaration ``BaseVelocity(Point.BASE_COM, Axes.WORLD, Axes.WORLD)`` applied to the
link instead of the base, bound to the link's own centre of mass: the maps to and from bridge's
representations (BODY, INERTIAL, MIXED or any declaration) are
:func:`bridge.conventions.frames.frame_motion` with it, derived from the declaration like every
other map. Bodies are in Newton's order (:func:`bridge.backends.newton.model.body_order`: the base,
then the joints' children depth first, as ``to_newton`` adds them).

This module does not import Newton: it reads arrays (numpy, or anything ``np.asarray`` takes).
"""

from __future__ import annotations

import numpy as np

from bridge.backends.newton.model import body_order
from bridge.backends.newton.state import NEWTON
from bridge.conventions.declaration import BaseVelocity
from bridge.conventions.frames import frame_motion
from bridge.errors import InvalidValueError
from bridge.model.model import Model
from bridge.spatial import Transform

__all__ = ["body_poses", "body_twist_declaration", "from_body_velocities", "to_body_velocities"]


def body_twist_declaration(model: Model, link: str) -> BaseVelocity:
    """Newton's twist of ``link`` as a declaration: its COM's velocity and its angular velocity,
    world axes, bound to the link's COM (link axes)."""
    return NEWTON.velocity.bound(model.link(link).inertia.com)


def _bodies(model: Model, x: object, width: int, name: str) -> np.ndarray:
    a = np.asarray(x, dtype=float)
    if a.ndim < 2 or a.shape[-2:] != (len(model.links), width):
        raise InvalidValueError(
            f"{name}: expected shape (..., {len(model.links)}, {width}) for model {model.name!r}, "
            f"got {a.shape}"
        )
    return a


def body_poses(model: Model, body_q: object) -> dict[str, np.ndarray]:
    """``world_H_link`` (..., 4, 4) of each link from Newton's ``body_q`` (..., n_links, 7)."""
    q = _bodies(model, body_q, 7, "body_q")
    quat = q[..., 3:7] / np.linalg.norm(q[..., 3:7], axis=-1, keepdims=True)
    wxyz = np.concatenate([quat[..., 3:], quat[..., :3]], axis=-1)
    H = Transform.from_quaternion_wxyz(wxyz, q[..., :3]).matrix
    return {name: H[..., i, :, :] for i, name in enumerate(body_order(model))}


def to_body_velocities(
    model: Model, body_q: object, body_qd: object, representation: object = "mixed"
) -> dict[str, np.ndarray]:
    """Each link's velocity (..., 6) in ``representation`` (a neutral one or a declaration) from
    Newton's ``body_q`` (..., n_links, 7) and ``body_qd`` (..., n_links, 6)."""
    qd = _bodies(model, body_qd, 6, "body_qd")
    poses = body_poses(model, body_q)
    return {
        name: frame_motion(poses[name], qd[..., i, :], body_twist_declaration(model, name), representation)
        for i, name in enumerate(body_order(model))
    }


def from_body_velocities(
    model: Model, body_q: object, velocities: dict[str, object], representation: object = "mixed"
) -> np.ndarray:
    """Newton's ``body_qd`` (..., n_links, 6) from each link's velocity (..., 6) in
    ``representation`` at the poses ``body_q`` (..., n_links, 7)."""
    poses = body_poses(model, body_q)
    out = [
        frame_motion(
            poses[name],
            np.asarray(velocities[name], dtype=float),
            representation,
            body_twist_declaration(model, name),
        )
        for name in body_order(model)
    ]
    return np.stack(out, axis=-2)
