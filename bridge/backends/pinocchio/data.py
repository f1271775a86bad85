"""Pinocchio's ``Data`` for a model, refused clearly when it cannot fit in memory.

``pinocchio.Model.createData()`` allocates, among others, tensors of nv x nv x nv entries (the
second-order derivatives of inverse dynamics): measured with Pinocchio 4.1 on chains and random
trees of 25 to 205 DOFs, its peak memory is 64 nv^3 bytes plus about 5 % (0.5 GB at 200 DOFs, 2.9 GB
at 357, 8 GB at 500, 64 GB at 1,000), whatever the tree's shape, and it keeps half of that. Beyond
the machine's memory it raises a bare ``MemoryError`` (or the system starts swapping), so
:func:`create_data` predicts it first and raises :class:`~bridge.ModelTooLargeError` naming the
model's size and the engines whose memory grows only with the square of the DOFs.
"""

from __future__ import annotations

import os

from bridge.errors import ModelTooLargeError

__all__ = ["DATA_BYTES_PER_NV3", "available_memory", "create_data", "data_bytes"]

#: peak bytes of ``createData()`` per nv^3 (Pinocchio 4.1; lower-order terms add about 5 % at 200 DOFs)
DATA_BYTES_PER_NV3 = 64


def data_bytes(nv: int) -> int:
    """The predicted peak memory (bytes) of ``createData()`` for a model of nv DOFs."""
    return DATA_BYTES_PER_NV3 * nv**3


def available_memory() -> int | None:
    """Bytes this process can still allocate, or None when unknown: the system's available memory
    (``MemAvailable`` of /proc/meminfo) and, under an address-space limit (``ulimit -v``), what is
    left of it."""
    avail: int | None = None
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    avail = int(line.split()[1]) * 1024
                    break
    except (OSError, ValueError, IndexError):
        avail = None
    try:
        import resource  # (not on Windows)

        limit = resource.getrlimit(resource.RLIMIT_AS)[0]
        if limit != resource.RLIM_INFINITY:
            with open("/proc/self/statm") as f:
                used = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
            left = max(limit - used, 0)
            avail = left if avail is None else min(avail, left)
    except (ImportError, OSError, ValueError, IndexError):
        pass
    return avail


def _too_large(pm: object, name: str, need: int, avail: int | None) -> ModelTooLargeError:
    have = "" if avail is None else f", more than the {avail / 1e9:.1f} GB available"
    return ModelTooLargeError(
        f"model {name!r} has {pm.nv} DOFs ({pm.njoints - 1} Pinocchio joints): Pinocchio's data for it "
        f"would take about {need / 1e9:.1f} GB (64 nv^3 bytes: it grows with the cube of the DOFs){have}; "
        "use KinDyn(model, engine='featherstone') (bridge's own batched algorithms) or "
        "engine='idyntree' instead, whose memory grows with nv^2"
    )


def _allocate(pm: object) -> object:
    return pm.createData()


def create_data(pm: object, name: str) -> object:
    """``pm.createData()``, or :class:`~bridge.ModelTooLargeError` (naming model ``name``, its DOFs,
    the memory it needs and the engines to use instead) when it is predicted not to fit in the
    available memory (:func:`data_bytes`, :func:`available_memory`) or Pinocchio runs out of it."""
    need = data_bytes(pm.nv)
    avail = available_memory()
    if avail is not None and need > avail:
        raise _too_large(pm, name, need, avail)
    try:
        return _allocate(pm)
    except MemoryError:
        raise _too_large(pm, name, need, avail) from None
