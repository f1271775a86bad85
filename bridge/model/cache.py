"""An on-disk cache of loaded models: a user's second and later processes loading the same file
with the same options skip the parse (and the import of the URDF reader's libraries: yourdfpy,
trimesh, scipy, networkx, about half a second).

**Where.** ``$BRIDGE_CACHE_DIR`` if set, else the user's cache folder (``$XDG_CACHE_HOME/bridge``,
``~/.cache/bridge``; ``%LOCALAPPDATA%\\bridge\\Cache`` on Windows), in its ``models`` folder.
``BRIDGE_CACHE=0`` (or ``off``, ``false``, ``no``) turns the cache off: every load parses, nothing
is written. :func:`clear` empties it; past :data:`MAX_ENTRIES` entries, storing one removes the
least recently used.

**Key.** An entry is found by the SHA-256 of: the reader (``"urdf"``), the file's bytes (URDF has no
includes; meshes play no part in the dynamics), where they came from (the path as given, which the
warnings and errors name), every loading option after checking (``base``, ``joints``,
``floating``, ``locked``, ``check_inertia``, ``mimic``, ``strict``: strict and non-strict loads
never share an entry), bridge's version and a fingerprint of the source of the modules that read
and build a model and of yourdfpy's (an edited or upgraded reader is a new key, not a stale hit),
this format's version, and the versions of Python and numpy.

**Entry.** A magic line, a JSON header line (format version, the key, the SHA-256 of the rest),
then a JSON line of the warnings the parse issued (their category names and messages) and the
payload, the model pickled.
It is written atomically with bridge's writer (:func:`bridge._files.write_atomic`) into a folder
created private (``0700``). Only successful loads are stored; the warnings are issued again on
every hit, same category, same message, at the caller's line, so a cached load is
indistinguishable from a parse.

**Trust.** The payload is read by an unpickler that resolves only the classes a model is made of
(bridge's model, joint, link, frame, inertia and transform classes, numpy arrays and dtypes):
anything else is refused, so an entry cannot run code. An entry is used only if its folder belongs
to the user and is writable by nobody else, its body hashes to the digest its header states, its
key is the one asked for and it unpickles to a model: anything else (truncated, corrupt, foreign,
unreadable, from another version) is ignored, the file parsed, and the entry replaced. A cache
failure is never an error and never a wrong model.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import io
import json
import os
import pickle
import stat
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

import numpy as np

import bridge.errors as _errors
from bridge.errors import BridgeError, BridgeWarning
from bridge.model.model import Model

__all__ = ["FORMAT_VERSION", "MAX_ENTRIES", "clear", "enabled", "folder", "key", "load", "store"]

#: the version of the entry format; a change makes every older entry a miss
FORMAT_VERSION = 1
_MAGIC = b"bridge model cache\n"
_OFF = {"0", "off", "false", "no"}
#: an entry larger than this is not read (iCub's is about 120 kB)
_MAX_ENTRY_BYTES = 64 * 2**20
#: the most entries kept: storing one more removes the least recently used
MAX_ENTRIES = 256
#: the source files whose text is in the key: what reads a file and builds its model
_SOURCES = ("model/*.py", "spatial/*.py", "errors.py", "_files.py", "_array.py")
#: (module, name) the payload may name: what a model is made of
_ALLOWED = {
    ("bridge.model.model", "Model"),
    ("bridge.model.model", "Link"),
    ("bridge.model.model", "Joint"),
    ("bridge.model.model", "JointLimits"),
    ("bridge.model.model", "Frame"),
    ("bridge.model.joints", "JointKind"),
    ("bridge.model.mimic", "CoupledModel"),
    ("bridge.model.mimic", "Mimic"),
    ("bridge.spatial.inertia", "SpatialInertia"),
    ("bridge.spatial.transform", "Transform"),
    ("numpy", "ndarray"),
    ("numpy", "dtype"),
    ("numpy.core.multiarray", "_reconstruct"),
    ("numpy.core.multiarray", "scalar"),
    ("numpy._core.multiarray", "_reconstruct"),
    ("numpy._core.multiarray", "scalar"),
    ("numpy.core.numeric", "_frombuffer"),
    ("numpy._core.numeric", "_frombuffer"),
    ("builtins", "frozenset"),
    ("builtins", "set"),
}


def enabled() -> bool:
    """Whether loads use the cache (``BRIDGE_CACHE`` is not ``0``, ``off``, ``false`` or ``no``)."""
    return os.environ.get("BRIDGE_CACHE", "").strip().lower() not in _OFF


def folder() -> Path:
    """The folder of the entries: ``$BRIDGE_CACHE_DIR/models``, else ``models`` in the user's cache
    folder for bridge."""
    given = os.environ.get("BRIDGE_CACHE_DIR", "").strip()
    if given:
        root = Path(given).expanduser()
    elif sys.platform == "win32" and os.environ.get("LOCALAPPDATA"):
        root = Path(os.environ["LOCALAPPDATA"]) / "bridge" / "Cache"
    else:
        xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
        base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"
        root = base / "bridge"
    return root / "models"


def _folder() -> Path | None:
    """:func:`folder`, or None when there is none (no home folder: no cache, not an error)."""
    try:
        return folder()
    except (RuntimeError, KeyError, OSError):  # (what Path.home raises without a home)
        return None


def clear() -> int:
    """Remove every entry of :func:`folder`; the number removed."""
    removed = 0
    try:
        names = os.listdir(folder())
    except OSError:
        return 0
    for name in names:
        if name.endswith(".model"):
            try:
                os.unlink(folder() / name)
                removed += 1
            except OSError:
                pass
    return removed


# --------------------------------------------------------------------------- the key
def _hash_sources(update: Callable[[bytes], None], root: Path, patterns: tuple[str, ...]) -> None:
    """``update`` with the names and bytes of the files matching ``patterns`` under ``root``."""
    for pattern in patterns:
        for path in sorted(root.glob(pattern)):
            update(path.relative_to(root).as_posix().encode() + b"\0")
            try:
                update(path.read_bytes())
            except OSError:
                update(b"<unreadable>")


@functools.lru_cache(maxsize=1)
def _fingerprint() -> str:
    """bridge's version and the source of its model-building modules, the source of yourdfpy (found
    without importing it: importing it is what a hit saves), Python's and numpy's versions."""
    import importlib.util

    import bridge

    h = hashlib.sha256()
    _hash_sources(h.update, Path(bridge.__file__).resolve().parent, _SOURCES)
    spec = importlib.util.find_spec("yourdfpy")
    for location in (spec.submodule_search_locations or []) if spec is not None else []:
        _hash_sources(h.update, Path(location), ("*.py",))
    versions = [getattr(bridge, "__version__", "?"), sys.version, np.__version__]
    return h.hexdigest() + ":" + ":".join(versions)


def _plain(value: object) -> object:
    """A loading option as JSON (a locked position as a list of floats)."""
    if isinstance(value, Mapping):
        return [[str(k), _plain(v)] for k, v in value.items()]
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, (bool, str)):
        return value
    return repr(np.asarray(value, dtype=np.float64).tolist())


def key(reader: str, data: bytes, where: str, options: Mapping[str, object]) -> str | None:
    """The key of a load (hex SHA-256; see the module docstring), or None when the load is not to be
    cached (the cache is off, or an option has no exact description)."""
    if not enabled():
        return None
    try:
        opts = {name: _plain(v) for name, v in sorted(options.items())}
    except (TypeError, ValueError):  # (a locked position that is no number: the parse says what)
        return None
    head = {
        "format": FORMAT_VERSION,
        "code": _fingerprint(),
        "reader": reader,
        "where": where,
        "data": hashlib.sha256(data).hexdigest(),
        "options": opts,
    }
    return hashlib.sha256(json.dumps(head, sort_keys=True).encode()).hexdigest()


# --------------------------------------------------------------------------- reading
class _Unpickler(pickle.Unpickler):
    """Resolves only what a model is made of (:data:`_ALLOWED`)."""

    def find_class(self, module: str, name: str) -> object:
        if (module, name) not in _ALLOWED:
            raise pickle.UnpicklingError(f"{module}.{name} is not part of a model")
        return super().find_class(module, name)


def _private(path: Path) -> bool:
    """Whether the folder ``path`` is a directory of this user that nobody else can write to."""
    try:
        st = os.stat(path)
    except OSError:
        return False
    if not stat.S_ISDIR(st.st_mode):
        return False
    return not hasattr(os, "getuid") or (st.st_uid == os.getuid() and not st.st_mode & 0o022)


def _category(name: object) -> type[BridgeWarning]:
    cls = getattr(_errors, name, None) if isinstance(name, str) else None
    if not (isinstance(cls, type) and issubclass(cls, BridgeWarning)):
        raise ValueError(f"not a warning category: {name!r}")
    return cls


def load(entry_key: str | None) -> tuple[Model, list[tuple[str, type[BridgeWarning]]]] | None:
    """The model and the warnings (message, category) stored under ``entry_key``, or None (no
    entry, or one that is not to be trusted: see the module docstring)."""
    if entry_key is None:
        return None
    where = _folder()
    if where is None or not _private(where):
        return None
    try:
        with open(where / f"{entry_key}.model", "rb") as f:
            raw = f.read(_MAX_ENTRY_BYTES + 1)
    except OSError:
        return None
    try:
        found = _decode(raw, entry_key)
    except Exception:  # anything an unreadable entry raises (json, pickle, numpy, bridge): a miss
        return None
    with contextlib.suppress(OSError):  # (recently used: kept when the folder is pruned)
        os.utime(where / f"{entry_key}.model")
    return found


def _decode(raw: bytes, entry_key: str) -> tuple[Model, list[tuple[str, type[BridgeWarning]]]]:
    if len(raw) > _MAX_ENTRY_BYTES or not raw.startswith(_MAGIC):
        raise ValueError("not an entry")
    header, sep, body = raw[len(_MAGIC) :].partition(b"\n")
    if not sep:
        raise ValueError("truncated")
    head = json.loads(header)
    if head.get("format") != FORMAT_VERSION or head.get("key") != entry_key:
        raise ValueError("another entry")
    if hashlib.sha256(body).hexdigest() != head.get("sha256"):
        raise ValueError("corrupt")
    issued, sep, payload = body.partition(b"\n")
    if not sep:
        raise ValueError("truncated")
    found = [(str(message), _category(category)) for category, message in json.loads(issued)]
    model = _Unpickler(io.BytesIO(payload)).load()
    if not isinstance(model, Model):
        raise ValueError("not a model")
    return model, found


# --------------------------------------------------------------------------- writing
def _make_private(path: Path) -> bool:
    """Create the folder ``path`` (``0700``, and its missing parents' last one too) if missing; True
    if it is then a private folder of this user."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        path.mkdir(mode=0o700, exist_ok=True)
    except OSError:
        return False
    return _private(path)


def store(entry_key: str | None, model: Model, issued: list[tuple[str, type[BridgeWarning]]]) -> None:
    """Store ``model`` and the warnings its parse ``issued`` under ``entry_key`` (nothing if None, or
    if anything fails: a cache that cannot be written is no cache, not an error)."""
    if entry_key is None:
        return
    try:
        for _, category in issued:
            _category(category.__name__)  # (only bridge's own categories can be replayed)
        payload = pickle.dumps(model, protocol=pickle.HIGHEST_PROTOCOL)
        _decode_check = _Unpickler(io.BytesIO(payload)).load()  # what a hit would read
        if not isinstance(_decode_check, Model):
            return
    except Exception:  # (a model holding something outside the allowed classes: not cached)
        return
    body = json.dumps([[category.__name__, message] for message, category in issued]).encode()
    body += b"\n" + payload
    head = {"format": FORMAT_VERSION, "key": entry_key, "sha256": hashlib.sha256(body).hexdigest()}
    data = _MAGIC + json.dumps(head).encode() + b"\n" + body
    where = _folder()
    if where is None or not _make_private(where):
        return
    from bridge._files import write_atomic

    # (a full disk, a read-only folder: not stored, the next load parses again)
    with contextlib.suppress(BridgeError, OSError):
        write_atomic(where / f"{entry_key}.model", data, replace=True, what="model cache entry")
    _prune(where)


def _prune(where: Path) -> None:
    """Remove the least recently used entries beyond :data:`MAX_ENTRIES`."""
    try:
        entries = [e for e in os.scandir(where) if e.name.endswith(".model")]
        if len(entries) <= MAX_ENTRIES:
            return
        entries.sort(key=lambda e: e.stat().st_mtime_ns)
    except OSError:
        return
    for e in entries[: len(entries) - MAX_ENTRIES]:
        with contextlib.suppress(OSError):
            os.unlink(e.path)
