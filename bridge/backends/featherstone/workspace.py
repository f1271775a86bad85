"""The reusable work arrays of the kernels for one compiled tree, and the chunked batch runner.

A :class:`Workspace` is made from a compiled tree (:func:`~.tree.compile_tree`) and owns the
*arena* of work arrays its kernels fill (see :meth:`~.joints.Joints.buf`): re-allocating tens of MB
of temporaries on every call costs page faults (glibc returns freed large blocks to the system),
which for batches of ~1000 states is a third of the run time. :meth:`Workspace.run` processes a
batch in chunks of at most :data:`CHUNK` states on that arena.

The spatial_v2-style functions (:mod:`.spatial_v2`, :mod:`.kinematics`) get the model's shared
workspace from :meth:`Workspace.of` (the tree compiled once per model); the engine holds a
workspace of its own, whose arrays its joint data keeps between calls.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from bridge._cache import ModelCache

from .model import FeatherstoneModel
from .tree import Tree, compile_tree

__all__ = ["CHUNK", "Workspace", "padded_width"]

#: public functions process batches in chunks of at most this many states: the work arrays are
#: bounded (about 65 MB after RNEA, CRBA and ABA on iCub) and reused from one chunk/call to the
#: next; each chunk pays the fixed cost of the level loops (about 0.5 to 1.2 ms on iCub)
CHUNK = 1024


def padded_width(N: int) -> tuple[int, int]:
    """``(Np, w)``: the chunked functions process N states as ``Np = k w >= N`` states, k chunks of
    an odd width ``w`` (at most ``CHUNK + 1``); the extra states repeat the first one and are dropped.

    Why: the kernels' work arrays are (..., w) with one row per component and body; with w a
    multiple of 512 (batch sizes like 1024 are common) rows 4 kB apart map to the same cache sets
    and every access across rows (the transposes, the small matrix products) misses the cache.
    An odd width costs at most one extra state per chunk and is 5-15 % faster at N = 1024.
    """
    if N <= 1:
        return N, 1
    k = -(-N // CHUNK)
    w = -(-N // k)
    w += 1 - w % 2
    return k * w, w


class Workspace:
    """A compiled tree with the work arrays (``arena``: name -> array and its views) of its kernels.

    Args:
        tree: the compiled tree (:func:`~.tree.compile_tree`).
    """

    def __init__(self, tree: Tree) -> None:
        self.tree = tree
        self.arena: dict = {}
        self._lock = threading.Lock()

    @classmethod
    def of(cls, fmodel: FeatherstoneModel, free: bool) -> Workspace:
        """The shared workspace of a model's tree (the free tree of a floatbase model with ``free``),
        compiled on first use and kept as long as the model object lives."""
        kept = _SHARED.of(fmodel)
        ws = kept.get(free)
        if ws is None:
            ws = kept.setdefault(free, cls(compile_tree(fmodel, free)))
        return ws

    def arena_for(self, N: int) -> dict:
        """The arena for a batch of N states processed at once (not chunked): this workspace's for
        up to :data:`CHUNK` states, a fresh one for more (so that a workspace does not hold on to
        hundreds of MB after one huge batch)."""
        return self.arena if N <= CHUNK else {}

    def run(self, N: int, fn: Callable[[slice, dict], None]) -> None:
        """Call ``fn(sl, arena)`` for the consecutive chunks ``sl`` of N states padded as
        :func:`padded_width` says (the caller's batch-last arrays have its Np columns).

        ``arena`` is this workspace's, reused from call to call; a call while the workspace is in
        use (a nested call, or another thread on the same model) gets a fresh one.
        """
        owned = self._lock.acquire(blocking=False)
        arena = self.arena if owned else {}
        try:
            Np, w = padded_width(N)
            for start in range(0, Np, w):
                fn(slice(start, start + w), arena)
        finally:
            if owned:
                self._lock.release()


#: fmodel -> {free: its shared Workspace}
_SHARED = ModelCache()
