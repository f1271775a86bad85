"""Which joint kinds a library's converter takes, and the error naming the joints it does not.

Every engine takes the one-coordinate joints (revolute, continuous, prismatic) and fixed joints;
the joints of several coordinates (planar, ball, free: :mod:`bridge.model.joints`) only where a
library has them and bridge converts them. A converter that does not take them calls
:func:`refuse_joints` first thing, so that such a model is refused at once with a
:class:`bridge.BackendError` naming each joint and its kind (``cross_validate`` and ``bridge check``
then leave the engine out with that note) instead of a library's own error or wrong numbers.
"""

from __future__ import annotations

from collections.abc import Iterable

from bridge.errors import BackendError
from bridge.model.joints import JointKind

__all__ = ["ONE_COORDINATE", "refuse_joints", "untaken_joints"]

#: the kinds every library takes: one-coordinate joints and fixed joints
ONE_COORDINATE = frozenset({JointKind.REVOLUTE, JointKind.CONTINUOUS, JointKind.PRISMATIC, JointKind.FIXED})


def untaken_joints(model: object, takes: Iterable[JointKind] = ONE_COORDINATE) -> list[str]:
    """``"'name' (kind)"`` for each joint of ``model`` whose kind is not in ``takes`` (model order)."""
    taken = frozenset(JointKind(k) for k in takes)
    return [f"{j.name!r} ({j.kind.value})" for j in model.joints if j.kind not in taken]


def refuse_joints(library: str, model: object, takes: Iterable[JointKind] = ONE_COORDINATE) -> None:
    """Raise :class:`bridge.BackendError` naming the joints of ``model`` whose kind the converter of
    ``library`` does not take (``takes``); nothing when it takes every joint."""
    takes = frozenset(JointKind(k) for k in takes)
    named = untaken_joints(model, takes)
    if not named:
        return
    kinds = ", ".join(k.value for k in JointKind if k in takes)
    raise BackendError(
        f"{library} cannot represent joint{'s' if len(named) > 1 else ''} {', '.join(named)} of model "
        f"{getattr(model, 'name', '?')!r} (bridge converts {kinds} joints to {library})"
    )
