"""The CasADi namespace of :mod:`bridge.spatial.xp`: the same functions on ``SX``/``MX``/``DM``.

CasADi has matrices only and no batch axes: a vector of length n is an (n, 1) column, a matrix an
(m, n) one. A numpy constant meets a CasADi argument as a ``DM``. Imported only when a CasADi
argument is given.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bridge.spatial.xp import Ops

__all__ = ["CasadiOps", "casadi_ops"]


class CasadiOps(Ops):
    """:class:`Ops` on CasADi matrices (unbatched; vectors as columns)."""

    name = "casadi"
    batched = False

    def __init__(self) -> None:
        import casadi

        self.ca = casadi
        super().__init__(np)

    def _m(self, x: object) -> Any:
        """``x`` as a CasADi matrix (numpy vectors become columns)."""
        ca = self.ca
        if isinstance(x, (ca.SX, ca.MX, ca.DM)):
            return x
        arr = np.asarray(x, dtype=np.float64)
        return ca.DM(arr.reshape(-1, 1) if arr.ndim <= 1 else arr)

    # ------------------------------------------------------------------ creation
    def asarray(self, x: object, like: object = None) -> Any:
        return self._m(x)

    def constant(self, value: object, like: object = None) -> Any:
        return self._m(value)

    def eye(self, n: int, like: object = None) -> Any:
        return self.ca.DM.eye(n)

    def vzeros(self, n: int, like: object = None) -> Any:
        return self.ca.DM.zeros(n, 1)

    def mzeros(self, m: int, n: int, like: object = None) -> Any:
        return self.ca.DM.zeros(m, n)

    # ------------------------------------------------------------------ vectors (n, 1)
    def vsize(self, x: Any) -> int:
        return self._m(x).shape[0]

    def vpart(self, x: Any, start: int, stop: int) -> Any:
        return self._m(x)[start:stop]

    def vtake(self, x: Any, index: np.ndarray) -> Any:
        return self._m(x)[[int(i) for i in np.asarray(index).ravel()]]

    def vcat(self, parts: list) -> Any:
        return self.ca.vertcat(*(self._m(p) for p in parts))

    def cross(self, a: Any, b: Any) -> Any:
        return self.ca.cross(self._m(a), self._m(b))

    def vdot(self, a: Any, b: Any) -> Any:
        return self.ca.dot(self._m(a), self._m(b))

    # ------------------------------------------------------------------ matrices
    def mpart(self, a: Any, rows: slice, cols: slice) -> Any:
        return self._m(a)[rows, cols]

    def mtake_rows(self, a: Any, index: np.ndarray) -> Any:
        return self._m(a)[[int(i) for i in np.asarray(index).ravel()], :]

    def mtake_cols(self, a: Any, index: np.ndarray) -> Any:
        return self._m(a)[:, [int(i) for i in np.asarray(index).ravel()]]

    def mT(self, a: Any) -> Any:
        return self._m(a).T

    def matmul(self, a: Any, b: Any) -> Any:
        return self.ca.mtimes(self._m(a), self._m(b))

    def matvec(self, a: Any, x: Any) -> Any:
        return self.ca.mtimes(self._m(a), self._m(x))

    def vecmat(self, x: Any, a: Any) -> Any:
        return self.ca.mtimes(self._m(a).T, self._m(x))

    def skew(self, u: Any) -> Any:
        return self.ca.skew(self._m(u))

    def block(self, grid: list[list[Any]]) -> Any:
        ca = self.ca
        return ca.vertcat(*(ca.horzcat(*(self._m(b) for b in row)) for row in grid))

    def broadcast_to(self, x: Any, shape: tuple[int, ...]) -> Any:
        return self._m(x)

    def entry(self, a: Any, i: int, j: int) -> Any:
        return self._m(a)[i, j]

    def item(self, x: Any, i: int) -> Any:
        return self._m(x)[i]

    def vector(self, items: list) -> Any:
        return self.ca.vertcat(*items)

    def matrix(self, rows: list[list]) -> Any:
        return self.ca.vertcat(*(self.ca.horzcat(*r) for r in rows))

    def pose(self, R: Any, p: Any) -> Any:
        ca = self.ca
        return ca.vertcat(ca.horzcat(self._m(R), self._m(p)), ca.DM([[0.0, 0.0, 0.0, 1.0]]))

    def pose_parts(self, H: Any) -> tuple[Any, Any]:
        H = self._m(H)
        return H[0:3, 0:3], H[0:3, 3]

    # ------------------------------------------------------------------ scalars
    def sqrt(self, x: Any) -> Any:
        return self.ca.sqrt(x)

    def sin(self, x: Any) -> Any:
        return self.ca.sin(x)

    def cos(self, x: Any) -> Any:
        return self.ca.cos(x)

    def arctan2(self, y: Any, x: Any) -> Any:
        return self.ca.atan2(y, x)

    def where(self, c: Any, a: Any, b: Any) -> Any:
        return self.ca.if_else(c, a, b)


_OPS: list[CasadiOps] = []


def casadi_ops() -> CasadiOps:
    """The CasADi namespace (made on first use)."""
    if not _OPS:
        _OPS.append(CasadiOps())
    return _OPS[0]
