"""How large a model each engine takes: budgets the user sets, and checks made before anything is built.

Some libraries grow faster than the model: Pinocchio's ``Data`` takes 64 nv^3 bytes, Drake's plant
set-up time grows with the square of its bodies, MuJoCo's compiler nests bodies only so deep. A
library's record names its size check (``Library.size_check``: ``check(model) -> str | None``, the
reason it refuses the model, read from the bridge model only, without importing the library), and
its engine calls ``refuse_too_large`` first thing, so a model too large is refused at once
with ``bridge.ModelTooLargeError``, naming the limit and the engines that take the model
(those whose size check passes, read from the registry).

Two budgets bound what a library may take for one model, each set by ``set_budget`` or by an
environment variable (read at each check), else its default:

* memory (bytes): ``BRIDGE_MEMORY_BUDGET`` (e.g. ``8e9``, ``8GB``, ``512MB``); default
  ``DEFAULT_MEMORY`` (4 GB), and never more than the memory available;
* set-up time (seconds, predicted from measured growth): ``BRIDGE_SETUP_BUDGET``; default
  ``DEFAULT_SETUP_SECONDS`` (2 s).
"""

from __future__ import annotations

import math
import os
import re

from bridge.errors import InvalidValueError, ModelTooLargeError

__all__ = [
    "DEFAULT_MEMORY",
    "DEFAULT_SETUP_SECONDS",
    "MEMORY_ENV",
    "SETUP_ENV",
    "budget_hint",
    "engines_taking",
    "memory_budget",
    "refuse_too_large",
    "set_budget",
    "setup_budget",
    "too_large_error",
]

#: default memory budget (bytes) of one library's data for one model
DEFAULT_MEMORY = 4_000_000_000
#: default budget (seconds) of one library's predicted set-up time for one model
DEFAULT_SETUP_SECONDS = 2.0
MEMORY_ENV = "BRIDGE_MEMORY_BUDGET"
SETUP_ENV = "BRIDGE_SETUP_BUDGET"

_UNITS = {"": 1.0, "b": 1.0, "kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12}
#: budgets given to set_budget (None: the environment variable, else the default)
_SET: dict[str, float | None] = {"memory": None, "setup": None}


def _positive(value: object, what: str) -> float:
    try:
        x = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        raise InvalidValueError(f"{what}: expected a positive number, got {value!r}") from None
    if isinstance(value, bool) or not (x > 0.0) or math.isnan(x):
        raise InvalidValueError(f"{what}: expected a positive number, got {value!r}")
    return x


def _bytes(text: str, what: str) -> float:
    """``"8e9"``, ``"8GB"``, ``"512 MB"`` -> bytes."""
    match = re.fullmatch(r"\s*([0-9.eE+-]+)\s*([kKmMgGtT]?[bB]?)\s*", text)
    if match is None:
        raise InvalidValueError(f"{what}: expected bytes such as 8e9 or 8GB, got {text!r}")
    return _positive(match.group(1), what) * _UNITS[match.group(2).lower()]


def set_budget(*, memory: object = None, setup_seconds: object = None) -> None:
    """Set the memory budget (bytes, or a text such as ``"8GB"``) and/or the set-up time budget
    (seconds) bridge lets one library take for one model; ``None`` leaves a budget as it is.
    ``set_budget(memory=math.inf)`` lifts the budget (the memory available still bounds it).
    Raises InvalidValueError for a value that is not positive."""
    if memory is not None:
        what = "set_budget: memory"
        _SET["memory"] = _bytes(memory, what) if isinstance(memory, str) else _positive(memory, what)
    if setup_seconds is not None:
        _SET["setup"] = _positive(setup_seconds, "set_budget: setup_seconds")


def reset_budget() -> None:
    """Back to the environment variables and the defaults (for tests)."""
    _SET.update(memory=None, setup=None)


def memory_budget() -> float:
    """The memory budget (bytes): ``set_budget``'s, else ``BRIDGE_MEMORY_BUDGET``'s, else
    ``DEFAULT_MEMORY``."""
    if _SET["memory"] is not None:
        return _SET["memory"]
    env = os.environ.get(MEMORY_ENV)
    return _bytes(env, f"environment variable {MEMORY_ENV}") if env else float(DEFAULT_MEMORY)


def setup_budget() -> float:
    """The set-up time budget (seconds): ``set_budget``'s, else ``BRIDGE_SETUP_BUDGET``'s, else
    ``DEFAULT_SETUP_SECONDS``."""
    if _SET["setup"] is not None:
        return _SET["setup"]
    env = os.environ.get(SETUP_ENV)
    return _positive(env, f"environment variable {SETUP_ENV}") if env else DEFAULT_SETUP_SECONDS


def budget_hint(kind: str) -> str:
    """How to change the ``kind`` ("memory" or "setup") budget, for messages."""
    if kind == "memory":
        return f"bridge.set_budget(memory=...) or the environment variable {MEMORY_ENV} raise it"
    return f"bridge.set_budget(setup_seconds=...) or the environment variable {SETUP_ENV} raise it"


def engines_taking(model: object, exclude: str = "") -> tuple[str, ...]:
    """The installed engines (registry order) whose size check passes for ``model``, but ``exclude``."""
    from bridge.backends import registry

    out = []
    for name in registry.available_engines():
        record = registry.library(name)
        if name == exclude:
            continue
        check = record.load("size_check")
        if check is None or check(model) is None:
            out.append(name)
    return tuple(out)


def too_large_error(engine: str, model: object, reason: str) -> ModelTooLargeError:
    """The ModelTooLargeError of engine ``engine`` refusing ``model`` for ``reason``, naming the
    engines that take the model instead."""
    others = engines_taking(model, exclude=engine)
    use = (
        "; engines that take it: " + ", ".join(f"engine={name!r}" for name in others)
        if others
        else "; no installed engine takes it"
    )
    name = getattr(model, "name", "?")
    return ModelTooLargeError(f"engine {engine!r} refuses model {name!r}: {reason}{use}")


def refuse_too_large(engine: str, model: object) -> None:
    """Raise ``too_large_error`` when engine ``engine``'s size check (its registry record's
    ``size_check``) refuses ``model``. Nothing is built before."""
    from bridge.backends import registry

    check = registry.library(engine).load("size_check")
    reason = None if check is None else check(model)
    if reason is not None:
        raise too_large_error(engine, model, reason)
