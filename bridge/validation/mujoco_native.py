"""MuJoCo's own URDF compiler next to bridge's loader: what it makes of the same file, and why.

:func:`compare_native` compiles a URDF as MuJoCo users do (``MjSpec.from_file`` then ``compile``,
MuJoCo's defaults and the file's ``<mujoco><compiler .../></mujoco>`` extension; mesh geoms, which
``package://`` paths make unloadable, are removed first), puts the same joint positions and
velocities into it by joint name, and compares with bridge's model of the file (Pinocchio engine):

* ``M`` from ``mj_fullM``;
* ``h = qfrc_bias - qfrc_passive``: what must be applied for zero ``qacc`` with the compiled model's
  own passive forces (joint damping and springs) and without constraints;
* ``g``: the same at zero velocity.

MuJoCo's URDF compiler welds the root link to the world (no free joint), so the comparison is a
fixed base at the identity. Each recognised cause (:class:`bridge.validation.native.Finding`, causes prefixed
``mujoco_``) carries the error as compiled and with that cause removed:

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
* ``mujoco_refuses``: MuJoCo's compiler refuses the file (the message), no numbers;
* ``mujoco_unexplained``: what remains with every cause removed.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from bridge.backends.mujoco.model import require_mujoco
from bridge.model.model import Model

__all__ = ["MujocoNative", "compare_native", "load_urdf_spec"]

QUANTITIES = ("mass_matrix", "bias_forces", "gravity_forces")


@dataclass
class MujocoNative:
    """:func:`compare_native`'s outcome: per quantity the errors over the samples as compiled
    (empty when MuJoCo refuses the file) and the findings (:class:`bridge.validation.native.Finding`)."""

    path: str
    errors: dict[str, list[float]] = field(default_factory=dict)
    findings: list = field(default_factory=list)

    @property
    def worst(self) -> float:
        return max((max(v) for v in self.errors.values()), default=0.0)


def load_urdf_spec(path: str | Path) -> tuple[Any, list[str]]:
    """``MjSpec.from_file(path)`` with its mesh geoms (and mesh assets) removed; the removed geoms'
    names (or their bodies') are returned too."""
    mujoco = require_mujoco()
    spec = mujoco.MjSpec.from_file(str(path))
    removed = []
    for geom in list(spec.geoms):
        if geom.type == mujoco.mjtGeom.mjGEOM_MESH:
            removed.append(geom.name or geom.parent.name)
            spec.delete(geom)
    for mesh in list(spec.meshes):
        spec.delete(mesh)
    return spec, removed


def _compile(spec: Any, edit=None) -> tuple[Any, str | None]:
    s = spec.copy()
    if edit is not None:
        edit(s)
    try:
        return s.compile(), None
    except ValueError as exc:
        return None, str(exc).strip().splitlines()[0]


def _triangle_violated(lam: np.ndarray) -> bool:
    lo = np.sort(lam)
    return bool(lo[0] + lo[1] < lo[2] * (1.0 - 1e-12) - 1e-15)


def _write_inertias(mujoco: Any, m: Any, model: Model, links: list[str]) -> None:
    """Overwrite the bodies of ``links`` (one body per link: ``fusestatic=false``) with the URDF's
    inertia (and the subtree masses that depend on it)."""
    from bridge.backends.mujoco.model import _principal

    for name in links:
        b = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, name)
        inertia = model.link(name).inertia
        lam, quat = _principal(np.array(inertia.inertia_com))
        m.body_mass[b] = float(inertia.mass)
        m.body_ipos[b] = np.array(inertia.com) if inertia.mass > 0.0 else np.zeros(3)
        m.body_iquat[b] = quat
        m.body_inertia[b] = lam
    sub = np.array(m.body_mass, dtype=float)  # the subtree masses mj_comPos divides by
    for b in range(m.nbody - 1, 0, -1):
        sub[m.body_parentid[b]] += sub[b]
    m.body_subtreemass[:] = sub


def _errors(mujoco: Any, m: Any, model: Model, samples: int, seed: int) -> dict[str, list[float]]:
    """Norm-wise relative errors of MuJoCo's M, h, g against bridge's (fixed base at the identity)."""
    import bridge
    from bridge.validation.check import random_states

    jid = [mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, d) for d in model.dof_names]
    qadr = np.array([m.jnt_qposadr[j] for j in jid], dtype=int)
    vadr = np.array([m.jnt_dofadr[j] for j in jid], dtype=int)
    sel = np.ix_(vadr, vadr)
    states = random_states(model, samples, np.random.default_rng(seed))
    gravity = np.array(m.opt.gravity)
    kd = bridge.KinDyn(model, "pinocchio", "mixed")
    d = mujoco.MjData(m)
    out: dict[str, list[float]] = {q: [] for q in QUANTITIES}
    for i in range(samples):
        s, sd = states.s[i], states.s_dot[i]
        kd.set_state(np.eye(4), s, np.zeros(6), sd, gravity=gravity)
        mine = {}
        for key, vel in (("bias_forces", sd), ("gravity_forces", np.zeros_like(sd))):
            d.qpos[:] = m.qpos0
            d.qvel[:] = 0.0
            d.qpos[qadr] = s
            d.qvel[vadr] = vel
            # the pipeline stages M, h and g need (no factorization: a massless leaf is allowed)
            mujoco.mj_kinematics(m, d)
            mujoco.mj_comPos(m, d)
            mujoco.mj_crb(m, d)
            mujoco.mj_comVel(m, d)
            mujoco.mj_passive(m, d)
            bias = np.zeros(m.nv)
            mujoco.mj_rne(m, d, 0, bias)
            mine[key] = (bias - d.qfrc_passive)[vadr]
        M = np.zeros((m.nv, m.nv))
        mujoco.mj_fullM(m, d, M)
        mine["mass_matrix"] = M[sel]
        ref = {
            "mass_matrix": kd.mass_matrix(),
            "bias_forces": kd.bias_forces(),
            "gravity_forces": kd.gravity_forces(),
        }
        for q in QUANTITIES:
            out[q].append(float(np.linalg.norm(mine[q] - ref[q]) / max(1.0, np.linalg.norm(ref[q]))))
    return out


def _worst(errors: dict[str, list[float]] | None) -> float | None:
    if errors is None:
        return None
    return max((max(v) for v in errors.values()), default=0.0)


def compare_native(
    path: str | Path, samples: int = 3, seed: int = 0, rtol: float = 1e-10, edit=None
) -> MujocoNative:
    """Compare MuJoCo's own compile of the URDF at ``path`` with bridge's model of it (see the module
    docstring). ``edit(spec)``, if given, changes the parsed ``MjSpec`` before compiling (what a
    user's loader script would do, e.g. set a joint's armature)."""
    mujoco = require_mujoco()
    from bridge.model.urdf import load_urdf
    from bridge.validation.native import Finding

    out = MujocoNative(str(path))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = load_urdf(path, floating=False, check_inertia=False, mimic="independent")
    spec, meshes = load_urdf_spec(path)
    if edit is not None:
        edit(spec)
    m0, refused = _compile(spec)
    if meshes:
        out.findings.append(
            Finding(
                "mujoco_meshes_removed",
                tuple(meshes),
                "mesh geoms were removed before compiling (package:// paths do not resolve); no effect on "
                "the dynamics unless inertias come from geoms",
            )
        )
    if m0 is None:
        out.findings.append(Finding("mujoco_refuses", (), f"MuJoCo's compiler refuses the file: {refused}"))
        return out
    out.errors = _errors(mujoco, m0, model, samples, seed)
    raw = out.worst
    bodies = {mujoco.mj_id2name(m0, mujoco.mjtObj.mjOBJ_BODY, b) for b in range(m0.nbody)}

    def no_fuse(s) -> None:
        s.compiler.fusestatic = False

    def no_damping(s) -> None:
        for j in s.joints:
            j.damping = np.zeros_like(np.asarray(j.damping)) if np.ndim(j.damping) else 0.0
            j.stiffness = np.zeros_like(np.asarray(j.stiffness)) if np.ndim(j.stiffness) else 0.0

    def no_armature(s) -> None:
        for j in s.joints:
            j.armature = 0.0

    def variant(edits, inertias=()):
        def apply(s) -> None:
            for e in edits:
                e(s)

        m, _ = _compile(spec, apply)
        if m is None:
            return None
        if inertias:
            _write_inertias(mujoco, m, model, list(inertias))
        return _errors(mujoco, m, model, samples, seed)

    # which links' inertias MuJoCo changed (one body per link without fusing)
    unfused, _ = _compile(spec, no_fuse)
    from_geoms, balanced = [], []
    if unfused is not None:
        for link in model.links:
            b = mujoco.mj_name2id(unfused, mujoco.mjtObj.mjOBJ_BODY, link.name)
            if b < 0:
                continue
            I_mj = np.array(unfused.body_inertia[b])
            mass_mj = float(unfused.body_mass[b])
            mine = link.inertia
            lam = np.linalg.eigvalsh(np.array(mine.inertia_com))
            changed = abs(mass_mj - mine.mass) > 1e-12 * max(1.0, mine.mass) or np.abs(
                np.sort(I_mj) - np.sort(lam)
            ).max() > 1e-12 * max(1.0, np.abs(lam).max())
            if not changed:
                continue
            if mine.mass == 0.0 and not np.any(lam):
                from_geoms.append(link.name)
            else:
                balanced.append(link.name)
    armature = [d for d in model.dof_names if m0.dof_armature[m0.jnt_dofadr[_jid(mujoco, m0, d)]] != 0.0]
    damped = [
        d
        for d in model.dof_names
        if m0.dof_damping[m0.jnt_dofadr[_jid(mujoco, m0, d)]] != 0.0
        or m0.jnt_stiffness[_jid(mujoco, m0, d)] != 0.0
    ]
    fused = [link for link in model.link_names if link not in bodies]

    def finding(cause, subjects, message, edits, inertias=()) -> None:
        out.findings.append(Finding(cause, tuple(subjects), message, raw, _worst(variant(edits, inertias))))

    if armature:
        finding(
            "mujoco_armature",
            armature,
            "MuJoCo adds dof_armature to M's diagonal (and armature * qacc to inverse dynamics)",
            [no_armature],
        )
    if damped:
        finding(
            "mujoco_damping",
            damped,
            "<dynamics damping> becomes joint damping: a passive force -damping * qvel in MuJoCo's "
            "dynamics, which rigid-body M, h, g do not have",
            [no_damping],
        )
    if fused:
        finding(
            "mujoco_fused_bodies",
            fused,
            "fusestatic (true for URDF) merges links welded by fixed joints into their parent body (the "
            "root into the world): they are no bodies or frames in MuJoCo; fusestatic='false' keeps them",
            [no_fuse],
        )
    if from_geoms:
        finding(
            "mujoco_inertia_from_geoms",
            from_geoms,
            "links without <inertial> get mass and inertia from their geoms (inertiafromgeom='auto'); "
            "bridge and the URDF give them none",
            [no_fuse],
            from_geoms,
        )
    if balanced:
        finding(
            "mujoco_balanced_inertia",
            balanced,
            "MuJoCo changed these inertias (balanceinertia: inertias violating A + B >= C are replaced; "
            "without it MuJoCo refuses them)",
            [no_fuse],
            balanced,
        )
    order = sorted(model.dof_names, key=lambda d: m0.jnt_dofadr[_jid(mujoco, m0, d)])
    if order != list(model.dof_names):
        out.findings.append(
            Finding(
                "mujoco_dof_order",
                tuple(d for d, e in zip(model.dof_names, order, strict=True) if d != e),
                "MuJoCo numbers the DOFs in body order; bridge maps them by joint name",
            )
        )
    out.findings.append(
        Finding(
            "mujoco_fixed_base",
            (model.base,),
            "MuJoCo's URDF compiler welds the root link to the world (add a free joint with MjSpec for a "
            "floating base): compared as a fixed base",
        )
    )
    residual = _worst(variant([no_fuse, no_damping, no_armature], from_geoms + balanced))
    if residual is None or residual > rtol:
        out.findings.append(
            Finding(
                "mujoco_unexplained",
                (),
                "MuJoCo's compile differs beyond what bridge can explain",
                raw,
                residual,
            )
        )
    return out


def _jid(mujoco: Any, m: Any, name: str) -> int:
    return mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, name)
