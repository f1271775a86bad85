"""``bridge convert MODEL -o OUT``: re-root and/or reduce a model (URDF or MJCF) and write it as URDF,
or as MJCF when OUT ends with ``.xml`` or ``.mjcf`` (:func:`bridge.to_mjcf`, every number exact)."""

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
    output: Annotated[
        Path, typer.Option("-o", "--output", help="Output file: URDF, or MJCF for .xml/.mjcf.")
    ],
    force: ForceOpt = False,
    base: BaseOpt = None,
    joints: JointsOpt = None,
    mimic: MimicOpt = None,
    mimic_independent: MimicIndependentOpt = False,
    allow_nonphysical: NonPhysicalOpt = False,
    strict: StrictOpt = False,
) -> None:
    """Re-root and/or reduce a model and write it as URDF (or MJCF for an .xml/.mjcf output)."""
    from bridge.errors import BridgeError

    check_output(output, "-o/--output", force)
    options = LoadOptions(
        base, joints, False, mimic_mode(mimic, mimic_independent), allow_nonphysical, strict
    )
    try:
        m, _, warned = load_model(model, options)
        if output.suffix.lower() in (".xml", ".mjcf"):
            from bridge.backends.mujoco.mjcf import to_mjcf

            text = to_mjcf(m)
        else:
            text = m.to_urdf()
    except BridgeError as exc:
        raise fail(exc) from None
    print_warnings(warned)
    write(output, text, "-o/--output")
    typer.echo(f"wrote {output} ({len(m.links)} links, {m.n_dofs} DOFs, base {m.base})")
