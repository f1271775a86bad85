"""bridge.dynamics.arguments: KinDyn's accelerations, generalized forces and wrenches, shaped and
checked, for any batch and either base."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bridge
from bridge.dynamics.arguments import accelerations, generalized_force, join_vectors, wrenches_by_frame

MODELS = {f: bridge.random_model(3, 2, floating=f) for f in (True, False)}
batches = st.sampled_from([(), (2,), (3, 1)])


@settings(max_examples=30, deadline=None)
@given(floating=st.booleans(), batch=batches, seed=st.integers(0, 2**16))
def test_accelerations_join_the_base_and_the_joints(floating: bool, batch: tuple, seed: int) -> None:
    model, rng = MODELS[floating], np.random.default_rng(seed)
    n = model.n_dofs
    ba, sdd = rng.normal(size=(*batch, 6)), rng.normal(size=(*batch, n))
    out = accelerations(model, ba if floating else None, sdd, batch or None)
    expected = np.concatenate([ba, sdd], axis=-1) if floating else sdd
    np.testing.assert_array_equal(out, expected)
    if not batch:
        fast = join_vectors(ba, 6, sdd, n)
        np.testing.assert_array_equal(fast, np.concatenate([ba, sdd]))
    with pytest.raises(bridge.ShapeError):
        accelerations(model, ba if floating else None, sdd[..., :-1], None)
    if floating:
        with pytest.raises(bridge.ShapeError, match="base_acc"):
            accelerations(model, None, sdd, None)


@settings(max_examples=30, deadline=None)
@given(floating=st.booleans(), batch=batches, seed=st.integers(0, 2**16))
def test_generalized_force_puts_the_torques_behind_the_base(floating: bool, batch: tuple, seed: int) -> None:
    model, rng = MODELS[floating], np.random.default_rng(seed)
    n, nv = model.n_dofs, model.nv
    t = rng.normal(size=(*batch, n))
    out = generalized_force(t, n, nv)
    np.testing.assert_array_equal(out[..., nv - n :], t)
    np.testing.assert_array_equal(out[..., : nv - n], 0.0)
    full = rng.normal(size=(*batch, nv))
    np.testing.assert_array_equal(generalized_force(full, n, nv), full)


def test_wrenches_are_checked_by_frame() -> None:
    model = MODELS[True]
    frame = model.frame_names[-1]
    assert (
        wrenches_by_frame(None, model.frame, None) is None
        and wrenches_by_frame({}, model.frame, None) is None
    )
    out = wrenches_by_frame({frame: [1, 2, 3, 4, 5, 6]}, lambda f: model.frame(f) and f, (2,))
    np.testing.assert_array_equal(out[frame], np.arange(1.0, 7.0))
    with pytest.raises(bridge.InvalidValueError, match="expected a mapping"):
        wrenches_by_frame([1, 2], model.frame, None)
    with pytest.raises(bridge.ShapeError):
        wrenches_by_frame({frame: np.zeros((3, 6))}, lambda f: f, (2,))
    with pytest.raises(bridge.UnknownNameError):
        wrenches_by_frame({"no_such_frame": np.zeros(6)}, model.frame, None)
