"""Models shared by the tests of bridge.dynamics: one object each for the whole run (engines compile
per model object: jaxsim for tens of seconds)."""

from __future__ import annotations

import dataclasses

import numpy as np

from bridge.model.model import JointKind
from tests.helpers import small_model

#: floating -> the small tree of tests.helpers.small_model (every joint kind, a frame "tool")
MODELS = {floating: small_model(np.random.default_rng(0), floating) for floating in (True, False)}


def _one_coordinate(model):
    """``model`` with its continuous joint revolute: every joint one coordinate, as the compiled
    single-state paths need (Pinocchio writes a continuous joint as cos and sin)."""
    joints = tuple(
        dataclasses.replace(j, kind=JointKind.REVOLUTE) if j.kind is JointKind.CONTINUOUS else j
        for j in model.joints
    )
    return model.replace(joints=joints)


#: the floating small tree, every joint one coordinate (the engines' compiled single-state paths)
ONE_COORDINATE = _one_coordinate(MODELS[True])
