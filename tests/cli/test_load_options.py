"""The loading options are declared once (bridge.cli.options.LOAD_FLAGS) and every command taking a
model shows the same ones, in the same order, with the same help."""

from __future__ import annotations

import pytest
import typer
from hypothesis import given
from hypothesis import strategies as st

from bridge.cli import app
from bridge.cli.options import LOAD_FLAGS, LoadOptions
from tests.cli.runner import MODELS, run

#: command -> the declared flags it takes (convert writes a file: a fixed base is not its business)
COMMANDS = {
    "check": [f.flag for f in LOAD_FLAGS],
    "info": [f.flag for f in LOAD_FLAGS],
    "convert-states": [f.flag for f in LOAD_FLAGS],
    "convert": [f.flag for f in LOAD_FLAGS if f.flag != "--fixed-base"],
}


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_each_command_shows_the_declared_loading_options_in_order(name: str) -> None:
    command = typer.main.get_command(app).commands[name]
    declared = {f.flag: f for f in LOAD_FLAGS}
    shown = [p for p in command.params if p.param_type_name == "option" and p.opts[0] in declared]
    assert [p.opts[0] for p in shown] == COMMANDS[name]
    for param in shown:
        flag = declared[param.opts[0]]
        assert param.help == flag.help and param.hidden == (flag.sets is not None)
        assert param.default == flag.default
    # side by side, as one block of the help
    positions = [command.params.index(p) for p in shown]
    assert positions == list(range(positions[0], positions[0] + len(positions)))


@given(
    base=st.sampled_from([None, "", "wheel"]),
    joints=st.sampled_from([None, "", "spin,tilt"]),
    fixed=st.booleans(),
    mimic=st.sampled_from([None, "independent", "coupled", "error"]),
    mimic_independent=st.booleans(),
    nonphysical=st.booleans(),
    strict=st.booleans(),
)
def test_the_options_gathered_name_exactly_the_flags_given(
    base, joints, fixed, mimic, mimic_independent, nonphysical, strict
) -> None:
    values = {
        "base": base,
        "joints": joints,
        "fixed_base": fixed,
        "mimic": mimic,
        "mimic_independent": mimic_independent,
        "allow_nonphysical": nonphysical,
        "strict": strict,
    }
    options = LoadOptions.from_parameters(values)
    assert options.mimic == ("independent" if mimic_independent else mimic)
    expected = [
        flag
        for flag, value in [
            ("--base", base),
            ("--joints", joints),
            ("--fixed-base", fixed),
            ("--mimic", options.mimic),
            ("--allow-nonphysical", nonphysical),
            ("--strict", strict),
        ]
        if value is not None and value is not False
    ]
    assert options.given() == expected


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_bad_mimic_mode_is_one_line_in_every_command(command: str, tmp_path) -> None:
    args = {"convert": ["-o", str(tmp_path / "o.urdf")], "convert-states": [str(tmp_path / "in.npz"), "-o",
            str(tmp_path / "o.npz"), "--from", "pinocchio"]}.get(command, [])  # fmt: skip
    res = run(command, str(MODELS / "offsets.urdf"), *args, "--mimic", "sometimes")
    assert res.exit_code == 2 and res.output.startswith("error: "), res.output
    assert "--mimic must be independent, coupled or error, not 'sometimes'" in res.output
