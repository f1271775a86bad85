"""``bridge convert MODEL -o OUT``: re-root and/or reduce a model (any kind the format table reads) and
write it in the format OUT's suffix names (:func:`bridge.model.formats.output_kind`: ``.urdf`` URDF,
``.sdf`` SDFormat, ``.xml`` / ``.mjcf`` MJCF, every number exact), through the registry's writer of
that kind (:func:`bridge.backends.registry.exporter`). Another suffix is refused (exit 2, naming
the known ones). What the written file cannot carry (joint armature in URDF) is printed as a
warning."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from bridge.cli.app import app, fail
from bridge.cli.loading import load_model, model_inputs, print_warnings
from bridge.cli.options import NO_LOAD_OPTIONS, ForceOpt, LoadOptions, ModelArg, with_load_options
from bridge.cli.output import check_output, write
from bridge.model.formats import FORMATS, suffix_list

if TYPE_CHECKING:
    from bridge.model.model import Model

__all__ = ["convert"]


def _output_kind(output: Path) -> str:
    """The format ``output`` is written in, from its suffix (exit 2 naming the known suffixes)."""
    from bridge.errors import BridgeError
    from bridge.model.formats import output_kind

    try:
        return output_kind(output)
    except BridgeError as exc:
        raise fail(f"-o/--output: {exc}") from None


def _text(model: Model, kind: str) -> tuple[str, list[str]]:
    """The text of the ``kind`` file of ``model`` (the registry's writer of that kind of the format
    table) and the warnings writing it gave (what the format cannot carry)."""
    import warnings

    from bridge.backends.registry import exporter
    from bridge.errors import BridgeWarning

    write_text = exporter(kind)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always", BridgeWarning)
        text = write_text(model)
    return text, [str(w.message) for w in record if issubclass(w.category, BridgeWarning)]


def _written() -> str:
    """The formats ``convert`` writes and their suffixes, for its help."""
    return suffix_list() if FORMATS else "none"


@app.command(
    help="Re-root and/or reduce a model and write it in the format the output's suffix names: "
    f'{_written()}.\n\nThe file is written atomically (see "Output files"): created exclusively '
    "without --force, and never over the model file or a file it includes, even with --force."
)
@with_load_options(fixed_base=False)
def convert(
    model: ModelArg,
    output: Annotated[
        Path,
        typer.Option(
            "-o",
            "--output",
            help=f"Output file, in the format its suffix names: {_written()} (UTF-8, written "
            "atomically; an existing file only with --force).",
        ),
    ],
    force: ForceOpt = False,
    load: LoadOptions = NO_LOAD_OPTIONS,
) -> None:
    """Re-root and/or reduce a model and write it in the format the output's suffix names (the help
    above, from the format table)."""
    from bridge.errors import BridgeError

    inputs = model_inputs(model)
    check_output(output, "-o/--output", force, inputs)
    kind = _output_kind(output)
    try:
        m, _, warned = load_model(model, load)
        text, written = _text(m, kind)
    except BridgeError as exc:
        raise fail(exc) from None
    print_warnings(warned + written)
    write(output, text, "-o/--output", force, inputs)
    typer.echo(f"wrote {output} ({len(m.links)} links, {m.n_dofs} DOFs, base {m.base})")
