"""Layouts: each entry of a convention's q means what the layout says, on models with every joint kind,
and the column names are the documented scheme."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bridge
from bridge.conventions.native_state import to_native_state
from bridge.conventions.registry import convention
from bridge.datasets.layout import BASE, layout
from bridge.errors import BridgeError, DatasetError
from bridge.model.joints import quaternion_wxyz_to_rotation
from bridge.validation.sampling import random_states
from tests.datasets.helpers import LIBRARIES, NEUTRAL
from tests.helpers import wide_model


def _check_entries(model: bridge.Model, conv: str) -> None:
    """Every entry of ``to_native_state``'s q equals the neutral coordinate the layout names."""
    rng = np.random.default_rng(3)
    state = random_states(model, 5, rng)
    try:
        lay = layout(model, conv)
        q, v = to_native_state(model, state, convention(conv))
    except BridgeError:
        return  # a convention that refuses the model refuses it by name (tested below)
    assert lay.nq == q.shape[-1] and lay.nv == v.shape[-1]
    coords = model.coordinates
    for at, owner in enumerate(lay.owners):
        entries = q[:, lay.q_offsets[at] : lay.q_offsets[at + 1]]
        if owner.dof is None:
            H = state.world_H_base.matrix
            R, p = H[:, :3, :3], H[:, :3, 3]
        else:
            s = state.s[:, coords.q_slice(owner.dof)]
            kind = owner.kind.value
            if kind == "free":
                R, p = quaternion_wxyz_to_rotation(s[:, 3:7]), s[:, :3]
            elif kind == "ball":
                R, p = quaternion_wxyz_to_rotation(s), None
            elif kind == "planar":
                values = {
                    "px": s[:, 0],
                    "py": s[:, 1],
                    "angle": s[:, 2],
                    "cos": np.cos(s[:, 2]),
                    "sin": np.sin(s[:, 2]),
                }
                for k, m in enumerate(owner.q):
                    np.testing.assert_allclose(entries[:, k], values[m], atol=1e-12)
                continue
            else:
                x = s[:, 0]
                values = {"value": x, "angle": x, "cos": np.cos(x), "sin": np.sin(x)}
                for k, m in enumerate(owner.q):
                    np.testing.assert_allclose(entries[:, k], values[m], atol=1e-12)
                continue
        named = dict(zip(owner.q, entries.T, strict=True))
        if p is not None:
            np.testing.assert_allclose(np.stack([named[m] for m in ("px", "py", "pz")], -1), p, atol=1e-12)
        if "qw" in named:
            quat = np.stack([named[m] for m in ("qw", "qx", "qy", "qz")], -1)
            np.testing.assert_allclose(quaternion_wxyz_to_rotation(quat), R, atol=1e-12)


@pytest.mark.parametrize("conv", [*LIBRARIES, *NEUTRAL])
def test_entries_mean_what_the_layout_says_on_a_humanoid(conv: str) -> None:
    _check_entries(bridge.load_urdf("iCubGazeboV2_5"), conv)


@settings(max_examples=12)
@given(seed=st.integers(0, 10_000), conv=st.sampled_from([*LIBRARIES, *NEUTRAL]), floating=st.booleans())
def test_entries_mean_what_the_layout_says_on_random_models(seed: int, conv: str, floating: bool) -> None:
    _check_entries(wide_model(seed, floating=floating), conv)


@pytest.mark.parametrize("conv", [*LIBRARIES, *NEUTRAL])
def test_column_names_follow_the_scheme(conv: str) -> None:
    model = bridge.load_urdf("solo12")
    lay = layout(model, conv)
    q, v = lay.columns("q"), lay.columns("v")
    assert q[:7] == tuple(f"{BASE}/q{k}" for k in range(7))
    assert v[:6] == tuple(f"{BASE}/v{k}" for k in range(6))
    assert len(set(q)) == len(q) == lay.nq and len(set(v)) == len(v) == lay.nv
    joints = [name.rpartition("/")[0] for name in q[7:]]
    perm = convention(conv).permutation(model)
    order = list(model.dof_names) if perm is None else [model.dof_names[i] for i in perm]
    assert joints == order
    assert lay.columns("tau")[6] == f"{order[0]}/tau0" and lay.columns("a")[0] == f"{BASE}/a0"


def test_a_free_and_a_ball_joint_have_their_widths() -> None:
    model = bridge.random_model(6, seed=2, joint_kinds=("ball", "free", "planar"), floating=False)
    lay = layout(model, "mujoco")
    for owner in lay.owners:
        assert len(owner.columns("q")) == {"ball": 4, "free": 7, "planar": 3}[owner.kind.value]
        assert len(owner.columns("v")) == {"ball": 3, "free": 6, "planar": 3}[owner.kind.value]
    assert layout(model, "pinocchio").nq == lay.nq + sum(o.kind.value == "planar" for o in lay.owners)


def test_a_joint_named_base_is_refused_by_name() -> None:
    import dataclasses

    from bridge.model.model import Model

    model = bridge.load_urdf("solo12")
    joints = tuple(
        dataclasses.replace(j, name="base") if j.name == model.dof_names[0] else j for j in model.joints
    )
    dofs = tuple("base" if d == model.dof_names[0] else d for d in model.dof_names)
    clash = Model(model.name, model.links, joints, model.frames, model.base, dofs, True)
    with pytest.raises(DatasetError, match="a joint is named 'base'"):
        layout(clash, "mujoco")
