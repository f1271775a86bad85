"""The one decision whether compiled (numba) kernels run, and their launch (:mod:`bridge._numba`)."""

from __future__ import annotations

import sys
import threading

import pytest

from bridge import _numba
from bridge.errors import BridgeWarning


def test_the_environment_turns_numba_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BRIDGE_NUMBA", " 0 ")
    assert not _numba.enabled()
    assert _numba.load(lambda: pytest.fail("imported"), "{}") is None


def test_without_numba_nothing_loads(monkeypatch: pytest.MonkeyPatch, recwarn) -> None:
    monkeypatch.delenv("BRIDGE_NUMBA", raising=False)
    monkeypatch.setitem(sys.modules, "numba", None)  # import numba raises ImportError
    assert not _numba.enabled()
    assert _numba.load(lambda: pytest.fail("imported"), "{}") is None
    assert not [w for w in recwarn if issubclass(w.category, BridgeWarning)]


def test_a_kernel_module_that_fails_warns_and_gives_none(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("numba")
    monkeypatch.delenv("BRIDGE_NUMBA", raising=False)

    def broken():
        raise ImportError("no such kernels")

    with pytest.warns(BridgeWarning, match=r"kernels failed \(no such kernels\)"):
        assert _numba.load(broken, "kernels failed ({})") is None


def test_small_batches_and_concurrent_launches_run_serially() -> None:
    pytest.importorskip("numba")
    calls = []
    par, ser = (lambda *a: calls.append(("par", a))), (lambda *a: calls.append(("ser", a)))
    _numba.launch(par, ser, 4, "x", minimum=32)
    _numba.launch(par, ser, 64, "x", minimum=32)
    assert calls[0] == ("ser", ("x", 1)) and calls[1][0] == "par" and 1 <= calls[1][1][1] <= 64
    held = threading.Event()
    release = threading.Event()

    def blocking(*a):
        held.set()
        release.wait(5)

    t = threading.Thread(target=_numba.launch, args=(blocking, ser, 64), kwargs={"minimum": 1})
    t.start()
    held.wait(5)
    _numba.launch(par, ser, 64, "y", minimum=1)  # the launch is taken: serial
    release.set()
    t.join()
    assert calls[-1] == ("ser", ("y", 1))


def test_a_loader_looks_up_once(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("numba")
    monkeypatch.delenv("BRIDGE_NUMBA", raising=False)
    calls = []

    def importer():
        calls.append(1)
        return sys

    kernels = _numba.loader(importer, "{}")
    assert kernels() is sys and kernels() is sys and calls == [1]


def test_direct_gives_the_entry_point_of_the_examples_types() -> None:
    numba = pytest.importorskip("numba")
    import numpy as np

    @numba.njit(numba.void(numba.float64[::1], numba.float64[::1]))
    def add_one(x, out):
        out[0] = x[0] + 1.0

    x, out = np.ones(3), np.zeros(1)
    entry = _numba.direct(add_one, x, out)
    assert entry is not add_one and callable(entry)
    entry(x, out)
    assert out[0] == 2.0

    @numba.njit
    def lazy(x):  # (no explicit signature: compiled for the examples' types)
        return x[0] * 2.0

    assert _numba.direct(lazy, x)(x) == 2.0
    assert _numba.direct(print, x) is print  # (not a numba kernel: itself)
    assert _numba.direct(add_one, "not an array") is add_one  # (no signature for these types)
