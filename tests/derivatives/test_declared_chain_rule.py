"""The chain rule of the dynamics derivatives comes from the declarations (issue 41).

A toy convention is declared at run time (any point, axes and order of the halves of its base
velocity), registered by name, and :func:`bridge.convert_dynamics_derivatives` turns the analytical
BODY derivatives (the "pinocchio" engine) into its convention: the numpy chain rule for a rate that
does not depend on the pose (:func:`bridge.derivatives.functional.rate_table`), the functional one
otherwise. Nothing in bridge names the toy: what the conversion needs is derived from its
declaration.

The reference is written here from the declaration's maps alone (``L``, ``L^-1`` and the rate
Omega of :class:`~bridge.conventions.declaration.BaseVelocity`, no chain-rule block): the toy's
inverse dynamics is ``tau_toy = blkdiag(L^-T, 1) ID_B(q, v_B, a_B)`` with ``v_B = L^-1 nu``,
``a_B = L^-1 nu_dot - Omega(v_B) v_B``, its forward dynamics
``nu_dot = L (FD_B(q, v_B, blkdiag(L^T, 1) tau) + Omega(v_B) v_B)``, differenced by fourth-order
central differences along the toy's tangent (the base moving with BODY twist ``L^-1 delta``: a
4x4 matrix exponential, scipy's) and central differences in ``nu`` (exact: quadratic) and in
``tau`` (linear).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.linalg import expm

import bridge
from bridge.conventions.change_of_variables import Convention
from bridge.conventions.declaration import Axes, BaseVelocity, Point
from bridge.conventions.registry import register_convention, unregister_convention
from bridge.derivatives.functional import rate_table
from bridge.spatial.conventions import Ordering
from tests.helpers import assert_close, random_state, small_model

NAME = "toy_derivatives"

declarations = st.builds(
    BaseVelocity,
    st.sampled_from(list(Point)),
    st.sampled_from(list(Axes)),
    st.sampled_from(list(Axes)),
    st.sampled_from(list(Ordering)),
)


def _twist(d: np.ndarray) -> np.ndarray:
    """The 4x4 matrix of a BODY twist (linear first)."""
    v, w = d[:3], d[3:]
    return np.array([[0, -w[2], w[1], v[0]], [w[2], 0, -w[0], v[1]], [-w[1], w[0], 0, v[2]], [0, 0, 0, 0]])


class _Toy:
    """The toy convention's inverse and forward dynamics, from its declaration and bridge's BODY
    dynamics (see the module docstring)."""

    def __init__(self, model: bridge.Model, decl: BaseVelocity) -> None:
        self.decl = decl
        self.kd = bridge.KinDyn(model, engine="pinocchio", representation="body")

    def _body(self, H: np.ndarray, s: np.ndarray, nu: np.ndarray):
        L, L_inv = self.decl.matrices(H)
        vB = L_inv @ nu[:6]
        Om = self.decl.rate(H, vB)
        bias = np.zeros(6) if Om is None else Om @ vB
        self.kd.set_state(H, s, vB, nu[6:])
        return L, L_inv, bias

    def inverse(self, H, s, nu, nu_dot) -> np.ndarray:
        _, L_inv, bias = self._body(H, s, nu)
        tau = self.kd.inverse_dynamics(L_inv @ nu_dot[:6] - bias, nu_dot[6:])
        return np.concatenate([L_inv.T @ tau[:6], tau[6:]])

    def forward(self, H, s, nu, tau) -> np.ndarray:
        L, _, bias = self._body(H, s, nu)
        a = self.kd.forward_dynamics(np.concatenate([L.T @ tau[:6], tau[6:]]))
        return np.concatenate([L @ (a[:6] + bias), a[6:]])

    def along_tangent(self, fn, H, s, nu, x, h: float = 1e-3) -> np.ndarray:
        """Fourth-order central differences (nv, nv) of ``fn(H, s, nu, x)`` along the toy's
        tangent: the base moves with BODY twist ``L^-1 delta``, the joints by ``delta``."""
        L_inv = self.decl.matrices(H)[1]
        cols = []
        for k in range(nu.shape[0]):
            e = np.zeros(nu.shape[0])
            e[k] = 1.0

            def at(t: float, e=e) -> np.ndarray:
                return fn(H @ expm(t * _twist(L_inv @ e[:6])), s + t * e[6:], nu, x)

            cols.append((-at(2 * h) + 8 * at(h) - 8 * at(-h) + at(-2 * h)) / (12 * h))
        return np.stack(cols, axis=1)

    @staticmethod
    def central(fn, x: np.ndarray, h: float = 1e-4) -> np.ndarray:
        """Central differences (n, n) of ``fn`` in ``x``."""
        eye = np.eye(x.shape[0])
        return np.stack([(fn(x + h * e) - fn(x - h * e)) / (2 * h) for e in eye], axis=1)


@pytest.fixture(scope="module")
def model() -> bridge.Model:
    pytest.importorskip("pinocchio")
    return small_model(np.random.default_rng(5))


@settings(max_examples=12, deadline=None)
@given(decl=declarations, seed=st.integers(0, 2**16))
def test_chain_rule_of_a_declared_convention_equals_differences(model, decl: BaseVelocity, seed: int) -> None:
    """ID and FD derivatives converted from BODY into a convention declared at run time equal central
    differences of its own ID and FD along its tangent."""
    rng = np.random.default_rng(seed)
    register_convention(NAME, Convention(NAME, decl))
    try:
        toy = _Toy(model, Convention(NAME, decl).bound(model).velocity)
        state = random_state(model, rng, "body")
        H, s = state.world_H_base.matrix, state.s
        L = toy.decl.matrices(H)[0]
        nu = np.concatenate([L @ state.base_velocity, state.s_dot])
        nu_dot, tau = rng.normal(size=(2, model.nv))
        # inverse dynamics: BODY's analytical derivatives at the same point, converted
        tau_toy = toy.inverse(H, s, nu, nu_dot)  # (sets the BODY state)
        aB = bridge.convert_acceleration(model, state, nu_dot, NAME, "body")
        tau_B = bridge.convert_generalized_force(model, state, tau_toy, NAME, "body")
        ID_B = toy.kd.inverse_dynamics_derivatives(aB[:6], aB[6:])
        got = bridge.convert_dynamics_derivatives(
            model, state, ID_B, "body", NAME, acceleration=aB, force=tau_B
        )
        want = (
            toy.along_tangent(toy.inverse, H, s, nu, nu_dot),
            toy.central(lambda x: toy.inverse(H, s, x, nu_dot), nu),
            toy.central(lambda x: toy.inverse(H, s, nu, x), nu_dot),
        )
        for g, w, what in zip(got, want, ("dtau/dq", "dtau/dnu", "dtau/dnudot"), strict=True):
            assert_close(g, w, rtol=1e-7, atol=1e-7, what=f"{decl}: {what}")
        # forward dynamics
        acc = toy.forward(H, s, nu, tau)
        tau_B = bridge.convert_generalized_force(model, state, tau, NAME, "body")
        aB = bridge.convert_acceleration(model, state, acc, NAME, "body")
        FD_B = toy.kd.forward_dynamics_derivatives(tau_B)
        got = bridge.convert_dynamics_derivatives(
            model, state, FD_B, "body", NAME, acceleration=aB, force=tau_B, kind="forward"
        )
        want = (
            toy.along_tangent(toy.forward, H, s, nu, tau),
            toy.central(lambda x: toy.forward(H, s, x, tau), nu),
            toy.central(lambda x: toy.forward(H, s, nu, x), tau),
        )
        for g, w, what in zip(got, want, ("dnudot/dq", "dnudot/dnu", "dnudot/dtau"), strict=True):
            assert_close(g, w, rtol=1e-7, atol=1e-7, what=f"{decl}: {what}")
    finally:
        unregister_convention(NAME)


def test_rate_table_is_derived_from_the_declaration() -> None:
    """The constant rate table exists exactly where the declared rate does not depend on the pose
    (every declaration but the world origin's velocity with the linear half in body axes or the
    angular half alone in world axes), and equals the rate at any pose."""
    rng = np.random.default_rng(2)
    for point in Point:
        for lin in Axes:
            for ang in Axes:
                decl = BaseVelocity(point, lin, ang)
                if point is Point.BASE_COM:
                    decl = decl.bound(rng.normal(size=3))
                t = rate_table(decl)
                H = bridge.Transform.exp(rng.normal(size=6)).matrix
                w = rng.normal(size=6)
                Om = decl.rate(H, w)
                Om = np.zeros((6, 6)) if Om is None else Om
                if t is None:
                    assert point is Point.WORLD_ORIGIN and (lin, ang) != (Axes.WORLD, Axes.WORLD)
                    continue
                assert_close(t.U @ w, Om, rtol=1e-13, atol=1e-13, what=str(decl))
                assert t.moves == bool(np.abs(Om).max() > 0)


@settings(max_examples=25, deadline=None)
@given(decl=declarations, seed=st.integers(0, 2**16))
def test_tangent_motion_of_a_declaration_is_its_flow(decl: BaseVelocity, seed: int) -> None:
    """The base motion along a declaration's tangent (:func:`bridge.derivatives.chain.retract`'s,
    derived from the declaration) is the pose reached by moving with the constant declared velocity
    for unit time: ``H_dot = H (L(H)^-1 d)^``, integrated numerically (scipy, 1e-12)."""
    from scipy.integrate import solve_ivp

    from bridge.derivatives.chain import _flow
    from bridge.spatial.so3 import so3_exp, so3_left_jacobian
    from bridge.spatial.xp import NUMPY

    rng = np.random.default_rng(seed)
    if decl.point is Point.BASE_COM:
        decl = decl.bound(rng.normal(size=3))
    H = bridge.Transform.exp(rng.normal(size=6)).matrix
    d = rng.normal(size=6)

    def rhs(_t: float, x: np.ndarray) -> np.ndarray:
        Ht = np.eye(4)
        Ht[:3, :4] = x.reshape(3, 4)
        return (Ht @ _twist(decl.matrices(Ht)[1] @ d))[:3].ravel()

    sol = solve_ivp(rhs, (0.0, 1.0), H[:3].ravel(), rtol=1e-12, atol=1e-12, method="DOP853")
    want = np.eye(4)
    want[:3] = sol.y[:, -1].reshape(3, 4)
    got = _flow(NUMPY, decl, H, d, lambda w: (so3_exp(w), so3_left_jacobian(w)))
    assert_close(got, want, rtol=1e-9, atol=1e-9, what=str(decl))
