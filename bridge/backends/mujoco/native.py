"""MuJoCo's own URDF compiler next to bridge's loader: what it makes of the same file, and why (on
an MJCF file, :meth:`MujocoLoader.for_kind` gives :mod:`bridge.backends.mujoco.native_mjcf`'s loader).

``NATIVE`` (:class:`MujocoLoader`, :mod:`bridge.backends.native`) compiles a URDF as MuJoCo users do
(``MjSpec.from_file`` then ``compile``, MuJoCo's defaults and the file's ``<mujoco><compiler .../>
</mujoco>`` extension; mesh geoms, which ``package://`` paths make unloadable, are removed first),
puts the same joint positions and velocities into it by joint name, and gives:

* ``M`` from ``mj_fullM``;
* ``h = qfrc_bias - qfrc_passive``: what must be applied for zero ``qacc`` with the compiled model's
  own passive forces (joint damping and springs) and without constraints;
* ``g``: the same at zero velocity.

MuJoCo's URDF compiler welds the root link to the world (no free joint), so the comparison is a
fixed base at the identity. Each recognised cause (prefixed ``mujoco_``) carries the numbers with
that cause removed:

* ``mujoco_armature``: joints with ``dof_armature`` (removed: set to zero). A plain URDF gives
  none (MuJoCo 4.0 reads no armature from URDF), but an edited spec may;
* ``mujoco_damping``: ``<dynamics damping>`` becomes joint damping (and springs, if any) in the
  passive forces (removed: damping and stiffness set to zero);
* ``mujoco_fused_bodies``: ``fusestatic`` (true for URDF) merges links welded by fixed joints into
  their parent body (and the root into the world): they are no bodies (removed: ``fusestatic=false``);
* ``mujoco_inertia_from_geoms``: links without ``<inertial>`` get an inertia from their collision
  geoms (``inertiafromgeom="auto"``); removed: the URDF's (zero) inertia written back;
* ``mujoco_balanced_inertia``: inertias that violate ``A + B >= C`` are refused unless
  ``balanceinertia="true"``, which replaces them (removed: the URDF's inertia written back);
* ``mujoco_dof_order``: MuJoCo's DOF order is its body order; bridge maps joints by name;
* ``mujoco_meshes_removed``: mesh geoms taken out before compiling (no effect on the dynamics
  unless inertias come from geoms);
* ``mujoco_fixed_base``: the root welded to the world, compared as a fixed base;
* ``mujoco_refuses``: MuJoCo's compiler refuses the file (the message), no numbers.

``MujocoLoader(edit=...)`` changes the parsed ``MjSpec`` before compiling (what a user's loader
script would do, e.g. set a joint's armature).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from bridge._files import library_path
from bridge.backends.mujoco.bodies import principal
from bridge.backends.mujoco.messages import captured_warnings, object_name
from bridge.backends.mujoco.model import require_mujoco
from bridge.backends.mujoco.state import MUJOCO
from bridge.backends.native import REFUSED, Cause, Loaded, Source, dof_order_cause
from bridge.conventions.change_of_variables import NEUTRAL, Convention, change_of_variables
from bridge.conventions.native_state import to_native_state
from bridge.conventions.state import State
from bridge.errors import BackendError
from bridge.model.model import Model
from bridge.model.urdf import load_urdf

__all__ = [
    "NATIVE",
    "REFUSED",
    "MujocoLoader",
    "MujocoNative",
    "compile_spec",
    "joint_id",
    "load_urdf_spec",
    "no_damping",
]

Edit = Callable[[Any], None]


def load_urdf_spec(path: str | Path) -> tuple[Any, list[str]]:
    """``MjSpec.from_file(path)`` with its mesh geoms (and mesh assets) removed; the removed geoms'
    names (or their bodies') are returned too."""
    mujoco = require_mujoco()
    with captured_warnings(mujoco):  # bridge's loader warned already
        spec = mujoco.MjSpec.from_file(library_path(path))
    removed = []
    for geom in list(spec.geoms):
        if geom.type == mujoco.mjtGeom.mjGEOM_MESH:
            removed.append(geom.name or geom.parent.name)
            spec.delete(geom)
    for mesh in list(spec.meshes):
        spec.delete(mesh)
    return spec, removed


def compile_spec(spec: Any, edits: Sequence[Edit] = ()) -> tuple[Any, str | None]:
    """``spec`` (a copy, ``edits`` applied) compiled, or None and the compiler's first line."""
    s = spec.copy()
    for edit in edits:
        edit(s)
    try:
        return s.compile(), None
    except ValueError as exc:
        return None, str(exc).strip().splitlines()[0]


def _write_inertias(m: Any, model: Model, links: Sequence[str]) -> None:
    """Overwrite the bodies of ``links`` (one body per link: ``fusestatic=false``) with the URDF's
    inertia (and the subtree masses that depend on it). MuJoCo 4 takes the mass matrix of its "simple"
    DOFs (``dof_simplenum``) from ``dof_M0``, made when compiling, which ``mj_setConst`` would remake
    but refuses for a massless moving body (a FatalError): every DOF is marked not simple instead, so
    that ``mj_crb`` computes M from the written inertias."""
    mujoco = require_mujoco()
    for name in links:
        b = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, name)
        inertia = model.link(name).inertia
        lam, quat = principal(np.array(inertia.inertia_com))
        m.body_mass[b] = float(inertia.mass)
        m.body_ipos[b] = np.array(inertia.com) if inertia.mass > 0.0 else np.zeros(3)
        m.body_iquat[b] = quat
        m.body_inertia[b] = lam
    sub = np.array(m.body_mass, dtype=float)  # the subtree masses mj_comPos divides by
    for b in range(m.nbody - 1, 0, -1):
        sub[m.body_parentid[b]] += sub[b]
    m.body_subtreemass[:] = sub
    m.dof_simplenum[:] = 0


def joint_id(m: Any, name: str) -> int:
    """MuJoCo's id of joint ``name``, or of the unnamed joint :func:`bridge.from_mujoco` calls
    ``"joint<id>"`` (-1: none)."""
    mujoco = require_mujoco()
    j = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, name)
    if j < 0 and name.startswith("joint") and name[5:].isdigit():
        k = int(name[5:])
        if k < m.njnt and not mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, k):
            return k
    return j


def _free_dofs(m: Any, model: Model) -> tuple[int, int]:
    """``(qposadr, dofadr)`` of the free joint on ``model.base``'s body; BackendError if none."""
    mujoco = require_mujoco()
    b = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, model.base)
    for j in range(m.njnt):
        if m.jnt_bodyid[j] == b and m.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE:
            return int(m.jnt_qposadr[j]), int(m.jnt_dofadr[j])
    raise BackendError(f"MuJoCo's model has no free joint on the base body {model.base!r}")


def _entries(addresses: list[int], widths: list[int], order: np.ndarray) -> np.ndarray:
    """The addresses of each joint's ``width`` entries from its address, joints in ``order``."""
    parts = [np.arange(addresses[k], addresses[k] + widths[k]) for k in order.tolist()]
    return np.concatenate(parts).astype(int) if parts else np.zeros(0, dtype=int)


@dataclass
class MujocoNative:
    """MuJoCo's M, h, g of its compiled model ``m`` at states of bridge's ``model``: a fixed base at
    the identity (MuJoCo's URDF compiler welds the root to the world; an MJCF model without a free
    joint has the world as its base), or a floating base through the free joint on the base body.
    Joints are matched by name; the vectors are mapped to the state's representation through one
    change of variables from MuJoCo's layout (free joint ``[p_dot world; omega body]``, the joints in
    MuJoCo's DOF order)."""

    m: Any
    model: Model
    base_pose: np.ndarray | None = field(init=False)

    def __post_init__(self) -> None:
        m, model = self.m, self.model
        jid = [joint_id(m, d) for d in model.dof_names]
        kinds = model.coordinates.kinds
        qadr = [int(m.jnt_qposadr[j]) for j in jid]
        vadr = [int(m.jnt_dofadr[j]) for j in jid]
        order = np.argsort(vadr, kind="stable")  # native joints[i] = model joints[order[i]]
        self.free = _free_dofs(m, model) if model.floating else None
        base = np.arange(self.free[1], self.free[1] + 6) if self.free else np.zeros(0, dtype=int)
        # MuJoCo's qpos and dof addresses of the joints' entries in the convention's order (a ball's
        # 4 and 3, a free joint's 7 and 6: MuJoCo's layout is the convention's, joint by joint)
        self.q_columns = _entries(qadr, [kinds[k].nq for k in range(len(kinds))], order)
        self.columns = np.concatenate([base, _entries(vadr, [kinds[k].nv for k in range(len(kinds))], order)])
        self.base_pose = None if model.floating else np.eye(4)
        self.convention = Convention(
            "mujoco-compiler",
            MUJOCO.velocity,
            joint_order=lambda _m: order,
            configuration=MUJOCO.configuration,
        )
        self.data = require_mujoco().MjData(m)

    def _set(self, state: State, moving: bool) -> None:
        """MuJoCo's qpos, qvel at ``state`` (zero velocity unless ``moving``)."""
        m, d = self.m, self.data
        d.qpos[:] = m.qpos0
        d.qvel[:] = 0.0
        qpos, qvel = to_native_state(self.model, state, self.convention)
        nb = 0
        if self.free is not None:
            d.qpos[self.free[0] : self.free[0] + 7] = qpos[:7]
            nb = 7
        d.qpos[self.q_columns] = qpos[nb:]
        if moving:
            d.qvel[self.columns] = qvel

    def _forces(self, state: State, moving: bool) -> np.ndarray:
        """``qfrc_bias - qfrc_passive`` (MuJoCo's layout, nv) at ``state``."""
        mujoco, m, d = require_mujoco(), self.m, self.data
        self._set(state, moving)
        # the pipeline stages M, h and g need (no factorization: a massless leaf is allowed)
        mujoco.mj_kinematics(m, d)
        mujoco.mj_comPos(m, d)
        mujoco.mj_crb(m, d)
        mujoco.mj_comVel(m, d)
        mujoco.mj_passive(m, d)
        bias = np.zeros(m.nv)
        mujoco.mj_rne(m, d, 0, bias)
        return bias - d.qfrc_passive

    def dynamics(self, state: State) -> dict[str, np.ndarray]:
        """M, h, g in ``state``'s representation, bridge's DOF order."""
        cols = self.columns
        g = self._forces(state, moving=False)[cols]
        h = self._forces(state, moving=True)[cols]
        M = np.zeros((self.m.nv, self.m.nv))
        require_mujoco().mj_fullM(self.m, self.data, M)
        M = M[np.ix_(cols, cols)]
        cov = change_of_variables(self.model, state, NEUTRAL[state.representation], self.convention)
        return {
            "mass_matrix": cov.matrix_back(M),
            "bias_forces": cov.bias_back(h, M),
            "gravity_forces": cov.force_back(g),
        }


# ------------------------------------------------------------------ the edits that remove a cause
def _no_fuse(s: Any) -> None:
    s.compiler.fusestatic = False


def no_damping(s: Any) -> None:
    """Joints without damping or springs: ``damping``, ``stiffness`` and ``springdamper`` (from which
    MuJoCo's compiler derives both) zero."""
    for j in s.joints:
        j.damping = np.zeros_like(np.asarray(j.damping)) if np.ndim(j.damping) else 0.0
        j.stiffness = np.zeros_like(np.asarray(j.stiffness)) if np.ndim(j.stiffness) else 0.0
        if hasattr(j, "springdamper"):
            j.springdamper = np.zeros_like(np.asarray(j.springdamper))


def _no_armature(s: Any) -> None:
    for j in s.joints:
        j.armature = 0.0


@dataclass
class _Compiled:
    """A parsed spec, bridge's fixed-base model of the file, and the compiled model."""

    spec: Any
    model: Model
    m: Any

    def variant(self, edits: Sequence[Edit], inertias: Sequence[str] = ()) -> MujocoNative | Any:
        """The numbers of the spec compiled with ``edits`` and the URDF's inertia of ``inertias``."""
        m, _ = compile_spec(self.spec, edits)
        if m is None:
            return REFUSED
        if inertias:
            _write_inertias(m, self.model, inertias)
        return MujocoNative(m, self.model)


def _changed_inertias(c: _Compiled) -> tuple[list[str], list[str]]:
    """Links whose mass or inertia MuJoCo changed (one body per link without fusing): those it
    gave an inertia from their geoms, and those it balanced."""
    mujoco = require_mujoco()
    unfused, _ = compile_spec(c.spec, [_no_fuse])
    from_geoms, balanced = [], []
    for link in c.model.links if unfused is not None else ():
        b = mujoco.mj_name2id(unfused, mujoco.mjtObj.mjOBJ_BODY, link.name)
        if b < 0:
            continue
        I_mj, mass_mj = np.array(unfused.body_inertia[b]), float(unfused.body_mass[b])
        mine = link.inertia
        lam = np.linalg.eigvalsh(np.array(mine.inertia_com))
        changed = abs(mass_mj - mine.mass) > 1e-12 * max(1.0, mine.mass) or np.abs(
            np.sort(I_mj) - np.sort(lam)
        ).max() > 1e-12 * max(1.0, np.abs(lam).max())
        if changed:
            (from_geoms if mine.mass == 0.0 and not np.any(lam) else balanced).append(link.name)
    return from_geoms, balanced


def _joint_causes(c: _Compiled) -> list[Cause]:
    m, dofs = c.m, c.model.dof_names
    armature = [d for d in dofs if m.dof_armature[m.jnt_dofadr[joint_id(m, d)]] != 0.0]
    damped = [
        d
        for d in dofs
        if m.dof_damping[m.jnt_dofadr[joint_id(m, d)]] != 0.0 or m.jnt_stiffness[joint_id(m, d)] != 0.0
    ]
    causes = []
    if armature:
        message = "MuJoCo adds dof_armature to M's diagonal (and armature * qacc to inverse dynamics)"
        causes.append(Cause("mujoco_armature", tuple(armature), message, c.variant([_no_armature])))
    if damped:
        message = (
            "<dynamics damping> becomes joint damping: a passive force -damping * qvel in MuJoCo's "
            "dynamics, which rigid-body M, h, g do not have"
        )
        causes.append(Cause("mujoco_damping", tuple(damped), message, c.variant([no_damping])))
    return causes


def _body_causes(c: _Compiled, from_geoms: list[str], balanced: list[str]) -> list[Cause]:
    mujoco = require_mujoco()
    bodies = {object_name(mujoco, c.m, mujoco.mjtObj.mjOBJ_BODY, b, "") for b in range(c.m.nbody)}
    fused = [link for link in c.model.link_names if link not in bodies]
    causes = []
    if fused:
        message = (
            "fusestatic (true for URDF) merges links welded by fixed joints into their parent body (the "
            "root into the world): they are no bodies or frames in MuJoCo; fusestatic='false' keeps them"
        )
        causes.append(Cause("mujoco_fused_bodies", tuple(fused), message, c.variant([_no_fuse])))
    if from_geoms:
        message = (
            "links without <inertial> get mass and inertia from their geoms (inertiafromgeom='auto'); "
            "bridge and the URDF give them none"
        )
        without = c.variant([_no_fuse], from_geoms)
        causes.append(Cause("mujoco_inertia_from_geoms", tuple(from_geoms), message, without))
    if balanced:
        message = (
            "MuJoCo changed these inertias (balanceinertia: inertias violating A + B >= C are replaced; "
            "without it MuJoCo refuses them)"
        )
        without = c.variant([_no_fuse], balanced)
        causes.append(Cause("mujoco_balanced_inertia", tuple(balanced), message, without))
    return causes


def _order(m: Any, model: Model) -> tuple[str, ...]:
    """The 1-DOF joints in MuJoCo's DOF order (its body order)."""
    return tuple(sorted(model.dof_names, key=lambda d: m.jnt_dofadr[joint_id(m, d)]))


def _layout_causes(c: _Compiled) -> list[Cause]:
    model = c.model
    message = "MuJoCo numbers the DOFs in body order; bridge maps them by joint name"
    causes = dof_order_cause("mujoco_dof_order", model, _order(c.m, model), message)
    causes.append(
        Cause(
            "mujoco_fixed_base",
            (model.base,),
            "MuJoCo's URDF compiler welds the root link to the world (add a free joint with MjSpec for a "
            "floating base): compared as a fixed base",
        )
    )
    return causes


@dataclass(frozen=True)
class MujocoLoader:
    """MuJoCo's URDF compiler compared with bridge's (fixed-base) model of the file; ``edit(spec)``
    changes the parsed spec before compiling."""

    edit: Edit | None = None
    label = "mujoco URDF compiler"
    prefix = "mujoco_"
    against = None
    joins = "on request"
    default_on = ("mjcf",)  # on an MJCF file (which no other loader reads) it joins by default
    unexplained = "MuJoCo's compile differs beyond what bridge can explain"

    def for_kind(self, kind: str) -> Any:
        """The loader of a file of ``kind``: this one for URDF, MuJoCo's MJCF compiler
        (:class:`~bridge.backends.mujoco.native_mjcf.MjcfLoader`, the same ``edit``) for MJCF."""
        if kind != "mjcf":
            return self
        from bridge.backends.mujoco.native_mjcf import MjcfLoader

        return MjcfLoader(self.edit)

    def load(self, source: Source, reference: Loaded | None = None) -> Loaded:
        if source.kind != "urdf":
            return self.for_kind(source.kind).load(source, reference)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = load_urdf(source.path, floating=False, check_inertia=False, mimic="independent")
        spec, meshes = load_urdf_spec(source.path)
        if self.edit is not None:
            self.edit(spec)
        causes = []
        if meshes:
            message = (
                "mesh geoms were removed before compiling (package:// paths do not resolve); no effect on "
                "the dynamics unless inertias come from geoms"
            )
            causes.append(Cause("mujoco_meshes_removed", tuple(meshes), message))
        m, refused = compile_spec(spec)
        if m is None:
            causes.append(Cause("mujoco_refuses", (), f"MuJoCo's compiler refuses the file: {refused}"))
            return Loaded(None, causes)
        c = _Compiled(spec, model, m)
        from_geoms, balanced = _changed_inertias(c)
        causes += _joint_causes(c) + _body_causes(c, from_geoms, balanced) + _layout_causes(c)
        residual = c.variant([_no_fuse, no_damping, _no_armature], from_geoms + balanced)
        return Loaded(MujocoNative(m, model), causes, residual, bodies=m.nbody - 1)


NATIVE = MujocoLoader()
