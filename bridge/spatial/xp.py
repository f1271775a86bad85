"""Array functions from one place: numpy, JAX and CasADi behind one small namespace.

The reference path of the neutral math (the base maps of the declarations, the change of
variables, the conversions, the state maps) is written against :class:`Ops`, so the same code runs
on numpy arrays (with leading batch axes), on JAX arrays (under ``jax.jit``, ``jax.vmap``,
``jax.grad``; float64 with x64 enabled) and on CasADi ``SX``/``MX``/``DM`` matrices (unbatched;
vectors are columns). :func:`namespace` picks the namespace from the arguments; a library is
imported only when one of its arrays is given.

Vectors and matrices are told apart by the function used (``v*`` for vectors, ``m*`` for
matrices), because CasADi has only matrices. Nothing writes in place.

This module and :mod:`bridge.spatial.xp_casadi` are the only places that import an array library
other than numpy (the layering test checks it).
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

__all__ = ["NUMPY", "Ops", "check_real", "is_foreign", "is_symbolic", "is_traced", "namespace"]


def _kind(x: object) -> str:
    """ "jax", "casadi" or "numpy" for one array-like."""
    module = type(x).__module__
    if module.startswith(("jax", "jaxlib")):
        return "jax"
    if module.startswith("casadi"):
        return "casadi"
    return "numpy"


def is_foreign(x: object) -> bool:
    """Whether ``x`` is a JAX array (or tracer) or a CasADi matrix: not converted to numpy."""
    return _kind(x) != "numpy"


def is_traced(x: object) -> bool:
    """Whether ``x`` is a JAX tracer (no concrete values: checks on values are skipped)."""
    if _kind(x) != "jax":
        return False
    core = sys.modules.get("jax.core")
    tracer = getattr(core, "Tracer", None) if core is not None else None
    return tracer is not None and isinstance(x, tracer)


def is_symbolic(x: object) -> bool:
    """Whether ``x`` is a CasADi symbolic matrix (SX or MX; a DM has values)."""
    return _kind(x) == "casadi" and type(x).__name__ in ("SX", "MX")


def has_values(x: object) -> bool:
    """Whether the values of ``x`` can be read (numpy, a concrete JAX array, a CasADi DM)."""
    return not (is_traced(x) or is_symbolic(x))


def check_real(x: object, name: str) -> None:
    """Refuse what would silently give a wrong number in a JAX or CasADi path: a complex array
    (always: its dtype is known even under tracing; ``jnp.asarray(z, float64)`` would drop the
    imaginary part) and NaN or infinite entries when ``x`` has values (a concrete JAX array, a
    CasADi DM, numpy); nothing is checked on symbols (SX, MX) and on tracers' values.

    Raises :class:`bridge.InvalidValueError` naming ``name``.
    """
    from bridge.errors import InvalidValueError

    if is_symbolic(x):
        return
    dtype = getattr(x, "dtype", None)
    if (dtype is not None and np.dtype(dtype).kind == "c") or isinstance(x, complex):
        raise InvalidValueError(f"{name}: complex values (give real numbers)")
    if is_traced(x):
        return
    try:
        values = np.asarray(x)
    except (TypeError, ValueError):  # ragged or unknown: the caller's conversion names it
        return
    if values.dtype.kind == "c":
        raise InvalidValueError(f"{name}: complex values (give real numbers)")
    if values.dtype.kind == "f" and not np.all(np.isfinite(values)):
        raise InvalidValueError(f"{name}: contains NaN or infinite values")


class Ops:
    """numpy's (or JAX's) functions under the names the neutral math uses; leading axes are batch
    axes with numpy's broadcasting rules."""

    name = "numpy"
    batched = True

    def __init__(self, xp: Any = np) -> None:
        self.xp = xp

    # ------------------------------------------------------------------ creation
    def float_dtype(self, *like: object):
        for x in like:
            dtype = getattr(x, "dtype", None)
            if dtype is not None and np.dtype(dtype).kind == "f":
                return dtype
        return np.float64

    def asarray(self, x: object, like: object = None) -> Any:
        return self.xp.asarray(x, dtype=self.float_dtype(x, like))

    def constant(self, value: object, like: object = None) -> Any:
        """A numpy constant in this namespace (float dtype of ``like``)."""
        return self.xp.asarray(value, dtype=self.float_dtype(like))

    def eye(self, n: int, like: object = None) -> Any:
        return self.xp.eye(n, dtype=self.float_dtype(like))

    def vzeros(self, n: int, like: object = None) -> Any:
        return self.xp.zeros((n,), dtype=self.float_dtype(like))

    def mzeros(self, m: int, n: int, like: object = None) -> Any:
        return self.xp.zeros((m, n), dtype=self.float_dtype(like))

    # ------------------------------------------------------------------ vectors (..., n)
    def vsize(self, x: Any) -> int:
        return x.shape[-1]

    def vpart(self, x: Any, start: int, stop: int) -> Any:
        return x[..., start:stop]

    def vtake(self, x: Any, index: np.ndarray) -> Any:
        return self.xp.take(x, index, axis=-1)

    def vcat(self, parts: list) -> Any:
        parts = [p for p in parts if p.shape[-1]]
        if len(parts) == 1:
            return parts[0]
        lead = np.broadcast_shapes(*(p.shape[:-1] for p in parts))
        return self.xp.concatenate([self.xp.broadcast_to(p, (*lead, p.shape[-1])) for p in parts], axis=-1)

    def cross(self, a: Any, b: Any) -> Any:
        return self.xp.cross(a, b)

    def vdot(self, a: Any, b: Any) -> Any:
        return self.xp.sum(a * b, axis=-1)

    # ------------------------------------------------------------------ matrices (..., m, n)
    def mpart(self, a: Any, rows: slice, cols: slice) -> Any:
        return a[..., rows, cols]

    def mtake_rows(self, a: Any, index: np.ndarray) -> Any:
        return self.xp.take(a, index, axis=-2)

    def mtake_cols(self, a: Any, index: np.ndarray) -> Any:
        return self.xp.take(a, index, axis=-1)

    def mT(self, a: Any) -> Any:
        return self.xp.swapaxes(a, -1, -2)

    def matmul(self, a: Any, b: Any) -> Any:
        return a @ b

    def matvec(self, a: Any, x: Any) -> Any:
        """``a @ x``: (..., m, n) x (..., n) -> (..., m)."""
        return self.xp.einsum("...ij,...j->...i", a, x)

    def vecmat(self, x: Any, a: Any) -> Any:
        """``a^T @ x``: (..., m) x (..., m, n) -> (..., n)."""
        return self.xp.einsum("...ji,...j->...i", a, x)

    def skew(self, u: Any) -> Any:
        """(..., 3, 3) cross-product matrices of (..., 3) vectors."""
        x, y, z = u[..., 0], u[..., 1], u[..., 2]
        zero = self.xp.zeros_like(x)
        stack = self.xp.stack
        return stack(
            [stack([zero, -z, y], axis=-1), stack([z, zero, -x], axis=-1), stack([-y, x, zero], axis=-1)],
            axis=-2,
        )

    def block(self, grid: list[list[Any]]) -> Any:
        """A matrix from a grid of blocks (broadcast over the batch axes)."""
        flat = [b for row in grid for b in row]
        lead = np.broadcast_shapes(*(b.shape[:-2] for b in flat))
        xp = self.xp
        rows = [
            xp.concatenate([xp.broadcast_to(b, (*lead, *b.shape[-2:])) for b in row], axis=-1) for row in grid
        ]
        return xp.concatenate(rows, axis=-2)

    def broadcast_to(self, x: Any, shape: tuple[int, ...]) -> Any:
        return self.xp.broadcast_to(x, shape)

    def entry(self, a: Any, i: int, j: int) -> Any:
        """The (..., ) entries ``a[..., i, j]`` of matrices."""
        return a[..., i, j]

    def item(self, x: Any, i: int) -> Any:
        """The (..., ) entries ``x[..., i]`` of vectors."""
        return x[..., i]

    def vector(self, items: list) -> Any:
        """A (..., k) vector from k (..., ) arrays of entries."""
        lead = np.broadcast_shapes(*(np.shape(x) for x in items))
        return self.xp.stack([self.xp.broadcast_to(x, lead) for x in items], axis=-1)

    def matrix(self, rows: list[list]) -> Any:
        """A (..., m, n) matrix from rows of (..., ) entries."""
        return self.xp.stack([self.vector(r) for r in rows], axis=-2)

    def pose(self, R: Any, p: Any) -> Any:
        """Homogeneous matrices (..., 4, 4) from rotations (..., 3, 3) and origins (..., 3)."""
        lead = np.broadcast_shapes(R.shape[:-2], p.shape[:-1])
        R = self.xp.broadcast_to(R, (*lead, 3, 3))
        col = self.xp.broadcast_to(p, (*lead, 3))[..., None]
        bottom = self.xp.broadcast_to(self.constant([[0.0, 0.0, 0.0, 1.0]], R), (*lead, 1, 4))
        return self.xp.concatenate([self.xp.concatenate([R, col], axis=-1), bottom], axis=-2)

    def pose_parts(self, H: Any) -> tuple[Any, Any]:
        """``(R (..., 3, 3), p (..., 3))`` of homogeneous matrices H (..., 4, 4)."""
        return H[..., :3, :3], H[..., :3, 3]

    # ------------------------------------------------------------------ scalars
    def sqrt(self, x: Any) -> Any:
        return self.xp.sqrt(x)

    def sin(self, x: Any) -> Any:
        return self.xp.sin(x)

    def cos(self, x: Any) -> Any:
        return self.xp.cos(x)

    def arctan2(self, y: Any, x: Any) -> Any:
        return self.xp.arctan2(y, x)

    def where(self, c: Any, a: Any, b: Any) -> Any:
        return self.xp.where(c, a, b)


_EYE3 = np.eye(3)
_EYE3.setflags(write=False)
_ZERO33 = np.zeros((3, 3))
_ZERO33.setflags(write=False)


# skew(u).ravel() == _SKEW_ROWS @ u
_SKEW_ROWS_T = np.array(
    [[0, 0, 0], [0, 0, -1], [0, 1, 0], [0, 0, 1], [0, 0, 0], [-1, 0, 0], [0, -1, 0], [1, 0, 0], [0, 0, 0]],
    dtype=np.float64,
).T.copy()
_SKEW_ROWS_T.setflags(write=False)


class NumpyOps(Ops):
    """:class:`Ops` on numpy, with block assembly into one new array (a fresh result, so the
    callers stay functional; cheaper than numpy's broadcast-and-concatenate for small blocks)."""

    def block(self, grid: list[list[Any]]) -> Any:
        flat = [b for row in grid for b in row]
        leads = {b.shape[:-2] for b in flat}
        leads.discard(())
        lead = leads.pop() if len(leads) == 1 else np.broadcast_shapes(*leads, ())
        heights = [row[0].shape[-2] for row in grid]
        widths = [b.shape[-1] for b in grid[0]]
        dtype = np.float64 if all(b.dtype == np.float64 for b in flat) else np.result_type(*flat)
        out = np.zeros((*lead, sum(heights), sum(widths)), dtype=dtype)
        r = 0
        for row, h in zip(grid, heights, strict=True):
            c = 0
            for b in row:
                w = b.shape[-1]
                if b is not _ZERO33:  # (the result starts at zero)
                    out[..., r : r + h, c : c + w] = b
                c += w
            r += h
        return out

    def vcat(self, parts: list) -> Any:
        parts = [p for p in parts if p.shape[-1]]
        if len(parts) == 1:
            return parts[0]
        lead = np.broadcast_shapes(*(p.shape[:-1] for p in parts))
        out = np.empty((*lead, sum(p.shape[-1] for p in parts)), dtype=np.result_type(*parts))
        c = 0
        for p in parts:
            out[..., c : c + p.shape[-1]] = p
            c += p.shape[-1]
        return out

    def eye(self, n: int, like: object = None) -> Any:
        if n == 3 and getattr(like, "dtype", np.float64) == np.float64:
            return _EYE3  # read-only: every caller builds new arrays from it
        return super().eye(n, like)

    def mzeros(self, m: int, n: int, like: object = None) -> Any:
        if (m, n) == (3, 3) and getattr(like, "dtype", np.float64) == np.float64:
            return _ZERO33
        return super().mzeros(m, n, like)

    def skew(self, u: Any) -> Any:
        # skew(u) flattened is _SKEW_ROWS @ u: one product for any batch
        return (u @ _SKEW_ROWS_T).reshape(*u.shape[:-1], 3, 3)


#: the numpy namespace
NUMPY = NumpyOps(np)
_JAX: list[Ops] = []


def _jax_ops() -> Ops:
    if not _JAX:
        import jax.numpy as jnp

        ops = Ops(jnp)
        ops.name = "jax"
        _JAX.append(ops)
    return _JAX[0]


def namespace(*arrays: object) -> Ops:
    """The namespace of the arguments: CasADi if any is a CasADi matrix, else JAX if any is a JAX
    array, else numpy. Mixing CasADi with JAX is an error."""
    kinds = {_kind(a) for a in arrays if a is not None}
    if "casadi" in kinds:
        if "jax" in kinds:
            from bridge.errors import InvalidValueError

            raise InvalidValueError("JAX arrays and CasADi symbols cannot be mixed in one call")
        from bridge.spatial.xp_casadi import casadi_ops

        return casadi_ops()
    if "jax" in kinds:
        return _jax_ops()
    return NUMPY
