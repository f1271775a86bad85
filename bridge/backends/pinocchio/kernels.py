"""The compiled kernels of the Pinocchio engine's single-state path, in the forms its derivatives
call.

The kernels are the library engines' shared ones (:mod:`bridge.backends.single_kernels`, over the
change of variables compiled from the declarations, :mod:`bridge.conventions.single_kernels`);
:mod:`bridge.backends.pinocchio.derivatives` calls :func:`force` and :func:`acceleration_back` with
a fourth argument, the former constants array, now part of the state array and ignored here.
Imported only when numba is installed; it names no library.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from bridge.backends.single_kernels import acceleration_back as _acceleration_back
from bridge.backends.single_kernels import force as _force

__all__ = ["acceleration_back", "force"]


@njit(cache=True)
def force(tau: np.ndarray, state: np.ndarray, _unused: np.ndarray, out: np.ndarray) -> None:
    """:func:`bridge.backends.single_kernels.force` (``out = T^-T tau``)."""
    _force(tau, state, out)


@njit(cache=True)
def acceleration_back(a: np.ndarray, state: np.ndarray, _unused: np.ndarray, out: np.ndarray) -> None:
    """:func:`bridge.backends.single_kernels.acceleration_back` (``out = T^-1 (a - T_dot nu)``)."""
    _acceleration_back(a, state, out)
