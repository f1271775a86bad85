"""Newton's body accelerations: its Featherstone forward pass (``eval_rigid_id``) with given joint
accelerations.

Newton's public API gives no body accelerations for its Featherstone solver (its ``BODY_QDD``
observable is not among ``SolverFeatherstone.SUPPORTED_OBSERVABLES`` in newton 1.8). The solver's
recursive Newton-Euler forward pass computes them: ``body_a_s``, each body's spatial acceleration
(``J nu_dot + J_dot nu``, the time derivative of its spatial velocity) in world axes about the
articulation's solve origin (the root COM for a floating base, the world origin for a fixed one,
``body_solve_origin``), linear first. This module runs that kernel (and Newton's own
public-to-internal velocity map) and returns the accelerations about the world origin: bridge's
INERTIAL representation of every link.

The kernel takes the joint accelerations in the solver's internal coordinates: a free joint's are
the spatial velocity at its anchor (the world origin, ``to_newton`` adds it with an identity
parent transform) in world axes, i.e. the base velocity declared as :data:`NEWTON_INTERNAL`; the
other joints' are Newton's public ones, depth first. Callers derive them from the declaration
(:func:`bridge.conventions.convert.velocity_change`), never by hand.

Newton's kernels live in ``newton._src`` (not its public API, which has no body accelerations): they
are used only with the Newton versions they were checked with (:data:`CHECKED_VERSIONS`, by
tests/backends/test_newton.py against the float64 engines); with any other version, or when the
kernels are not where they were, frame accelerations raise a :class:`~bridge.errors.BackendError`
naming the installed version (every other Newton quantity uses the public API and still works).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bridge.backends.newton.state import NEWTON, newton_dof_permutation
from bridge.conventions.change_of_variables import Convention
from bridge.conventions.declaration import Axes, BaseVelocity, Point
from bridge.errors import BackendError

__all__ = ["CHECKED_VERSIONS", "NEWTON_INTERNAL", "body_accelerations", "internal_kernels"]

#: the Newton releases (major, minor) whose internal Featherstone kernels this module was checked
#: against; with another one, frame accelerations refuse (:func:`internal_kernels`)
CHECKED_VERSIONS = ((1, 8),)

#: the joint coordinates of Newton's Featherstone pass: a free joint's velocity is the spatial
#: velocity at the world origin in world axes (bridge's INERTIAL base velocity), joints depth first
NEWTON_INTERNAL = Convention(
    "newton-internal",
    BaseVelocity(Point.WORLD_ORIGIN, Axes.WORLD, Axes.WORLD),
    joint_order=newton_dof_permutation,
    configuration=NEWTON.configuration,
)


def internal_kernels(version: str | None = None) -> tuple:
    """Newton's internal kernels of its Featherstone pass (the body COM poses, the spatial inertias,
    the public-to-internal velocity map, the forward pass), for a Newton release in
    :data:`CHECKED_VERSIONS` (``version``: the installed ``newton.__version__`` when None).

    Raises:
        BackendError: another Newton release, or the kernels not where the checked ones were (the
            message names the installed version; Newton's public API has no body accelerations).
    """
    import newton

    version = newton.__version__ if version is None else version
    refusal = BackendError(
        f"frame accelerations with Newton {version}: Newton's public API gives no body accelerations, "
        "and bridge reads them from Newton's internal Featherstone kernels only in the releases they "
        f"were checked with ({', '.join(f'{a}.{b}' for a, b in CHECKED_VERSIONS)}); use another engine "
        "for frame accelerations, or one of those releases"
    )
    try:
        release = tuple(int(part) for part in version.split(".")[:2])
    except ValueError:
        raise refusal from None
    if release not in CHECKED_VERSIONS:
        raise refusal
    try:
        from newton._src.sim.inverse_dynamics import _compute_body_q_com_kernel
        from newton._src.solvers.featherstone.kernels import (
            compute_spatial_inertia,
            convert_free_distance_joint_qd_public_to_internal,
            eval_rigid_id,
        )
    except ImportError:
        raise refusal from None
    return (
        _compute_body_q_com_kernel,
        compute_spatial_inertia,
        convert_free_distance_joint_qd_public_to_internal,
        eval_rigid_id,
    )


def body_accelerations(wp: Any, nm: Any, state: Any, qdd_internal: np.ndarray) -> np.ndarray:
    """(n_bodies, 6): every body's spatial acceleration about the world origin in world axes (INERTIAL,
    linear first; float64 copy of Newton's float32) at Newton's ``state`` (``joint_q``, public
    ``joint_qd`` and ``body_q`` from ``eval_fk``) for the internal joint accelerations
    ``qdd_internal`` (nv,) (:data:`NEWTON_INTERNAL`)."""
    (
        _compute_body_q_com_kernel,
        compute_spatial_inertia,
        convert_free_distance_joint_qd_public_to_internal,
        eval_rigid_id,
    ) = internal_kernels()
    nb, nv = nm.body_count, nm.joint_dof_count
    I_m = wp.empty(nb, dtype=wp.spatial_matrix)
    wp.launch(compute_spatial_inertia, dim=nb, inputs=[nm.body_inertia, nm.body_mass], outputs=[I_m])
    q_com = wp.empty(nb, dtype=wp.transform)
    wp.launch(_compute_body_q_com_kernel, dim=nb, inputs=[state.body_q, nm.body_com], outputs=[q_com])
    qd = wp.empty(nv, dtype=wp.float32)
    wp.launch(
        convert_free_distance_joint_qd_public_to_internal,
        dim=nm.joint_count,
        inputs=[
            nm.joint_type,
            nm.joint_parent,
            nm.joint_child,
            nm.joint_qd_start,
            nm.joint_X_p,
            state.body_q,
            nm.body_com,
            state.joint_qd,
        ],
        outputs=[qd],
    )
    qdd = wp.array(np.asarray(qdd_internal, dtype=np.float32))
    v_fk, a_s = wp.empty(nb, dtype=wp.spatial_vector), wp.empty(nb, dtype=wp.spatial_vector)
    origin = wp.zeros(nb, dtype=wp.vec3)
    scratch = [
        wp.empty(nv, dtype=wp.spatial_vector),
        wp.empty(nb, dtype=wp.spatial_matrix),
        wp.empty(nb, dtype=wp.spatial_vector),
        wp.empty(nb, dtype=wp.spatial_vector),
    ]
    wp.launch(
        eval_rigid_id,
        dim=nm.articulation_count,
        inputs=[
            None,
            nm.articulation_start,
            nm.articulation_end,
            nm.joint_type,
            nm.joint_parent,
            nm.joint_child,
            nm.joint_q_start,
            nm.joint_qd_start,
            state.joint_q,
            qd,
            qdd,
            nm.joint_axis,
            nm.joint_dof_dim,
            I_m,
            state.body_q,
            q_com,
            nm.joint_X_p,
            nm.body_world,
            wp.zeros(nm.world_count + 1, dtype=wp.vec3),
        ],
        outputs=[v_fk, scratch[0], origin, scratch[1], scratch[2], scratch[3], a_s],
    )
    # about the solve origin o (world axes): a motion at o moved to the world origin, (a + o x w, w)
    # (unchecked: an overflowing state's non-finite values reach KinDyn's checks, which name them)
    a, o = a_s.numpy().astype(float), origin.numpy().astype(float)
    with np.errstate(all="ignore"):
        a[:, :3] += np.cross(o, a[:, 3:])
    return a
