"""Printing a cross-validation report: one table per engine pair, identities, findings, verdict."""

from __future__ import annotations

from typing import Any

__all__ = ["print_findings", "print_report", "print_summary_line"]


def print_summary_line(console: Any, report: Any, label: str | None = None) -> None:
    """One line for a robot of ``check --all``: ok or how many disagree, the worst relative error."""
    worst = max((r.max_rel for r in report.results if " vs " in r.engines), default=0.0)
    mark = "[green]ok[/green]" if report.ok else f"[red]{len(report.failures)} disagree[/red]"
    console.print(
        f"{label or report.model:<40} {mark}  worst rel {worst:.1e}  ({report.seconds:.1f} s)",
        highlight=False,
    )


def _groups(report: Any) -> list[tuple[str, dict[str, dict[str, Any]]]]:
    """``(title, {row label: {representation: result}})``: engine pairs first, then identities."""
    groups: dict[str, dict[str, dict[str, Any]]] = {}
    for r in report.summary_rows():
        pair = " vs " in r.engines
        key = r.engines if pair else "identities"
        label = r.quantity if pair else r.engines.split(": ", 1)[1] + f" ({r.engines.split(':')[0]})"
        groups.setdefault(key, {}).setdefault(label, {})[r.representation] = r
    return sorted(groups.items(), key=lambda item: item[0] == "identities")


def _cell(r: Any) -> str:
    """A result's cell: its max relative error, green, or red with FAIL, the sample and the frame."""
    if r is None:
        return ""
    if r.passed:
        return f"[green]{r.max_rel:.1e}[/green]"
    where = f" {r.frame}" if r.frame else ""
    return f"[red]{r.max_rel:.1e} FAIL[/red] (sample {r.worst_sample}{where})"


def _verdict(console: Any, report: Any) -> None:
    tol = f"rtol {report.rtol:g} (finite differences 1e-6)"
    if report.ok:
        console.print(f"[green]all engines agree[/green] within {tol} ({report.seconds:.1f} s)")
    else:
        console.print(
            f"[red]{len(report.failures)} comparisons disagree[/red] beyond {tol} ({report.seconds:.1f} s)"
        )


def print_report(console: Any, report: Any) -> None:
    """One table per engine pair (rows: quantities, columns: representations), one of identities,
    the report's notes and the verdict."""
    from rich.table import Table

    from bridge.validation.check import QUANTITIES

    order = {q: i for i, q in enumerate(QUANTITIES)}
    for title, rows in _groups(report):
        table = Table(title=f"{report.model}: {title} (max relative error over {report.samples} samples)")
        table.add_column("quantity")
        for rep in report.representations:
            table.add_column(rep, justify="right")
        for label, cells in sorted(rows.items(), key=lambda item: order.get(item[0], len(order))):
            table.add_row(label, *[_cell(cells.get(rep)) for rep in report.representations])
        console.print(table)
    from rich.markup import escape

    for note in report.notes:  # (escaped: a note may name an extra, "[drake]", or a [bracketed] name)
        console.print(f"[yellow]note:[/yellow] {escape(note)}")
    _verdict(console, report)


def print_findings(console: Any, report: Any) -> None:
    """``check --native``: each finding of the libraries' own loaders, its cause coloured (red:
    unexplained, yellow: with its effect on M/h/g, cyan: no effect measured)."""
    from rich.markup import escape

    for f in report.findings:
        subjects = ", ".join(f.subjects[:6]) + (
            f" and {len(f.subjects) - 6} more" if len(f.subjects) > 6 else ""
        )
        effect = ""
        if f.error_with is not None:
            effect = f" [M/h/g error {f.error_with:.1e} as loaded, {f.error_without:.1e} without this cause]"
        bad = f.cause.endswith("unexplained")
        colour = "red" if bad else "yellow" if f.error_with is not None else "cyan"
        shown = f"{escape(subjects)}: {escape(f.message)}{escape(effect)}"
        console.print(f"[{colour}]{escape(f.cause)}[/{colour}] {shown}", highlight=False)
