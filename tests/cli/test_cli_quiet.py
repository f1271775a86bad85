"""The command line speaks alone: no library prints to the terminal, whatever the command.

Warp (under Newton) greets on stdout, lists its devices and every kernel module it loads, and its
native library says on stderr that there is no CUDA driver; jaxsim's SDFormat library warns about
gimbal lock; Drake logs its parser's warnings. bridge silences them (Warp's log level raised to
warnings and its native start-up message captured; Drake's logger; jaxsim's warnings), so the real
process's stderr holds bridge's own lines only and stdout bridge's report only.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from bridge.backends.registry import available_engines
from tests.cli.runner import MODELS

ROOT = Path(__file__).resolve().parents[2]
OFFSETS = str(MODELS / "offsets.urdf")
#: what the libraries print when not silenced
CHATTER = re.compile(
    r"Warp|CUDA|^Module |kernel cache|Gimbal|UserWarning|WARNING|DeprecationWarning|jax\._src|absl|XLA",
    re.MULTILINE | re.IGNORECASE,
)
LOUD = [e for e in ("newton", "drake", "jaxsim") if e in available_engines()]


def _bridge(*args: str, timeout: float = 900) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}
    return subprocess.run(
        [sys.executable, "-m", "bridge.cli", *args], capture_output=True, text=True, env=env, timeout=timeout
    )


def _assert_quiet(out: subprocess.CompletedProcess, allowed_stderr: tuple[str, ...] = ()) -> None:
    assert "Traceback" not in out.stderr, out.stderr
    for line in out.stderr.splitlines():
        assert line.startswith(allowed_stderr) if allowed_stderr else False, out.stderr
    assert CHATTER.search(out.stdout) is None, out.stdout


def test_help_and_version_print_nothing_else() -> None:
    for args in (["--help"], ["version"], ["models"]):
        out = _bridge(*args)
        assert out.returncode == 0, out.stderr
        _assert_quiet(out)


@pytest.mark.parametrize("name", ["offsets.urdf", "fixed_branches.urdf"])
def test_info_with_every_library_prints_its_tables_only(name: str) -> None:
    """(fixed_branches: MuJoCo merges its massless links, and to_mujoco's warning about the frames
    left without a site was printed as a Python warning with its source line: now a note)."""
    out = _bridge("info", str(MODELS / name))
    assert out.returncode == 0, out.stderr
    _assert_quiet(out)
    assert "DOF order" in out.stdout
    if name == "fixed_branches.urdf" and "mujoco" in available_engines():
        assert "- mujoco: model 'fixed_branches': frames on massless links" in out.stdout


@pytest.mark.skipif(not LOUD, reason="needs newton, drake or jaxsim")
def test_check_with_the_loud_engines_prints_the_report_only() -> None:
    out = _bridge("check", OFFSETS, "--samples", "1", "--representations", "mixed", "--engines",
                  ",".join(["pinocchio", *LOUD]))  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr
    _assert_quiet(out)
    assert "all engines agree" in out.stdout


@pytest.mark.skipif("newton" not in LOUD, reason="needs newton")
def test_an_error_after_warp_started_is_one_line() -> None:
    """Warp initialized (Newton's engine built), then a command fails: one ``error:`` line, the
    only output (Warp's native "no CUDA driver" line made it two)."""
    code = (
        "import sys, numpy as np, bridge\n"
        f"model = bridge.load_urdf({OFFSETS!r})\n"
        "bridge.KinDyn(model, 'newton').set_state(np.eye(4), np.zeros(model.n_dofs), np.zeros(6),"
        " np.zeros(model.n_dofs))\n"
        "from bridge.cli import app\n"
        "sys.argv = ['bridge', 'check', 'no_such_robot_file.urdf']\n"
        "app()\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 2, out.stderr
    assert out.stdout == ""
    assert len(out.stderr.splitlines()) == 1 and out.stderr.startswith("error: "), out.stderr
