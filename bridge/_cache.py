"""The one idiom for values computed once per model: :class:`ModelCache`.

The rule (docs/architecture.md): a value derived from a model (or from another long-lived object
made from one: a compiled tree, a library model, an engine) and kept while that object lives is
kept in a :class:`ModelCache`: held weakly by the object (gone with it), then keyed by whatever
else it depends on. ``per_model`` makes a function ``f(model, *args)`` one; ``cache.of(model)`` is
the dict a function that keys or fills its values itself reads and writes. A pure function of
small hashable arguments (no model) takes ``functools.lru_cache``. Nothing else is cached at module
level (a pool of objects that hold their model, such as the stateless functions' KinDyns, is a
bounded pool, not a cache: weak keys would never drop).
"""

from __future__ import annotations

import functools
import threading
import weakref
from collections.abc import Callable
from typing import Any

__all__ = ["ModelCache", "per_model"]

_MISSING = object()


class ModelCache:
    """Values kept per model, the model held weakly.

    ``ModelCache()``: ``of(model)`` is the model's dict (made on first use; a fresh dict, kept
    nowhere, for an object that cannot be weakly referenced or hashed). ``ModelCache(fn)`` (or
    ``@per_model``): calling it with ``(model, *args)`` returns ``fn(model, *args)``, computed once
    per model and ``args`` (hashable). Two threads may compute one value at once; both get the
    first one stored. An exception is not cached.
    """

    def __init__(self, fn: Callable[..., Any] | None = None) -> None:
        self._values: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()
        self._fn = fn
        if fn is not None:
            functools.update_wrapper(self, fn)

    def of(self, owner: object) -> dict:
        """The dict of values kept for ``owner`` (while it lives)."""
        values = self._values
        try:
            per = values.get(owner)
            if per is None:
                with self._lock:
                    per = values.setdefault(owner, {})
        except TypeError:  # not weakly referenceable or not hashable: nothing is kept
            return {}
        return per

    def __call__(self, owner: object, *args: Any) -> Any:
        per = self.of(owner)
        value = per.get(args, _MISSING)
        if value is _MISSING:
            value = per.setdefault(args, self._fn(owner, *args))  # type: ignore[misc]
        return value

    def __len__(self) -> int:
        """How many models have values kept."""
        return len(self._values)

    def clear(self) -> None:
        """Forget every value (for tests)."""
        self._values.clear()


def per_model(fn: Callable[..., Any]) -> ModelCache:
    """``fn(model, *args)`` computed once per model and ``args``, kept while the model lives."""
    return ModelCache(fn)
