"""Files of states read and written in blocks of rows: the formats, told apart by the file's suffix.

* ``.npz`` (:mod:`bridge.datasets.npz_files`): NumPy's archive, one array per field, ``q`` (N, nq),
  ``v``, ``a``, ``tau`` (N, nv) (MuJoCo's names ``qpos``, ``qvel``, ``qacc`` are read too), their
  column names in ``q_columns``, ... (without them: the source convention's order), each label an
  array (N, *shape), other arrays of N rows carried through;
* ``.csv`` (:mod:`bridge.datasets.csv_files`): a header of column names, one state per line;
* ``.parquet`` / ``.pq`` (:mod:`bridge.datasets.parquet_files`, pyarrow): one column per coordinate.

Column names: :mod:`bridge.datasets.columns` (states) and :mod:`bridge.datasets.labels` (labels).
A reader yields :class:`Block` s of at most the rows asked for, so memory does not grow with the
file; a writer takes :class:`OutBlock` s and writes them as they come, to the temporary file of
:func:`~bridge.datasets.atomic.atomic_output`. Every reading error names the file, and where there
is one the row (counted from 1, the header not counted) and the column.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from bridge.errors import DatasetError

__all__ = [
    "FORMATS",
    "Block",
    "OutBlock",
    "OutputSpec",
    "Reader",
    "Writer",
    "file_format",
    "open_reader",
    "open_writer",
]

#: suffix -> format name
FORMATS = {".npz": "npz", ".csv": "csv", ".parquet": "parquet", ".pq": "parquet"}


def file_format(path: Path) -> str:
    """The format of ``path`` by its suffix (:data:`FORMATS`)."""
    fmt = FORMATS.get(Path(path).suffix.lower())
    if fmt is None:
        raise DatasetError(
            f"{path}: unknown file format {Path(path).suffix or '(no suffix)'!r}; use one of "
            f"{', '.join(sorted(FORMATS))}"
        )
    return fmt


@dataclass
class Block:
    """Rows ``start`` to ``start + n - 1`` (0-based) of a file: ``columns`` by name, the numeric
    ones as float64 arrays (n,), the others as read (numpy or pyarrow arrays, (n, ...))."""

    start: int
    n: int
    columns: dict[str, Any]


@dataclass
class OutBlock:
    """Rows to write: ``fields`` (field -> one array (n,) per column), ``labels`` (key -> (n,
    *shape)) and ``passthrough`` (name -> the input's array) for ``n`` rows."""

    n: int
    fields: dict[str, list[np.ndarray]] = field(default_factory=dict)
    labels: dict[str, np.ndarray] = field(default_factory=dict)
    passthrough: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class OutputSpec:
    """What an output holds: the passthrough columns' names and the shape of a row of each (an NPZ
    array of N rows may have more axes: ``ctrl`` (N, 12) is ``ctrl[0]`` ... ``ctrl[11]`` in a
    table), each field's column names (in the target's order), each label's key and column names."""

    passthrough: tuple[tuple[str, tuple[int, ...]], ...]
    fields: tuple[tuple[str, tuple[str, ...]], ...]
    labels: tuple[tuple[str, tuple[int, ...], tuple[str, ...]], ...]

    def column_names(self) -> list[str]:
        """Every column of a table output, in order (passthrough, fields, labels)."""
        other = [
            name + "".join(f"[{i}]" for i in idx)
            for name, shape in self.passthrough
            for idx in np.ndindex(*shape)
        ]
        return [
            *other,
            *(n for _, names in self.fields for n in names),
            *(n for _, _, names in self.labels for n in names),
        ]


class Reader(Protocol):
    """A file of states opened for reading."""

    path: Path
    names: tuple[str, ...]
    rows: int | None
    #: the shape of one row of each column with more axes (NPZ arrays; others: one value)
    shapes: dict[str, tuple[int, ...]]

    def blocks(self, rows: int, numeric: Collection[str]) -> Iterator[Block]: ...

    def close(self) -> None: ...


class Writer(Protocol):
    """A file being written (to a temporary path)."""

    def write(self, block: OutBlock) -> None: ...

    def close(self) -> None: ...


def open_reader(path: Path, default_names: Any) -> Reader:
    """A reader of ``path`` (by its suffix). ``default_names(field, width)`` gives the column
    names of an NPZ array stored without its ``<field>_columns``."""
    path = Path(path)
    fmt = file_format(path)
    if not path.exists():
        raise DatasetError(f"{path}: no such file")
    if path.is_dir():
        raise DatasetError(f"{path} is a directory, not a file of states")
    if fmt == "npz":
        from bridge.datasets.npz_files import NpzReader

        return NpzReader(path, default_names)
    if fmt == "csv":
        from bridge.datasets.csv_files import CsvReader

        return CsvReader(path)
    from bridge.datasets.parquet_files import ParquetReader

    return ParquetReader(path)


def open_writer(tmp: Path, fmt: str, spec: OutputSpec, shown: Path) -> Writer:
    """A writer of format ``fmt`` to the temporary path ``tmp`` (``shown``: the output's name in
    messages)."""
    if fmt == "npz":
        from bridge.datasets.npz_files import NpzWriter

        return NpzWriter(tmp, spec, shown)
    if fmt == "csv":
        from bridge.datasets.csv_files import CsvWriter

        return CsvWriter(tmp, spec, shown)
    from bridge.datasets.parquet_files import ParquetWriter

    return ParquetWriter(tmp, spec, shown)


def float_column(values: Any, path: Path, name: str, start: int) -> np.ndarray:
    """A numeric column as float64 (n,), or an error naming the row of a missing value."""
    arr = np.asarray(values)
    if arr.dtype.kind in "fiu":
        return arr.astype(np.float64, copy=False)
    if arr.dtype.kind == "b":
        raise DatasetError(f"{path}, column {name!r}: true/false values, not numbers")
    bad = 0
    for i, x in enumerate(arr.ravel()):
        try:
            float(x)
        except (TypeError, ValueError):
            bad = i
            break
    raise DatasetError(
        f"{path}, row {start + bad + 1}, column {name!r}: {arr.ravel()[bad]!r} is not a number"
    )


def arrow_columns(batch: Any, path: Path, numeric: Collection[str], start: int) -> dict[str, Any]:
    """The columns of a pyarrow RecordBatch: numeric ones as float64 numpy arrays (an empty cell
    or a text value is an error naming the row and column), the others as pyarrow arrays."""
    import pyarrow as pa

    out: dict[str, Any] = {}
    for name, col in zip(batch.schema.names, batch.columns, strict=True):
        if name not in numeric:
            out[name] = col
            continue
        if col.null_count:
            row = int(np.flatnonzero(np.asarray(col.is_null()))[0])
            raise DatasetError(
                f"{path}, row {start + row + 1}, column {name!r}: empty (a number is expected)"
            )
        t = col.type
        if pa.types.is_floating(t) or pa.types.is_integer(t):
            out[name] = col.to_numpy(zero_copy_only=False).astype(np.float64, copy=False)
        elif pa.types.is_decimal(t):
            out[name] = np.asarray(col.cast(pa.float64()).to_numpy(zero_copy_only=False))
        else:
            out[name] = float_column(col.to_numpy(zero_copy_only=False), path, name, start)
    return out


def arrow_array(values: Any) -> Any:
    """A pyarrow array of a numpy column (contiguous) or of a pyarrow array."""
    import pyarrow as pa

    if isinstance(values, pa.Array | pa.ChunkedArray):
        return values
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise DatasetError(f"a column of shape {arr.shape} cannot be a table column (one value per row)")
    return pa.array(np.ascontiguousarray(arr))


def table_arrays(spec: OutputSpec, block: OutBlock) -> list[Any]:
    """The pyarrow arrays of one block, in :meth:`OutputSpec.column_names` order."""
    arrays = []
    for name, shape in spec.passthrough:
        values = block.passthrough[name]
        if shape:  # an NPZ array with more axes: one column per entry
            arrays += [
                arrow_array(c) for c in np.ascontiguousarray(np.asarray(values).reshape(block.n, -1).T)
            ]
        else:
            arrays.append(arrow_array(values))
    for f, _ in spec.fields:
        arrays += [arrow_array(c) for c in block.fields[f]]
    for key, _, _ in spec.labels:
        flat = np.ascontiguousarray(block.labels[key].reshape(block.n, -1).T)
        arrays += [arrow_array(row) for row in flat]
    return arrays
