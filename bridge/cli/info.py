"""``bridge info MODEL``: the model as each registered library sees it (counts, DOF orders, notes)."""

from __future__ import annotations

from typing import Any

from bridge.cli.app import app, fail
from bridge.cli.describe import describe
from bridge.cli.loading import load_model, print_warnings
from bridge.cli.options import NO_LOAD_OPTIONS, LoadOptions, ModelArg, with_load_options
from bridge.cli.output import table

__all__ = ["describe", "info"]


def _counts_table(title: str, part: dict) -> Any:
    """Rows: the counts; columns: ``part["columns"]``."""
    out = table(title, "", part["columns"])
    for row, values in part["counts"].items():
        out.add_row(row, *[str(v) for v in values])
    return out


def _order_table(title: str, part: dict, dof_names: tuple[str, ...], widths: list[str] | None = None) -> Any:
    """Rows: the joints; columns: each one's position in each column's vector ("-": absent), after
    each joint's kind and widths (``widths``, for a model with joints of several coordinates)."""
    orders = part["orders"]
    out = table(title, "joint", (["kind nq/nv"] if widths else []) + list(orders))
    for k, name in enumerate(dof_names):
        cells = [str(order[k]) if order[k] >= 0 else "-" for order in orders.values()]
        out.add_row(name, *([widths[k]] if widths else []), *cells)
    return out


def _conventions_table(part: dict) -> Any:
    """Rows: the convention rows; columns: the declared conventions (cells escaped: they hold brackets)."""
    from rich.markup import escape

    out = table("conventions, as each library declares them", "", part["columns"])
    for row, cells in part["rows"].items():
        out.add_row(row, *[escape(c) for c in cells])
    return out


def _print(console: Any, model: Any, d: dict) -> None:
    """The header line, the tables (bridge's conversions, then the own loaders'), caption and notes."""
    from rich.markup import escape

    console.print(
        f"[bold]{escape(model.name)}[/bold]  base [cyan]{escape(model.base)}[/cyan]  "
        f"{'floating' if model.floating else 'fixed'} base  total mass {model.total_mass:.6g} kg",
        highlight=False,
    )
    loaders = d["loaders"]
    console.print(_counts_table("counts, as bridge converts the model", d))
    if loaders is not None:
        console.print(_counts_table("counts, as each library's own loader reads the file", loaders))
    dof_names = (getattr(model, "full", None) or model).dof_names
    console.print(_order_table("DOF order in bridge's conversions", d, dof_names, d.get("widths")))
    if loaders is not None:
        console.print(_order_table("DOF order of the libraries' own loaders", loaders, dof_names))
    if d["conventions"]["columns"]:
        console.print(_conventions_table(d["conventions"]))
    caption = "0-based position of each joint in each joint-space vector: " + ", ".join(d["order_meanings"])
    console.print(escape(caption), highlight=False)
    for note in d["notes"]:
        console.print(f"- {escape(note)}", highlight=False)


@app.command()
@with_load_options()
def info(model: ModelArg, load: LoadOptions = NO_LOAD_OPTIONS) -> None:
    """Show the model as each convention sees it: counts, DOF orders and the permutation between them."""
    import bridge.cli
    from bridge.errors import BridgeError

    try:
        m, path, warned = load_model(model, load)
        described = describe(m, path)
    except BridgeError as exc:
        raise fail(exc) from None
    print_warnings(warned)
    _print(bridge.cli._console(), m, described)
