"""Each registered convention's declared base velocity against its direct numerical definition.

A :class:`~bridge.conventions.declaration.BaseVelocity` says which point's velocity the linear half
is, in which axes each half is written and which half comes first. Here that sentence is evaluated
by finite differences of the pose along the motion (no base map involved) and compared with the
declared map ``L v_B`` and with ``convert_velocity``; the convention's ``representation`` property
names the neutral representation measuring the same velocity (None when none does).
"""

from __future__ import annotations

import numpy as np
import pytest

import bridge
import bridge.backends.registry
from bridge.conventions.convert import convention_names
from tests.conventions import axioms


@pytest.mark.parametrize("name", convention_names())
def test_declared_base_velocity_is_its_definition(name: str) -> None:
    axioms.resolved(name)
    model = bridge.random_model(5, seed=3)
    for state in axioms.states(model, seed=9):
        axioms.check_declared_frame(model, state, name)


def test_a_velocity_at_the_base_com_of_a_base_spinning_about_its_origin() -> None:
    """A base spinning about its origin (o_dot = 0) with its COM c off the axis: the velocity at the
    COM is omega x (R c) in world axes (omega in body axes: R^T of it), the angular half unchanged;
    T depends on c, T_dot on the rotation, and a COM on the axis gives a zero linear half."""
    from bridge.conventions.change_of_variables import Convention, change_of_variables
    from bridge.conventions.declaration import Axes, BaseVelocity, Point
    from bridge.model.model import Link
    from bridge.spatial import Transform

    base = bridge.random_model(3, seed=2)
    com = np.array([0.3, 0.0, 0.0])
    link = base.link(base.base)
    inertia = bridge.SpatialInertia(link.mass, com, link.inertia.inertia_com)
    links = tuple(Link(b.name, inertia) if b.name == base.base else b for b in base.links)
    model = base.replace(links=links)
    quat = np.array([np.cos(0.4), 0.0, 0.0, np.sin(0.4)])
    H = Transform.from_quaternion_wxyz(quat, np.array([0.1, 0.2, 0.3]))
    omega = np.array([0.0, 0.0, 2.0])
    zeros = np.zeros(model.n_dofs)
    state = bridge.State(H, zeros, np.r_[0.0, 0.0, 0.0, omega], zeros, "mixed")
    for axes in (Axes.WORLD, Axes.BODY):
        conv = Convention("com", BaseVelocity(Point.BASE_COM, axes, Axes.WORLD))
        cov = change_of_variables(model, state, bridge.conventions.convention.MIXED, conv)
        v = cov.velocity(state.nu)[:6]
        expected = np.cross(omega, H.rotation @ com)
        expected = expected if axes is Axes.WORLD else H.rotation.T @ expected
        np.testing.assert_allclose(v[:3], expected, rtol=1e-14, atol=1e-15)
        assert abs(v[0]) + abs(v[1]) > 0.1
        np.testing.assert_allclose(v[3:], omega, rtol=0, atol=1e-15)
        # the COM's acceleration at constant omega: centripetal, omega x (omega x R c)
        a = cov.acceleration(np.zeros(model.nv))[:3]
        expected = np.cross(omega, np.cross(omega, H.rotation @ com))
        if axes is Axes.BODY:  # the derivative of R^T u: R^T (u_dot - omega x u)
            expected = H.rotation.T @ (expected - np.cross(omega, np.cross(omega, H.rotation @ com)))
        np.testing.assert_allclose(a, expected, rtol=1e-13, atol=1e-14)
    # the COM on the spin axis: no linear velocity
    on_axis = Convention("com", BaseVelocity(Point.BASE_COM, Axes.WORLD, Axes.WORLD))
    bound = on_axis.velocity.bound(np.array([0.0, 0.0, 0.7]))
    L = bound.matrices(H)[0]
    np.testing.assert_allclose((L @ state.base_velocity_in("body"))[:3], 0.0, atol=1e-15)
    with pytest.raises(bridge.BridgeError, match="centre of mass"):
        on_axis.velocity.matrices(H)
