"""``bridge check``: do the engines agree on a robot (or on every robot, ``--all``)?

Exit status: 0 if all agree, 1 if any disagree, 2 for bad input, :data:`~bridge.cli.app.EXIT_SKIPPED`
with ``--all --fail-on-skip`` when none disagrees but some robots were skipped (they do not load: a
property of those files, not a disagreement between engines; they are listed and counted in the last
line). ``--native`` compares the libraries' own loaders on the file (a URDF: Pinocchio's, iDynTree's,
Drake's; an MJCF file: MuJoCo's compiler, the loaders reading no MJCF left out with a note) and
explains differences; it loads the file as it is, so it does not combine with ``--all`` nor with the
options that change how bridge loads a file (``--base``, ``--joints``, ``--fixed-base``, ``--mimic``,
``--allow-nonphysical``, ``--strict``): exit 2 naming them. A name listed twice in ``--engines`` is bad
input too.
The output file (``--json``) is checked before any work starts.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from bridge.cli.app import EXIT_SKIPPED, app, fail
from bridge.cli.loading import load_model, model_inputs, print_warnings, split
from bridge.cli.options import NO_LOAD_OPTIONS, ForceOpt, LoadOptions, OptionalModelArg, with_load_options
from bridge.cli.output import check_output, write
from bridge.cli.report import print_findings, print_report, print_summary_line

__all__ = ["check"]


@dataclass(frozen=True)
class _Settings:
    """What to compare: engines (None: every installed one), representations, samples, seed, rtol."""

    engines: list[str] | None
    representations: list[str]
    samples: int
    seed: int
    rtol: float


@dataclass
class _Sweep:
    """The reports of the robots checked (with their labels), the robots skipped (name, why) and how
    many loaded with warnings."""

    reports: list[Any]
    labels: list[str]
    skipped: list[tuple[str, str]]
    n_warned: int = 0


def _check_numbers(model: str | None, all_models: bool, samples: int, seed: int, rtol: float) -> None:
    """Fail (exit 2) unless exactly one of MODEL and --all is given and the numbers make sense."""
    if all_models == (model is not None):
        raise fail("give exactly one of MODEL or --all")
    from bridge.validation.cross_validation import MAX_SAMPLES

    if samples < 1:
        raise fail(f"--samples must be at least 1, not {samples}")
    if samples > MAX_SAMPLES:
        raise fail(
            f"--samples must be at most {MAX_SAMPLES} (each sample is computed by every engine in every "
            "representation; 20 to 100 find what differs)"
        )
    if seed < 0:
        raise fail(f"--seed must be a non-negative integer, not {seed}")
    if not rtol > 0 or rtol == float("inf"):
        raise fail(f"--rtol must be a positive number, not {rtol}")


def _check_combination(native: bool, all_models: bool, load: LoadOptions) -> None:
    """Fail (exit 2) if ``--native`` comes with ``--all`` or with options that change how bridge loads
    the file (``load``'s flags given): the native comparison loads it as is."""
    if not native:
        return
    if all_models:
        raise fail("--native does not combine with --all: give one file to compare the loaders on")
    given = load.given()
    if given:
        raise fail(
            f"--native does not combine with {', '.join(given)}: it compares the libraries' own loaders "
            "on the file as it is"
        )


def _check_duplicates(option: str, names: list[str]) -> None:
    """Fail (exit 2) if ``names`` (compared case-insensitively) lists a name twice."""
    seen: set[str] = set()
    for name in names:
        if name.lower() in seen:
            raise fail(f"{option}: {name.lower()!r} is listed twice")
        seen.add(name.lower())


def _check_names(engine_list: list[str], rep_list: list[str]) -> None:
    """Fail (exit 2) before any work on an unknown engine or representation, or an empty list
    (engine names from the library registry)."""
    from bridge.backends.registry import engine_names
    from bridge.conventions.state import Representation
    from bridge.errors import BridgeError

    if not engine_list or not rep_list:
        raise fail("--engines and --representations need at least one name each")
    _check_duplicates("--engines", engine_list)
    for e in engine_list:
        if e.lower() not in engine_names():
            raise fail(f"--engines: unknown engine {e!r}; available: {', '.join(engine_names())}")
    try:
        for r in rep_list:
            Representation.parse(r)
    except BridgeError as exc:
        raise fail(f"--representations: {exc}") from None


def _settings(engines: str | None, representations: str, samples: int, seed: int, rtol: float) -> _Settings:
    """The comparison settings, names checked (exit 2 on an unknown one)."""
    from bridge.validation.check import available_engines

    engine_list = split(engines) if engines is not None else None  # None: every installed engine
    rep_list = split(representations) or []
    _check_names(engine_list if engine_list is not None else list(available_engines()), rep_list)
    return _Settings(engine_list, rep_list, samples, seed, rtol)


@dataclass(frozen=True)
class _Output:
    """``--json``: the file (None: not asked), ``--force``, and the command's input files (which it
    never replaces)."""

    path: Path | None
    force: bool
    inputs: list[Path]


def _check_native(console: Any, model: str, settings: _Settings, output: _Output) -> typer.Exit:
    """``bridge check FILE --native``: the libraries' own loaders compared, findings explained
    (``--engines ...,mujoco`` adds MuJoCo's own URDF compiler; on an MJCF file MuJoCo's compiler
    joins by default); returns the Exit to raise."""
    from bridge.errors import BridgeError
    from bridge.validation.check import cross_validate

    try:
        report = cross_validate(
            model,
            native=True,
            engines=settings.engines or None,
            samples=settings.samples,
            seed=settings.seed,
            rtol=settings.rtol,
            representations=settings.representations,
        )
    except BridgeError as exc:
        raise fail(exc) from None
    print_report(console, report)
    print_findings(console, report)
    if output.path is not None:
        write(output.path, report.to_json(), "--json", output.force, output.inputs)
    return typer.Exit(0 if report.ok else 1)


def _validate(progress: Any, m: Any, settings: _Settings) -> Any:
    """``cross_validate`` of one loaded model, its progress shown as a task of ``progress``."""
    from bridge.validation.check import available_engines, cross_validate

    n_engines = len(settings.engines) if settings.engines is not None else len(available_engines())
    task = progress.add_task(m.name, total=len(settings.representations) * n_engines)

    def step(desc: str) -> None:
        progress.update(task, advance=1, description=f"{m.name}: {desc}")

    report = cross_validate(
        m,
        engines=settings.engines,
        representations=settings.representations,
        samples=settings.samples,
        seed=settings.seed,
        rtol=settings.rtol,
        progress=step,
    )
    progress.remove_task(task)
    return report


def _check_one(console: Any, model: str, options: LoadOptions, settings: _Settings) -> _Sweep:
    """One robot: loaded (exit 2 if it does not load) before the progress display, so that an
    error is one line; its warnings printed."""
    from rich.progress import Progress

    from bridge.errors import BridgeError

    try:
        m, _, warned = load_model(model, options)
    except BridgeError as exc:
        raise fail(exc) from None
    print_warnings(warned)
    with Progress(console=console, transient=True) as progress:
        try:
            report = _validate(progress, m, settings)
        except BridgeError as exc:
            progress.stop()
            raise fail(exc) from None
    return _Sweep([report], [model], [])


def _skip_reason(exc: Exception) -> str:
    """Why a robot does not load, without the path the message starts with (its name is shown)."""
    msg = str(exc)
    return msg.split(": ", 1)[1] if msg.startswith("/") and ": " in msg else msg


def _check_all(console: Any, options: LoadOptions, settings: _Settings) -> _Sweep:
    """Every robot of ``bridge models``: those that do not load are skipped with the reason."""
    from rich.progress import Progress

    from bridge.errors import BridgeError
    from bridge.robots import robot_names

    sweep = _Sweep([], [], [])
    names = robot_names()
    with Progress(console=console, transient=True) as progress:
        overall = progress.add_task("models", total=len(names))
        for name in names:
            try:
                m, _, warned = load_model(name, options)
            except BridgeError as exc:
                sweep.skipped.append((name, _skip_reason(exc)))
                progress.advance(overall)
                continue
            sweep.n_warned += bool(warned)
            try:
                report = _validate(progress, m, settings)
            except BridgeError as exc:
                progress.stop()
                raise fail(f"{name}: {exc}") from None
            progress.advance(overall)
            sweep.reports.append(report)
            sweep.labels.append(name)
    return sweep


def _print_sweep(console: Any, sweep: _Sweep) -> None:
    """``check --all``: a line per robot, the skipped ones with the reason, and the counts."""
    from rich.markup import escape

    for label, report in zip(sweep.labels, sweep.reports, strict=True):
        print_summary_line(console, report, label=label)
    for name, why in sweep.skipped:
        console.print(f"[yellow]skipped[/yellow] {escape(name)}: {escape(why)}", highlight=False)
    bad = sum(not r.ok for r in sweep.reports)
    warned = f"; {sweep.n_warned} loaded with warnings (see `bridge info NAME`)" if sweep.n_warned else ""
    console.print(
        f"{len(sweep.reports) - bad} robots agree, {bad} disagree, {len(sweep.skipped)} skipped because "
        f"they do not load (reasons above){warned}"
    )


def _status(sweep: _Sweep, fail_on_skip: bool) -> int:
    """1 if a robot disagrees, else EXIT_SKIPPED if robots were skipped and that should fail, else 0."""
    if any(not r.ok for r in sweep.reports):
        return 1
    return EXIT_SKIPPED if sweep.skipped and fail_on_skip else 0


def _write_json(output: _Output, reports: list[Any]) -> None:
    """The report (one robot) or the list of reports (``--all``) as JSON."""
    if output.path is None:
        return
    import json

    payload = reports[0].to_dict() if len(reports) == 1 else [r.to_dict() for r in reports]
    write(output.path, json.dumps(payload, indent=2), "--json", output.force, output.inputs)


@app.command()
@with_load_options()
def check(
    model: OptionalModelArg = None,
    load: LoadOptions = NO_LOAD_OPTIONS,
    samples: Annotated[int, typer.Option(help="Number of random states (1 to 10000).")] = 20,
    seed: Annotated[int, typer.Option(help="Random seed.")] = 0,
    engines: Annotated[
        str | None, typer.Option(help="Comma-separated engines (default: every installed engine).")
    ] = None,
    representations: Annotated[
        str, typer.Option(help="Comma-separated representations.")
    ] = "body,inertial,mixed",
    rtol: Annotated[float, typer.Option(help="Relative tolerance (norm-wise).")] = 1e-10,
    json_file: Annotated[
        Path | None,
        typer.Option(
            "--json", help="Write the full report as JSON (atomically; an existing file only with --force)."
        ),
    ] = None,
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
            help="Compare the libraries' own loaders with bridge on the file and explain differences: on "
            "a URDF Pinocchio's, iDynTree's (and Drake's), with --engines ...,mujoco also MuJoCo's URDF "
            "compiler; on an MJCF file MuJoCo's compiler. The file as it is: not with --all, --base, "
            "--joints, --fixed-base, --mimic, --allow-nonphysical, --strict.",
        ),
    ] = False,
) -> None:
    """Do the engines agree on this robot? Exit 0 if all agree, 1 if any disagree, 2 for bad input,
    3 with --all --fail-on-skip if none disagrees but some robots were skipped (they do not load)."""
    from rich.console import Console

    _check_numbers(model, all_models, samples, seed, rtol)
    _check_combination(native, all_models, load)
    inputs = model_inputs(model) if json_file is not None else []
    check_output(json_file, "--json", force, inputs)
    settings = _settings(engines, representations, samples, seed, rtol)
    console = Console()
    output = _Output(json_file, force, inputs)
    if native:
        raise _check_native(console, model, settings, output)
    if all_models:
        sweep = _check_all(console, load, settings)
        _print_sweep(console, sweep)
    else:
        sweep = _check_one(console, model, load, settings)
        print_report(console, sweep.reports[0])
    _write_json(output, sweep.reports)
    raise typer.Exit(_status(sweep, fail_on_skip))
