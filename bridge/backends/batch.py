"""The batch preamble every engine shares: a state's arrays broadcast to one batch and flattened.

A :class:`State` and gravity may each carry different (broadcastable) leading axes. Engines work on
``n`` flattened samples: :class:`FlatBatch` broadcasts every array to the common batch shape and
flattens it to ``(n, ...)`` (optionally followed by ``pad`` copies of the first sample, for the
Featherstone kernels' odd widths), runs per-sample loops for libraries that are not batched, and
gives results their batch axes back.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from bridge.conventions.state import Representation, State

__all__ = ["FlatBatch"]


class FlatBatch:
    """A state and gravity as flat per-sample arrays.

    Attributes:
        batch_shape: the broadcast leading axes of the state and gravity.
        n: the number of samples (``prod(batch_shape)``).
        rows: ``n + pad`` (the flat arrays' first axis).
        H: (rows, 4, 4) base poses; s, s_dot: (rows, k); base_velocity: (rows, 6);
        gravity: (rows, 3); all C-contiguous, new or read-only views of the state's arrays (see
            :meth:`flatten`).

    ``pad``: the number of padding rows, or a function of the number of samples giving it.
    """

    __slots__ = ("H", "_layout", "_rep", "base_velocity", "batch_shape", "gravity", "n", "rows", "s", "s_dot")

    def __init__(self, state: State, gravity: np.ndarray, pad: int | Callable[[int], int] = 0) -> None:
        H = state.world_H_base.matrix
        self._rep = state.representation
        self.batch_shape = tuple(
            np.broadcast_shapes(
                H.shape[:-2],
                state.s.shape[:-1],
                state.s_dot.shape[:-1],
                state.base_velocity.shape[:-1],
                gravity.shape[:-1],
            )
        )
        self.n = int(np.prod(self.batch_shape, dtype=int))
        self.rows = self.n + (pad(self.n) if callable(pad) else pad)
        self._layout = state.layout
        self.H = self.flatten(H, (4, 4))
        self.s = self.flatten(state.s, (state.s.shape[-1],))
        self.s_dot = self.flatten(state.s_dot, (state.s_dot.shape[-1],))
        self.base_velocity = self.flatten(state.base_velocity, (6,))
        self.gravity = self.flatten(gravity, (3,))

    @classmethod
    def single(
        cls, H: np.ndarray, s: np.ndarray, base_velocity: np.ndarray, s_dot: np.ndarray, gravity: np.ndarray
    ) -> FlatBatch:
        """One unbatched state's arrays (H (4, 4), s, s_dot (k,), base_velocity (6,), gravity (3,))
        as a batch of one sample, without the broadcasting (the engines' single-state paths; the
        arrays are not copied: the caller gives them up)."""
        flat = cls.__new__(cls)
        flat.batch_shape, flat.n, flat.rows = (), 1, 1
        flat.H, flat.s, flat.s_dot = H[None], s[None], s_dot[None]
        flat.base_velocity, flat.gravity = base_velocity[None], gravity[None]
        flat._rep = flat._layout = None
        return flat

    def flatten(self, x: np.ndarray, tail: tuple[int, ...]) -> np.ndarray:
        """``x`` (..., *tail) broadcast to the batch and flattened: a (rows, *tail) array (the
        padding rows are copies of the first sample), new, or a view of ``x`` when it is a read-only
        C-contiguous float64 array of that shape already (a State's own arrays: no copy to pay
        for a large batch)."""
        if (
            self.rows == self.n
            and type(x) is np.ndarray
            and not x.flags.writeable
            and x.flags.c_contiguous
            and x.dtype == np.float64
            and x.shape == (*self.batch_shape, *tail)
        ):
            return x.reshape(self.n, *tail)
        out = np.empty((self.rows, *tail))
        out[: self.n] = np.broadcast_to(x, (*self.batch_shape, *tail)).reshape(self.n, *tail)
        if self.rows > self.n:
            out[self.n :] = out[:1]
        return out

    def flat_view(self, x: np.ndarray, k: int) -> np.ndarray:
        """``x`` (..., k) broadcast to the batch and flattened to (rows, k), a view when possible."""
        if self.rows == self.n:
            return np.broadcast_to(x, (*self.batch_shape, k)).reshape(self.n, k)
        return self.flatten(x, (k,))

    def state(self, representation: Representation) -> State:
        """The flat samples as one (unchecked) State (rows, ...) in ``representation``, the
        representation the state was given in (converted when it is another one)."""
        from bridge.spatial import Transform

        flat = State(
            Transform(self.H, check=False),
            self.s,
            self.base_velocity,
            self.s_dot,
            self._rep,
            check=False,
            layout=self._layout,
        )
        return flat if self._rep is representation else flat.to(representation)

    def unflatten(self, arr: np.ndarray) -> np.ndarray:
        """(rows, ...) or (n, ...) per-sample results -> (*batch_shape, ...) (padding dropped)."""
        arr = arr[: self.n] if arr.shape[0] != self.n else arr
        return arr.reshape(*self.batch_shape, *arr.shape[1:])

    def loop(
        self, fn: Callable, *vectors: np.ndarray, select: Callable[[int], None] | None = None
    ) -> np.ndarray:
        """``fn(i, *vectors_i)`` for every sample i (after ``select(i)``), stacked with the batch
        axes in front; ``vectors`` (..., k) broadcast to the batch."""
        flat = [np.broadcast_to(a, (*self.batch_shape, a.shape[-1])).reshape(self.n, -1) for a in vectors]
        out = []
        for i in range(self.n):
            if select is not None:
                select(i)
            out.append(fn(i, *(a[i] for a in flat)))
        return self.unflatten(np.asarray(out))
