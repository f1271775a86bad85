"""Matching a file's columns to a layout by name: any order, other columns carried through, and a
clear error for every column that cannot be placed or is missing."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bridge
from bridge.datasets.columns import parse, select
from bridge.datasets.layout import layout
from bridge.errors import DatasetError

_MODEL = bridge.load_urdf("solo12")
_LAY = layout(_MODEL, "mujoco")
_STATE = [*_LAY.columns("q"), *_LAY.columns("v")]


@settings(max_examples=30)
@given(order=st.permutations(range(len(_STATE) + 2)))
def test_columns_in_any_order_are_placed_by_name(order: list[int]) -> None:
    names = [*_STATE, "time", "episode"]
    shuffled = [names[i] for i in order]
    sel = select(shuffled, _LAY, "f.csv")
    for field in ("q", "v"):
        assert [shuffled[i] for i in sel.fields[field]] == list(_LAY.columns(field))
    assert sorted(shuffled[i] for i in sel.passthrough) == ["episode", "time"]
    assert set(sel.fields) == {"q", "v"}


def test_parse_reads_the_last_slash() -> None:
    assert parse("robot/l_knee/q0") == ("robot/l_knee", "q", 0)
    assert parse("base/tau5") == ("base", "tau", 5)
    assert parse("time") is None and parse("x/q01") is None and parse("/q0") is None and parse("x/w0") is None


def test_a_header_of_joint_names_reads_as_their_positions() -> None:
    model = bridge.load_urdf("iCubGazeboV2_5", floating=False)
    lay = layout(model, "pinocchio")
    names = list(reversed(model.dof_names))
    sel = select(names, lay, "joints.csv")
    assert [names[i] for i in sel.fields["q"]] == [c.rpartition("/")[0] for c in lay.columns("q")]
    with pytest.raises(DatasetError, match="are the same coordinate"):
        select([*names, f"{names[0]}/q0"], lay, "joints.csv")


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda n: n[:-1], r"f\.csv: missing velocity column '[^']+/v0' \(owner"),
        (lambda n: [c for c in n if not c.startswith("base/q")], r"missing configuration columns 'base/q0'"),
        (
            lambda n: [*n, "FR_KFE_x/q0"],
            r"column 'FR_KFE_x/q0' names joint 'FR_KFE_x', which model 'solo' does not have as a DOF "
            r"\(did you mean 'FR_KFE'",
        ),
        (
            lambda n: [*n, "FR_KFE/q1"],
            r"column 'FR_KFE/q1': joint 'FR_KFE' \(revolute\) has 1 configuration entry",
        ),
        (lambda n: [*n, "base/v6"], r"column 'base/v6': the floating base has 6 velocity entries"),
        (lambda n: [*n, n[3]], r"column 'base/q3' appears twice \(columns 4 and"),
        (lambda n: [c for c in n if "/q" not in c], r"no configuration columns"),
        (lambda n: [*n, "base"], r"column 'base': the base has several columns"),
        (lambda n: [*n, "FR_KFE/a0"], r"missing acceleration columns"),
    ],
    ids=[
        "missing v",
        "missing base",
        "unknown joint",
        "extra entry",
        "base entry",
        "twice",
        "no q",
        "base",
        "partial a",
    ],
)
def test_bad_columns_are_named(edit, message: str) -> None:
    with pytest.raises(DatasetError, match=message):
        select(edit(list(_STATE)), _LAY, "f.csv")


def test_base_columns_on_a_fixed_base_are_refused() -> None:
    model = bridge.load_urdf("solo12", floating=False)
    lay = layout(model, "mujoco")
    with pytest.raises(DatasetError, match="has a fixed base"):
        select([*lay.columns("q"), "base/q0"], lay, "f.csv")
