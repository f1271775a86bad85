"""bridge._cache: the one idiom for values kept per model (weakly), and the rule that no other
module keeps a weak dictionary of its own."""

from __future__ import annotations

import gc
import re
import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bridge
from bridge._cache import ModelCache, per_model

ROOT = Path(__file__).resolve().parents[1] / "bridge"


class Owner:
    """A stand-in for a model: hashable by identity, weakly referenceable."""


def test_a_value_is_computed_once_per_model_and_arguments() -> None:
    calls: list[tuple] = []

    @per_model
    def f(owner: Owner, k: int = 0) -> list:
        calls.append((owner, k))
        return [k]

    a, b = Owner(), Owner()
    assert f(a) is f(a) and f(a, 1) is f(a, 1) and f(a) is not f(b)
    assert len(calls) == 3 and len(f) == 2 and f.__name__ == "f"
    f.clear()
    assert len(f) == 0


@settings(max_examples=20, deadline=None)
@given(st.lists(st.integers(0, 3), min_size=1, max_size=20))
def test_a_value_lives_as_long_as_its_model(keys: list[int]) -> None:
    cache = ModelCache(lambda owner, k: object())
    owners = [Owner() for _ in range(4)]
    first = {k: cache(owners[k], k) for k in keys}
    assert all(cache(owners[k], k) is v for k, v in first.items())
    assert len(cache) == len(set(keys))
    del owners, first
    gc.collect()
    assert len(cache) == 0


def test_an_object_without_weak_references_is_computed_each_time() -> None:
    calls = []
    cache = ModelCache(lambda owner: calls.append(owner) or len(calls))
    assert cache((1, 2)) == 1 and cache((1, 2)) == 2  # a tuple takes no weak reference
    assert cache.of([]) == {} and len(cache) == 0  # (nor a list, which is not even hashable)


def test_an_exception_is_not_kept() -> None:
    tries = []

    def flaky(owner: Owner) -> str:
        tries.append(1)
        if len(tries) == 1:
            raise ValueError("first call")
        return "ok"

    cache, owner = ModelCache(flaky), Owner()
    with pytest.raises(ValueError):
        cache(owner)
    assert cache(owner) == "ok" and cache(owner) == "ok" and len(tries) == 2


def test_threads_share_one_value() -> None:
    cache, owner = ModelCache(lambda o: object()), Owner()
    barrier, seen = threading.Barrier(8), []

    def run() -> None:
        barrier.wait()
        seen.append(cache(owner))

    threads = [threading.Thread(target=run) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({id(v) for v in seen}) == 1


def test_a_models_values_go_with_it() -> None:
    """The caches bridge keeps per model drop a model's values when the model goes."""
    from bridge.backends import generic
    from bridge.conventions.convention import _ORDERS, NEUTRAL, JointOrder
    from bridge.conventions.state import Representation

    model = bridge.random_model(4, 3, floating=True)
    JointOrder.between(model, NEUTRAL[Representation.BODY], NEUTRAL[Representation.MIXED])
    generic._bodies(model)
    kept = (len(_ORDERS), len(generic._bodies))
    del model
    gc.collect()
    assert (len(_ORDERS), len(generic._bodies)) < kept


def test_no_module_keeps_a_weak_dictionary_of_its_own() -> None:
    """The rule of docs/architecture.md: values kept per model go through bridge._cache (no weak
    dictionary and no dict keyed by ``id`` with weak-reference callbacks of a module's own)."""
    own = [
        str(p.relative_to(ROOT))
        for p in sorted(ROOT.rglob("*.py"))
        if p.name != "_cache.py"
        and re.search(r"import weakref|from weakref|weakref\.|Weak\w*Dictionary", p.read_text())
    ]
    assert not own, f"modules with their own weak references (use bridge._cache): {own}"
