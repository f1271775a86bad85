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


_TINY = """
from numba import float64, void

from bridge._numba import kernel


@kernel([void(float64[::1], float64[::1])])
def twice(x, out):
    for i in range(x.shape[0]):
        out[i] = 2.0 * x[i]
"""


def test_a_kernel_compiles_at_its_first_use_then_the_module_calls_numba(tmp_path, monkeypatch) -> None:
    """:func:`bridge._numba.kernel`: nothing compiled when its module is imported; the first call
    compiles (or loads) it for its signatures and binds the module's name to numba's dispatcher;
    other argument types are a TypeError (no new compilation); :func:`~bridge._numba.direct` and
    the dispatcher's attributes work on a kernel not compiled yet."""
    pytest.importorskip("numba")
    import importlib

    import numpy as np

    (tmp_path / "tiny_kernels.py").write_text(_TINY)
    monkeypatch.syspath_prepend(str(tmp_path))
    tiny = importlib.import_module("tiny_kernels")
    k = tiny.twice
    assert isinstance(k, _numba.Kernel) and "not compiled yet" in repr(k)
    x, out = np.arange(3.0), np.zeros(3)
    k(x, out)
    assert out.tolist() == [0.0, 2.0, 4.0]
    assert tiny.twice is not k and tiny.twice is k.dispatcher()  # (the module's name: numba's)
    assert "compiled" in repr(k) and "not" not in repr(k)
    with pytest.raises(TypeError):
        k(np.arange(3), out)  # an int array: no signature, no compilation
    assert len(k.overloads) == 1
    entry = _numba.direct(k, x, out)
    entry(2.0 * x, out)
    assert out.tolist() == [0.0, 4.0, 8.0]


def test_first_uses_from_several_threads_compile_once(tmp_path, monkeypatch) -> None:
    pytest.importorskip("numba")
    import importlib

    import numpy as np

    (tmp_path / "tiny_kernels_threads.py").write_text(_TINY)
    monkeypatch.syspath_prepend(str(tmp_path))
    k = importlib.import_module("tiny_kernels_threads").twice
    found, outs = [], [np.zeros(4) for _ in range(4)]
    barrier = threading.Barrier(4)

    def first(out):
        barrier.wait()
        k(np.ones(4), out)
        found.append(k.dispatcher())

    threads = [threading.Thread(target=first, args=(out,)) for out in outs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(found) == 4 and all(d is found[0] for d in found)
    assert all(out.tolist() == [2.0] * 4 for out in outs)


def test_importing_the_single_state_kernels_compiles_none(tmp_path) -> None:
    """A fresh process importing the single-state kernel modules finds every kernel not compiled
    yet (a process loads only those its path calls)."""
    pytest.importorskip("numba")
    import subprocess

    code = (
        "from bridge._numba import Kernel\n"
        "from bridge.backends import single_kernels as a\n"
        "from bridge.conventions import single_kernels as b\n"
        "ks = [v for m in (a, b) for v in vars(m).values() if isinstance(v, Kernel)]\n"
        "assert len(ks) >= 10, len(ks)\n"
        "assert all(k._dispatcher is None for k in ks)\n"
        "print(len(ks))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr[-2000:]
