"""Drake's own URDF parser next to bridge's loader: what each makes of the same file.

:func:`compare_native` parses a URDF with Drake's ``Parser`` (its own loader, no bridge model in
between), puts the same physical states into Drake's plant and into bridge's model (by joint and
body names, with Drake's own ``SetFreeBodyPose`` / ``SetFreeBodySpatialVelocity`` for the base),
and compares Drake's ``CalcMassMatrix``, bias term and gravity forces with bridge's (Pinocchio
engine), converted through one change of variables to the parsed plant's velocity layout. Findings
name what Drake's parser does differently (measured with Drake 1.51):

* a URDF link named ``world`` is Drake's world body: a robot fixed to it is welded there (fixed
  base), where bridge loads ``world`` as a massless floating base link;
* a free base gets a ``QuaternionFloatingJoint`` named after the base link at ``Finalize``;
* ``<dynamics damping>`` becomes joint damping, which Drake's ``CalcForceElementsContribution``
  (and a simulation) applies; bridge, Pinocchio's and iDynTree's rigid-body quantities ignore it;
* ``<transmission>`` elements become ``JointActuator``s (reflected inertia, when given, adds to M);
* a mimic joint becomes a coupler constraint (the joints stay independent in M); a mimic tag on a
  fixed joint is an error of Drake's parser;
* the velocity order is Drake's (depth first), not the URDF document order;
* inertias that are not physically valid load with a warning on Drake's log.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from bridge.backends.drake.model import require_drake
from bridge.conventions.change_of_variables import Convention, change_of_variables
from bridge.conventions.state import Representation, State
from bridge.errors import BackendError
from bridge.model.model import Model

__all__ = ["NativeComparison", "compare_native", "load_drake_urdf", "native_state"]

_SWAP = np.array([3, 4, 5, 0, 1, 2])


def load_drake_urdf(path: str | Path):
    """A finalized ``MultibodyPlant`` from Drake's own ``Parser`` (geometry is not registered)."""
    require_drake()
    from pydrake.multibody.parsing import Parser
    from pydrake.multibody.plant import MultibodyPlant

    plant = MultibodyPlant(0.0)
    Parser(plant).AddModels(str(path))
    plant.Finalize()
    return plant


def _joints(plant) -> list:
    from pydrake.multibody.tree import JointIndex

    return [plant.get_joint(JointIndex(i)) for i in range(plant.num_joints())]


def native_state(plant, model: Model, state: State) -> tuple[np.ndarray, np.ndarray]:
    """``(q, v)`` of a Drake plant (any layout, e.g. the Parser's) for one neutral state of
    ``model``, matching joints and the base body by name (a welded base ignores the base pose)."""
    from pydrake.math import RigidTransform
    from pydrake.multibody.math import SpatialVelocity

    context = plant.CreateDefaultContext()
    base = plant.GetBodyByName(model.base)
    mixed = state.to(Representation.MIXED)
    floating = getattr(base, "is_floating_base_body", None) or base.is_floating
    if floating():
        plant.SetFreeBodyPose(context, base, RigidTransform(mixed.world_H_base.matrix))
        v = mixed.base_velocity
        V = SpatialVelocity(v[3:], v[:3])
        try:  # the current argument order (the older one is deprecated for removal in 2026-06)
            plant.SetFreeBodySpatialVelocity(context, base, V)
        except TypeError:  # pragma: no cover - older Drake
            plant.SetFreeBodySpatialVelocity(base, V, context)
    q, v = plant.GetPositions(context).copy(), plant.GetVelocities(context).copy()
    for k, name in enumerate(model.dof_names):
        j = plant.GetJointByName(name)
        q[j.position_start()] = state.s[k]
        v[j.velocity_start()] = state.s_dot[k]
    return q, v


@dataclass
class NativeComparison:
    """The outcome of :func:`compare_native`: ``findings`` (:class:`bridge.validation.native.Finding`, what
    Drake's parser does differently, causes prefixed ``drake_``), the worst norm-wise relative
    differences of M, h and g over the representations (``max_rel``) and per representation
    (``by_rep``, keyed ``(quantity, representation)``); both empty when Drake refuses the file."""

    path: str
    findings: list = field(default_factory=list)
    max_rel: dict[str, float] = field(default_factory=dict)
    by_rep: dict[tuple[str, str], float] = field(default_factory=dict)
    rtol: float = 1e-10

    @property
    def ok(self) -> bool:
        return bool(self.max_rel) and all(e <= self.rtol for e in self.max_rel.values())

    def __str__(self) -> str:
        lines = [f"Drake's Parser on {self.path}:"]
        lines += [f"  {q}: max rel {e:.1e}" for q, e in self.max_rel.items()]
        lines += [f"  finding {f.cause}: {', '.join(f.subjects)}: {f.message}" for f in self.findings]
        return "\n".join(lines)


def _mimic_tags(path: str | Path) -> dict[str, str]:
    """``{mimic joint: master}`` from the file's ``<mimic>`` tags (Drake's couplers)."""
    import xml.etree.ElementTree as ET

    try:
        root = ET.parse(str(path)).getroot()
    except (ET.ParseError, OSError):  # pragma: no cover - Drake parsed it
        return {}
    return {
        j.get("name"): j.find("mimic").get("joint") for j in root.iter("joint") if j.find("mimic") is not None
    }


def compare_native(
    path: str | Path,
    model: Model | None = None,
    samples: int = 3,
    seed: int = 0,
    rtol: float = 1e-10,
    representations=("mixed",),
) -> NativeComparison:
    """Compare Drake's own parse of the URDF at ``path`` with bridge's ``model`` of it (default:
    ``load_urdf(path, mimic="independent", check_inertia=False)``) at ``samples`` random states, in
    each of ``representations`` (bridge's M, h, g from its Pinocchio engine). Each cause that changes
    the numbers has ``error_with`` (as loaded) and ``error_without`` (that cause undone)."""
    require_drake()
    import bridge
    from bridge.validation.native import Finding

    out = NativeComparison(str(path), rtol=rtol)
    if model is None:
        model = bridge.load_urdf(path, mimic="independent", check_inertia=False)
    try:
        plant = load_drake_urdf(path)
    except RuntimeError as exc:
        out.findings.append(
            Finding("drake_refuses", (), f"Drake's parser refuses the file: {str(exc).splitlines()[0]}")
        )
        return out
    reps = [Representation.parse(r) for r in representations]
    joints = _joints(plant)
    world = plant.world_body().index()
    bodies = {plant.get_body(b).name() for b in _body_indices(plant) if b != world}
    links = set(model.link_names)
    findings: list = []
    if "world" in links and "world" not in bodies:
        weld = [j.name() for j in joints if j.parent_body().index() == world and j.num_velocities() == 0]
        findings.append(
            Finding(
                "drake_world_welded",
                ("world", *weld),
                "the URDF link 'world' is Drake's world body: the robot is welded to it "
                f"({', '.join(weld)}), a fixed base; bridge loads 'world' as a massless link (compared "
                "here with bridge's model re-rooted there, fixed)",
            )
        )
        model = model.with_base(_welded_child(plant, model)).with_fixed_base()
        model = _without_link(model, "world")
    elif bodies != links:
        findings.append(
            Finding("drake_bodies", tuple(sorted(bodies ^ links)), "Drake's bodies are not the URDF links")
        )
    errors = _errors(plant, model, samples, seed, reps)
    raw = max(errors[(q, r.value)] for q in _QUANTITIES for r in reps)
    changed = _changed_inertias(plant, model)
    if changed:
        fixed = _errors(plant, _with_inertias(model, plant, changed), samples, seed, reps)
        findings.append(
            Finding(
                "drake_inertia_replaced",
                tuple(changed),
                "Drake's parser replaces these inertias (not physically valid: a warning on Drake's "
                f"log) by valid ones ({_replacements(plant, model, changed)}), so M, h (and g if a mass "
                "or centre of mass changed) differ from bridge's (without: bridge given Drake's inertias)",
                raw,
                max(fixed[(q, r.value)] for q in _QUANTITIES for r in reps),
            )
        )
    for j in (j for j in joints if j.num_velocities() == 6):
        findings.append(
            Finding(
                "drake_floating_joint",
                (j.name(),),
                f"Finalize adds a {j.type_name()} joint named {j.name()!r} for the free base "
                f"{j.child_body().name()!r} (q: quaternion w first, then position; v: angular, then "
                "linear velocity, in world)",
            )
        )
    damped = {
        j.name(): float(j.default_damping_vector()[0])
        for j in joints
        if j.num_velocities() == 1 and np.any(j.default_damping_vector())
    }
    if damped:
        with_damping = max(errors[("bias_forces_with_force_elements", r.value)] for r in reps)
        findings.append(
            Finding(
                "drake_joint_damping",
                tuple(damped),
                f"<dynamics damping> of {len(damped)} joints (largest coefficient {max(damped.values()):g}) "
                "becomes joint damping, which CalcForceElementsContribution, inverse dynamics with "
                "force elements and a simulation apply; rigid-body M, h, g (compared here) leave it out "
                "(with: h with Drake's force elements; without: h compared)",
                with_damping,
                max(errors[("bias_forces", r.value)] for r in reps),
            )
        )
    if plant.num_actuators():
        from pydrake.multibody.tree import JointActuatorIndex

        acts = [plant.get_joint_actuator(JointActuatorIndex(i)) for i in range(plant.num_actuators())]
        reflected = {
            a.joint().name(): a.default_reflected_inertia() for a in acts if a.default_reflected_inertia()
        }
        message = f"{len(acts)} <transmission>s become JointActuators"
        if reflected:
            plain = _errors(plant, model, samples, seed, reps, zero_reflected=True)
            message += (
                f"; their reflected inertia (rotor inertia x gear ratio^2, largest "
                f"{max(reflected.values()):g}) adds to M's diagonal (without: zeroed in Drake's context)"
            )
            findings.append(
                Finding(
                    "drake_transmissions",
                    tuple(a.joint().name() for a in acts),
                    message,
                    raw,
                    max(plain[(q, r.value)] for q in _QUANTITIES for r in reps),
                )
            )
        else:
            findings.append(
                Finding(
                    "drake_transmissions",
                    tuple(a.joint().name() for a in acts),
                    message + " (no reflected inertia: no effect on M)",
                )
            )
    if plant.num_constraints():
        mimic = _mimic_tags(path)
        findings.append(
            Finding(
                "drake_mimic_couplers",
                tuple(mimic),
                f"{plant.num_constraints()} <mimic> relations become coupler constraints (a solver "
                "enforces them; the joints stay independent DOFs in M, h, g, as in bridge's default "
                "mimic='independent')",
            )
        )
    order = [j.name() for j in sorted(joints, key=lambda j: j.velocity_start()) if j.num_velocities() == 1]
    if order != list(model.dof_names):
        findings.append(
            Finding(
                "drake_dof_order",
                tuple(d for d, e in zip(model.dof_names, order, strict=False) if d != e),
                "Drake's velocity order is its forest's (depth first from the base), not the URDF "
                "document order; bridge maps the joints by name",
            )
        )
    residual = raw  # with every cause that changes M, h, g undone
    if any(f.cause in ("drake_inertia_replaced", "drake_transmissions") for f in findings):
        undone = _with_inertias(model, plant, changed) if changed else model
        rest = _errors(plant, undone, samples, seed, reps, zero_reflected=True)
        residual = max(rest[(q, r.value)] for q in _QUANTITIES for r in reps)
    if residual > rtol:
        findings.append(
            Finding(
                "drake_unexplained",
                (),
                "Drake's parse and bridge's model disagree beyond what bridge can explain",
                raw,
                residual,
            )
        )
    out.findings = findings
    out.by_rep = {key: errors[key] for key in errors if key[0] in _QUANTITIES}
    out.max_rel = {q: max(errors[(q, r.value)] for r in reps) for q in _QUANTITIES}
    return out


_QUANTITIES = ("mass_matrix", "bias_forces", "gravity_forces")


def _changed_inertias(plant, model: Model) -> list[str]:
    """Links whose spatial inertia in Drake's plant differs from bridge's (1e-12 absolute)."""
    context = plant.CreateDefaultContext()
    out = []
    for link in model.links:
        if not plant.HasBodyNamed(link.name):
            continue
        M = plant.GetBodyByName(link.name).CalcSpatialInertiaInBodyFrame(context).CopyToFullMatrix6()
        mine = link.inertia.as_matrix()  # linear first; Drake's is angular first
        if np.abs(M[np.ix_(_SWAP, _SWAP)] - mine).max() > 1e-12:
            out.append(link.name)
    return out


def _replacements(plant, model: Model, names: list[str], limit: int = 3) -> str:
    """What Drake changed in each link's inertia, e.g. "'foot': mass 0 -> 1, centre of mass moved"."""
    context = plant.CreateDefaultContext()
    parts = []
    for name in names[:limit]:
        mine = model.link(name).inertia
        sp = plant.GetBodyByName(name).CalcSpatialInertiaInBodyFrame(context)
        what = []
        if abs(float(sp.get_mass()) - float(mine.mass)) > 1e-12:
            what.append(f"mass {float(mine.mass):g} -> {float(sp.get_mass()):g}")
        if np.abs(np.array(sp.get_com()) - np.asarray(mine.com)).max() > 1e-12:
            what.append("centre of mass moved")
        parts.append(f"{name!r}: " + (", ".join(what) or "rotational inertia"))
    more = f", and {len(names) - limit} more" if len(names) > limit else ""
    return "; ".join(parts) + more


def _with_inertias(model: Model, plant, names: list[str]) -> Model:
    """``model`` with the inertias of the links ``names`` taken from Drake's plant."""
    from bridge.model.model import Link
    from bridge.spatial import SpatialInertia

    context = plant.CreateDefaultContext()
    links = []
    for link in model.links:
        if link.name in names:
            sp = plant.GetBodyByName(link.name).CalcSpatialInertiaInBodyFrame(context)
            m, c = float(sp.get_mass()), np.array(sp.get_com())
            I_o = sp.CalcRotationalInertia().CopyToFullMatrix3()
            I_c = I_o - m * (np.dot(c, c) * np.eye(3) - np.outer(c, c))
            link = Link(link.name, SpatialInertia(m, c, I_c))
        links.append(link)
    return model.replace(links=tuple(links))


def _body_indices(plant) -> list:
    from pydrake.multibody.tree import BodyIndex

    return [BodyIndex(i) for i in range(plant.num_bodies())]


def _welded_child(plant, model: Model) -> str:
    world = plant.world_body().index()
    for j in _joints(plant):
        if j.parent_body().index() == world and j.child_body().name() in model.link_names:
            return j.child_body().name()
    raise BackendError("Drake's plant has no body of the model welded to the world")  # pragma: no cover


def _without_link(model: Model, name: str) -> Model:
    """``model`` without the leaf ``name`` (Drake's world body) and its joint."""
    joints = tuple(j for j in model.joints if name not in (j.parent, j.child))
    links = tuple(link for link in model.links if link.name != name)
    frames = tuple(f for f in model.frames if f.link != name)
    return model.replace(links=links, joints=joints, frames=frames)


def _errors(
    plant, model: Model, samples: int, seed: int, reps: list[Representation], zero_reflected: bool = False
) -> dict[tuple[str, str], float]:
    """Worst relative errors ``{(quantity, representation): err}`` of M, h, g of Drake's plant
    against bridge's (Pinocchio engine), through one change of variables per state from the
    representation to the plant's layout (MIXED angular first for a floating base, Drake's joint
    order); also ``("bias_forces_with_force_elements", rep)``: h with Drake's force elements (joint
    damping) counted. ``zero_reflected``: the actuators' rotor inertias zeroed in the context."""
    from pydrake.multibody.tree import JointActuatorIndex, MultibodyForces

    import bridge
    from bridge.conventions.change_of_variables import NEUTRAL
    from bridge.validation.check import random_states

    perm = np.argsort([plant.GetJointByName(d).velocity_start() for d in model.dof_names])
    from bridge.backends.drake.state import DRAKE

    native = Convention("drake-parser", DRAKE.velocity, joint_order=lambda _m: perm)
    states = random_states(model, samples, np.random.default_rng(seed))
    context = plant.CreateDefaultContext()
    if zero_reflected:
        for i in range(plant.num_actuators()):
            plant.get_joint_actuator(JointActuatorIndex(i)).SetRotorInertia(context, 0.0)
    # a welded base sits where Drake's weld puts it
    welded = plant.CalcRelativeTransform(context, plant.world_frame(), plant.GetFrameByName(model.base))
    forces = MultibodyForces(plant)
    errors: dict[tuple[str, str], float] = {}
    for rep in reps:
        kd = bridge.KinDyn(model, "pinocchio", rep)
        for i in range(samples):
            st = State(
                states.world_H_base[i],
                states.s[i],
                states.base_velocity[i],
                states.s_dot[i],
                Representation.MIXED,
            )
            if not model.floating:
                st = State(welded.GetAsMatrix4(), st.s, np.zeros(6), st.s_dot, Representation.MIXED)
            st = st.to(rep)
            q, v = native_state(plant, model, st)
            plant.SetPositions(context, q)
            plant.SetVelocities(context, v)
            kd.set_robot_state(st)
            cov = change_of_variables(model, st, NEUTRAL[rep], native)
            g_D = plant.CalcGravityGeneralizedForces(context)
            plant.CalcForceElementsContribution(context, forces)
            bias = plant.CalcBiasTerm(context)
            damping = forces.generalized_forces()  # -d v (gravity lands in the body forces)
            M_D = plant.CalcMassMatrix(context)
            mine = {  # zero acceleration in the representation is T_dot nu in Drake's coordinates
                "mass_matrix": cov.matrix_back(M_D),
                "bias_forces": cov.bias_back(bias - g_D, M_D),
                "gravity_forces": cov.force_back(-g_D),
                "bias_forces_with_force_elements": cov.bias_back(bias - g_D - damping, M_D),
            }
            ref = {
                "mass_matrix": kd.mass_matrix(),
                "bias_forces": kd.bias_forces(),
                "gravity_forces": kd.gravity_forces(),
            }
            ref["bias_forces_with_force_elements"] = ref["bias_forces"]
            for key, value in mine.items():
                err = float(np.linalg.norm(value - ref[key]) / max(1.0, np.linalg.norm(ref[key])))
                errors[(key, rep.value)] = max(errors.get((key, rep.value), 0.0), err)
    return errors
