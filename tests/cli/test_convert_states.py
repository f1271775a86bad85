"""``bridge convert-states``: a summary line (a progress bar on a terminal), the same file as
``bridge.convert_dataset``, a local Dask cluster giving the same bytes, and one ``error:`` line with
exit status 2 for every bad input, the output then not written."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pyarrow")

import bridge
from tests.cli.runner import run
from tests.datasets.helpers import native_states

_ROBOT = "solo12"


@pytest.fixture(scope="module")
def rollout(tmp_path_factory) -> Path:
    model = bridge.load_urdf(_ROBOT)
    q, v, a, _ = native_states(model, 1_500, "mujoco", 4)
    path = tmp_path_factory.mktemp("rollout") / "rollout.npz"
    np.savez(path, qpos=q, qvel=v, qacc=a, time=np.arange(1_500) * 0.002)
    return path


def test_converts_with_a_summary_line(rollout: Path, tmp_path: Path) -> None:
    out = tmp_path / "pin.parquet"
    res = run("convert-states", _ROBOT, str(rollout), "-o", str(out), "--from", "mujoco", "--to", "pinocchio",
              "--quantities", "inverse_dynamics,frame_transform:FL_FOOT", "--rows", "400")  # fmt: skip
    assert res.exit_code == 0, res.output
    lines = [line for line in res.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("converted 1,500 states (mujoco -> pinocchio, labels ")
    assert "inverse_dynamics, frame_transform[FL_FOOT]" in lines[0] and "this process" in lines[0]
    ref = tmp_path / "ref.parquet"
    bridge.convert_dataset(bridge.load_urdf(_ROBOT), rollout, ref, "mujoco", "pinocchio",
                           quantities=["inverse_dynamics", "frame_transform:FL_FOOT"], rows=400)  # fmt: skip
    assert out.read_bytes() == ref.read_bytes()


def test_a_terminal_shows_progress(rollout: Path, tmp_path: Path, monkeypatch) -> None:
    from rich.console import Console

    import bridge.cli

    buffer = io.StringIO()
    monkeypatch.setattr(bridge.cli, "_console", lambda: Console(file=buffer, width=100, force_terminal=True))
    res = run("convert-states", _ROBOT, str(rollout), "-o", str(tmp_path / "o.csv"), "--from", "mujoco",
              "--to", "drake", "--rows", "100")  # fmt: skip
    assert res.exit_code == 0, res.output
    assert "rollout.npz -> o.csv" in buffer.getvalue() and "converted 1,500 states" in res.output


def test_a_local_cluster_writes_the_same_file(rollout: Path, tmp_path: Path) -> None:
    one, two = tmp_path / "one.npz", tmp_path / "two.npz"
    args = [
        _ROBOT,
        str(rollout),
        "--from",
        "mujoco",
        "--to",
        "newton",
        "--quantities",
        "mass_matrix",
        "--rows",
        "300",
    ]
    assert run("convert-states", *args, "-o", str(one)).exit_code == 0
    res = run("convert-states", *args, "-o", str(two), "--workers", "2")
    assert res.exit_code == 0, res.output
    assert "a local cluster of 2 worker processes" in res.output
    a, b = np.load(one), np.load(two)
    assert sorted(a.files) == sorted(b.files)
    for key in a.files:
        assert np.array_equal(a[key], b[key]), key


def _bad_csv(tmp_path: Path) -> tuple[Path, str]:
    """A Pinocchio CSV with 'oops' in row 12, column 9; the file and that column's name."""
    from bridge.datasets.convert import state_columns

    model = bridge.load_urdf(_ROBOT)
    q, v, _, _ = native_states(model, 30, "pinocchio", 2)
    names = [*state_columns(model, "pinocchio", ("q",)), *state_columns(model, "pinocchio", ("v",))]
    rows = [[repr(float(x)) for x in row] for row in np.concatenate([q, v], -1)]
    rows[11][8] = "oops"
    path = tmp_path / "bad.csv"
    path.write_text(",".join(names) + "\n" + "\n".join(",".join(r) for r in rows) + "\n")
    return path, names[8]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--from", "mujoco"], "give --to (the output's convention) or --quantities"),
        (["--from", "mujoco", "--to", "bullet"], "unknown velocity convention 'bullet'"),
        (
            ["--from", "mujoco", "--to", "drake", "--quantities", "mass_matrx"],
            "unknown quantity 'mass_matrx'",
        ),
        (["--from", "mujoco", "--quantities", "mass_matrix", "--engine", "havok"], "unknown engine 'havok'"),
        (
            ["--from", "mujoco", "--to", "drake", "--joints", "FL_HAA,FL_HFE"],
            "the configuration array has 19 columns, but model 'solo' has 9 in mujoco's layout",
        ),
        (
            ["--from", "mujoco", "--to", "drake", "--workers", "2", "--scheduler", "tcp://x:1"],
            "do not combine",
        ),
        (
            ["--from", "mujoco", "--to", "drake", "--representation", "sideways"],
            "unknown velocity representation",
        ),
    ],
)
def test_bad_input_exits_2_with_one_line(
    rollout: Path, tmp_path: Path, args: list[str], message: str
) -> None:
    out = tmp_path / "out.npz"
    res = run("convert-states", _ROBOT, str(rollout), "-o", str(out), *args)
    assert res.exit_code == 2, res.output
    lines = [line for line in res.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], lines
    assert not out.exists()


def test_a_bad_cell_is_named_and_nothing_is_written(tmp_path: Path) -> None:
    src, column = _bad_csv(tmp_path)
    out = tmp_path / "out.parquet"
    res = run("convert-states", _ROBOT, str(src), "-o", str(out), "--from", "pinocchio", "--to", "mujoco")
    assert res.exit_code == 2
    lines = [line for line in res.output.splitlines() if line.strip()]
    assert lines == [f"error: {src}, row 12 (line 13), column {column!r}: 'oops' is not a number"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.csv"]


def test_an_existing_output_needs_force(rollout: Path, tmp_path: Path) -> None:
    out = tmp_path / "o.npz"
    out.write_bytes(b"precious")
    base = ["convert-states", _ROBOT, str(rollout), "-o", str(out), "--from", "mujoco", "--to", "drake"]
    res = run(*base)
    assert res.exit_code == 2 and "exists; add --force" in res.output and out.read_bytes() == b"precious"
    assert run(*base, "--force").exit_code == 0 and np.load(out)["q"].shape == (1_500, 19)
    res = run(
        "convert-states",
        _ROBOT,
        str(rollout),
        "-o",
        str(rollout),
        "--from",
        "mujoco",
        "--to",
        "drake",
        "--force",
    )
    assert res.exit_code == 2 and "is an input of this command" in res.output
