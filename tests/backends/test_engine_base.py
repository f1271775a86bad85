"""Every engine's constructor takes its arguments through one place (``EngineBase.__init__``): a bad
representation or a model that is not a bridge Model is refused with the same clear error by every
registered engine (and by the engines KinDyn makes for coupled and wide-joint models), before the
engine builds anything of its library."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bridge.backends import registry
from bridge.backends.base import EngineBase
from bridge.backends.coupled import CoupledEngine
from bridge.backends.featherstone.general_engine import GeneralEngine
from bridge.conventions.state import Representation
from bridge.errors import InvalidValueError
from bridge.model.random import random_model

MODEL = random_model(3, 0, floating=True)


def _engines() -> list[type]:
    engines = [registry.engine_class(name) for name in registry.available_engines()]
    return [*engines, GeneralEngine]


def _parse_error(value: object) -> str:
    with pytest.raises(InvalidValueError) as info:
        Representation.parse(value)
    return str(info.value)


def _known(value: str) -> bool:
    try:
        Representation.parse(value)
    except InvalidValueError:
        return False
    return True


@pytest.mark.parametrize("engine", _engines(), ids=lambda c: c.__name__)
@settings(max_examples=15, deadline=None)
@given(st.one_of(st.text(max_size=12).filter(lambda t: not _known(t)), st.integers(), st.none()))
def test_every_engine_refuses_a_bad_representation_alike(engine: type, value: object) -> None:
    assert issubclass(engine, EngineBase)
    with pytest.raises(InvalidValueError) as info:
        engine(MODEL, value)
    assert str(info.value) == _parse_error(value)


@pytest.mark.parametrize("engine", _engines(), ids=lambda c: c.__name__)
@pytest.mark.parametrize("model", [None, "robot.urdf", object()], ids=["None", "path", "object"])
def test_every_engine_refuses_what_is_not_a_model(engine: type, model: object) -> None:
    with pytest.raises(InvalidValueError, match=r"expected a bridge Model, got "):
        engine(model, "mixed")


def test_the_coupled_engine_refuses_alike() -> None:
    engine = registry.engine_class("featherstone")
    with pytest.raises(InvalidValueError) as info:
        CoupledEngine(engine, MODEL, "sideways")
    assert str(info.value) == _parse_error("sideways")
    with pytest.raises(InvalidValueError, match="CoupledEngine: expected a bridge Model, got str"):
        CoupledEngine(engine, "model", "mixed")


@pytest.mark.parametrize("engine", [registry.engine_class("featherstone"), GeneralEngine])
@pytest.mark.parametrize("alias", ["BODY_FIXED", "world", Representation.MIXED, "Local_World_Aligned"])
def test_an_engine_parses_every_name_once(engine: type, alias: object) -> None:
    made = engine(MODEL, alias)
    assert made.representation is Representation.parse(alias)
    assert made.model is MODEL and made.batch_shape == () and made._state is None
