"""Dask: ``convert_states`` and ``compute`` of Dask arrays, and files converted on a cluster, give the
numbers one process gives, bit for bit: on Dask's threads and on a ``LocalCluster`` of 2 worker
processes (each rebuilding the model once from its pickled plain data)."""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pytest

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")
pytest.importorskip("pyarrow")

import bridge  # noqa: E402
from bridge.datasets.distributed import ModelSpec  # noqa: E402
from bridge.errors import DatasetError  # noqa: E402
from tests.datasets.helpers import native_states  # noqa: E402

_MODEL = bridge.load_urdf("iCubGazeboV2_5")
_LABELS = ["inverse_dynamics", "mass_matrix", "frame_jacobian:l_sole"]


@pytest.fixture(scope="module")
def client():
    import logging

    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=logging.ERROR
    )
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


def _arrays(n: int = 3_000):
    q, v, a, tau = native_states(_MODEL, n, "mujoco", 9)
    return q, v, a, tau


def _dask(*arrays: np.ndarray, rows: int = 700):
    return [da.from_array(x, chunks=(rows, -1)) for x in arrays]


def _same(lazy: dict | object, eager: dict | object) -> None:
    if isinstance(eager, dict):
        assert set(lazy) == set(eager)
        for key in eager:
            assert np.array_equal(np.asarray(lazy[key]), eager[key]), key
        return
    for x, y in zip(lazy, eager, strict=True):
        assert np.array_equal(np.asarray(x), y)


def _check_arrays(scheduler: object) -> None:
    q, v, a, tau = _arrays()
    eager = bridge.convert_states(_MODEL, q, v, "mujoco", "drake", acceleration=a, force=tau)
    dq, dv, dA, dt = _dask(q, v, a, tau)
    lazy = bridge.convert_states(_MODEL, dq, dv, "mujoco", "drake", acceleration=dA, force=dt)
    assert isinstance(lazy.q, da.Array) and lazy.q.chunks[0] == (700, 700, 700, 700, 200)
    _same(dask.compute(*lazy, scheduler=scheduler), eager)
    labels = bridge.compute(_MODEL, (q, v), _LABELS, convention="mujoco", acceleration=a)
    lazy_labels = bridge.compute(_MODEL, (dq, dv), _LABELS, convention="mujoco", acceleration=dA)
    assert lazy_labels["mass_matrix"].shape == (3_000, 38, 38)
    (computed,) = dask.compute(lazy_labels, scheduler=scheduler)
    _same(computed, labels)


def test_dask_arrays_on_threads_equal_numpy() -> None:
    _check_arrays("threads")


def test_a_local_cluster_of_two_processes_equals_one_process(client) -> None:
    assert len(client.scheduler_info()["workers"]) == 2
    _check_arrays(client)
    # each worker rebuilt the model once, and kept it
    counts = client.run(lambda: len(__import__("bridge.datasets.distributed").datasets.distributed._MODELS))
    assert sorted(counts.values()) == [1, 1]


def test_a_file_on_a_cluster_equals_one_process(client, tmp_path: Path) -> None:
    q, v, a, _ = _arrays(2_000)
    src = tmp_path / "in.npz"
    np.savez(src, qpos=q, qvel=v, qacc=a, time=np.arange(2_000.0))
    here, there = tmp_path / "here.parquet", tmp_path / "there.parquet"
    kw = dict(quantities=["inverse_dynamics"], rows=300)
    s1 = bridge.convert_dataset(_MODEL, src, here, "mujoco", "pinocchio", **kw)
    s2 = bridge.convert_dataset(
        _MODEL, src, there, "mujoco", "pinocchio", scheduler=client.scheduler.address, **kw
    )
    assert s1.where == "this process" and "Dask scheduler" in s2.where and s2.rows == 2_000
    assert here.read_bytes() == there.read_bytes()


def test_a_bad_row_on_a_worker_is_named(client, tmp_path: Path) -> None:
    q, v, _, _ = _arrays(1_000)
    q[777, 3:7] = 2.0
    src = tmp_path / "bad.npz"
    np.savez(src, qpos=q, qvel=v)
    out = tmp_path / "out.npz"
    with pytest.raises(
        DatasetError, match=r"bad\.npz, row 778, columns 'base/q3', 'base/q4', 'base/q5', 'base/q6'"
    ):
        bridge.convert_dataset(
            _MODEL, src, out, "mujoco", "pinocchio", rows=100, scheduler=client.scheduler.address
        )
    assert not out.exists()
    lazy = bridge.convert_states(_MODEL, *_dask(q, v, rows=100), "mujoco", "pinocchio")
    with pytest.raises(DatasetError, match=r"q \(Dask array\), row 778, columns 'base/q3'"):
        lazy.q.compute(scheduler=client)


def test_the_model_travels_as_plain_data() -> None:
    spec = ModelSpec(_MODEL)
    assert spec.model() is _MODEL
    copy = pickle.loads(pickle.dumps(spec))
    again = pickle.loads(pickle.dumps(spec))
    rebuilt = copy.model()
    assert rebuilt is again.model() and rebuilt is not _MODEL  # once per process
    assert rebuilt.dof_names == _MODEL.dof_names and rebuilt.to_urdf() == _MODEL.to_urdf()
    assert dask.base.tokenize(spec) == dask.base.tokenize(ModelSpec(_MODEL))


def test_bad_dask_arrays_are_named() -> None:
    q, v, _, _ = _arrays(100)
    with pytest.raises(DatasetError, match=r"v: 99 states, but q has 100"):
        bridge.convert_states(_MODEL, da.from_array(q), da.from_array(v[:99]), "mujoco", "pinocchio")
    with pytest.raises(DatasetError, match=r"Dask arrays of states must be \(N, k\)"):
        bridge.convert_states(_MODEL, da.from_array(q.reshape(10, 10, -1)), None, "mujoco", "pinocchio")
    with pytest.raises(DatasetError, match="q: 38 columns, but model 'iCub' has 39"):
        bridge.convert_states(_MODEL, da.from_array(q[:, :-1]), da.from_array(v), "mujoco", "pinocchio")
