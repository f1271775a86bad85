"""The one exception hierarchy of bridge.

Every error bridge raises derives from :class:`BridgeError`. Each family also derives from the
built-in exception a Python user would expect (``ValueError`` for bad values, ``KeyError`` for
unknown names, ``FileNotFoundError`` for missing files), so ``except ValueError`` keeps working.

Every warning bridge emits derives from :class:`BridgeWarning` (a ``UserWarning``): input that the
libraries accept but that is questionable (a link inertia no rigid body can have, mimic joints
loaded as independent DOFs, an XML declaration with a bogus version). ``load_urdf(..., strict=True)``
turns each of them into the error it describes; ``warnings.simplefilter("error", BridgeWarning)``
does the same for every warning.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

__all__ = [
    "BackendError",
    "BridgeError",
    "BridgeWarning",
    "DatasetError",
    "FileAccessError",
    "InertiaError",
    "InvalidValueError",
    "MimicJointWarning",
    "ModelError",
    "ModelFileNotFoundError",
    "ModelTooLargeError",
    "NonPhysicalInertiaWarning",
    "SDFError",
    "SDFWarning",
    "ShapeError",
    "SingularMassMatrixError",
    "StateError",
    "ThreadOwnershipError",
    "URDFError",
    "URDFWarning",
    "UnknownNameError",
    "UnsupportedError",
]


class BridgeError(Exception):
    """Base class of every error raised by bridge."""


class ShapeError(BridgeError, ValueError):
    """An array argument has the wrong shape."""


class InvalidValueError(BridgeError, ValueError):
    """An argument has the right shape but an invalid value (NaN, non-orthonormal rotation, ...)."""


class InertiaError(InvalidValueError):
    """A spatial inertia is not physically consistent."""


class ModelError(BridgeError, ValueError):
    """A multibody model is malformed (topology, names, joint data)."""


class URDFError(ModelError):
    """A URDF document cannot be turned into a model; the message names the file and element."""


class SDFError(ModelError):
    """An SDFormat document cannot be turned into a model; the message names the file and element."""


class UnsupportedError(ModelError):
    """The input uses a feature bridge does not support (e.g. a planar joint)."""


class SingularMassMatrixError(ModelError):
    """The mass matrix is singular (a movable joint moves no inertia): forward dynamics is undefined."""


class ModelFileNotFoundError(BridgeError, FileNotFoundError):
    """A model file does not exist."""

    def __str__(self) -> str:  # FileNotFoundError formats (errno, strerror); keep the plain text
        return str(self.args[0]) if self.args else ""


class FileAccessError(BridgeError, OSError):
    """A file cannot be read or written as asked: its name is too long, permission is denied, it is
    not a regular file (a directory, a FIFO, a device), it is too large, it is an input of the
    command that would overwrite it, the disk is full; the message names the file and the cause."""

    def __str__(self) -> str:  # OSError formats (errno, strerror); keep the plain text
        return str(self.args[0]) if self.args else ""


class UnknownNameError(BridgeError, KeyError):
    """A link, joint, frame or robot name is not known; the message lists close matches."""

    def __init__(self, kind: str, name: str, known: Iterable[str] = (), where: str = "") -> None:
        known = list(known)
        close = difflib.get_close_matches(str(name), known, n=5, cutoff=0.5)
        msg = f"unknown {kind} {name!r}"
        if where:
            msg += f" in {where}"
        if close:
            msg += "; did you mean " + ", ".join(repr(c) for c in close) + "?"
        elif known and len(known) <= 12:
            msg += "; known: " + ", ".join(repr(k) for k in known)
        super().__init__(msg)
        self.kind = kind
        self.name = name
        self.close_matches = close

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0])


class StateError(BridgeError, ValueError):
    """A robot state (pose, joint positions, velocities) is invalid for the model."""


class DatasetError(BridgeError, ValueError):
    """A data file of states or labels cannot be read or written as asked; the message names the
    file and, where there is one, the row and the column."""


class BackendError(BridgeError):
    """A foreign library rejected or could not represent something."""


class ThreadOwnershipError(BridgeError, RuntimeError):
    """A KinDyn was asked from a thread other than the one that set its state (its answers belong
    to that thread until another ``set_state``; the message says what to do instead)."""


class ModelTooLargeError(BackendError, MemoryError):
    """A library cannot allocate its data for a model this large (the message gives the model's size,
    the memory it would take and the engine to use instead)."""


# --------------------------------------------------------------------------- warnings
class BridgeWarning(UserWarning):
    """Base class of every warning emitted by bridge (the message names the file and element)."""


class NonPhysicalInertiaWarning(BridgeWarning):
    """A link inertia no rigid body can have, loaded as is (as Pinocchio and iDynTree load it)."""


class MimicJointWarning(BridgeWarning):
    """A mimic joint loaded as an independent DOF (what Pinocchio's and iDynTree's loaders do)."""


class URDFWarning(BridgeWarning):
    """A URDF document that is irregular but readable (e.g. a bogus XML declaration)."""


class SDFWarning(BridgeWarning):
    """An SDFormat document read with something left out (e.g. the rest of a world around its model)."""
