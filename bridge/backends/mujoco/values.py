"""The numbers bridge reads from a compiled ``mujoco.MjModel``, checked before conversion: each finite
and at most :data:`bridge.model.urdf.MAX_MAGNITUDE` in magnitude (what the URDF loader requires), the
error naming the body, joint or site and the attribute (MuJoCo itself compiles NaN, inf and 1e308)."""

from __future__ import annotations

from typing import Any

import numpy as np

from bridge.backends.mujoco.messages import object_name
from bridge.errors import InvalidValueError
from bridge.model.urdf import MAX_MAGNITUDE

__all__ = ["check_values"]

_BODY = ("pos", "quat", "ipos", "iquat", "mass", "inertia")
_JOINT = ("pos", "axis")
_SITE = ("pos", "quat")


def check_values(mujoco: Any, m: Any, bname: list[str], jname: list[str], where: str) -> None:
    """Raise InvalidValueError (``where: body 'b': mass ...``) on the first value of a moving body
    (``body_pos``, ``body_mass``, ...), a joint (``jnt_pos``, ``jnt_axis``, its ``ref`` in ``qpos0``)
    or a site that is not finite or beyond MAX_MAGNITUDE; ``bname``/``jname`` the names by id."""
    for b in range(1, m.nbody):
        for attr in _BODY:
            _check(getattr(m, f"body_{attr}")[b], f"{where}: body {bname[b]!r}: {attr}")
    sliding = {int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE)}
    for j in range(m.njnt):
        owner = f"{where}: joint {jname[j]!r} on body {bname[m.jnt_bodyid[j]]!r}"
        for attr in _JOINT:
            _check(getattr(m, f"jnt_{attr}")[j], f"{owner}: {attr}")
        if int(m.jnt_type[j]) in sliding:
            _check(m.qpos0[m.jnt_qposadr[j]], f"{owner}: ref")
    sname = [object_name(mujoco, m, mujoco.mjtObj.mjOBJ_SITE, s, f"site{s}") for s in range(m.nsite)]
    for s in range(m.nsite):
        for attr in _SITE:
            _check(getattr(m, f"site_{attr}")[s], f"{where}: site {sname[s]!r}: {attr}")


def _check(values: Any, what: str) -> None:
    """Raise InvalidValueError naming ``what`` unless every value is finite and within MAX_MAGNITUDE."""
    v = np.atleast_1d(np.asarray(values, dtype=float))
    shown = " ".join(f"{x:g}" for x in v)
    if not np.all(np.isfinite(v)):
        raise InvalidValueError(f"{what} = {shown!r} is not finite")
    if np.any(np.abs(v) > MAX_MAGNITUDE):
        raise InvalidValueError(
            f"{what} = {shown!r} is beyond {MAX_MAGNITUDE:g} in magnitude (no engine computes with it: "
            "its products overflow)"
        )
