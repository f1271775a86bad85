"""MuJoCo's own warnings, collected instead of printed, and the non-finite value they are about.

MuJoCo's XML parser prints "WARNING: XML contains a 'NaN'. Please check it carefully." on the
process's standard output (from C, before Python's error). ``captured_warnings`` installs a
warning handler for the duration of a parse, so the text reaches bridge's error or warning instead;
``nonfinite_value`` names the first non-finite number of an MJCF file's bodies, joints, sites
and geoms (the element and the attribute), for the error when MuJoCo's compiler then fails with a
message about something else ("mass and inertia of moving bodies must be larger than mjMINVAL").
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from bridge._files import library_path
from bridge.errors import ModelError

__all__ = ["captured_warnings", "nonfinite_value", "object_name"]

#: the numbers of each kind of MJCF element that hold no NaN unless the file wrote one (MuJoCo
#: keeps NaN as "unset" in others, such as a body's ``ipos`` and ``fullinertia``, a geom's ``mass``)
_ATTRIBUTES = {  # element kind -> (the MjSpec's list of them, their attributes)
    "body": ("bodies", "pos", "quat", "mass", "iquat", "inertia"),
    "joint": ("joints", "pos", "axis", "ref", "range", "armature", "damping", "stiffness", "frictionloss"),
    "site": ("sites", "pos", "quat", "size"),
    "geom": ("geoms", "pos", "quat", "size", "density"),
}


def object_name(mujoco: Any, m: Any, objtype: Any, i: int, default: str) -> str:
    """The name of object ``i`` of type ``objtype`` in the compiled model ``m`` (``default`` if
    unnamed); a :class:`bridge.ModelError` if its bytes are not UTF-8 (MuJoCo keeps a name's bytes
    as the file has them; Python cannot read them as text)."""
    try:
        name = mujoco.mj_id2name(m, objtype, i)
    except UnicodeDecodeError as exc:
        kind = str(getattr(objtype, "name", objtype)).removeprefix("mjOBJ_").lower()
        raise ModelError(
            f"the name of {kind} {i} is not UTF-8 text ({exc.object!r}): bridge's names are text; "
            "save the file as UTF-8"
        ) from None
    return name if name else default


@contextmanager
def captured_warnings(mujoco: Any) -> Iterator[list[str]]:
    """Within the block, MuJoCo's warnings are appended to the list yielded instead of printed (the
    previous handler is restored after)."""
    said: list[str] = []
    previous = mujoco.get_mju_user_warning()
    mujoco.set_mju_user_warning(said.append)
    try:
        yield said
    finally:
        mujoco.set_mju_user_warning(previous)


def nonfinite_value(mujoco: Any, path: str) -> str | None:
    """``"body 'a': mass = nan"`` for the first non-finite number of the MJCF file ``path`` (see
    ``_ATTRIBUTES``), or None (none, or the file does not parse)."""
    with captured_warnings(mujoco):
        try:
            spec = mujoco.MjSpec.from_file(library_path(path))
        except ValueError:
            return None
    for kind, (elements, *attributes) in _ATTRIBUTES.items():
        for i, element in enumerate(getattr(spec, elements)):
            for attr in attributes:
                value = np.atleast_1d(np.asarray(getattr(element, attr, 0.0), dtype=float))
                if not np.all(np.isfinite(value)):
                    shown = " ".join(f"{x:g}" for x in value)
                    return f"{kind} {element.name or f'{kind}{i}'!r}: {attr} = {shown!r}"
    return None
