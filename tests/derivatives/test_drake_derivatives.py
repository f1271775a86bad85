"""KinDyn's dynamics derivatives against Drake's automatic differentiation, in Drake's own MIXED
coordinates (issue 19's independent check).

Drake's inverse dynamics (``CalcInverseDynamics`` minus ``CalcGravityGeneralizedForces``, external
wrenches as spatial forces on their bodies) and forward dynamics (the plant's generalized
acceleration output for an applied generalized force) are evaluated on ``plant.ToAutoDiffXd()``
with derivative seeds on ``(delta, nu, nu_dot)`` (or ``(delta, nu, tau)``): ``q(delta)`` is the
configuration of :func:`bridge.derivatives.retract` in MIXED (the base quaternion moves as
``exp(delta_theta^) R``, the origin by ``delta_p``, the joints by ``delta_s``), checked here against
differences of ``retract`` itself, and Drake's v is bridge's MIXED nu permuted (base angular first,
joints in Drake's order), so every derivative maps back by one index permutation. The result must
equal KinDyn's derivatives (engine "pinocchio": Pinocchio's analytical derivatives plus the chain
rule) to 1e-10 relative, on small, random and iCub models, floating and fixed.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pydrake", reason="Drake is not installed (pip install 'bridge-dynamics[drake]')")

import bridge
from bridge.backends.drake import drake_layout, to_drake
from bridge.backends.drake.model import WORLD_H_BASE, instance_name
from bridge.derivatives.chain import retract
from tests.helpers import assert_close, random_state, small_model

RTOL = 1e-10


def _quat_mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton product of two quaternions (w first)."""
    return np.concatenate(
        [[a[0] * b[0] - a[1:] @ b[1:]], a[0] * b[1:] + b[0] * a[1:] + np.cross(a[1:], b[1:])]
    )


class _DrakeAD:
    """Drake's dynamics on ``plant.ToAutoDiffXd()`` at one MIXED state, derivatives by AutoDiff."""

    def __init__(self, model: bridge.Model, state: bridge.State) -> None:
        from pydrake.autodiffutils import AutoDiffXd, InitializeAutoDiff
        from pydrake.math import RigidTransform_
        from pydrake.multibody.math import SpatialForce_
        from pydrake.multibody.tree import MultibodyForces_

        self._init = InitializeAutoDiff
        self._SpatialForce = SpatialForce_[AutoDiffXd]
        self._Forces = MultibodyForces_[AutoDiffXd]
        self.model = model
        plant = to_drake(model)
        self.plant = ad = plant.ToAutoDiffXd()
        self.context = ctx = ad.CreateDefaultContext()
        lay = drake_layout(model, plant)
        nv, n = model.nv, model.n_dofs
        self.nv, self.nb = nv, nv - n
        state = state.to("mixed")
        H = state.world_H_base.matrix
        # Drake's v = nu[...] permuted: v[vidx] = nu, and tau_W = tau_D[vidx]
        self.vidx = np.concatenate([[3, 4, 5, 0, 1, 2], lay.idx_v]) if self.nb else lay.idx_v.copy()
        self.nu = np.concatenate([state.base_velocity, state.s_dot]) if self.nb else state.s_dot.copy()
        q0 = np.zeros(lay.nq)
        q0[lay.idx_q] = state.s
        Gq = np.zeros((lay.nq, nv))  # dq / d delta along retract's MIXED tangent
        Gq[lay.idx_q, self.nb + np.arange(n)] = 1.0
        if self.nb:
            quat = state.world_H_base.as_quaternion_wxyz()
            q0[:4], q0[4:7] = quat, H[:3, 3]
            Gq[4:7, :3] = np.eye(3)
            for k in range(3):  # exp(d_theta^) R: the quaternion exp(d_theta / 2) times quat
                Gq[:4, 3 + k] = 0.5 * _quat_mul(np.eye(4)[1 + k], quat)
        else:  # the fixed base's pose is a Context parameter (no derivative)
            weld = ad.GetFrameByName(WORLD_H_BASE, ad.world_body().model_instance())
            weld.SetPoseInParentFrame(
                ctx, RigidTransform_[AutoDiffXd](self._const(H.reshape(-1)).reshape(4, 4))
            )
        self.q0, self.Gq, self.H, self.s = q0, Gq, H, state.s
        self.instance = ad.GetModelInstanceByName(instance_name(model))

    def _const(self, x: np.ndarray) -> np.ndarray:
        """AutoDiff scalars (k,) of a float vector with zero derivatives (3 nv of them)."""
        return self._init(x, np.zeros((x.shape[0], 3 * self.nv)))[:, 0]

    def _seeded(self, value: np.ndarray, block: int) -> np.ndarray:
        """Drake's (v-ordered) AutoDiff vector of a W-ordered value, seeded on block ``block``."""
        nv = self.nv
        G = np.zeros((nv, 3 * nv))
        G[self.vidx, block * nv + np.arange(nv)] = 1.0
        x = np.zeros(nv)
        x[self.vidx] = value
        return self._init(x, G)[:, 0]

    def _set(self) -> None:
        nv = self.nv
        G = np.zeros((self.q0.shape[0], 3 * nv))
        G[:, :nv] = self.Gq
        self.plant.SetPositions(self.context, self._init(self.q0, G)[:, 0])
        self.plant.SetVelocities(self.context, self._seeded(self.nu, 1))

    def _split(self, y: np.ndarray) -> tuple[np.ndarray, ...]:
        from pydrake.autodiffutils import ExtractGradient, ExtractValue

        G = ExtractGradient(y[self.vidx])
        nv = self.nv
        return ExtractValue(y[self.vidx])[:, 0], G[:, :nv], G[:, nv : 2 * nv], G[:, 2 * nv :]

    def inverse_dynamics(self, nu_dot: np.ndarray, wrenches: dict | None = None) -> tuple[np.ndarray, ...]:
        """``(tau, dtau_dq, dtau_dnu, dtau_dnudot)`` in MIXED; wrenches {frame: (6,)} in F[A]."""
        ad, ctx = self.plant, self.context
        self._set()
        forces = self._Forces(ad)
        world = ad.world_frame()
        for name, w in (wrenches or {}).items():  # at F's origin, world axes (held fixed in F[A])
            frame = ad.GetFrameByName(name, self.instance)
            body = frame.body()
            p = (
                ad.CalcRelativeTransform(ctx, world, frame).translation()
                - body.EvalPoseInWorld(ctx).translation()
            )
            F = self._SpatialForce(self._const(w[3:]), self._const(w[:3]))
            body.AddInForce(ctx, p, F, world, forces)
        tau = ad.CalcInverseDynamics(ctx, self._seeded(nu_dot, 2), forces) - ad.CalcGravityGeneralizedForces(
            ctx
        )
        return self._split(tau)

    def forward_dynamics(self, tau: np.ndarray) -> tuple[np.ndarray, ...]:
        """``(nu_dot, dnudot_dq, dnudot_dnu, dnudot_dtau)`` in MIXED (the plant's own forward
        dynamics: its generalized acceleration output for the applied generalized force)."""
        ad, ctx = self.plant, self.context
        self._set()
        ad.get_applied_generalized_force_input_port().FixValue(ctx, self._seeded(tau, 2))
        return self._split(ad.get_generalized_acceleration_output_port().Eval(ctx))


def _check(model: bridge.Model, seed: int, wrench_frames: tuple[str, ...] = ()) -> None:
    rng = np.random.default_rng(seed)
    st = random_state(model, rng, "mixed")
    nv, nb = model.nv, model.nv - model.n_dofs
    ref = _DrakeAD(model, st)
    kd = bridge.KinDyn(model, "pinocchio", "mixed")
    kd.set_robot_state(st)
    a = rng.normal(size=nv)
    tau_full = rng.normal(size=nv)
    wrenches = {name: rng.normal(size=6) for name in wrench_frames}
    base_a = a[:6] if nb else None
    names = ("dq", "dnu", "dnudot")
    for w in ({}, wrenches) if wrenches else ({},):
        tau, *drake = ref.inverse_dynamics(a, w)
        assert_close(tau, kd.inverse_dynamics(base_a, a[nb:], w or None), RTOL, "tau")
        for x, y, name in zip(
            kd.inverse_dynamics_derivatives(base_a, a[nb:], w or None), drake, names, strict=True
        ):
            assert_close(x, y, RTOL, f"ID {name} {model.name} wrenches={bool(w)}")
    nu_dot, *drake = ref.forward_dynamics(tau_full)
    assert_close(nu_dot, kd.forward_dynamics(tau_full), RTOL, "nu_dot")
    for x, y, name in zip(
        kd.forward_dynamics_derivatives(tau_full), drake, ("dq", "dnu", "dtau"), strict=True
    ):
        assert_close(x, y, RTOL, f"FD {name} {model.name}")


def test_seed_is_retract_tangent() -> None:
    """The AutoDiff seeds of q are the derivative of q(retract(state, delta)) in MIXED."""
    rng = np.random.default_rng(0)
    model = small_model(rng)
    st = random_state(model, rng, "mixed")
    ref = _DrakeAD(model, st)
    h = 1e-6
    for k in range(model.nv):
        q = []
        for sign in (1.0, -1.0):
            delta = np.zeros(model.nv)
            delta[k] = sign * h
            H, s = retract(st.world_H_base.matrix, st.s, delta, "mixed")
            qk = np.zeros_like(ref.q0)
            qk[:4] = bridge.Transform(H).as_quaternion_wxyz()
            qk[:4] *= np.sign(qk[:4] @ ref.q0[:4])
            qk[4:7] = H[:3, 3]
            qk[drake_layout(model).idx_q] = s
            q.append(qk)
        assert_close((q[0] - q[1]) / (2 * h), ref.Gq[:, k], 1e-8, f"column {k}")


@pytest.mark.parametrize("floating", [True, False])
def test_small_model(floating: bool) -> None:
    _check(small_model(np.random.default_rng(1), floating), 2, ("tool", "c"))


@pytest.mark.parametrize("seed", range(3))
def test_random_models(seed: int) -> None:
    model = bridge.random_model(6 + 3 * seed, 40 + seed, floating=seed != 1)
    frames = model.frame_names
    _check(model, seed, (frames[-1], frames[len(frames) // 2]))


@pytest.mark.parametrize("floating", [True, False])
def test_icub(floating: bool) -> None:
    from bridge.robots import robot_path

    model = bridge.load_urdf(robot_path("iCubGazeboV2_5"), check_inertia=False, floating=floating)
    _check(model, 7, ("l_sole", "r_hand"))
