"""``bridge convert MODEL -o OUT``: re-root and/or reduce a model and write it as URDF."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from bridge.cli.app import app, fail
from bridge.cli.loading import LoadOptions, load_model, mimic_mode, print_warnings
from bridge.cli.options import (
    BaseOpt,
    ForceOpt,
    JointsOpt,
    MimicIndependentOpt,
    MimicOpt,
    ModelArg,
    NonPhysicalOpt,
    StrictOpt,
)
from bridge.cli.output import check_output, write

__all__ = ["convert"]


@app.command()
def convert(
    model: ModelArg,
    output: Annotated[Path, typer.Option("-o", "--output", help="Output URDF file.")],
    force: ForceOpt = False,
    base: BaseOpt = None,
    joints: JointsOpt = None,
    mimic: MimicOpt = None,
    mimic_independent: MimicIndependentOpt = False,
    allow_nonphysical: NonPhysicalOpt = False,
    strict: StrictOpt = False,
) -> None:
    """Re-root and/or reduce a model and write it as URDF."""
    from bridge.errors import BridgeError

    check_output(output, "-o/--output", force)
    options = LoadOptions(
        base, joints, False, mimic_mode(mimic, mimic_independent), allow_nonphysical, strict
    )
    try:
        m, _, warned = load_model(model, options)
        text = m.to_urdf()
    except BridgeError as exc:
        raise fail(exc) from None
    print_warnings(warned)
    write(output, text, "-o/--output")
    typer.echo(f"wrote {output} ({len(m.links)} links, {m.n_dofs} DOFs, base {m.base})")
