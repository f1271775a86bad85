"""Pinocchio's ``Data`` for a model, refused clearly when it cannot fit in memory.

``pinocchio.Model.createData()`` allocates, among others, tensors of nv x nv x nv entries (the
second-order derivatives of inverse dynamics): measured with Pinocchio 4.1 on chains and random
trees of 25 to 205 DOFs, its peak memory is 64 nv^3 bytes plus about 5 % (0.5 GB at 200 DOFs, 2.9 GB
at 357, 8 GB at 500, 64 GB at 1,000), whatever the tree's shape, and it keeps half of that. Beyond
the machine's memory it raises a bare ``MemoryError`` (or the system starts swapping), and it takes
about 2 s per GB (16.5 s at 500 DOFs). So ``size_problem`` (the registry's size check of
Pinocchio, run by the engine before converting anything) refuses a model whose data would exceed
the memory budget (``bridge.backends.limits``: 4 GB, about 400 DOFs, unless the user changes it)
or the memory available, and ``create_data`` turns a ``MemoryError`` of Pinocchio into
``bridge.ModelTooLargeError`` too, naming the engines that take the model.
"""

from __future__ import annotations

import os

from bridge.backends.limits import budget_hint, memory_budget, too_large_error

__all__ = ["DATA_BYTES_PER_NV3", "available_memory", "create_data", "data_bytes", "size_problem"]

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


def _reason(name: str, nv: int) -> str | None:
    """Why Pinocchio's data for a model ``name`` of ``nv`` DOFs does not fit (None: it does)."""
    need = data_bytes(nv)
    budget, avail = memory_budget(), available_memory()
    if need <= budget and (avail is None or need <= avail):
        return None
    if avail is not None and avail < budget:
        limit = f"more than the {avail / 1e9:.1f} GB available"
    else:
        limit = f"more than the memory budget of {budget / 1e9:.1f} GB ({budget_hint('memory')})"
    return (
        f"model {name!r} has {nv} DOFs: Pinocchio's data for it would take about {need / 1e9:.1f} GB "
        f"(64 nv^3 bytes: it grows with the cube of the DOFs), {limit}"
    )


def size_problem(model: object) -> str | None:
    """The registry's size check of Pinocchio: why its data for ``model`` does not fit (None: it
    does), from the model's DOFs alone (see the module docstring)."""
    return _reason(getattr(model, "name", "?"), int(model.nv))


def _allocate(pm: object) -> object:
    return pm.createData()


def create_data(pm: object, model: object) -> object:
    """``pm.createData()`` for the Pinocchio model ``pm`` of ``model``, or
    ``bridge.ModelTooLargeError`` (naming the model, its DOFs, the memory it needs and the
    engines that take it) when it is predicted not to fit (``size_problem``) or Pinocchio runs
    out of memory."""
    name = getattr(model, "name", "?")
    reason = _reason(name, pm.nv)
    if reason is not None:
        raise too_large_error("pinocchio", model, reason)
    try:
        return _allocate(pm)
    except MemoryError:
        reason = f"model {name!r} has {pm.nv} DOFs: Pinocchio ran out of memory allocating its data"
        raise too_large_error("pinocchio", model, reason) from None
