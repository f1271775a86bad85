"""What the model-file readers share (:func:`bridge.load_urdf`, :func:`bridge.load_sdf`): warnings
kept or raised (:class:`Issues`), XML given as text, a link from its inertial frame, the loading
options checked and applied (base, DOFs, locked joints, mimic relations)."""

from __future__ import annotations

import re
import warnings
from collections.abc import Mapping, Sequence

import numpy as np

from bridge._array import as_bool
from bridge.errors import (
    BridgeError,
    BridgeWarning,
    InertiaError,
    InvalidValueError,
    MimicJointWarning,
    ModelError,
    NonPhysicalInertiaWarning,
    UnknownNameError,
    UnsupportedError,
    URDFError,
)
from bridge.model.mimic import Mimic, couple
from bridge.model.model import Joint, Link, Model
from bridge.spatial import SpatialInertia

__all__ = [
    "Issues",
    "check_arguments",
    "inertial_link",
    "inline_xml",
    "mimic_relations",
    "rooted_and_selected",
]

_XML_DECLARATION = re.compile(r"^\s*<\?xml[^>]*\?>")
MIMIC_MODES = ("independent", "coupled", "error")


class Issues:
    """What the libraries accept but is questionable: a warning each, or (strict) the first raised."""

    def __init__(self, strict: bool) -> None:
        self.strict = strict
        self.items: list[tuple[str, type[BridgeWarning]]] = []

    def report(self, error: BridgeError, category: type[BridgeWarning], warning: str | None = None) -> None:
        """Raise ``error`` (strict) or keep the warning (``warning``, default the error's text)."""
        if self.strict:
            raise error
        self.items.append((str(error) if warning is None else warning, category))

    def emit(self, stacklevel: int) -> None:
        for message, category in self.items:
            warnings.warn(message, category, stacklevel=stacklevel + 1)


def inline_xml(path_or_xml: object, kind: str) -> tuple[bytes, str] | None:
    """``(XML bytes, "<KIND bytes>" or "<KIND string>")`` when ``path_or_xml`` is the document itself
    (``bytes``, or a ``str`` starting with ``<`` after white space); None for a path."""
    if isinstance(path_or_xml, bytes):
        return path_or_xml, f"<{kind} bytes>"
    if isinstance(path_or_xml, str):
        text = path_or_xml.lstrip().lstrip("\ufeff").lstrip()
        if text.startswith("<"):
            # the text is already decoded: drop a declaration that could name another encoding
            return _XML_DECLARATION.sub("", text, count=1).encode("utf-8"), f"<{kind} string>"
    return None


def inertial_link(
    name: str,
    mass: float,
    link_H_inertial: np.ndarray,
    inertia: np.ndarray,
    where: str,
    check_inertia: bool,
    issues: Issues,
) -> Link:
    """The link ``name`` with ``mass`` (kg) at the origin of the inertial frame ``link_H_inertial``
    (4, 4) and ``inertia`` (3, 3) about that point in the inertial frame's axes, in link coordinates;
    checked (``check_inertia``: a warning, or the error with ``issues.strict``). A zero mass with a
    zero inertia is a massless link."""
    R = link_H_inertial[:3, :3]
    if mass == 0.0 and not np.any(inertia):  # <inertial> of a massless link: the same as none
        return Link(name, SpatialInertia.zero())
    try:
        spatial = SpatialInertia(mass, link_H_inertial[:3, 3], R @ inertia @ R.T)
    except BridgeError as exc:
        raise InertiaError(f"{where}: link {name!r}: {exc}") from None
    if check_inertia:
        try:
            spatial.check_physical(f"{where}: link {name!r}", allow_massless=True)
        except InertiaError as exc:
            issues.report(
                exc,
                NonPhysicalInertiaWarning,
                f"{exc} (loaded as is, as Pinocchio's and iDynTree's loaders do; strict=True makes it "
                "an error)",
            )
    return Link(name, spatial)


def check_arguments(
    base: object,
    joints: object,
    floating: object,
    locked: object,
    check_inertia: object,
    mimic: object,
    strict: object,
) -> tuple[bool, bool, bool, tuple[str, ...] | None]:
    """The arguments of ``load_urdf`` (and ``load_sdf``) checked before the file is read:
    ``floating``, ``check_inertia`` and ``strict`` as bools and ``joints`` as a tuple of names (or
    None)."""
    if mimic is not None and (not isinstance(mimic, str) or mimic not in MIMIC_MODES):
        raise URDFError(f"mimic must be one of {', '.join(map(repr, MIMIC_MODES))}, got {mimic!r}")
    flags = (_flag(floating, "floating"), _flag(check_inertia, "check_inertia"), _flag(strict, "strict"))
    if base is not None and not isinstance(base, str):
        raise ModelError(f"base: expected a link name (str), got {base!r}")
    if isinstance(joints, str):
        raise ModelError(f"joints must be a sequence of joint names, not the string {joints!r}")
    if joints is not None:
        try:
            joints = tuple(joints)  # type: ignore[arg-type]
        except TypeError:
            joints = None
        if joints is None or not all(isinstance(j, str) for j in joints):
            raise ModelError("joints must be a sequence of joint names (str)")
    if locked is not None and not isinstance(locked, Mapping):
        raise ModelError(f"locked must be a mapping {{joint name: position}}, got {type(locked).__name__}")
    return (*flags, joints)  # type: ignore[return-value]


def rooted_and_selected(
    model: Model,
    where: str,
    base: str | None,
    joints: tuple[str, ...] | None,
    locked: Mapping[str, float] | None,
    mimics: Sequence[Mimic],
) -> Model:
    """``model`` re-rooted at ``base``, coupled by ``mimics`` (if any), and with the DOFs ``joints``
    (the others locked at ``locked``'s positions, 0 by default)."""
    if base is not None:
        if base not in model.link_names:
            raise UnknownNameError("link", base, model.link_names, where=where)
        model = model.with_base(base)
    if mimics:
        model = couple(model, mimics)
    if joints is not None or locked:
        locked = dict(locked or {})
        names = joints if joints is not None else tuple(d for d in model.dof_names if d not in locked)
        for name in (*names, *locked):
            if name not in model.joint_names:
                raise UnknownNameError("joint", name, model.joint_names, where=where)
        model = model.with_dofs(names, locked)
    return model


def _flag(value: object, name: str) -> bool:
    """A bool argument of ``load_urdf`` (``floating="no"`` is not False: it is refused)."""
    try:
        return as_bool(value, name)
    except InvalidValueError as exc:
        raise ModelError(str(exc)) from None


def mimic_relations(
    tags: Sequence[Mimic], joints: Sequence[Joint], where: str, mode: str | None, issues: Issues
) -> list[Mimic]:
    """The mimic relations ``tags`` (as read from a file) checked against ``joints``: those that
    hold, with warnings or errors as ``mode`` asks (``load_urdf``'s ``mimic`` argument)."""
    by_name = {j.name: j for j in joints}
    out: list[Mimic] = []
    for tag in tags:
        name, master, multiplier, offset = tag.joint, tag.master, tag.multiplier, tag.offset
        what = f"{where}: joint {name!r} is a mimic joint (of {master!r})"
        if (multiplier, offset) != (1.0, 0.0):
            what += f" with multiplier {multiplier:g} and offset {offset:g}"
        if mode == "error":
            raise UnsupportedError(
                f"{what}; mimic='error' rejects mimic joints (mimic='independent' loads them as independent "
                "DOFs, as Pinocchio's and iDynTree's URDF loaders do; mimic='coupled' keeps the relation)"
            )
        problem = None
        if not by_name[name].movable:
            problem = "it is a fixed joint, so the <mimic> element has no effect"
        elif master not in by_name:
            problem = "its master is not a joint of the robot, so the <mimic> element is ignored"
        elif not by_name[master].movable:
            problem = "its master is a fixed joint, so the <mimic> element is ignored"
        if mode is None:
            issues.report(
                UnsupportedError(
                    f"{what}; strict loading needs mimic='independent' (independent DOFs, as Pinocchio's "
                    "and iDynTree's URDF loaders load them) or mimic='coupled' (the relation kept)"
                ),
                MimicJointWarning,
                f"{what}; {problem}"
                if problem
                else f"{what}: loaded as an independent DOF, ignoring the relation (what Pinocchio's and "
                "iDynTree's URDF loaders do); mimic='coupled' keeps it, mimic='independent' loads it so "
                "without this warning",
            )
        if problem is not None:
            if mode == "coupled" and by_name[name].movable:
                raise URDFError(f"{what}; mimic='coupled' cannot keep the relation: {problem.split(',')[0]}")
            continue
        out.append(tag)
    return out
