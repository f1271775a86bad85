"""The ``bridge`` command: exit codes, one-line errors, check tables, JSON, convert, models."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.runner import MODELS, run


def test_help_is_fast_and_lists_commands() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "bridge.cli", "--help"], capture_output=True, text=True, check=True
    )
    for command in ("check", "info", "convert", "convert-states", "models"):
        assert command in out.stdout


def test_check_agrees_on_a_urdf_and_writes_json(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    res = run("check", str(MODELS / "offsets.urdf"), "--samples", "4", "--json", str(report))
    assert res.exit_code == 0, res.output
    assert "all engines agree" in res.output
    assert "mass_matrix" in res.output and "pinocchio vs idyntree" in res.output
    data = json.loads(report.read_text())
    assert data["ok"] is True and data["samples"] == 4 and data["results"]


def test_check_robot_by_name_with_options() -> None:
    res = run(
        "check",
        "iCubGazeboV2_5",
        "--samples",
        "3",
        "--base",
        "l_sole",
        "--representations",
        "mixed",
        "--joints",
        "l_hip_pitch,l_knee,r_hip_pitch",
    )
    assert res.exit_code == 0, res.output
    assert "inertial" not in res.output.split("pinocchio vs idyntree")[1].split("\n")[2]


def test_check_reports_disagreement_with_exit_1() -> None:
    # an impossible tolerance makes the (tiny) rounding differences count as disagreements
    res = run("check", str(MODELS / "offsets.urdf"), "--samples", "3", "--rtol", "1e-30")
    assert res.exit_code == 1, res.output
    assert "disagree" in res.output and "FAIL" in res.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["check", str(MODELS / "bad" / "triangle_inertia.urdf"), "--strict"],
            "link 'bad_link': principal moments",
        ),
        (["check", "iCubGazeboV2_5", "--base", "l_fot"], "unknown link 'l_fot'"),
        (["check", "no/such/robot.urdf"], "model file not found: 'no/such/robot.urdf'"),
        (["check", "iCubGazebo_V2_5"], "unknown robot 'iCubGazebo_V2_5'"),
        (["check", str(MODELS / "bad" / "mimic.urdf"), "--strict"], "(use --mimic independent or coupled)"),
        (["check", str(MODELS / "offsets.urdf"), "--engines", "bullet"], "unknown engine 'bullet'"),
        (
            ["check", str(MODELS / "offsets.urdf"), "--representations", "sideways"],
            "unknown velocity representation",
        ),
        (["info", str(MODELS / "bad" / "malformed.urdf")], "malformed XML"),
    ],
)
def test_bad_input_exits_2_with_one_line(args: list[str], message: str) -> None:
    res = run(*args)
    assert res.exit_code == 2, res.output
    lines = [line for line in res.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ")
    assert message in lines[0]


def test_convert_writes_a_rerooted_reduced_urdf(tmp_path: Path) -> None:
    import bridge

    out = tmp_path / "foot.urdf"
    res = run(
        "convert", str(MODELS / "offsets.urdf"), "--base", "wheel", "--joints", "spin,tilt", "-o", str(out)
    )
    assert res.exit_code == 0, res.output
    model = bridge.load_urdf(out)
    assert model.base == "wheel" and model.dof_names == ("spin", "tilt")


def test_models_lists_robots() -> None:
    res = run("models")
    assert res.exit_code == 0
    assert "iCubGazeboV2_5" in res.output and "talos_reduced" in res.output


def test_check_all_sweeps_the_registry_and_reports_skips(monkeypatch: pytest.MonkeyPatch) -> None:
    import bridge.robots

    good, bad = str(MODELS / "offsets.urdf"), str(MODELS / "bad" / "missing_inertia_attribute.urdf")
    monkeypatch.setattr(bridge.robots, "robot_names", lambda: [good, bad])
    res = run("check", "--all", "--samples", "2")
    assert res.exit_code == 0, res.output
    assert f"{good}" in res.output and " ok " in res.output
    assert "skipped" in res.output and "missing_inertia_attribute.urdf" in res.output and "ixx" in res.output
    assert "1 robots agree, 0 disagree, 1 skipped" in res.output
    res = run("check", "--all", "--samples", "2", "--rtol", "1e-30")
    assert res.exit_code == 1 and "0 robots agree, 1 disagree" in res.output
    res = run("check", "offsets", "--all")
    assert res.exit_code == 2 and "exactly one of MODEL or --all" in res.output
