"""The same conversions and labels on Dask arrays and on a Dask cluster (extra ``[datasets]``).

* :func:`convert_dask` / :func:`compute_dask`: ``convert_states`` and ``compute`` of Dask arrays
  ``(N, k)``: one task per block of rows (``blockwise`` over the rows; a block holds every column),
  running the chunk's :class:`~bridge.datasets.chunks.Job`, lazily.
* :class:`ModelSpec`: how a model travels to the workers. No library object is ever pickled: the
  bridge :class:`~bridge.model.model.Model` is plain Python data (links, joints, frames, numbers),
  pickled once into the graph (one key, whatever the number of blocks) and rebuilt once per
  worker process, which keeps it (and the plans and KinDyns made from it) for every later task.
* :func:`executor`: the file pipeline's chunks sent to a cluster (``--scheduler ADDRESS``, a
  ``dask.distributed`` scheduler) or to a local cluster of worker processes (``--workers N``), a
  bounded number in flight, the results taken back in order.

Dask is imported inside the functions only: ``import bridge`` and ``bridge --help`` do not import
it.
"""

from __future__ import annotations

import hashlib
import pickle
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from bridge.errors import DatasetError
from bridge.model.model import Model

__all__ = ["ModelSpec", "compute_dask", "convert_dask", "executor", "is_dask", "require_dask"]


def is_dask(x: object) -> bool:
    """``x`` is a Dask collection (without importing Dask)."""
    return hasattr(type(x), "__dask_graph__")


def require_dask(what: str = "Dask arrays") -> Any:
    """``dask`` (the module), or a :class:`~bridge.errors.DatasetError` naming the extra."""
    try:
        import dask
        import dask.array
    except ImportError:
        raise DatasetError(f"{what} need dask: pip install 'bridge[datasets]'") from None
    return dask


# --------------------------------------------------------------------------- models on workers
_MODELS: dict[str, Model] = {}
_LOCK = threading.Lock()


class ModelSpec:
    """A model as it travels to the workers: its pickled data and their digest. On a worker the
    model is unpickled once per process (:meth:`model`) and kept by its digest."""

    def __init__(self, model: Model, data: bytes | None = None, digest: str | None = None) -> None:
        self._model = model
        self.data = data if data is not None else pickle.dumps(model, protocol=pickle.HIGHEST_PROTOCOL)
        self.digest = digest or hashlib.sha256(self.data).hexdigest()[:24]

    def model(self) -> Model:
        """The model (this process's copy)."""
        if self._model is None:
            with _LOCK:
                found = _MODELS.get(self.digest)
                if found is None:
                    found = _MODELS[self.digest] = pickle.loads(self.data)
                self._model = found
        return self._model

    def __reduce__(self) -> tuple[Callable[..., ModelSpec], tuple[bytes, str]]:
        return _spec, (self.data, self.digest)

    def __dask_tokenize__(self) -> str:
        return self.digest


def _spec(data: bytes, digest: str) -> ModelSpec:
    spec = ModelSpec.__new__(ModelSpec)
    spec.data, spec.digest = data, digest
    spec._model = _MODELS.get(digest)
    return spec


# --------------------------------------------------------------------------- Dask arrays
def _rows(given: Mapping[str, object]) -> tuple[Any, dict[str, Any]]:
    """The arrays as Dask arrays with the row blocks of ``q`` and one block of columns."""
    dask = require_dask()
    da = dask.array
    q = given.get("q")
    if q is None:
        raise DatasetError("q: the configurations are required")
    q = da.asarray(q)
    out = {}
    for field, x in given.items():
        arr = da.asarray(x) if is_dask(x) else da.from_array(np.asarray(x), chunks=(q.chunks[0], -1))
        if arr.ndim != 2:
            raise DatasetError(f"{field}: Dask arrays of states must be (N, k), got {arr.ndim} axes")
        if any(np.isnan(c) for c in arr.chunks[0]):
            raise DatasetError(
                f"{field}: the Dask array's row blocks have unknown sizes (from a dataframe: use "
                "to_dask_array(lengths=True))"
            )
        if arr.shape[0] != q.shape[0]:
            raise DatasetError(f"{field}: {arr.shape[0]} states, but q has {q.shape[0]}")
        out[field] = arr.rechunk((q.chunks[0], -1))
    return da, out


def _block(spec: ModelSpec, job: Any, index: Mapping[str, tuple[int, ...]], widths: tuple[int, ...],
           fields: Sequence[str], start: np.ndarray, *blocks: np.ndarray) -> np.ndarray:  # fmt: skip
    """One block of rows on a worker: the job's target columns then its labels, flattened,
    side by side (n, sum(widths))."""
    from bridge.datasets.configuration import BadValueError
    from bridge.datasets.labels import located

    model = spec.model()
    chunk = {
        f: [np.asarray(b[:, i], dtype=np.float64) for i in index[f]]
        for f, b in zip(fields, blocks, strict=True)
    }
    try:
        converted, labels = job.run(model, chunk)
    except BadValueError as exc:
        first = int(start[0]) if len(start) else 0
        raise located(exc, first, f"{exc.field} (Dask array)") from None
    n = blocks[0].shape[0]
    parts = [np.stack(converted[f], axis=-1) for f in fields if f in converted]
    parts += [labels[label.key].reshape(n, -1) for label in job.labels]
    out = np.concatenate(parts, axis=-1) if parts else np.empty((n, 0))
    if out.shape[1] != sum(widths):  # pragma: no cover - internal consistency
        raise DatasetError("a Dask block came out with the wrong number of columns")
    return out


def _run(model: Model, given: Mapping[str, object], job: Any, columns: Any) -> tuple[Any, dict[str, Any]]:
    """The job on every block: ``(one Dask array of every output column side by side, the arrays
    by field)``."""
    from bridge.datasets.convert import gathers, plan_for

    dask = require_dask()
    da, arrays = _rows(given)
    fields = tuple(arrays)
    job.check(model, fields)
    plan = plan_for(model, job.source, job.target or job.source, job.normalize)
    index = gathers(plan.source, arrays, columns)
    widths = [plan.target.width(f) for f in fields] if job.target is not None else []
    widths += [int(np.prod(label.shape, dtype=int)) for label in job.labels]
    q = arrays["q"]
    starts = da.arange(q.shape[0], chunks=(q.chunks[0],))
    spec = dask.delayed(ModelSpec(model), pure=True)
    args: list[Any] = [spec, None, job, None, index, None, tuple(widths), None, fields, None, starts, "i"]
    for f, column_index in zip(fields, "klmn", strict=False):  # (one letter per axis)
        args += [arrays[f], "i" + column_index]
    total = sum(widths)
    out = da.blockwise(
        _block, "ij", *args, new_axes={"j": total}, concatenate=True, dtype=np.float64,
        meta=np.empty((0, 0), dtype=np.float64),
    )  # fmt: skip
    return out, arrays


def convert_dask(
    model: Model,
    given: Mapping[str, object],
    source: object,
    target: object,
    columns: Mapping[str, Sequence[str]] | None,
    normalize: bool,
) -> dict[str, Any]:
    """``convert_states`` of Dask arrays: field -> Dask array (N, width) in ``target``'s layout."""
    from bridge.conventions.registry import convention
    from bridge.datasets.chunks import Job
    from bridge.datasets.convert import plan_for

    job = Job(convention(source).name, convention(target).name, normalize=normalize)
    out, arrays = _run(model, given, job, columns)
    plan = plan_for(model, source, target, normalize)
    result, at = {}, 0
    for f in arrays:
        w = plan.target.width(f)
        result[f] = out[:, at : at + w]
        at += w
    return result


def compute_dask(
    model: Model,
    given: Mapping[str, object],
    labels: tuple,
    convention: object,
    engine: str,
    rep: Any,
    gravity: object,
    columns: Mapping[str, Sequence[str]] | None,
    normalize: bool,
) -> dict[str, Any]:
    """``compute`` of Dask arrays: label key -> Dask array (N, *shape)."""
    from bridge.conventions.registry import convention as _convention
    from bridge.datasets.chunks import Job

    g = np.asarray(gravity, dtype=np.float64)
    if g.shape != (3,) or not np.all(np.isfinite(g)):
        raise DatasetError(f"gravity: expected 3 finite numbers, got {gravity!r}")
    job = Job(_convention(convention).name, None, labels, engine, rep, tuple(g.tolist()), normalize)
    out, _ = _run(model, given, job, columns)
    result, at = {}, 0
    for label in labels:
        w = int(np.prod(label.shape, dtype=int))
        result[label.key] = out[:, at : at + w].reshape(out.shape[0], *label.shape)
        at += w
    return result


# --------------------------------------------------------------------------- a cluster for files
class _Local:
    """Runs each item in this process, in order."""

    workers = 1
    where = "this process"

    def map(self, fn: Callable[..., Any], items: Iterable[Any], *shared: Any) -> Iterator[Any]:
        for item in items:
            yield fn(*shared, item)


class _Cluster:
    """Sends each item to a ``dask.distributed`` client, at most two more than the workers in
    flight (the client's memory: that many blocks, whatever the file), and yields the results in
    order (a task's exception is raised here, in order too)."""

    def __init__(self, client: Any, where: str) -> None:
        self.client = client
        self.where = where
        self.workers = max(1, len(client.scheduler_info().get("workers", {})))

    def map(self, fn: Callable[..., Any], items: Iterable[Any], *shared: Any) -> Iterator[Any]:
        from distributed import KilledWorker

        window = self.workers + 2
        pending: deque = deque()
        try:
            scattered = [self.client.scatter(x, broadcast=True) for x in shared]
            for item in items:
                pending.append(self.client.submit(fn, *scattered, item, pure=False))
                if len(pending) >= window:
                    yield pending.popleft().result()
            while pending:
                yield pending.popleft().result()
        except (KilledWorker, OSError, TimeoutError) as exc:  # the cluster, not the data
            raise DatasetError(f"{self.where} failed: {type(exc).__name__}: {exc}") from None
        finally:
            for future in pending:
                future.cancel()


@contextmanager
def executor(scheduler: str | None = None, workers: int | None = None) -> Iterator[Any]:
    """Where the chunks of a file run: this process (neither given), the ``dask.distributed``
    scheduler at ``scheduler``, or a local cluster of ``workers`` processes (one thread each),
    closed on exit. Raises :class:`~bridge.errors.DatasetError` when Dask is missing or the
    scheduler cannot be reached."""
    if scheduler is None and workers is None:
        yield _Local()
        return
    if scheduler is not None and workers is not None:
        raise DatasetError("--scheduler and --workers do not combine: a scheduler has its own workers")
    require_dask("a Dask cluster")
    try:
        import logging

        from distributed import Client, LocalCluster
    except ImportError:
        raise DatasetError("a Dask cluster needs dask.distributed: pip install 'bridge[datasets]'") from None
    if workers is not None:
        if workers < 1:
            raise DatasetError(f"--workers must be at least 1, got {workers}")
        cluster = LocalCluster(
            n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
            silence_logs=logging.ERROR,
        )  # fmt: skip
        try:
            with Client(cluster) as client:
                yield _Cluster(
                    client, f"a local cluster of {workers} worker process{'es' if workers > 1 else ''}"
                )
        finally:
            cluster.close()
        return
    try:
        client = Client(scheduler, timeout="10s")
    except (OSError, TimeoutError) as exc:
        raise DatasetError(f"--scheduler {scheduler}: cannot reach the Dask scheduler ({exc})") from None
    try:
        yield _Cluster(client, f"the Dask scheduler at {scheduler}")
    finally:
        client.close()
