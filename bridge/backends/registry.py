"""The libraries bridge speaks: one record each, and the only list of them.

A :class:`Library` record names, as ``"module:attribute"`` strings resolved on first use (so that
reading the registry imports no library), everything bridge knows about a library: its
conventions, its engine, its model and state converters, the optional dependency and the extra that
installs it, its native-loader comparison, its ``bridge info`` column, and the model file kinds it
reads into a bridge Model (``imports``) and writes from one (``exports``), filled from the format
table (:mod:`bridge.model.formats`, the only list of file formats): :func:`importer` and
:func:`exporter` resolve a kind's reader and writer (``bridge.load_model``, ``bridge convert -o
X.xml``), :func:`file_kind` tells a file's kind by its root element. KinDyn, the convert
functions, ``cross_validate``, ``check --native``, ``bridge info``, the command line's
``--engines`` and the stateless functions read this registry; no other module lists libraries.

A library's backend package (``package``: ``bridge.backends.<name>`` for bridge's own) is where its
converters, its convention and its engine live, the one package that may import the library's
modules (``modules``; ``tests/test_layering.py`` reads the homes from here), and where the public
names it contributes to ``bridge`` (``public``: ``bridge.to_pinocchio``, ...) are found.
:meth:`Library.backend` fills in the paths that follow the backend layout (``state.py`` holding
``to_<name>_state`` and the convention ``<NAME>``, ``model.py`` ``to_<name>`` / ``from_<name>``,
``engine.py`` ``<Name>Engine``, ``native.py`` ``NATIVE``, ``info.py`` ``info_column``), so a record
spells out only what is irregular.

Registering a record (:func:`register`) also registers its conventions by name
(:func:`bridge.conventions.registry.register_convention`), so a library added at run time (a test's
toy convention, a user's own engine) is picked up by every conversion and by cross-validation.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bridge.conventions.registry import register_convention, unregister_convention
from bridge.errors import BackendError, BridgeError, InvalidValueError
from bridge.model import formats

__all__ = [
    "LIBRARIES",
    "Library",
    "available_engines",
    "engine_class",
    "engine_names",
    "exporter",
    "file_kind",
    "importer",
    "library",
    "library_homes",
    "public_names",
    "register",
    "resolve",
    "unregister",
]


def resolve(target: str | Any) -> Any:
    """The object named ``"module:attribute"`` (imported now), or ``target`` itself if not a string."""
    if not isinstance(target, str):
        return target
    module, _, attr = target.partition(":")
    obj = importlib.import_module(module)
    for part in attr.split(".") if attr else ():
        obj = getattr(obj, part)
    return obj


@dataclass(frozen=True)
class Library:
    """What bridge knows about one library.

    Attributes:
        name: the name users pass (engine name, convention name, ``bridge info`` column).
        summary: one line on what the library is and how bridge uses it.
        conventions: convention name -> ``"module:attribute"`` of its
            :class:`~bridge.conventions.change_of_variables.Convention` (the library's generalized
            velocity layout, declared as data in its backend package).
        engine: ``"module:Class"`` of its engine behind :class:`bridge.KinDyn` (None: no engine).
        to_model / from_model: ``"module:function"`` converting a bridge Model to the library's model
            and back (None where the library has no model type bridge converts).
        to_state / from_state: ``"module:function"`` converting a bridge State to the library's
            coordinates and back.
        requires: the import name of the optional dependency (None: a core dependency).
        extra: the pip extra of bridge that installs it (``pip install 'bridge-dynamics[extra]'``).
        native: ``"module:attribute"`` of its native-loader comparison (the library's own file
            loader next to bridge's), or None.
        info: ``"module:function"`` giving its ``bridge info`` column, or None.
        loads: the model file kinds its own loader reads ("urdf", "mjcf", "sdf"), for its
            native-loader comparison and its ``bridge info`` loader column.
        imports: file kind -> ``"module:function"`` reading such a file (a path) into a bridge
            Model through the library (MuJoCo: ``{"mjcf": ...:load_mjcf}``, the format table's
            reader of the formats needing the library: :mod:`bridge.model.formats`).
        exports: file kind -> ``"module:function"`` writing a bridge Model as the text of such a
            file (MuJoCo: ``{"mjcf": ...:to_mjcf}``, what ``bridge convert -o X.xml`` calls).
        size_check: ``"module:function"``, ``check(model) -> str | None``: why the library's engine
            refuses a model this large (None: it takes it), from the bridge model alone, without
            importing the library (``bridge.backends.limits``); None: no limit.
        rtol: the smallest relative tolerance the engine's arithmetic supports (0: float64 to
            rounding; a float32 library states its floor): ``cross_validate`` compares the engine to
            at least this tolerance and leaves out its finite-difference identities when the floor
            exceeds their tolerance.
        on_request: its engine joins ``cross_validate`` and ``bridge check`` only when named
            (``engines=`` / ``--engines``), not by default (jaxsim: it compiles its functions per
            model and representation, seconds each).
        package: its backend package (``bridge.backends.pinocchio``), the only package that may
            import the library's modules (None: no package of bridge's own, e.g. a test's toy).
        modules: the top-level modules of the library (and of what bridge calls of its
            dependencies) that only ``package`` may import; default ``(requires,)``
            (:attr:`library_modules`). Newton: ``("newton", "warp")``.
        public: the names ``bridge`` re-exports from the library (``bridge.to_pinocchio``), each
            found where a field names it (``to_model``, ``exports``, ...), else in ``package``.
    """

    name: str
    summary: str
    conventions: Mapping[str, str] = field(default_factory=dict)
    engine: str | None = None
    to_model: str | None = None
    from_model: str | None = None
    to_state: str | None = None
    from_state: str | None = None
    requires: str | None = None
    extra: str | None = None
    native: str | None = None
    info: str | None = None
    loads: tuple[str, ...] = ()
    imports: Mapping[str, str] = field(default_factory=dict)
    exports: Mapping[str, str] = field(default_factory=dict)
    size_check: str | None = None
    rtol: float = 0.0
    on_request: bool = False
    package: str | None = None
    modules: tuple[str, ...] = ()
    public: tuple[str, ...] = ()

    @classmethod
    def backend(cls, name: str, summary: str, **fields: Any) -> Library:
        """The record of a library whose backend package ``bridge.backends.<name>`` follows the
        layout: ``conventions`` ``{name: "<package>.state:<NAME>"}``, ``engine``
        ``"<package>.engine:<Name>Engine"``, ``to_model`` / ``from_model``
        ``"<package>.model:to_<name>"`` / ``from_<name>``, ``to_state`` / ``from_state``
        ``"<package>.state:to_<name>_state"`` / ``from_<name>_state``, ``native``
        ``"<package>.native:NATIVE"``, ``info`` ``"<package>.info:info_column"``. ``fields`` gives the
        rest and what is irregular: a field set to None (or ``{}``) has none; a path starting with
        ``.`` is in the package (``size_check=".data:size_problem"``)."""
        package = fields.pop("package", f"bridge.backends.{name}")
        conventional: dict[str, Any] = {
            "conventions": {name: f"{package}.state:{name.upper()}"},
            "engine": f"{package}.engine:{name.capitalize()}Engine",
            "to_model": f"{package}.model:to_{name}",
            "from_model": f"{package}.model:from_{name}",
            "to_state": f"{package}.state:to_{name}_state",
            "from_state": f"{package}.state:from_{name}_state",
            "native": f"{package}.native:NATIVE",
            "info": f"{package}.info:info_column",
        }

        def within(value: Any) -> Any:
            if isinstance(value, str) and value.startswith("."):
                return package + value
            if isinstance(value, Mapping):
                return {key: within(v) for key, v in value.items()}
            return value

        merged = {**conventional, **{key: within(value) for key, value in fields.items()}}
        return cls(name=name, summary=summary, package=package, **merged)

    @property
    def library_modules(self) -> tuple[str, ...]:
        """The top-level modules only :attr:`package` may import (``modules``, else ``requires``)."""
        return self.modules or ((self.requires,) if self.requires else ())

    def public_targets(self) -> dict[str, str]:
        """Public name -> the module holding it: the module of the field naming it, else the
        package (InvalidValueError for public names without a package to find them in)."""
        named: dict[str, str] = {}
        paths = [getattr(self, f) for f in ("to_model", "from_model", "to_state", "from_state")]
        paths += [*self.imports.values(), *self.exports.values()]
        for path in paths:
            if isinstance(path, str) and ":" in path:
                module, _, attr = path.partition(":")
                named.setdefault(attr, module)
        out = {}
        for name in self.public:
            module = named.get(name, self.package)
            if module is None:
                raise InvalidValueError(
                    f"library {self.name!r}: public name {name!r} has no module (give a package)"
                )
            out[name] = module
        return out

    @property
    def installed(self) -> bool:
        """Whether the library can be imported (always True for a core dependency)."""
        if self.requires is None:
            return True
        if self.requires in sys.modules:  # imported, or blocked (None)
            return sys.modules[self.requires] is not None
        try:
            return importlib.util.find_spec(self.requires) is not None
        except (ImportError, ValueError):
            return False

    def require(self, what: str) -> None:
        """Raise BridgeError naming the extra unless the library is installed."""
        if not self.installed:
            extra = f" (pip install 'bridge-dynamics[{self.extra}]')" if self.extra else ""
            raise BridgeError(f"{what} needs {self.requires!r}, which is not installed{extra}")

    def load(self, attribute: str) -> Any:
        """The object a field names (``record.load("engine")``), imported now; None if unset. A
        library that is installed but fails to import (a broken installation; pydrake under an
        ASCII locale) is a :class:`bridge.BackendError` naming it and the reason."""
        target = getattr(self, attribute)
        if target is None:
            return None
        try:
            return resolve(target)
        except ImportError as exc:
            raise _import_failed(self.name, exc) from None


#: the libraries, in the order of tables and reports; :func:`register` adds to it
LIBRARIES: dict[str, Library] = {}


def register(record: Library, *, replace: bool = False) -> Library:
    """Add a library record (and its conventions by name); returns it."""
    if not isinstance(record, Library):
        raise InvalidValueError(f"register: expected a Library record, got {type(record).__name__}")
    key = record.name.strip().lower()
    for kind in (*record.loads, *record.imports, *record.exports):
        formats.format_named(kind)  # (a kind of the format table, or InvalidValueError naming them)
    if key in LIBRARIES and not replace:
        raise InvalidValueError(f"register: a library named {record.name!r} is registered already")
    public = record.public_targets()
    taken = {
        n: other.name
        for other in LIBRARIES.values()
        if other.name.strip().lower() != key
        for n in other.public
    }
    clash = sorted(set(public) & set(taken))
    if clash:
        raise InvalidValueError(
            f"register: {record.name!r}'s public name {clash[0]!r} is {taken[clash[0]]!r}'s already"
        )
    for name, target in record.conventions.items():
        register_convention(name, target, replace=True)
    LIBRARIES[key] = record
    return record


def unregister(name: str) -> None:
    """Remove a library record and its conventions (for tests that register a toy library)."""
    key = str(name).strip().lower()
    record = LIBRARIES.pop(key, None)
    if record is None:
        raise InvalidValueError(f"unregister: no library named {name!r}")
    for conv in record.conventions:
        unregister_convention(conv)


def library(name: object) -> Library:
    """The record of ``name`` (case-insensitive); InvalidValueError listing the known ones."""
    key = str(name).strip().lower()
    record = LIBRARIES.get(key)
    if record is None:
        raise InvalidValueError(f"unknown library {name!r}; known: {', '.join(LIBRARIES)}")
    return record


def public_names() -> dict[str, str]:
    """Every public name the registered libraries contribute to ``bridge`` -> the module holding
    it (read by ``bridge.__getattr__``: ``bridge.to_pinocchio``; nothing is imported)."""
    return {name: module for rec in LIBRARIES.values() for name, module in rec.public_targets().items()}


def library_homes() -> dict[str, str]:
    """Each library module -> the backend package that alone may import it (``pydrake`` ->
    ``bridge.backends.drake``; read by ``tests/test_layering.py``)."""
    return {
        module: rec.package for rec in LIBRARIES.values() if rec.package for module in rec.library_modules
    }


def engine_names() -> tuple[str, ...]:
    """Every registered engine, installed or not."""
    return tuple(name for name, rec in LIBRARIES.items() if rec.engine is not None)


def available_engines() -> tuple[str, ...]:
    """The registered engines whose library is installed."""
    return tuple(name for name, rec in LIBRARIES.items() if rec.engine is not None and rec.installed)


def engine_class(name: object) -> type:
    """The engine class of ``name``: InvalidValueError for an unknown engine, BridgeError naming
    the extra when its library is not installed."""
    key = str(name).strip().lower()
    record = LIBRARIES.get(key)
    if record is None or record.engine is None:
        raise InvalidValueError(f"unknown engine {name!r}; available: {', '.join(engine_names())}")
    record.require(f"engine {key!r}")
    try:
        return resolve(record.engine)
    except ModuleNotFoundError as exc:
        raise BridgeError(f"engine {key!r} is not available ({exc})") from None
    except ImportError as exc:
        raise _import_failed(key, exc) from None


def _import_failed(name: str, exc: ImportError) -> BackendError:
    """The error for a library that is installed but does not import."""
    cause = exc.__cause__ or exc.__context__
    why = f"{exc}" + (f": {type(cause).__name__}: {cause}" if cause is not None else "")
    return BackendError(f"{name} is installed but cannot be imported ({' '.join(why.split())})")


def file_kind(path: str | Path) -> str | None:
    """The kind of a model file (None: another root element), from its root element: the format
    table's :func:`bridge.model.formats.file_kind`."""
    return formats.file_kind(path)


def _by_kind(field_name: str, kind: str, what: str) -> Any:
    """The function the first installed record names for ``kind`` in ``field_name``; BridgeError
    naming the libraries (and their extras) that would, or saying none does."""
    title = formats.format_named(kind).title
    offering = [rec for rec in LIBRARIES.values() if kind in getattr(rec, field_name)]
    for rec in offering:
        if rec.installed:
            return resolve(getattr(rec, field_name)[kind])
    if not offering:
        raise BridgeError(f"no registered library {what} {title} files")
    offering[0].require(f"{'reading' if field_name == 'imports' else 'writing'} {title} files")
    raise BridgeError(f"no installed library {what} {title} files")  # pragma: no cover


def _through_table(kind: str, role: str, field_name: str, what: str) -> Any:
    """The reader or writer (``role``) of ``kind`` from the format table: bridge's own function
    first (a format needing no library); for a format that needs one, what the records offer
    (``field_name``: their ``imports`` / ``exports``, filled from the table: a record registered at
    run time may offer it too), or the table's function when no record speaks for that library."""
    fmt = formats.format_named(kind)
    target = getattr(fmt, role)
    if fmt.requires is not None or target is None:
        records = LIBRARIES.values()
        spoken_for = fmt.requires is not None and any(rec.requires == fmt.requires for rec in records)
        if spoken_for or any(fmt.name in getattr(rec, field_name) for rec in records):
            return _by_kind(field_name, fmt.name, what)
    if target is None:
        raise BridgeError(f"nothing {what} {fmt.title} files (the format {fmt.name!r} names no {role})")
    fmt.require(f"{'reading' if role == 'reader' else 'writing'} {fmt.title} files")
    try:
        return resolve(target)
    except (ImportError, AttributeError) as exc:
        raise BridgeError(f"the {role} of {fmt.title} files, {target!r}, cannot be loaded ({exc})") from None


def importer(kind: str) -> Any:
    """``function(path, **options) -> Model`` reading a ``kind`` file (the format table's reader:
    :data:`bridge.model.formats.FORMATS`)."""
    return _through_table(kind, "reader", "imports", "reads")


def exporter(kind: str) -> Any:
    """``function(model) -> str`` writing a Model as a ``kind`` file (the format table's writer)."""
    return _through_table(kind, "writer", "exports", "writes")


def _offered(requires: str, role: str) -> dict[str, str]:
    """kind -> the table's reader or writer (``role``) of the formats needing ``requires``: what
    that library's record offers (its ``imports`` / ``exports``)."""
    return {
        fmt.name: getattr(fmt, role)
        for fmt in formats.FORMATS.values()
        if fmt.requires == requires and getattr(fmt, role) is not None
    }


# ------------------------------------------------------------------------------------ the records
# (the paths that follow the backend layout come from Library.backend; below, only the irregular)
_B = "bridge.backends"

register(
    Library.backend(
        "pinocchio",
        "Pinocchio: LOCAL base velocity, depth-first joints, quaternion x, y, z, w",
        loads=("urdf",),
        size_check=".data:size_problem",
        modules=("pinocchio",),
        public=("to_pinocchio", "from_pinocchio", "to_pinocchio_state", "from_pinocchio_state"),
    )
)
register(
    Library.backend(
        "idyntree",
        "iDynTree: the three neutral representations natively (KinDynComputations)",
        conventions={},
        engine=".engine:IDynTreeEngine",
        to_state=None,
        from_state=None,
        loads=("urdf",),
        modules=("idyntree",),
        public=("to_idyntree", "from_idyntree"),
    )
)
register(
    Library.backend(
        "featherstone",
        "Featherstone (spatial_v2 / RBDL): bridge's own algorithms, angular first, world velocity",
        native=None,
        public=("to_featherstone", "from_featherstone"),
    )
)
register(
    Library.backend(
        "mujoco",
        "MuJoCo: free joint [p_dot world; omega body], quaternion w, x, y, z, body-order DOFs",
        requires="mujoco",
        extra="mujoco",
        loads=("urdf", "mjcf"),
        imports=_offered("mujoco", "reader"),
        exports=_offered("mujoco", "writer"),
        size_check=".bodies:size_problem",
        public=(
            "to_mujoco",
            "from_mujoco",
            "load_mjcf",
            "to_mjcf",
            "to_mujoco_state",
            "from_mujoco_state",
        ),
    )
)
register(
    Library.backend(
        "drake",
        "Drake: MIXED base velocity angular first, quaternion w, x, y, z first in q",
        requires="pydrake",
        extra="drake",
        loads=("urdf", "sdf"),
        size_check=".size:size_problem",
        public=("to_drake", "from_drake", "to_drake_state", "from_drake_state"),
    )
)
register(
    Library.backend(
        "newton",
        "Newton (NVIDIA Warp): base COM and angular velocity, world axes; quaternion x, y, z, w",
        native=None,
        requires="newton",
        extra="newton",
        rtol=1e-4,
        modules=("newton", "warp"),
        public=(
            "to_newton",
            "from_newton",
            "to_newton_state",
            "from_newton_state",
            "to_newton_body_velocities",
            "from_newton_body_velocities",
        ),
    )
)
register(
    Library.backend(
        "jaxsim",
        "jaxsim (JAX): BODY, MIXED, INERTIAL linear first, quaternion w, x, y, z, breadth first",
        from_model=None,
        native=None,
        info=None,
        requires="jaxsim",
        extra="jaxsim",
        size_check=".size:size_problem",
        on_request=True,
    )
)
