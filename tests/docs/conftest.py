"""Fixtures of the documentation tests (tests/docs/test_conventions.py): iCub loaded by each library
with a closed-form trajectory, random poses, the base pose's finite-difference derivative and the
Featherstone form of iCub. Module-scoped: each test module that uses one builds it once."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from types import SimpleNamespace

import idyntree.bindings as idyn
import numpy as np
import pinocchio as pin
import pytest

import bridge
from bridge.spatial import Transform
from tests.docs._math import fd, random_rotation, rng_pose, traj

ICUB = "iCubGazeboV2_5"


@pytest.fixture(scope="module")
def icub():
    """iCub loaded by Pinocchio, by iDynTree (full, and reduced in Pinocchio's DOF order) and by
    bridge (in Pinocchio's DOF order), plus a hand-built trajectory through a random state.

    Trajectory (MIXED-friendly closed form), for t around 0:
    ``o(t) = o0 + t od + t^2/2 odd``, ``R(t) = expm((t w + t^2/2 al)^) R0``, ``s(t) = s0 + t sd + t^2/2 sdd``.
    At t = 0 the mixed base velocity is (od, w) and its derivative (odd, al).
    """
    import icub_models

    path = str(icub_models.get_model_file(ICUB))
    root = ET.parse(path).getroot()
    pm = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer())
    pin_order = [pm.names[i] for i in range(2, pm.njoints)]
    full = idyn.ModelLoader()
    assert full.loadModelFromFile(path)
    reduced = idyn.ModelLoader()
    assert reduced.loadReducedModelFromFile(path, pin_order)
    kd = idyn.KinDynComputations()
    assert kd.loadRobotModel(reduced.model())
    model = bridge.load_urdf(path, joints=pin_order)
    rng = np.random.default_rng(7)
    n = len(pin_order)
    ns = SimpleNamespace(
        path=path,
        root=root,
        pm=pm,
        pd=pm.createData(),
        pin_order=pin_order,
        loaders=(full, reduced),  # model() is a view into the loader: keep the loaders alive
        full=full.model(),
        reduced=reduced.model(),
        kd=kd,
        model=model,
        n=n,
        R0=random_rotation(rng),
        o0=rng.normal(size=3),
        od=rng.normal(size=3),
        odd=rng.normal(size=3),
        w=rng.normal(size=3),
        al=rng.normal(size=3),
        s0=rng.uniform(-0.6, 0.6, n),
        sd=rng.normal(size=n),
        sdd=rng.normal(size=n),
    )
    return ns


@pytest.fixture(scope="module")
def poses():
    rng = np.random.default_rng(3)
    A_H_B, B_H_C = Transform(rng_pose(rng)), Transform(rng_pose(rng))
    return SimpleNamespace(
        A_H_B=A_H_B, B_H_C=B_H_C, m=rng.normal(size=6), f=rng.normal(size=6), p=rng.normal(size=3)
    )


@pytest.fixture(scope="module")
def fd_pose(icub):
    """The base pose and its derivative along the trajectory (finite differences)."""
    H = traj(icub, 0.0)[0]
    Hd = fd(lambda t: traj(icub, t)[0])
    return H, Hd


@pytest.fixture(scope="module")
def icub_fs():
    import icub_models

    from bridge.backends.featherstone import to_featherstone

    model = bridge.load_urdf(icub_models.get_model_file(ICUB))
    return SimpleNamespace(model=model, fm=to_featherstone(model))
