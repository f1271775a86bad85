"""Converters of joint-space quantities between conventions, checked against raw Pinocchio."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

import bridge
from bridge.conventions.convert import (
    convert_acceleration,
    convert_bias_forces,
    convert_generalized_force,
    convert_jacobian,
    convert_mass_matrix,
    convert_velocity,
)
from tests.helpers import assert_close, random_state, small_model

REPS = ["body", "inertial", "mixed"]


@pytest.mark.parametrize("rep", REPS)
@pytest.mark.parametrize("floating", [True, False])
def test_raw_pinocchio_quantities_convert_to_the_facade(rep: str, floating: bool) -> None:
    rng = np.random.default_rng(21)
    model = small_model(rng, floating)
    st = random_state(model, rng, rep)
    if not floating:  # Pinocchio's world is the base frame of a fixed-base model
        st = bridge.State(np.eye(4), st.s, st.base_velocity, st.s_dot, rep)
    pm = bridge.to_pinocchio(model)
    pd = pm.createData()
    q, v = bridge.to_pinocchio_state(model, st)
    M_pin = pin.crba(pm, pd, q)
    h_pin = pin.nonLinearEffects(pm, pd, q, v)
    fid = pm.getFrameId("tool", pin.FrameType.OP_FRAME)
    ref = {"body": pin.LOCAL, "inertial": pin.WORLD, "mixed": pin.LOCAL_WORLD_ALIGNED}[rep]
    J_pin = pin.computeFrameJacobian(pm, pd, q, fid, ref)
    tau_pin = rng.normal(size=pm.nv)
    a_pin = pin.aba(pm, pd, q, v, tau_pin)

    kd = bridge.KinDyn(model, "pinocchio", rep)
    kd.set_robot_state(st)
    assert_close(convert_velocity(model, st, v, "pinocchio", rep), kd.nu, 1e-13, "velocity")
    assert_close(convert_mass_matrix(model, st, M_pin, "pinocchio", rep), kd.mass_matrix(), 1e-12, "M")
    assert_close(convert_bias_forces(model, st, h_pin, M_pin, "pinocchio", rep), kd.bias_forces(), 1e-12, "h")
    assert_close(convert_jacobian(model, st, J_pin, "pinocchio", rep), kd.frame_jacobian("tool"), 1e-12, "J")
    tau = convert_generalized_force(model, st, tau_pin, "pinocchio", rep)
    assert_close(
        convert_acceleration(model, st, a_pin, "pinocchio", rep), kd.forward_dynamics(tau), 1e-10, "FD"
    )
    # and back again
    nu_dot = convert_acceleration(model, st, a_pin, "pinocchio", rep)
    assert_close(convert_acceleration(model, st, nu_dot, rep, "pinocchio"), a_pin, 1e-12, "acc round trip")
    assert_close(
        convert_generalized_force(model, st, tau, rep, "pinocchio"), tau_pin, 1e-12, "tau round trip"
    )


def test_all_pairs_are_consistent() -> None:
    rng = np.random.default_rng(22)
    model = small_model(rng)
    st = random_state(model, rng, "mixed")
    kds = {}
    for rep in REPS:
        kd = bridge.KinDyn(model, "pinocchio", rep)
        kd.set_robot_state(st)
        kds[rep] = kd
    for a in REPS:
        for b in REPS:
            Ma, ha = kds[a].mass_matrix(), kds[a].bias_forces()
            assert_close(convert_mass_matrix(model, st, Ma, a, b), kds[b].mass_matrix(), 1e-12, f"M {a}->{b}")
            assert_close(
                convert_bias_forces(model, st, ha, Ma, a, b), kds[b].bias_forces(), 1e-12, f"h {a}->{b}"
            )
            Ja = kds[a].frame_jacobian("tool")
            # rows stay in a's frame representation; columns move to b's nu
            assert_close(
                convert_jacobian(model, st, Ja, a, b) @ kds[b].nu, Ja @ kds[a].nu, 1e-12, f"J {a}->{b}"
            )
