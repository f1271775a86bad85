"""``compute``: dynamics labels of many states (inverse dynamics, M, h, frame poses, Jacobians, ...).

::

    labels = bridge.compute(model, (qpos, qvel), ["inverse_dynamics", "mass_matrix",
                            "frame_jacobian:l_sole"], convention="mujoco", acceleration=qacc,
                            engine="featherstone", representation="mixed")
    labels["inverse_dynamics"]          # (N, nv)
    labels["frame_jacobian[l_sole]"]    # (N, 6, nv)

``states`` is a bridge :class:`~bridge.conventions.state.State` (any batch), or a pair ``(q, v)`` of
arrays in ``convention``'s layout (numpy or Dask: :mod:`bridge.datasets.distributed`), read exactly as
:func:`~bridge.datasets.convert.convert_states` reads them. The quantities are computed by
:class:`~bridge.dynamics.kindyn.KinDyn` on batches of states (one KinDyn per thread, model, engine
and representation, set to one chunk of states at a time), in ``representation``: the generalized
axes are the neutral generalized velocity's (the base's six entries, linear first, then each DOF
joint's in the model's DOF order), the frame quantities the representation's, as KinDyn gives them.
``acceleration`` (the time derivative of ``v``; inverse dynamics, frame accelerations) and ``force``
(generalized forces; forward dynamics) are in ``convention``'s layout with ``(q, v)``, in
``representation`` with a State.

Label names: a quantity's name, with its frame in brackets for a frame quantity
(``frame_transform[l_sole]``). In a table (CSV, Parquet) each entry is one column, its indices in
brackets: ``inverse_dynamics[7]``, ``mass_matrix[6][7]``, ``frame_transform[l_sole][0][3]``.
"""

from __future__ import annotations

import difflib
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from bridge.conventions.state import DEFAULT_GRAVITY, Representation, State
from bridge.datasets.configuration import BadValueError
from bridge.errors import DatasetError
from bridge.model.model import Model

__all__ = ["QUANTITIES", "Label", "compute", "evaluate", "kindyn", "parse_labels"]


@dataclass(frozen=True)
class Quantity:
    """A label's recipe: ``shape(nv)``, whether it takes a frame, the field it needs besides
    the configuration (``a``: accelerations, ``tau``: generalized forces), and whether it depends
    on the velocity (without velocities, only those that do not are computed)."""

    shape: Callable[[int], tuple[int, ...]]
    frame: bool = False
    needs: str | None = None
    velocity: bool = True


def _vec(nv: int) -> tuple[int, ...]:
    return (nv,)


def _mat(nv: int) -> tuple[int, ...]:
    return (nv, nv)


def _six(nv: int) -> tuple[int, ...]:
    return (6,)


def _six_by(nv: int) -> tuple[int, ...]:
    return (6, nv)


#: the labels ``compute`` makes, by name
QUANTITIES: dict[str, Quantity] = {
    "inverse_dynamics": Quantity(_vec, needs="a"),
    "forward_dynamics": Quantity(_vec, needs="tau"),
    "mass_matrix": Quantity(_mat, velocity=False),
    "bias_forces": Quantity(_vec),
    "gravity_forces": Quantity(_vec, velocity=False),
    "coriolis_forces": Quantity(_vec),
    "coriolis_matrix": Quantity(_mat),
    "frame_transform": Quantity(lambda nv: (4, 4), frame=True, velocity=False),
    "frame_velocity": Quantity(_six, frame=True),
    "frame_jacobian": Quantity(_six_by, frame=True, velocity=False),
    "frame_bias_acc": Quantity(_six, frame=True),
    "frame_jacobian_derivative": Quantity(_six_by, frame=True),
    "frame_acceleration": Quantity(_six, frame=True, needs="a"),
    "com_position": Quantity(lambda nv: (3,), velocity=False),
    "com_velocity": Quantity(lambda nv: (3,)),
    "com_jacobian": Quantity(lambda nv: (3, nv), velocity=False),
    "centroidal_momentum": Quantity(_six),
    "centroidal_momentum_matrix": Quantity(_six_by, velocity=False),
    "total_momentum": Quantity(_six),
    "total_momentum_jacobian": Quantity(_six_by, velocity=False),
}


@dataclass(frozen=True)
class Label:
    """One requested label: the quantity, its frame (or None) and its shape per state."""

    quantity: str
    frame: str | None
    shape: tuple[int, ...]

    @property
    def key(self) -> str:
        """``quantity`` or ``quantity[frame]``."""
        return self.quantity if self.frame is None else f"{self.quantity}[{self.frame}]"

    @property
    def needs(self) -> str | None:
        return QUANTITIES[self.quantity].needs

    @property
    def velocity(self) -> bool:
        """Whether the label depends on the velocity."""
        return QUANTITIES[self.quantity].velocity

    def columns(self) -> tuple[str, ...]:
        """One column name per entry (C order): ``key[i]``, ``key[i][j]``."""
        return tuple(self.key + "".join(f"[{i}]" for i in idx) for idx in np.ndindex(*self.shape))


def parse_labels(model: Model, quantities: Sequence[object]) -> tuple[Label, ...]:
    """The :class:`Label` of each request: a name, ``"name:frame"`` or ``(name, frame)``. Raises
    :class:`~bridge.errors.DatasetError` for an unknown quantity, a frame quantity without a frame
    (or a frame given to another), and :class:`~bridge.errors.UnknownNameError` for an unknown frame."""
    if isinstance(quantities, str):
        quantities = [q for q in quantities.split(",") if q.strip()]
    out: list[Label] = []
    for request in quantities:
        if isinstance(request, str):
            name, _, frame = request.strip().partition(":")
            frame_name: str | None = frame.strip() or None
        else:
            try:
                name, frame_name = request  # type: ignore[misc]
            except (TypeError, ValueError):
                raise DatasetError(
                    f"quantities: {request!r} is neither a name, 'name:frame' nor (name, frame)"
                ) from None
        name = str(name).strip()
        spec = QUANTITIES.get(name)
        if spec is None:
            close = difflib.get_close_matches(name, QUANTITIES, n=3)
            hint = f" (did you mean {', '.join(close)}?)" if close else ""
            raise DatasetError(f"unknown quantity {name!r}{hint}; one of {', '.join(QUANTITIES)}")
        if spec.frame and frame_name is None:
            raise DatasetError(f"quantity {name!r} needs a frame: '{name}:FRAME'")
        if not spec.frame and frame_name is not None:
            raise DatasetError(f"quantity {name!r} takes no frame (got {frame_name!r})")
        if frame_name is not None:
            model.frame(frame_name)  # UnknownNameError with close matches
        label = Label(name, frame_name, spec.shape(model.nv))
        if any(label.key == other.key for other in out):
            raise DatasetError(f"quantities: {label.key!r} is asked for twice")
        out.append(label)
    return tuple(out)


_LOCAL = threading.local()


def kindyn(model: Model, engine: str, representation: Representation):
    """A :class:`~bridge.dynamics.kindyn.KinDyn` kept per thread, model, engine and representation
    (one KinDyn per thread is safe)."""
    from bridge.dynamics.kindyn import KinDyn

    cache = getattr(_LOCAL, "kindyns", None)
    if cache is None:
        cache = _LOCAL.kindyns = {}
    key = (id(model), engine, representation)
    found = cache.get(key)
    if found is None or found.model is not model:
        if len(cache) >= 8:
            cache.pop(next(iter(cache)))
        found = cache[key] = KinDyn(model, engine=engine, representation=representation)
    return found


def evaluate(
    kd, labels: Sequence[Label], nu_dot: np.ndarray | None, tau: np.ndarray | None
) -> dict[str, np.ndarray]:
    """Each label at the KinDyn's (batched) state: ``nu_dot`` and ``tau`` (n, nv) in its
    representation where a label needs them."""
    floating = kd.model.floating
    out: dict[str, np.ndarray] = {}
    for label in labels:
        name, frame = label.quantity, label.frame
        if label.needs == "a":
            if nu_dot is None:
                raise DatasetError(f"{label.key} needs accelerations (the time derivative of v)")
            base_acc = nu_dot[:, :6] if floating else None
            s_ddot = nu_dot[:, 6:] if floating else nu_dot
            args: tuple = (frame, base_acc, s_ddot) if frame else (base_acc, s_ddot)
        elif label.needs == "tau":
            if tau is None:
                raise DatasetError(f"{label.key} needs generalized forces (tau)")
            args = (tau,)
        else:
            args = (frame,) if frame else ()
        out[label.key] = np.asarray(getattr(kd, name)(*args))
    return out


def compute(
    model: Model,
    states: object,
    quantities: Sequence[object],
    *,
    engine: str = "featherstone",
    representation: object = "mixed",
    convention: object = None,
    acceleration: object = None,
    force: object = None,
    gravity: object = DEFAULT_GRAVITY,
    columns: Mapping[str, Sequence[str]] | None = None,
    normalize: bool = False,
) -> dict[str, object]:
    """Labels of many states (module docstring): ``{label key: array (..., *shape)}``.

    Args:
        model: the bridge Model.
        states: a State, or ``(q, v)`` in ``convention``'s layout (numpy or Dask arrays).
        quantities: names of :data:`QUANTITIES`, ``"name:frame"`` or ``(name, frame)``.
        engine: the KinDyn engine ("featherstone": bridge's batched algorithms, numba-compiled
            with the ``fast`` extra; "pinocchio", "mujoco", ...).
        representation: "body", "inertial" or "mixed": the labels' representation.
        convention: the layout of ``(q, v)``, ``acceleration`` and ``force`` (not with a State).
        acceleration: time derivatives of the velocities (..., nv), see the module docstring.
        force: generalized forces (..., nv), see the module docstring.
        gravity: (3,) in world coordinates.
        columns: column names of the arrays by field, as for ``convert_states``.
        normalize: accept quaternions of any non-zero norm.
    """
    if not isinstance(model, Model):
        raise DatasetError(f"model: expected a bridge Model, got {type(model).__name__}")
    labels = parse_labels(model, quantities)
    rep = Representation.parse(representation)
    engine = str(engine).strip().lower()
    from bridge.backends.registry import engine_class

    engine_class(engine)  # an unknown engine, or its library missing
    if isinstance(states, State):
        if convention is not None:
            raise DatasetError("compute: give convention= with (q, v) arrays, not with a State")
        return _from_state(model, states, labels, engine, rep, acceleration, force, gravity)
    try:
        q, v = states  # type: ignore[misc]
    except (TypeError, ValueError):
        raise DatasetError(
            f"compute: states must be a bridge State or a pair (q, v) of arrays, got {type(states).__name__}"
        ) from None
    if convention is None:
        raise DatasetError("compute: (q, v) arrays need convention= (the library whose layout they are in)")
    from bridge.datasets.distributed import is_dask

    given = {"q": q, "v": v, "a": acceleration, "tau": force}
    given = {f: x for f, x in given.items() if x is not None}
    if any(is_dask(x) for x in given.values()):
        from bridge.datasets.distributed import compute_dask

        return compute_dask(model, given, labels, convention, engine, rep, gravity, columns, normalize)
    from bridge.datasets.chunks import labels_of_arrays

    return labels_of_arrays(model, given, labels, convention, engine, rep, gravity, columns, normalize)


def _from_state(
    model: Model, state: State, labels, engine: str, rep: Representation, acceleration, force, gravity
) -> dict[str, object]:
    """Labels of a State (converted to ``rep``), chunk by chunk."""
    from bridge.datasets.chunks import LABEL_ROWS as CHUNK

    state = state.to(rep)
    lead = np.broadcast_shapes(
        state.world_H_base.batch_shape,
        state.s.shape[:-1],
        state.base_velocity.shape[:-1],
        state.s_dot.shape[:-1],
    )
    n = int(np.prod(lead, dtype=int))
    H = np.broadcast_to(state.world_H_base.matrix, (*lead, 4, 4)).reshape(n, 4, 4)
    flat = [
        np.broadcast_to(x, (*lead, x.shape[-1])).reshape(n, x.shape[-1])
        for x in (state.s, state.base_velocity, state.s_dot)
    ]
    extra = {}
    for name, x in (("acceleration", acceleration), ("force", force)):
        if x is not None:
            arr = np.asarray(x, dtype=np.float64)
            if arr.shape[-1:] != (model.nv,) or arr.shape[:-1] not in (lead, ()):
                raise DatasetError(f"{name}: expected shape {(*lead, model.nv)}, got {arr.shape}")
            extra[name] = np.broadcast_to(arr, (*lead, model.nv)).reshape(n, model.nv)
    out: dict[str, np.ndarray] = {}
    kd = kindyn(model, engine, rep)
    layout_arg = None if model.single_coordinate else model
    for start in range(0, n, CHUNK):
        sl = slice(start, start + CHUNK)
        chunk = State(H[sl], flat[0][sl], flat[1][sl], flat[2][sl], rep, layout=layout_arg)
        kd.set_robot_state(chunk, gravity)
        a = extra.get("acceleration")
        f = extra.get("force")
        values = evaluate(kd, labels, None if a is None else a[sl], None if f is None else f[sl])
        for key, value in values.items():
            if key not in out:
                out[key] = np.empty((n, *value.shape[1:]))
            out[key][sl] = value
    return {k: v.reshape(*lead, *v.shape[1:]) for k, v in out.items()}


def located(exc: BadValueError, start: int, what: str) -> DatasetError:
    """A bad value at row ``start + exc.row`` of ``what`` (an argument or a file)."""
    return DatasetError(f"{what}, row {start + exc.row + 1}, {exc.where}: {exc.problem}")
