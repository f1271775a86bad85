"""Add a convention without touching ``bridge/``: register it, and everything works through its name.

Two toy conventions, registered at test time (the ``toys`` fixture registers and unregisters them):

* ``toy_xfb``: spatial_v2's layout with the quaternion last, ``q = [position; quaternion w, x, y,
  z; joints]``, the INERTIAL base velocity angular first, joints in the model's order;
* ``toy_mixed``: the MIXED base velocity angular first, the joints in reverse order, ``q =
  [quaternion x, y, z, w; position; joints]`` with continuous joints as ``(cos, sin)``. It comes
  with a toy :class:`~bridge.backends.registry.Library` record ("toy") whose engine
  (:class:`ToyEngine`) hands every state, force and acceleration through the registered
  convention before delegating to bridge's Featherstone engine.

Then ``velocity_transform``, every ``convert_*``, State round trips, the axioms of
:mod:`tests.conventions.axioms` and ``cross_validate`` against Pinocchio all work through the toy
names.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import numpy as np
import pytest

import bridge
from bridge.backends import registry
from bridge.backends.featherstone.engine import FeatherstoneEngine
from bridge.conventions.change_of_variables import Convention
from bridge.conventions.convert import (
    convention,
    convention_names,
    convert_acceleration,
    convert_bias_forces,
    convert_generalized_force,
    convert_jacobian,
    convert_mass_matrix,
    convert_velocity,
    velocity_transform,
)
from bridge.conventions.declaration import (
    Axes,
    BaseVelocity,
    Configuration,
    ContinuousJoint,
    Point,
    QuaternionOrder,
)
from bridge.conventions.native_state import from_native_state, to_native_state
from bridge.conventions.registry import register_convention, unregister_convention
from bridge.conventions.state import State
from bridge.spatial.conventions import Ordering
from tests.conventions import axioms
from tests.helpers import assert_close, random_state, small_model

XFB, MIXED, LIBRARY = "toy_xfb", "toy_mixed", "toy"


def _reversed(model: bridge.Model) -> np.ndarray:
    """``toy_mixed``'s joint order: ``native[i] = model[n - 1 - i]``."""
    return np.arange(model.n_dofs)[::-1]


TOY_XFB = Convention(
    XFB,
    BaseVelocity(Point.WORLD_ORIGIN, Axes.WORLD, Axes.WORLD, Ordering.ANGULAR_FIRST),
    configuration=Configuration(QuaternionOrder.WXYZ, quaternion_first=False),
)
TOY_MIXED = Convention(
    MIXED,
    BaseVelocity(Point.BASE_ORIGIN, Axes.WORLD, Axes.WORLD, Ordering.ANGULAR_FIRST),
    joint_order=_reversed,
    configuration=Configuration(
        QuaternionOrder.XYZW, quaternion_first=True, continuous=ContinuousJoint.COS_SIN
    ),
)


def to_toy_state(model: bridge.Model, state: State) -> tuple[np.ndarray, np.ndarray]:
    """The toy library's ``(q, v)`` of a State (its record's ``to_state``)."""
    return to_native_state(model, state, convention(MIXED))


def from_toy_state(model: bridge.Model, q: object, v: object, representation: object = "mixed") -> State:
    """A State from the toy library's ``(q, v)`` (its record's ``from_state``)."""
    return from_native_state(model, q, v, convention(MIXED), representation)


class ToyEngine(FeatherstoneEngine):
    """A "library" speaking ``toy_mixed``: the state goes to its ``(q, v)`` and back, and the joint-
    space quantities go to the toy convention and back, before bridge's Featherstone engine answers
    (so every conversion on the way goes through the registered convention)."""

    name = LIBRARY

    def set_state(self, state: State, gravity: np.ndarray) -> None:
        q, v = to_toy_state(self.model, state)
        back = from_toy_state(self.model, q, v, self.representation)
        if not self.model.floating:  # (q, v) has no base: the pose stays the user's
            back = State(state.world_H_base, back.s, back.base_velocity, back.s_dot, self.representation)
        super().set_state(back, gravity)

    def _there_and_back(self, convert, x: np.ndarray) -> np.ndarray:
        st, rep = self.state, self.representation.value
        return convert(self.model, st, convert(self.model, st, x, rep, MIXED), MIXED, rep)

    def mass_matrix(self) -> np.ndarray:
        return self._there_and_back(convert_mass_matrix, super().mass_matrix())

    def bias_forces(self) -> np.ndarray:
        st, rep, M = self.state, self.representation.value, super().mass_matrix()
        h_toy = convert_bias_forces(self.model, st, super().bias_forces(), M, rep, MIXED)
        M_toy = convert_mass_matrix(self.model, st, M, rep, MIXED)
        return convert_bias_forces(self.model, st, h_toy, M_toy, MIXED, rep)

    def forward_dynamics(self, tau: np.ndarray, wrenches: Mapping[str, np.ndarray] | None) -> np.ndarray:
        tau = self._there_and_back(convert_generalized_force, tau)
        return self._there_and_back(convert_acceleration, super().forward_dynamics(tau, wrenches))

    def inverse_dynamics(self, nu_dot: np.ndarray, wrenches: Mapping[str, np.ndarray] | None) -> np.ndarray:
        nu_dot = self._there_and_back(convert_acceleration, nu_dot)
        return self._there_and_back(convert_generalized_force, super().inverse_dynamics(nu_dot, wrenches))

    def frame_jacobian(self, frame: str) -> np.ndarray:
        return self._there_and_back(convert_jacobian, super().frame_jacobian(frame))


@pytest.fixture
def toys() -> Iterator[None]:
    """``toy_xfb`` registered as a convention, ``toy_mixed`` by the toy library record; both removed
    afterwards."""
    register_convention(XFB, TOY_XFB)
    registry.register(
        registry.Library(
            name=LIBRARY,
            summary="a toy library: MIXED angular first, joints reversed, quaternion x, y, z, w first",
            conventions={MIXED: f"{__name__}:TOY_MIXED"},
            engine=f"{__name__}:ToyEngine",
            to_state=f"{__name__}:to_toy_state",
            from_state=f"{__name__}:from_toy_state",
        )
    )
    try:
        yield
    finally:
        registry.unregister(LIBRARY)
        unregister_convention(XFB)


@pytest.fixture(params=["floating", "fixed"])
def model(request: pytest.FixtureRequest) -> bridge.Model:
    m = small_model(np.random.default_rng(17), True)
    return m if request.param == "floating" else m.with_fixed_base()


def test_registered_and_removed() -> None:
    assert XFB not in convention_names() and LIBRARY not in registry.LIBRARIES
    with pytest.raises(bridge.InvalidValueError, match="unknown velocity convention 'toy_xfb'"):
        convention(XFB)


def test_the_toy_names_resolve(toys) -> None:
    assert {XFB, MIXED} <= set(convention_names())
    assert convention(XFB) is TOY_XFB and convention(MIXED) is TOY_MIXED
    assert LIBRARY in registry.engine_names() and registry.engine_class(LIBRARY) is ToyEngine
    assert TOY_XFB.representation is bridge.Representation.INERTIAL
    assert TOY_MIXED.representation is bridge.Representation.MIXED


def test_velocity_transform_and_every_convert(toys, model: bridge.Model) -> None:
    """The toy conventions' velocities are what they declare (spatial_v2's and Drake's base
    velocities, joints in the model's or the reverse order), and every convert_* maps as T says."""
    rng = np.random.default_rng(1)
    st = random_state(model, rng, "body")
    nv, nb = model.nv, 6 if model.floating else 0
    nu = st.nu if model.floating else st.s_dot
    swap = np.r_[3:6, 0:3, 6:nv] if model.floating else np.arange(nv)
    inertial = convert_velocity(model, st, nu, "body", "inertial")
    mixed = convert_velocity(model, st, nu, "body", "mixed")
    assert_close(convert_velocity(model, st, nu, "body", XFB), inertial[swap], 1e-12, "toy_xfb velocity")
    expected = np.concatenate([mixed[swap][:nb], mixed[nb:][::-1]])
    assert_close(convert_velocity(model, st, nu, "body", MIXED), expected, 1e-12, "toy_mixed velocity")
    for a, b in ((XFB, MIXED), ("pinocchio", XFB), (MIXED, "featherstone")):
        T, T_dot = velocity_transform(model, st, a, b)
        T_inv = np.linalg.inv(T)
        nu_a = convert_velocity(model, st, nu, "body", a)
        x, M, J = rng.normal(size=nv), rng.normal(size=(nv, nv)), rng.normal(size=(6, nv))
        assert_close(convert_velocity(model, st, x, a, b), T @ x, 1e-12, f"velocity {a}->{b}")
        assert_close(convert_acceleration(model, st, x, a, b), T @ x + T_dot @ nu_a, 1e-12, f"acc {a}->{b}")
        assert_close(convert_generalized_force(model, st, x, a, b), T_inv.T @ x, 1e-12, f"force {a}->{b}")
        assert_close(convert_mass_matrix(model, st, M, a, b), T_inv.T @ M @ T_inv, 1e-12, f"M {a}->{b}")
        assert_close(convert_jacobian(model, st, J, a, b), J @ T_inv, 1e-12, f"J {a}->{b}")
        h = convert_bias_forces(model, st, x, M, a, b)
        assert_close(h, T_inv.T @ (x - M @ T_inv @ T_dot @ nu_a), 1e-12, f"h {a}->{b}")


def test_state_round_trips(toys, model: bridge.Model) -> None:
    rng = np.random.default_rng(2)
    st = random_state(model, rng, "mixed")
    q, v = to_native_state(model, st, convention(XFB))
    s = st.s
    if model.floating:  # [position; quaternion w, x, y, z; joints]
        assert_close(
            q, np.concatenate([st.world_H_base.translation, st.world_H_base.as_quaternion_wxyz(), s])
        )
    else:
        assert_close(q, s)
    q, v = to_toy_state(model, st)
    assert q.shape == (model.nv + (1 if model.floating else 0) + 1,)  # a continuous joint: (cos, sin)
    from_state = registry.library(LIBRARY).load("from_state")
    for rep in axioms.NEUTRAL_NAMES:
        back = from_state(model, q, v, rep)
        assert_close(back.s, st.s, 1e-12, f"s ({rep})")
        assert_close(back.s_dot, st.s_dot, 1e-12, f"s_dot ({rep})")
        if model.floating:
            assert_close(back.base_velocity, st.to(rep).base_velocity, 1e-12, f"v_B ({rep})")
    for name in (XFB, MIXED):
        for state in axioms.states(model, seed=3):
            axioms.check_native_round_trip(model, state, name)


def test_the_axioms_through_the_toy_names(toys, model: bridge.Model) -> None:
    """Every axiom of the registry-driven tests, between each toy and every registered convention."""
    names = [n for n in convention_names() if axioms.available(n)]
    for i, state in enumerate(axioms.states(model, seed=4, count=1)):
        for toy in (XFB, MIXED):
            for other in names:
                axioms.check_all(model, state, toy, other)
                axioms.check_all(model, state, other, toy)
            axioms.check_composition(model, state, XFB, toy, names[i % len(names)])


def test_cross_validate_through_the_toy_library(toys, model: bridge.Model) -> None:
    report = bridge.cross_validate(model, engines=["pinocchio", LIBRARY], samples=3, seed=5)
    assert report.ok, [str(r) for r in report.failures][:5]
