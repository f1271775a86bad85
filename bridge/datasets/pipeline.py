"""``convert_dataset``: a file of states to another file, converted and labelled, block by block.

::

    bridge.convert_dataset(model, "rollout.npz", "rollout_pin.parquet", "mujoco", "pinocchio",
                           quantities=["inverse_dynamics"], engine="featherstone")

The input is read in blocks of rows (:mod:`bridge.datasets.tables`), each block's state columns are
matched by name to the source layout once (:mod:`bridge.datasets.columns`), checked, converted and
labelled by one :class:`~bridge.datasets.chunks.Job` (in this process, or on a Dask cluster:
:func:`~bridge.datasets.distributed.executor`), and written as it comes back, in order, to a
temporary file that becomes the output only when every row was written
(:func:`~bridge.datasets.atomic.atomic_output`). Memory is that of a few blocks, whatever the
number of rows.

The output holds the input's other columns first (``time``, ...), then the target's ``q`` and the
velocity-sized fields the input has (``v``, ``a``, ``tau``), then the labels. Without a target the
states are not written (labels only, with the other columns).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bridge.conventions.registry import convention as _convention
from bridge.conventions.state import DEFAULT_GRAVITY, Representation
from bridge.datasets.atomic import atomic_output, check_output
from bridge.datasets.chunks import Job
from bridge.datasets.columns import select
from bridge.datasets.configuration import BadValueError
from bridge.datasets.convert import plan_for
from bridge.datasets.distributed import ModelSpec, executor
from bridge.datasets.labels import parse_labels
from bridge.datasets.layout import FIELDS, Layout, layout
from bridge.datasets.tables import OutBlock, OutputSpec, file_format, open_reader, open_writer
from bridge.errors import DatasetError
from bridge.model.model import Model

__all__ = ["Summary", "block_rows", "convert_dataset"]

#: bytes of state and label columns per block (the rows of a block follow from the columns)
BLOCK_BYTES = 32 << 20


@dataclass(frozen=True)
class Summary:
    """What :func:`convert_dataset` did: rows, seconds, where it ran and what it wrote."""

    input: Path
    output: Path
    rows: int
    seconds: float
    source: str
    target: str | None
    labels: tuple[str, ...]
    where: str

    @property
    def rate(self) -> float:
        """States per second."""
        return self.rows / self.seconds if self.seconds > 0 else float("inf")

    def line(self) -> str:
        """One line for a log."""
        what = f"{self.source} -> {self.target}" if self.target else f"{self.source} states"
        labels = f", labels {', '.join(self.labels)}" if self.labels else ""
        return (
            f"converted {self.rows:,} states ({what}{labels}) from {self.input} to {self.output} "
            f"in {self.seconds:.2f} s ({self.rate:,.0f} states/s, {self.where})"
        )


def block_rows(columns: int) -> int:
    """Rows per block for ``columns`` float columns (in and out): :data:`BLOCK_BYTES` of them,
    between 1,024 and 262,144."""
    return int(min(1 << 18, max(1 << 10, BLOCK_BYTES // (8 * max(1, columns)))))


def _process(spec: ModelSpec, job: Job, item: tuple[int, dict[str, np.ndarray]]) -> tuple:
    """One block (on a worker or here): ``(first row, target fields, labels)``, each field one
    array (k, n) of its columns (a few arrays travel to and from a worker, not hundreds); a bad
    value is a :class:`~bridge.errors.DatasetError` naming the row (from 1) and the column."""
    start, chunk = item
    try:
        converted, labels = job.run(spec.model(), {f: list(x) for f, x in chunk.items()})
    except BadValueError as exc:
        raise DatasetError(f"row {start + exc.row + 1}, {exc.where}: {exc.problem}") from None
    return start, {f: np.stack(cols) for f, cols in converted.items()}, labels


def convert_dataset(
    model: Model,
    input: Path | str,
    output: Path | str,
    source: object,
    target: object = None,
    *,
    quantities: Sequence[object] = (),
    engine: str = "featherstone",
    representation: object = "mixed",
    gravity: object = DEFAULT_GRAVITY,
    force: bool = False,
    rows: int | None = None,
    normalize: bool = False,
    scheduler: str | None = None,
    workers: int | None = None,
    progress: Callable[[int, int | None], None] | None = None,
) -> Summary:
    """Convert (and label) the states of the file ``input`` into the file ``output`` (module
    docstring); formats by suffix (``.npz``, ``.csv``, ``.parquet``).

    Args:
        model: the bridge Model of the states.
        input: the file of states (``.npz``, ``.csv``, ``.parquet``).
        output: the file to write; it must not exist (``force``: replaced) nor be ``input``.
        source: the input's convention.
        target: the output's convention (None: no states written, labels only).
        quantities: the labels, as :func:`bridge.compute` takes them.
        engine: the labels' engine.
        representation: the labels' representation.
        gravity: (3,) in world coordinates.
        force: replace an existing output.
        rows: rows per block (default: :func:`block_rows`).
        normalize: accept quaternions of any non-zero norm (written normalised).
        scheduler: run the blocks on the ``dask.distributed`` scheduler at this address.
        workers: run the blocks on a local Dask cluster of that many worker processes.
        progress: called with ``(rows done, total rows or None)`` after each block.

    Raises:
        DatasetError: the files, their columns or their values (file, row and column named);
            nothing is written then.
    """
    input, output = Path(input), Path(output)
    t0 = time.perf_counter()
    src = _convention(source).name
    tgt = _convention(target).name if target is not None else None
    rep = Representation.parse(representation)
    labels = parse_labels(model, quantities)
    if labels:
        from bridge.backends.registry import engine_class

        engine_class(engine)  # an unknown engine, or its library missing: before any work
    if tgt is None and not labels:
        raise DatasetError("nothing to write: give a target convention or quantities to compute")
    g = np.asarray(gravity, dtype=np.float64)
    if g.shape != (3,) or not np.all(np.isfinite(g)):
        raise DatasetError(f"gravity: expected 3 finite numbers, got {gravity!r}")
    fmt = file_format(output)
    check_output(output, force, [input])
    src_layout = layout(model, src)
    reader = open_reader(input, lambda field, width: _default_names(src_layout, field, width, input))
    try:
        selection = select(reader.names, src_layout, str(input))
        fields = tuple(f for f in FIELDS if f in selection.fields)
        job = Job(src, tgt, labels, str(engine).strip().lower(), rep, tuple(g.tolist()), normalize)
        job.check(model, fields)
        plan = plan_for(model, src, tgt or src, normalize)  # (made here: its errors before any work)
        names = [reader.names[i] for i in selection.passthrough]
        spec = OutputSpec(
            tuple((n, tuple(reader.shapes.get(n, ()))) for n in names),
            tuple((f, plan.target.columns(f)) for f in fields) if tgt is not None else (),
            tuple((lab.key, lab.shape, lab.columns()) for lab in labels),
        )
        numeric = [reader.names[i] for idx in selection.fields.values() for i in idx]
        per_row = len(numeric) + len(spec.column_names())
        size = int(rows) if rows is not None else block_rows(per_row)
        if size < 1:
            raise DatasetError(f"rows per block must be at least 1, got {rows}")
        field_names = {f: [reader.names[i] for i in idx] for f, idx in selection.fields.items()}
        done = 0
        with atomic_output(output, force, [input]) as tmp, executor(scheduler, workers) as run:
            writer = open_writer(tmp, fmt, spec, output)
            try:
                _metadata(reader, writer, fmt, output)
                blocks = reader.blocks(size, numeric)
                passthrough: dict[int, dict] = {}

                def items():
                    for block in blocks:
                        passthrough[block.start] = {n: block.columns[n] for n in names}
                        chunk = {
                            f: np.stack([block.columns[n] for n in cols]) for f, cols in field_names.items()
                        }
                        yield block.start, chunk

                for start, converted, labelled in run.map(_process, items(), ModelSpec(model), job):
                    n = (
                        next(iter(converted.values())).shape[1]
                        if converted
                        else next(iter(labelled.values())).shape[0]
                    )
                    out = OutBlock(
                        n,
                        {f: list(converted[f]) for f in fields} if tgt else {},
                        labelled,
                        passthrough.pop(start),
                    )
                    writer.write(out)
                    done += n
                    if progress is not None:
                        progress(done, reader.rows)
            except DatasetError as exc:
                _discard(writer)
                raise DatasetError(_in_file(str(exc), input)) from None
            except BaseException:
                _discard(writer)
                raise
            writer.close()
    finally:
        reader.close()
    return Summary(
        input, output, done, time.perf_counter() - t0, src, tgt, tuple(lab.key for lab in labels), run.where
    )


def _default_names(lay: Layout, field: str, width: int, path: Path) -> tuple[str, ...]:
    """The column names of an NPZ array stored without them: the source layout's, if the width
    is its."""
    if width != lay.width(field):
        raise DatasetError(
            f"{path}: the {FIELDS[field]} array has {width} columns, but model {lay.model!r} has "
            f"{lay.width(field)} in {lay.convention}'s layout (store the column names as "
            f"'{field}_columns' to match them by name)"
        )
    return lay.columns(field)


def _metadata(reader: object, writer: object, fmt: str, output: Path) -> None:
    """An NPZ input's arrays of no axes: into an NPZ output, else a warning."""
    metadata = getattr(reader, "metadata", None)
    if not metadata:
        return
    if fmt == "npz":
        writer.metadata.update(metadata)  # type: ignore[attr-defined]
    else:
        from bridge.datasets.npz_files import warn_metadata_dropped

        warn_metadata_dropped(metadata, output)


def _discard(writer: object) -> None:
    discard = getattr(writer, "discard", None)
    if discard is not None:
        discard()


def _in_file(message: str, path: Path) -> str:
    """``message`` with the input file named (once)."""
    return message if message.startswith(str(path)) else f"{path}, {message}"
