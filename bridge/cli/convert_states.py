"""``bridge convert-states MODEL IN -o OUT --from LIB --to LIB``: a file of logged states in another
library's layout, with dynamics labels, on this machine or on a Dask cluster.

The files are NPZ, CSV or Parquet (by suffix; columns named ``<joint>/q0``, ...: docs/tutorials/
datasets.md); the conversion is :func:`bridge.convert_dataset`. On a terminal a progress bar shows
the rows done; otherwise one summary line is printed at the end. Bad input (the model, the files,
their columns or values, options that do not combine) exits 2 with one line naming the file, row
and column; the output is then not written (it is written to a temporary file and moved into place
at the end).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from bridge.cli.app import app, fail
from bridge.cli.loading import load_model, print_warnings
from bridge.cli.options import NO_LOAD_OPTIONS, ForceOpt, LoadOptions, ModelArg, with_load_options

if TYPE_CHECKING:
    from bridge.datasets.pipeline import Summary

__all__ = ["convert_states"]


@app.command("convert-states")
@with_load_options()
def convert_states(
    model: ModelArg,
    input: Annotated[Path, typer.Argument(help="States to convert: a .npz, .csv or .parquet file.")],
    output: Annotated[
        Path, typer.Option("-o", "--output", help="Output file: .npz, .csv or .parquet (need not match IN).")
    ],
    source: Annotated[
        str,
        typer.Option(
            "--from",
            help="The input's convention: mujoco, pinocchio, drake, featherstone, newton, "
            "jaxsim, or body/inertial/mixed (bridge's State).",
        ),
    ],
    target: Annotated[
        str | None, typer.Option("--to", help="The output's convention (without it: labels only).")
    ] = None,
    quantities: Annotated[
        str | None,
        typer.Option(
            "--quantities",
            help="Labels to compute, comma-separated: inverse_dynamics, mass_matrix, bias_forces, "
            "frame_transform:FRAME, frame_jacobian:FRAME, ... (docs/tutorials/datasets.md).",
        ),
    ] = None,
    engine: Annotated[str, typer.Option("--engine", help="Engine of the labels.")] = "featherstone",
    representation: Annotated[
        str, typer.Option("--representation", help="Representation of the labels: body, inertial or mixed.")
    ] = "mixed",
    rows: Annotated[int | None, typer.Option("--rows", help="Rows per block (default: about 32 MB).")] = None,
    normalize: Annotated[
        bool,
        typer.Option(
            "--normalize-quaternions", help="Accept quaternions of any non-zero norm (written normalised)."
        ),
    ] = False,
    scheduler: Annotated[
        str | None,
        typer.Option(
            "--scheduler", help="Run on a dask.distributed scheduler (ADDRESS, e.g. tcp://host:8786)."
        ),
    ] = None,
    workers: Annotated[
        int | None, typer.Option("--workers", help="Run on a local Dask cluster of N worker processes.")
    ] = None,
    force: ForceOpt = False,
    load: LoadOptions = NO_LOAD_OPTIONS,
) -> None:
    """Convert a file of states between libraries' layouts, and compute dynamics labels."""
    import warnings

    from bridge.cli.loading import split
    from bridge.errors import BridgeError, BridgeWarning

    if target is None and not quantities:
        raise fail("give --to (the output's convention) or --quantities (labels to compute), or both")
    try:
        m, _, warned = load_model(model, load)
    except BridgeError as exc:
        raise fail(exc) from None
    print_warnings(warned)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always", BridgeWarning)
        try:
            summary = _run(m, input, output, source, target, split(quantities) or [], engine, representation,
                           rows, normalize, scheduler, workers, force)  # fmt: skip
        except BridgeError as exc:
            raise fail(exc) from None
    print_warnings([str(w.message) for w in record if issubclass(w.category, BridgeWarning)])
    typer.echo(summary.line())


def _run(model: Any, input: Path, output: Path, source: str, target: str | None, quantities: list[str],
         engine: str, representation: str, rows: int | None, normalize: bool, scheduler: str | None,
         workers: int | None, force: bool) -> Summary:  # fmt: skip
    """The conversion, with a progress bar on a terminal."""
    import bridge.cli
    from bridge.datasets.pipeline import convert_dataset

    console = bridge.cli._console()
    args = dict(
        quantities=quantities, engine=engine, representation=representation, force=force, rows=rows,
        normalize=normalize, scheduler=scheduler, workers=workers,
    )  # fmt: skip
    if not console.is_terminal:
        return convert_dataset(model, input, output, source, target, **args)
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    with Progress(*columns, console=console, transient=True) as progress:
        task = progress.add_task(f"{input.name} -> {output.name}", total=None)

        def step(done: int, total: int | None) -> None:
            progress.update(task, completed=done, total=total)

        try:
            return convert_dataset(model, input, output, source, target, progress=step, **args)
        finally:
            progress.stop()
