"""CSV files of states: a header of column names, one state per line (read and written by pyarrow).

Numbers are read as float64 and written in the shortest form that reads back to the same double
(round trips are exact). The reader streams the file in blocks of bytes sized for the rows asked
for. pyarrow's own errors do not say where: on one, the file is scanned from the start of the
failing block with Python's :mod:`csv` module to name the row (and line) and the column.
"""

from __future__ import annotations

import contextlib
import csv
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import Any

from bridge.datasets.tables import Block, OutBlock, OutputSpec, arrow_columns, table_arrays
from bridge.errors import DatasetError

__all__ = ["CsvReader", "CsvWriter"]


def _header(path: Path) -> tuple[str, ...]:
    try:
        with open(path, newline="", encoding="utf-8") as f:
            row = next(csv.reader(f), None)
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise DatasetError(f"{path}: cannot read the header ({exc})") from None
    if not row or not any(c.strip() for c in row):
        raise DatasetError(f"{path}: no header (the first line names the columns)")
    if any(not c.strip() for c in row):
        at = next(i + 1 for i, c in enumerate(row) if not c.strip())
        raise DatasetError(f"{path}: column {at} of the header has no name")
    return tuple(row)


class CsvReader:
    """A CSV file of states (module docstring)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.names = _header(path)
        self.rows: int | None = None
        self.shapes: dict[str, tuple[int, ...]] = {}

    def blocks(self, rows: int, numeric: Collection[str]) -> Iterator[Block]:
        import pyarrow as pa
        import pyarrow.csv as pcsv

        numeric = set(numeric)
        # pyarrow's streaming reader decodes about 32 blocks ahead of the one it gives: small blocks
        # (a row of ~25 characters per column fits many times), gathered into blocks of ``rows``
        block_size = max(1 << 20, 64 * 25 * len(self.names))
        read = pcsv.ReadOptions(block_size=block_size, use_threads=False)
        convert = pcsv.ConvertOptions(
            column_types={n: pa.float64() for n in numeric},
            null_values=[""],
            strings_can_be_null=False,
        )
        start = 0  # the first row of the batches gathered
        gathered: list = []
        try:
            reader = pcsv.open_csv(self.path, read_options=read, convert_options=convert)
            for batch in reader:
                gathered.append(batch)
                if sum(b.num_rows for b in gathered) >= rows:
                    block = _joined(gathered)
                    gathered = []
                    yield Block(start, block.num_rows, arrow_columns(block, self.path, numeric, start))
                    start += block.num_rows
            if gathered and sum(b.num_rows for b in gathered):
                block = _joined(gathered)
                yield Block(start, block.num_rows, arrow_columns(block, self.path, numeric, start))
        except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
            raise _locate(self.path, self.names, numeric, start, str(exc)) from None
        except OSError as exc:
            raise DatasetError(f"{self.path}: cannot read ({exc})") from None

    def close(self) -> None:
        pass


def _joined(batches: list) -> Any:
    """One record batch of several (contiguous columns)."""
    import pyarrow as pa

    if len(batches) == 1:
        return batches[0]
    return pa.Table.from_batches(batches).combine_chunks().to_batches()[0]


def _locate(path: Path, names: tuple[str, ...], numeric: set[str], start: int, message: str) -> DatasetError:
    """The error of the first bad row at or after data row ``start`` (0-based): a row with the
    wrong number of fields or a value that is not a number in a numeric column."""
    try:
        with open(path, newline="", encoding="utf-8") as f:
            reader = csv.reader(f)
            next(reader, None)
            for i, row in enumerate(reader):
                if i < start:
                    continue
                where = f"{path}, row {i + 1} (line {reader.line_num})"
                if len(row) != len(names):
                    return DatasetError(
                        f"{where}: {len(row)} fields, but the header has {len(names)} columns"
                    )
                for name, value in zip(names, row, strict=True):
                    if name in numeric:
                        try:
                            float(value)
                        except ValueError:
                            shown = repr(value) if value.strip() else "an empty cell"
                            return DatasetError(f"{where}, column {name!r}: {shown} is not a number")
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        return DatasetError(f"{path}: cannot read ({exc})")
    return DatasetError(f"{path}: {' '.join(message.split())}")


class CsvWriter:
    """Writes :class:`~bridge.datasets.tables.OutBlock` s as CSV lines (the header first)."""

    def __init__(self, tmp: Path, spec: OutputSpec, shown: Path) -> None:
        self.tmp, self.spec, self.shown = tmp, spec, shown
        self._writer: Any = None
        self._file: Any = None
        self._names = spec.column_names()

    def write(self, block: OutBlock) -> None:
        import pyarrow as pa

        batch = pa.RecordBatch.from_arrays(table_arrays(self.spec, block), names=self._names)
        if self._writer is None:
            self._open(batch.schema)
        self._writer.write_batch(batch)

    def _open(self, schema: Any) -> None:
        """The file with its header (names quoted only where CSV needs it), then pyarrow's writer."""
        import pyarrow.csv as pcsv

        self._file = open(self.tmp, "w", newline="", encoding="utf-8")  # noqa: SIM115 (closed in close)
        csv.writer(self._file, lineterminator="\n").writerow(self._names)
        self._file.flush()
        options = pcsv.WriteOptions(include_header=False, quoting_style="needed")
        self._writer = pcsv.CSVWriter(self._file.buffer, schema, write_options=options)

    def discard(self) -> None:
        """Close the file after an error (the temporary file is removed by the caller)."""
        if self._writer is not None:
            with contextlib.suppress(Exception):
                self._writer.close()
            self._writer = None
        if self._file is not None:
            with contextlib.suppress(Exception):
                self._file.close()
            self._file = None

    def close(self) -> None:
        import pyarrow as pa

        if self._writer is None:  # no rows: the header alone
            self._open(pa.schema([(n, pa.float64()) for n in self._names]))
        self._writer.close()
        self._file.close()
        self._file = None
