"""The options several ``bridge`` commands share (typer ``Annotated`` types)."""

from __future__ import annotations

from typing import Annotated

import typer

__all__ = [
    "BaseOpt",
    "FixedOpt",
    "ForceOpt",
    "JointsOpt",
    "MimicIndependentOpt",
    "MimicOpt",
    "ModelArg",
    "NonPhysicalOpt",
    "StrictOpt",
]

ModelArg = Annotated[
    str, typer.Argument(help="A URDF file, or the name of a robot from icub-models / example-robot-data.")
]
BaseOpt = Annotated[str | None, typer.Option("--base", help="Base link (the tree is re-rooted there).")]
JointsOpt = Annotated[
    str | None,
    typer.Option("--joints", help="Comma-separated DOF order; movable joints left out are locked at 0."),
]
FixedOpt = Annotated[bool, typer.Option("--fixed-base", help="Fix the base link to the world.")]
MimicOpt = Annotated[
    str | None,
    typer.Option(
        "--mimic",
        help="Mimic joints: independent (as Pinocchio/iDynTree load them; the default, with a warning), "
        "coupled (one DOF per master) or error.",
    ),
]
MimicIndependentOpt = Annotated[
    bool, typer.Option("--mimic-independent", help="Same as --mimic independent.", hidden=True)
]
NonPhysicalOpt = Annotated[
    bool,
    typer.Option(
        "--allow-nonphysical", help="Do not check link inertias (no warning for non-physical ones)."
    ),
]
StrictOpt = Annotated[
    bool,
    typer.Option(
        "--strict",
        help="Refuse what bridge warns about (non-physical inertias, mimic joints, a bogus XML declaration).",
    ),
]
ForceOpt = Annotated[
    bool,
    typer.Option(
        "--force",
        help="Replace the output file if it exists (atomically; never an input of the command, a FIFO "
        "or a device).",
    ),
]
