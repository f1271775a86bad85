"""bridge._files: model files read within bounds, output files written atomically and never over an
input or a non-regular file.

Property tests per class: whatever fails while a file is written (the disk full, the file-size limit,
an exception or an interrupt at any write, at the fsync, at the rename), the old file is as it was
and no temporary file is left; of concurrent exclusive writers exactly one succeeds; the root
element is found after any prolog, read in chunks of any size.
"""

from __future__ import annotations

import errno
import os
import stat
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bridge
from bridge import _files
from bridge._files import (
    MAX_MODEL_BYTES,
    check_output,
    library_path,
    read_model_file,
    referenced_files,
    root_element,
    write_atomic,
)

EXAMPLES = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


# --------------------------------------------------------------------------- atomic writes
class _MidWayError(Exception):
    """An exception raised mid-way (not an OSError)."""


#: what can go wrong, and where
FAILURES = {
    "disk full": OSError(errno.ENOSPC, "No space left on device"),
    "file too large": OSError(errno.EFBIG, "File too large"),
    "an exception": _MidWayError("mid-way"),
    "an interrupt": KeyboardInterrupt(),
}
PLACES = ("write", "fsync", "replace", "link")


@EXAMPLES
@given(
    old=st.one_of(st.none(), st.binary(max_size=300)),
    new=st.one_of(st.text(max_size=3000), st.binary(max_size=3000)),
    replace=st.booleans(),
    failure=st.sampled_from(sorted(FAILURES)),
    place=st.sampled_from(PLACES),
    after=st.integers(0, 3),
)
def test_a_failed_write_leaves_the_old_file_and_no_temporary_file(
    tmp_path_factory, monkeypatch, old, new, replace, failure, place, after
) -> None:
    folder = tmp_path_factory.mktemp("atomic")
    target = folder / "out.urdf"
    if old is not None:
        target.write_bytes(old)
    calls = {"n": 0}
    real = {"write": os.write, "fsync": os.fsync, "replace": os.replace, "link": os.link}

    def failing(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] > after:
            raise FAILURES[failure]
        if place == "write":  # a short write: part of the data, as a full disk or a size limit gives
            fd, data = args
            return real["write"](fd, bytes(data[: max(1, len(data) // 2)]))
        return real[place](*args, **kwargs)

    with monkeypatch.context() as m:
        m.setattr(_files.os, place, failing)
        try:
            write_atomic(target, new, replace=replace)
        except (bridge.FileAccessError, _MidWayError, KeyboardInterrupt) as exc:
            failed = exc
        else:
            failed = None
    assert _leftovers(folder) == []
    payload = new.encode("utf-8") if isinstance(new, str) else new
    if old is not None and not replace:
        assert isinstance(failed, bridge.FileAccessError) and "exists" in str(failed)
    if failed is None:
        assert target.read_bytes() == payload
    else:
        assert (target.read_bytes() == old) if old is not None else not target.exists()
        if isinstance(failed, bridge.FileAccessError) and failure in ("disk full", "file too large"):
            assert "out.urdf" in str(failed)


def test_the_file_size_limit_leaves_the_old_file(tmp_path: Path) -> None:
    """A real RLIMIT_FSIZE (in a child process: Python ignores SIGXFSZ, so write fails with EFBIG)."""
    import subprocess
    import sys

    target = tmp_path / "report.json"
    target.write_text("keep me")
    code = (
        "import resource, sys; resource.setrlimit(resource.RLIMIT_FSIZE, (1024, 1024))\n"
        "from bridge._files import write_atomic\n"
        "from bridge.errors import FileAccessError\n"
        "try:\n"
        f"    write_atomic({str(target)!r}, 'x' * 100000, replace=True)\n"
        "except FileAccessError as exc:\n"
        "    print(exc); sys.exit(2)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 2, out.stderr
    assert "file too large" in out.stdout and "unchanged" in out.stdout
    assert target.read_text() == "keep me"
    assert _leftovers(tmp_path) == []


@settings(max_examples=10, deadline=None)
@given(writers=st.integers(2, 8))
def test_of_concurrent_exclusive_writers_exactly_one_wins(tmp_path_factory, writers: int) -> None:
    folder = tmp_path_factory.mktemp("race")
    target = folder / "out.urdf"
    barrier = threading.Barrier(writers)
    results: dict[int, object] = {}

    def write(k: int) -> None:
        barrier.wait()
        try:
            write_atomic(target, f"writer {k}\n" * 1000, replace=False)
            results[k] = "ok"
        except bridge.FileAccessError as exc:
            results[k] = exc

    threads = [threading.Thread(target=write, args=(k,)) for k in range(writers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    winners = [k for k, r in results.items() if r == "ok"]
    assert len(winners) == 1, results
    assert target.read_text() == f"writer {winners[0]}\n" * 1000
    assert all("exist" in str(r) or "created" in str(r) for k, r in results.items() if k not in winners)
    assert _leftovers(folder) == []


def test_replacing_keeps_the_permissions_and_a_new_file_follows_the_umask(tmp_path: Path) -> None:
    target = tmp_path / "out.urdf"
    target.write_text("old")
    target.chmod(0o640)
    write_atomic(target, "new", replace=True)
    assert target.read_text() == "new" and stat.S_IMODE(target.stat().st_mode) == 0o640
    fresh = tmp_path / "fresh.urdf"
    old_mask = os.umask(0o027)
    try:
        write_atomic(fresh, "x", replace=False)
    finally:
        os.umask(old_mask)
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o640


def test_a_symbolic_link_is_written_through(tmp_path: Path) -> None:
    real = tmp_path / "real.urdf"
    real.write_text("old")
    link = tmp_path / "link.urdf"
    link.symlink_to(real)
    write_atomic(link, "new", replace=True)
    assert link.is_symlink() and real.read_text() == "new"


def _hostile_targets(folder: Path) -> dict[str, tuple[Path, str]]:
    """name -> (path, what the error says) of targets that must be refused whatever ``replace``."""
    fifo = folder / "fifo"
    os.mkfifo(fifo)
    (folder / "dir").mkdir()
    model = folder / "model.urdf"
    model.write_text("<robot/>")
    (folder / "same.urdf").symlink_to(model)
    os.link(model, folder / "hard.urdf")
    return {
        "a FIFO": (fifo, "FIFO"),
        "a device": (Path(os.devnull), "device"),
        "a directory": (folder / "dir", "directory"),
        "the input": (model, "input"),
        "the input through a symbolic link": (folder / "same.urdf", "input"),
        "the input through a hard link": (folder / "hard.urdf", "input"),
        "the input spelled otherwise": (folder / "dir" / ".." / "model.urdf", "input"),
        "a name too long": (folder / ("a" * 300 + ".urdf"), "too long"),
        "a missing folder": (folder / "no" / "x.urdf", "does not exist"),
        "a folder that is a file": (model / "x.urdf", "not a directory"),
        "a NUL in the name": (Path(str(folder / "a\0b")), "NUL"),
    }


@pytest.mark.parametrize("replace", [False, True])
def test_hostile_targets_are_refused_without_waiting_or_writing(tmp_path: Path, replace: bool) -> None:
    targets = _hostile_targets(tmp_path)
    model = tmp_path / "model.urdf"
    for name, (path, says) in targets.items():
        for fn in (check_output, lambda p, **kw: write_atomic(p, "junk", **kw)):
            with pytest.raises(bridge.FileAccessError, match=says):
                fn(path, replace=replace, inputs=[model])
        assert model.read_text() == "<robot/>", name
    assert _leftovers(tmp_path) == []


# --------------------------------------------------------------------------- reading
def test_unreadable_and_special_files_are_refused_with_the_cause(tmp_path: Path) -> None:
    huge = tmp_path / "huge.urdf"
    with open(huge, "wb") as f:  # sparse: no disk space taken
        f.truncate(MAX_MODEL_BYTES + 1)
    fifo = tmp_path / "fifo.urdf"
    os.mkfifo(fifo)
    cases = {
        huge: "at most",
        fifo: "FIFO",  # (not waited on)
        tmp_path: "directory",
        tmp_path / ("b" * 300): "too long",
        Path("/proc/self/mem"): "input/output error",  # a regular file whose read fails
    }
    if os.geteuid() != 0:  # (root reads anything)
        locked = tmp_path / "locked.urdf"
        locked.write_text("<robot/>")
        locked.chmod(0)
        cases[locked] = "permission denied"
    for path, says in cases.items():
        for fn in (read_model_file, root_element):
            with pytest.raises(bridge.FileAccessError, match=says):
                fn(path)
    with pytest.raises(bridge.ModelFileNotFoundError):
        read_model_file(tmp_path / "missing.urdf")


PROLOG_PIECES = st.one_of(
    st.integers(0, 9000).map(lambda n: f"<!--{'x-' * (n // 2)}>->-->"),
    st.sampled_from(["<?xml version='1.0' encoding='utf-8'?>", '<?xml version="0.0"?>', "<?pi a?b?>"]),
    st.sampled_from(["<!DOCTYPE robot>", '<!DOCTYPE r [<!ENTITY e "a>b">]>', "<!DOCTYPE r SYSTEM 'x>y'>"]),
    st.sampled_from([" ", "\n", "\t\r\n"]),
)


@EXAMPLES
@given(
    pieces=st.lists(PROLOG_PIECES, max_size=6),
    bom=st.booleans(),
    root=st.sampled_from(["robot", "sdf", "mujoco", "html", "r_1.a-b"]),
    rest=st.sampled_from([">", " name='x'>", "/>", "\n>"]),
    chunk=st.sampled_from([1, 2, 3, 5, 7, 64, 1 << 16]),
)
def test_the_root_element_is_found_after_any_prolog_in_any_chunks(
    tmp_path_factory, monkeypatch, pieces, bom, root, rest, chunk
) -> None:
    path = tmp_path_factory.mktemp("sniff") / "model"
    text = "".join(pieces) + f"<{root}{rest}</{root}>"
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8"))
    monkeypatch.setattr(_files, "_CHUNK", chunk)
    assert root_element(path) == root
    kinds = {"robot": "urdf", "sdf": "sdf", "mujoco": "mjcf"}
    assert bridge.backends.registry.file_kind(path) == kinds.get(root)


def test_sniffing_reads_no_more_than_the_prolog(tmp_path: Path, monkeypatch) -> None:
    """A root after 10 kB of comment is found; a file of 50 MB after the root is not read."""
    path = tmp_path / "big.sdf"
    with open(path, "wb") as f:
        f.write(b"<!--" + b"c" * 10_000 + b"--><sdf version='1.9'>")
        f.write(b" " * 50_000_000 + b"</sdf>")
    read = []
    real = _files.open_model_file

    def counting(*args, **kwargs):
        cm = real(*args, **kwargs)
        f = cm.__enter__()
        original = f.read

        def reading(n=-1):
            data = original(n)
            read.append(len(data))
            return data

        f.read = reading
        return _Wrapped(cm, f)

    monkeypatch.setattr(_files, "open_model_file", counting)
    assert root_element(path) == "sdf"
    assert sum(read) <= 2 * (1 << 16)


class _Wrapped:
    def __init__(self, cm, f) -> None:
        self.cm, self.f = cm, f

    def __enter__(self):
        return self.f

    def __exit__(self, *exc):
        return self.cm.__exit__(*exc)


def test_text_before_the_root_or_no_root_is_none(tmp_path: Path) -> None:
    for body in (b"", b"   ", b"hello <robot/>", b"<!-- unterminated", b"<?xml version='1.0'?>", b"\x00\x01"):
        path = tmp_path / "x"
        path.write_bytes(body)
        assert root_element(path) is None, body


def test_library_path_is_the_names_bytes_as_utf8(tmp_path: Path) -> None:
    name = "d\u00e9"  # under an ASCII locale Python sees the bytes b"d\xc3\xa9" as "d\udcc3\udca9"
    escaped = os.fsdecode(b"d\xc3\xa9") if os.fsencode(name) != b"d\xc3\xa9" else name
    assert library_path(escaped) == name
    assert library_path(name) == name
    with pytest.raises(bridge.FileAccessError, match="not UTF-8"):
        library_path(os.fsdecode(b"r\xe9bot.urdf") if os.name == "posix" else b"r\xe9bot.urdf")


def test_referenced_files_follow_mjcf_includes(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "part.xml").write_text('<mujoco><asset><mesh file="m.stl"/></asset></mujoco>')
    main = tmp_path / "main.xml"
    main.write_text(
        '<mujoco><compiler meshdir="meshes"/><include file="sub/part.xml"/>'
        '<asset><mesh file="a.stl"/><texture file="package://x/t.png"/></asset></mujoco>'
    )
    found = set(referenced_files(main))
    assert tmp_path / "sub" / "part.xml" in found
    assert tmp_path / "meshes" / "a.stl" in found and tmp_path / "a.stl" in found
    assert tmp_path / "sub" / "m.stl" in found
    assert not any("package:" in str(p) for p in found)
