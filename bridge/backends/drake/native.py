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

from bridge.change_of_variables import MIXED, Convention, change_of_variables
from bridge.errors import BackendError
from bridge.model.model import Model
from bridge.state import Representation, State

from .model import require_drake

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
    """The outcome of :func:`compare_native`: findings (what Drake's parser does differently) and
    the worst norm-wise relative differences of M, h and g (empty when Drake refuses the file)."""

    path: str
    findings: list[str] = field(default_factory=list)
    max_rel: dict[str, float] = field(default_factory=dict)
    rtol: float = 1e-10

    @property
    def ok(self) -> bool:
        return bool(self.max_rel) and all(e <= self.rtol for e in self.max_rel.values())

    def __str__(self) -> str:
        lines = [f"Drake's Parser on {self.path}:"]
        lines += [f"  {q}: max rel {e:.1e}" for q, e in self.max_rel.items()]
        lines += [f"  finding: {f}" for f in self.findings]
        return "\n".join(lines)


def compare_native(
    path: str | Path, model: Model | None = None, samples: int = 3, seed: int = 0, rtol: float = 1e-10
) -> NativeComparison:
    """Compare Drake's own parse of the URDF at ``path`` with bridge's ``model`` of it (default:
    ``load_urdf(path, mimic="independent", check_inertia=False)``) at ``samples`` random states."""
    require_drake()
    import bridge

    out = NativeComparison(str(path), rtol=rtol)
    if model is None:
        model = bridge.load_urdf(path, mimic="independent", check_inertia=False)
    try:
        plant = load_drake_urdf(path)
    except RuntimeError as exc:
        out.findings.append(f"Drake's parser refuses the file: {str(exc).splitlines()[0]}")
        return out
    joints = _joints(plant)
    world = plant.world_body().index()
    bodies = {plant.get_body(b).name() for b in _body_indices(plant) if b != world}
    links = set(model.link_names)
    if "world" in links and "world" not in bodies:
        weld = [j.name() for j in joints if j.parent_body().index() == world and j.num_velocities() == 0]
        out.findings.append(
            "the URDF link 'world' is Drake's world body: the robot is welded to it "
            f"({', '.join(weld)}), a fixed base; bridge loads 'world' as a massless link"
        )
        model = model.with_base(_welded_child(plant, model)).with_fixed_base()
        model = _without_link(model, "world")
    elif bodies != links:
        out.findings.append(f"bodies differ from the URDF links: {sorted(bodies ^ links)}")
    changed = _changed_inertias(plant, model)
    if changed:
        out.findings.append(
            f"Drake's parser replaces the rotational inertia of {', '.join(map(repr, changed))} (not "
            "physically valid: a warning on Drake's log) by an isotropic one of the same mass, so M and h "
            "differ from bridge's"
        )
    floating = [j for j in joints if j.num_velocities() == 6]
    for j in floating:
        out.findings.append(
            f"Finalize adds a {j.type_name()} joint named {j.name()!r} for the free base "
            f"{j.child_body().name()!r}"
        )
    damped = [j.name() for j in joints if j.num_velocities() == 1 and np.any(j.default_damping_vector())]
    if damped:
        out.findings.append(
            f"<dynamics damping> of {len(damped)} joints becomes joint damping (applied by "
            "CalcForceElementsContribution and in simulation; not part of M, h, g here)"
        )
    if plant.num_actuators():
        from pydrake.multibody.tree import JointActuatorIndex

        acts = [plant.get_joint_actuator(JointActuatorIndex(i)) for i in range(plant.num_actuators())]
        reflected = [a.name() for a in acts if a.default_reflected_inertia() != 0.0]
        out.findings.append(
            f"{len(acts)} <transmission>s become JointActuators"
            + (f"; reflected inertia of {reflected} adds to M" if reflected else "")
        )
    if plant.num_constraints():
        out.findings.append(
            f"{plant.num_constraints()} constraints (mimic joints as couplers: independent DOFs in M)"
        )
    order = [j.name() for j in sorted(joints, key=lambda j: j.velocity_start()) if j.num_velocities() == 1]
    if order != list(model.dof_names):
        out.findings.append(
            "velocity order: Drake's forest (depth first from the base), not the URDF document order"
        )
    _compare_dynamics(out, plant, model, samples, seed)
    return out


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


def _compare_dynamics(out: NativeComparison, plant, model: Model, samples: int, seed: int) -> None:
    """M, h and g of Drake's plant against bridge's (Pinocchio) through one change of variables
    to the plant's layout (MIXED angular first for a floating base, Drake's joint order)."""
    import bridge
    from bridge.check import random_states

    perm = np.argsort([plant.GetJointByName(d).velocity_start() for d in model.dof_names])
    native = Convention(
        "drake-parser", Representation.MIXED, base_left=np.eye(6)[_SWAP], joint_order=lambda _m: perm
    )
    states = random_states(model, samples, np.random.default_rng(seed))
    context = plant.CreateDefaultContext()
    # a welded base sits where Drake's weld puts it
    welded = plant.CalcRelativeTransform(context, plant.world_frame(), plant.GetFrameByName(model.base))
    kd = bridge.KinDyn(model, "pinocchio", "mixed")
    errors: dict[str, list[float]] = {"mass_matrix": [], "bias_forces": [], "gravity_forces": []}
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
        q, v = native_state(plant, model, st)
        plant.SetPositions(context, q)
        plant.SetVelocities(context, v)
        kd.set_robot_state(st)
        cov = change_of_variables(model, st, MIXED, native)
        g_D = plant.CalcGravityGeneralizedForces(context)
        mine = {
            "mass_matrix": cov.matrix_back(plant.CalcMassMatrix(context)),
            "bias_forces": cov.force_back(plant.CalcBiasTerm(context) - g_D),
            "gravity_forces": cov.force_back(-g_D),
        }
        ref = {
            "mass_matrix": kd.mass_matrix(),
            "bias_forces": kd.bias_forces(),
            "gravity_forces": kd.gravity_forces(),
        }
        for key, value in mine.items():
            err = np.linalg.norm(value - ref[key]) / max(1.0, np.linalg.norm(ref[key]))
            errors[key].append(float(err))
    out.max_rel = {k: max(v) for k, v in errors.items()}
