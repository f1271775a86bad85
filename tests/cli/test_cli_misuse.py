"""Every misuse of the ``bridge`` command exits 2 with one ``error:`` line and no traceback.

Output paths are checked before any work starts, and an existing output file is only replaced
with ``--force``. Most cases run through typer's CliRunner (the real command object); a few run
the real process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bridge.cli import EXIT_SKIPPED
from tests.cli.runner import MODELS, run

OFFSETS = str(MODELS / "offsets.urdf")


def assert_one_line_error(res, *fragments: str) -> None:
    assert res.exit_code == 2, res.output
    lines = res.output.strip().splitlines()
    assert len(lines) == 1, res.output
    assert lines[0].startswith("error: "), res.output
    assert "Traceback" not in res.output
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        (["check", "solo12", "--json", "/nonexistent_dir/x.json"], ["--json", "'/nonexistent_dir'"]),
        (["check", OFFSETS, "--json", "/tmp"], ["--json", "is a directory"]),
        (["convert", OFFSETS, "-o", "/nonexistent_dir/o.urdf"], ["-o/--output", "does not exist"]),
        (["convert", OFFSETS], ["Missing option", "--output"]),
        (["check", "solo12", "--seed", "-5"], ["--seed", "-5"]),
        (["check", "solo12", "--rtol", "abc"], ["--rtol", "valid number"]),
        (["check", "solo12", "--rtol", "-1"], ["--rtol must be a positive number"]),
        (["check", "solo12", "--rtol", "nan"], ["--rtol must be a positive number"]),
        (["check", "solo12", "--samples", "0"], ["--samples"]),
        (["check", "solo12", "--samples", "many"], ["--samples"]),
        (["check", OFFSETS, "--engines", "pinocchio,nope"], ["unknown engine 'nope'"]),
        (["check", OFFSETS, "--representations", "sideways"], ["--representations", "sideways"]),
        (["check", OFFSETS, "--mimic", "bogus"], ["--mimic"]),
        (["check", OFFSETS, "--all"], ["exactly one of MODEL or --all"]),
        (["check"], ["exactly one of MODEL or --all"]),
        (["check", OFFSETS, "--bogus"], ["No such option", "--bogus"]),
        (["check", OFFSETS, "--base", "nowhere"], ["unknown link 'nowhere'"]),
        (["nosuchcommand"], ["No such command"]),
        (["info", "/dev/null"], ["not a regular file"]),
        (["info", ""], ["empty"]),
        (["info", "/nonexistent_dir/robot.urdf"], ["not found"]),
        (["info", str(MODELS / "bad" / "missing_inertia_attribute.urdf")], ["ixx"]),
    ],
)
def test_misuse_is_one_line_and_exit_2(args: list[str], fragments: list[str]) -> None:
    assert_one_line_error(run(*args), *fragments)


def test_output_paths_are_checked_before_the_work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import bridge.validation.check

    def boom(*args, **kwargs):  # pragma: no cover - must not be reached
        raise AssertionError("the check ran before the output path was checked")

    monkeypatch.setattr(bridge.validation.check, "cross_validate", boom)
    assert_one_line_error(run("check", OFFSETS, "--json", str(tmp_path / "no" / "x.json")), "does not exist")


def test_no_silent_overwrite(tmp_path: Path) -> None:
    out = tmp_path / "o.urdf"
    out.write_text("keep me")
    assert_one_line_error(run("convert", OFFSETS, "-o", str(out)), "exists", "--force")
    assert out.read_text() == "keep me"
    res = run("convert", OFFSETS, "-o", str(out), "--force")
    assert res.exit_code == 0, res.output
    assert out.read_text().startswith("<?xml")
    report = tmp_path / "r.json"
    report.write_text("{}")
    assert_one_line_error(run("check", OFFSETS, "--samples", "1", "--json", str(report)), "--force")
    res = run(
        "check", OFFSETS, "--samples", "1", "--representations", "body", "--json", str(report), "--force"
    )
    assert res.exit_code == 0, res.output
    assert json.loads(report.read_text())["ok"] is True


def test_check_all_exit_status_with_skipped_robots(monkeypatch: pytest.MonkeyPatch) -> None:
    import bridge.robots

    bad = str(MODELS / "bad" / "missing_inertia_attribute.urdf")
    monkeypatch.setattr(bridge.robots, "robot_names", lambda: [OFFSETS, bad])
    args = ("check", "--all", "--samples", "1", "--representations", "body")
    res = run(*args)
    assert res.exit_code == 0, res.output  # every robot that loads agrees; the skip is listed
    assert "1 skipped" in res.output
    res = run(*args, "--fail-on-skip")
    assert res.exit_code == EXIT_SKIPPED == 3, res.output
    monkeypatch.setattr(bridge.robots, "robot_names", lambda: [OFFSETS])
    assert run(*args, "--fail-on-skip").exit_code == 0


def test_check_a_singular_fixed_base_model_reports_it(tmp_path: Path) -> None:
    # (a massless base link would make iDynTree's centre-of-mass Jacobian NaN: a clear error too)
    urdf = tmp_path / "point_mass.urdf"
    urdf.write_text(
        '<robot name="pm"><link name="a"><inertial><mass value="2"/>'
        '<inertia ixx="0.1" iyy="0.2" izz="0.3" ixy="0" ixz="0" iyz="0"/></inertial></link>'
        '<link name="b"><inertial><origin xyz="0 0 0.2"/><mass value="1"/>'
        '<inertia ixx="0" iyy="0" izz="0" ixy="0" ixz="0" iyz="0"/></inertial></link>'
        '<joint name="j" type="continuous"><parent link="a"/><child link="b"/><axis xyz="0 0 1"/></joint>'
        "</robot>"
    )
    res = run("check", str(urdf), "--fixed-base", "--samples", "2")
    assert res.exit_code == 0, res.output
    assert "move no" in res.output and "inertia: j" in res.output
    massless_base = urdf.read_text().replace('<mass value="2"/>', '<mass value="0"/>')
    urdf.write_text(massless_base.replace('0.1" iyy="0.2" izz="0.3', '0" iyy="0" izz="0'))
    res = run("check", str(urdf), "--fixed-base", "--samples", "2", "--engines", "idyntree")
    assert_one_line_error(res, "com_jacobian of model 'pm' is not finite", "idyntree engine returned NaN")


def test_the_real_process_prints_one_line() -> None:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    for args in (
        ["check", "solo12", "--rtol", "abc"],
        ["convert", OFFSETS],
        ["check", "solo12", "--seed", "-5"],
    ):
        out = subprocess.run(
            [sys.executable, "-m", "bridge.cli", *args], capture_output=True, text=True, env=env, timeout=120
        )
        assert out.returncode == 2, out.stderr
        assert out.stdout == ""
        assert len(out.stderr.strip().splitlines()) == 1 and out.stderr.startswith("error: "), out.stderr
