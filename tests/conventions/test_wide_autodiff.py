"""The change of variables of a model with planar, ball and free joints inside autodiff graphs.

For every registered convention that takes such a model: T and T_dot on JAX arrays under
``jax.jit`` and on CasADi matrices equal the numpy path (1e-13), and the JAX derivative of T along
the motion (``jax.jvp`` through the joints' manifold coordinates) is T_dot.
"""

from __future__ import annotations

import numpy as np
import pytest

import bridge
import bridge.backends.registry
from bridge.conventions.registry import convention_names
from tests.conventions import axioms
from tests.helpers import random_state, wide_model

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
ca = pytest.importorskip("casadi")
jax.config.update("jax_enable_x64", True)

NAMES = convention_names()


@pytest.fixture(scope="module")
def scene() -> bridge.Model:
    return wide_model(9, floating=True)


@pytest.mark.parametrize("name", NAMES)
def test_jax_and_casadi_equal_numpy(scene: bridge.Model, name: str) -> None:
    axioms.resolved(name)
    axioms.accepted(scene, name)
    state = random_state(scene, np.random.default_rng(3), "mixed")
    T, T_dot = bridge.velocity_transform(scene, state, "mixed", name)

    def f(H, s, vb, sd):
        st = bridge.State(H, s, vb, sd, "mixed", layout=scene)
        return bridge.velocity_transform(scene, st, "mixed", name)

    args = [jnp.asarray(x) for x in (state.world_H_base.matrix, state.s, state.base_velocity, state.s_dot)]
    Tj, Tdj = jax.jit(f)(*args)
    np.testing.assert_allclose(np.asarray(Tj), T, rtol=0, atol=1e-13)
    np.testing.assert_allclose(np.asarray(Tdj), T_dot, rtol=0, atol=1e-13)
    Tc, Tdc = f(*(ca.DM(np.asarray(x)) for x in args))
    np.testing.assert_allclose(np.array(Tc), T, rtol=0, atol=1e-13)
    np.testing.assert_allclose(np.array(Tdc), T_dot, rtol=0, atol=1e-13)


def test_jvp_of_T_is_T_dot(scene: bridge.Model) -> None:
    """Along a motion that moves each joint with its BODY velocity (a base at rest), ``d/dt T`` by
    forward-mode differentiation equals T_dot."""
    state = random_state(scene, np.random.default_rng(4), "body")
    state = bridge.State(state.world_H_base, state.s, np.zeros(6), state.s_dot, "body", layout=scene)
    _, T_dot = bridge.velocity_transform(scene, state, "body", "mixed")
    coords = scene.coordinates

    def T_of(t):
        parts = []
        for k, kind in enumerate(coords.kinds):
            q = jnp.asarray(state.s[coords.q_slice(k)])
            v = jnp.asarray(state.s_dot[coords.v_slice(k)])
            parts.append(_integrate(kind, q, t * v) if kind.wide else q + t * v)
        s = jnp.concatenate(parts)
        st = bridge.State(
            jnp.asarray(state.world_H_base.matrix),
            s,
            jnp.zeros(6),
            jnp.asarray(state.s_dot),
            "body",
            layout=scene,
        )
        return bridge.velocity_transform(scene, st, "body", "mixed")[0]

    _, dT = jax.jvp(T_of, (0.0,), (1.0,))
    np.testing.assert_allclose(np.asarray(dT), T_dot, rtol=0, atol=1e-12)


def _integrate(kind, q, v):
    """``q (+) v`` along the BODY tangent in JAX (first order is all the jvp sees)."""
    from bridge.model.joints import JointKind

    if kind is JointKind.PLANAR:
        c, s = jnp.cos(q[2]), jnp.sin(q[2])
        return jnp.stack([q[0] + c * v[0] - s * v[1], q[1] + s * v[0] + c * v[1], q[2] + v[2]])

    def times(a, b):  # (w, x, y, z) quaternion product
        return jnp.stack(
            [
                a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
                a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
                a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
                a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0],
            ]
        )

    if kind is JointKind.BALL:
        return times(q, jnp.concatenate([jnp.ones(1), 0.5 * v]))
    quat = q[3:7]
    R = bridge.Transform.from_quaternion_wxyz(np.asarray(quat)).rotation
    return jnp.concatenate(
        [q[:3] + jnp.asarray(R) @ v[:3], times(quat, jnp.concatenate([jnp.ones(1), 0.5 * v[3:]]))]
    )
