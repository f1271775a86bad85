"""The kinematic twin: MuJoCo's frames of the massless links that :func:`to_mujoco` merges.

:func:`~bridge.backends.mujoco.model.to_mujoco` puts a chain of massless links joined by movable
joints into one MuJoCo body with several joints (:mod:`bridge.backends.mujoco.bodies`). The links
inside the chain then have no MuJoCo object: each moves with the joints before it only, and a site
moves with the whole body. Their poses, velocities, Jacobians and accelerations are kinematics,
which do not depend on the inertias, so the engine reads them from a twin ``MjModel`` of the same
model with one body per link (no merging) and unit inertias: the same bodies in the same depth-first
order, the same ``qpos`` and ``qvel`` layout, and MuJoCo's own kinematics of every link.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from bridge.backends.mujoco.bodies import Inertias, plan_bodies
from bridge.backends.mujoco.model import build_spec, mujoco_body_name, require_mujoco
from bridge.model.model import Link, Model
from bridge.spatial import SpatialInertia

__all__ = ["KinematicTwin", "merged_links"]


def merged_links(model: Model) -> set[str]:
    """The frames the MjModel of :func:`to_mujoco` has no object for: the links it merges into a
    body with several joints and the frames on them."""
    plan = plan_bodies(model)
    return set(plan.merged) | set(plan.inner_frames)


class KinematicTwin:
    """One body per lumped link of ``model`` with unit inertias (see the module docstring)."""

    def __init__(self, model: Model) -> None:
        mujoco = require_mujoco()
        plan = plan_bodies(model, merge=False, native_free=False)
        unit = SpatialInertia(1.0, np.zeros(3), np.eye(3))
        bodies = tuple(dataclasses.replace(b, link=Link(b.link.name, unit)) for b in plan.bodies)
        self.m = build_spec(model, dataclasses.replace(plan, bodies=bodies), Inertias()).compile()
        self.d = mujoco.MjData(self.m)
        self._mj = mujoco
        self._links = frozenset(model.link_names)

    def frame(self, name: str, model: Model) -> tuple[int, int, int]:
        """``(object type, object id, body id)`` of the frame ``name`` in the twin: a body for a
        link that names one, else a site."""
        mj, OBJ = self._mj, self._mj.mjtObj
        if name in self._links:
            bid = mj.mj_name2id(self.m, OBJ.mjOBJ_BODY, mujoco_body_name(name, self._links))
            if bid >= 0:
                return OBJ.mjOBJ_XBODY, bid, bid
        sid = mj.mj_name2id(self.m, OBJ.mjOBJ_SITE, name)
        return OBJ.mjOBJ_SITE, sid, int(self.m.site_bodyid[sid])

    def follow(self, m: Any, d: Any, base_body: int) -> tuple[Any, Any]:
        """The twin at the state of the engine's model ``m`` and data ``d`` (positions, velocities,
        gravity, and the pose of a fixed base's body ``base_body``), kinematics and velocities
        computed: ``(twin model, twin data)``."""
        mj, t, td = self._mj, self.m, self.d
        t.opt.gravity[:] = m.opt.gravity
        t.body_pos[1] = m.body_pos[base_body]
        t.body_quat[1] = m.body_quat[base_body]
        td.qpos[:] = d.qpos
        td.qvel[:] = d.qvel
        mj.mj_kinematics(t, td)
        mj.mj_comPos(t, td)
        mj.mj_comVel(t, td)
        return t, td
