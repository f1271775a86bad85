"""The ``bridge`` command line (typer + rich). Heavy imports happen inside the commands.

Exit status: 0 when everything agrees, 1 when engines disagree, 2 for bad input or misuse (one line
on stderr, ``error: ...``, names the problem; no traceback, no usage box). ``check --all`` lists the
robots it skips because they do not load (a property of those files, not a disagreement between
engines) and counts them in its last line; its exit status ignores them (0 if every robot that
loads agrees) unless ``--fail-on-skip`` is given, which makes it 3 when robots were skipped and
none disagreed. Output files (``--json``, ``-o``) are checked before any work
starts, and an existing file is only replaced with ``--force``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

try:  # typer >= 0.2x carries its own copy of click
    from typer._click import exceptions as _click_errors
except ImportError:  # pragma: no cover - older typer on click
    from click import exceptions as _click_errors

#: exit status of ``check --all --fail-on-skip`` when robots were skipped (and none disagreed)
EXIT_SKIPPED = 3


class _OneLineErrors(TyperGroup):
    """The command group, with every usage error (bad option value, missing option, unknown
    command) and every stray :class:`bridge.BridgeError` printed as one ``error:`` line, exit 2."""

    def main(self, args: Any = None, prog_name: Any = None, complete_var: Any = None,
             standalone_mode: bool = True, **extra: Any) -> Any:  # fmt: skip
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        from bridge.errors import BridgeError

        try:
            rv = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except _click_errors.NoArgsIsHelpError as exc:
            exc.show()  # `bridge` alone (or a group without a command): the help, as usual
            sys.exit(exc.exit_code)
        except _click_errors.ClickException as exc:
            command = exc.ctx.command_path if getattr(exc, "ctx", None) is not None else "bridge"
            message = " ".join(exc.format_message().split())
            typer.echo(f"error: {command}: {message} (see {command} --help)", err=True)
            sys.exit(2)
        except typer.Abort:
            typer.echo("error: aborted", err=True)
            sys.exit(1)
        except BridgeError as exc:
            typer.echo(f"error: {' '.join(str(exc).split())}", err=True)
            sys.exit(2)
        sys.exit(rv if isinstance(rv, int) else 0)


app = typer.Typer(
    cls=_OneLineErrors,
    name="bridge",
    help="Make rigid-body dynamics agree across Pinocchio, iDynTree, Featherstone and Drake conventions.",
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


def _fail(message: str, code: int = 2) -> typer.Exit:
    typer.echo(f"error: {' '.join(str(message).split())}", err=True)
    return typer.Exit(code)


ForceOpt = Annotated[bool, typer.Option("--force", help="Replace the output file if it exists.")]


def _check_output(path: Path | None, option: str, force: bool) -> None:
    """Fail (exit 2) before any work if ``path`` cannot be written: its directory does not exist,
    it is a directory, or it exists and ``--force`` was not given."""
    if path is None:
        return
    parent = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise _fail(f"{option} {str(path)!r} is a directory; give a file name")
    if not parent.is_dir():
        raise _fail(f"{option} {str(path)!r}: directory {str(parent)!r} does not exist")
    if path.exists() and not force:
        raise _fail(f"{option} {str(path)!r} exists; add --force to replace it")
    import os

    if not os.access(parent, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise _fail(f"{option} {str(path)!r} is not writable")


def _write(path: Path, text: str, option: str) -> None:
    try:
        path.write_text(text)
    except OSError as exc:
        raise _fail(f"{option} {str(path)!r}: cannot write ({exc.strerror or exc})") from None


def _split(value: str | None) -> list[str] | None:
    if value is None:
        return None
    items = [v.strip() for v in value.split(",") if v.strip()]
    return items


def _load(
    model: str,
    base: str | None,
    joints: str | None,
    fixed: bool,
    mimic: str | None = None,
    nonphysical: bool = False,
    strict: bool = False,
):
    """Resolve and load a model: (model, path, warning messages). BridgeErrors propagate (the
    caller turns them into exit 2); warnings are returned, never raised."""
    import warnings

    from bridge.errors import BridgeWarning, InertiaError, UnsupportedError
    from bridge.model.urdf import load_urdf
    from bridge.robots import resolve_model_path

    path = resolve_model_path(model)
    try:
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always", BridgeWarning)
            loaded = load_urdf(
                path,
                base=base,
                joints=_split(joints),
                floating=not fixed,
                check_inertia=not nonphysical,
                mimic=mimic,
                strict=strict,
            )
    except InertiaError as exc:
        raise InertiaError(f"{exc} (without --strict it loads with a warning)") from None
    except UnsupportedError as exc:
        if "mimic" in str(exc):
            raise UnsupportedError(
                f"{str(exc).split('; ')[0]} (use --mimic independent or coupled)"
            ) from None
        raise
    messages = [str(w.message) for w in record if issubclass(w.category, BridgeWarning)]
    return loaded, path, messages


def _mimic_mode(mimic: str | None, mimic_independent: bool) -> str | None:
    if mimic_independent:
        return "independent"
    if mimic is not None and mimic not in ("independent", "coupled", "error"):
        raise _fail(f"--mimic must be independent, coupled or error, not {mimic!r}")
    return mimic


def _print_warnings(messages: list[str]) -> None:
    for message in messages:
        typer.echo(f"warning: {message}", err=True)


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


def _console():
    """A rich console: the terminal's width, or (piped) as wide as the tables need (nothing cut)."""
    from rich.console import Console

    console = Console()
    if not console.is_terminal:
        console = Console(width=max(console.width, 200))
    return console


def _table(title: str, first: str, columns: list[str], caption: str | None = None):
    """A compact table: the first column never truncated (folded if it has to), numbers right-aligned."""
    from rich import box
    from rich.table import Table

    table = Table(title=title, caption=caption, box=box.SIMPLE_HEAD, pad_edge=False, title_justify="left")
    table.add_column(first, no_wrap=True, overflow="fold")
    for col in columns:
        table.add_column(col, justify="right", overflow="fold")
    return table


@app.command()
def info(
    model: ModelArg,
    base: BaseOpt = None,
    joints: JointsOpt = None,
    fixed_base: FixedOpt = False,
    mimic: MimicOpt = None,
    mimic_independent: MimicIndependentOpt = False,
    allow_nonphysical: NonPhysicalOpt = False,
    strict: StrictOpt = False,
) -> None:
    """Show the model as each convention sees it: counts, DOF orders and the permutation between them."""
    from bridge.errors import BridgeError

    try:
        m, path, warned = _load(
            model, base, joints, fixed_base, _mimic_mode(mimic, mimic_independent), allow_nonphysical, strict
        )
        from bridge.cli.info import describe

        d = describe(m, path)
    except BridgeError as exc:
        raise _fail(str(exc)) from None
    _print_warnings(warned)
    console = _console()
    console.print(
        f"[bold]{m.name}[/bold]  base [cyan]{m.base}[/cyan]  "
        f"{'floating' if m.floating else 'fixed'} base  total mass {m.total_mass:.6g} kg",
        highlight=False,
    )
    table = _table("counts, as bridge converts the model", "", d["columns"])
    for row, values in d["counts"].items():
        table.add_row(row, *[str(v) for v in values])
    console.print(table)
    loaders = d["loaders"]
    if loaders is not None:
        table = _table("counts, as each library's own URDF loader reads the file", "", loaders["columns"])
        for row, values in loaders["counts"].items():
            table.add_row(row, *[str(v) for v in values])
        console.print(table)
    full = getattr(m, "full", None) or m
    caption = (
        "0-based position of each joint in each joint-space vector: bridge's s, pinocchio's v without the "
        "6 free-flyer entries (idx_v - 6), idyntree's joint positions, featherstone's q (real joints)"
    )
    order = _table("DOF order in bridge's conversions", "joint", list(d["orders"]))
    for k, name in enumerate(full.dof_names):
        order.add_row(name, *[str(d["orders"][col][k]) for col in d["orders"]])
    console.print(order)
    if loaders is not None:
        order = _table("DOF order of the libraries' own URDF loaders", "joint", list(loaders["orders"]))
        for k, name in enumerate(full.dof_names):
            order.add_row(name, *[str(v[k]) if v[k] >= 0 else "-" for v in loaders["orders"].values()])
        console.print(order)
    console.print(caption, highlight=False)
    for note in d["notes"]:
        console.print(f"- {note}", highlight=False)


@app.command()
def check(
    model: Annotated[
        str | None, typer.Argument(help="A URDF file or a robot name (see `bridge models`).")
    ] = None,
    base: BaseOpt = None,
    joints: JointsOpt = None,
    fixed_base: FixedOpt = False,
    mimic: MimicOpt = None,
    mimic_independent: MimicIndependentOpt = False,
    allow_nonphysical: NonPhysicalOpt = False,
    strict: StrictOpt = False,
    samples: Annotated[int, typer.Option(help="Number of random states.")] = 20,
    seed: Annotated[int, typer.Option(help="Random seed.")] = 0,
    engines: Annotated[
        str | None, typer.Option(help="Comma-separated engines (default: every installed engine).")
    ] = None,
    representations: Annotated[
        str, typer.Option(help="Comma-separated representations.")
    ] = "body,inertial,mixed",
    rtol: Annotated[float, typer.Option(help="Relative tolerance (norm-wise).")] = 1e-10,
    json_file: Annotated[Path | None, typer.Option("--json", help="Write the full report as JSON.")] = None,
    force: ForceOpt = False,
    all_models: Annotated[
        bool,
        typer.Option(
            "--all",
            help="Check every robot of `bridge models` (robots that do not load are listed as skipped).",
        ),
    ] = False,
    fail_on_skip: Annotated[
        bool,
        typer.Option("--fail-on-skip", help="With --all: exit 3 if robots were skipped (and none disagree)."),
    ] = False,
    native: Annotated[
        bool,
        typer.Option(
            "--native",
            help="Compare Pinocchio's, iDynTree's (and Drake's) own URDF loaders on the file, and explain "
            "differences (with --engines ...,mujoco also MuJoCo's URDF compiler).",
        ),
    ] = False,
) -> None:
    """Do the engines agree on this robot? Exit 0 if all agree, 1 if any disagree, 2 for bad input,
    3 with --all --fail-on-skip if none disagrees but some robots were skipped (they do not load)."""
    from rich.console import Console
    from rich.progress import Progress

    from bridge.errors import BridgeError
    from bridge.robots import robot_names
    from bridge.validation.check import available_engines, cross_validate

    console = Console()
    if all_models == (model is not None):
        raise _fail("give exactly one of MODEL or --all")
    if samples < 1:
        raise _fail(f"--samples must be at least 1, not {samples}")
    if seed < 0:
        raise _fail(f"--seed must be a non-negative integer, not {seed}")
    if not rtol > 0 or rtol == float("inf"):
        raise _fail(f"--rtol must be a positive number, not {rtol}")
    _check_output(json_file, "--json", force)
    mimic_mode = _mimic_mode(mimic, mimic_independent)
    engine_list = _split(engines) if engines is not None else None  # None: every installed engine
    rep_list = _split(representations) or []
    _check_names(engine_list if engine_list is not None else list(available_engines()), rep_list)
    n_warned = 0
    if native and not all_models:
        _check_native(console, model, samples, seed, rtol, representations, json_file, engines)
    names = robot_names() if all_models else [model]
    preloaded = None
    if not all_models:  # before the progress display, so that an error is one line
        try:
            preloaded = _load(model, base, joints, fixed_base, mimic_mode, allow_nonphysical, strict)
        except BridgeError as exc:
            raise _fail(str(exc)) from None
    reports = []
    labels: list[str] = []
    skipped: list[tuple[str, str]] = []
    status = 0
    with Progress(console=console, transient=True) as progress:
        overall = progress.add_task("models", total=len(names)) if all_models else None
        for name in names:
            try:
                m, _, warned = preloaded or _load(
                    name, base, joints, fixed_base, mimic_mode, allow_nonphysical, strict
                )
            except BridgeError as exc:
                msg = str(exc)  # the robot's name is shown: drop the path the message starts with
                skipped.append((name, msg.split(": ", 1)[1] if msg.startswith("/") and ": " in msg else msg))
                if overall is not None:
                    progress.advance(overall)
                continue
            if all_models:
                n_warned += bool(warned)
            else:
                progress.stop()
                _print_warnings(warned)
                progress.start()
            n_engines = len(engine_list) if engine_list is not None else len(available_engines())
            task = progress.add_task(f"{m.name}", total=len(rep_list) * n_engines)

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
                progress.stop()
                raise _fail(f"{name}: {exc}" if all_models else str(exc)) from None
            progress.remove_task(task)
            if overall is not None:
                progress.advance(overall)
            reports.append(report)
            labels.append(name)
            if not report.ok:
                status = 1
    for label, report in zip(labels, reports, strict=True):
        _print_report(console, report, compact=all_models, label=label)
    if all_models:
        for name, why in skipped:
            console.print(f"[yellow]skipped[/yellow] {name}: {why}", highlight=False)
        bad = sum(not r.ok for r in reports)
        warned_note = f"; {n_warned} loaded with warnings (see `bridge info NAME`)" if n_warned else ""
        console.print(
            f"{len(reports) - bad} robots agree, {bad} disagree, {len(skipped)} skipped because they do "
            f"not load (reasons above){warned_note}"
        )
        if skipped and status == 0 and fail_on_skip:
            status = EXIT_SKIPPED  # the check is incomplete
    if json_file is not None:
        import json

        payload = reports[0].to_dict() if len(reports) == 1 else [r.to_dict() for r in reports]
        _write(json_file, json.dumps(payload, indent=2), "--json")
    raise typer.Exit(status)


def _check_names(engine_list: list[str], rep_list: list[str]) -> None:
    """Fail (exit 2) before any work on an unknown engine or representation, or an empty list."""
    from bridge.backends.registry import engine_names
    from bridge.conventions.state import Representation
    from bridge.errors import BridgeError

    if not engine_list or not rep_list:
        raise _fail("--engines and --representations need at least one name each")
    for e in engine_list:
        if e.lower() not in engine_names():
            raise _fail(f"--engines: unknown engine {e!r}; available: {', '.join(engine_names())}")
    try:
        for r in rep_list:
            Representation.parse(r)
    except BridgeError as exc:
        raise _fail(f"--representations: {exc}") from None


def _check_native(
    console, model: str, samples: int, seed: int, rtol: float, representations: str, json_file, engines=None
):
    """``bridge check FILE --native``: the libraries' own loaders compared, findings explained
    (``--engines ...,mujoco`` adds MuJoCo's own URDF compiler)."""
    from bridge.errors import BridgeError
    from bridge.validation.check import cross_validate

    try:
        report = cross_validate(
            model,
            native=True,
            engines=_split(engines) if engines else None,
            samples=samples,
            seed=seed,
            rtol=rtol,
            representations=_split(representations) or [],
        )
    except BridgeError as exc:
        raise _fail(str(exc)) from None
    _print_report(console, report)
    for f in report.findings:
        subjects = ", ".join(f.subjects[:6]) + (
            f" and {len(f.subjects) - 6} more" if len(f.subjects) > 6 else ""
        )
        effect = ""
        if f.error_with is not None:
            effect = f" [M/h/g error {f.error_with:.1e} as loaded, {f.error_without:.1e} without this cause]"
        bad = f.cause.endswith("unexplained")
        colour = "red" if bad else "yellow" if f.error_with is not None else "cyan"
        console.print(f"[{colour}]{f.cause}[/{colour}] {subjects}: {f.message}{effect}", highlight=False)
    if json_file is not None:
        _write(json_file, report.to_json(), "--json")
    raise typer.Exit(0 if report.ok else 1)


def _print_report(console, report, compact: bool = False, label: str | None = None) -> None:
    """One table per engine pair (rows: quantities, columns: representations) and one of identities."""
    from rich.table import Table

    if compact:
        worst = max((r.max_rel for r in report.results if " vs " in r.engines), default=0.0)
        mark = "[green]ok[/green]" if report.ok else f"[red]{len(report.failures)} disagree[/red]"
        console.print(
            f"{label or report.model:<40} {mark}  worst rel {worst:.1e}  ({report.seconds:.1f} s)",
            highlight=False,
        )
        return
    rows = report.summary_rows()
    groups: dict[str, dict[str, dict[str, object]]] = {}
    for r in rows:
        key = r.engines if " vs " in r.engines else "identities"
        label = (
            r.quantity
            if " vs " in r.engines
            else r.engines.split(": ", 1)[1] + f" ({r.engines.split(':')[0]})"
        )
        groups.setdefault(key, {}).setdefault(label, {})[r.representation] = r
    ordered = sorted(groups.items(), key=lambda item: item[0] == "identities")
    for title, table_rows in ordered:
        table = Table(title=f"{report.model}: {title} (max relative error over {report.samples} samples)")
        table.add_column("quantity")
        for rep in report.representations:
            table.add_column(rep, justify="right")
        from bridge.validation.check import QUANTITIES

        order = {q: i for i, q in enumerate(QUANTITIES)}
        for label, cells in sorted(table_rows.items(), key=lambda item: order.get(item[0], len(order))):
            values = []
            for rep in report.representations:
                r = cells.get(rep)
                if r is None:
                    values.append("")
                elif r.passed:
                    values.append(f"[green]{r.max_rel:.1e}[/green]")
                else:
                    where = f" {r.frame}" if r.frame else ""
                    values.append(f"[red]{r.max_rel:.1e} FAIL[/red] (sample {r.worst_sample}{where})")
            table.add_row(label, *values)
        console.print(table)
    for note in report.notes:
        console.print(f"[yellow]note:[/yellow] {note}")
    tol = f"rtol {report.rtol:g} (finite differences 1e-6)"
    if report.ok:
        console.print(f"[green]all engines agree[/green] within {tol} ({report.seconds:.1f} s)")
    else:
        console.print(
            f"[red]{len(report.failures)} comparisons disagree[/red] beyond {tol} ({report.seconds:.1f} s)"
        )


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

    _check_output(output, "-o/--output", force)
    try:
        m, _, warned = _load(
            model, base, joints, False, _mimic_mode(mimic, mimic_independent), allow_nonphysical, strict
        )
        text = m.to_urdf()
    except BridgeError as exc:
        raise _fail(str(exc)) from None
    _print_warnings(warned)
    _write(output, text, "-o/--output")
    typer.echo(f"wrote {output} ({len(m.links)} links, {m.n_dofs} DOFs, base {m.base})")


def run() -> None:  # pragma: no cover - console entry point alias
    app()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(app())
