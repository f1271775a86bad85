"""Columns of states from one convention to another, for one model: the plan made once, applied per chunk.

A :class:`StatePlan` holds what the conversion of ``model``'s states from ``source`` to ``target``
needs, made once: both layouts (:mod:`bridge.datasets.layout`), the configuration map
(:mod:`bridge.datasets.configuration`), the source index of every joint velocity entry and the base
block of the change of variables (:mod:`bridge.datasets.base_change`). :meth:`StatePlan.convert`
takes a chunk as columns (one float array (N,) per entry, in the source layout's order) and returns
the target's columns:

* ``q``: entry by entry (copies where the meaning is the same);
* ``v``, ``a``, ``tau`` of a model of one-coordinate joints: the joint entries are the source
  columns reordered (the same arrays), the base entries ``X v``, ``X a + X_dot v`` and ``X^-T tau``
  computed on columns;
* the same of a model with planar, ball or free joints: through the reference change of variables
  (:func:`~bridge.conventions.change_of_variables.change_of_variables`, every joint's block) at the
  states read by :func:`~bridge.conventions.native_state.from_native_state`.

Accelerations need the velocities (``X_dot v``); generalized forces need the configuration only.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from bridge.conventions.change_of_variables import NEUTRAL, change_of_variables
from bridge.conventions.native_state import from_native_state
from bridge.conventions.registry import convention as _convention
from bridge.conventions.state import Representation, State
from bridge.datasets.base_change import BaseChange, Pose
from bridge.datasets.configuration import ConfigurationMap
from bridge.datasets.layout import Layout, layout
from bridge.errors import DatasetError
from bridge.model.model import Model
from bridge.spatial import Transform

__all__ = ["Columns", "StatePlan"]

#: a chunk of states as columns: field ("q", "v", "a", "tau") -> one array (N,) per entry
Columns = dict[str, list[np.ndarray]]


class StatePlan:
    """The conversion of ``model``'s states from convention ``source`` to ``target`` (names or
    Conventions; a neutral representation's layout is bridge's State). See the module docstring.

    ``normalize``: quaternions of any non-zero norm are accepted and written normalised (else they
    are kept as they are, bit for bit)."""

    def __init__(self, model: Model, source: object, target: object, normalize: bool = False) -> None:
        self.model = model
        self._conv_s, self._conv_t = _convention(source), _convention(target)
        self.source: Layout = layout(model, self._conv_s)
        self.target: Layout = layout(model, self._conv_t)
        self.normalize = normalize
        self.configuration = ConfigurationMap(self.source, self.target, normalize)
        self.single = model.single_coordinate
        # target velocity entry -> source velocity entry, for the joints (each joint's nv together)
        gather: list[int] = []
        for owner in self.target.owners:
            if owner.dof is None:
                continue
            at = self.source.index[owner.name]
            gather += range(self.source.v_offsets[at], self.source.v_offsets[at] + owner.nv)
        self._joint_gather = tuple(gather)
        self._base = (
            BaseChange(self._conv_s.bound(model).velocity, self._conv_t.bound(model).velocity)
            if model.floating
            else None
        )
        #: the source's base quaternion ``(w, x, y, z)`` and position entries (a plan is read-only
        #: once made: threads share it)
        base = self.source.owners[0] if model.floating else None
        self._pose_entries = (
            tuple(base.q.index(m) for m in ("qw", "qx", "qy", "qz")) if base else (),
            tuple(base.q.index(m) for m in ("px", "py", "pz")) if base else (),
        )

    def pose(self, q: Sequence[np.ndarray]) -> Pose:
        """The base poses of a chunk from its source configuration columns (floating models)."""
        quat, pos = self._pose_entries
        return Pose([q[i] for i in quat], [q[i] for i in pos])

    def convert(self, chunk: Columns) -> Columns:
        """The target's columns of the fields of ``chunk`` (``q`` required; ``a`` needs ``v``)."""
        if "q" not in chunk:
            raise DatasetError("a state conversion needs the configuration (q)")
        if "a" in chunk and "v" not in chunk:
            raise DatasetError("accelerations convert with the velocities (X_dot v): give v too")
        out: Columns = {"q": self.configuration(chunk["q"])}
        others = [f for f in ("v", "a", "tau") if f in chunk]
        if not others:
            return out
        if self.single:
            out.update(self._single(chunk, others))
        else:
            out.update(self._wide(chunk, others))
        return out

    def convert_rows(
        self, rows: dict[str, np.ndarray], index: dict[str, Sequence[int]], out: dict[str, np.ndarray]
    ) -> None:
        """:meth:`convert` of a chunk of rows: ``rows`` field -> (n, k) array whose column
        ``index[field][i]`` is the source layout's entry ``i``; the target's rows written into
        ``out`` field -> (n, width) float64. The copied entries are one gather of each row (no
        column is made), the computed ones (the base's velocity entries, angles) columns."""
        if not self.single:  # joints of several coordinates: the columns' path
            cols = {f: [x[:, i] for i in index[f]] for f, x in rows.items()}
            for f, values in self.convert(cols).items():
                out[f][...] = np.stack(values, axis=-1)
            return
        q, iq = rows["q"], index["q"]
        q_cols = [q[:, i] for i in iq]
        copies = self.configuration.copies
        np.take(q, [iq[c] if c is not None else 0 for c in copies], axis=1, out=out["q"])
        computed = [j for j, c in enumerate(copies) if c is None]
        if computed:
            values = self.configuration(q_cols)
            for j in computed:
                out["q"][:, j] = values[j]
        base = self._base
        pose = self.pose(q_cols) if base is not None and not base.constant else None
        nb = 0 if base is None else 6
        for f in ("v", "a", "tau"):
            if f not in rows:
                continue
            x, ix, y = rows[f], index[f], out[f]
            y[:, nb:] = x.take([ix[i] for i in self._joint_gather], axis=1)
            if base is None:
                continue
            b6 = [x[:, ix[k]] for k in range(6)]
            if f == "v":
                b = base.velocity(b6, pose)  # type: ignore[arg-type]
            elif f == "a":
                b = base.acceleration(b6, [rows["v"][:, index["v"][k]] for k in range(6)], pose)  # type: ignore[arg-type]
            else:
                b = base.force(b6, pose)  # type: ignore[arg-type]
            for k in range(6):
                y[:, k] = b[k]

    def _single(self, chunk: Columns, fields: list[str]) -> Columns:
        """Joints reordered, the base through :class:`BaseChange`."""
        base = self._base
        pose = self.pose(chunk["q"]) if base is not None and not base.constant else None
        out: Columns = {}
        for field in fields:
            x = chunk[field]
            joints = [x[i] for i in self._joint_gather]
            if base is None:
                out[field] = joints
                continue
            if field == "v":
                b = base.velocity(x[:6], pose)  # type: ignore[arg-type]
            elif field == "a":
                b = base.acceleration(x[:6], chunk["v"][:6], pose)  # type: ignore[arg-type]
            else:
                b = base.force(x[:6], pose)  # type: ignore[arg-type]
            out[field] = [*b, *joints]
        return out

    def _wide(self, chunk: Columns, fields: list[str]) -> Columns:
        """The reference change of variables at the chunk's states (joints of several coordinates)."""
        q = np.stack(chunk["q"], axis=-1)
        nv = self.source.nv
        v = np.stack(chunk["v"], axis=-1) if "v" in chunk else np.zeros((q.shape[0], nv))
        state = from_native_state(self.model, q, v, self._conv_s, "body", normalize=True)
        cov = change_of_variables(self.model, state, self._conv_s, self._conv_t)
        maps = {"v": cov.velocity, "a": cov.acceleration, "tau": cov.force}
        out: Columns = {}
        for field in fields:
            x = np.stack(chunk[field], axis=-1) if field != "v" else v
            y = np.asarray(maps[field](x))
            out[field] = list(np.ascontiguousarray(y.T))
        return out


def neutral_state(plan: StatePlan, converted: dict[str, np.ndarray]) -> State:
    """The neutral :class:`State` of a chunk converted by ``plan`` to a neutral representation
    (``plan.target`` must be one: "body", "inertial" or "mixed"); ``converted`` field -> (n, width)
    arrays in its layout (``v`` absent: at rest)."""
    rep = Representation.parse(plan.target.convention)
    if NEUTRAL[rep].name != plan.target.convention:  # pragma: no cover - internal use
        raise DatasetError(f"{plan.target.convention!r} is not a neutral representation")
    q = converted["q"]
    n = q.shape[0]
    model = plan.model
    nb = 6 if model.floating else 0
    if model.floating:  # the neutral layout: [p, quaternion (w, x, y, z), s]
        H = Pose([q[:, i] for i in range(3, 7)], [q[:, i] for i in range(3)]).matrix()
        s = q[:, 7:]
    else:
        H = np.broadcast_to(np.eye(4), (n, 4, 4))
        s = q
    if not model.single_coordinate:  # the joints' quaternions normalised (the State checks to 1e-6)
        s = _unit_quaternions(model, s)
    v = converted.get("v")
    if v is None:
        vb, sd = np.zeros((n, 6)), np.zeros((n, model.coordinates.nv))
    else:
        vb, sd = (v[:, :6] if nb else np.zeros((n, 6))), v[:, nb:]
    layout_arg = None if model.single_coordinate else model
    # (checked already: finite entries, unit quaternions, so H is a rotation to rounding)
    return State(Transform(H, check=False), s, vb, sd, rep, check=False, layout=layout_arg)


def _unit_quaternions(model: Model, s: np.ndarray) -> np.ndarray:
    """``s`` with each ball and free joint's quaternion divided by its norm."""
    coords = model.coordinates
    s = s.copy()
    for k, kind in enumerate(coords.kinds):
        if kind.value in ("ball", "free"):
            a = int(coords.q_start[k]) + (3 if kind.value == "free" else 0)
            quat = s[:, a : a + 4]
            s[:, a : a + 4] = quat / np.linalg.norm(quat, axis=-1, keepdims=True)
    return s
