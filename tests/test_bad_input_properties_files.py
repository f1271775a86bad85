"""Junk files, paths and counts fed to every reader, writer and counted argument: only BridgeErrors.

As in :mod:`tests.test_bad_input_properties`, each call raises a :class:`bridge.BridgeError` or
returns a good result; a raw exception, a traceback or a hang fails. The paths are what a file
system holds besides a readable model: a name too long, a NUL in it, a name whose bytes are not
UTF-8, a directory, a FIFO (reading or writing it would wait forever), a device, a file whose read
fails (``/proc/self/mem``), a file too large to read (sparse), a dangling link, a loop of links, a
file under a file, a file without read permission (unless running as root), an empty or binary
file, and a root element after a long comment. The counts are numbers of samples, integration
steps, links and Jacobian rows from far beyond reason down to negative.
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bridge
from bridge._files import MAX_MODEL_BYTES
from bridge.backends import registry
from tests.cli.runner import MODELS, run
from tests.test_bad_input_properties import _model, _valid_state, call

EXAMPLES = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
OFFSETS = MODELS / "offsets.urdf"
HAS_MUJOCO = registry.library("mujoco").installed


@functools.cache
def _folder() -> Path:
    """A folder of hostile files (made once; the FIFO and the locked file are never read)."""
    d = Path(tempfile.mkdtemp(prefix="bridge_junk_files_"))
    (d / "dir.urdf").mkdir()
    os.mkfifo(d / "fifo.urdf")
    with open(d / "huge.urdf", "wb") as f:
        f.truncate(MAX_MODEL_BYTES + 1)
    (d / "dangling.urdf").symlink_to(d / "nowhere.urdf")
    (d / "loop1.urdf").symlink_to(d / "loop2.urdf")
    (d / "loop2.urdf").symlink_to(d / "loop1.urdf")
    (d / "empty.urdf").write_bytes(b"")
    (d / "binary.urdf").write_bytes(bytes(range(256)) * 40)
    (d / "late.urdf").write_text("<!--" + "x" * 9000 + "--><html/>")
    latin = os.fsdecode(b"r\xe9bot.urdf")  # a name whose bytes are not UTF-8
    (d / latin).write_bytes(OFFSETS.read_bytes())
    locked = d / "locked.urdf"
    locked.write_bytes(OFFSETS.read_bytes())
    locked.chmod(0)
    return d


def _paths() -> dict[str, str]:
    d = _folder()
    return {
        "too long": str(d / ("a" * 300 + ".urdf")),
        "too long, no suffix": "b" * 5000,
        "NUL": str(d / "a\0b.urdf"),
        "directory": str(d / "dir.urdf"),
        "FIFO": str(d / "fifo.urdf"),
        "device": os.devnull,
        "zero device": "/dev/zero",
        "read fails": "/proc/self/mem",
        "huge": str(d / "huge.urdf"),
        "dangling link": str(d / "dangling.urdf"),
        "loop of links": str(d / "loop1.urdf"),
        "under a file": str(d / "empty.urdf" / "x.urdf"),
        "empty": str(d / "empty.urdf"),
        "binary": str(d / "binary.urdf"),
        "late root": str(d / "late.urdf"),
        "not UTF-8": str(d / os.fsdecode(b"r\xe9bot.urdf")),
        "locked": str(d / "locked.urdf"),  # (root reads it: then it simply loads)
    }


@contextlib.contextmanager
def _no_hang(seconds: int = 60):
    """Fail instead of waiting forever (a FIFO opened for reading or writing)."""

    def boom(*_):
        raise TimeoutError(f"no answer in {seconds} s: waiting on a FIFO?")

    previous = signal.signal(signal.SIGALRM, boom)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _readers() -> dict[str, object]:
    out = {
        "load_urdf": bridge.load_urdf,
        "load_sdf": bridge.load_sdf,
        "resolve_model_path": bridge.robots.resolve_model_path,
        "file_kind": registry.file_kind,
        "cross_validate": lambda p: bridge.cross_validate(p, engines=["pinocchio"], samples=1),
        "cross_validate native": lambda p: bridge.cross_validate(p, native=True, samples=1),
    }
    if HAS_MUJOCO:
        out |= {"load_mjcf": bridge.load_mjcf, "load_model": bridge.load_model}
    return out


@EXAMPLES
@given(kind=st.sampled_from(sorted(_paths())), reader=st.sampled_from(sorted(_readers())))
def test_every_reader_on_every_hostile_path(kind: str, reader: str) -> None:
    path = _paths()[kind]
    with _no_hang():
        call(_readers()[reader], path)
        if not kind.startswith("too long") and kind != "NUL":
            call(_readers()[reader], Path(path))


@settings(max_examples=20, deadline=None)
@given(kind=st.sampled_from(sorted(_paths())), command=st.sampled_from(["info", "check", "convert"]))
def test_the_command_line_on_every_hostile_path(kind: str, command: str, tmp_path_factory) -> None:
    """One ``error:`` line and exit 2 (or, for a file that is a model after all, exit 0)."""
    path = _paths()[kind]
    if "\0" in path:
        return  # (a command-line argument cannot hold a NUL)
    args = {"info": [], "check": ["--samples", "1", "--engines", "pinocchio"]}.get(command)
    if args is None:
        args = ["-o", str(tmp_path_factory.mktemp("out") / "out.urdf")]
    with _no_hang():
        res = run(command, path, *args)
    assert "Traceback" not in res.output
    if res.exit_code != 0:
        assert res.exit_code == 2 and res.output.startswith("error: "), res.output
        assert len(res.output.strip().splitlines()) == 1, res.output


@settings(max_examples=30, deadline=None)
@given(kind=st.sampled_from(["FIFO", "device", "directory", "too long", "under a file", "NUL", "input"]),
       force=st.booleans(), command=st.sampled_from(["convert", "check"]))  # fmt: skip
def test_the_command_line_refuses_every_hostile_output(kind: str, force: bool, command: str) -> None:
    paths = _paths()
    target = str(OFFSETS) if kind == "input" else paths[kind]
    if "\0" in target:
        return
    option = ["-o", target] if command == "convert" else ["--samples", "1", "--json", target]
    before = OFFSETS.read_bytes()
    with _no_hang():
        res = run(command, str(OFFSETS), *option, *(["--force"] if force else []))
    assert res.exit_code == 2 and res.output.startswith("error: "), res.output
    assert len(res.output.strip().splitlines()) == 1, res.output
    assert OFFSETS.read_bytes() == before


# --------------------------------------------------------------------------- counts
def _counted() -> dict[str, tuple[object, int]]:
    """name -> (the call of a count, the largest count it takes)."""
    from bridge.dynamics.integration import MAX_STEPS
    from bridge.model.random import MAX_RANDOM_SIZE
    from bridge.validation.cross_validation import MAX_SAMPLES

    model = _model()
    state = bridge.State(*_valid_state(model))
    out = {
        "cross_validate samples": (
            lambda n: bridge.cross_validate(model, engines=["pinocchio"], samples=n),
            MAX_SAMPLES,
        ),
        "integrate steps": (
            lambda n: bridge.integrate(state, np.zeros(6), np.zeros(model.n_dofs), 0.01, n),
            MAX_STEPS,
        ),
        "random_model n_links": (lambda n: bridge.random_model(n, 0), MAX_RANDOM_SIZE),
        "random_model n_frames": (lambda n: bridge.random_model(3, 0, n_frames=n), MAX_RANDOM_SIZE),
    }
    with contextlib.suppress(ImportError):
        from bridge.conventions.casadi_functions import MAX_ROWS

        out["casadi_jacobian rows"] = (
            lambda n: bridge.casadi_jacobian(model, "pinocchio", "mixed", rows=n),
            MAX_ROWS,
        )
    return out


@settings(max_examples=60, deadline=None)
@given(
    which=st.sampled_from(sorted(_counted())),
    beyond=st.one_of(st.integers(1, 10**12), st.just(10**400), st.just(10**5000)),
    negative=st.one_of(st.integers(-(10**12), -1), st.just(-(10**5000))),
    sign=st.booleans(),
)
def test_counts_beyond_reason_are_refused_at_once(which: str, beyond: int, negative: int, sign: bool) -> None:
    fn, maximum = _counted()[which]
    n = maximum + beyond if sign else negative
    with _no_hang(30), pytest.raises(bridge.BridgeError) as info:
        fn(n)
    assert len(str(info.value)) < 400


def test_the_command_line_bounds_samples() -> None:
    res = run("check", str(OFFSETS), "--samples", str(10**12))
    assert res.exit_code == 2 and "--samples must be at most" in res.output, res.output


@EXAMPLES
@given(junk=st.sampled_from([None, 1.5, "6", True, 0, -1, 10**12, 10**400, np.int64(10**6), object()]))
def test_casadi_jacobian_rows_junk(junk: object) -> None:
    pytest.importorskip("casadi")
    model = _model()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        call(bridge.casadi_jacobian, model, "pinocchio", "mixed", rows=junk)
