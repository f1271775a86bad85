"""Derivatives of inverse and forward dynamics (KinDyn.*_dynamics_derivatives, issue 19).

The reference is always bridge's own ID/FD differenced along the documented tangent, with the
retraction written here independently of :mod:`bridge.derivatives.chain` (a 4x4 matrix exponential):
BODY ``H exp(d^)``, INERTIAL ``exp(d^) H``, MIXED ``o + d_p``, ``exp(d_theta^) R``. Pinocchio's
analytical path and the difference fallback of every other engine are also compared with each
other.
"""

from __future__ import annotations

import numpy as np
import pytest

import bridge
from bridge.derivatives.chain import retract
from bridge.errors import SingularMassMatrixError, StateError
from bridge.validation.check import available_engines
from tests.docs._math import expm, skew
from tests.helpers import assert_close, float64_engines, random_state, small_model

REPS = ["body", "inertial", "mixed"]
STEP = 1e-6


def _twist_hat(d: np.ndarray) -> np.ndarray:
    out = np.zeros((4, 4))
    out[:3, :3] = skew(d[3:])
    out[:3, 3] = d[:3]
    return out


def _moved(H: np.ndarray, s: np.ndarray, delta: np.ndarray, rep: str, nb: int):
    """The configuration after moving with generalized velocity delta (in rep) for unit time."""
    s2 = s + delta[nb:]
    if not nb:
        return H, s2
    d = delta[:6]
    if rep == "body":
        return H @ expm(_twist_hat(d)), s2
    if rep == "inertial":
        return expm(_twist_hat(d)) @ H, s2
    H2 = H.copy()
    H2[:3, :3] = expm(skew(d[3:])) @ H[:3, :3]
    H2[:3, 3] = H[:3, 3] + d[:3]
    return H2, s2


def _numeric(kd, a: np.ndarray, tau: np.ndarray, wrenches, h: float = STEP):
    """Central differences (step h) of kd's ID at acceleration a and FD at force tau: derivatives
    in q (along the tangent) and in nu; the state is set back afterwards."""
    st = kd.state
    model = kd.model
    nv, n = model.nv, model.n_dofs
    nb = nv - n
    H0, s0 = st.world_H_base.matrix, st.s
    nu0 = np.concatenate([st.base_velocity, st.s_dot]) if nb else st.s_dot.copy()

    def at(H, s, nu):
        kd.set_state(H, s, nu[:6] if nb else np.zeros(6), nu[nb:])
        return (
            kd.inverse_dynamics(a[:6] if nb else None, a[nb:], external_wrenches=wrenches),
            kd.forward_dynamics(tau, external_wrenches=wrenches),
        )

    out = [np.zeros((nv, nv)) for _ in range(4)]  # ID_q, ID_nu, FD_q, FD_nu
    for k in range(nv):
        e = np.zeros(nv)
        e[k] = h
        (ip, fp), (im, fm) = (
            at(*_moved(H0, s0, e, kd.representation.value, nb), nu0),
            at(*_moved(H0, s0, -e, kd.representation.value, nb), nu0),
        )
        out[0][:, k], out[2][:, k] = (ip - im) / (2 * h), (fp - fm) / (2 * h)
        (ip, fp), (im, fm) = at(H0, s0, nu0 + e), at(H0, s0, nu0 - e)
        out[1][:, k], out[3][:, k] = (ip - im) / (2 * h), (fp - fm) / (2 * h)
    kd.set_state(H0, s0, nu0[:6] if nb else np.zeros(6), nu0[nb:])
    return out


def _check_against_differences(kd, rng, wrenches, rtol: float = 1e-7) -> None:
    model = kd.model
    nv, n = model.nv, model.n_dofs
    nb = nv - n
    a = rng.normal(size=nv)
    tq = rng.normal(size=n)
    num = _numeric(kd, a, tq, wrenches)
    dq, dnu, dnd = kd.inverse_dynamics_derivatives(a[:6] if nb else None, a[nb:], external_wrenches=wrenches)
    fq, fnu, ftau = kd.forward_dynamics_derivatives(tq, external_wrenches=wrenches)
    what = f"{kd.engine_name} {kd.representation.value} nv={nv}"
    assert_close(dq, num[0], rtol, f"dtau_dq {what}")
    assert_close(dnu, num[1], rtol, f"dtau_dnu {what}")
    assert_close(fq, num[2], rtol, f"dnudot_dq {what}")
    assert_close(fnu, num[3], rtol, f"dnudot_dnu {what}")
    M = kd.mass_matrix()
    assert_close(dnd, M, 1e-12, f"dtau_dnudot = M {what}")
    assert_close(ftau @ M, np.eye(nv), 1e-10, f"dnudot_dtau = M^-1 {what}")
    # FD and ID derivatives are tied by the implicit function theorem
    nd = kd.forward_dynamics(tq, external_wrenches=wrenches)
    dq_at_fd = kd.inverse_dynamics_derivatives(*_split(model, nd), wrenches)[0]
    assert_close(M @ fq, -dq_at_fd, 1e-9, f"M dnudot_dq = -dtau_dq at FD {what}")


def _split(model, nu_dot):
    return (nu_dot[..., :6] if model.floating else None), nu_dot[..., model.nv - model.n_dofs :]


def _kindyn(model, engine: str, rep: str, rng, batch=()):
    kd = bridge.KinDyn(model, engine=engine, representation=rep)
    st = random_state(model, rng, rep, batch)
    kd.set_state(st.world_H_base, st.s, st.base_velocity, st.s_dot)
    return kd


def _wrenches(model, rng, names=("tool", "c")):
    return {name: rng.normal(size=6) for name in names if name in model.frame_names}


# ------------------------------------------------------------------------------------------ tangent
@pytest.mark.parametrize("rep", REPS)
def test_retract_is_the_documented_motion(rep: str) -> None:
    rng = np.random.default_rng(0)
    st = random_state(small_model(rng), rng, rep)
    H, s = st.world_H_base.matrix, st.s
    delta = rng.normal(size=6 + s.shape[0])
    H2, s2 = retract(H, s, delta, rep)
    H_ref, s_ref = _moved(H, s, delta, rep, 6)
    assert_close(H2, H_ref, 1e-13, "pose")
    assert_close(s2, s_ref, 1e-15, "joints")
    # batched, and a fixed base (delta without base part) leaves the pose alone
    Hb, _ = retract(np.broadcast_to(H, (3, 4, 4)), s, np.stack([delta, -delta, 0 * delta]), rep)
    assert_close(Hb[2], H, 1e-15)
    assert_close(Hb[1], _moved(H, s, -delta, rep, 6)[0], 1e-13)
    assert_close(retract(H, s, delta[6:], rep)[0], H, 0.0)
    # moving for unit time with velocity delta: the first-order change is the state's velocity
    eps = 1e-6
    st2 = bridge.State(H, s, delta[:6], delta[6:], rep)
    Hp, Hm = retract(H, s, eps * delta, rep)[0], retract(H, s, -eps * delta, rep)[0]
    Hdot = (Hp - Hm) / (2 * eps)
    body = st2.base_velocity_in("body")
    assert_close(Hdot, H @ _twist_hat(body), 1e-8, "H_dot = H v_B^")


# ------------------------------------------------------------------------------------------ pinocchio
@pytest.fixture(params=["compiled", "numpy"])
def chain_path(request, monkeypatch) -> str:
    """The single-state chain rule by the compiled kernels (numba) or by numpy (as without numba)."""
    import bridge.derivatives.select as select

    if request.param == "numpy":
        monkeypatch.setattr(select, "_KERNELS", [None])
    elif select.compiled_kernels() is None:
        pytest.skip("no compiled kernels (numba missing or BRIDGE_NUMBA=0)")
    return request.param


@pytest.mark.parametrize("rep", REPS)
@pytest.mark.parametrize("floating", [True, False])
@pytest.mark.parametrize("with_wrenches", [False, True])
def test_pinocchio_against_differences(
    rep: str, floating: bool, with_wrenches: bool, chain_path: str
) -> None:
    rng = np.random.default_rng(1)
    model = small_model(rng, floating)
    kd = _kindyn(model, "pinocchio", rep, rng)
    _check_against_differences(kd, rng, _wrenches(model, rng) if with_wrenches else None)


@pytest.mark.parametrize("seed", range(3))
def test_pinocchio_random_models(seed: int) -> None:
    rng = np.random.default_rng(seed)
    model = bridge.random_model(8 + 3 * seed, seed, floating=seed != 1)
    for rep in REPS:
        kd = _kindyn(model, "pinocchio", rep, rng)
        frames = model.frame_names
        wrenches = {frames[-1]: rng.normal(size=6), frames[len(frames) // 2]: rng.normal(size=6)}
        _check_against_differences(kd, rng, wrenches)


@pytest.fixture(scope="module")
def icub():
    from bridge.robots import robot_path

    return bridge.load_urdf(robot_path("iCubGazeboV2_5"), check_inertia=False)


@pytest.mark.parametrize("rep", REPS)
def test_pinocchio_icub(icub, rep: str, chain_path: str) -> None:
    rng = np.random.default_rng(7)
    kd = _kindyn(icub, "pinocchio", rep, rng)
    wrenches = {"l_sole": rng.normal(size=6) * 50, "r_hand": rng.normal(size=6)}
    _check_against_differences(kd, rng, wrenches)


def test_mixed_needs_the_chain_rule_terms(icub) -> None:
    """The naive T^T D T is far off in MIXED (the issue's measurement): the terms matter."""
    rng = np.random.default_rng(3)
    kd = _kindyn(icub, "pinocchio", "mixed", rng)
    a = rng.normal(size=icub.nv)
    dq, dnu, _ = kd.inverse_dynamics_derivatives(a[:6], a[6:])
    eng = kd._engine
    cov = eng.cov
    dq_pin, dv_pin, _ = eng._pin.computeRNEADerivatives(
        eng.pm, eng.data, eng._q1, eng._v1, cov.acceleration(a)
    )
    T = cov.matrix()
    naive_q, naive_v = T.T @ dq_pin @ T, T.T @ dv_pin @ T
    assert np.linalg.norm(naive_q - dq) > 1e-2 * np.linalg.norm(dq)
    assert np.linalg.norm(naive_v - dnu) > 1e-2 * np.linalg.norm(dnu)


# ------------------------------------------------------------------------------------------ fallback
@pytest.mark.parametrize("engine", ["featherstone", "idyntree", "mujoco", "drake"])
@pytest.mark.parametrize("rep", REPS)
@pytest.mark.parametrize("floating", [True, False])
def test_fallback_against_differences(engine: str, rep: str, floating: bool) -> None:
    if engine not in available_engines():
        pytest.skip(f"the {engine} engine is not installed")
    rng = np.random.default_rng(2)
    model = small_model(rng, floating)
    kd = _kindyn(model, engine, rep, rng)
    _check_against_differences(kd, rng, _wrenches(model, rng))


def _compare_engines(model, rep: str, rng, engines=("featherstone", "idyntree"), rtol: float = 1e-9) -> None:
    st = random_state(model, rng, rep)
    nb = model.nv - model.n_dofs
    a = rng.normal(size=model.nv)
    tq = rng.normal(size=model.n_dofs)
    frames = model.frame_names
    wrenches = {frames[-1]: rng.normal(size=6)}
    results = {}
    for engine in ("pinocchio", *engines):
        kd = bridge.KinDyn(model, engine=engine, representation=rep)
        kd.set_state(st.world_H_base, st.s, st.base_velocity, st.s_dot)
        results[engine] = (
            *kd.inverse_dynamics_derivatives(a[:6] if nb else None, a[nb:], wrenches),
            *kd.forward_dynamics_derivatives(tq, wrenches),
        )
    for engine in engines:
        for k, name in enumerate(
            ("dtau_dq", "dtau_dnu", "dtau_dnudot", "dnudot_dq", "dnudot_dnu", "dnudot_dtau")
        ):
            assert_close(results[engine][k], results["pinocchio"][k], rtol, f"{engine} {rep} {name}")


@pytest.mark.parametrize("seed", range(3))
def test_fallback_equals_analytical_random_models(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    model = bridge.random_model(7 + 2 * seed, 100 + seed, floating=seed != 2, massless_probability=0.0)
    engines = tuple(e for e in ("featherstone", "idyntree", "mujoco", "drake") if e in available_engines())
    for rep in REPS:
        _compare_engines(model, rep, rng, engines)


def test_fallback_equals_analytical_icub(icub) -> None:
    rng = np.random.default_rng(5)
    _compare_engines(icub, "mixed", rng, engines=("featherstone",))


# ------------------------------------------------------------------------------------------ API
@pytest.mark.parametrize("engine", ["pinocchio", "featherstone"])
@pytest.mark.parametrize("rep", ["inertial", "mixed"])
def test_batched_equals_per_sample(engine: str, rep: str) -> None:
    rng = np.random.default_rng(4)
    model = small_model(rng)
    st = random_state(model, rng, rep, (2, 3))
    a = rng.normal(size=(3, model.nv))  # broadcast against the state's batch
    tq = rng.normal(size=model.n_dofs)
    w = {"tool": rng.normal(size=(2, 1, 6))}
    kd = bridge.KinDyn(model, engine=engine, representation=rep)
    kd.set_robot_state(st)
    idd = kd.inverse_dynamics_derivatives(a[:, :6], a[:, 6:], w)
    fdd = kd.forward_dynamics_derivatives(tq, w)
    for x in (*idd, *fdd):
        assert x.shape == (2, 3, model.nv, model.nv)
        assert not x.flags.writeable
    one = bridge.KinDyn(model, engine=engine, representation=rep)
    for i in range(2):
        for j in range(3):
            one.set_state(st.world_H_base.matrix[i, j], st.s[i, j], st.base_velocity[i, j], st.s_dot[i, j])
            wi = {"tool": w["tool"][i, 0]}
            for x, y in zip(idd, one.inverse_dynamics_derivatives(a[j, :6], a[j, 6:], wi), strict=True):
                assert_close(x[i, j], y, 1e-11)
            for x, y in zip(fdd, one.forward_dynamics_derivatives(tq, wi), strict=True):
                assert_close(x[i, j], y, 1e-11)


@pytest.mark.parametrize("rep", REPS)
@pytest.mark.parametrize("floating", [True, False])
def test_batches_sample_by_sample_equal_the_vectorised_chain(rep: str, floating: bool, monkeypatch) -> None:
    """Batches on the pinocchio engine: Pinocchio's call and the compiled chain rule per sample,
    against the numpy chain rule vectorised over the batch (the path without numba), with and
    without external wrenches."""
    import bridge.derivatives.select as select

    if select.compiled_kernels() is None:
        pytest.skip("no compiled kernels (numba missing or BRIDGE_NUMBA=0)")
    rng = np.random.default_rng(9)
    model = small_model(rng, floating)
    st = random_state(model, rng, rep, (2, 3))
    a, tq = rng.normal(size=(3, model.nv)), rng.normal(size=(2, 1, model.n_dofs))
    base, s_ddot = (a[:, :6] if floating else None), a[:, model.nv - model.n_dofs :]
    wrenches = [None, {"tool": rng.normal(size=(2, 1, 6))}]

    def everything() -> list[np.ndarray]:
        kd = bridge.KinDyn(model, "pinocchio", rep)
        kd.set_robot_state(st)
        out = []
        for w in wrenches:
            out += kd.inverse_dynamics_derivatives(base, s_ddot, w)
            out += kd.forward_dynamics_derivatives(tq, w)
        return out

    compiled = everything()
    monkeypatch.setattr(select, "_KERNELS", [None])
    for k, (x, y) in enumerate(zip(compiled, everything(), strict=True)):
        assert x.shape == (2, 3, model.nv, model.nv)
        assert_close(x, y, 1e-12, f"{rep} floating={floating} result {k}")


@pytest.mark.parametrize("engine", ["pinocchio", "featherstone", "idyntree"])
def test_state_is_kept(engine: str) -> None:
    """The fallback sets perturbed states on its engine: every later query sees the user's state."""
    rng = np.random.default_rng(6)
    model = small_model(rng)
    kd = _kindyn(model, engine, "mixed", rng)
    a = rng.normal(size=model.nv)
    tau_before = kd.inverse_dynamics(a[:6], a[6:])
    M_before = kd.mass_matrix().copy()
    kd.inverse_dynamics_derivatives(a[:6], a[6:])
    kd.forward_dynamics_derivatives(np.zeros(model.n_dofs))
    kd._cache.clear()
    assert_close(kd.inverse_dynamics(a[:6], a[6:]), tau_before, 1e-14)
    assert_close(kd.mass_matrix(), M_before, 1e-14)


def test_errors() -> None:
    rng = np.random.default_rng(0)
    model = small_model(rng)
    kd = bridge.KinDyn(model, "pinocchio")
    with pytest.raises(StateError):
        kd.inverse_dynamics_derivatives(np.zeros(6), np.zeros(model.n_dofs))
    with pytest.raises(StateError):
        kd.forward_dynamics_derivatives(np.zeros(model.n_dofs))
    massless = bridge.random_model(6, 3, massless_probability=1.0, allow_singular=True)
    if massless.massless_dofs:
        kd = bridge.KinDyn(massless, "pinocchio")
        st = random_state(massless, rng)
        kd.set_robot_state(st)
        with pytest.raises(SingularMassMatrixError):
            kd.forward_dynamics_derivatives(np.zeros(massless.n_dofs))


# ------------------------------------------------------------------------------------------ J_dot
def _engines() -> tuple[str, ...]:
    return float64_engines()  # J_dot by differences of J: float64 engines


@pytest.mark.parametrize("rep", REPS)
@pytest.mark.parametrize("floating", [True, False])
def test_frame_jacobian_derivative(rep: str, floating: bool) -> None:
    """J_dot is the derivative of J along the motion (central differences of J along retract's
    tangent with delta = nu) and J_dot nu = frame_bias_acc, in every engine; a batch equals its
    samples."""
    rng = np.random.default_rng(8)
    model = small_model(rng, floating)
    st = random_state(model, rng, rep, (2,))
    nb = model.nv - model.n_dofs
    h = 1e-6
    ref = bridge.KinDyn(model, "pinocchio", rep)

    def jacobians(i: int, frame: str) -> np.ndarray:
        nu = np.concatenate([st.base_velocity[i], st.s_dot[i]])[6 - nb :]
        out = []
        for sign in (1.0, -1.0):
            H, s = retract(st.world_H_base.matrix[i], st.s[i], sign * h * nu, rep)
            ref.set_state(H, s, st.base_velocity[i], st.s_dot[i])
            out.append(ref.frame_jacobian(frame))
        return (out[0] - out[1]) / (2 * h)

    frames = ("tool", "c", "a")
    fd = {f: np.stack([jacobians(i, f) for i in range(2)]) for f in frames}
    for engine in _engines():
        kd = bridge.KinDyn(model, engine, rep)
        kd.set_robot_state(st)
        for f in frames:
            J_dot = kd.frame_jacobian_derivative(f)
            what = f"{engine} {rep} {f}"
            assert J_dot.shape == (2, 6, model.nv) and not J_dot.flags.writeable
            assert_close(np.einsum("...ij,...j->...i", J_dot, kd.nu), kd.frame_bias_acc(f), 1e-12, what)
            scale = np.abs(kd.frame_jacobian(f)).max() * np.abs(kd.nu).max()
            assert_close(J_dot, fd[f], 1e-8, what, atol=1e-8 * scale)
            one = bridge.KinDyn(model, engine, rep)
            one.set_state(st.world_H_base.matrix[1], st.s[1], st.base_velocity[1], st.s_dot[1])
            assert_close(one.frame_jacobian_derivative(f), J_dot[1], 1e-12, what)


def test_frame_jacobian_derivative_mixed_base_columns(icub) -> None:
    """In MIXED the base columns change with the orientation: J_dot's base block is not the
    derivative at fixed base columns (the naive J_dot^pin T misses J^pin T_dot)."""
    rng = np.random.default_rng(9)
    kd = _kindyn(icub, "pinocchio", "mixed", rng)
    J_dot = kd.frame_jacobian_derivative("r_sole")
    generic = bridge.KinDyn(icub, "featherstone", "mixed")
    generic.set_robot_state(kd.state)
    assert_close(generic.frame_jacobian_derivative("r_sole"), J_dot, 1e-10)
    eng = kd._engine
    cov = eng.cov
    d = eng.pm.createData()
    eng._pin.computeJointJacobiansTimeVariation(eng.pm, d, eng._q1, eng._v1)
    eng._pin.updateFramePlacements(eng.pm, d)
    fid = eng._frame_id["r_sole"]
    naive = eng._pin.getFrameJacobianTimeVariation(eng.pm, d, fid, eng._ref) @ cov.matrix()
    assert np.linalg.norm(naive @ kd.nu - kd.frame_bias_acc("r_sole")) > 1e-3 * np.linalg.norm(
        kd.frame_bias_acc("r_sole")
    )
