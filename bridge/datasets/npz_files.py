"""NPZ archives of states (NumPy's ``np.savez``), read and written in blocks of rows.

An archive holds one array per field: ``q`` (N, nq) (or MuJoCo's name ``qpos``), ``v`` (``qvel``),
``a`` (``qacc``) and ``tau`` (N, nv), and optionally their column names as arrays of strings,
``q_columns``, ``v_columns``, ... (without them the columns are in the source convention's order,
and the width must be its). Any other array of N rows (``time``, ``ctrl``, ...) is carried through
to the output; an array of no axes (``dt``) is carried to an NPZ output. A label is one array (N,
*shape) named by its key. Arrays of Python objects are refused (pickles are never loaded).

Rows are read from each array's member of the archive as a stream (its ``.npy`` header, then the
bytes of the rows asked for), so memory does not grow with N; an array in Fortran order is read one
stream per column. The writer appends each array's rows to a raw temporary file beside the output
and assembles the archive (headers with the final N, the rows copied in pieces) when it is closed.
"""

from __future__ import annotations

import contextlib
import warnings
import zipfile
from collections.abc import Callable, Collection, Iterator
from pathlib import Path
from typing import Any

import numpy as np
from numpy.lib import format as npy

from bridge.datasets.tables import Block, OutBlock, OutputSpec
from bridge.errors import BridgeWarning, DatasetError

__all__ = ["ALIASES", "NpzReader", "NpzWriter"]

#: the array names of each field (the first is the one written)
ALIASES = {"q": ("q", "qpos"), "v": ("v", "qvel"), "a": ("a", "qacc"), "tau": ("tau",)}
_PIECE = 1 << 20  # bytes copied at a time


class _Member:
    """One ``.npy`` member: its shape, order, dtype and where its data start."""

    def __init__(self, archive: zipfile.ZipFile, name: str, path: Path) -> None:
        self.archive, self.name, self.member = archive, name[:-4], name
        try:
            with archive.open(name) as f:
                version = npy.read_magic(f)
                if version == (1, 0):
                    shape, fortran, dtype = npy.read_array_header_1_0(f)
                else:
                    shape, fortran, dtype = npy.read_array_header_2_0(f)
                self.offset = f.tell()
        except (ValueError, OSError, zipfile.BadZipFile) as exc:
            raise DatasetError(f"{path}: array {self.name!r} is not a readable .npy array ({exc})") from None
        if dtype.hasobject:
            raise DatasetError(
                f"{path}: array {self.name!r} holds Python objects (not read: pickles are not loaded)"
            )
        self.shape, self.fortran, self.dtype = tuple(shape), bool(fortran), dtype

    def stream(self, skip: int = 0) -> Any:
        f = self.archive.open(self.member)
        f.seek(self.offset + skip)
        return f

    def whole(self) -> np.ndarray:
        with self.stream() as f:
            data = f.read()
        return np.frombuffer(data, dtype=self.dtype).reshape(self.shape, order="F" if self.fortran else "C")


def _read(f: Any, nbytes: int, path: Path, name: str) -> bytes:
    data = f.read(nbytes)
    if len(data) != nbytes:
        raise DatasetError(f"{path}: array {name!r} ends early (the archive is truncated)")
    return data


class NpzReader:
    """An NPZ archive of states (module docstring). ``default_names(field, width)``: the column
    names of a field stored without ``<field>_columns``."""

    def __init__(self, path: Path, default_names: Callable[[str, int], tuple[str, ...]]) -> None:
        self.path = path
        try:
            self._zip = zipfile.ZipFile(path)
        except (zipfile.BadZipFile, OSError) as exc:
            raise DatasetError(f"{path}: not an NPZ archive ({exc})") from None
        members = {
            m.name: m
            for m in (_Member(self._zip, n, path) for n in self._zip.namelist() if n.endswith(".npy"))
        }
        self.fields: dict[str, _Member] = {}
        for field, aliases in ALIASES.items():
            present = [a for a in aliases if a in members]
            if len(present) > 1:
                raise DatasetError(
                    f"{path}: arrays {present[0]!r} and {present[1]!r} are both the {field} field"
                )
            if present:
                self.fields[field] = members.pop(present[0])
        if "q" not in self.fields:
            raise DatasetError(
                f"{path}: no configuration array (named 'q' or 'qpos'); arrays: {sorted(members)}"
            )
        for m in self.fields.values():
            if len(m.shape) != 2:
                raise DatasetError(
                    f"{path}: array {m.name!r} has shape {m.shape}; (N, k) states are expected"
                )
            if m.dtype.kind not in "fiu":
                raise DatasetError(f"{path}: array {m.name!r} holds {m.dtype} values, not numbers")
        self.rows: int | None = self.fields["q"].shape[0]
        for m in self.fields.values():
            if m.shape[0] != self.rows:
                first = self.fields["q"].name
                raise DatasetError(
                    f"{path}: array {m.name!r} has {m.shape[0]} rows, but {first!r} has {self.rows}"
                )
        self._names: dict[str, tuple[str, ...]] = {}
        for field, m in self.fields.items():
            names_member = members.pop(f"{field}_columns", None)
            if names_member is None:
                self._names[field] = tuple(default_names(field, m.shape[1]))
                continue
            names = names_member.whole()
            if names.dtype.kind not in "US" or names.shape != (m.shape[1],):
                raise DatasetError(
                    f"{path}: array '{field}_columns' must hold the {m.shape[1]} column names of "
                    f"{m.name!r} as strings, got {names.dtype} of shape {names.shape}"
                )
            self._names[field] = tuple(str(n) for n in names.tolist())
        self.metadata = {n: m.whole() for n, m in members.items() if m.shape == ()}
        self._rows = {n: m for n, m in members.items() if m.shape != ()}
        for m in self._rows.values():
            if m.shape[0] != self.rows:
                raise DatasetError(
                    f"{path}: array {m.name!r} has shape {m.shape}, but the states have {self.rows} rows "
                    "(other arrays are carried through row by row)"
                )
            if m.fortran and len(m.shape) > 2:
                raise DatasetError(
                    f"{path}: array {m.name!r}: Fortran order with more than two axes is not read"
                )
        self.names = (*self._rows, *(n for names in self._names.values() for n in names))
        self.shapes = {n: m.shape[1:] for n, m in self._rows.items()}

    def blocks(self, rows: int, numeric: Collection[str]) -> Iterator[Block]:
        arrays = {
            **{m.name: (field, m) for field, m in self.fields.items()},
            **{n: (None, m) for n, m in self._rows.items()},
        }
        streams: dict[str, list[Any]] = {}
        try:
            for name, (_, m) in arrays.items():
                if m.fortran and len(m.shape) == 2:
                    col = m.shape[0] * m.dtype.itemsize
                    streams[name] = [m.stream(j * col) for j in range(m.shape[1])]
                else:
                    streams[name] = [m.stream()]
            total = self.rows or 0
            for start in range(0, total, rows):
                n = min(rows, total - start)
                columns: dict[str, Any] = {}
                for name, (field, m) in arrays.items():
                    x = self._rows_of(m, streams[name], n)
                    if field is None:
                        columns[name] = x
                    else:
                        x = x.astype(np.float64, copy=False)
                        for j, col in enumerate(self._names[field]):
                            columns[col] = x[:, j]
                yield Block(start, n, columns)
        except OSError as exc:
            raise DatasetError(f"{self.path}: cannot read ({exc})") from None
        finally:
            for fs in streams.values():
                for f in fs:
                    f.close()

    def _rows_of(self, m: _Member, fs: list[Any], n: int) -> np.ndarray:
        tail = m.shape[1:]
        if len(fs) == 1:
            size = int(np.prod(tail, dtype=int)) * m.dtype.itemsize
            data = _read(fs[0], n * size, self.path, m.name)
            return np.frombuffer(data, dtype=m.dtype).reshape(n, *tail)
        cols = [np.frombuffer(_read(f, n * m.dtype.itemsize, self.path, m.name), dtype=m.dtype) for f in fs]
        return np.stack(cols, axis=1)

    def close(self) -> None:
        self._zip.close()


class NpzWriter:
    """Writes :class:`~bridge.datasets.tables.OutBlock` s into an NPZ archive (module docstring).
    ``metadata``: arrays of no axes to add (the input's)."""

    def __init__(self, tmp: Path, spec: OutputSpec, shown: Path) -> None:
        self.tmp, self.spec, self.shown = tmp, spec, shown
        self.metadata: dict[str, np.ndarray] = {}
        self._raw: dict[str, tuple[Path, Any]] = {}
        self._kind: dict[str, tuple[np.dtype, tuple[int, ...]]] = {}
        self.rows = 0

    def _append(self, name: str, x: np.ndarray) -> None:
        x = np.ascontiguousarray(x)
        if x.dtype.hasobject:
            raise DatasetError(
                f"{self.shown}: column {name!r} holds text of varying length; an NPZ output takes "
                "numbers (write CSV or Parquet)"
            )
        kind = (x.dtype, x.shape[1:])
        if name not in self._raw:
            raw = self.tmp.with_name(f"{self.tmp.name}.{len(self._raw)}.raw")
            self._raw[name] = (raw, open(raw, "wb"))  # noqa: SIM115 (closed in close/discard)
            self._kind[name] = kind
        elif self._kind[name] != kind:
            raise DatasetError(
                f"{self.shown}: column {name!r} changes from {self._kind[name]} to {kind} between rows"
            )
        self._raw[name][1].write(x.tobytes())

    def write(self, block: OutBlock) -> None:
        for name, _ in self.spec.passthrough:
            x = block.passthrough[name]
            if not isinstance(x, np.ndarray):  # a pyarrow column
                x = np.asarray(x.to_numpy(zero_copy_only=False))
            self._append(name, x)
        for field, _ in self.spec.fields:
            self._append(ALIASES[field][0], np.stack(block.fields[field], axis=-1))
        for key, _, _ in self.spec.labels:
            self._append(key, np.asarray(block.labels[key], dtype=np.float64))
        self.rows += block.n

    def close(self) -> None:
        try:
            for _, f in self._raw.values():
                f.close()
            with zipfile.ZipFile(self.tmp, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
                for name, value in self.metadata.items():
                    with zf.open(f"{name}.npy", "w", force_zip64=True) as out:
                        npy.write_array(out, value, allow_pickle=False)
                for field, names in self.spec.fields:
                    with zf.open(f"{field}_columns.npy", "w", force_zip64=True) as out:
                        npy.write_array(out, np.array(names), allow_pickle=False)
                order = [
                    *(n for n, _ in self.spec.passthrough),
                    *(ALIASES[f][0] for f, _ in self.spec.fields),
                ]
                order += [key for key, _, _ in self.spec.labels]
                for name in order:
                    self._member(zf, name)
        finally:
            self.discard()

    def _member(self, zf: zipfile.ZipFile, name: str) -> None:
        raw = self._raw.get(name)
        if raw is None:  # no rows at all
            dtype, tail = np.dtype(np.float64), self._tail(name)
        else:
            dtype, tail = self._kind[name]
        header = {"descr": npy.dtype_to_descr(dtype), "fortran_order": False, "shape": (self.rows, *tail)}
        with zf.open(f"{name}.npy", "w", force_zip64=True) as out:
            npy.write_array_header_1_0(out, header)
            if raw is not None:
                with open(raw[0], "rb") as f:
                    while piece := f.read(_PIECE):
                        out.write(piece)

    def _tail(self, name: str) -> tuple[int, ...]:
        for other, shape in self.spec.passthrough:
            if other == name:
                return shape
        for field, names in self.spec.fields:
            if ALIASES[field][0] == name:
                return (len(names),)
        for key, shape, _ in self.spec.labels:
            if key == name:
                return shape
        return ()

    def discard(self) -> None:
        """Close and remove the raw temporary files."""
        for path, f in self._raw.values():
            with contextlib.suppress(OSError):
                f.close()
            with contextlib.suppress(OSError):
                path.unlink()
        self._raw = {}


def warn_metadata_dropped(names: Collection[str], output: Path) -> None:
    """A :class:`~bridge.errors.BridgeWarning` for arrays of no axes a table output cannot hold."""
    if names:
        warnings.warn(
            f"{output}: the NPZ input's arrays of no axes ({', '.join(sorted(names))}) are not carried to a "
            "table file (write an NPZ file to keep them)",
            BridgeWarning,
            stacklevel=3,
        )
