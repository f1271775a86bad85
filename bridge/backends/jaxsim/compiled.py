"""jaxsim's functions compiled once per model and representation, batched over states.

Each entry of :class:`Compiled` is one ``jax.jit(jax.vmap(...))`` of a bundle of jaxsim calls on a
``JaxSimModelData`` built from the state arrays ``(W_p_B (3,), quaternion wxyz (4,), s (n,),
base velocity (6,), s_dot (n,))`` in jaxsim's layout (:mod:`.state`). Compiling takes seconds per
bundle (paid once per model, representation and batch size), running one a fraction of a
millisecond, so there are three, each evaluated once per state:

* ``dynamics``: ``free_floating_mass_matrix``, ``free_floating_bias_forces``,
  ``free_floating_gravity_forces``;
* ``kinematics``: ``com.com_position``, the centre-of-mass velocity and
  ``average_centroidal_velocity_jacobian`` (rows in G[A], or G[B] in BODY),
  ``com.centroidal_momentum`` and ``centroidal_momentum_jacobian`` (G[A], or G[B] in BODY),
  ``model.total_momentum`` and ``total_momentum_jacobian`` (B / A / B[A]), then for every jaxsim
  link (``jaxsim.api.link``) and frame (``jaxsim.api.frame``), stacked in that order, the transform,
  velocity, Jacobian, ``J_dot nu`` and Jacobian derivative in the representation;
* ``solve`` (base and joint accelerations (6 + n,) and link forces (nL, 6) for the inverse dynamics,
  joint forces (n,) and link forces for the forward dynamics): ``model.inverse_dynamics`` and
  ``model.forward_dynamics_aba``.

The bundles are cached per bridge model (weakly) and representation: engines on the same model
share them.
"""

from __future__ import annotations

from collections.abc import Callable

from bridge._cache import per_model
from bridge.conventions.state import Representation
from bridge.model.model import Model

from .model import to_jaxsim
from .state import VELREPR

__all__ = ["Compiled", "compiled"]


#: XLA's options for the bundles: LLVM's backend optimisation off halves the compilation time (7 s
#: -> 4 s for the mass matrix of an 8-link tree, measured on a loaded machine) and leaves the run
#: time of these small kernels as it was (0.3-0.4 ms either way)
COMPILER_OPTIONS = {"xla_backend_optimization_level": 0, "xla_llvm_disable_expensive_passes": True}


def _bundles() -> dict[str, tuple[Callable, tuple]]:
    """name -> (``fn(model, data, *extra) -> tuple of arrays``, vmap axes of the extra arguments)."""
    import dataclasses

    import jax
    import jax.numpy as jnp
    import jaxsim.api as js
    from jaxsim import VelRepr

    def dynamics(m, d):
        return (
            js.model.free_floating_mass_matrix(m, d),
            js.model.free_floating_bias_forces(m, d),
            js.model.free_floating_gravity_forces(m, d),
        )

    def one(api, key):
        """Transform, velocity, Jacobian, J_dot nu, J_dot of one link or frame (``api``: jaxsim's
        ``link`` or ``frame`` module, ``key`` its index argument)."""

        def quantities(m, d, i):
            J_dot = api.jacobian_derivative(m, d, **{key: i})
            return (
                api.transform(m, d, **{key: i}),
                api.velocity(m, d, **{key: i}),
                api.jacobian(m, d, **{key: i}),
                J_dot @ d.generalized_velocity,
                J_dot,
            )

        return quantities

    one_link, one_frame = one(js.link, "link_index"), one(js.frame, "frame_index")

    def kinematics(m, d):
        mixed = dataclasses.replace(d, velocity_representation=VelRepr.Mixed)
        links = jax.vmap(lambda i: one_link(m, d, i))(jnp.arange(m.number_of_links()))
        n_f = len(m.frame_names())
        if n_f:
            frames = jax.vmap(lambda i: one_frame(m, d, i))(m.number_of_links() + jnp.arange(n_f))
        else:
            frames = tuple(jnp.zeros((0, *x.shape[1:])) for x in links)
        return (
            js.com.com_position(m, d),
            js.com.com_linear_velocity(m, mixed),
            js.com.average_centroidal_velocity_jacobian(m, d),
            js.com.centroidal_momentum(m, d),
            js.com.centroidal_momentum_jacobian(m, d),
            js.model.total_momentum(m, d),
            js.model.total_momentum_jacobian(m, d),
            *(jnp.concatenate([a, b]) for a, b in zip(links, frames, strict=True)),
        )

    def solve(m, d, nu_dot, f_id, tau, f_fd):
        f_B, tau_id = js.model.inverse_dynamics(
            m, d, base_acceleration=nu_dot[:6], joint_accelerations=nu_dot[6:], link_forces=f_id
        )
        a_B, s_ddot = js.model.forward_dynamics_aba(m, d, joint_forces=tau, link_forces=f_fd)
        return jnp.concatenate([f_B, tau_id]), jnp.concatenate([a_B, s_ddot])

    return {"dynamics": (dynamics, ()), "kinematics": (kinematics, ()), "solve": (solve, (0, 0, 0, 0))}


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


@per_model
def compiled(model: Model, representation: Representation) -> Compiled:
    """The :class:`Compiled` bundles of jaxsim's model of ``model`` (:func:`.model.to_jaxsim`) in
    ``representation`` (shared by the engines on ``model``, cached weakly per model)."""
    return Compiled(to_jaxsim(model), representation)
