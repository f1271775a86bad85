"""jaxsim's functions compiled once per model and representation, batched over states.

Each entry of :class:`Compiled` is one ``jax.jit(jax.vmap(...))`` of a bundle of jaxsim calls on a
``JaxSimModelData`` built from the state arrays ``(W_p_B (3,), quaternion wxyz (4,), s (n,),
base velocity (6,), s_dot (n,))`` in jaxsim's layout (:mod:`.state`): few bundles keep the
compilation time down (it is paid once per model, representation and batch size), and an engine
evaluates a bundle once per state.

* ``dynamics``: ``free_floating_mass_matrix``, ``free_floating_bias_forces``,
  ``free_floating_gravity_forces``;
* ``com``: ``com.com_position``, the centre-of-mass velocity and ``average_centroidal_velocity_jacobian``
  (rows in G[A], or G[B] in BODY), ``com.centroidal_momentum`` and ``centroidal_momentum_jacobian``
  (G[A], or G[B] in BODY), ``model.total_momentum`` and ``total_momentum_jacobian`` (B / A / B[A]);
* ``link`` and ``frame`` (an index argument): the transform, velocity, Jacobian and Jacobian
  derivative of one link (``jaxsim.api.link``) or frame (``jaxsim.api.frame``) in the representation;
* ``poses``: every link's pose (``model.forward_kinematics``), to place external wrenches;
* ``inverse`` (base and joint accelerations (6 + n,), link forces (nL, 6)): ``model.inverse_dynamics``;
* ``forward`` (joint forces (n,), link forces (nL, 6)): ``model.forward_dynamics_aba``.

The bundles are cached per bridge model (weakly) and representation: engines on the same model
share them.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable

from bridge.conventions.state import Representation

from bridge.model.model import Model

from .model import to_jaxsim
from .state import VELREPR

__all__ = ["Compiled", "compiled"]

_CACHE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

#: XLA's options for the bundles: LLVM's backend optimisation off halves the compilation time (7 s
#: -> 4 s for the mass matrix of an 8-link tree, measured on a loaded machine) and leaves the run
#: time of these small kernels as it was (0.3-0.4 ms either way)
COMPILER_OPTIONS = {"xla_backend_optimization_level": 0, "xla_llvm_disable_expensive_passes": True}


def _bundles() -> dict[str, tuple[Callable, tuple]]:
    """name -> (``fn(model, data, *extra) -> tuple of arrays``, vmap axes of the extra arguments)."""
    import dataclasses

    import jax.numpy as jnp
    import jaxsim.api as js
    from jaxsim import VelRepr

    def dynamics(m, d):
        return (
            js.model.free_floating_mass_matrix(m, d),
            js.model.free_floating_bias_forces(m, d),
            js.model.free_floating_gravity_forces(m, d),
        )

    def com(m, d):
        mixed = dataclasses.replace(d, velocity_representation=VelRepr.Mixed)
        return (
            js.com.com_position(m, d),
            js.com.com_linear_velocity(m, mixed),
            js.com.average_centroidal_velocity_jacobian(m, d),
            js.com.centroidal_momentum(m, d),
            js.com.centroidal_momentum_jacobian(m, d),
            js.model.total_momentum(m, d),
            js.model.total_momentum_jacobian(m, d),
        )

    def link(m, d, i):
        J_dot = js.link.jacobian_derivative(m, d, link_index=i)
        return (
            js.link.transform(m, d, link_index=i),
            js.link.velocity(m, d, link_index=i),
            js.link.jacobian(m, d, link_index=i),
            J_dot @ d.generalized_velocity,
            J_dot,
        )

    def frame(m, d, i):
        J_dot = js.frame.jacobian_derivative(m, d, frame_index=i)
        return (
            js.frame.transform(m, d, frame_index=i),
            js.frame.velocity(m, d, frame_index=i),
            js.frame.jacobian(m, d, frame_index=i),
            J_dot @ d.generalized_velocity,
            J_dot,
        )

    def poses(m, d):
        return (js.model.forward_kinematics(m, d),)

    def inverse(m, d, nu_dot, f_L):
        f_B, tau = js.model.inverse_dynamics(
            m, d, base_acceleration=nu_dot[:6], joint_accelerations=nu_dot[6:], link_forces=f_L
        )
        return (jnp.concatenate([f_B, tau]),)

    def forward(m, d, tau, f_L):
        a_B, s_ddot = js.model.forward_dynamics_aba(m, d, joint_forces=tau, link_forces=f_L)
        return (jnp.concatenate([a_B, s_ddot]),)

    return {
        "dynamics": (dynamics, ()),
        "com": (com, ()),
        "link": (link, (None,)),
        "frame": (frame, (None,)),
        "poses": (poses, ()),
        "inverse": (inverse, (0, 0)),
        "forward": (forward, (0, 0)),
    }


class Compiled:
    """The compiled bundles of one jaxsim model in one representation (see the module docstring):
    ``compiled(name)(p, quat, s, v, s_dot, *extra)`` with the state arrays batched (k, ...) gives
    the bundle's arrays batched (k, ...); compiled on first use."""

    def __init__(self, js_model: object, representation: Representation) -> None:
        from jaxsim import VelRepr

        self.model = js_model
        self.velrepr = getattr(VelRepr, VELREPR[representation])
        self._fns: dict[str, Callable] = {}

    def __call__(self, name: str) -> Callable:
        fn = self._fns.get(name)
        if fn is None:
            fn = self._fns[name] = self._compile(name)
        return fn

    def _compile(self, name: str) -> Callable:
        import jax
        from jaxsim.api.data import JaxSimModelData

        bundle, extra_axes = _bundles()[name]
        m, velrepr = self.model, self.velrepr

        def one(p, quat, s, v, s_dot, *extra):
            d = JaxSimModelData.build(
                model=m,
                base_position=p,
                base_quaternion=quat,
                joint_positions=s,
                base_linear_velocity=v[:3],
                base_angular_velocity=v[3:],
                joint_velocities=s_dot,
                velocity_representation=velrepr,
            )
            return bundle(m, d, *extra)

        return jax.jit(jax.vmap(one, in_axes=(0, 0, 0, 0, 0, *extra_axes)), compiler_options=COMPILER_OPTIONS)


def compiled(model: Model, representation: Representation) -> Compiled:
    """The :class:`Compiled` bundles of jaxsim's model of ``model`` (:func:`.model.to_jaxsim`) in
    ``representation`` (shared by the engines on ``model``, cached weakly per model)."""
    per_model = _CACHE.get(model)
    if per_model is None:
        per_model = _CACHE[model] = {}
    out = per_model.get(representation)
    if out is None:
        out = per_model[representation] = Compiled(to_jaxsim(model), representation)
    return out
