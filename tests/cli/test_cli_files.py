"""The files the command line writes: nothing lost, nothing half-written, no input overwritten.

``bridge convert -o`` and ``bridge check --json`` write through a temporary file renamed over the
target (``--force``) or linked to its name (exclusive: of two concurrent runs one succeeds); a
target that is an input of the command (also through a symbolic link, a hard link or another
spelling), a FIFO, a device or a directory is refused before any work; the file-size limit or a
full disk leaves the old file as it was and no temporary file. Output is UTF-8 and names print
whatever the locale.
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

import bridge
from tests.cli.runner import MODELS, run

ROOT = Path(__file__).resolve().parents[2]
OFFSETS = MODELS / "offsets.urdf"


def _env(**extra: str | None) -> dict[str, str]:
    """The environment of the child process (``None``: the variable unset)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200", **extra}
    return {k: v for k, v in env.items() if v is not None}


def _bridge(*args: str, env: dict | None = None, limit: int | None = None, timeout: float = 300):
    """The real ``bridge`` process (a file-size limit of ``limit`` bytes if given)."""

    def limited() -> None:  # pragma: no cover - runs in the child
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return subprocess.run(
        [sys.executable, "-m", "bridge.cli", *map(str, args)],
        capture_output=True,
        text=True,
        env=env or _env(),
        timeout=timeout,
        preexec_fn=limited if limit is not None else None,
    )


def _one_error(res, *fragments: str) -> None:
    """Exit 2 and one ``error:`` line (stderr of a process; the output of a CliRunner result)."""
    process = isinstance(res, subprocess.CompletedProcess)
    output = res.stderr if process else res.output
    assert (res.returncode if process else res.exit_code) == 2, output
    lines = output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), output
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


def _temporaries(folder: Path) -> list[str]:
    return [p.name for p in folder.iterdir() if p.name.endswith(".tmp")]


def test_an_output_on_a_fifo_is_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "out.urdf"
    os.mkfifo(fifo)
    for force in ([], ["--force"]):
        start = time.monotonic()
        _one_error(_bridge("convert", OFFSETS, "-o", fifo, *force, timeout=120), "FIFO", "regular file")
        assert time.monotonic() - start < 60
    _one_error(run("check", str(OFFSETS), "--json", os.devnull, "--force"), "device")


def test_an_input_is_never_overwritten(tmp_path: Path) -> None:
    model = tmp_path / "robot.urdf"
    shutil.copy(OFFSETS, model)
    original = model.read_bytes()
    sdf = tmp_path / "robot.sdf"
    assert run("convert", str(model), "-o", str(sdf)).exit_code == 0
    sdf_text = sdf.read_bytes()
    (tmp_path / "alias.urdf").symlink_to(model)
    os.link(model, tmp_path / "hard.urdf")
    (tmp_path / "sub").mkdir()
    cases = [
        ("convert", str(model), "-o", str(model)),
        ("convert", str(model), "-o", str(tmp_path / "alias.urdf")),
        ("convert", str(model), "-o", str(tmp_path / "hard.urdf")),
        ("convert", str(model), "-o", str(tmp_path / "sub" / ".." / "robot.urdf")),
        ("convert", str(tmp_path / "alias.urdf"), "-o", str(model)),
        ("check", str(sdf), "--samples", "1", "--json", str(sdf)),
    ]
    for args in cases:
        _one_error(run(*args, "--force"), "input of this command")
    assert model.read_bytes() == original and sdf.read_bytes() == sdf_text
    assert _temporaries(tmp_path) == []


def test_a_file_an_mjcf_model_includes_is_an_input(tmp_path: Path) -> None:
    pytest.importorskip("mujoco")
    (tmp_path / "parts").mkdir()
    part = tmp_path / "parts" / "arm.xml"
    part.write_text(
        '<mujoco><body name="arm" pos="0 0 0.3"><joint name="j" type="hinge"/>'
        '<inertial pos="0 0 0" mass="1" diaginertia="0.1 0.1 0.1"/></body></mujoco>'
    )
    main = tmp_path / "main.xml"
    main.write_text(
        '<mujoco model="m"><worldbody><body name="base"><freejoint/>'
        '<inertial pos="0 0 0" mass="2" diaginertia="0.2 0.2 0.2"/><include file="parts/arm.xml"/>'
        "</body></worldbody></mujoco>"
    )
    kept = part.read_bytes()
    _one_error(run("convert", str(main), "-o", str(part), "--force"), "input of this command")
    assert part.read_bytes() == kept


@pytest.mark.parametrize("command", ["convert", "check"])
def test_the_file_size_limit_leaves_the_old_file_and_no_temporary(tmp_path: Path, command: str) -> None:
    option = ["-o"] if command == "convert" else ["--samples", "1", "--engines", "pinocchio", "--json"]
    out = tmp_path / ("out.urdf" if command == "convert" else "report.json")
    out.write_text("keep me")
    res = _bridge(command, OFFSETS, *option, out, "--force", limit=1024)
    _one_error(res, "file too large", "unchanged")
    assert out.read_text() == "keep me"
    assert _temporaries(tmp_path) == []
    fresh = tmp_path / ("new.urdf" if command == "convert" else "new.json")
    _one_error(_bridge(command, OFFSETS, *option, fresh, limit=1024), "file too large", "nothing was written")
    assert not fresh.exists() and _temporaries(tmp_path) == []


def test_two_concurrent_runs_without_force_do_not_both_succeed(tmp_path: Path) -> None:
    out = tmp_path / "out.urdf"
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "bridge.cli", "convert", str(OFFSETS), "-o", str(out)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=_env(),
        )
        for _ in range(3)
    ]
    results = [(p.wait(timeout=300), p.stdout.read(), p.stderr.read()) for p in procs]
    assert sorted(code for code, _, _ in results) == [0, 2, 2], results
    assert all("exists" in err or "created by someone else" in err for code, _, err in results if code)
    assert bridge.load_urdf(out).dof_names == bridge.load_urdf(OFFSETS).dof_names
    assert _temporaries(tmp_path) == []


NON_ASCII_URDF = """<?xml version="1.0" encoding="utf-8"?>
<robot name="rob\u00e9">
  <link name="b\u00e4se"><inertial><mass value="1"/>
    <inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="\u00e4rm"><inertial><mass value="1"/>
    <inertia ixx="0.1" iyy="0.2" izz="0.2" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="j\u00e9" type="continuous"><parent link="b\u00e4se"/><child link="\u00e4rm"/>
    <origin xyz="0 0 0.1"/><axis xyz="0 0 1"/></joint>
</robot>
"""
#: Python with the C locale and neither UTF-8 mode nor locale coercion: ASCII file names and streams
ASCII_LOCALE = {
    "LC_ALL": "C",
    "LANG": "C",
    "PYTHONUTF8": "0",
    "PYTHONCOERCECLOCALE": "0",
    "PYTHONIOENCODING": None,
}


@pytest.mark.parametrize("suffix", [".urdf", ".sdf", ".xml"])
def test_convert_under_an_ascii_locale_with_non_ascii_paths_and_names(tmp_path: Path, suffix: str) -> None:
    if suffix == ".xml":
        pytest.importorskip("mujoco")
    folder = tmp_path / "d\u00e9j\u00e0"
    folder.mkdir()
    model = folder / "rob\u00e9.urdf"
    model.write_text(NON_ASCII_URDF, encoding="utf-8")
    out = folder / f"s\u00f6rtie{suffix}"
    res = _bridge("convert", model, "-o", out, env=_env(**ASCII_LOCALE))
    assert res.returncode == 0, res.stdout + res.stderr
    assert "Traceback" not in res.stderr
    text = out.read_bytes().decode("utf-8")  # UTF-8 whatever the locale
    assert "j\u00e9" in text
    back = bridge.load_model(out)
    assert back.dof_names == ("j\u00e9",) and "\u00e4rm" in back.link_names
    info = _bridge("info", model, env=_env(**ASCII_LOCALE))
    assert info.returncode == 0 and "Traceback" not in info.stderr, info.stderr
