"""The axioms of a change of variables between two conventions, as reusable checks.

Each ``check_*`` function takes a model, a State and convention names (anything
:func:`bridge.convention` resolves: a registered library's, a neutral representation, or a toy
convention a test registered), and raises AssertionError when the axiom fails. The registry-driven
tests (:mod:`tests.conventions.test_axioms`) call them for every registered convention; a test that
registers a convention of its own (:mod:`tests.conventions.test_toy_convention`) calls the same
functions, so a new convention is tested by being registered.

With ``nu_t = T nu_s`` (``T, T_dot = velocity_transform(model, state, s, t)``, each (nv, nv)):
T is invertible, T_dot is the time derivative of T along the state's motion, power
``tau . nu`` is invariant, ``M``, ``h`` and ``J`` map consistently with the accelerations, and the
acceleration conversion is the time derivative of the velocity conversion.
"""

from __future__ import annotations

import numpy as np
import pytest

import bridge
from bridge.conventions.convert import (
    convention,
    convert_acceleration,
    convert_bias_forces,
    convert_generalized_force,
    convert_jacobian,
    convert_mass_matrix,
    convert_velocity,
    velocity_change,
    velocity_transform,
)
from bridge.conventions.declaration import Axes, BaseVelocity, Point
from bridge.conventions.native_state import from_native_state, to_native_state
from bridge.conventions.state import Representation, State
from bridge.spatial import Transform
from bridge.spatial.conventions import Ordering
from bridge.spatial.so3 import vee
from tests.helpers import assert_close, assert_not_close, random_state

__all__ = [
    "AXIOMS",
    "FD_STEP",
    "NEUTRAL_NAMES",
    "accepted",
    "available",
    "check_T_dot",
    "check_acceleration_is_the_derivative",
    "check_all",
    "check_composition",
    "check_declared_frame",
    "check_declared_joint_frames",
    "check_dynamics_consistency",
    "check_invertible",
    "check_native_round_trip",
    "check_power_invariance",
    "check_structured_equals_dense",
    "declared_velocity",
    "moved",
    "resolved",
    "states",
    "takes",
]

#: the time step of the central finite differences along the motion
FD_STEP = 1e-5
#: the neutral representations (the states' own)
NEUTRAL_NAMES = ("body", "inertial", "mixed")


def available(name: object) -> bool:
    """Whether a convention resolves (its library's backend package can be imported)."""
    try:
        convention(name)
    except ImportError:
        return False
    return True


def resolved(*names: object) -> None:
    """Skip the test when a convention's library (its backend package) cannot be imported."""
    for name in names:
        try:
            convention(name)
        except ImportError as exc:
            pytest.skip(f"convention {name!r} not available: {exc}")


def takes(model: bridge.Model, name: object) -> bool:
    """Whether a convention's library can represent ``model`` (see :func:`accepted`)."""
    try:
        convention(name).permutation(model)
    except bridge.UnsupportedError:
        return False
    return True


def accepted(model: bridge.Model, *names: object) -> None:
    """Skip the test when a convention's library cannot represent ``model`` (a ball, free or planar
    joint in a library without them: the convention says so with an UnsupportedError naming it)."""
    for name in names:
        try:
            convention(name).permutation(model)
        except bridge.UnsupportedError as exc:
            pytest.skip(f"convention {name!r}: {exc}")


def states(model: bridge.Model, seed: int, count: int = 2) -> list[State]:
    """``count`` random single states in each neutral representation (seeded)."""
    rng = np.random.default_rng(seed)
    return [random_state(model, rng, rep) for rep in NEUTRAL_NAMES for _ in range(count)]


def moved(state: State, t: float) -> State:
    """The state after time ``t`` along its motion: the base moving with its constant BODY velocity
    (the exact exponential), the joints with their constant velocities (a planar, ball or free joint
    with its constant BODY velocity, on its manifold); in the state's representation."""
    body = state.to("body")
    H = state.world_H_base @ Transform.exp(t * body.base_velocity)
    if state.layout is None:
        s = state.s + t * state.s_dot
    else:
        from bridge.derivatives.chain import retract

        _, s = retract(np.eye(4), body.s, t * body.s_dot, "body", layout=state.layout)
    return State(H, s, body.base_velocity, body.s_dot, "body", layout=state.layout).to(state.representation)


def _nu(model: bridge.Model, state: State, name: object) -> np.ndarray:
    """The state's generalized velocity (nv,) in convention ``name``."""
    nu = state.nu if model.floating else state.s_dot
    return convert_velocity(model, state, nu, state.representation.value, name)


# ------------------------------------------------------------------------------------ T itself
def check_invertible(model: bridge.Model, state: State, a: object, b: object) -> None:
    """``T_aa = 1``, ``T_ab T_ba = 1`` and ``d/dt (T_ab T_ba) = 0``."""
    nv = model.nv
    T, _ = velocity_transform(model, state, a, a)
    np.testing.assert_allclose(T, np.eye(nv), atol=1e-14, err_msg=f"T {a}->{a}")
    Tab, Tab_dot = velocity_transform(model, state, a, b)
    Tba, Tba_dot = velocity_transform(model, state, b, a)
    np.testing.assert_allclose(Tab @ Tba, np.eye(nv), atol=1e-13, err_msg=f"T {a}->{b}->{a}")
    np.testing.assert_allclose(Tba @ Tab, np.eye(nv), atol=1e-13, err_msg=f"T {b}->{a}->{b}")
    np.testing.assert_allclose(Tab_dot @ Tba + Tab @ Tba_dot, 0.0, atol=1e-12, err_msg=f"T_dot {a}<->{b}")


def check_composition(model: bridge.Model, state: State, a: object, b: object, c: object) -> None:
    """``T_bc T_ab = T_ac`` and its derivative ``T_bc_dot T_ab + T_bc T_ab_dot = T_ac_dot``."""
    Tab, Tab_dot = velocity_transform(model, state, a, b)
    Tbc, Tbc_dot = velocity_transform(model, state, b, c)
    Tac, Tac_dot = velocity_transform(model, state, a, c)
    np.testing.assert_allclose(Tbc @ Tab, Tac, atol=1e-12, err_msg=f"T {a}->{b}->{c}")
    np.testing.assert_allclose(
        Tbc_dot @ Tab + Tbc @ Tab_dot, Tac_dot, atol=1e-12, err_msg=f"T_dot {a}->{b}->{c}"
    )


def check_T_dot(model: bridge.Model, state: State, a: object, b: object) -> None:
    """T_dot equals the central difference of T along the state's motion (rtol 1e-6)."""
    _, T_dot = velocity_transform(model, state, a, b)
    h = FD_STEP
    Tp, _ = velocity_transform(model, moved(state, h), a, b)
    Tm, _ = velocity_transform(model, moved(state, -h), a, b)
    assert_close((Tp - Tm) / (2 * h), T_dot, 1e-6, f"T_dot {a}->{b} vs finite differences")


def check_structured_equals_dense(
    model: bridge.Model, state: State, a: object, b: object, seed: int = 0
) -> None:
    """Every named map of the :class:`ChangeOfVariables` equals its dense formula in T and T_dot."""
    rng = np.random.default_rng(seed)
    cov = velocity_change(model, state, a, b)
    T, Td = cov.matrix(), cov.derivative()
    lead = state.nu.shape[:-1]
    nv = model.nv
    x = rng.normal(size=(*lead, nv))
    M = rng.normal(size=(*lead, nv, nv))
    C = rng.normal(size=(*lead, nv, nv))
    J = rng.normal(size=(*lead, 6, nv))
    Tt = np.swapaxes(T, -1, -2)

    def mv(A: np.ndarray, y: np.ndarray) -> np.ndarray:
        return np.einsum("...ij,...j->...i", A, y)

    np.testing.assert_allclose(cov.velocity(x), mv(T, x), atol=1e-12)
    np.testing.assert_allclose(cov.apply_derivative(x), mv(Td, x), atol=1e-12)
    np.testing.assert_allclose(cov.velocity_back(x), np.linalg.solve(T, x[..., None])[..., 0], atol=1e-12)
    np.testing.assert_allclose(cov.force_back(x), mv(Tt, x), atol=1e-12)
    np.testing.assert_allclose(cov.force(x), np.linalg.solve(Tt, x[..., None])[..., 0], atol=1e-12)
    np.testing.assert_allclose(cov.jacobian_back(J), J @ T, atol=1e-12)
    np.testing.assert_allclose(cov.matrix_back(M), Tt @ M @ T, atol=1e-12)
    assert_close(cov.coriolis_back(C, M), Tt @ (C @ T + M @ Td), 1e-12, f"coriolis_back {a}->{b}")


# ------------------------------------------------------------------------------------ dual maps
def check_power_invariance(model: bridge.Model, state: State, a: object, b: object, seed: int = 0) -> None:
    """``tau_b . nu_b = tau_a . nu_a`` for convert_generalized_force and convert_velocity, and both
    conversions come back (b -> a) to what they started from."""
    rng = np.random.default_rng(seed)
    nu_a = rng.normal(size=model.nv)
    tau_a = rng.normal(size=model.nv)
    nu_b = convert_velocity(model, state, nu_a, a, b)
    tau_b = convert_generalized_force(model, state, tau_a, a, b)
    assert_close(tau_b @ nu_b, tau_a @ nu_a, 1e-12, f"power {a}->{b}")
    assert_close(convert_velocity(model, state, nu_b, b, a), nu_a, 1e-12, f"velocity {a}->{b}->{a}")
    assert_close(convert_generalized_force(model, state, tau_b, b, a), tau_a, 1e-12, f"force {a}->{b}->{a}")


def check_dynamics_consistency(
    model: bridge.Model, state: State, a: object, b: object, seed: int = 0
) -> None:
    """M, h and J converted from a to b are the same dynamics and kinematics:

    * ``M_b = T^-T M_a T^-1`` and ``h_b = T^-T (h_a - M_a T^-1 T_dot nu_a)`` (dense T = T_ab);
    * inverse dynamics agrees: ``M_b nu_dot_b + h_b = T^-T (M_a nu_dot_a + h_a)`` with
      ``nu_dot_b = convert_acceleration(nu_dot_a)``, and kinetic energy is invariant;
    * ``J_b nu_b = J_a nu_a`` with ``J_b = convert_jacobian(J_a)``.
    """
    rng = np.random.default_rng(seed)
    nv = model.nv
    A = rng.normal(size=(nv, nv))
    M_a = A @ A.T + nv * np.eye(nv)
    h_a = rng.normal(size=nv)
    J_a = rng.normal(size=(6, nv))
    T, T_dot = velocity_transform(model, state, a, b)
    T_inv = np.linalg.inv(T)
    nu_a = _nu(model, state, a)
    M_b = convert_mass_matrix(model, state, M_a, a, b)
    h_b = convert_bias_forces(model, state, h_a, M_a, a, b)
    assert_close(M_b, T_inv.T @ M_a @ T_inv, 1e-12, f"M {a}->{b}")
    assert_close(h_b, T_inv.T @ (h_a - M_a @ T_inv @ T_dot @ nu_a), 1e-12, f"h {a}->{b}")
    nu_b = convert_velocity(model, state, nu_a, a, b)
    assert_close(nu_b, _nu(model, state, b), 1e-12, f"the state's velocity {a}->{b}")
    assert_close(nu_b @ M_b @ nu_b, nu_a @ M_a @ nu_a, 1e-12, f"kinetic energy {a}->{b}")
    nu_dot_a = rng.normal(size=nv)
    nu_dot_b = convert_acceleration(model, state, nu_dot_a, a, b)
    tau_b = convert_generalized_force(model, state, M_a @ nu_dot_a + h_a, a, b)
    assert_close(M_b @ nu_dot_b + h_b, tau_b, 1e-11, f"inverse dynamics {a}->{b}")
    J_b = convert_jacobian(model, state, J_a, a, b)
    assert_close(J_b @ nu_b, J_a @ nu_a, 1e-12, f"J nu {a}->{b}")
    assert_close(J_b, J_a @ T_inv, 1e-12, f"J {a}->{b}")


def check_acceleration_is_the_derivative(
    model: bridge.Model, state: State, a: object, b: object, seed: int = 0
) -> None:
    """``convert_acceleration`` is the time derivative of the velocity conversion: along a motion
    with a random constant acceleration (``bridge.integrate``), the central difference of the
    state's velocity in ``b`` equals ``convert_acceleration`` of its acceleration (rtol 1e-6), and
    converting the acceleration through ``a`` gives the same (1e-10)."""
    rng = np.random.default_rng(seed)
    rep = state.representation.value
    base_acc = rng.normal(size=6) if model.floating else np.zeros(6)
    s_ddot = rng.normal(size=model.n_dofs)
    nu_dot = np.concatenate([base_acc, s_ddot]) if model.floating else s_ddot
    h = FD_STEP
    plus, minus = (bridge.integrate(state, base_acc, s_ddot, sign * h) for sign in (1.0, -1.0))
    fd = (_nu(model, plus, b) - _nu(model, minus, b)) / (2 * h)
    direct = convert_acceleration(model, state, nu_dot, rep, b)
    assert_close(direct, fd, 1e-6, f"acceleration {rep}->{b} vs finite differences")
    through = convert_acceleration(model, state, convert_acceleration(model, state, nu_dot, rep, a), a, b)
    assert_close(through, direct, 1e-10, f"acceleration {rep}->{a}->{b}")
    back = convert_acceleration(model, state, through, b, a)
    assert_close(back, convert_acceleration(model, state, nu_dot, rep, a), 1e-10, f"acceleration {b}->{a}")


# ------------------------------------------------------------------------------------ states
def check_native_round_trip(model: bridge.Model, state: State, name: object) -> None:
    """A State to the convention's ``(q, v)`` and back, in every representation, is the same state
    (a fixed base comes back at the identity pose); ``v`` is the state's velocity in the convention."""
    conv = convention(name)
    q, v = to_native_state(model, state, conv)
    assert_close(v, _nu(model, state, name), 1e-12, f"{conv.name} v")
    for rep in NEUTRAL_NAMES:
        back = from_native_state(model, q, v, conv, rep)
        expected = state.to(rep)
        assert back.representation is expected.representation
        assert_close(back.s, expected.s, 1e-12, f"{conv.name} s ({rep})")
        assert_close(back.s_dot, expected.s_dot, 1e-12, f"{conv.name} s_dot ({rep})")
        if model.floating:
            assert_close(back.world_H_base.matrix, expected.world_H_base.matrix, 1e-12, f"{conv.name} pose")
            assert_close(back.base_velocity, expected.base_velocity, 1e-12, f"{conv.name} v_B ({rep})")
        else:
            assert_close(back.world_H_base.matrix, np.eye(4), 0.0, f"{conv.name} fixed-base pose")
    q2, v2 = to_native_state(model, from_native_state(model, q, v, conv, "mixed"), conv)
    assert_close(q2, q, 1e-12, f"{conv.name} q round trip")
    assert_close(v2, v, 1e-12, f"{conv.name} v round trip")


# ------------------------------------------------------------------------------------ declarations
def declared_velocity(declared: BaseVelocity, state: State) -> np.ndarray:
    """The base velocity (6,) the declaration describes, from central differences of the pose along
    the state's motion: ``p_dot`` and ``R_dot`` give the velocity of the base origin, of the body
    point at the world origin or of the base COM ``c`` (``p_dot + R_dot c``, the declaration bound
    to the model), and the angular velocity, each in world or body axes."""
    h = FD_STEP
    plus, minus = (moved(state, t).world_H_base for t in (h, -h))
    return _declared_twist(declared, state.world_H_base, plus, minus)


def check_declared_joint_frames(model: bridge.Model, state: State, name: object) -> None:
    """Each planar, ball and free joint's velocity in the convention is what its declaration says
    (:func:`bridge.conventions.joint_blocks.joint_declaration` of the convention's base velocity,
    read relative to the joint frame F, the child's COM for ``BASE_COM``): finite differences of
    the joint's pose in F along the state's motion (rtol 1e-6)."""
    from bridge.conventions.convention import JointOrder
    from bridge.conventions.joint_blocks import (
        joint_declaration,
        joint_rows,
        joint_velocity_declaration,
        relative_pose,
        target_offsets,
    )
    from bridge.spatial.xp import NUMPY

    coords = model.coordinates
    if coords.single:
        return
    conv = convention(name)
    nu = _nu(model, state, name)
    order = JointOrder.between(model, conv, conv)
    offsets = target_offsets(order, coords.v_start, conv.permutation(model))
    h = FD_STEP
    plus, minus = moved(state, h), moved(state, -h)
    for k in coords.wide:
        joint = model.joint(coords.names[k])
        kind = joint.kind
        decl = joint_declaration(
            kind, joint_velocity_declaration(conv.velocity, model.link(joint.child).inertia.com)
        )
        q_sl = coords.q_slice(k)
        poses = []
        for st in (state, plus, minus):
            R, p = relative_pose(kind, st.s[q_sl], NUMPY)
            poses.append(Transform.from_rotation_translation(R, p, check=False))
        expected = _declared_twist(decl, *poses)
        rows = joint_rows(kind)
        if rows is not None:
            expected = expected[rows]
        got = nu[offsets[k] : offsets[k] + kind.nv]
        assert_close(got, expected, 1e-6, f"{conv.name}: {kind.value} joint {joint.name!r}")


def _declared_twist(declared: BaseVelocity, H: Transform, plus: Transform, minus: Transform) -> np.ndarray:
    """The 6D velocity ``declared`` describes from the poses at t, t + h and t - h (see
    :func:`declared_velocity`)."""
    h = FD_STEP
    R, p = H.rotation, H.translation
    R_dot = (plus.rotation - minus.rotation) / (2 * h)
    p_dot = (plus.translation - minus.translation) / (2 * h)
    omega_world, omega_body = vee(R_dot @ R.T), vee(R.T @ R_dot)
    linear = p_dot if declared.point is Point.BASE_ORIGIN else p_dot - np.cross(omega_world, p)
    if declared.point is Point.BASE_COM:
        linear = p_dot + R_dot @ np.asarray(declared.com)
    if declared.linear_axes is Axes.BODY:
        linear = R.T @ linear
    angular = omega_world if declared.angular_axes is Axes.WORLD else omega_body
    halves = (angular, linear) if declared.ordering is Ordering.ANGULAR_FIRST else (linear, angular)
    return np.concatenate(halves)


def check_declared_frame(model: bridge.Model, state: State, name: object) -> None:
    """The declared base velocity is what the declaration says (finite differences, rtol 1e-6), and
    ``representation`` is the neutral representation measuring it up to the order of its halves."""
    conv = convention(name).bound(model)
    declared = conv.velocity
    expected = declared_velocity(declared, state)
    v_body = state.base_velocity_in("body")
    assert_close(declared.matrices(state.world_H_base)[0] @ v_body, expected, 1e-6, f"{conv.name}: L v_B")
    nu = convert_velocity(model, state, state.nu, state.representation.value, name)
    assert_close(nu[:6], expected, 1e-6, f"{conv.name}: convert_velocity")
    swap = declared.ordering is Ordering.ANGULAR_FIRST
    for rep in NEUTRAL_NAMES:
        v = state.base_velocity_in(rep)
        reordered = np.concatenate([v[3:], v[:3]]) if swap else v
        if conv.representation is Representation.parse(rep):
            assert_close(reordered, nu[:6], 1e-12, f"{conv.name} is {rep}")
        else:
            assert_not_close(reordered, nu[:6], 1e-6, f"{conv.name} is not {rep}")


#: the pairwise axioms, by name (each ``check(model, state, a, b)``)
AXIOMS = {
    "invertible": check_invertible,
    "T_dot": check_T_dot,
    "structured": check_structured_equals_dense,
    "power": check_power_invariance,
    "dynamics": check_dynamics_consistency,
    "acceleration": check_acceleration_is_the_derivative,
}


def check_all(model: bridge.Model, state: State, a: object, b: object) -> None:
    """Every pairwise axiom of ``a -> b`` at ``state``, and for each of the two conventions its
    declared frame (floating base) and native round trip (when it declares a configuration)."""
    for check in AXIOMS.values():
        check(model, state, a, b)
    for name in (a, b):
        if model.floating:
            check_declared_frame(model, state, name)
        check_declared_joint_frames(model, state, name)
        if convention(name).configuration is not None:
            check_native_round_trip(model, state, name)
