"""The Pinocchio engine's single-state hot path with compiled kernels (floating base, numba).

:mod:`.single`'s numpy path spends, per query, a handful of numpy calls of about half a
microsecond each on a few hundred flops (the pose checks, the quaternion, ``X``, ``T_dot nu``,
``T^T M T``, ...). With numba installed (:func:`bridge.derivatives.select.compiled_kernels`; the
``fast`` extra) a floating-base engine whose joints are all one-coordinate takes this path
instead: ``set_state`` is one call of :func:`bridge.backends.single_kernels.set_state` (checks,
q, v, ``X``, ``X^-1`` and ``T_dot nu`` into two alternating buffers), and each of M, h, g, J, ID
and FD is Pinocchio's call plus one kernel of the library engines' shared set
(:mod:`bridge.backends.single_kernels`, loaded as :class:`bridge.backends.single.CompiledSingle`;
the derivatives' fused paths read the same state array, :mod:`.derivatives`). The kernels evaluate
what :class:`bridge.conventions.single_state.SingleBaseChange` compiled from the declarations; the
:class:`~bridge.conventions.change_of_variables.ChangeOfVariables` of the state, which the other
queries use, is made only when one of them asks for it (:attr:`CompiledPath._cov1`).
"""

from __future__ import annotations

import numpy as np

from bridge.backends.single import COMPILE_AFTER

__all__ = ["CompiledPath"]


def compiled_eligible(target, joints, continuous: bool) -> bool:
    """Whether the compiled path can take this engine's states: a floating base, one-coordinate
    joints (q is s) and a target velocity that is BODY with the linear part first."""
    return bool(joints.nb) and not continuous and target.is_body and not target.swap


class CompiledPath:
    """Mixin of :class:`.single.SingleStatePath`: the compiled single-state path (the current state
    was set by :meth:`_set_compiled` when ``_state1`` is not None).

    The path starts after :attr:`COMPILE_AFTER` single states taken by the numpy path (the rule
    the library engines share, :data:`bridge.backends.single.COMPILE_AFTER`, with its measured
    numbers): loading numba and the compiled kernels costs a fixed ~1 s per process, which a script
    asking for a few thousand states would pay for milliseconds; a long loop pays it once.
    """

    #: single states set through the numpy path before the compiled one is loaded (0: at once)
    COMPILE_AFTER = COMPILE_AFTER
    _state1: np.ndarray | None = None
    #: the current single state's ChangeOfVariables (of the compiled state array, or the numpy path's)
    _cov1: object = None

    def _set_compiled(self, H, s, vb, sd, gravity: np.ndarray) -> bool | None:
        """:meth:`set_single_state` by the compiled kernel: whether the state was one valid state,
        or None, changing nothing, when the arguments are not four contiguous float64 arrays (the
        numpy path then takes them)."""
        kern = self._kern
        spare = self._spare
        state, q, v, _, vbc, H1, bias, X, cov = kern.states[spare]
        try:
            if not kern.k.set_state(H, s, vb, sd, state):
                return False
        except TypeError:
            return None
        # valid: commit (this buffer is now the current state's, the other one the spare); the
        # attributes of .single's _commit, inlined
        self._spare ^= 1
        self._state1, self._H1, self._abias1, self._Xb1, self._cov1 = state, H1, bias, X, cov
        self._q1, self._v1, self._vb1 = q, v, vbc
        self._state = self._cov = self._q = None
        if self._mode != "compiled":
            self._use_single_path(True, "compiled")
        if gravity is not self._g_last:
            self._set_gravity(gravity)
        return True

    def _pose1(self) -> np.ndarray:
        """The single state's base pose (4, 4) (a fresh array)."""
        return self._H1.copy() if self._state1 is not None else np.array(self._rows)

    def _base_X(self) -> np.ndarray | None:
        """The single state's base block X of T (6, 6), or None when it is the identity."""
        if self._state1 is not None:
            return None if self._kern.identity else self._Xb1
        return self._cov1.X

    # ------------------------------------------------------------------ queries
    # each: Pinocchio's call, then T applied by one kernel in Pinocchio's own fresh array (joints in
    # its order) or into a new one (joints permuted); nothing when T is the identity (the
    # representation's convention is Pinocchio's)
    def _back(self, x: np.ndarray, in_place, permuted) -> np.ndarray:
        """Pinocchio's result ``x`` converted by a kernel: ``in_place(x, state)`` in its own fresh
        array (joints in the source's order), else ``permuted(x, state, out)`` into a new one."""
        if self._kern.in_place and x.base is None:
            in_place(x, self._state1)
            return x
        out = np.empty_like(x)
        permuted(x, self._state1, out)
        return out

    def _mass_matrix_compiled(self) -> np.ndarray:
        M = self._crba(self._q1)  # (the mimic engine's runs in Pinocchio's WORLD convention)
        k = self._kern
        return M if k.identity else self._back(M, k.k.matrix_back, k.k.matrix_back_permuted)

    def _bias_forces_compiled(self) -> np.ndarray:
        pin, pm, d, k = self._pin, self.pm, self.data, self._kern
        if k.bias_free:
            h = pin.nle(pm, d, self._q1, self._v1)
        else:
            h = pin.rnea(pm, d, self._q1, self._v1, self._abias1)
        return h if k.identity else self._back(h, k.k.vector_back, k.k.vector_back_permuted)

    def _gravity_forces_compiled(self) -> np.ndarray:
        g = self._pin.computeGeneralizedGravity(self.pm, self.data, self._q1)
        k = self._kern
        return g if k.identity else self._back(g, k.k.vector_back, k.k.vector_back_permuted)

    def _frame_jacobian_compiled(self, frame: str) -> np.ndarray:
        J = self._pin.computeFrameJacobian(self.pm, self.data, self._q1, self._frame_id[frame], self._ref)
        k = self._kern
        if J.ndim == 1:  # Eigen returns a 6x1 Jacobian as a flat (6,) array
            J = J.reshape(6, self._nv)
        return J if k.identity else self._back(J, k.k.columns_back, k.k.columns_back_permuted)

    def _acceleration_compiled(self, base_acc: object, s_ddot: object) -> bool | None:
        """Write ``T nu_dot + T_dot nu`` into ``_acc`` for float64 arrays of the right shapes:
        True, False when it is not finite and moderate, None for other arguments."""
        try:
            return self._kern.k.acceleration(self._state1, base_acc, s_ddot, self._acc)
        except TypeError:  # not contiguous float64 arrays
            return None

    def _inverse_dynamics_compiled(self) -> np.ndarray:
        """tau from ``_acc`` (written by :meth:`_acceleration_compiled`)."""
        tau = self._pin.rnea(self.pm, self.data, self._q1, self._v1, self._acc)
        k = self._kern
        return tau if k.identity else self._back(tau, k.k.vector_back, k.k.vector_back_permuted)

    def _forward_dynamics_compiled(self, tau: np.ndarray) -> np.ndarray:
        """nu_dot from Pinocchio's generalized force ``tau`` (nv,)."""
        a = self._pin.aba(self.pm, self.data, self._q1, self._v1, tau)
        kern = self._kern
        if kern.identity:
            return a
        out = a if kern.in_place and a.base is None else np.empty_like(a)
        kern.k.acceleration_back(a, self._state1, out)
        return out
