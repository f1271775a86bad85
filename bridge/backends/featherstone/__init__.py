"""Featherstone backend: spatial_v2 / RBDL models, states and a batched engine of our own.

Everything in this package is in Featherstone's convention (angular-first 6D vectors, Plücker
transforms ``plux(E, r)`` mapping motion coordinates from A to B, spatial inertias angular first);
the converters to and from the neutral form of bridge (linear first) live in :mod:`.model` and
:mod:`.state`. The algorithms are implemented from the mathematics of Featherstone's book (RNEA,
CRBA, ABA, floating-base variants), vectorised over leading batch axes: the spatial_v2-style API
(:mod:`.spatial_v2`, :mod:`.kinematics`) over batch-last kernels (:mod:`.kernels`) on a compiled
tree (:mod:`.tree`), one batch's joint data (:mod:`.joints`) and reusable work arrays
(:mod:`.workspace`).

* :func:`to_featherstone` / :func:`from_featherstone`: neutral Model <-> :class:`FeatherstoneModel`
  (spatial_v2 fields NB, parent, jtype, Xtree, I, gravity plus bridge metadata);
  :func:`save_mat` / :func:`load_mat` (:mod:`.mat`): MATLAB files spatial_v2 can use directly.
* :func:`to_featherstone_state` / :func:`from_featherstone_state`: neutral State <-> ``(xfb, q, qd)``.
* :func:`ID`, :func:`HandC`, :func:`FDab`, :func:`FDcrb`, :func:`IDfb`, :func:`FDfb` and the
  kinematics functions (:mod:`.spatial_v2`, :mod:`.kinematics`).
* :class:`~bridge.backends.featherstone.engine.FeatherstoneEngine`: the ``"featherstone"`` engine of
  :class:`bridge.KinDyn`.
"""

from __future__ import annotations

from bridge.backends.featherstone.kinematics import body_acceleration, body_jacobian, body_pose, body_velocity
from bridge.backends.featherstone.mat import load_mat, save_mat
from bridge.backends.featherstone.model import (
    FeatherstoneModel,
    floatbase,
    from_featherstone,
    to_featherstone,
)
from bridge.backends.featherstone.spatial_v2 import (
    CRBA,
    ID,
    FDab,
    FDcrb,
    FDfb,
    HandC,
    HandCfree,
    IDfb,
    IDfree,
    rq,
    rqd,
)
from bridge.backends.featherstone.state import (
    featherstone_velocity_transform,
    from_featherstone_acceleration,
    from_featherstone_force,
    from_featherstone_state,
    to_featherstone_acceleration,
    to_featherstone_force,
    to_featherstone_state,
)

__all__ = [
    "CRBA",
    "ID",
    "FDab",
    "FDcrb",
    "FDfb",
    "FeatherstoneModel",
    "HandC",
    "HandCfree",
    "IDfb",
    "IDfree",
    "body_acceleration",
    "body_jacobian",
    "body_pose",
    "body_velocity",
    "featherstone_velocity_transform",
    "floatbase",
    "from_featherstone",
    "from_featherstone_acceleration",
    "from_featherstone_force",
    "from_featherstone_state",
    "load_mat",
    "rq",
    "rqd",
    "save_mat",
    "to_featherstone",
    "to_featherstone_acceleration",
    "to_featherstone_force",
    "to_featherstone_state",
]
