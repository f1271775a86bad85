"""MuJoCo's own compiler on an MJCF file next to bridge's model of the same file, and why they differ.

bridge reads an MJCF file through MuJoCo's compiler (:func:`~bridge.backends.mujoco.model.load_mjcf`),
so both sides share the compiled bodies, joint frames and inertias; they differ by what MuJoCo's
dynamics has and the neutral rigid-body model leaves out. :class:`MjcfLoader` compiles the file as
MuJoCo users do (``MjSpec.from_file`` then ``compile``, nothing removed) and gives ``M``
(``mj_fullM``), ``h = qfrc_bias - qfrc_passive`` and ``g`` (the same at zero velocity) at bridge's
states (a floating base through the file's free joint, :class:`~bridge.backends.mujoco.native.MujocoNative`).
Its causes (prefixed ``mujoco_``):

measured, each with the numbers of the spec compiled without it:

* ``mujoco_damping``: joint damping and stiffness (springs): passive forces;
* ``mujoco_tendons``: tendon stiffness and damping (passive forces) and armature (adds to M);
* ``mujoco_gravcomp``: bodies' gravity compensation, a passive force against gravity;
* ``mujoco_fluid``: fluid forces (option ``density`` / ``viscosity``);
* ``mujoco_armature``: armature on free joints (bridge's model keeps the hinge, slide and ball
  joints' armature, not a free joint's);

not measured, what the compiler did that bridge's model took over as compiled (the same numbers
on both sides, named so that a user comparing with the file's text knows):

* ``mujoco_inertia_from_geoms``: bodies whose mass and inertia MuJoCo computed from their geoms;
* ``mujoco_balanced_inertia``: bodies whose inertia ``balanceinertia``, ``boundmass`` or
  ``boundinertia`` changed (or the compiler's refusal without them);
* ``mujoco_fused_bodies``: bodies ``fusestatic`` merged into their parent;
* ``mujoco_bodies_left_out``: bodies of the file not in bridge's model (static bodies besides a
  floating base's tree: no joint moves them, so the tree's M, h, g do not depend on them);
* ``mujoco_refuses``: MuJoCo's compiler refuses the file (the message), no numbers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from bridge._files import library_path
from bridge.backends.mujoco.messages import captured_warnings, object_name
from bridge.backends.mujoco.model import require_mujoco
from bridge.backends.mujoco.native import REFUSED, MujocoNative, compile_spec, no_damping
from bridge.backends.native import Cause, Loaded, Source
from bridge.model.model import Model

__all__ = ["MjcfLoader"]

Edit = Callable[[Any], None]


def _zero(value: Any) -> Any:
    """0 in the shape of a spec attribute (a float or an array)."""
    return np.zeros_like(np.asarray(value)) if np.ndim(value) else 0.0


# ------------------------------------------------------------------ the edits that remove a cause
def _no_tendon_terms(s: Any) -> None:
    for t in s.tendons:
        t.stiffness, t.damping, t.armature = _zero(t.stiffness), _zero(t.damping), _zero(t.armature)


def _no_gravcomp(s: Any) -> None:
    for b in s.bodies:
        b.gravcomp = 0.0


def _no_fluid(s: Any) -> None:
    s.option.density = 0.0
    s.option.viscosity = 0.0


def _no_free_armature(s: Any) -> None:
    free = require_mujoco().mjtJoint.mjJNT_FREE
    for j in s.joints:
        if j.type == free:
            j.armature = 0.0


def _no_inertia_options(s: Any) -> None:
    s.compiler.balanceinertia = False
    s.compiler.boundmass = 0.0
    s.compiler.boundinertia = 0.0


# ------------------------------------------------------------------ what the file has
@dataclass
class _Mjcf:
    """The parsed spec, bridge's model of the file and the compiled model (with names)."""

    spec: Any
    model: Model
    m: Any

    def name(self, objtype: str, i: int) -> str:
        mujoco = require_mujoco()
        obj = getattr(mujoco.mjtObj, f"mjOBJ_{objtype.upper()}")
        return object_name(mujoco, self.m, obj, i, f"{objtype}{i}")

    def variant(self, edits: Sequence[Edit]) -> MujocoNative | Any:
        m, _ = compile_spec(self.spec, edits)
        return REFUSED if m is None else MujocoNative(m, self.model)

    def measured(self, cause: str, subjects: list[str], message: str, edit: Edit) -> list[Cause]:
        """``[Cause]`` with the numbers without it, if ``subjects`` (else none)."""
        return [Cause(cause, tuple(subjects), message, self.variant([edit]))] if subjects else []


def _passive_causes(c: _Mjcf) -> list[Cause]:
    m = c.m
    damped = [
        c.name("joint", j)
        for j in range(m.njnt)
        if np.any(m.dof_damping[m.jnt_dofadr[j]] != 0.0) or m.jnt_stiffness[j] != 0.0
    ]
    tendons = [
        c.name("tendon", t)
        for t in range(m.ntendon)
        if m.tendon_stiffness[t] != 0.0 or m.tendon_damping[t] != 0.0 or m.tendon_armature[t] != 0.0
    ]
    gravcomp = [c.name("body", b) for b in range(m.nbody) if m.body_gravcomp[b] != 0.0]
    fluid = ["option"] if m.opt.density > 0.0 or m.opt.viscosity > 0.0 else []
    return [
        *c.measured(
            "mujoco_damping",
            damped,
            "joint damping and stiffness are passive forces in MuJoCo's dynamics (qfrc_passive), which "
            "rigid-body M, h, g do not have",
            no_damping,
        ),
        *c.measured(
            "mujoco_tendons",
            tendons,
            "tendon stiffness and damping are passive forces and tendon armature adds to M in MuJoCo; "
            "bridge's model has no tendons",
            _no_tendon_terms,
        ),
        *c.measured(
            "mujoco_gravcomp",
            gravcomp,
            "gravity compensation (gravcomp) is a passive force against gravity on these bodies",
            _no_gravcomp,
        ),
        *c.measured(
            "mujoco_fluid",
            fluid,
            "option density/viscosity give fluid forces (passive, velocity dependent)",
            _no_fluid,
        ),
    ]


def _base_causes(c: _Mjcf) -> list[Cause]:
    m, mujoco = c.m, require_mujoco()
    free = [
        c.name("joint", j)
        for j in range(m.njnt)
        if m.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE
        and np.any(np.asarray(m.dof_armature)[m.jnt_dofadr[j] : m.jnt_dofadr[j] + 6] != 0.0)
    ]
    return [
        *c.measured(
            "mujoco_armature",
            free,
            "armature on a free joint adds to M's diagonal in MuJoCo's free-joint coordinates; bridge's "
            "model keeps the armature of hinge, slide and ball joints only",
            _no_free_armature,
        ),
    ]


def _changed_bodies(c: _Mjcf, other: Any) -> list[str]:
    """Bodies whose mass or principal moments differ between ``c.m`` and ``other`` (same bodies)."""
    m = c.m
    return [
        c.name("body", b)
        for b in range(1, m.nbody)
        if m.body_mass[b] != other.body_mass[b] or np.any(m.body_inertia[b] != other.body_inertia[b])
    ]


def _declared_changed(c: _Mjcf) -> list[str]:
    """Bodies with an explicit ``<inertial mass diaginertia>`` whose compiled mass or moments differ
    from the file's (what the inertia options changed, when MuJoCo refuses the file without them)."""
    mujoco, out = require_mujoco(), []
    for b in c.spec.bodies[1:]:
        i = mujoco.mj_name2id(c.m, mujoco.mjtObj.mjOBJ_BODY, b.name) if b.name else -1
        if i < 0 or not b.explicitinertial or not np.isnan(b.fullinertia[0]):
            continue
        moments = np.sort(np.asarray(b.inertia))
        if c.m.body_mass[i] != b.mass or np.any(np.sort(c.m.body_inertia[i]) != moments):
            out.append(b.name)
    return out


def _compiler_causes(c: _Mjcf) -> list[Cause]:
    """What the compiler did that bridge's model took over as compiled (not measured)."""
    spec, mujoco, causes = c.spec, require_mujoco(), []
    links = set(c.model.link_names)
    auto = spec.compiler.inertiafromgeom == mujoco.mjtInertiaFromGeom.mjINERTIAFROMGEOM_AUTO
    every = spec.compiler.inertiafromgeom == mujoco.mjtInertiaFromGeom.mjINERTIAFROMGEOM_TRUE
    from_geoms = [
        b.name
        for b in spec.bodies[1:]
        if b.name in links and b.geoms and (every or (auto and not b.explicitinertial))
    ]
    if from_geoms:
        message = (
            "MuJoCo computed these bodies' mass and inertia from their geoms (inertiafromgeom); "
            "bridge's model takes the compiled values"
        )
        causes.append(Cause("mujoco_inertia_from_geoms", tuple(from_geoms), message))
    c_ = spec.compiler
    if c_.balanceinertia or c_.boundmass > 0.0 or c_.boundinertia > 0.0:
        plain, refused = compile_spec(spec, [_no_inertia_options])
        subjects = _changed_bodies(c, plain) if plain is not None else _declared_changed(c)
        if subjects or refused:
            message = (
                "the compiler options balanceinertia / boundmass / boundinertia changed these inertias; "
                "bridge's model takes the compiled values"
                + (f" (without them MuJoCo refuses the file: {refused})" if refused else "")
            )
            causes.append(Cause("mujoco_balanced_inertia", tuple(subjects), message))
    return causes + _body_set_causes(c)


def _body_set_causes(c: _Mjcf) -> list[Cause]:
    bodies = {c.name("body", b) for b in range(1, c.m.nbody)}
    fused = [b.name for b in c.spec.bodies[1:] if b.name and b.name not in bodies]
    left = sorted(bodies - set(c.model.link_names))
    causes = []
    if fused:
        message = (
            "fusestatic merged these bodies (no joint) into their parent in MuJoCo and in bridge's model"
        )
        causes.append(Cause("mujoco_fused_bodies", tuple(fused), message))
    if left:
        message = (
            "bodies outside the floating base's tree are not in bridge's model; no joint moves them, so "
            "the tree's M, h, g do not depend on them"
        )
        causes.append(Cause("mujoco_bodies_left_out", tuple(left), message))
    return causes


_EVERY_EDIT = (no_damping, _no_tendon_terms, _no_gravcomp, _no_fluid, _no_free_armature)


@dataclass(frozen=True)
class MjcfLoader:
    """MuJoCo's compiler on an MJCF file compared with bridge's model of the file (``source.model``,
    read by :func:`~bridge.backends.mujoco.model.load_mjcf`); ``edit(spec)`` changes the parsed spec
    before compiling."""

    edit: Edit | None = None
    label = "mujoco MJCF compiler"
    prefix = "mujoco_"
    against = None
    joins = "default"
    unexplained = (
        "MuJoCo's compile of the MJCF file differs from bridge's model beyond what bridge can explain"
    )

    def load(self, source: Source, reference: Loaded | None = None) -> Loaded:
        mujoco = require_mujoco()
        with captured_warnings(mujoco):  # bridge's loader warned already
            spec = mujoco.MjSpec.from_file(library_path(source.path))
        if self.edit is not None:
            self.edit(spec)
        m, refused = compile_spec(spec)
        if m is None:
            return Loaded(
                None, [Cause("mujoco_refuses", (), f"MuJoCo's compiler refuses the file: {refused}")]
            )
        c = _Mjcf(spec, source.model, m)
        causes = _passive_causes(c) + _base_causes(c) + _compiler_causes(c)
        return Loaded(MujocoNative(m, c.model), causes, c.variant(_EVERY_EDIT), bodies=m.nbody - 1)
