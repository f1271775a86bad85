"""The error measure of every comparison, and the :class:`~bridge.validation.report.Result` row of it.

Per sample (sample axis first): ``abs = ||a - b||`` and ``rel = abs / max(1, ||b||)``, b the
reference. Accelerations are compared by their normwise backward error ``||M (a - b)|| / max(1,
||M|| ||b||)`` (see :mod:`bridge.validation.cross_validation`).
"""

from __future__ import annotations

import numpy as np

from bridge.validation.report import Result

__all__ = ["errors", "mv", "result"]


def mv(M: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``M @ v`` over leading axes: M (..., n, m), v (..., m)."""
    return np.einsum("...ij,...j->...i", M, v)


def errors(a: np.ndarray, b: np.ndarray, M: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Per-sample norm-wise absolute and relative (to max(1, ||b||)) errors; sample axis first.

    With ``M`` (accelerations): the backward error ``||M (a - b)|| / max(1, ||M|| ||b||)``.
    """
    n = a.shape[0]
    if M is not None:
        diff = np.linalg.norm(mv(M, a - b).reshape(n, -1), axis=1)
        scale = np.linalg.norm(M.reshape(n, -1), axis=1) * np.linalg.norm(b.reshape(n, -1), axis=1)
        return diff, diff / np.maximum(1.0, scale)
    diff = np.linalg.norm((a - b).reshape(n, -1), axis=1)
    scale = np.maximum(1.0, np.linalg.norm(b.reshape(n, -1), axis=1))
    return diff, diff / scale


def result(quantity, rep, engines, a, b, tol, frame=None, M=None) -> Result:
    """The row comparing ``a`` with the reference ``b`` (sample axis first) against ``tol``."""
    abs_err, rel_err = errors(np.asarray(a), np.asarray(b), M)
    worst = int(np.argmax(rel_err))
    return Result(
        quantity=quantity,
        representation=rep,
        engines=engines,
        max_abs=float(abs_err.max()),
        max_rel=float(rel_err.max()),
        worst_sample=worst,
        tolerance=tol,
        passed=bool(np.all(rel_err <= tol)),
        frame=frame,
    )
