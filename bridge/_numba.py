"""Whether bridge's compiled (numba) kernels run, and how a batched kernel is launched.

The one place that decides: :func:`enabled` is True when numba is installed (the ``fast`` extra)
and the environment variable ``BRIDGE_NUMBA`` is not ``0``; :func:`compile_after` says after how
many single states an engine loads its compiled single-state path (``BRIDGE_COMPILE_AFTER``).
Each package with compiled kernels (the batched change of variables of :mod:`bridge.conventions`,
the chain rule of :mod:`bridge.derivatives`, the engines' kernels) loads its kernel module through
:func:`load` and keeps the answer; the numpy path runs otherwise and gives the same numbers to rounding.

:func:`direct` gives the compiled entry point of a kernel for arguments of known types, without
numba's dispatch (for the single-state paths, whose kernels take the same arrays at every call).
:func:`kernel` declares a kernel of explicit signatures that numba compiles, or loads from its disk
cache, at its first use rather than when its module is imported: a process loads only the kernels
its path calls.

Parallel kernels (numba ``prange`` over blocks of a batch) are launched through :func:`launch`,
one at a time in the process: numba's fallback threading layer (workqueue, without TBB or OpenMP)
aborts the process on concurrent launches, so a call finding the launch taken runs the serial
kernel. :func:`named` gives the serial and the parallel dispatcher of one function the two names
numba's disk cache needs.

This module imports numba only inside its functions (``import bridge`` stays fast).
"""

from __future__ import annotations

import os
import threading
import types
import warnings
from collections.abc import Callable
from types import ModuleType

from bridge.errors import BridgeWarning, InvalidValueError

__all__ = [
    "COMPILE_AFTER_ENV",
    "PARALLEL_MIN",
    "Kernel",
    "compile_after",
    "direct",
    "enabled",
    "kernel",
    "launch",
    "load",
    "loader",
    "named",
]

#: batches of at least this many states run a parallel kernel (smaller ones the serial one: a
#: parallel launch costs a few microseconds)
PARALLEL_MIN = 32

_PARALLEL = threading.Lock()

#: the environment variable of :func:`compile_after`
COMPILE_AFTER_ENV = "BRIDGE_COMPILE_AFTER"


def enabled() -> bool:
    """numba importable and ``BRIDGE_NUMBA`` not ``0`` (read at each call; callers keep what they
    load)."""
    if os.environ.get("BRIDGE_NUMBA", "1").strip() == "0":
        return False
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


def compile_after(default: int) -> int:
    """How many single states an engine's numpy path serves before it loads its compiled
    single-state path: the environment variable ``BRIDGE_COMPILE_AFTER`` (a whole number, ``0``:
    from the first state) when it is set, else ``default`` (read at each call; an engine reads it
    once, when it is made). Raises InvalidValueError naming the variable for anything else."""
    text = os.environ.get(COMPILE_AFTER_ENV, "").strip()
    if not text:
        return default
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise InvalidValueError(
            f"environment variable {COMPILE_AFTER_ENV}: expected a whole number of single states "
            f"(0: compiled from the first state), got {text!r}"
        )
    return value


def load(importer: Callable[[], ModuleType], message: str) -> ModuleType | None:
    """``importer()`` (a kernel module, which imports numba) when :func:`enabled`, else None.

    A kernel module that fails to import with numba installed (e.g. numba and numpy versions that
    do not match) gives a :class:`bridge.BridgeWarning`, ``message`` with ``{}`` replaced by the
    error, and None: the numpy path."""
    if not enabled():
        return None
    try:
        return importer()
    except Exception as exc:
        warnings.warn(message.format(exc), BridgeWarning, stacklevel=3)
        return None


def loader(importer: Callable[[], ModuleType], message: str) -> Callable[[], ModuleType | None]:
    """A function giving :func:`load`'s answer for ``importer``, looked up at its first call and
    kept for the process."""
    found: list[ModuleType | None] = []

    def kernels() -> ModuleType | None:
        if not found:
            found.append(load(importer, message))
        return found[0]

    return kernels


def launch(
    parallel: Callable[..., None],
    serial: Callable[..., None],
    N: int,
    *args: object,
    minimum: int = PARALLEL_MIN,
) -> None:
    """``parallel(*args, nblk)`` on ``nblk`` blocks of the N states (a few per thread), or
    ``serial(*args, 1)`` for fewer than ``minimum`` states or while another parallel launch runs."""
    import numba

    if minimum <= N and _PARALLEL.acquire(blocking=False):
        try:
            parallel(*args, min(N, 4 * numba.get_num_threads()))
        finally:
            _PARALLEL.release()
    else:
        serial(*args, 1)


def named(fn: types.FunctionType, suffix: str) -> types.FunctionType:
    """``fn`` under the name ``fn.__name__ + suffix``: numba's disk cache keys compiled code on the
    function's qualified name, so the serial and the parallel kernel of one function need two names
    (under one, whichever compiled first would be loaded for both)."""
    g = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__ + suffix, fn.__defaults__, fn.__closure__)
    g.__qualname__ = fn.__qualname__ + suffix
    g.__doc__ = fn.__doc__
    return g


def direct(kernel: Callable[..., object], *examples: object) -> Callable[..., object]:
    """``kernel``'s compiled entry point for arguments of exactly the types of ``examples`` (numba's
    ``Dispatcher.compile`` of their signature: the version already compiled or cached on disk,
    else compiled now), or ``kernel`` itself when numba cannot give one.

    The entry point skips the dispatcher's type resolution (about 50 ns of a 150 ns call with two
    arrays, more with more) but checks none of its arguments: a caller uses it only where every
    later argument has the examples' types by construction (its own buffers, a library's fresh
    results of a fixed shape and layout, or arrays a dispatched kernel has just accepted)."""
    import numba

    try:
        sig = tuple(numba.typeof(x) for x in examples)
        found = kernel.overloads.get(sig)  # (explicit signatures: compiled already, compile() refused)
        entry = kernel.compile(sig) if found is None else found.entry_point
    except Exception:  # (numba's typing and compilation errors have no common base)
        return kernel
    return entry if callable(entry) else kernel


class Kernel:
    """A numba kernel of explicit signatures, compiled at its first use (:func:`kernel`).

    Numba compiles a function decorated with its signatures, or loads it from its disk cache, when
    the decorator runs: a kernel module would load every kernel it holds when imported (about 3 ms
    each from the cache, seconds each on the first run of an installation), whatever the caller's
    path uses. A Kernel makes numba's dispatcher (``njit(signatures, cache=True, **options)``) when
    it is first called or asked for an attribute (``overloads``, ``compile``, ``py_func``), then
    binds the module's name to that dispatcher, so that the module's later users (``module.name``)
    call numba directly. A Kernel is never called from compiled code (numba cannot type it): kernels
    call the inline helpers they share.
    """

    __slots__ = ("__wrapped__", "_dispatcher", "_lock", "_options", "_signatures")

    def __init__(self, fn: types.FunctionType, signatures: list, options: dict) -> None:
        self.__wrapped__ = fn
        self._signatures, self._options = signatures, options
        self._dispatcher: Callable[..., object] | None = None
        self._lock = threading.Lock()

    def dispatcher(self) -> Callable[..., object]:
        """Numba's dispatcher of the kernel, made once (compiled for every signature, or loaded)."""
        found = self._dispatcher
        if found is None:
            with self._lock:  # (two threads' first calls: one compiles, the other waits)
                found = self._dispatcher
                if found is None:
                    import numba

                    fn = self.__wrapped__
                    found = numba.njit(self._signatures, cache=True, **self._options)(fn)
                    self._dispatcher = found
                    if fn.__globals__.get(fn.__name__) is self:
                        fn.__globals__[fn.__name__] = found
        return found

    def __call__(self, *args: object) -> object:
        return self.dispatcher()(*args)

    def __getattr__(self, name: str) -> object:
        return getattr(self.dispatcher(), name)

    def __repr__(self) -> str:
        state = "compiled" if self._dispatcher is not None else "not compiled yet"
        return f"<bridge kernel {self.__wrapped__.__qualname__} ({state})>"


def kernel(signatures: list, **options: object) -> Callable[[types.FunctionType], Kernel]:
    """Decorator of a kernel compiled for ``signatures`` (numba's, a list) at its first use, with
    numba's disk cache and ``options`` (:class:`Kernel`)."""

    def make(fn: types.FunctionType) -> Kernel:
        return Kernel(fn, list(signatures), dict(options))

    return make
