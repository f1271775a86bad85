"""Issue 29, command line: flags that do not combine say so (exit 2, one line naming them), duplicate
engines are refused, an output path that cannot be written is found before the run, and Drake's own
log lines do not leak to stderr."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.runner import MODELS, run
from tests.cli.test_cli_misuse import OFFSETS, assert_one_line_error


@pytest.mark.parametrize(
    ("extra", "flags"),
    [
        (["--strict"], ["--strict"]),
        (["--mimic", "coupled"], ["--mimic"]),
        (["--base", "b"], ["--base"]),
        (["--joints", "j1"], ["--joints"]),
        (["--fixed-base"], ["--fixed-base"]),
        (["--allow-nonphysical"], ["--allow-nonphysical"]),
        (["--fixed-base", "--strict"], ["--fixed-base", "--strict"]),
    ],
)
def test_native_with_load_options_exits_2_naming_them(
    extra: list[str], flags: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import bridge.validation.check

    monkeypatch.setattr(bridge.validation.check, "cross_validate", _never)
    res = run("check", OFFSETS, "--native", *extra)
    assert_one_line_error(res, "--native", "does not combine", *flags)


def test_all_with_native_exits_2() -> None:
    assert_one_line_error(run("check", "--all", "--native"), "--native", "--all", "does not combine")


@pytest.mark.parametrize("engines", ["drake,drake", "pinocchio,featherstone,Pinocchio"])
def test_duplicate_engines_exit_2_naming_the_duplicate(engines: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import bridge.validation.check

    monkeypatch.setattr(bridge.validation.check, "cross_validate", _never)
    duplicate = engines.split(",")[-1].lower()
    assert_one_line_error(run("check", OFFSETS, "--engines", engines), "--engines", repr(duplicate), "twice")


@pytest.mark.parametrize("target", ["/proc/x.json", "/proc/self/no/x.json", "/sys/x.json"])
def test_json_into_an_unwritable_place_exits_2_before_the_run(
    target: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import bridge.validation.check

    monkeypatch.setattr(bridge.validation.check, "cross_validate", _never)
    assert_one_line_error(run("check", OFFSETS, "--json", target), "--json", repr(target))
    assert not Path(target).exists()


def test_json_probe_leaves_no_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from bridge.cli.output import check_output

    out = tmp_path / "r.json"
    check_output(out, "--json", False)
    assert not out.exists()
    out.write_text("keep")
    check_output(out, "--json", True)
    assert out.read_text() == "keep"


def test_drake_log_lines_do_not_leak_to_stderr() -> None:
    pytest.importorskip("pydrake")
    # defaults.urdf has a <mechanicalReduction> Drake's parser logs a WARNING about
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    args = [sys.executable, "-m", "bridge.cli", "check", str(MODELS / "defaults.urdf"), "--samples", "1"]
    for extra in (["--native"], ["--engines", "drake,featherstone"]):
        out = subprocess.run(
            [*args, *extra],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )
        assert out.returncode in (0, 1), out.stderr
        assert "drake:" not in out.stderr, out.stderr


def _never(*args, **kwargs):  # pragma: no cover - must not be reached
    raise AssertionError("the check ran before the options were checked")


# --------------------------------------------------------------------------- every option, hostile values
class _ReachedError(Exception):
    """The command got past its option checks to the work (stubbed out here)."""


def _reached(*args, **kwargs):
    raise _ReachedError


HOSTILE = ["", " ", ",", "nan", "inf", "-1", "0", "1e400", "x", "/proc/x/y", "pinocchio,,pinocchio", "\u00e9"]


def _option_cases() -> list[tuple[str, str, str | None]]:
    """(command, option, value) for every option of every command, read from the app (so new flags
    are covered): each flag alone, each valued option with each hostile value."""
    import typer

    from bridge.cli import app

    cases = []
    for name, command in typer.main.get_command(app).commands.items():
        for param in command.params:
            if param.param_type_name != "option" or param.hidden:
                continue
            flag = max(param.opts, key=len)
            if flag in ("--all", "--native", "--help"):  # whole sweeps; tested above
                continue
            cases += [(name, flag, None)] if param.is_flag else [(name, flag, v) for v in HOSTILE]
    return cases


@pytest.mark.parametrize("model", [OFFSETS, str(MODELS / "mjcf" / "arm.xml")], ids=["urdf", "mjcf"])
def test_every_option_with_hostile_values_is_one_line_or_accepted(
    model: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each option of each command, alone or with a hostile value: exit 2 with one ``error:`` line
    naming the option's problem, or the command gets to its work (stubbed); never a traceback,
    another exit status or several lines."""
    if model.endswith(".xml"):
        pytest.importorskip("mujoco")
    import bridge.cli.convert
    import bridge.validation.check

    monkeypatch.setattr(bridge.validation.check, "cross_validate", _reached)
    monkeypatch.setattr(bridge.cli.convert, "write", _reached)
    monkeypatch.chdir(tmp_path)  # a --json or -o value such as "nan" is a file name here
    bad = []
    for command, flag, value in _option_cases():
        args = [command] + ([model] if command in ("check", "info", "convert") else [])
        args += [flag] if value is None else [flag, value]
        if command == "convert" and flag != "--output":
            args += ["-o", str(tmp_path / "out.urdf"), "--force"]
        res = run(*args)
        if isinstance(res.exception, _ReachedError) or res.exit_code == 0:
            continue
        lines = res.output.strip().splitlines()
        if res.exit_code != 2 or len(lines) != 1 or not lines[0].startswith("error: "):
            bad.append((args, res.exit_code, res.output[-400:], repr(res.exception)))
    assert not bad, bad


def test_empty_urdf_options_on_mjcf_are_refused_not_ignored() -> None:
    """``--joints ''`` locks every joint of a URDF; on an MJCF file it is refused like ``--joints j``."""
    pytest.importorskip("mujoco")
    arm = str(MODELS / "mjcf" / "arm.xml")
    for flag in ("--base", "--joints"):
        assert_one_line_error(run("info", arm, flag, ""), flag, "applies to URDF files only")
    assert_one_line_error(run("info", arm, "--base", "", "--strict"), "--base, --strict apply to URDF")


def test_a_nan_in_mjcf_is_one_line_from_the_real_process(tmp_path: Path) -> None:
    """Nothing but bridge's one line: MuJoCo's own "XML contains a 'NaN'" (printed from C) is gone."""
    pytest.importorskip("mujoco")
    path = tmp_path / "nan.xml"
    path.write_text(
        '<mujoco model="m"><worldbody><body name="arm"><joint name="hinge" axis="0 0 1"/>'
        '<inertial pos="0 0 0" mass="nan" diaginertia="0.1 0.1 0.1"/></body></worldbody></mujoco>'
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    for command in ("check", "info"):
        out = subprocess.run(
            [sys.executable, "-m", "bridge.cli", command, str(path)],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )
        assert out.returncode == 2 and out.stdout == "", (out.stdout, out.stderr)
        lines = out.stderr.strip().splitlines()
        assert len(lines) == 1 and "body 'arm': mass = 'nan' is not finite" in lines[0], out.stderr
