"""The KinDyn facade: engine-independent identities, finite differences, batching, errors.

Cross-engine agreement (pinocchio vs idyntree vs featherstone) is in tests/test_engines_agree.py.
"""

from __future__ import annotations

import numpy as np
import pytest

import bridge
from bridge.conventions.state import State
from bridge.dynamics.integration import integrate
from tests.helpers import assert_close, random_state, small_model

ENGINES = ["pinocchio", "idyntree", "featherstone"]
REPS = ["body", "inertial", "mixed"]


def _kindyn(engine: str, rep: str, floating: bool = True, seed: int = 0):
    rng = np.random.default_rng(seed)
    model = small_model(rng, floating)
    kd = bridge.KinDyn(model, engine=engine, representation=rep)
    st = random_state(model, rng, rep)
    kd.set_state(st.world_H_base, st.s, st.base_velocity, st.s_dot)
    return kd, model, st, rng


def _split(model, nu_dot):
    return (nu_dot[..., :6] if model.floating else None), nu_dot[..., -model.n_dofs :]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("rep", REPS)
@pytest.mark.parametrize("floating", [True, False])
def test_id_fd_and_wrench_identities(engine: str, rep: str, floating: bool) -> None:
    kd, model, _, rng = _kindyn(engine, rep, floating)
    M, h = kd.mass_matrix(), kd.bias_forces()
    assert_close(M, M.T, 1e-14, "M symmetric")
    assert np.all(np.linalg.eigvalsh(M) > 0)
    a = rng.normal(size=model.nv)
    tau = kd.inverse_dynamics(*_split(model, a))
    assert_close(tau, M @ a + h, 1e-12, "ID = M a + h")
    assert_close(kd.forward_dynamics(tau), a, 1e-10, "FD(ID(a)) = a")
    assert_close(kd.inverse_dynamics(*_split(model, np.zeros(model.nv))), h, 1e-13, "h = ID(0)")
    # gravity forces: bias forces with zero velocity
    kd0 = bridge.KinDyn(model, engine=engine, representation=rep)
    st = kd.state
    kd0.set_state(st.world_H_base, st.s, np.zeros(6), np.zeros(model.n_dofs))
    assert_close(kd0.bias_forces(), kd.gravity_forces(), 1e-12, "g = h(v=0)")
    # external wrenches: ID(a, f) = ID(a) - J^T f and FD(tau, f) = FD(tau + J^T f)
    wrenches = {"tool": rng.normal(size=6), "c": rng.normal(size=6)}
    JtF = sum(kd.frame_jacobian(name).T @ w for name, w in wrenches.items())
    assert_close(
        kd.inverse_dynamics(*_split(model, a), external_wrenches=wrenches), tau - JtF, 1e-12, "ID with f"
    )
    torques = rng.normal(size=model.n_dofs)
    full = np.concatenate([np.zeros(model.nv - model.n_dofs), torques])
    assert_close(
        kd.forward_dynamics(torques, external_wrenches=wrenches),
        kd.forward_dynamics(full + JtF),
        1e-10,
        "FD with f",
    )


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("rep", REPS)
def test_frame_kinematics_identities(engine: str, rep: str) -> None:
    kd, model, _, rng = _kindyn(engine, rep)
    nu = kd.nu
    a = rng.normal(size=model.nv)
    for frame in ("tool", "f", "a", "c"):
        J = kd.frame_jacobian(frame)
        assert_close(kd.frame_velocity(frame), J @ nu, 1e-12, f"v = J nu ({frame})")
        assert_close(
            kd.frame_acceleration(frame, *_split(model, np.zeros(model.nv))), kd.frame_bias_acc(frame), 1e-12
        )
        acc = kd.frame_acceleration(frame, *_split(model, a))
        assert_close(acc, J @ a + kd.frame_bias_acc(frame), 1e-12, "a = J nu_dot + Jdot nu")
    assert_close(kd.com_velocity(), kd.com_jacobian() @ nu, 1e-12, "vcom = Jcom nu")


def _fd(kd_factory, st: State, base_acc, s_ddot, fn, h: float = 1e-4):
    """Central difference of fn(kd) along the trajectory integrated with constant acceleration."""
    values = []
    for dt in (h, -h):
        kd = kd_factory()
        moved = integrate(st, base_acc if base_acc is not None else np.zeros(6), s_ddot, dt)
        kd.set_state(moved.world_H_base, moved.s, moved.base_velocity, moved.s_dot)
        values.append(fn(kd))
    return (values[0] - values[1]) / (2 * h)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("rep", REPS)
def test_frame_acceleration_is_derivative_of_frame_velocity(engine: str, rep: str) -> None:
    kd, model, st, rng = _kindyn(engine, rep, seed=3)
    a = rng.normal(size=model.nv)
    ba, sdd = _split(model, a)

    def factory():
        return bridge.KinDyn(model, engine=engine, representation=rep)

    for frame in ("tool", "f", "c"):
        fd = _fd(factory, st, ba, sdd, lambda k, fr=frame: k.frame_velocity(fr))
        assert_close(kd.frame_acceleration(frame, ba, sdd), fd, 1e-6, f"frame acc {frame}")
        # and the velocity is consistent with the pose: d/dt world_H_frame at zero acceleration
        H_dot = _fd(factory, st, ba, sdd, lambda k, fr=frame: k.frame_transform(fr))
        H = kd.frame_transform(frame)
        R, Rd, pd = H[:3, :3], H_dot[:3, :3], H_dot[:3, 3]
        w_world = bridge.spatial.vee(Rd @ R.T)
        v = kd.frame_velocity(frame)
        if rep == "mixed":
            expected = np.concatenate([pd, w_world])
        elif rep == "inertial":
            expected = np.concatenate([pd - np.cross(w_world, H[:3, 3]), w_world])
        else:
            expected = np.concatenate([R.T @ pd, R.T @ w_world])
        assert_close(v, expected, 1e-6, f"frame velocity vs pose ({frame})")
    # centre of mass
    fd = _fd(factory, st, ba, sdd, lambda k: k.com_position())
    assert_close(kd.com_velocity(), fd, 1e-6, "com velocity")


@pytest.mark.parametrize("engine", ENGINES)
def test_generalized_accelerations_agree_across_representations(engine: str) -> None:
    """FD in one representation, integrate, convert nu to another, finite-difference it: equals FD there."""
    rng = np.random.default_rng(11)
    model = small_model(rng)
    st = random_state(model, rng, "mixed")
    torques = rng.normal(size=model.n_dofs)
    for src in REPS:
        kd = bridge.KinDyn(model, engine=engine, representation=src)
        s_src = st.to(src)
        kd.set_state(s_src.world_H_base, s_src.s, s_src.base_velocity, s_src.s_dot)
        a = kd.forward_dynamics(torques)
        for tgt in REPS:
            kd_t = bridge.KinDyn(model, engine=engine, representation=tgt)
            s_t = st.to(tgt)
            kd_t.set_state(s_t.world_H_base, s_t.s, s_t.base_velocity, s_t.s_dot)
            a_t = kd_t.forward_dynamics(torques)
            h = 1e-4
            nus = [integrate(s_src, a[:6], a[6:], dt).to(tgt).nu for dt in (h, -h)]
            assert_close(a_t, (nus[0] - nus[1]) / (2 * h), 1e-6, f"{src}->{tgt}")


@pytest.mark.parametrize("engine", ENGINES)
def test_kinetic_energy_and_power_are_representation_invariant(engine: str) -> None:
    rng = np.random.default_rng(5)
    model = small_model(rng)
    st = random_state(model, rng, "body")
    energies, powers = [], []
    for rep in REPS:
        kd = bridge.KinDyn(model, engine=engine, representation=rep)
        s = st.to(rep)
        kd.set_state(s.world_H_base, s.s, s.base_velocity, s.s_dot)
        energies.append(kd.nu @ kd.mass_matrix() @ kd.nu)
        powers.append(kd.nu @ kd.gravity_forces())
    np.testing.assert_allclose(energies, energies[0], rtol=1e-12)
    np.testing.assert_allclose(powers, powers[0], rtol=1e-12, atol=1e-12)


def _world_axes(kd: bridge.KinDyn, h: np.ndarray) -> np.ndarray:
    """A momentum in the representation's axes (base axes for BODY) -> world axes."""
    if kd.representation is not bridge.Representation.BODY:
        return h
    R = kd.state.world_H_base.matrix[:3, :3]
    return np.concatenate([R @ h[:3], R @ h[3:]])


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("rep", REPS)
@pytest.mark.parametrize("floating", [True, False])
def test_momentum_identities(engine: str, rep: str, floating: bool) -> None:
    kd, model, st, _ = _kindyn(engine, rep, floating, seed=4)
    h_G, h_B = kd.centroidal_momentum(), kd.total_momentum()
    assert h_G.shape == h_B.shape == (6,)
    # linear momentum = m * com velocity, in either frame
    p = model.total_mass * kd.com_velocity()
    assert_close(_world_axes(kd, h_G)[:3], p, 1e-12, "p = m vcom")
    assert_close(_world_axes(kd, h_B)[:3], p, 1e-12, "p = m vcom (total)")
    # the two differ by the change of reference point (G vs B, or the world origin for INERTIAL)
    H = kd.state.world_H_base.matrix
    point = np.zeros(3) if rep == "inertial" else H[:3, 3]
    k_B = _world_axes(kd, h_G)[3:] + np.cross(kd.com_position() - point, p)
    assert_close(_world_axes(kd, h_B)[3:], k_B, 1e-12, "k_B = k_G + (c - o) x p")
    if floating:  # the base rows of the generalized momentum
        assert_close(h_B, (kd.mass_matrix() @ kd.nu)[:6], 1e-12, "total momentum = (M nu)[:6]")
    # kinetic energy from the momentum of a rigid motion: zero joint velocity, base velocity only
    if floating:
        kd0 = bridge.KinDyn(model, engine=engine, representation=rep)
        kd0.set_state(st.world_H_base, st.s, st.base_velocity, np.zeros(model.n_dofs))
        nu0 = kd0.nu
        assert_close(kd0.total_momentum() @ nu0[:6], nu0 @ kd0.mass_matrix() @ nu0, 1e-12, "2 KE = h . v_B")


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("rep", REPS)
def test_centroidal_momentum_rate_is_gravity_in_free_fall(engine: str, rep: str) -> None:
    """With zero joint torques and no contact, d/dt h_G = (m g, 0) (in G[A]): a check on forward
    dynamics, the centre of mass and the momentum together."""
    kd, model, st, _ = _kindyn(engine, rep, seed=6)
    nu_dot = kd.forward_dynamics(np.zeros(model.n_dofs))
    ba, sdd = _split(model, nu_dot)

    def factory():
        return bridge.KinDyn(model, engine=engine, representation=rep)

    rate = _fd(factory, st, ba, sdd, lambda k: _world_axes(k, k.centroidal_momentum()))
    expected = np.concatenate([model.total_mass * np.array([0.0, 0.0, -9.81]), np.zeros(3)])
    np.testing.assert_allclose(rate, expected, atol=1e-6 * model.total_mass * 9.81)


@pytest.mark.parametrize("engine", ENGINES)
def test_batched_state_equals_single_calls(engine: str) -> None:
    rng = np.random.default_rng(8)
    model = small_model(rng)
    N = 64  # even and >= 64: the featherstone engine runs it as 65 states and drops the extra one
    st = random_state(model, rng, "mixed", batch=(N,))
    g = rng.normal(size=(N, 3))
    a = rng.normal(size=(N, model.nv))
    w = {"tool": rng.normal(size=(N, 6))}
    kd = bridge.KinDyn(model, engine=engine, representation="mixed")
    kd.set_state(st.world_H_base, st.s, st.base_velocity, st.s_dot, gravity=g)
    batched = {
        "M": kd.mass_matrix(),
        "h": kd.bias_forces(),
        "tau": kd.inverse_dynamics(a[:, :6], a[:, 6:], external_wrenches=w),
        "fd": kd.forward_dynamics(a[:, 6:], external_wrenches=w),
        "J": kd.frame_jacobian("tool"),
        "acc": kd.frame_acceleration("tool", a[:, :6], a[:, 6:]),
        "com": kd.com_position(),
        "hG": kd.centroidal_momentum(),
        "hB": kd.total_momentum(),
    }
    assert batched["M"].shape == (N, model.nv, model.nv)
    single = bridge.KinDyn(model, engine=engine, representation="mixed")
    for i in range(N):
        single.set_state(st.world_H_base[i], st.s[i], st.base_velocity[i], st.s_dot[i], gravity=g[i])
        ref = {
            "M": single.mass_matrix(),
            "h": single.bias_forces(),
            "tau": single.inverse_dynamics(a[i, :6], a[i, 6:], external_wrenches={"tool": w["tool"][i]}),
            "fd": single.forward_dynamics(a[i, 6:], external_wrenches={"tool": w["tool"][i]}),
            "J": single.frame_jacobian("tool"),
            "acc": single.frame_acceleration("tool", a[i, :6], a[i, 6:]),
            "com": single.com_position(),
            "hG": single.centroidal_momentum(),
            "hB": single.total_momentum(),
        }
        for key, value in ref.items():
            np.testing.assert_allclose(batched[key][i], value, rtol=1e-13, atol=1e-12, err_msg=key)


def test_errors() -> None:
    rng = np.random.default_rng(9)
    model = small_model(rng)
    with pytest.raises(bridge.BridgeError, match="unknown engine 'bullet'; available: pinocchio, idyntree"):
        bridge.KinDyn(model, engine="bullet")
    kd = bridge.KinDyn(model, engine="pinocchio")
    with pytest.raises(bridge.StateError, match="no state set"):
        kd.mass_matrix()
    st = random_state(model, rng)
    kd.set_state(st.world_H_base, st.s, st.base_velocity, st.s_dot)
    with pytest.raises(bridge.UnknownNameError, match=r"unknown frame 'tol'.*did you mean 'tool'"):
        kd.frame_jacobian("tol")
    with pytest.raises(KeyError):
        kd.frame_velocity("nope")
    with pytest.raises(bridge.ShapeError, match="s_ddot"):
        kd.inverse_dynamics(np.zeros(6), np.zeros(3))
    with pytest.raises(bridge.ShapeError, match="base_acc"):
        kd.inverse_dynamics(None, np.zeros(model.n_dofs))
    with pytest.raises(bridge.StateError, match="s_dot"):
        kd.set_state(st.world_H_base, st.s, st.base_velocity, np.zeros(2))
    with pytest.raises(bridge.StateError, match="NaN"):
        kd.set_state(st.world_H_base, st.s, np.full(6, np.nan), st.s_dot)
    with pytest.raises(bridge.StateError, match="gravity"):
        kd.set_state(st.world_H_base, st.s, st.base_velocity, st.s_dot, gravity=(0, 0))
    with pytest.raises(bridge.InvalidValueError, match="external wrench on 'tool'"):
        kd.inverse_dynamics(np.zeros(6), np.zeros(model.n_dofs), {"tool": np.full(6, np.inf)})
