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

from types import SimpleNamespace

import numpy as np

from bridge._numba import direct

__all__ = ["CompiledPath"]


def compiled_eligible(target, joints, continuous: bool) -> bool:
    """Whether the compiled path can take this engine's states: a floating base, one-coordinate
    joints (q is s) and a target velocity that is BODY with the linear part first."""
    return bool(joints.nb) and not continuous and target.is_body and not target.swap


class CompiledPath:
    """Mixin of :class:`.single.SingleStatePath`: the compiled single-state path (the current state
    was set by the compiled kernel, in :meth:`set_single_state`, when ``_state1`` is not None).

    The path starts after ``COMPILE_AFTER`` single states taken by the numpy path (the rule the
    library engines share, :class:`bridge.backends.single.LibrarySingleState`, with its measured
    numbers): numba and the compiled kernels cost a fixed 0.6 s or so per process (loading them, and
    a slower exit), which a script asking for a few thousand states would pay for milliseconds; a
    long loop pays it once.
    """

    _state1: np.ndarray | None = None
    #: the current single state's ChangeOfVariables (of the compiled state array, or the numpy path's)
    _cov1: object = None
    #: the compiled path's queries (``mass_matrix()``, ``bias_forces()``, ``gravity_forces()``,
    #: ``frame_jacobian(frame)``), made at its first state (:meth:`_bind_compiled`)
    _compiled_queries: SimpleNamespace | None = None

    def _pose1(self) -> np.ndarray:
        """The single state's base pose (4, 4) (a fresh array)."""
        return self._H1.copy() if self._state1 is not None else np.array(self._rows)

    def _base_X(self) -> np.ndarray | None:
        """The single state's base block X of T (6, 6), or None when it is the identity."""
        if self._state1 is not None:
            return None if self._kern.identity else self._Xb1
        return self._cov1.X

    # ------------------------------------------------------------------ queries
    def _crba(self, q: np.ndarray) -> np.ndarray:
        """Pinocchio's joint-space inertia matrix at ``q`` (its ``crba``; the mimic engine runs it in
        Pinocchio's WORLD convention)."""
        return self._pin.crba(self.pm, self.data, q)

    def _bind_compiled(self) -> None:
        """Make the compiled path's M, h, g and J (:attr:`_compiled_queries`, which the single-state
        queries call while a compiled state is current) as closures over the engine's constants:
        each is Pinocchio's call, then T applied by one kernel in Pinocchio's own fresh array
        (joints in its order) or into a new one (joints permuted), or nothing when T is the
        identity (the representation's convention is Pinocchio's). Closures, not methods: a query
        is one Python frame, its constants local names, instead of three frames and a dozen
        attribute look-ups.

        Called at the first compiled state (the current state's q is Pinocchio's first call here,
        to check once that its results are fresh arrays, which the kernels may overwrite). The
        compiled path has one state array, written in place at every state
        (:meth:`~bridge.backends.pinocchio.single.SingleStatePath.set_single_state`): its views
        (q, v, Pinocchio's bias acceleration, the array itself) are the closures' constants too."""
        kern = self._kern
        raw = _raw(self)
        if kern.identity:
            queries = raw
        else:
            frame = next(iter(self._frame_id))
            results = {n: f(frame) if n == "frame_jacobian" else f() for n, f in raw.items()}
            fresh = all(x.base is None for x in results.values())
            if kern.in_place and fresh:
                queries = _in_place(self, results)
            else:
                queries = _permuted(raw, kern, self, results)
        self._compiled_queries = SimpleNamespace(**queries)

    def _back(self, x: np.ndarray, in_place, permuted) -> np.ndarray:
        """Pinocchio's result ``x`` converted by a kernel: ``in_place(x, state)`` in its own fresh
        array (joints in the source's order), else ``permuted(x, state, out)`` into a new one."""
        if self._kern.in_place and x.base is None:
            in_place(x, self._state1)
            return x
        out = np.empty_like(x)
        permuted(x, self._state1, out)
        return out

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


def _calls(eng: CompiledPath) -> tuple:
    """Pinocchio's calls of M, h (with and without ``T_dot nu``), g and J, and their constant
    arguments: ``(crba, nle, rnea, gravity, jacobian, pm, data, frame ids, reference frame)``."""
    pin = eng._pin
    crba = pin.crba if type(eng)._crba is CompiledPath._crba else (lambda _m, _d, q: eng._crba(q))
    return (
        crba, pin.nle, pin.rnea, pin.computeGeneralizedGravity, pin.computeFrameJacobian,
        eng.pm, eng.data, eng._frame_id, eng._ref,
    )  # fmt: skip


def _raw(eng: CompiledPath) -> dict:
    """The queries of :meth:`CompiledPath._bind_compiled` when T is the identity: Pinocchio's calls
    at the current state (``bias_forces`` with Pinocchio's acceleration ``T_dot nu`` unless the
    change has none)."""
    crba, nle, rnea, grav, cfj, pm, d, fids, ref = _calls(eng)
    q, v, abias = eng._q1, eng._v1, eng._abias1  # (the compiled state's views: see _bind_compiled)

    def mass_matrix() -> np.ndarray:
        return crba(pm, d, q)

    def bias_forces() -> np.ndarray:
        return rnea(pm, d, q, v, abias)

    def bias_free() -> np.ndarray:
        return nle(pm, d, q, v)

    def gravity_forces() -> np.ndarray:
        return grav(pm, d, q)

    def frame_jacobian(frame: str) -> np.ndarray:  # (nv >= 6: a (6, nv) array)
        return cfj(pm, d, q, fids[frame], ref)

    h = bias_free if eng._kern.bias_free else bias_forces
    return {"mass_matrix": mass_matrix, "bias_forces": h, "gravity_forces": gravity_forces,
            "frame_jacobian": frame_jacobian}  # fmt: skip


def _in_place(eng: CompiledPath, results: dict) -> dict:
    """:func:`_raw`'s queries with Pinocchio's fresh results converted in place by one kernel each,
    in one Python frame (each kernel's entry point for the types of ``results``, Pinocchio's results
    at the current state: its later results have the same types)."""
    crba, nle, rnea, grav, cfj, pm, d, fids, ref = _calls(eng)
    k, st = eng._kern.k, eng._state1
    q, v, abias = eng._q1, eng._v1, eng._abias1
    mb = direct(k.matrix_back, results["mass_matrix"], st)
    vb = direct(k.vector_back, results["bias_forces"], st)
    cb = direct(k.columns_back, results["frame_jacobian"], st)

    def mass_matrix() -> np.ndarray:
        x = crba(pm, d, q)
        mb(x, st)
        return x

    def bias_forces() -> np.ndarray:
        x = rnea(pm, d, q, v, abias)
        vb(x, st)
        return x

    def bias_free() -> np.ndarray:
        x = nle(pm, d, q, v)
        vb(x, st)
        return x

    def gravity_forces() -> np.ndarray:
        x = grav(pm, d, q)
        vb(x, st)
        return x

    def frame_jacobian(frame: str) -> np.ndarray:
        x = cfj(pm, d, q, fids[frame], ref)
        cb(x, st)
        return x

    h = bias_free if eng._kern.bias_free else bias_forces
    return {"mass_matrix": mass_matrix, "bias_forces": h, "gravity_forces": gravity_forces,
            "frame_jacobian": frame_jacobian}  # fmt: skip


def _permuted(raw: dict, kern, eng: CompiledPath, results: dict) -> dict:
    """:func:`_raw`'s queries converted into new arrays by one kernel ``kernel(x, state, out)`` each
    (joints permuted back, or results that are not Pinocchio's own fresh arrays; the kernels'
    entry points as in :func:`_in_place`)."""
    k, st = kern.k, eng._state1
    kernels = {
        "mass_matrix": k.matrix_back_permuted,
        "bias_forces": k.vector_back_permuted,
        "gravity_forces": k.vector_back_permuted,
        "frame_jacobian": k.columns_back_permuted,
    }
    kernels = {n: direct(f, results[n], st, np.empty_like(results[n])) for n, f in kernels.items()}

    def converted(call, kernel):
        def query(*frame: str) -> np.ndarray:
            x = call(*frame)
            out = np.empty_like(x)
            kernel(x, st, out)
            return out

        return query

    return {name: converted(call, kernels[name]) for name, call in raw.items()}
