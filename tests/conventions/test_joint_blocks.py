"""The blocks of joints of several coordinates in the change of variables, for any declared order of
the halves: ``T`` and ``T_dot`` between two conventions compose through a third (chain rule), with
the base velocity declared angular first (Drake's, Featherstone's order) as well as linear first."""

from __future__ import annotations

import numpy as np
import pytest

import bridge
from bridge.conventions.change_of_variables import NEUTRAL, Convention, change_of_variables
from bridge.conventions.declaration import Axes, BaseVelocity, Point
from bridge.spatial.conventions import Ordering

#: neutral declarations with the angular half first (no library named)
ANGULAR_FIRST = {
    name: Convention(f"{name}-first", BaseVelocity(Point.BASE_ORIGIN, lin, ang, Ordering.ANGULAR_FIRST))
    for name, lin, ang in (
        ("mixed", Axes.WORLD, Axes.WORLD),
        ("body", Axes.BODY, Axes.BODY),
        ("split", Axes.WORLD, Axes.BODY),
    )
}


def _state(model: bridge.Model, rng: np.random.Generator, rep: str) -> bridge.State:
    c = model.coordinates
    s = np.concatenate([k.spec.random(rng) for k in c.kinds])
    vb = rng.normal(size=6) if model.floating else np.zeros(6)
    quat = rng.normal(size=4)
    H = bridge.spatial.Transform.from_quaternion_xyzw(quat / np.linalg.norm(quat), rng.normal(size=3))
    st = bridge.State(H, s, vb, rng.normal(size=c.nv), "mixed", layout=model)
    return st.to(rep)


@pytest.mark.parametrize("kind", ["planar", "ball", "free"])
@pytest.mark.parametrize("target", sorted(ANGULAR_FIRST))
@pytest.mark.parametrize("source", ["body", "inertial", "mixed"])
def test_blocks_compose_for_angular_first_declarations(kind: str, target: str, source: str) -> None:
    """``T_{s->t} = T_{m->t} T_{s->m}`` and ``T_dot_{s->t} = T_dot_{m->t} T_{s->m} + T_{m->t}
    T_dot_{s->m}`` (m: MIXED) for a joint of each wide kind and an angular-first target."""
    rng = np.random.default_rng(7)
    model = bridge.random_model(4, seed=3, joint_kinds=(kind, "revolute"), floating=False)
    assert kind in {k.value for k in model.coordinates.kinds}
    st = _state(model, rng, source)
    mixed = st.to("mixed")
    conv = ANGULAR_FIRST[target]
    direct = change_of_variables(model, st, NEUTRAL[st.representation], conv)
    first = change_of_variables(model, st, NEUTRAL[st.representation], NEUTRAL[mixed.representation])
    second = change_of_variables(model, mixed, NEUTRAL[mixed.representation], conv)
    T, T1, T2 = direct.matrix(), first.matrix(), second.matrix()
    np.testing.assert_allclose(T, T2 @ T1, atol=1e-12)
    Td = direct.derivative()
    np.testing.assert_allclose(Td, second.derivative() @ T1 + T2 @ first.derivative(), atol=1e-12)
