"""Conventions by name: the neutral ones, and each library's, registered by its record.

A name resolves to a :class:`~bridge.conventions.change_of_variables.Convention`. The neutral
representations are here from the start; every library's conventions are registered by the library
registry (:mod:`bridge.backends.registry`, imported by ``import bridge``) as lazy entries, so that a
backend and its library are imported only when one of its conventions is first used. A user (or a
test) registers a convention of their own with :func:`register_convention`; from then on every
conversion (``velocity_transform``, ``convert_*``, ``State.to``-style maps) accepts its name.

This module is neutral: it names no library.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING

from bridge.errors import InvalidValueError

if TYPE_CHECKING:  # pragma: no cover
    from bridge.conventions.change_of_variables import Convention

__all__ = ["convention", "convention_names", "register_convention", "unregister_convention"]

#: name -> the Convention, a loader returning it, or "module:attribute" where it is defined
_ENTRIES: dict[str, object] = {}


def register_convention(name: str, convention: object, *, replace: bool = False) -> None:
    """Make ``name`` (case-insensitive) resolve to ``convention``: a Convention, a callable
    returning one, or ``"module:attribute"`` naming one (imported on first use).

    Raises InvalidValueError if the name is taken (unless ``replace``) or is a neutral name.
    """
    key = str(name).strip().lower()
    if not key:
        raise InvalidValueError("register_convention: the name is empty")
    if key in _NEUTRAL_NAMES:
        raise InvalidValueError(f"register_convention: {name!r} is a neutral representation")
    if key in _ENTRIES and not replace:
        raise InvalidValueError(f"register_convention: a convention named {name!r} is registered already")
    _ENTRIES[key] = convention


def unregister_convention(name: str) -> None:
    """Forget the convention registered as ``name`` (KeyError-derived error if unknown)."""
    key = str(name).strip().lower()
    if key in _NEUTRAL_NAMES or key not in _ENTRIES:
        raise InvalidValueError(f"unregister_convention: no registered convention named {name!r}")
    del _ENTRIES[key]


def convention_names() -> tuple[str, ...]:
    """Every name :func:`convention` resolves: the neutral representations, then the registered ones."""
    return (*_NEUTRAL_NAMES, *(k for k in _ENTRIES if k not in _NEUTRAL_NAMES))


def convention(value: object) -> Convention:
    """The :class:`Convention` named by ``value``: a Convention, a :class:`Representation`, a
    representation alias ("local", "world", "MIXED_REPRESENTATION", ...) or a registered name
    ("pinocchio", "featherstone", "mujoco", "drake", ...)."""
    from bridge.conventions.change_of_variables import NEUTRAL, Convention
    from bridge.conventions.state import Representation

    if isinstance(value, Convention):
        return value
    key = str(getattr(value, "value", value)).strip().lower()
    entry = _ENTRIES.get(key)
    if entry is None:
        try:
            return NEUTRAL[Representation.parse(value)]
        except InvalidValueError:
            raise InvalidValueError(
                f"unknown velocity convention {value!r}; use one of {', '.join(convention_names())}"
            ) from None
    if not isinstance(entry, Convention):
        entry = _load(entry)
        if not isinstance(entry, Convention):
            raise InvalidValueError(f"convention {key!r} is registered as {entry!r}, not a Convention")
        _ENTRIES[key] = entry
    return entry


def _load(entry: object) -> object:
    if isinstance(entry, str):
        module, _, attr = entry.partition(":")
        return getattr(importlib.import_module(module), attr)
    if isinstance(entry, Callable):
        return entry()
    return entry


_NEUTRAL_NAMES = ("body", "inertial", "mixed")
