"""Pinocchio's own URDF loader, as Pinocchio users call it, and its dynamics by joint names.

``NATIVE`` (:class:`PinocchioLoader`) is its native-loader comparison (:mod:`bridge.backends.native`):
Pinocchio's loader compared with iDynTree's, findings ``mimic_joints``, ``nonphysical_inertia``,
``fixed_joints_merged``; the inertias iDynTree drops are removed from Pinocchio's model on request.

What bridge compares its results and the other libraries' with: ``pin.buildModelFromUrdf`` (with a
free flyer for a floating base, optionally ``mimic=True``: mimic joints become ``JointModelMimic``
that follow their primary joint), and states given by joint name. Pinocchio's free-flyer velocity
is the base velocity in the base frame (bridge's BODY representation) and its joint velocities are
bridge's ``s_dot``, so results compare with a BODY :class:`bridge.KinDyn` after a permutation.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pinocchio as pin

from bridge._files import library_path
from bridge.backends.native import Cause, Loaded, Source
from bridge.conventions.change_of_variables import NEUTRAL, Convention, change_of_variables
from bridge.conventions.convert import convert_bias_forces, convert_mass_matrix
from bridge.conventions.native_state import to_native_state
from bridge.conventions.state import State
from bridge.errors import BackendError, MimicJointWarning, NonPhysicalInertiaWarning
from bridge.model.model import Model

__all__ = [
    "NATIVE",
    "NativeLayout",
    "PinocchioLoader",
    "drop_link_inertia",
    "dynamics",
    "load_urdf_model",
    "native_layout",
    "native_state",
    "parsed_convention",
    "wide_state",
]


def load_urdf_model(path: str, floating: bool = True, mimic: bool = False) -> pin.Model:
    """``pin.buildModelFromUrdf(path[, JointModelFreeFlyer()], mimic=mimic)``; BackendError if refused."""
    try:
        if floating:
            return pin.buildModelFromUrdf(library_path(path), pin.JointModelFreeFlyer(), mimic=mimic)
        return pin.buildModelFromUrdf(library_path(path), mimic=mimic)
    except (ValueError, RuntimeError) as exc:
        first = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
        raise BackendError(f"{path}: Pinocchio's URDF loader refuses the file ({first})") from None


@dataclass(frozen=True)
class NativeLayout:
    """Where each independent joint of a Pinocchio model sits: names in v order."""

    dof_names: tuple[str, ...]  # joints with their own velocity (mimic joints excluded), in v order
    idx_q: tuple[int, ...]
    nq: tuple[int, ...]  # 2 for a continuous joint (cos, sin); 4 planar (x, y, cos, sin) and ball, 7 free
    idx_v: tuple[int, ...]
    mimic_joints: tuple[str, ...]  # JointModelMimic joints (no velocity of their own)
    floating: bool
    nv: tuple[int, ...] = ()  # each joint's velocities (1, or 3 planar and ball, 6 free)

    @property
    def single(self) -> bool:
        """Every joint has one velocity."""
        return all(n == 1 for n in self.nv)


#: Pinocchio's joints of several coordinates that bridge's joints are (free, planar, ball)
_WIDE = ("JointModelFreeFlyer", "JointModelPlanar", "JointModelSpherical")


def native_layout(pm: pin.Model) -> NativeLayout:
    names, iq, nq, iv, nv, mimics = [], [], [], [], [], []
    floating = False
    for jid in range(1, pm.njoints):
        joint = pm.joints[jid]
        short = joint.shortname()
        if jid == 1 and short == "JointModelFreeFlyer" and pm.names[jid] == "root_joint":
            floating = True  # the free flyer buildModelFromUrdf adds for a floating base
            continue
        if "Mimic" in short:
            mimics.append(pm.names[jid])
            continue
        if joint.nv != 1 and short not in _WIDE:
            raise BackendError(f"joint {pm.names[jid]!r} of type {short} is not a 1-DOF joint")
        names.append(pm.names[jid])
        iq.append(int(joint.idx_q))
        nq.append(int(joint.nq))
        iv.append(int(joint.idx_v))
        nv.append(int(joint.nv))
    order = np.argsort(iv, kind="stable")
    pick = [int(k) for k in order]
    return NativeLayout(
        tuple(names[k] for k in pick),
        tuple(iq[k] for k in pick),
        tuple(nq[k] for k in pick),
        tuple(iv[k] for k in pick),
        tuple(mimics),
        floating,
        tuple(nv[k] for k in pick),
    )


def native_state(
    pm: pin.Model,
    layout: NativeLayout,
    world_H_base: np.ndarray,
    base_velocity_body: np.ndarray,
    positions: dict[str, float],
    velocities: dict[str, float],
) -> tuple[np.ndarray, np.ndarray]:
    """Pinocchio's ``(q, v)`` for one state given by joint name (base velocity in the base frame;
    one-coordinate joints: :func:`wide_state` takes the others)."""
    if not layout.single:
        raise BackendError(
            "native_state takes one-coordinate joints: a ball, free or planar joint needs wide_state"
        )
    q = pin.neutral(pm)
    v = np.zeros(pm.nv)
    if layout.floating:
        q[:7] = pin.SE3ToXYZQUAT(pin.SE3(np.asarray(world_H_base, dtype=float)))
        v[:6] = base_velocity_body
    for name, iq, nq, iv in zip(layout.dof_names, layout.idx_q, layout.nq, layout.idx_v, strict=True):
        x = float(positions[name])
        if nq == 2:
            q[iq : iq + 2] = math.cos(x), math.sin(x)
        else:
            q[iq] = x
        v[iv] = float(velocities[name])
    return q, v


def dynamics(
    pm: pin.Model, q: np.ndarray, v: np.ndarray, a: np.ndarray | None = None, tau: np.ndarray | None = None
) -> dict[str, np.ndarray]:
    """Pinocchio's M (crba, symmetrized), h (nonLinearEffects), g, and with ``a`` the inverse
    dynamics (rnea), with ``tau`` the forward dynamics (solved with M; ABA does not take every
    joint type)."""
    data = pm.createData()
    M = pin.crba(pm, data, q)
    M = np.triu(M) + np.triu(M, 1).T
    out = {
        "mass_matrix": M,
        "bias_forces": np.array(pin.nonLinearEffects(pm, data, q, v)),
        "gravity_forces": np.array(pin.computeGeneralizedGravity(pm, data, q)),
    }
    if a is not None:
        out["inverse_dynamics"] = np.array(pin.rnea(pm, data, q, v, a))
    if tau is not None:
        out["forward_dynamics"] = np.linalg.solve(M, tau - out["bias_forces"])
    return out


def drop_link_inertia(
    pm: pin.Model, link: str, mass: float, com: Sequence[float], inertia_com: np.ndarray
) -> None:
    """Remove a link's inertia (given in the link frame) from the body Pinocchio merged it into."""
    frame = pm.frames[pm.getFrameId(link, pin.FrameType.BODY)]
    inertia = pin.Inertia(float(mass), np.asarray(com, dtype=float), np.asarray(inertia_com, dtype=float))
    pm.inertias[frame.parentJoint] = pm.inertias[frame.parentJoint] - frame.placement.act(inertia)


# ------------------------------------------------------------------ the native-loader comparison
def parsed_convention(layout: NativeLayout, model: Model) -> Convention:
    """Pinocchio's convention (:data:`~bridge.backends.pinocchio.state.PINOCCHIO`'s velocity and
    configuration) with the joint order of a model Pinocchio's loader made (``layout``), for
    bridge's ``model`` of the same file (joints matched by name)."""
    from bridge.backends.pinocchio.state import PINOCCHIO

    at = {name: k for k, name in enumerate(layout.dof_names)}
    perm = np.argsort([at[d] for d in model.dof_names], kind="stable")
    return Convention(
        "pinocchio-parser",
        PINOCCHIO.velocity,
        joint_order=lambda _m: perm,
        configuration=PINOCCHIO.configuration,
    )


def wide_state(model: Model, state: State, convention: Convention) -> tuple[np.ndarray, np.ndarray]:
    """Pinocchio's ``(q, v)`` of one neutral state of a model with joints of several coordinates, for
    the model Pinocchio's loader made (:func:`parsed_convention`: its q and v are laid out as the
    convention declares, the free flyer of a floating base first)."""
    return to_native_state(model, state, convention)


@dataclass
class PinocchioNative:
    """Pinocchio's M, h, g of its own model ``pm`` at states of bridge's ``model`` (floating base)."""

    pm: pin.Model
    model: Model
    base_pose: None = None
    layout: NativeLayout = field(init=False)
    order: np.ndarray = field(init=False)  # bridge's nu from Pinocchio's v: v[order]
    convention: Convention | None = field(init=False)  # a model with joints of several coordinates

    def __post_init__(self) -> None:
        self.layout = native_layout(self.pm)
        self.convention = None
        if not self.model.single_coordinate:
            self.convention = parsed_convention(self.layout, self.model)
            self.order = np.arange(self.model.nv)
            return
        at = {name: k for k, name in enumerate(self.layout.dof_names)}
        dofs = [6 + at[d] for d in self.model.dof_names]
        self.order = np.concatenate([np.arange(6), np.array(dofs, dtype=int)])

    def dynamics(self, state: State) -> dict[str, np.ndarray]:
        """M, h, g in ``state``'s representation (Pinocchio's free flyer is BODY), bridge's DOF order."""
        if self.convention is not None:
            return self._wide_dynamics(state)
        model, rep = self.model, state.representation.value
        body = state.to("body")
        q, v = native_state(
            self.pm,
            self.layout,
            body.world_H_base.matrix,
            body.base_velocity,
            dict(zip(model.dof_names, body.s, strict=True)),
            dict(zip(model.dof_names, body.s_dot, strict=True)),
        )
        d = dynamics(self.pm, q, v)
        o = self.order
        Mb = d["mass_matrix"][np.ix_(o, o)]
        rest = State(body.world_H_base, body.s, np.zeros(6), np.zeros(model.n_dofs), "body", layout=model)
        return {
            "mass_matrix": convert_mass_matrix(model, body, Mb, "body", rep),
            "bias_forces": convert_bias_forces(model, body, d["bias_forces"][o], Mb, "body", rep),
            "gravity_forces": convert_bias_forces(model, rest, d["gravity_forces"][o], Mb, "body", rep),
        }

    def _wide_dynamics(self, state: State) -> dict[str, np.ndarray]:
        """:meth:`dynamics` of a model with ball, free or planar joints: Pinocchio's (q, v) and its
        results through the change of variables to :attr:`convention`."""
        q, v = wide_state(self.model, state, self.convention)
        d = dynamics(self.pm, q, v)
        cov = change_of_variables(self.model, state, NEUTRAL[state.representation], self.convention)
        M = d["mass_matrix"]
        return {
            "mass_matrix": cov.matrix_back(M),
            "bias_forces": cov.bias_back(d["bias_forces"], M),
            "gravity_forces": cov.force_back(d["gravity_forces"]),
        }

    def without(self, links: Sequence[str]) -> PinocchioNative:
        """These numbers with the inertias (bridge's, in the link frames) of ``links`` removed."""
        pm = pin.Model(self.pm)
        for name in links:
            inertia = self.model.link(name).inertia
            drop_link_inertia(pm, name, 0.0, inertia.com, inertia.inertia_com)
        return PinocchioNative(pm, self.model)


def _warned(source: Source, category: type, before: str, after: str) -> tuple[str, ...]:
    """The names bridge's URDF loader quoted in its warnings of ``category``."""
    return tuple(
        m.split(before, 1)[1].split(after)[0].strip("'") for c, m in source.warnings if c is category
    )


def _causes(source: Source, reference: Loaded | None) -> list[Cause]:
    causes = []
    mimic = _warned(source, MimicJointWarning, "joint ", " ")
    if mimic:
        causes.append(
            Cause(
                "mimic_joints",
                mimic,
                "both loaders ignore the <mimic> relations (independent DOFs; Pinocchio's mimic=True and "
                "bridge's mimic='coupled' keep them)",
            )
        )
    nonphysical = _warned(source, NonPhysicalInertiaWarning, "link ", ":")
    if nonphysical:
        causes.append(
            Cause(
                "nonphysical_inertia",
                nonphysical,
                "inertias no rigid body can have; both loaders take them as they are (no effect on "
                "agreement)",
            )
        )
    merged = tuple(j.name for j in source.model.joints if not j.movable)
    if merged:
        other = f"{reference.who} keeps {reference.bodies} links; " if reference is not None else ""
        causes.append(
            Cause(
                "fixed_joints_merged",
                merged,
                f"Pinocchio merges the links of {len(merged)} fixed joints into their parent bodies (kept "
                f"as frames), {other}no effect on the dynamics",
            )
        )
    return causes


class PinocchioLoader:
    """Pinocchio's ``buildModelFromUrdf`` (free flyer) compared with iDynTree's own loader."""

    label = "pinocchio URDF loader"
    prefix = ""
    against = "idyntree"
    joins = "default"
    unexplained = "the loaders disagree beyond what bridge can explain"

    def load(self, source: Source, reference: Loaded | None = None) -> Loaded:
        native = PinocchioNative(load_urdf_model(source.path), source.model)
        return Loaded(
            native,
            _causes(source, reference),
            drop=native.without,
            bodies=native.pm.nbodies,
        )


NATIVE = PinocchioLoader()
