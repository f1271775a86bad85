"""Compiled kernels (numba) of the MuJoCo engine's single state, MuJoCo's C functions called in them.

A query of the compiled single state (:class:`~bridge.backends.single.CompiledSingle`) was a
Python call of MuJoCo (through its bindings, ~0.15 µs a crossing) and a kernel taking the result
back (numba's dispatch, ~0.25 µs with its arrays): here each query is ONE kernel that runs
MuJoCo's stages it needs (``mj_fwdPosition``, ``mj_fwdVelocity``, once per state), MuJoCo's own
function and the change of variables, reading MuJoCo's arrays where they are and writing the
result into the caller's fresh array. :func:`set_state` checks a state and writes it into the
state array and the ``MjData`` (``qpos``, ``qvel``); a state that is not valid changes nothing.

The kernels take the engine's pointer table ``P`` (int64, :data:`SLOTS`: the ``mjModel`` and
``mjData`` addresses, those of the ``MjData`` arrays read and written, of the state array, of a
scratch array and of the frame change's constants, the stage computed) and view memory through
:func:`_view`; the engine keeps every array the table points to alive. The change of variables is
the state array's (compiled from the declarations by
:class:`~bridge.conventions.single_state.SingleStateChange`), taken back by the kernels of
:mod:`bridge.backends.single_kernels`, inlined here: nothing here is a change of variables.

MuJoCo's functions are bound by name (numba's ``ExternalFunction``) in MuJoCo's shared library,
loaded into LLVM's symbol table when this module is imported (the library of the ``mujoco``
package: the same library, and state, as its bindings); compiled code is cached on disk
(``cache=True``). The kernels of :mod:`bridge.backends.single_kernels` are inlined
(``inline="always"``): after editing them, clear this package's ``__pycache__/*.nbi``/``*.nbc``.
Requires MuJoCo's 4.x ``mj_fullM(m, d, dst)``; the engine checks that before loading this module.
A MuJoCo error (``mju_error``) inside a kernel would end the process instead of raising: the
kernels run only on a model the engine compiled and a state checked first, where MuJoCo's
functions raise nothing (they warn through ``d.warning``).
"""

from __future__ import annotations

import glob
import os

import llvmlite.binding as llvm
import mujoco
import numpy as np
from numba import boolean, carray, float64, int64, njit, types, void
from numba.extending import intrinsic

from bridge.backends import single_kernels as sk
from bridge.conventions.single_kernels import PERM

__all__ = [
    "SLOTS",
    "bias_forces",
    "forward_dynamics",
    "frame_jacobian",
    "inverse_dynamics",
    "mass_matrix",
    "set_state",
]


def _library() -> str:
    """The path of the ``mujoco`` package's shared library (ImportError when not found)."""
    here = os.path.dirname(mujoco.__file__)
    for pattern in ("libmujoco.so*", "libmujoco*.dylib", "mujoco.dll"):
        found = sorted(glob.glob(os.path.join(here, pattern)))
        if found:
            return found[0]
    raise ImportError(f"MuJoCo's shared library not found in {here}")


llvm.load_library_permanently(_library())
for _name in ("mj_fwdPosition", "mj_fullM", "mj_inverseSkip"):
    if not llvm.address_of_symbol(_name):
        raise ImportError(f"{_name} not found in MuJoCo's shared library")

_p, _int = types.voidptr, types.intc
_fwd_position = types.ExternalFunction("mj_fwdPosition", void(_p, _p))
_fwd_velocity = types.ExternalFunction("mj_fwdVelocity", void(_p, _p))
_full_m = types.ExternalFunction("mj_fullM", void(_p, _p, _p))
_mul_m = types.ExternalFunction("mj_mulM", void(_p, _p, _p, _p))
_jac = types.ExternalFunction("mj_jac", void(_p, _p, _p, _p, _p, _int))
_inverse = types.ExternalFunction("mj_inverse", void(_p, _p))
_inverse_skip = types.ExternalFunction("mj_inverseSkip", void(_p, _p, _int, _int))
_forward = types.ExternalFunction("mj_forward", void(_p, _p))
_forward_skip = types.ExternalFunction("mj_forwardSkip", void(_p, _p, _int, _int))

#: the slots of the pointer table P (int64): the stage computed for the current state (0 none, 1
#: positions, 2 velocities), the addresses (mjModel, mjData, MjData's qpos, qvel, qacc, qfrc_bias,
#: qfrc_inverse, qfrc_applied, the state array, the scratch array, the frame change's constants or
#: 0), then sizes and flags (the joint order the identity); after them the joint order on the
#: whole velocity (nv: MuJoCo's index of each source index, the state array's, as integers)
SLOTS = (
    "stage", "model", "data", "qpos", "qvel", "qacc", "bias", "inverse", "applied", "state", "scratch",
    "frame", "nq", "nv", "state_size", "frame_size", "skip_stage", "bias_free", "in_order",
)  # fmt: skip
(
    _STAGE, _MODEL, _DATA, _QPOS, _QVEL, _QACC, _BIAS, _INV, _APPLIED, _STATE, _SCRATCH,
    _FRAME, _NQ, _NV, _STATE_SIZE, _FRAME_SIZE, _SKIP, _BIAS_FREE, _IN_ORDER,
) = range(len(SLOTS))  # fmt: skip
_POSITION, _VELOCITY = 1, 2


@intrinsic
def _pointer(typingctx, address):
    """The float64 pointer at an integer address."""
    sig = types.CPointer(float64)(int64)

    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], context.get_value_type(types.CPointer(float64)))

    return sig, codegen


@njit(cache=True, inline="always")
def _view(address: int, n: int) -> np.ndarray:
    """The float64 array (n,) at ``address`` (a view, no copy)."""
    return carray(_pointer(address), n)


@njit(cache=True, inline="always")
def _state(P: np.ndarray) -> np.ndarray:
    return _view(P[_STATE], P[_STATE_SIZE])


@njit(cache=True, inline="always")
def _positions(P: np.ndarray) -> None:
    """MuJoCo's position stage of the current state, once."""
    if P[_STAGE] < _POSITION:
        _fwd_position(P[_MODEL], P[_DATA])
        P[_STAGE] = _POSITION


@njit(cache=True, inline="always")
def _velocities(P: np.ndarray) -> None:
    """MuJoCo's position and velocity stages of the current state, once."""
    if P[_STAGE] < _VELOCITY:
        _positions(P)
        _fwd_velocity(P[_MODEL], P[_DATA])
        P[_STAGE] = _VELOCITY


@njit(cache=True, inline="always")
def _dynamics(P: np.ndarray, forward: bool) -> None:
    """MuJoCo's forward (or inverse) dynamics of the current state, skipping the position and
    velocity stages when they are computed."""
    m, d = P[_MODEL], P[_DATA]
    if P[_STAGE] >= _VELOCITY:
        if forward:
            _forward_skip(m, d, P[_SKIP], 0)
        else:
            _inverse_skip(m, d, P[_SKIP], 0)
        return
    if forward:
        _forward(m, d)
    else:
        _inverse(m, d)
    P[_STAGE] = _VELOCITY


# the state kernels of bridge.backends.single_kernels (one implementation), inlined into these
_set_state = njit(cache=True, inline="always")(sk.set_state.py_func)
_vector_back = njit(cache=True, inline="always")(sk.vector_back_permuted.py_func)
_sum_back = njit(cache=True, inline="always")(sk.sum_back.py_func)
_columns_back = njit(cache=True, inline="always")(sk.columns_back_permuted.py_func)
_frame_columns_back = njit(cache=True, inline="always")(sk.frame_columns_back.py_func)
_acceleration = njit(cache=True, inline="always")(sk.acceleration.py_func)
_acceleration_back = njit(cache=True, inline="always")(sk.acceleration_back.py_func)

_I, _V, _M = int64[::1], float64[::1], float64[:, ::1]
_RV, _RM = types.Array(float64, 1, "C", readonly=True), types.Array(float64, 2, "C", readonly=True)


@njit([boolean(h, v, v, v, _I) for h in (_M, _RM) for v in (_V, _RV)], cache=True)
def set_state(H: np.ndarray, s: np.ndarray, vb: np.ndarray, sd: np.ndarray, P: np.ndarray) -> bool:
    """:func:`bridge.backends.single_kernels.set_state` into the state array, then MuJoCo's
    ``qpos``, ``qvel`` into the ``MjData`` (no stage computed yet); False, changing nothing, when
    the arrays are not one valid state."""
    state = _state(P)
    if not _set_state(H, s, vb, sd, state):
        return False
    nq, nv = P[_NQ], P[_NV]
    q0 = int(state[9])
    qpos, qvel = _view(P[_QPOS], nq), _view(P[_QVEL], nv)
    for i in range(nq):
        qpos[i] = state[q0 + i]
    for i in range(nv):
        qvel[i] = state[q0 + nq + i]
    P[_STAGE] = 0
    return True


@njit(void(_I, _M), cache=True)
def mass_matrix(P: np.ndarray, out: np.ndarray) -> None:
    """``out = T^T M_mj T`` (nv, nv): ``mj_fullM`` into the scratch array, then the change of
    variables (joints permuted back)."""
    _positions(P)
    nv = P[_NV]
    w = _view(P[_SCRATCH], nv * nv + 6 * nv + 36)
    M = w[: nv * nv].reshape((nv, nv))
    G, C = w[nv * nv : nv * nv + 6 * nv].reshape((6, nv)), w[nv * nv + 6 * nv :].reshape((6, 6))
    _full_m(P[_MODEL], P[_DATA], P[_SCRATCH])
    state = _state(P)
    sk.congruence_rows(M, sk._X(state, False), G, C)
    for r in range(6):
        for c in range(6):
            out[r, c] = C[r, c]
    if P[_IN_ORDER]:  # (plain copies, which the compiler vectorizes)
        for r in range(6):
            for j in range(6, nv):
                out[r, j] = G[r, j]
                out[j, r] = G[r, j]
        for i in range(6, nv):
            for j in range(6, nv):
                out[i, j] = M[i, j]
        return
    o = len(SLOTS)  # the order (MuJoCo's index of each source index) as integers, after the slots
    for r in range(6):  # (the base keeps its place in the order: joints alone are permuted)
        for j in range(6, nv):
            x = G[r, P[o + j]]
            out[r, j] = x
            out[j, r] = x
    for i in range(6, nv):
        t = P[o + i]
        for j in range(6, nv):
            out[i, j] = M[t, P[o + j]]


@njit(void(_I, _V), cache=True)
def bias_forces(P: np.ndarray, out: np.ndarray) -> None:
    """``out = T^T (qfrc_bias + M_mj T_dot nu)`` (nv,): MuJoCo's inverse dynamics at zero
    acceleration in the representation (``mj_mulM`` only when ``T_dot nu`` is not zero)."""
    _velocities(P)
    nv = P[_NV]
    state = _state(P)
    bias = _view(P[_BIAS], nv)
    if P[_BIAS_FREE]:
        _vector_back(bias, state, out)
        return
    b = sk._work(state) + 108  # T_dot nu, then n zeros: MuJoCo's acceleration
    Ma = _view(P[_SCRATCH], nv)
    _mul_m(P[_MODEL], P[_DATA], P[_SCRATCH], P[_STATE] + 8 * b)
    _sum_back(Ma, bias, state, out)


@njit(void(_I, _I, _M), cache=True)
def frame_jacobian(P: np.ndarray, F: np.ndarray, out: np.ndarray) -> None:
    """``out`` (6, nv): the Jacobian of a frame ``F = [point, origin (3,), rotation (9,), body]``
    (addresses of MuJoCo's rows, the body id): ``mj_jac`` at ``point`` (F[A]), moved to the
    representation's frame by the frame change (when the table has one) and taken back by T."""
    _positions(P)
    nv = P[_NV]
    J = _view(P[_SCRATCH], 6 * nv).reshape((6, nv))
    _jac(P[_MODEL], P[_DATA], P[_SCRATCH], P[_SCRATCH] + 24 * nv, F[0], F[3])
    state = _state(P)
    if P[_FRAME] == 0:
        _columns_back(J, state, out)
    else:
        frame = _view(P[_FRAME], P[_FRAME_SIZE])
        _frame_columns_back(J, _view(F[1], 3), _view(F[2], 9), frame, state, out)


@njit([boolean(_I, v, v, _V) for v in (_V, _RV)], cache=True)
def inverse_dynamics(P: np.ndarray, base_acc: np.ndarray, s_ddot: np.ndarray, out: np.ndarray) -> bool:
    """``out = T^T mj_inverse(T nu_dot + T_dot nu)`` (nv,), ``qacc`` written in the ``MjData``
    (skipping the stages computed); False, nothing run, when the acceleration is not finite and
    moderate or the arguments' shapes are not (6,) and (n,)."""
    nv = P[_NV]
    state = _state(P)
    if not _acceleration(state, base_acc, s_ddot, _view(P[_QACC], nv)):
        return False
    _dynamics(P, False)
    _vector_back(_view(P[_INV], nv), state, out)
    return True


@njit([boolean(_I, v, _V) for v in (_V, _RV)], cache=True)
def forward_dynamics(P: np.ndarray, t: np.ndarray, out: np.ndarray) -> bool:
    """``out = T^-1 (mj_forward(qfrc_applied = T^-T [0; t]) - T_dot nu)`` (nv,) for joint torques
    ``t`` (n,) (the base's applied force stays zero); False, nothing run, when ``t`` is not finite
    and moderate or not of shape (n,)."""
    nv = P[_NV]
    n = nv - 6
    if t.shape[0] != n:
        return False
    total = 0.0
    for k in range(n):
        total += t[k] * t[k]
    if not total < sk.MODERATE_SQ:
        return False
    state = _state(P)
    applied = _view(P[_APPLIED], nv)
    for k in range(n):
        applied[6 + k] = t[int(state[PERM + k])]
    _dynamics(P, True)
    _acceleration_back(_view(P[_QACC], nv), state, out)
    return True
