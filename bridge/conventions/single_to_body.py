"""The change of variables of one unbatched state to a BODY-based convention, refilled in place:
the single-state hot path of BODY-native engines (the Pinocchio engine's).

A :class:`SingleToBody` holds one :class:`bridge.conventions.change_of_variables.ChangeOfVariables` whose
constant parts (the representation, the joint order, the lazy ``T_dot nu``) are set once; one call
per state reads the base block out of the pose and writes the state's velocity in the target.
docs/performance.md ("What the hot path does") says why it is built this way.

This module is neutral: it names no library.
"""

from __future__ import annotations

import numpy as np

from bridge.conventions.change_of_variables import ChangeOfVariables, JointOrder, MixedToBodyBias
from bridge.conventions.state import Representation

__all__ = ["SingleToBody"]

# flat indices into a (4, 4) pose H giving blkdiag(R^T, R^T) (6, 6); 12 is H[3, 0] == 0
_BLKDIAG_RT = np.full((6, 6), 12, dtype=np.intp)
for _i in range(3):
    for _j in range(3):
        _BLKDIAG_RT[_i, _j] = _BLKDIAG_RT[3 + _i, 3 + _j] = 4 * _j + _i
del _i, _j


class SingleToBody:
    """The change of variables of one unbatched state from ``rep`` to a BODY-based convention,
    filled again for each state: the single-state hot path of BODY-native engines.

    Made once per velocity buffer: ``v_base`` (6,) and ``v_joints`` (n,) receive the state's
    velocity in the target, ``T [base_velocity; s_dot]`` (``v_base`` unused for a fixed base).
    :meth:`fill` (chosen once for ``rep``) takes the base pose ``H`` (4, 4), its ``rows``
    (``H.tolist()``: Python floats are cheaper than numpy calls at this size), the base velocity
    (6,) in ``rep`` and ``s_dot`` (n,) in the model's order; it writes the velocity and returns
    :attr:`cov`, the :class:`ChangeOfVariables` of that state (the same object every time: its
    previous values are lost). ``X = B_X_W`` is read out of H with one ``take`` (MIXED:
    ``blkdiag(R^T, R^T)``, whose inverse is its transpose); INERTIAL adds the translation block.
    ``T_dot nu`` is read lazily from ``v_base`` (the BODY base velocity): ``-omega_B x v_B`` for
    MIXED, zero for BODY and INERTIAL, where ``T_dot nu = -crm(v_B) v_B = 0``.
    """

    __slots__ = ("_perm", "_v_base", "_v_joints", "cov", "fill")

    def __init__(
        self, rep: Representation, joints: JointOrder, v_base: np.ndarray, v_joints: np.ndarray
    ) -> None:
        cov = ChangeOfVariables.__new__(ChangeOfVariables)
        cov.joints, cov.nu, cov.X_dot, cov._bias, cov._bias_fn = joints, None, None, None, None
        cov.X = cov.X_inv = None
        floating = bool(joints.nb)
        cov.bias_free = rep is not _MIXED_REP or not floating
        cov.identity = (rep is _BODY_REP or not floating) and joints.perm is None
        if floating and rep is _MIXED_REP:
            cov._bias_fn = MixedToBodyBias(v_base)
        self.cov = cov
        self._perm, self._v_base, self._v_joints = joints.perm, v_base, v_joints
        if not floating:
            self.fill = self._fill_fixed
        else:
            fills = {_BODY_REP: self._fill_body, _MIXED_REP: self._fill_mixed}
            self.fill = fills.get(rep, self._fill_inertial)

    def _fill_fixed(
        self, H: np.ndarray, rows: list, base_velocity: np.ndarray, s_dot: np.ndarray
    ) -> ChangeOfVariables:
        perm = self._perm
        self._v_joints[...] = s_dot if perm is None else s_dot[perm]
        return self.cov

    def _fill_body(
        self, H: np.ndarray, rows: list, base_velocity: np.ndarray, s_dot: np.ndarray
    ) -> ChangeOfVariables:
        perm = self._perm
        self._v_joints[...] = s_dot if perm is None else s_dot[perm]
        self._v_base[...] = base_velocity
        return self.cov

    def _fill_mixed(
        self, H: np.ndarray, rows: list, base_velocity: np.ndarray, s_dot: np.ndarray
    ) -> ChangeOfVariables:
        perm = self._perm
        self._v_joints[...] = s_dot if perm is None else s_dot[perm]
        cov = self.cov
        cov.X = X = H.take(_BLKDIAG_RT)
        cov.X_inv = X.T
        cov._bias = None
        np.dot(X, base_velocity, out=self._v_base)
        return cov

    def _fill_inertial(
        self, H: np.ndarray, rows: list, base_velocity: np.ndarray, s_dot: np.ndarray
    ) -> ChangeOfVariables:
        perm = self._perm
        self._v_joints[...] = s_dot if perm is None else s_dot[perm]
        cov = self.cov
        # B_X_A = [[R^T, -R^T skew(p)], [0, R^T]], inverse A_X_B
        X = H.take(_BLKDIAG_RT)
        px, py, pz = rows[0][3], rows[1][3], rows[2][3]
        X[:3, 3:] = X[:3, :3] @ np.array([[0.0, pz, -py], [-pz, 0.0, px], [py, -px, 0.0]])
        # A_X_B = [[R, skew(p) R], [0, R]]: X^T with its off-diagonal blocks swapped
        Xi = X.T.copy()
        Xi[:3, 3:] = Xi[3:, :3]
        Xi[3:, :3] = 0.0
        cov.X, cov.X_inv = X, Xi
        np.dot(X, base_velocity, out=self._v_base)
        return cov


_BODY_REP, _MIXED_REP = Representation.BODY, Representation.MIXED
