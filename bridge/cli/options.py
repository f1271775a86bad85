"""The options several ``bridge`` commands share (typer ``Annotated`` types), and the loading options
declared once: :data:`LOAD_FLAGS`, given to a command by :func:`with_load_options`.

A command taking a model declares one parameter ``load: LoadOptions = NO_LOAD_OPTIONS`` and is
decorated with :func:`with_load_options`: the decorator puts the options of :data:`LOAD_FLAGS`
(``--base``, ``--joints``, ``--fixed-base``, ``--mimic``, ``--allow-nonphysical``, ``--strict``) in
that parameter's place in the command's signature (so typer shows them there) and calls the command
with them gathered in one :class:`LoadOptions`, ``--mimic`` checked (exit 2 for another value).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, TypeVar

import typer

from bridge.cli.app import fail
from bridge.model import formats

__all__ = [
    "LOAD_FLAGS",
    "NO_LOAD_OPTIONS",
    "ForceOpt",
    "LoadFlag",
    "LoadOptions",
    "ModelArg",
    "OptionalModelArg",
    "model_help",
    "with_load_options",
]

_MIMIC_MODES = ("independent", "coupled", "error")


def model_help() -> str:
    """What MODEL may be: a file of any kind of the format table, or a shipped robot's name."""
    titles = [fmt.title for fmt in formats.FORMATS.values()]
    kinds = ", ".join(titles[:-1]) + f" or {titles[-1]}" if len(titles) > 1 else titles[0]
    return (
        f"A model file ({kinds}, told apart by its root element), or the name of a robot from "
        "icub-models / example-robot-data (see `bridge models`)."
    )


ModelArg = Annotated[str, typer.Argument(help=model_help())]
OptionalModelArg = Annotated[str | None, typer.Argument(help=model_help())]
ForceOpt = Annotated[
    bool,
    typer.Option(
        "--force",
        help="Replace the output file if it exists (atomically; never an input of the command, a FIFO "
        "or a device).",
    ),
]


@dataclass(frozen=True)
class LoadFlag:
    """One loading option: the command's parameter, the :class:`LoadOptions` field it fills, the
    flag, its type, default and help; ``sets``: the flag is a hidden alias setting the field to this
    value (``--mimic-independent``: ``--mimic independent``)."""

    parameter: str
    field: str
    flag: str
    type: Any
    default: Any
    help: str
    sets: Any = None

    def signature_parameter(self) -> inspect.Parameter:
        """The command parameter typer reads (an ``Annotated`` option)."""
        option = typer.Option(self.flag, help=self.help, hidden=self.sets is not None)
        return inspect.Parameter(
            self.parameter,
            inspect.Parameter.POSITIONAL_OR_KEYWORD,
            default=self.default,
            annotation=Annotated[self.type, option],
        )


#: the options saying how to load MODEL, in the order ``--help`` shows them (the only declaration)
LOAD_FLAGS: tuple[LoadFlag, ...] = (
    LoadFlag("base", "base", "--base", str | None, None, "Base link (the tree is re-rooted there)."),
    LoadFlag(
        "joints",
        "joints",
        "--joints",
        str | None,
        None,
        "Comma-separated DOF order; movable joints left out are locked at 0.",
    ),
    LoadFlag("fixed_base", "fixed", "--fixed-base", bool, False, "Fix the base link to the world."),
    LoadFlag(
        "mimic",
        "mimic",
        "--mimic",
        str | None,
        None,
        "Mimic joints: independent (as Pinocchio/iDynTree load them; the default, with a warning), "
        "coupled (one DOF per master) or error.",
    ),
    LoadFlag(
        "mimic_independent",
        "mimic",
        "--mimic-independent",
        bool,
        False,
        "Same as --mimic independent.",
        sets="independent",
    ),
    LoadFlag(
        "allow_nonphysical",
        "nonphysical",
        "--allow-nonphysical",
        bool,
        False,
        "Do not check link inertias (no warning for non-physical ones).",
    ),
    LoadFlag(
        "strict",
        "strict",
        "--strict",
        bool,
        False,
        "Refuse what bridge warns about (non-physical inertias, mimic joints, a bogus XML declaration).",
    ),
)


@dataclass(frozen=True)
class LoadOptions:
    """How to load the model: ``--base``, ``--joints``, ``--fixed-base``, ``--mimic``,
    ``--allow-nonphysical``, ``--strict`` (:data:`LOAD_FLAGS`)."""

    base: str | None = None
    joints: str | None = None
    fixed: bool = False
    mimic: str | None = None
    nonphysical: bool = False
    strict: bool = False

    def given(self) -> list[str]:
        """The flags given (an empty ``--base`` or ``--joints`` too: for a URDF they mean something),
        in :data:`LOAD_FLAGS` order."""
        out: list[str] = []
        for flag in LOAD_FLAGS:
            value = getattr(self, flag.field)
            if flag.sets is None and value is not None and value is not False and flag.flag not in out:
                out.append(flag.flag)
        return out

    @classmethod
    def from_parameters(cls, values: dict[str, Any]) -> LoadOptions:
        """The options from the command's parameters (:data:`LOAD_FLAGS` names); ``--mimic``
        checked (exit 2 for another value), ``--mimic-independent`` read as ``--mimic independent``."""
        fields: dict[str, Any] = {}
        for flag in LOAD_FLAGS:
            value = values.get(flag.parameter, flag.default)
            if flag.sets is None:
                fields.setdefault(flag.field, value)
            elif value:  # an alias given: it wins over the flag it stands for
                fields[flag.field] = flag.sets
        mimic = fields.get("mimic")
        if mimic is not None and mimic not in _MIMIC_MODES:
            raise fail(f"--mimic must be independent, coupled or error, not {mimic!r}")
        return cls(**fields)


#: the default of a command's ``load`` parameter (replaced by the options)
NO_LOAD_OPTIONS = LoadOptions()

_Command = TypeVar("_Command", bound=Callable[..., Any])


def with_load_options(*, fixed_base: bool = True) -> Callable[[_Command], _Command]:
    """Give a command the loading options (:data:`LOAD_FLAGS`; without ``--fixed-base`` when
    ``fixed_base`` is False) in place of its ``load`` parameter, gathered in one :class:`LoadOptions`."""
    flags = tuple(f for f in LOAD_FLAGS if fixed_base or f.parameter != "fixed_base")

    def decorate(command: _Command) -> _Command:
        signature = inspect.signature(command, eval_str=True)
        params = list(signature.parameters.values())
        names = [p.name for p in params]
        if "load" not in names:
            raise TypeError(f"{command.__name__}: with_load_options needs a parameter named 'load'")
        at = names.index("load")
        params[at : at + 1] = [flag.signature_parameter() for flag in flags]

        @functools.wraps(command)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            values = {flag.parameter: kwargs.pop(flag.parameter, flag.default) for flag in flags}
            kwargs["load"] = LoadOptions.from_parameters(values)
            return command(*args, **kwargs)

        new = signature.replace(parameters=params)
        wrapper.__signature__ = new  # type: ignore[attr-defined]
        wrapper.__annotations__ = {p.name: p.annotation for p in params}
        if new.return_annotation is not inspect.Signature.empty:
            wrapper.__annotations__["return"] = new.return_annotation
        return wrapper  # type: ignore[return-value]

    return decorate
