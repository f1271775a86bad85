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
