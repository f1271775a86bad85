"""Each registered convention's declared base velocity against its direct numerical definition.

A :class:`~bridge.conventions.declaration.BaseVelocity` says which point's velocity the linear half
is, in which axes each half is written and which half comes first. Here that sentence is evaluated
by finite differences of the pose along the motion (no base map involved) and compared with the
declared map ``L v_B`` and with ``convert_velocity``; the convention's ``representation`` property
names the neutral representation measuring the same velocity (None when none does).
"""

from __future__ import annotations

import pytest

import bridge
import bridge.backends.registry
from bridge.conventions.convert import convention_names
from tests.conventions import axioms


@pytest.mark.parametrize("name", convention_names())
def test_declared_base_velocity_is_its_definition(name: str) -> None:
    axioms.resolved(name)
    model = bridge.random_model(5, seed=3)
    for state in axioms.states(model, seed=9):
        axioms.check_declared_frame(model, state, name)
