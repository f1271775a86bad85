"""Column names of state datasets: the naming scheme, and matching a file's columns to a layout.

Every coordinate of a state is one column, named ``<owner>/<field><k>``:

* ``owner`` is ``base`` (the floating base) or a DOF joint's name (a name may itself contain
  ``/``: the field is what follows the last one);
* ``field`` is ``q`` (configuration), ``v`` (velocity), ``a`` (acceleration, the time derivative of
  ``v``) or ``tau`` (generalized force, dual to ``v``);
* ``k`` counts the owner's entries of that field from 0, in the order the convention stores them
  (:mod:`bridge.datasets.layout`): ``base/q0`` ... ``base/q6`` are MuJoCo's
  ``(x, y, z, qw, qx, qy, qz)`` and Pinocchio's ``(x, y, z, qx, qy, qz, qw)``; a ball joint has
  ``q0`` ... ``q3`` and ``v0`` ... ``v2``, a free joint ``q0`` ... ``q6`` and ``v0`` ... ``v5``.

A column named exactly like a DOF joint whose configuration is one number stands for its
``<joint>/q0`` (a header of joint names). Columns are matched by name, in any order; any other
column (``time``, ``episode``, ...) is carried through to the output unchanged. A column naming a
joint the model does not have, an entry a joint does not have, or a field whose columns are
incomplete is an error naming the columns.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass

from bridge.datasets.layout import BASE, FIELDS, Layout
from bridge.errors import DatasetError

__all__ = ["Selection", "parse", "select", "state_columns"]

_ENTRY = re.compile(r"^(q|v|a|tau)(\d+)$")


def parse(name: str) -> tuple[str, str, int] | None:
    """``(owner, field, k)`` of a state column name, or None for another column."""
    owner, sep, entry = str(name).rpartition("/")
    if not sep or not owner:
        return None
    m = _ENTRY.match(entry)
    if m is None or (len(m.group(2)) > 1 and m.group(2).startswith("0")):
        return None
    return owner, m.group(1), int(m.group(2))


def state_columns(layout: Layout, fields: Sequence[str] = ("q", "v")) -> tuple[str, ...]:
    """The column names of ``fields`` in ``layout``'s order (a file written for that convention)."""
    return tuple(name for field in fields for name in layout.columns(field))


@dataclass(frozen=True)
class Selection:
    """Where a file's columns go: ``fields`` maps each field present to the input column index of
    every entry in the layout's order; ``passthrough`` the indices of the other columns, in input
    order."""

    fields: dict[str, tuple[int, ...]]
    passthrough: tuple[int, ...]


def _close(name: str, options: Sequence[str]) -> str:
    found = difflib.get_close_matches(name, options, n=3, cutoff=0.6)
    return f" (did you mean {', '.join(repr(f) for f in found)}?)" if found else ""


def _listing(names: Sequence[str], most: int = 6) -> str:
    shown = ", ".join(repr(n) for n in names[:most])
    return shown + (f" and {len(names) - most} more" if len(names) > most else "")


def select(names: Sequence[str], layout: Layout, where: str, required: Sequence[str] = ("q",)) -> Selection:
    """Match the column ``names`` of ``where`` (a file name, for messages) to ``layout``.

    Raises :class:`~bridge.errors.DatasetError` for a repeated column, a column naming a joint the
    model lacks (or the base of a fixed-base model) or an entry its owner does not have, a field
    whose columns are incomplete (the missing ones named), or a field of ``required`` absent."""
    seen: dict[str, int] = {}
    for i, name in enumerate(names):
        if name in seen:
            raise DatasetError(
                f"{where}: column {name!r} appears twice (columns {seen[name] + 1} and {i + 1})"
            )
        seen[name] = i
    owners = layout.index
    single = {o.name for o in layout.owners if o.dof is not None and len(o.q) == 1}
    found: dict[str, dict[tuple[int, int], int]] = {f: {} for f in FIELDS}
    passthrough: list[int] = []
    for i, name in enumerate(names):
        parsed = parse(name)
        if parsed is None:
            if name in single:  # a header of joint names: the joint's one configuration entry
                if f"{name}/q0" in seen:
                    raise DatasetError(f"{where}: columns {name!r} and '{name}/q0' are the same coordinate")
                found["q"][(owners[name], 0)] = i
            elif name == BASE and layout.floating:
                raise DatasetError(f"{where}: column {name!r}: the base has several columns ({BASE}/q0, ...)")
            else:
                passthrough.append(i)
            continue
        owner, field, k = parsed
        at = owners.get(owner)
        if at is None:
            if owner == BASE:
                raise DatasetError(
                    f"{where}: column {name!r}: model {layout.model!r} has a fixed base (no base columns)"
                )
            joints = [o.name for o in layout.owners if o.dof is not None]
            raise DatasetError(
                f"{where}: column {name!r} names joint {owner!r}, which model {layout.model!r} does not "
                f"have as a DOF{_close(owner, joints)}"
            )
        o = layout.owners[at]
        width = len(o.q) if field == "q" else o.nv
        if k >= width:
            what = "the floating base" if o.dof is None else f"joint {owner!r} ({o.kind.value})"
            entries = "entry" if width == 1 else "entries"
            raise DatasetError(
                f"{where}: column {name!r}: {what} has {width} {FIELDS[field]} {entries} "
                f"in {layout.convention}'s layout ({_listing(o.columns(field))})"
            )
        found[field][(at, k)] = i
    fields: dict[str, tuple[int, ...]] = {}
    for field, entries in found.items():
        if not entries and field not in required:
            continue
        if not entries:
            raise DatasetError(
                f"{where}: no {FIELDS[field]} columns ({_listing(layout.columns(field), 3)}, ...)"
            )
        order = [
            (at, k) for at, o in enumerate(layout.owners) for k in range(len(o.q) if field == "q" else o.nv)
        ]
        missing = [layout.owners[at].columns(field)[k] for at, k in order if (at, k) not in entries]
        if missing:
            joints = sorted({m.rpartition("/")[0] for m in missing})
            raise DatasetError(
                f"{where}: missing {FIELDS[field]} column{'s' if len(missing) > 1 else ''} "
                f"{_listing(missing)} ({'owner' if len(joints) == 1 else 'owners'} {_listing(joints, 4)})"
            )
        fields[field] = tuple(entries[e] for e in order)
    return Selection(fields, tuple(passthrough))
