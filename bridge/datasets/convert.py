"""``convert_states``: many states from one library's layout to another's, as arrays.

::

    qpos, qvel = ...                                   # (N, nq), (N, nv): a MuJoCo rollout
    q, v = bridge.convert_states(model, qpos, qvel, "mujoco", "pinocchio")
    q, v, a = bridge.convert_states(model, qpos, qvel, "mujoco", "drake", acceleration=qacc)

Any number of leading axes; numpy arrays, or Dask arrays (the same conversion on every block of
rows, lazily: :mod:`bridge.datasets.distributed`). Columns are matched by name
(:mod:`bridge.datasets.columns`): ``columns={"q": names, ...}`` names each column of the arrays
given, in any order (a log whose DOF order is not the model's); without it the arrays are in the
source convention's own order. The states are checked on the way: a NaN or infinite entry, a
quaternion or ``(cos, sin)`` pair not of unit norm is an error naming the argument, the row and the
column. The conversion runs chunk by chunk (:data:`CHUNK` states), so its temporary memory does not
grow with the number of states.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from bridge.datasets.columns import select
from bridge.datasets.configuration import BadValueError, check_configuration, check_finite
from bridge.datasets.layout import FIELDS, Layout, layout
from bridge.datasets.plan import StatePlan
from bridge.errors import DatasetError
from bridge.model.model import Model

__all__ = ["CHUNK", "NativeStates", "Rows", "convert_states", "plan_for", "state_columns"]

#: states converted at a time (the temporaries of one chunk: a few MB for a humanoid)
CHUNK = 1 << 16

#: argument name of each field
ARGUMENTS = {"q": "q", "v": "v", "a": "acceleration", "tau": "force"}


@dataclass(frozen=True)
class NativeStates:
    """States in a library's layout: ``q`` (..., nq), ``v`` (..., nv), ``acceleration`` and
    ``force`` (..., nv) where converted (None otherwise). Iterating gives the arrays present, in
    that order, so ``q, v = convert_states(...)`` and ``q, v, a = convert_states(...,
    acceleration=a)`` both unpack."""

    q: object
    v: object = None
    acceleration: object = None
    force: object = None

    def __iter__(self) -> Iterator[object]:
        return iter([x for x in (self.q, self.v, self.acceleration, self.force) if x is not None])

    def __len__(self) -> int:
        return sum(x is not None for x in (self.q, self.v, self.acceleration, self.force))


def state_columns(model: Model, convention: object, fields: Sequence[str] = ("q", "v")) -> tuple[str, ...]:
    """The column names of ``fields`` (``q``, ``v``, ``a``, ``tau``) of ``model``'s states in
    ``convention``, in its order: a file's header (module :mod:`bridge.datasets.columns`)."""
    lay = layout(model, convention)
    return tuple(name for field in fields for name in lay.columns(field))


_PLANS: dict[tuple[int, str, str, bool], tuple[Model, StatePlan]] = {}
_PLANS_LOCK = threading.Lock()


def plan_for(model: Model, source: object, target: object, normalize: bool = False) -> StatePlan:
    """The :class:`StatePlan` of ``model`` from ``source`` to ``target`` (the last few kept; a plan
    is read-only once made, so threads share it)."""
    from bridge.conventions.registry import convention

    key = (id(model), convention(source).name, convention(target).name, bool(normalize))
    with _PLANS_LOCK:
        found = _PLANS.get(key)
        if found is not None and found[0] is model:
            return found[1]
        plan = StatePlan(model, source, target, normalize)
        _PLANS[key] = (model, plan)
        while len(_PLANS) > 16:
            _PLANS.pop(next(iter(_PLANS)))
        return plan


def _numeric(x: object, name: str) -> np.ndarray:
    try:
        arr = np.asarray(x)
    except Exception as exc:  # (ragged lists, objects numpy cannot take)
        raise DatasetError(f"{name}: not an array of numbers ({exc})") from None
    if arr.dtype.kind not in "fiub":
        raise DatasetError(f"{name}: an array of numbers is expected, got dtype {arr.dtype}")
    if arr.ndim < 1:
        raise DatasetError(f"{name}: expected an array (..., k) of states, got a scalar")
    return arr


def gathers(
    lay: Layout, given: Mapping[str, np.ndarray], columns: Mapping[str, Sequence[str]] | None
) -> dict[str, tuple[int, ...]]:
    """For each field given, the index of each of the layout's entries among the array's columns
    (names matched when ``columns`` names them, else the layout's own order, checked by width)."""
    out: dict[str, tuple[int, ...]] = {}
    columns = dict(columns or {})
    unknown = set(columns) - set(FIELDS)
    if unknown:
        raise DatasetError(f"columns: unknown field {sorted(unknown)[0]!r}; fields are {', '.join(FIELDS)}")
    for field, arr in given.items():
        arg = ARGUMENTS[field]
        width = arr.shape[-1]
        names = columns.get(field)
        if names is None:
            if width != lay.width(field):
                raise DatasetError(
                    f"{arg}: {width} columns, but model {lay.model!r} has {lay.width(field)} "
                    f"{FIELDS[field]} entries in {lay.convention}'s layout (give "
                    f"columns={{{field!r}: names}} to match columns by name)"
                )
            out[field] = tuple(range(width))
            continue
        names = [str(n) for n in names]
        if len(names) != width:
            raise DatasetError(f"columns[{field!r}]: {len(names)} names for the {width} columns of {arg}")
        sel = select(names, lay, f"{arg} (columns matched by name)", required=(field,))
        stray = [names[i] for i in sel.passthrough] + [
            names[i] for f, idx in sel.fields.items() if f != field for i in idx
        ]
        if stray:
            raise DatasetError(f"{arg}: column {stray[0]!r} is not one of its {FIELDS[field]} columns")
        out[field] = sel.fields[field]
    return out


def convert_states(
    model: Model,
    q: object,
    v: object,
    source: object,
    target: object,
    *,
    acceleration: object = None,
    force: object = None,
    columns: Mapping[str, Sequence[str]] | None = None,
    normalize: bool = False,
) -> NativeStates:
    """``model``'s states from convention ``source`` to ``target`` (module docstring).

    Args:
        model: the bridge Model the states belong to.
        q: configurations (..., nq) in ``source``'s layout (or named by ``columns["q"]``).
        v: velocities (..., nv), or None (configurations only).
        source: the arrays' convention ("mujoco", "pinocchio", "drake", "featherstone", "newton",
            "jaxsim", ...; "body", "inertial", "mixed" for bridge's own State layout).
        target: the convention to convert to (the same names).
        acceleration: time derivatives of ``v`` (..., nv) (needs ``v``), or None.
        force: generalized forces (..., nv), dual to ``v``, or None.
        columns: the column names of each array given, by field (``q``, ``v``, ``a``, ``tau``).
        normalize: accept quaternions of any non-zero norm (written normalised).

    Returns:
        :class:`NativeStates` in ``target``'s layout, with the leading axes of the inputs.
    """
    given_raw = {"q": q, "v": v, "a": acceleration, "tau": force}
    given_raw = {f: x for f, x in given_raw.items() if x is not None}
    if not isinstance(model, Model):
        raise DatasetError(f"model: expected a bridge Model, got {type(model).__name__}")
    from bridge.datasets.distributed import is_dask

    if any(is_dask(x) for x in given_raw.values()):
        from bridge.datasets.distributed import convert_dask

        return NativeStates(**_named(convert_dask(model, given_raw, source, target, columns, normalize)))
    plan = plan_for(model, source, target, normalize)
    if "a" in given_raw and "v" not in given_raw:
        raise DatasetError("accelerations convert with the velocities (X_dot v): give v too")
    lead, n, chunks = array_chunks(plan, given_raw, columns)
    out = {f: np.empty((n, plan.target.width(f))) for f in given_raw}
    for start, chunk in chunks:
        plan.convert_rows(chunk.rows, chunk.index, {f: x[start : start + CHUNK] for f, x in out.items()})
    return NativeStates(**_named({f: x.reshape(*lead, x.shape[-1]) for f, x in out.items()}))


def array_chunks(
    plan: StatePlan,
    given_raw: Mapping[str, object],
    columns: Mapping[str, Sequence[str]] | None,
    rows: int = CHUNK,
) -> tuple[tuple[int, ...], int, Iterator[tuple[int, dict[str, list[np.ndarray]]]]]:
    """``(leading shape, number of states, chunks)`` of the arrays ``given_raw`` (field -> array in
    ``plan.source``'s layout or named by ``columns``): each chunk of at most ``rows`` states
    ``(first row, its Rows)``, checked (:func:`check_chunk`; a bad value raises a
    :class:`~bridge.errors.DatasetError` naming the argument, the state and the column)."""
    if "q" not in given_raw:
        raise DatasetError("q: the configurations are required")
    given = {f: _numeric(x, ARGUMENTS[f]) for f, x in given_raw.items()}
    lead = given["q"].shape[:-1]
    for f, arr in given.items():
        if arr.shape[:-1] != lead:
            raise DatasetError(
                f"{ARGUMENTS[f]}: {_count(arr.shape[:-1])} states (leading shape {arr.shape[:-1]}), "
                f"but q has {_count(lead)} (leading shape {lead})"
            )
    index = gathers(plan.source, given, columns)
    flat = {f: arr.reshape(-1, arr.shape[-1]) for f, arr in given.items()}
    n = _count(lead)

    def chunks() -> Iterator[tuple[int, Rows]]:
        for start in range(0, n, rows):
            chunk = Rows({f: x[start : start + rows] for f, x in flat.items()}, index)
            try:
                chunk.check(plan)
            except BadValueError as exc:
                raise _located(exc, start, lead) from None
            yield start, chunk

    return lead, n, chunks()


class Rows:
    """A chunk of arrays: ``rows`` field -> (n, k) float64 rows, ``index`` field -> the column of
    each of the source layout's entries."""

    def __init__(self, rows: dict[str, np.ndarray], index: dict[str, tuple[int, ...]]) -> None:
        self.rows = {f: x.astype(np.float64, copy=False) for f, x in rows.items()}
        self.index = index

    def columns(self) -> dict[str, list[np.ndarray]]:
        """Field -> one array (n,) per entry of the source layout (views of the rows)."""
        return {f: [x[:, i] for i in self.index[f]] for f, x in self.rows.items()}

    def check(self, plan: StatePlan) -> None:
        """:func:`check_chunk`, with the finiteness of each field tested at once first."""
        columns = self.columns()
        for field, x in self.rows.items():
            if not np.isfinite(x).all():
                check_chunk(plan, {field: columns[field]}, configuration=False)
        check_configuration(plan.source, columns["q"], plan.normalize)


def check_chunk(
    plan: StatePlan, chunk: Mapping[str, Sequence[np.ndarray]], configuration: bool = True
) -> None:
    """Raise :class:`BadValueError` for a NaN or infinite entry of any field, or a configuration no
    state has (quaternions and (cos, sin) pairs; module :mod:`.configuration`). The columns named
    in the error carry the field's prefix (``q``: ``base/q3``)."""
    for field, cols in chunk.items():
        try:
            check_finite(cols, plan.source.columns(field))
        except BadValueError as exc:
            raise BadValueError(exc.row, exc.columns, exc.problem, field) from None
    if configuration:
        check_configuration(plan.source, chunk["q"], plan.normalize)


def _count(shape: tuple[int, ...]) -> int:
    return int(np.prod(shape, dtype=int))


def _located(exc: BadValueError, start: int, lead: tuple[int, ...]) -> DatasetError:
    """The error of a bad value at row ``start + exc.row`` of the flattened states."""
    flat = start + exc.row
    where = (
        f"state {flat}" if len(lead) <= 1 else f"state {tuple(int(i) for i in np.unravel_index(flat, lead))}"
    )
    return DatasetError(f"convert_states: {ARGUMENTS[exc.field]}, {where}, {exc.where}: {exc.problem}")


def _named(fields: Mapping[str, object]) -> dict[str, object]:
    """Fields by :class:`NativeStates`' attribute names."""
    names = {"q": "q", "v": "v", "a": "acceleration", "tau": "force"}
    return {names[f]: x for f, x in fields.items()}
