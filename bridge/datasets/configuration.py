"""Configurations between two layouts, entry by entry, and the checks of a configuration's values.

Two layouts of one model (:mod:`bridge.datasets.layout`) have the same owners; each target entry
is read from the source entry of the same meaning (a column kept as it is: no rounding, a
quaternion's sign kept), or computed from the owner's other entries: ``(cos, sin)`` of an angle,
``atan2(sin, cos)``, a quaternion from roll-pitch-yaw angles or back (the only maps that round).
A continuous joint read from ``(cos, sin)`` gets its angle in ``(-pi, pi]``: the turns a
``(cos, sin)`` pair cannot hold are not made up.

:func:`check_configuration` refuses what no convention can hold: a quaternion or a ``(cos, sin)``
pair whose norm is not 1 (to :data:`UNIT_TOLERANCE`, or any non-zero norm with ``normalize``), with
the row and the columns of the first one found.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from bridge.datasets.layout import Layout, Owner
from bridge.errors import DatasetError
from bridge.model.joints import quaternion_wxyz_to_rotation, rotation_to_quaternion_wxyz
from bridge.spatial.so3 import matrix_to_rpy, rpy_to_matrix

__all__ = ["UNIT_TOLERANCE", "BadValueError", "ConfigurationMap", "check_configuration", "check_finite"]

#: how far from 1 a quaternion's or a (cos, sin) pair's norm may be (MuJoCo normalises, others
#: require unit norm; float32 logs round to about 1e-7)
UNIT_TOLERANCE = 1e-6

_QUAT = ("qw", "qx", "qy", "qz")
_RPY = ("roll", "pitch", "yaw")


class BadValueError(DatasetError):
    """A value no state can have: ``row`` (0-based, in the arrays checked), ``columns`` (the
    layout's column names involved), ``problem`` and the ``field`` (``q``, ``v``, ``a``, ``tau``).
    The caller names the file or argument."""

    def __init__(self, row: int, columns: Sequence[str], problem: str, field: str = "q") -> None:
        self.row, self.columns, self.problem, self.field = int(row), tuple(columns), problem, field
        super().__init__(f"row {self.row + 1}, {self.where}: {problem}")

    @property
    def where(self) -> str:
        """``column 'a'`` or ``columns 'a', 'b'``."""
        plural = "s" if len(self.columns) > 1 else ""
        return f"column{plural} {', '.join(repr(c) for c in self.columns)}"

    def __reduce__(self) -> tuple:
        return BadValueError, (self.row, self.columns, self.problem, self.field)


def check_finite(columns: Sequence[np.ndarray], names: Sequence[str]) -> None:
    """Raise :class:`BadValueError` at the first NaN or infinite entry (earliest row, then column)."""
    first: tuple[int, int] | None = None
    for j, c in enumerate(columns):
        bad = ~np.isfinite(c)
        if bad.any():
            row = int(np.argmax(bad))
            if first is None or row < first[0]:
                first = (row, j)
    if first is not None:
        row, j = first
        value = float(columns[j][row])
        raise BadValueError(row, (names[j],), f"{value!r} is not a finite number")


def _pairs(owner: Owner) -> list[tuple[str, tuple[str, ...]]]:
    """The unit-norm groups of an owner: (what, meanings)."""
    out = []
    if set(_QUAT) <= set(owner.q):
        out.append(("quaternion", _QUAT))
    if "cos" in owner.q:
        out.append(("(cos, sin) pair", ("cos", "sin")))
    return out


def check_configuration(
    layout: Layout, q: Sequence[np.ndarray], normalize: bool = False, tolerance: float = UNIT_TOLERANCE
) -> None:
    """Raise :class:`BadValueError` for the first row whose quaternion or (cos, sin) pair is not of unit
    norm (``normalize``: zero norm only). ``q`` holds one array per configuration entry of
    ``layout``, in its order."""
    first: BadValueError | None = None
    for at, owner in enumerate(layout.owners):
        start = layout.q_offsets[at]
        for what, meanings in _pairs(owner):
            idx = [start + owner.q.index(m) for m in meanings]
            norm = np.sqrt(sum(q[i] * q[i] for i in idx))
            bad = norm < 1e-12 if normalize else np.abs(norm - 1.0) > tolerance
            if np.any(bad):
                row = int(np.argmax(bad))
                if first is None or row < first.row:
                    names = [owner.columns("q")[i - start] for i in idx]
                    shown = "zero" if normalize else f"{float(norm[row]):.9g}"
                    whose = "the base's" if owner.dof is None else f"joint {owner.name!r}'s"
                    first = BadValueError(row, names, f"{whose} {what} has norm {shown}, not 1")
    if first is not None:
        raise first


class ConfigurationMap:
    """The configuration of ``target`` from that of ``source`` (module docstring), for one model.

    ``normalize``: quaternions are divided by their norm on the way (a log of any non-zero norm,
    as MuJoCo accepts); otherwise every kept entry is the source's value, bit for bit."""

    def __init__(self, source: Layout, target: Layout, normalize: bool = False) -> None:
        if [o.name for o in source.owners] and {o.name for o in source.owners} != {
            o.name for o in target.owners
        }:
            raise DatasetError("configurations of two different models")  # pragma: no cover
        self.source, self.target, self.normalize = source, target, normalize
        #: target entry -> source entry when it is a plain copy of one (None: computed)
        copies: list[int | None] = []
        for owner in target.owners:
            src = source.owners[source.index[owner.name]]
            start = source.q_offsets[source.index[owner.name]]
            renorm = normalize and set(_QUAT) <= set(src.q)
            for m in owner.q:
                keep = m in src.q and not (renorm and m in _QUAT)
                copies.append(start + src.q.index(m) if keep else None)
        self.copies = tuple(copies)
        #: every entry a copy, in the same order: nothing to do
        self.identity = self.copies == tuple(range(source.nq)) and source.nq == target.nq

    def __call__(self, q: Sequence[np.ndarray]) -> list[np.ndarray]:
        """One array per target entry from one array per source entry (copies are the same arrays)."""
        if self.identity:
            return list(q)
        out: list[np.ndarray] = []
        for owner in self.target.owners:
            at = self.source.index[owner.name]
            src = self.source.owners[at]
            start = self.source.q_offsets[at]
            values = {m: q[start + k] for k, m in enumerate(src.q)}
            out += self._owner(owner, src, values)
        return out

    def _owner(self, owner: Owner, src: Owner, values: dict[str, np.ndarray]) -> list[np.ndarray]:
        if self.normalize and set(_QUAT) <= set(src.q):
            n = 1.0 / np.sqrt(sum(values[m] * values[m] for m in _QUAT))
            values = {**values, **{m: values[m] * n for m in _QUAT}}
        missing = [m for m in owner.q if m not in values]
        if "angle" in missing:
            values["angle"] = np.arctan2(values["sin"], values["cos"])
        if "cos" in missing:
            values["cos"], values["sin"] = np.cos(values["angle"]), np.sin(values["angle"])
        if any(m in _QUAT for m in missing):  # a ball joint stored as roll-pitch-yaw
            rpy = np.stack([values[m] for m in _RPY], axis=-1)
            quat = rotation_to_quaternion_wxyz(rpy_to_matrix(rpy))
            values.update({m: quat[..., i] for i, m in enumerate(_QUAT)})
        if any(m in _RPY for m in missing):
            quat = np.stack([values[m] for m in _QUAT], axis=-1)
            quat = quat / np.linalg.norm(quat, axis=-1, keepdims=True)
            rpy = matrix_to_rpy(quaternion_wxyz_to_rotation(quat))
            values.update({m: rpy[..., i] for i, m in enumerate(_RPY)})
        return [values[m] for m in owner.q]
