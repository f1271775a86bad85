"""``bridge convert MODEL -o OUT``: re-root and/or reduce a model (URDF, SDFormat or MJCF) and write it as
URDF, as SDFormat when OUT ends with ``.sdf`` (:meth:`Model.to_sdf`), or as MJCF when OUT ends with
``.xml`` or ``.mjcf`` (the registry's MJCF exporter,
:func:`bridge.backends.registry.exporter`: :func:`bridge.to_mjcf`, every number exact). What the
written file cannot carry (joint armature in URDF) is printed as a warning."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from bridge.cli.app import app, fail
from bridge.cli.loading import LoadOptions, load_model, mimic_mode, model_inputs, print_warnings
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

if TYPE_CHECKING:
    from bridge.model.model import Model

__all__ = ["convert"]


def _text(model: Model, output: Path) -> tuple[str, list[str]]:
    """The file's text (MJCF for an .xml/.mjcf ``output``, SDFormat for .sdf, else URDF) and the
    warnings writing it gave (what the format cannot carry)."""
    import warnings

    from bridge.backends.registry import exporter
    from bridge.errors import BridgeWarning

    suffix = output.suffix.lower()
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always", BridgeWarning)
        if suffix in (".xml", ".mjcf"):
            text = exporter("mjcf")(model)
        else:
            text = model.to_sdf() if suffix == ".sdf" else model.to_urdf()
    return text, [str(w.message) for w in record if issubclass(w.category, BridgeWarning)]


@app.command()
def convert(
    model: ModelArg,
    output: Annotated[
        Path,
        typer.Option(
            "-o",
            "--output",
            help="Output file: URDF, SDFormat for .sdf, or MJCF for .xml/.mjcf (UTF-8, written atomically; "
            "an existing file only with --force).",
        ),
    ],
    force: ForceOpt = False,
    base: BaseOpt = None,
    joints: JointsOpt = None,
    mimic: MimicOpt = None,
    mimic_independent: MimicIndependentOpt = False,
    allow_nonphysical: NonPhysicalOpt = False,
    strict: StrictOpt = False,
) -> None:
    """Re-root and/or reduce a model and write it as URDF (SDFormat for .sdf, MJCF for .xml/.mjcf).

    The file is written atomically (see "Output files"): created exclusively without --force, and
    never over the model file or a file it includes, even with --force."""
    from bridge.errors import BridgeError

    inputs = model_inputs(model)
    check_output(output, "-o/--output", force, inputs)
    options = LoadOptions(
        base, joints, False, mimic_mode(mimic, mimic_independent), allow_nonphysical, strict
    )
    try:
        m, _, warned = load_model(model, options)
        text, written = _text(m, output)
    except BridgeError as exc:
        raise fail(exc) from None
    print_warnings(warned + written)
    write(output, text, "-o/--output", force, inputs)
    typer.echo(f"wrote {output} ({len(m.links)} links, {m.n_dofs} DOFs, base {m.base})")
