"""The ``bridge`` command line (typer + rich). Heavy imports happen inside the commands.

Exit status: 0 when everything agrees, 1 when engines disagree, 2 for bad input (a one-line
message on stderr names the problem).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

app = typer.Typer(
    name="bridge",
    help="Make rigid-body dynamics agree across Pinocchio, iDynTree and Featherstone conventions.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

ModelArg = Annotated[
    str, typer.Argument(help="A URDF file, or the name of a robot from icub-models / example-robot-data.")
]
BaseOpt = Annotated[str | None, typer.Option("--base", help="Base link (the tree is re-rooted there).")]
JointsOpt = Annotated[
    str | None,
    typer.Option("--joints", help="Comma-separated DOF order; movable joints left out are locked at 0."),
]
FixedOpt = Annotated[bool, typer.Option("--fixed-base", help="Fix the base link to the world.")]


def _fail(message: str, code: int = 2) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code)


def _split(value: str | None) -> list[str] | None:
    if value is None:
        return None
    items = [v.strip() for v in value.split(",") if v.strip()]
    return items


def _load(model: str, base: str | None, joints: str | None, fixed: bool):
    """Resolve and load a model; BridgeErrors propagate (the caller turns them into exit 2)."""
    from bridge.model.urdf import load_urdf
    from bridge.robots import resolve_model_path

    path = resolve_model_path(model)
    return load_urdf(path, base=base, joints=_split(joints), floating=not fixed), path


@app.callback()
def main() -> None:
    """bridge: convert and cross-validate rigid-body dynamics between libraries."""


@app.command()
def version() -> None:
    """Print the bridge version."""
    from bridge import __version__

    typer.echo(__version__)


@app.command()
def models() -> None:
    """List the robot names MODEL accepts (from the installed icub-models / example-robot-data)."""
    from bridge.robots import robot_names, robot_path

    for name in robot_names():
        typer.echo(f"{name}\t{robot_path(name)}")


@app.command()
def info(
    model: ModelArg, base: BaseOpt = None, joints: JointsOpt = None, fixed_base: FixedOpt = False
) -> None:
    """Show the model as each convention sees it: counts, DOF orders and the permutation between them."""
    from rich.console import Console
    from rich.table import Table

    from bridge.errors import BridgeError

    try:
        m, path = _load(model, base, joints, fixed_base)
        from bridge.info import describe

        d = describe(m, path)
    except BridgeError as exc:
        raise _fail(str(exc)) from None
    console = Console()
    console.print(
        f"[bold]{m.name}[/bold]  base [cyan]{m.base}[/cyan]  "
        f"{'floating' if m.floating else 'fixed'} base  total mass {m.total_mass:.6g} kg"
    )
    table = Table(title="counts")
    table.add_column("")
    for col in d["columns"]:
        table.add_column(col, justify="right")
    for row, values in d["counts"].items():
        table.add_row(row, *[str(v) for v in values])
    console.print(table)
    order = Table(title="DOF order (index in each convention)")
    order.add_column("joint")
    for col in d["orders"]:
        order.add_column(col, justify="right")
    for k, name in enumerate(m.dof_names):
        order.add_row(name, *[str(d["orders"][col][k]) for col in d["orders"]])
    console.print(order)
    for note in d["notes"]:
        console.print(f"- {note}")


@app.command()
def check(
    model: Annotated[
        str | None, typer.Argument(help="A URDF file or a robot name (see `bridge models`).")
    ] = None,
    base: BaseOpt = None,
    joints: JointsOpt = None,
    fixed_base: FixedOpt = False,
    samples: Annotated[int, typer.Option(help="Number of random states.")] = 20,
    seed: Annotated[int, typer.Option(help="Random seed.")] = 0,
    engines: Annotated[str, typer.Option(help="Comma-separated engines.")] = "pinocchio,idyntree",
    representations: Annotated[
        str, typer.Option(help="Comma-separated representations.")
    ] = "body,inertial,mixed",
    rtol: Annotated[float, typer.Option(help="Relative tolerance (norm-wise).")] = 1e-10,
    json_file: Annotated[Path | None, typer.Option("--json", help="Write the full report as JSON.")] = None,
    all_models: Annotated[bool, typer.Option("--all", help="Check every robot of `bridge models`.")] = False,
) -> None:
    """Do the engines agree on this robot? Exit 0 if all agree, 1 if any disagree, 2 for bad input."""
    from rich.console import Console
    from rich.progress import Progress

    from bridge.check import cross_validate
    from bridge.errors import BridgeError
    from bridge.robots import robot_names

    console = Console()
    if all_models == (model is not None):
        raise _fail("give exactly one of MODEL or --all")
    names = robot_names() if all_models else [model]
    reports = []
    status = 0
    try:
        engine_list = _split(engines) or []
        rep_list = _split(representations) or []
    except BridgeError as exc:
        raise _fail(str(exc)) from None
    with Progress(console=console, transient=True) as progress:
        overall = progress.add_task("models", total=len(names)) if all_models else None
        for name in names:
            try:
                m, _ = _load(name, base, joints, fixed_base)
            except BridgeError as exc:
                if not all_models:
                    raise _fail(str(exc)) from None
                console.print(f"[yellow]skipped {name}: {exc}[/yellow]")
                if overall is not None:
                    progress.advance(overall)
                continue
            task = progress.add_task(f"{m.name}", total=len(rep_list) * len(engine_list))

            def step(desc: str, task=task, label=m.name) -> None:
                progress.update(task, advance=1, description=f"{label}: {desc}")

            try:
                report = cross_validate(
                    m,
                    engines=engine_list,
                    representations=rep_list,
                    samples=samples,
                    seed=seed,
                    rtol=rtol,
                    progress=step,
                )
            except BridgeError as exc:
                raise _fail(str(exc)) from None
            progress.remove_task(task)
            if overall is not None:
                progress.advance(overall)
            reports.append(report)
            if not report.ok:
                status = 1
    for report in reports:
        _print_report(console, report, compact=all_models)
    if json_file is not None:
        import json

        payload = reports[0].to_dict() if len(reports) == 1 else [r.to_dict() for r in reports]
        json_file.write_text(json.dumps(payload, indent=2))
    raise typer.Exit(status)


def _print_report(console, report, compact: bool = False) -> None:
    from rich.table import Table

    if compact:
        worst = max((r.max_rel for r in report.results), default=0.0)
        mark = "[green]ok[/green]" if report.ok else f"[red]{len(report.failures)} disagree[/red]"
        console.print(f"{report.model:<40} {mark}  worst rel {worst:.1e}  ({report.seconds:.1f} s)")
        return
    table = Table(title=f"{report.model}: {report.samples} samples, seed {report.seed}, rtol {report.rtol:g}")
    for col, justify in (
        ("quantity", "left"),
        ("repr", "left"),
        ("engines", "left"),
        ("max abs", "right"),
        ("max rel", "right"),
        ("result", "left"),
    ):
        table.add_column(col, justify=justify)
    for r in report.summary_rows():
        ok = r.passed
        result = (
            "[green]ok[/green]"
            if ok
            else f"[red]FAIL[/red] sample {r.worst_sample}" + (f" frame {r.frame}" if r.frame else "")
        )
        table.add_row(r.quantity, r.representation, r.engines, f"{r.max_abs:.1e}", f"{r.max_rel:.1e}", result)
    console.print(table)
    verdict = (
        "[green]all engines agree[/green]"
        if report.ok
        else f"[red]{len(report.failures)} comparisons disagree[/red]"
    )
    console.print(f"{verdict} ({report.seconds:.1f} s)")


@app.command()
def convert(
    model: ModelArg,
    output: Annotated[Path, typer.Option("-o", "--output", help="Output URDF file.")],
    base: BaseOpt = None,
    joints: JointsOpt = None,
) -> None:
    """Re-root and/or reduce a model and write it as URDF."""
    from bridge.errors import BridgeError

    try:
        m, _ = _load(model, base, joints, False)
        text = m.to_urdf()
    except BridgeError as exc:
        raise _fail(str(exc)) from None
    output.write_text(text)
    typer.echo(f"wrote {output} ({len(m.links)} links, {m.n_dofs} DOFs, base {m.base})")


def run() -> None:  # pragma: no cover - console entry point alias
    app()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(app())
