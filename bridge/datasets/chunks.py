"""What is done to one chunk of states: checked, converted, labelled (the unit of work everywhere).

A :class:`Job` says it once: the source convention of the states, the target to convert them to
(or none), the labels to compute and how (engine, representation, gravity). :meth:`Job.run` takes
one chunk as columns (field -> one array per entry in the source layout's order) and returns the
target's columns and the labels. The arrays API (:func:`labels_of_arrays`, ``convert_states``),
the Dask blocks (:mod:`bridge.datasets.distributed`) and the files' pipeline
(:mod:`bridge.datasets.pipeline`) all run the same job on their chunks, so the numbers do not depend
on where or in what chunks they were computed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from bridge.conventions.state import DEFAULT_GRAVITY, Representation
from bridge.datasets.convert import Rows, array_chunks, check_chunk, plan_for
from bridge.datasets.labels import Label, evaluate, kindyn
from bridge.datasets.plan import Columns, neutral_state
from bridge.errors import DatasetError
from bridge.model.model import Model

__all__ = ["LABEL_ROWS", "Job", "labels_of_arrays"]

#: states labelled at a time (the engine's work arrays and the converted states of one chunk stay
#: a few MB, reused from one chunk to the next)
LABEL_ROWS = 1 << 13


@dataclass(frozen=True)
class Job:
    """Convert chunks of ``model``'s states from ``source`` to ``target`` (None: no conversion)
    and compute ``labels`` by ``engine`` in ``representation`` (module docstring)."""

    source: str
    target: str | None = None
    labels: tuple[Label, ...] = ()
    engine: str = "featherstone"
    representation: Representation = Representation.MIXED
    gravity: tuple[float, float, float] = tuple(DEFAULT_GRAVITY)  # type: ignore[assignment]
    normalize: bool = False

    def check(self, model: Model, fields: Sequence[str]) -> None:
        """Raise :class:`~bridge.errors.DatasetError` if chunks with ``fields`` cannot be done."""
        if "q" not in fields:
            raise DatasetError("the states need their configuration (q columns)")
        if "a" in fields and "v" not in fields:
            raise DatasetError(
                "accelerations (a columns) convert with the velocities: the v columns are missing"
            )
        for label in self.labels:
            if label.velocity and "v" not in fields:
                raise DatasetError(f"{label.key} needs the velocities: the v columns are missing")
            if label.needs and label.needs not in fields:
                what = (
                    "accelerations (a columns)" if label.needs == "a" else "generalized forces (tau columns)"
                )
                raise DatasetError(f"{label.key} needs the {what}")

    def run(self, model: Model, chunk: Columns) -> tuple[Columns, dict[str, np.ndarray]]:
        """``(target columns, labels)`` of one chunk (labels: key -> (n, *shape)). A bad value
        raises :class:`~bridge.datasets.configuration.BadValueError` (row in the chunk)."""
        source = plan_for(model, self.source, self.target or self.source, self.normalize)
        check_chunk(source, chunk)
        converted = source.convert(chunk) if self.target is not None else {}
        return converted, (self._labels(model, chunk) if self.labels else {})

    def _labels(self, model: Model, chunk: Columns | Rows) -> dict[str, np.ndarray]:
        """The labels of a checked chunk (columns, or the rows of arrays)."""
        plan = plan_for(model, self.source, self.representation.value, self.normalize)
        if isinstance(chunk, Rows):
            n = chunk.rows["q"].shape[0]
            neutral = {f: np.empty((n, plan.target.width(f))) for f in chunk.rows}
            plan.convert_rows(chunk.rows, chunk.index, neutral)
        else:
            neutral = {f: np.stack(cols, axis=-1) for f, cols in plan.convert(chunk).items()}
        kd = kindyn(model, self.engine, self.representation)
        kd.set_robot_state(neutral_state(plan, neutral), np.array(self.gravity))
        return evaluate(kd, self.labels, neutral.get("a"), neutral.get("tau"))


def labels_of_arrays(
    model: Model,
    given: Mapping[str, object],
    labels: tuple[Label, ...],
    convention: object,
    engine: str,
    rep: Representation,
    gravity: object,
    columns: Mapping[str, Sequence[str]] | None,
    normalize: bool,
) -> dict[str, np.ndarray]:
    """:func:`~bridge.datasets.labels.compute` of numpy arrays in ``convention``'s layout."""
    from bridge.conventions.registry import convention as _convention

    g = np.asarray(gravity, dtype=np.float64)
    if g.shape != (3,) or not np.all(np.isfinite(g)):
        raise DatasetError(f"gravity: expected 3 finite numbers, got {gravity!r}")
    job = Job(_convention(convention).name, None, labels, engine, rep, tuple(g.tolist()), normalize)
    job.check(model, tuple(given))
    plan = plan_for(model, job.source, job.source, normalize)
    lead, n, chunks = array_chunks(plan, given, columns, LABEL_ROWS)
    out = {label.key: np.empty((n, *label.shape)) for label in labels}
    for start, chunk in chunks:
        for key, value in job._labels(model, chunk).items():
            out[key][start : start + LABEL_ROWS] = value
    return {k: v.reshape(*lead, *v.shape[1:]) for k, v in out.items()}
