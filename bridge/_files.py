"""Files: model files read within bounds, output files written atomically.

**Reading.** Every model file bridge reads, or hands a library to read, goes through
:func:`open_model_file` first: an ``OSError`` (a name too long, permission denied, a loop of
symbolic links, an I/O error) becomes a :class:`bridge.FileAccessError` naming the file and the
cause; a FIFO, a device or a directory is refused without waiting on it; a file above
:data:`MAX_MODEL_BYTES` is refused before it is read. :func:`root_element` reads a file's root
element incrementally, after any number of comments, processing instructions and a DOCTYPE, never
more of the file than that. :func:`library_path` is a path as the text a C++ loader opens (its
bytes as UTF-8, whatever Python's locale).

**Writing.** :func:`write_atomic` writes to a temporary file in the target's folder, fsyncs it,
then renames it over the target (``replace=True``) or links it to the target name, which fails if
the name exists (``replace=False``: of two concurrent writers one succeeds, the other gets a
FileAccessError). Nothing is half-written: on any failure (disk full, the file-size limit, an
exception or an interrupt mid-way) the old file stays as it was and the temporary file is removed.
A target that is one of the command's ``inputs`` (also through a symbolic link, a hard link or
another spelling of the path) or that is not a regular file (a FIFO, a device, a directory) is
refused, with or without ``replace``; :func:`check_output` checks all of it before any work.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import BinaryIO

from bridge.errors import BridgeError, FileAccessError, ModelFileNotFoundError

__all__ = [
    "MAX_MODEL_BYTES",
    "atomic_file",
    "check_model_file",
    "check_output",
    "file_status",
    "library_path",
    "open_model_file",
    "read_model_file",
    "referenced_files",
    "root_element",
    "write_atomic",
]

#: the largest model file bridge reads (the largest robot descriptions are a few MB; beyond this an
#: XML parser needs gigabytes of memory)
MAX_MODEL_BYTES = 256 * 2**20
_CHUNK = 1 << 16
#: a FIFO opened without waiting for a writer, no inherited descriptor, no controlling terminal
_OPTIONAL_FLAGS = getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
#: what ``os.link`` says on a file system without hard links
_NO_LINKS = {errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV, errno.EMLINK, errno.ENOSYS}
#: the longest DOCTYPE (with its internal subset) :func:`root_element` reads through
_MAX_DOCTYPE = 1 << 20


def _reason(exc: OSError) -> str:
    """The OS's words for ``exc`` (``"file name too long"``, ``"permission denied"``)."""
    text = exc.strerror or str(exc) or type(exc).__name__
    return text[:1].lower() + text[1:]


def _shown(path: object) -> str:
    return repr(os.fspath(path)) if isinstance(path, (str, bytes, os.PathLike)) else repr(path)


def _mode_name(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _stat(path: str | os.PathLike, what: str) -> os.stat_result | None:
    """``os.stat(path)`` (symbolic links followed); None if nothing is there; FileAccessError for
    any other failure (a name too long, a folder without permission, a loop of links)."""
    try:
        return os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise FileAccessError(f"{what} {_shown(path)}: {_reason(exc)}") from None
    except ValueError:  # an embedded NUL character
        raise FileAccessError(f"{what} {_shown(path)}: the name contains a NUL character") from None


def file_status(path: str | os.PathLike, what: str = "file") -> str:
    """``"file"``, ``"directory"``, ``"missing"`` or ``"other"`` (a FIFO, a device, a socket) for
    ``path``, symbolic links followed; a :class:`bridge.FileAccessError` naming ``what`` and the
    cause when the OS cannot tell (a name too long, a folder without permission)."""
    st = _stat(path, what)
    if st is None:
        return "missing"
    if stat.S_ISREG(st.st_mode):
        return "file"
    return "directory" if stat.S_ISDIR(st.st_mode) else "other"


# --------------------------------------------------------------------------- reading
@contextlib.contextmanager
def open_model_file(path: str | os.PathLike, what: str = "model file") -> Iterator[BinaryIO]:
    """``path`` open for reading in binary mode, checked: a regular file (a FIFO is not waited on)
    of at most :data:`MAX_MODEL_BYTES`. :class:`bridge.ModelFileNotFoundError` if it does not
    exist, :class:`bridge.FileAccessError` for anything else the OS refuses, naming ``what``."""
    flags = os.O_RDONLY | _OPTIONAL_FLAGS
    try:
        fd = os.open(path, flags)
    except (FileNotFoundError, NotADirectoryError):
        raise ModelFileNotFoundError(f"{what} not found: {_shown(path)}") from None
    except OSError as exc:
        raise FileAccessError(f"{what} {_shown(path)}: cannot open it ({_reason(exc)})") from None
    except (ValueError, TypeError) as exc:
        raise FileAccessError(f"{what} {_shown(path)}: not a usable file name ({exc})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise FileAccessError(f"{what} {_shown(path)} is {_mode_name(st.st_mode)}, not a regular file")
        if st.st_size > MAX_MODEL_BYTES:
            raise FileAccessError(
                f"{what} {_shown(path)} is {st.st_size / 2**20:.0f} MB: bridge reads model files of at most "
                f"{MAX_MODEL_BYTES // 2**20} MB (robot descriptions are a few MB)"
            )
        os.set_blocking(fd, True)
        file = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    with file:
        try:
            yield file
        except BridgeError:
            raise
        except OSError as exc:  # a read failing (an I/O error)
            raise FileAccessError(f"{what} {_shown(path)}: cannot read it ({_reason(exc)})") from None


def read_model_file(path: str | os.PathLike, what: str = "model file") -> bytes:
    """The bytes of the model file ``path`` (:func:`open_model_file`'s checks and errors)."""
    with open_model_file(path, what) as f:
        data = f.read(MAX_MODEL_BYTES + 1)
    if len(data) > MAX_MODEL_BYTES:  # (it grew while being read)
        raise FileAccessError(f"{what} {_shown(path)} is larger than {MAX_MODEL_BYTES // 2**20} MB")
    return data


def check_model_file(path: str | os.PathLike, what: str = "model file") -> None:
    """Raise as :func:`read_model_file` would, without reading the file (for a file a library
    opens by name: MuJoCo's compiler, Drake's parser)."""
    with open_model_file(path, what) as f:
        f.read(1)


def library_path(path: str | os.PathLike) -> str:
    """``path`` as the text a library's C++ loader opens: the path's bytes as the file system has
    them, decoded as UTF-8 (which the library encodes back), so that a non-ASCII name opens under
    any locale (Python decodes names by the locale: under ``LC_ALL=C`` ``"é"`` arrives as escape
    characters no library can encode). :class:`bridge.FileAccessError` if those bytes are not UTF-8."""
    raw = os.fsencode(path)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise FileAccessError(
            f"{_shown(path)}: the file name is not UTF-8, which the libraries' loaders need (rename the file)"
        ) from None


_NAME = re.compile(rb"<\s*([A-Za-z_][\w.:-]*)")


def _declaration_end(buf: bytes) -> int:
    """The index after the ``>`` closing the ``<!...>`` declaration at the start of ``buf`` (its
    quoted strings and ``[...]`` internal subset skipped); -1 if it does not close in ``buf``."""
    quote = 0
    depth = 0
    for i in range(2, len(buf)):
        c = buf[i]
        if quote:
            quote = 0 if c == quote else quote
        elif c in b"\"'":
            quote = c
        elif c == ord("["):
            depth += 1
        elif c == ord("]"):
            depth -= 1
        elif c == ord(">") and depth <= 0:
            return i + 1
    return -1


def _skip_prolog(buf: bytes, eof: bool) -> tuple[bytes, str | None, bool]:
    """Consume the XML prolog at the start of ``buf``: ``(the rest, the root element's name or
    None, done)``; not done means more bytes are needed (the rest is kept small: an unfinished
    comment keeps its last two bytes only)."""
    while True:
        buf = buf.lstrip()
        if not buf:
            return buf, None, eof
        if not buf.startswith(b"<"):
            return buf, None, True  # text before any element: not XML
        if len(buf) < 4 and not eof:
            return buf, None, False  # "<", "<!", "<!-": wait for what it starts
        if buf.startswith(b"<?"):
            end = buf.find(b"?>", 2)
            if end < 0:
                return b"<?" + buf[2:][-1:], None, eof
            buf = buf[end + 2 :]
        elif buf.startswith(b"<!--"):
            end = buf.find(b"-->", 4)
            if end < 0:
                return b"<!--" + buf[4:][-2:], None, eof
            buf = buf[end + 3 :]
        elif buf.startswith(b"<!"):
            end = _declaration_end(buf)
            if end < 0:
                return buf, None, eof or len(buf) > _MAX_DOCTYPE
            buf = buf[end:]
        else:
            match = _NAME.match(buf)
            if match is not None and (match.end() < len(buf) or eof):
                return buf, match.group(1).decode("utf-8", errors="replace"), True
            return buf, None, eof or match is None


def root_element(path: str | os.PathLike, what: str = "model file") -> str | None:
    """The name of the root element of the XML file ``path`` (None: no element, or text before
    it), after a byte-order mark, an XML declaration and any number of comments, processing
    instructions and a DOCTYPE, read a chunk at a time: never more of the file than that
    (:func:`open_model_file`'s checks and errors)."""
    buf = b""
    with open_model_file(path, what) as f:
        bom = True  # (a byte-order mark may still start the file)
        while True:
            chunk = f.read(_CHUNK)
            buf += chunk
            if bom:
                if len(buf) < 3 and chunk:
                    continue
                buf, bom = buf.removeprefix(b"\xef\xbb\xbf"), False
            buf, name, done = _skip_prolog(buf, eof=not chunk)
            if done:
                return name


_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
#: the attributes that name a file a model file reads (MJCF includes, meshes, textures, ...)
_FILE_ATTRIBUTES = ("file", "filename")
#: MJCF's compiler attributes giving the folders of assets
_ASSET_DIRS = ("meshdir", "texturedir", "assetdir")


def referenced_files(path: str | os.PathLike) -> list[Path]:
    """The files the model file ``path`` names (``file`` / ``filename`` attributes: MJCF
    includes, read recursively, meshes, textures, heightfields; URDF and SDFormat meshes),
    relative names resolved against every folder they may mean (the including file's, the model
    file's, and those with MJCF's ``meshdir`` / ``texturedir`` / ``assetdir``); URIs
    (``package://``, ``model://``) left out. Best effort and generous (the list only keeps outputs
    off the inputs): a file that does not parse names nothing."""
    top = Path(os.path.abspath(path))
    out: list[Path] = []
    seen: set[Path] = set()
    todo = [top]
    while todo and len(seen) < 1000:
        here = todo.pop()
        if here in seen:
            continue
        seen.add(here)
        named, asset_dirs = _named_files(here)
        folders = {f / d for f in (here.parent, top.parent) for d in (".", *asset_dirs)}
        for element, value in named:
            for folder in folders:
                candidate = Path(os.path.abspath(folder / value))
                out.append(candidate)
                if element == "include" and _status_quiet(candidate) == "file":
                    todo.append(candidate)
    return out


def _named_files(path: Path) -> tuple[list[tuple[str, str]], list[str]]:
    """``([(element tag, file name)], MJCF compiler asset folders)`` of the XML file ``path``: every
    file attribute that is not a URI; nothing if the file does not parse."""
    import xml.etree.ElementTree as ET

    try:
        root = ET.fromstring(read_model_file(path))
    except (BridgeError, ET.ParseError, ValueError):
        return [], []
    folders = [d for c in root.iter("compiler") for d in (c.get(a) for a in _ASSET_DIRS) if d]
    named = [
        (str(el.tag), value)
        for el in root.iter()
        for value in (el.get(a) for a in _FILE_ATTRIBUTES)
        if value and not _URI.match(value)
    ]
    return named, folders


def _status_quiet(path: str | os.PathLike) -> str:
    """:func:`file_status`, ``"missing"`` instead of an error."""
    try:
        return file_status(path)
    except FileAccessError:
        return "missing"


# --------------------------------------------------------------------------- writing
def _target(path: str | os.PathLike) -> Path:
    """The file to write for ``path``: the file a symbolic link points to (written through)."""
    p = Path(path)
    return Path(os.path.realpath(p)) if os.path.islink(p) else p


def _identities(paths: Iterable[str | os.PathLike]) -> dict[tuple[int, int], str]:
    """``(device, inode) -> the path given`` of each existing file of ``paths``."""
    out: dict[tuple[int, int], str] = {}
    for p in paths:
        try:
            st = os.stat(p)
        except (OSError, ValueError):
            continue
        out.setdefault((st.st_dev, st.st_ino), os.fspath(p))
    return out


def check_output(
    path: str | os.PathLike,
    *,
    replace: bool,
    inputs: Iterable[str | os.PathLike] = (),
    what: str = "output file",
    hint: str = "pass replace=True to replace it",
) -> Path:
    """Check that ``path`` can be written, before any work; returns the file to write (a symbolic
    link's target). :class:`bridge.FileAccessError` naming ``what`` when its folder does not
    exist, it is a directory or another non-regular file (a FIFO, a device), it is one of
    ``inputs`` (with or without ``replace``), it exists and ``replace`` is false (the message ends
    with ``hint``), it is read-only, or its folder cannot be written (a temporary file is created
    there and removed)."""
    shown = _shown(path)
    target = _target(path)
    parent = target.parent
    status = file_status(parent, f"{what} {shown}: directory")
    if status == "missing":
        raise FileAccessError(f"{what} {shown}: directory {_shown(parent)} does not exist")
    if status != "directory":
        raise FileAccessError(f"{what} {shown}: {_shown(parent)} is not a directory")
    st = _stat(target, what)
    if st is not None:
        if stat.S_ISDIR(st.st_mode):
            raise FileAccessError(f"{what} {shown} is a directory; give a file name")
        if not stat.S_ISREG(st.st_mode):
            raise FileAccessError(
                f"{what} {shown} is {_mode_name(st.st_mode)}, not a regular file: bridge writes regular "
                "files only (through a temporary file renamed over the target)"
            )
        source = _identities(inputs).get((st.st_dev, st.st_ino))
        if source is not None:
            also = "" if os.path.abspath(source) == os.path.abspath(path) else f" ({source!r})"
            raise FileAccessError(
                f"{what} {shown} is an input of this command{also}: bridge never overwrites its "
                "inputs; give another output file"
            )
        if not replace:
            raise FileAccessError(f"{what} {shown} exists; {hint}")
        if not os.access(target, os.W_OK):
            raise FileAccessError(f"{what} {shown} is not writable")
    _name_fits(target, what, shown)
    fd, probe = _temporary(target, what, shown)
    os.close(fd)
    _remove(probe)
    return target


def _name_fits(target: Path, what: str, shown: str) -> None:
    """FileAccessError when the file name is longer than the folder's file system allows."""
    try:
        limit = os.pathconf(target.parent, "PC_NAME_MAX")
    except (OSError, ValueError, AttributeError):
        limit = 255
    if len(os.fsencode(target.name)) > limit:
        raise FileAccessError(f"{what} {shown}: file name too long (at most {limit} bytes)")


def _temporary(target: Path, what: str, shown: str) -> tuple[int, str]:
    """A new temporary file next to ``target`` (its descriptor and path), hidden, its name short."""
    try:
        return tempfile.mkstemp(prefix=f".{target.name[:40]}.", suffix=".tmp", dir=target.parent)
    except OSError as exc:
        raise FileAccessError(
            f"{what} {shown}: cannot write in {_shown(target.parent)} ({_reason(exc)})"
        ) from None


def _remove(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


def _new_file_mode() -> int:
    """``0o666`` less the process's umask (what ``open(path, "w")`` would give)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return 0o666 & ~int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _link_exclusive(tmp: str, target: Path) -> None:
    """Give ``tmp`` the name ``target`` unless that name exists (FileExistsError): a hard link
    (atomic), or on a file system without hard links an exclusive placeholder renamed over."""
    try:
        os.link(tmp, target)
    except FileExistsError:
        raise
    except OSError as exc:
        if exc.errno not in _NO_LINKS:
            raise
        placeholder = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.close(placeholder)
        try:
            os.replace(tmp, target)
        except BaseException:
            _remove(str(target))
            raise
    else:
        _remove(tmp)


def _sync_folder(folder: Path) -> None:
    """fsync the folder (the rename made durable); best effort."""
    with contextlib.suppress(OSError, AttributeError):
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


@contextlib.contextmanager
def atomic_file(
    path: str | os.PathLike,
    *,
    replace: bool,
    inputs: Iterable[str | os.PathLike] = (),
    what: str = "output file",
    hint: str = "pass replace=True to replace it",
) -> Iterator[str]:
    """Yield the name of a new temporary file beside ``path`` (in its folder) for the caller to
    write, in any number of steps; when the block ends without an exception it is fsynced and
    becomes ``path`` (see the module docstring), after :func:`check_output`'s checks (before the
    block, and again at the end: the folder may have changed while the caller worked). The old file
    is replaced only with ``replace``, keeping its permissions (a new file gets ``0o666`` less the
    umask). Any failure is a :class:`bridge.FileAccessError` naming ``what`` and the cause (an
    exception of the block propagates); the old file is then as it was and no temporary file is
    left."""
    target = check_output(path, replace=replace, inputs=inputs, what=what, hint=hint)
    shown = _shown(path)
    st = _stat(target, what)
    mode = stat.S_IMODE(st.st_mode) if st is not None else _new_file_mode()
    fd, tmp = _temporary(target, what, shown)
    os.close(fd)
    try:
        yield tmp
        check_output(path, replace=replace, inputs=inputs, what=what, hint=hint)
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fchmod(fd, mode)
            os.fsync(fd)
        finally:
            os.close(fd)
        if replace:
            os.replace(tmp, target)
        else:
            _link_exclusive(tmp, target)
    except FileExistsError:
        _remove(tmp)
        raise FileAccessError(f"{what} {shown} was created by someone else meanwhile; {hint}") from None
    except FileAccessError:
        _remove(tmp)
        raise
    except OSError as exc:
        _remove(tmp)
        unchanged = "the old file is unchanged" if st is not None else "nothing was written"
        raise FileAccessError(f"{what} {shown}: cannot write ({_reason(exc)}); {unchanged}") from None
    except BaseException:
        _remove(tmp)
        raise
    _remove(tmp)  # (its name, after a link; nothing after a replace)
    _sync_folder(target.parent)


def write_atomic(
    path: str | os.PathLike,
    data: str | bytes,
    *,
    replace: bool,
    inputs: Iterable[str | os.PathLike] = (),
    what: str = "output file",
    hint: str = "pass replace=True to replace it",
) -> None:
    """Write ``data`` (text as UTF-8) to ``path`` atomically (:func:`atomic_file`)."""
    payload = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    with atomic_file(path, replace=replace, inputs=inputs, what=what, hint=hint) as tmp:
        fd = os.open(tmp, os.O_WRONLY | os.O_TRUNC)
        try:
            _write_all(fd, payload)
        finally:
            os.close(fd)
