"""The model file formats bridge reads and writes: one :class:`Format` record each, and the only
list of them.

A record names a kind (``"urdf"``, ``"sdf"``, ``"mjcf"``), how a file of that kind is recognised
(its root element, read within bounds by :func:`bridge._files.root_element`: a file is told by its
content, whatever its name ends with), the suffixes an output file of that kind ends with (``bridge
convert -o robot.sdf``), its reader and its writer as ``"module:function"`` strings (resolved on
use, so reading this table imports no library), whether the loading options (base, DOF order,
locked joints, mimic joints, strict, ...) apply to it, and the optional library it needs with the
extra installing it (MJCF: MuJoCo's compiler, ``[mujoco]``).

Who reads it: :func:`bridge.load_model` and the registry's :func:`~bridge.backends.registry.importer`
and :func:`~bridge.backends.registry.exporter` (which resolve the strings, above the neutral
layers: a reader may live in a backend package), the library records' ``imports`` / ``exports``
(filled from here), and the command line (what ``MODEL`` may be, the format of ``convert -o``, which
options apply, the help text). :func:`register_format` adds a kind at run time: every one of them
picks it up.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from bridge.errors import BridgeError, InvalidValueError

__all__ = [
    "FALLBACK",
    "FORMATS",
    "Format",
    "file_kind",
    "format_named",
    "input_kind",
    "output_kind",
    "register_format",
    "suffix_list",
    "unregister_format",
]

_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_SUFFIX = re.compile(r"^\.[a-z0-9][a-z0-9._-]*$")
_TARGET = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")


@dataclass(frozen=True)
class Format:
    """One kind of model file.

    Attributes:
        name: the kind, lower case (``"urdf"``): what ``file_kind`` returns and the registry's
            ``importer(kind)`` / ``exporter(kind)`` and the records' ``imports`` / ``exports`` key.
        title: how messages and help name it (``"URDF"``, ``"SDFormat"``, ``"MJCF"``).
        description: one line on the format.
        root: the root element of such a file (``"robot"``): how a file is recognised.
        suffixes: the suffixes of such a file, lower case with the dot, the usual one first: an
            output file's suffix chooses the format it is written in.
        reader: ``"module:function"``, ``function(path, **options) -> Model`` (None: not read).
        writer: ``"module:function"``, ``function(model) -> str``, the file's text (None: not written).
        options: whether the reader takes the loading options of :func:`bridge.load_urdf` (``base``,
            ``joints``, ``floating``, ``locked``, ``check_inertia``, ``mimic``, ``strict``); a format
            without them refuses them (by name) rather than ignoring them.
        requires: the import name of the optional library reading and writing it (None: bridge's
            own code); the registry record of that library offers them (its ``imports`` and
            ``exports``).
        extra: the pip extra of bridge installing ``requires``.
    """

    name: str
    title: str
    description: str
    root: str
    suffixes: tuple[str, ...]
    reader: str | None = None
    writer: str | None = None
    options: bool = False
    requires: str | None = None
    extra: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME.match(self.name):
            raise InvalidValueError(f"Format: name must be a lower-case identifier, got {self.name!r}")
        if not isinstance(self.root, str) or not self.root.strip():
            raise InvalidValueError(f"Format {self.name!r}: root must be an element name, got {self.root!r}")
        suffixes = tuple(self.suffixes) if not isinstance(self.suffixes, str) else (self.suffixes,)
        bad = [s for s in suffixes if not isinstance(s, str) or not _SUFFIX.match(s)]
        if not suffixes or bad:
            raise InvalidValueError(
                f"Format {self.name!r}: suffixes must be lower-case suffixes with the dot ('.urdf'), "
                f"got {self.suffixes!r}"
            )
        object.__setattr__(self, "suffixes", suffixes)
        for role in ("reader", "writer"):
            target = getattr(self, role)
            if target is not None and (not isinstance(target, str) or not _TARGET.match(target)):
                raise InvalidValueError(
                    f"Format {self.name!r}: {role} must be a 'module:function' string, got {target!r}"
                )

    def require(self, what: str) -> None:
        """Raise BridgeError naming the extra unless the library the format needs is installed."""
        if self.requires is None:
            return
        import importlib.util
        import sys

        if self.requires in sys.modules:
            found = sys.modules[self.requires] is not None
        else:
            try:
                found = importlib.util.find_spec(self.requires) is not None
            except (ImportError, ValueError):
                found = False
        if not found:
            extra = f" (pip install 'bridge-dynamics[{self.extra}]')" if self.extra else ""
            raise BridgeError(f"{what} needs {self.requires!r}, which is not installed{extra}")


#: the formats, by kind; :func:`register_format` adds to it
FORMATS: dict[str, Format] = {}
#: the kind a file whose root element no format claims is read as: the URDF reader names the root
#: element it found and the one it expected
FALLBACK = "urdf"


def register_format(fmt: Format, *, replace: bool = False) -> Format:
    """Add a format (its root element and suffixes may not be another's); returns it."""
    if not isinstance(fmt, Format):
        raise InvalidValueError(f"register_format: expected a Format record, got {type(fmt).__name__}")
    if fmt.name in FORMATS and not replace:
        raise InvalidValueError(f"register_format: a format named {fmt.name!r} is registered already")
    for other in FORMATS.values():
        if other.name == fmt.name:
            continue
        if other.root == fmt.root:
            raise InvalidValueError(
                f"register_format: {fmt.name!r}: root element <{fmt.root}> is {other.name!r}'s already"
            )
        shared = sorted(set(other.suffixes) & set(fmt.suffixes))
        if shared:
            raise InvalidValueError(
                f"register_format: {fmt.name!r}: suffix {', '.join(shared)} is {other.name!r}'s already"
            )
    FORMATS[fmt.name] = fmt
    return fmt


def unregister_format(name: str) -> None:
    """Remove a format (for tests that register a toy format)."""
    if FORMATS.pop(str(name).strip().lower(), None) is None:
        raise InvalidValueError(f"unregister_format: no format named {name!r}")


def format_named(kind: object) -> Format:
    """The format of ``kind`` (case-insensitive); InvalidValueError listing the known kinds."""
    fmt = FORMATS.get(kind.strip().lower()) if isinstance(kind, str) else None
    if fmt is None:
        raise InvalidValueError(f"unknown model file kind {kind!r}; known: {', '.join(FORMATS)}")
    return fmt


def file_kind(path: str | Path) -> str | None:
    """The kind of a model file (None: another root element), read from its root element (after an
    XML declaration and any number of comments, processing instructions and a DOCTYPE, read
    incrementally: :func:`bridge._files.root_element`), whatever its name ends with. An unreadable
    file is a :class:`bridge.FileAccessError` naming it."""
    from bridge._files import root_element

    name = root_element(path)
    if name is None:
        return None
    return next((fmt.name for fmt in FORMATS.values() if fmt.root == name), None)


def input_kind(path: str | Path) -> str:
    """The kind a model file is read as: its :func:`file_kind`, else :data:`FALLBACK` (whose reader
    says what is wrong with the root element)."""
    return file_kind(path) or FALLBACK


def suffix_list() -> str:
    """The known suffixes and their formats, for messages and help: ``.urdf (URDF), ...``."""
    return ", ".join(f"{'/'.join(fmt.suffixes)} ({fmt.title})" for fmt in FORMATS.values())


def output_kind(path: str | Path) -> str:
    """The kind a file is written as, from its suffix (case-insensitive); InvalidValueError naming
    the file and the known suffixes for another one."""
    suffix = Path(path).suffix.lower()
    for fmt in FORMATS.values():
        if suffix in fmt.suffixes:
            return fmt.name
    said = f"suffix {suffix!r}" if suffix else "no suffix"
    raise InvalidValueError(
        f"{path}: {said}, which names no model file format; the suffix chooses it: {suffix_list()}"
    )


# ------------------------------------------------------------------------------------ the formats
register_format(
    Format(
        name="urdf",
        title="URDF",
        description="Unified Robot Description Format (ROS): a tree of links and joints",
        root="robot",
        suffixes=(".urdf",),
        reader="bridge.model.urdf:load_urdf",
        writer="bridge.model.urdf_writer:model_to_urdf",
        options=True,
    )
)
register_format(
    Format(
        name="sdf",
        title="SDFormat",
        description="SDFormat (Gazebo, Drake): a model of links and joints, poses relative to frames",
        root="sdf",
        suffixes=(".sdf",),
        reader="bridge.model.sdf:load_sdf",
        writer="bridge.model.sdf_writer:model_to_sdf",
        options=True,
    )
)
register_format(
    Format(
        name="mjcf",
        title="MJCF",
        description="MuJoCo's XML format, read and written through MuJoCo's compiler",
        root="mujoco",
        suffixes=(".xml", ".mjcf"),
        reader="bridge.backends.mujoco.model:load_mjcf",
        writer="bridge.backends.mujoco.mjcf:to_mjcf",
        requires="mujoco",
        extra="mujoco",
    )
)
