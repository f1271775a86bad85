"""Parquet files of states (pyarrow): one column per coordinate, read and written in row groups.

The reader streams record batches of the rows asked for (:meth:`pyarrow.parquet.ParquetFile.iter_batches`);
the writer writes each block as one row group, float64 columns, so a file of any length is written
with the memory of one block.
"""

from __future__ import annotations

import contextlib
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import Any

from bridge.datasets.tables import Block, OutBlock, OutputSpec, arrow_columns, table_arrays
from bridge.errors import DatasetError

__all__ = ["ParquetReader", "ParquetWriter"]


class ParquetReader:
    """A Parquet file of states (module docstring)."""

    def __init__(self, path: Path) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        self.path = path
        try:
            # (pre_buffer=False: with it, pyarrow keeps every row group read until the file is closed)
            self._file = pq.ParquetFile(path, pre_buffer=False)
        except (pa.ArrowException, OSError) as exc:
            raise DatasetError(
                f"{path}: not a readable Parquet file ({' '.join(str(exc).split())})"
            ) from None
        schema = self._file.schema_arrow
        self.names = tuple(schema.names)
        self.rows: int | None = self._file.metadata.num_rows
        self.shapes: dict[str, tuple[int, ...]] = {}
        self._types = {f.name: f.type for f in schema}

    def blocks(self, rows: int, numeric: Collection[str]) -> Iterator[Block]:
        import pyarrow as pa

        numeric = set(numeric)
        for name in numeric:
            t = self._types[name]
            if not (pa.types.is_floating(t) or pa.types.is_integer(t) or pa.types.is_decimal(t)):
                self._refuse(name, t)
        start = 0
        try:
            for batch in self._file.iter_batches(batch_size=rows):
                if batch.num_rows:
                    yield Block(start, batch.num_rows, arrow_columns(batch, self.path, numeric, start))
                start += batch.num_rows
        except (pa.ArrowException, OSError) as exc:
            raise DatasetError(
                f"{self.path}, after row {start}: cannot read ({' '.join(str(exc).split())})"
            ) from None

    def _refuse(self, name: str, t: Any) -> None:
        """The error of a column of ``name`` holding something other than numbers (its first value
        that is not one, with its row)."""
        start = 0
        for batch in self._file.iter_batches(batch_size=1 << 16, columns=[name]):
            for i, value in enumerate(batch.column(0).to_pylist()):
                try:
                    float(value)
                except (TypeError, ValueError):
                    shown = "an empty cell" if value is None else repr(value)
                    raise DatasetError(
                        f"{self.path}, row {start + i + 1}, column {name!r}: {shown} is not a number"
                    ) from None
            start += batch.num_rows
        raise DatasetError(f"{self.path}, column {name!r}: holds {t}, not numbers")

    def close(self) -> None:
        self._file.close()


class ParquetWriter:
    """Writes :class:`~bridge.datasets.tables.OutBlock` s as row groups."""

    def __init__(self, tmp: Path, spec: OutputSpec, shown: Path) -> None:
        self.tmp, self.spec, self.shown = tmp, spec, shown
        self._writer: Any = None
        self._names = spec.column_names()

    def write(self, block: OutBlock) -> None:
        import pyarrow as pa

        batch = pa.RecordBatch.from_arrays(table_arrays(self.spec, block), names=self._names)
        if self._writer is None:
            self._writer = _writer(self.tmp, batch.schema)
        self._writer.write_batch(batch)

    def discard(self) -> None:
        """Close the file after an error (the temporary file is removed by the caller)."""
        if self._writer is not None:
            with contextlib.suppress(Exception):
                self._writer.close()
            self._writer = None

    def close(self) -> None:
        import pyarrow as pa

        if self._writer is None:  # no rows
            self._writer = _writer(self.tmp, pa.schema([(n, pa.float64()) for n in self._names]))
        self._writer.close()


def _writer(path: Path, schema: Any) -> Any:
    """pyarrow's Parquet writer, the float columns not dictionary-encoded (numbers of a log rarely
    repeat: the dictionary made writing 7 times slower and the file larger), the others (text) as
    pyarrow writes them."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    text = [f.name for f in schema if not pa.types.is_floating(f.type)]
    return pq.ParquetWriter(str(path), schema, use_dictionary=text)
