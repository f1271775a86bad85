"""States to and from every registered convention's ``(q, v)`` and every library's own converters.

For each convention that declares a configuration (:func:`bridge.conventions.native_state.to_native_state`
/ ``from_native_state``), and for each registered library record with ``to_state``/``from_state``
(skipped when the library is not installed), a random State goes there and back unchanged, in
every representation, on random floating and fixed-base models.
"""

from __future__ import annotations

import pytest

import bridge
from bridge.backends import registry
from bridge.conventions.convert import convention, convention_names
from bridge.conventions.native_state import to_native_state
from tests.conventions import axioms
from tests.helpers import assert_close

STATE_LIBRARIES = [name for name, rec in registry.LIBRARIES.items() if rec.to_state and rec.from_state]


@pytest.mark.parametrize("name", convention_names())
def test_native_round_trips(model: bridge.Model, small: bridge.Model, name: str) -> None:
    axioms.resolved(name)
    if convention(name).configuration is None:
        pytest.skip(f"convention {name!r} declares no configuration layout")
    for m in (model, small):
        if not axioms.takes(m, name):  # (a library without ball, free or planar joints)
            continue
        for state in axioms.states(m, seed=5):
            axioms.check_native_round_trip(m, state, name)


def check_library_round_trip(model: bridge.Model, state: bridge.State, record: registry.Library) -> None:
    """``from_state(model, *to_state(model, state), rep)`` is the state in every representation (a
    fixed base at the identity pose); a library giving ``(q, v)`` gives its convention's."""
    to_state, from_state = record.load("to_state"), record.load("from_state")
    native = to_state(model, state)
    for rep in axioms.NEUTRAL_NAMES:
        back = from_state(model, *native, rep)
        expected = state.to(rep)
        assert_close(back.s, expected.s, 1e-12, f"{record.name} s ({rep})")
        assert_close(back.s_dot, expected.s_dot, 1e-12, f"{record.name} s_dot ({rep})")
        if model.floating:
            assert_close(back.world_H_base.matrix, expected.world_H_base.matrix, 1e-12, f"{record.name} pose")
            assert_close(back.base_velocity, expected.base_velocity, 1e-12, f"{record.name} v_B ({rep})")
    if len(native) == 2:
        for conv in record.conventions:
            q, v = to_native_state(model, state, convention(conv))
            assert_close(native[0], q, 1e-12, f"{record.name} q vs its convention {conv!r}")
            assert_close(native[1], v, 1e-12, f"{record.name} v vs its convention {conv!r}")


@pytest.mark.parametrize("name", STATE_LIBRARIES)
def test_library_state_round_trips(model: bridge.Model, small: bridge.Model, name: str) -> None:
    record = registry.library(name)
    if not record.installed:
        pytest.skip(f"{name}: {record.requires!r} is not installed")
    for m in (model, small):
        if not axioms.takes(m, name):  # (a library without ball, free or planar joints)
            continue
        for state in axioms.states(m, seed=6, count=1):
            check_library_round_trip(m, state, record)
