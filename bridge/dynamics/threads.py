"""KinDyn and threads: who a KinDyn answers, and the lock its calls hold.

The contract (docs/kindyn.md, "Threads"):

* **One KinDyn per thread is safe with every engine.** No engine shares a library object that a
  KinDyn writes (a Pinocchio ``Data``, a MuJoCo ``MjData``, a Drake ``Context``, an iDynTree
  ``KinDynComputations``, a Newton model whose gravity and base pose are set per state, bridge's
  own work arrays): each KinDyn builds its own, and what engines share between KinDyns (compiled
  trees, index maps, constants) is read only.
* **A KinDyn shared between threads never returns a wrong number.** Its state belongs to the thread
  that set it last (``set_state`` / ``set_robot_state``); that thread's queries are answered, one
  call at a time under the KinDyn's lock, so that no call sees buffers another call is writing. A
  query from any other thread raises :class:`~bridge.errors.ThreadOwnershipError` (it would
  otherwise get the other thread's state) until that thread sets a state of its own, which waits
  for the call in progress and moves the KinDyn to it: handing a KinDyn from thread to thread, one
  at a time, works.

The cost on the single-state hot path: a cached answer compares the owner with
``threading.get_ident()`` (read after the cache, so that a state set in between by another thread
is caught); ``set_state`` and a computed answer take the lock (an uncontended ``RLock``, reentrant
because queries call queries).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from threading import get_ident
from typing import Any, TypeVar

from bridge.errors import ThreadOwnershipError

__all__ = ["foreign_thread", "owned"]

F = TypeVar("F", bound=Callable[..., Any])


def foreign_thread(kd: Any) -> ThreadOwnershipError:
    """The error for a call on ``kd`` from a thread that did not set its state."""
    return ThreadOwnershipError(
        f"{kd!r} was asked from thread {get_ident()}, but its state was set by thread {kd._owner}: a "
        "KinDyn answers the thread that set its state (call set_state in this thread first, or give "
        "each thread its own KinDyn)"
    )


def owned(method: F) -> F:
    """A KinDyn method run under the KinDyn's lock (``_lock``), for the thread owning its state
    (``_owner``; any thread while no state is set: the method raises that error itself)."""

    @functools.wraps(method)
    def call(self: Any, *args: object, **kwargs: object) -> Any:
        lock = self._lock
        lock.acquire()
        try:
            if self._owner != get_ident() and self._has_state:
                raise foreign_thread(self)
            return method(self, *args, **kwargs)
        finally:
            lock.release()

    return call  # type: ignore[return-value]
