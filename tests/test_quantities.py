"""The quantities after M and h (issue 20): centroidal momentum matrix, total momentum Jacobian,
Coriolis matrix and forces, relative transform and Jacobian, and the stateless queries.

Checked on iCub (icub-models, floating), the Panda arm (example-robot-data, fixed base) and random
models, in every representation: equal across engines (1e-10), equal to iDynTree's and Pinocchio's
own functions after conversion, the engine-independent identities (CMM nu, C nu + g = h, the skew
property and the relative velocity by finite differences), the generic constructions
(bridge.backends.generic) equal to every native one, batches equal to their samples.
"""

from __future__ import annotations

import idyntree.bindings as idyn
import numpy as np
import pinocchio as pin
import pytest

import bridge
from bridge.backends import generic
from bridge.backends.idyntree.kindyn import kindyn, set_idyntree_state
from bridge.backends.protocol import DERIVED_QUANTITIES, derived
from bridge.dynamics.integration import integrate
from bridge.robots import robot_path
from bridge.validation.check import random_states
from tests.helpers import assert_close, small_model

ENGINES = ("pinocchio", "idyntree", "featherstone")
REPS = ("body", "inertial", "mixed")
SAMPLES = 3


def _mv(A: np.ndarray, x: np.ndarray) -> np.ndarray:
    return np.einsum("...ij,...j->...i", A, x)


@pytest.fixture(scope="module")
def models() -> dict[str, tuple[bridge.Model, tuple[str, str]]]:
    """name -> (model, (frame, reference))."""
    icub = bridge.load_urdf(robot_path("iCubGazeboV2_5"))
    panda = bridge.load_urdf(robot_path("panda"), floating=False, mimic="independent")
    rand = bridge.random_model(9, seed=4)
    return {
        "icub": (icub, ("l_sole", "r_hand")),
        "panda": (panda, ("panda_hand", "panda_link3")),
        "random": (rand, (rand.frame_names[-1], rand.frame_names[4])),
        "random-fixed": (rand.with_fixed_base(), (rand.frame_names[-2], rand.frame_names[3])),
        "small": (small_model(np.random.default_rng(3)), ("tool", "c")),
    }


MODELS = ("icub", "panda", "random", "random-fixed", "small")


def _kd(model, engine: str, rep: str, seed: int = 0) -> bridge.KinDyn:
    kd = bridge.KinDyn(model, engine=engine, representation=rep)
    kd.set_robot_state(random_states(model, SAMPLES, np.random.default_rng(seed)))
    return kd


def _all(kd: bridge.KinDyn, pair: tuple[str, str]) -> dict[str, np.ndarray]:
    f, r = pair
    return {
        "CMM": kd.centroidal_momentum_matrix(),
        "J_momentum": kd.total_momentum_jacobian(),
        "C": kd.coriolis_matrix(),
        "C_nu": kd.coriolis_forces(),
        "relative_transform": kd.relative_transform(f, r),
        "relative_jacobian": kd.relative_jacobian(f, r),
    }


# --------------------------------------------------------------------------- engines agree
@pytest.mark.parametrize("name", MODELS)
@pytest.mark.parametrize("rep", REPS)
def test_engines_agree(models, name: str, rep: str) -> None:
    model, pair = models[name]
    values = {e: _all(_kd(model, e, rep), pair) for e in ENGINES}
    nv, n = model.nv, model.n_dofs
    shapes = {
        "CMM": (6, nv),
        "J_momentum": (6, nv),
        "C": (nv, nv),
        "C_nu": (nv,),
        "relative_transform": (4, 4),
        "relative_jacobian": (6, n),
    }
    for key, ref in values["pinocchio"].items():
        assert ref.shape == (SAMPLES, *shapes[key]), key
        for e in ENGINES[1:]:
            for i in range(SAMPLES):
                assert_close(values[e][key][i], ref[i], 1e-10, f"{key} {e} vs pinocchio, sample {i}")


# --------------------------------------------------------------------------- identities
@pytest.mark.parametrize("name", MODELS)
@pytest.mark.parametrize("rep", REPS)
@pytest.mark.parametrize("engine", ENGINES)
def test_identities(models, name: str, rep: str, engine: str) -> None:
    model, (f, r) = models[name]
    rng = np.random.default_rng(1)
    state = random_states(model, SAMPLES, rng).to(rep)
    kd = bridge.KinDyn(model, engine=engine, representation=rep)
    kd.set_robot_state(state)
    nu = kd.nu
    h, g = kd.bias_forces(), kd.gravity_forces()
    for i in range(SAMPLES):
        cmm_nu = _mv(kd.centroidal_momentum_matrix(), nu)[i]
        assert_close(cmm_nu, kd.centroidal_momentum()[i], 1e-10, "CMM nu")
        assert_close(_mv(kd.total_momentum_jacobian(), nu)[i], kd.total_momentum()[i], 1e-10, "J nu")
        assert_close(_mv(kd.coriolis_matrix(), nu)[i] + g[i], h[i], 1e-10, "C nu + g = h")
        assert_close(kd.coriolis_forces()[i] + g[i], h[i], 1e-10, "C nu = h - g")
    if model.floating:  # the total momentum Jacobian is the base rows of M
        assert_close(kd.total_momentum_jacobian(), kd.mass_matrix()[..., :6, :], 1e-10, "J = M[:6]")
    # along the motion (any acceleration): M_dot = C + C^T, d/dt relative_transform = J_rel s_dot
    dt = 1e-4
    ba = rng.normal(size=(SAMPLES, 6))
    sdd = rng.normal(size=(SAMPLES, model.n_dofs))
    moved = []
    for sign in (1, -1):
        kk = bridge.KinDyn(model, engine=engine, representation=rep)
        kk.set_robot_state(integrate(state, ba, sdd, sign * dt))
        moved.append(kk)
    M_dot = (moved[0].mass_matrix() - moved[1].mass_matrix()) / (2 * dt)
    C = kd.coriolis_matrix()
    for i in range(SAMPLES):
        assert_close(C[i] + C[i].T, M_dot[i], 1e-6, "M_dot = C + C^T")
    H = kd.relative_transform(f, r)
    H_dot = (moved[0].relative_transform(f, r) - moved[1].relative_transform(f, r)) / (2 * dt)
    v = _relative_velocity(H, H_dot, rep)
    for i in range(SAMPLES):
        assert_close(kd.relative_jacobian(f, r)[i] @ state.s_dot[i], v[i], 1e-6, "J_rel s_dot")
        # the definition: reference_H_frame from the two world poses
        expected = np.linalg.inv(kd.frame_transform(r)[i]) @ kd.frame_transform(f)[i]
        assert_close(H[i], expected, 1e-12, "relative transform")


def _relative_velocity(H: np.ndarray, H_dot: np.ndarray, rep: str) -> np.ndarray:
    """Velocity of F w.r.t. R from R_H_F and its derivative: in F (body), R (inertial), F[R] (mixed)."""
    out = []
    for Hi, Hdi in zip(H, H_dot, strict=True):
        R, p, Rd, pd = Hi[:3, :3], Hi[:3, 3], Hdi[:3, :3], Hdi[:3, 3]
        if rep == "body":
            W, lin = R.T @ Rd, R.T @ pd
        else:
            W = Rd @ R.T
            lin = pd - W @ p if rep == "inertial" else pd
        out.append(np.concatenate([lin, [W[2, 1], W[0, 2], W[1, 0]]]))
    return np.array(out)


# --------------------------------------------------------------------------- iDynTree's own functions
def _idyntree_native(model, rep: str, state: bridge.State, pair: tuple[str, str]) -> dict[str, np.ndarray]:
    kd = kindyn(model, rep)
    im = kd.model()
    n = model.n_dofs
    sl = slice(None) if model.floating else slice(6, None)
    out: dict[str, list] = {k: [] for k in ("CMM", "J_momentum", "relative_transform", "relative_jacobian")}
    J = idyn.MatrixDynSize(6, 6 + n)
    Jrel = idyn.MatrixDynSize(6, n)
    f, r = pair
    for i in range(state.s.shape[0]):
        v = state.base_velocity[i] if model.floating else np.zeros(6)
        set_idyntree_state(kd, state.world_H_base.matrix[i], state.s[i], v, state.s_dot[i])
        assert kd.getCentroidalTotalMomentumJacobian(J)
        out["CMM"].append(J.toNumPy()[:, sl].copy())
        assert kd.getLinearAngularMomentumJacobian(J)
        out["J_momentum"].append(J.toNumPy()[:, sl].copy())
        X = kd.getRelativeTransform(im.getFrameIndex(r), im.getFrameIndex(f))
        out["relative_transform"].append(np.array(X.asHomogeneousTransform().toNumPy()))
        assert kd.getRelativeJacobian(im.getFrameIndex(r), im.getFrameIndex(f), Jrel)
        out["relative_jacobian"].append(Jrel.toNumPy().copy())
    return {k: np.array(v) for k, v in out.items()}


@pytest.mark.parametrize("name", MODELS)
@pytest.mark.parametrize("rep", REPS)
def test_equal_to_idyntree_functions(models, name: str, rep: str) -> None:
    model, pair = models[name]
    state = random_states(model, SAMPLES, np.random.default_rng(2)).to(rep)
    native = _idyntree_native(model, rep, state, pair)
    for engine in ("pinocchio", "featherstone"):
        kd = bridge.KinDyn(model, engine=engine, representation=rep)
        kd.set_robot_state(state)
        got = _all(kd, pair)
        for key, ref in native.items():
            for i in range(SAMPLES):
                assert_close(got[key][i], ref[i], 1e-10, f"{key} ({engine}) vs iDynTree, sample {i}")


# --------------------------------------------------------------------------- Pinocchio's own functions
@pytest.mark.parametrize("name", MODELS)
@pytest.mark.parametrize("rep", REPS)
def test_equal_to_pinocchio_functions(models, name: str, rep: str) -> None:
    """``computeCoriolisMatrix`` as ``T^T (C_pin T + M_pin T_dot)`` and ``computeCentroidalMap`` as
    ``Ag T`` (dense T, T_dot from ``bridge.velocity_transform``), against the other engines."""
    model, _ = models[name]
    state = random_states(model, SAMPLES, np.random.default_rng(5)).to(rep)
    pm = bridge.to_pinocchio(model)
    d = pm.createData()
    q, v = bridge.to_pinocchio_state(model, state)
    T, T_dot = bridge.velocity_transform(model, state, rep, "pinocchio")
    T = np.broadcast_to(T, (SAMPLES, model.nv, model.nv))  # unbatched where constant
    T_dot = np.broadcast_to(T_dot, (SAMPLES, model.nv, model.nv))
    for engine in ("idyntree", "featherstone"):
        kd = bridge.KinDyn(model, engine=engine, representation=rep)
        kd.set_robot_state(state)
        for i in range(SAMPLES):
            C_pin = pin.computeCoriolisMatrix(pm, d, q[i], v[i]).copy()
            M_pin = pin.crba(pm, d, q[i]).copy()
            M_pin = np.triu(M_pin) + np.triu(M_pin, 1).T
            C = T[i].T @ (C_pin @ T[i] + M_pin @ T_dot[i])
            assert_close(kd.coriolis_matrix()[i], C, 1e-10, f"C ({engine}) vs Pinocchio, sample {i}")
            if model.floating:  # Pinocchio's centre of mass leaves out a fixed base's welded mass
                Ag = pin.computeCentroidalMap(pm, d, q[i]).copy() @ T[i]
                cmm = kd.centroidal_momentum_matrix()[i]
                if rep == "body":  # bridge's BODY rows are G[B], Pinocchio's G[A]
                    R = state.world_H_base.matrix[i, :3, :3]
                    cmm = np.concatenate([R @ cmm[:3], R @ cmm[3:]])
                assert_close(cmm, Ag, 1e-10, f"CMM ({engine}) vs Pinocchio, sample {i}")


# --------------------------------------------------------------------------- generic defaults
@pytest.mark.parametrize("name", ("icub", "panda", "random-fixed", "small"))
@pytest.mark.parametrize("engine", ENGINES)
def test_generic_defaults_equal_native(models, name: str, engine: str) -> None:
    """The generic constructions (what an engine without native ones gets) equal every native one,
    and the lookup gives the engine's own method exactly where it declares it."""
    model, (f, r) = models[name]
    args = {"frame_jacobian_derivative": (f,), "relative_transform": (f, r), "relative_jacobian": (f, r)}
    for rep in REPS:
        kd = _kd(model, engine, rep, seed=6)
        e = kd._engine
        kd.mass_matrix()  # the engine's state is set
        for key in DERIVED_QUANTITIES:
            found = derived(e, key)
            native = key in type(e).NATIVE_QUANTITIES
            assert (getattr(found, "__self__", None) is e) == native, f"{key}: lookup on {engine}"
            expected, got = getattr(generic, key)(e, *args.get(key, ())), found(*args.get(key, ()))
            for i in range(SAMPLES):
                assert_close(expected[i], got[i], 1e-10, f"{key} {rep}: generic vs {engine}")


# --------------------------------------------------------------------------- batches and single states
@pytest.mark.parametrize("engine", ENGINES)
def test_batched_equals_samples_and_single_state(models, engine: str) -> None:
    model, pair = models["small"]
    rng = np.random.default_rng(8)
    state = random_states(model, 6, rng)
    H = state.world_H_base.matrix.reshape(2, 3, 4, 4)
    batched = bridge.State(
        H,
        state.s.reshape(2, 3, -1),
        state.base_velocity.reshape(2, 3, 6),
        state.s_dot.reshape(2, 3, -1),
        "mixed",
    )
    for rep in REPS:
        kd = bridge.KinDyn(model, engine=engine, representation=rep)
        kd.set_robot_state(batched.to(rep))
        values = _all(kd, pair)
        single = bridge.KinDyn(model, engine=engine, representation=rep)
        for i in range(6):
            st = state.to(rep)
            single.set_state(st.world_H_base.matrix[i], st.s[i], st.base_velocity[i], st.s_dot[i])
            for key, value in _all(single, pair).items():
                assert value.shape == values[key].shape[2:], key
                assert_close(values[key].reshape(6, *value.shape)[i], value, 1e-12, f"{key} {rep} sample {i}")


def test_results_are_cached_and_read_only(models) -> None:
    model, (f, r) = models["small"]
    kd = _kd(model, "pinocchio", "mixed")
    names = ("centroidal_momentum_matrix", "total_momentum_jacobian", "coriolis_matrix", "coriolis_forces")
    for name in names:
        a = getattr(kd, name)()
        assert a is getattr(kd, name)() and not a.flags.writeable
    assert kd.relative_jacobian(f, r) is kd.relative_jacobian(f, r)
    with pytest.raises(bridge.UnknownNameError, match="nope"):
        kd.relative_jacobian(f, "nope")
    with pytest.raises(bridge.UnknownNameError, match="nope"):
        kd.relative_transform("nope", r)


def test_relative_quantities_of_a_frame_to_itself_and_the_base(models) -> None:
    model, (f, _) = models["random"]
    kd = _kd(model, "featherstone", "body")
    assert_close(kd.relative_transform(f, f), np.broadcast_to(np.eye(4), (SAMPLES, 4, 4)), 1e-12)
    assert_close(kd.relative_jacobian(f, f), np.zeros((SAMPLES, 6, model.n_dofs)), 1e-12)
    # w.r.t. the base in BODY: the joint columns of the frame Jacobian minus the base's motion
    base = model.base
    J = kd.frame_jacobian(f)
    assert_close(kd.relative_jacobian(f, base), J[..., 6:], 1e-10)


# --------------------------------------------------------------------------- stateless queries
def test_stateless_queries_equal_kindyn(models) -> None:
    import bridge.dynamics.functional as fn

    model, (f, r) = models["small"]
    state = random_states(model, 2, np.random.default_rng(10)).to("body")
    kd = bridge.KinDyn(model, engine="featherstone", representation="body")
    kd.set_robot_state(state, (0.0, 0.0, -3.0))
    kw = {"engine": "featherstone", "gravity": (0.0, 0.0, -3.0)}
    assert_close(bridge.mass_matrix(model, state, **kw), kd.mass_matrix())
    assert_close(bridge.bias_forces(model, state, **kw), kd.bias_forces())
    assert_close(bridge.coriolis_matrix(model, state, **kw), kd.coriolis_matrix())
    assert_close(bridge.frame_jacobian(model, state, f, **kw), kd.frame_jacobian(f))
    assert_close(bridge.relative_jacobian(model, state, f, r, **kw), kd.relative_jacobian(f, r))
    assert_close(bridge.centroidal_momentum_matrix(model, state, **kw), kd.centroidal_momentum_matrix())
    ba, sdd = np.ones(6), np.ones(model.n_dofs)
    assert_close(bridge.inverse_dynamics(model, state, ba, sdd, **kw), kd.inverse_dynamics(ba, sdd))
    assert_close(bridge.frame_jacobian_derivative(model, state, f, **kw), kd.frame_jacobian_derivative(f))
    for a, b in zip(
        bridge.inverse_dynamics_derivatives(model, state, ba, sdd, **kw),
        kd.inverse_dynamics_derivatives(ba, sdd),
        strict=True,
    ):
        assert_close(a, b)
    tau = np.ones(model.n_dofs)
    for a, b in zip(
        bridge.forward_dynamics_derivatives(model, state, tau, **kw),
        kd.forward_dynamics_derivatives(tau),
        strict=True,
    ):
        assert_close(a, b)
    # every query is exported, answers in the state's representation, and reuses its KinDyn
    assert set(fn.QUERIES) == set(bridge._FUNCTIONAL)
    assert all(callable(getattr(bridge, q)) and hasattr(bridge.KinDyn, q) for q in fn.QUERIES)
    assert fn.kindyn_at(model, state, "featherstone") is fn.kindyn_at(model, state.to("body"), "featherstone")
    assert fn.kindyn_at(model, state.to("mixed")).representation is bridge.Representation.MIXED
    assert "KinDyn.coriolis_matrix" in bridge.coriolis_matrix.__doc__
    with pytest.raises(bridge.InvalidValueError, match=r"bridge\.State"):
        bridge.mass_matrix(model, np.eye(4))
    with pytest.raises(bridge.InvalidValueError, match="unknown engine"):
        bridge.mass_matrix(model, state, engine="nope")
