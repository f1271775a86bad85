"""Drake's own URDF and SDFormat parser next to bridge's loader: what each makes of the same file.

``NATIVE`` (:class:`DrakeLoader`, :mod:`bridge.backends.native`) parses a URDF with Drake's ``Parser``
(its own loader, no bridge model in between) and gives Drake's ``CalcMassMatrix``, bias term and
gravity forces at bridge's states (joints and the base body matched by name, the base set with
Drake's own ``SetFreeBodyPose`` / ``SetFreeBodySpatialVelocity``), converted through one change of
variables from the parsed plant's velocity layout. Its causes (prefixed ``drake_``) name what
Drake's parser does differently (measured with Drake 1.51):

* a URDF link named ``world`` is Drake's world body: a robot fixed to it is welded there (fixed
  base), where bridge loads ``world`` as a massless floating base link (``drake_world_welded``);
* a free base gets a ``QuaternionFloatingJoint`` named after the base link at ``Finalize``
  (``drake_floating_joint``);
* ``<dynamics damping>`` becomes joint damping, which Drake's ``CalcForceElementsContribution``
  (and a simulation) applies; bridge, Pinocchio's and iDynTree's rigid-body quantities ignore it
  (``drake_joint_damping``);
* ``<transmission>`` elements become ``JointActuator``\\ s (reflected inertia, when given, adds to M)
  (``drake_transmissions``);
* a mimic joint becomes a coupler constraint (the joints stay independent in M); a mimic tag on a
  fixed joint is an error of Drake's parser (``drake_mimic_couplers``, ``drake_refuses``);
* the velocity order is Drake's (depth first), not the URDF document order (``drake_dof_order``);
* inertias that are not physically valid load with a warning on Drake's log and are replaced
  (``drake_inertia_replaced``).

On an SDFormat file (:meth:`DrakeLoader.for_kind`, label "drake SDFormat parser", compared with
:func:`bridge.load_sdf`'s model): a model attached to the world by a movable joint has bridge's
massless ``world`` link as its base, Drake's world body; a universal joint is Drake's two-DOF
``UniversalJoint`` and bridge's two revolute joints through a massless link, matched DOF by DOF
(:func:`dof_slot`, ``drake_universal_joints``); joints whose ``<effort>`` limit is not 0 get
``JointActuator``\\ s (``drake_transmissions``); and a ``<frame attached_to=JOINT>`` is placed at its
pose relative to the joint frame taken as its pose in the child link (``drake_frames_moved``:
frames only, M, h, g unchanged; bridge follows the specification).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from bridge._files import library_path
from bridge.backends.drake.model import quiet_drake, require_drake
from bridge.backends.drake.parsed import ParsedLayout, dof_slot, native_state
from bridge.backends.native import Cause, Loaded, Source, dof_order_cause
from bridge.conventions.change_of_variables import NEUTRAL, Convention, change_of_variables
from bridge.conventions.state import State
from bridge.errors import BackendError
from bridge.model.building import unique_name
from bridge.model.model import Joint, JointKind, Link, Model
from bridge.model.sdf import sdf_named
from bridge.spatial import SpatialInertia, Transform

__all__ = ["NATIVE", "DrakeLoader", "DrakeNative", "dof_slot", "load_drake_urdf", "native_state", "sdf_world"]

_SWAP = np.array([3, 4, 5, 0, 1, 2])


def load_drake_urdf(path: str | Path):
    """A finalized ``MultibodyPlant`` from Drake's own ``Parser`` (geometry is not registered)."""
    require_drake()
    from pydrake.multibody.parsing import Parser
    from pydrake.multibody.plant import MultibodyPlant

    plant = MultibodyPlant(0.0)
    Parser(plant).AddModels(library_path(path))
    plant.Finalize()
    return plant


def _joints(plant) -> list:
    from pydrake.multibody.tree import JointIndex

    return [plant.get_joint(JointIndex(i)) for i in range(plant.num_joints())]


@dataclass
class DrakeNative:
    """Drake's M, h, g of its parsed ``plant`` at states of bridge's ``model``
    (:class:`~bridge.backends.drake.parsed.ParsedLayout`: joints and the base body by name).

    ``zero_reflected``: the actuators' rotor inertias zeroed in the context; ``force_elements``: h
    with Drake's force elements (joint damping) counted; ``gravity`` (3,): the plant's gravity field
    set to it (None: the parser's, which ignores an SDF world's ``<gravity>``).
    """

    plant: object
    model: Model
    zero_reflected: bool = False
    force_elements: bool = False
    gravity: np.ndarray | None = None
    base_pose: np.ndarray | None = field(init=False)
    layout: ParsedLayout = field(init=False)

    def __post_init__(self) -> None:
        from pydrake.multibody.tree import JointActuatorIndex, MultibodyForces

        plant = self.plant
        self.context = plant.CreateDefaultContext()
        if self.zero_reflected:
            for i in range(plant.num_actuators()):
                plant.get_joint_actuator(JointActuatorIndex(i)).SetRotorInertia(self.context, 0.0)
        self.forces = MultibodyForces(plant)
        welded = plant.CalcRelativeTransform(
            self.context, plant.world_frame(), plant.GetFrameByName(self.model.base)
        )  # a welded base sits where Drake's weld puts it
        self.base_pose = None if self.model.floating else welded.GetAsMatrix4()
        self.layout = ParsedLayout(plant, self.model, self.base_pose)

    @property
    def convention(self) -> Convention:
        """The plant's layout: :data:`~bridge.backends.drake.state.DRAKE`'s velocity, its joint order."""
        return self.layout.convention

    def dynamics(self, state: State) -> dict[str, np.ndarray]:
        """M, h, g in ``state``'s coordinates (zero acceleration there is T_dot nu in Drake's)."""
        field_ = self.plant.mutable_gravity_field()
        parsed = np.array(field_.gravity_vector())
        if self.gravity is not None:  # (one plant serves several natives: restored below)
            field_.set_gravity_vector(self.gravity)
        try:
            return self._dynamics(state)
        finally:
            field_.set_gravity_vector(parsed)

    def _dynamics(self, state: State) -> dict[str, np.ndarray]:
        plant, context = self.plant, self.context
        q, v = self.layout.state(state)
        plant.SetPositions(context, q)
        plant.SetVelocities(context, v)
        cov = change_of_variables(self.model, state, NEUTRAL[state.representation], self.convention)
        g_D = plant.CalcGravityGeneralizedForces(context)
        bias = plant.CalcBiasTerm(context) - g_D
        if self.force_elements:
            plant.CalcForceElementsContribution(context, self.forces)
            bias = bias - self.forces.generalized_forces()  # -d v (gravity lands in the body forces)
        M_D, bias, g_D = self.layout.back(plant.CalcMassMatrix(context), bias, g_D)
        return {
            "mass_matrix": cov.matrix_back(M_D),
            "bias_forces": cov.bias_back(bias, M_D),
            "gravity_forces": cov.force_back(-g_D),
        }


# ------------------------------------------------------------------ what Drake's parser changes
def _mimic_tags(path: str | Path) -> dict[str, str]:
    """``{mimic joint: master}`` from the file's ``<mimic>`` tags (Drake's couplers)."""
    try:
        root = ET.parse(str(path)).getroot()
    except (ET.ParseError, OSError):  # pragma: no cover - Drake parsed it
        return {}
    return {
        j.get("name"): j.find("mimic").get("joint") for j in root.iter("joint") if j.find("mimic") is not None
    }


def _inertia(plant, name: str):
    return plant.GetBodyByName(name).CalcSpatialInertiaInBodyFrame(plant.CreateDefaultContext())


def _changed_inertias(plant, model: Model) -> list[str]:
    """Links whose spatial inertia in Drake's plant differs from bridge's (1e-12 absolute)."""
    out = []
    for link in model.links:
        if not plant.HasBodyNamed(link.name):
            continue
        M = _inertia(plant, link.name).CopyToFullMatrix6()
        mine = link.inertia.as_matrix()  # linear first; Drake's is angular first
        if np.abs(M[np.ix_(_SWAP, _SWAP)] - mine).max() > 1e-12:
            out.append(link.name)
    return out


def _replacements(plant, model: Model, names: list[str], limit: int = 3) -> str:
    """What Drake changed in each link's inertia, e.g. "'foot': mass 0 -> 1, centre of mass moved"."""
    parts = []
    for name in names[:limit]:
        mine = model.link(name).inertia
        sp = _inertia(plant, name)
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
    links = []
    for link in model.links:
        if link.name in names:
            sp = _inertia(plant, link.name)
            m, c = float(sp.get_mass()), np.array(sp.get_com())
            I_o = sp.CalcRotationalInertia().CopyToFullMatrix3()
            I_c = I_o - m * (np.dot(c, c) * np.eye(3) - np.outer(c, c))
            link = Link(link.name, SpatialInertia(m, c, I_c))
        links.append(link)
    return model.replace(links=tuple(links))


def _body_names(plant) -> set[str]:
    from pydrake.multibody.tree import BodyIndex

    world = plant.world_body().index()
    return {plant.get_body(BodyIndex(i)).name() for i in range(plant.num_bodies()) if BodyIndex(i) != world}


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


def _free_bodies(model: Model) -> tuple[Model, list[Cause]]:
    """bridge's model as Drake's URDF parser reads its ``floating`` joints: the child of each is a
    free body in the world (Drake logs that it does not support the joint type, and ``Finalize``
    gives the body a floating joint named after it), and so is a floating base then. The model
    compared is that scene: a massless ``world`` link (the model's own massless root ``world``, else
    a new one) as fixed base, a free joint named after each free body from it at the identity."""
    free = [j for j in model.joints if j.kind is JointKind.FREE]
    if not free:
        return model, []
    on_world = model.base == "world" and model.link(model.base).mass == 0.0  # (a URDF root 'world')
    world = model.base if on_world else unique_name("world", set(model.link_names), "_")
    links = model.links if on_world else (Link(world, SpatialInertia.zero()), *model.links)
    bodies = ([model.base] if model.floating and not on_world else []) + [j.child for j in free]
    names = {j.name for j in model.joints} - {j.name for j in free}
    joints = [j for j in model.joints if j.kind is not JointKind.FREE]
    body_joint = {}  # free body -> the name of its floating joint in Drake (its own name)
    for body in bodies:
        body_joint[body] = unique_name(body, names, "_")
        names.add(body_joint[body])
        joints.append(Joint(body_joint[body], JointKind.FREE, world, body, Transform.identity()))
    new = {j.name: body_joint[j.child] for j in free}
    dofs = [body_joint[model.base]] if model.base in body_joint else []
    dofs += [new.get(d, d) for d in model.dof_names]
    scene = Model(model.name, tuple(links), tuple(joints), model.frames, world, tuple(dofs), False)
    message = (
        "Drake's URDF parser has no floating joint: it leaves each child a free body in the world (a "
        "floating joint named after it), the floating base too; bridge reads a free joint from the "
        "parent. The same motion in other coordinates: compared here with bridge's model with these "
        "bodies free in the world (a scene on a massless 'world' link)"
    )
    return scene, [Cause("drake_floating_joints", tuple(j.name for j in free), message)]


def _planar_axes(model: Model, path: str) -> tuple[Model, list[Cause]]:
    """bridge's model with each planar joint's normal the file's ``<axis>`` (URDF's default ``1 0 0``
    without one), as Drake's parser reads it; bridge (as Pinocchio) reads z."""
    try:
        root = ET.parse(str(path)).getroot()
    except (ET.ParseError, OSError):  # pragma: no cover - Drake parsed it
        return model, []
    axes = {}
    for el in root.iter("joint"):
        if el.get("type") == "planar":
            axis = el.find("axis")
            text = axis.get("xyz", "1 0 0") if axis is not None else "1 0 0"
            a = np.array([float(x) for x in text.split()])
            axes[el.get("name")] = a / np.linalg.norm(a)
    moved = {n: a for n, a in axes.items() if np.abs(a - [0.0, 0.0, 1.0]).max() > 1e-12}
    if not moved:
        return model, []
    joints = tuple(replace(j, axis=moved[j.name]) if j.name in moved else j for j in model.joints)
    message = (
        "Drake's parser moves these planar joints in the plane normal to their <axis> (the URDF "
        "specification's reading; its default 1 0 0 without one), bridge (as Pinocchio) in the joint "
        "frame's xy plane: another motion; compared here with bridge's model with Drake's planes"
    )
    return model.replace(joints=joints), [Cause("drake_planar_axis", tuple(moved), message)]


def _world(plant, model: Model, path: str = "") -> tuple[Model, list[Cause]]:
    """bridge's model as Drake sees the file (re-rooted, fixed, where ``world`` is Drake's world;
    its floating joints free bodies, its planar joints in the planes of their axes)."""
    model, causes = _planar_axes(model, path) if path else (model, [])
    if any(j.kind is JointKind.FREE for j in model.joints):
        model, free = _free_bodies(model)
        return model, causes + free
    bodies, links = _body_names(plant), set(model.link_names)
    if "world" in links and "world" not in bodies:
        world = plant.world_body().index()
        weld = [
            j.name() for j in _joints(plant) if j.parent_body().index() == world and j.num_velocities() == 0
        ]
        cause = Cause(
            "drake_world_welded",
            ("world", *weld),
            "the URDF link 'world' is Drake's world body: the robot is welded to it "
            f"({', '.join(weld)}), a fixed base; bridge loads 'world' as a massless link (compared "
            "here with bridge's model re-rooted there, fixed)",
        )
        model = model.with_base(_welded_child(plant, model)).with_fixed_base()
        return _without_link(model, "world"), [*causes, cause]
    if bodies != links:
        return model, [
            *causes,
            Cause("drake_bodies", tuple(sorted(bodies ^ links)), "Drake's bodies are not the URDF links"),
        ]
    return model, causes


def _inertia_cause(native: DrakeNative, changed: list[str]) -> Cause:
    return Cause(
        "drake_inertia_replaced",
        tuple(changed),
        "Drake's parser replaces these inertias (not physically valid: a warning on Drake's "
        f"log) by valid ones ({_replacements(native.plant, native.model, changed)}), so M, h (and g if a "
        "mass "
        "or centre of mass changed) differ from bridge's (without: bridge given Drake's inertias)",
        without=replace(native, model=_with_inertias(native.model, native.plant, changed)),
    )


def _floating_causes(plant, model: Model) -> list[Cause]:
    def what(j) -> str:
        body = j.child_body().name()
        return f"the free base {body!r}" if body == model.base else f"the free body {body!r}"

    return [
        Cause(
            "drake_floating_joint",
            (j.name(),),
            f"Finalize adds a {j.type_name()} joint named {j.name()!r} for {what(j)} "
            "(q: quaternion w first, then position; v: angular, then linear velocity, in world)",
        )
        for j in _joints(plant)
        if j.num_velocities() == 6 and getattr(j, "is_ephemeral", lambda: False)()
    ]


def _frame_causes(native: DrakeNative) -> list[Cause]:
    """The ball, free and planar joints whose Drake frames are not those of ``to_drake`` (a rotated
    SDFormat ball joint frame, a free body in the world on a fixed base): other coordinates."""
    names = tuple(
        native.model.dof_names[k]
        for k, w in native.layout.wide.items()
        if not np.array_equal(w.C, np.eye(w.kind.nv))
    )
    if not names:
        return []
    message = (
        "Drake's joint frames of these joints are rotated against bridge's (a ball joint's <pose> "
        "rotation: Drake's roll-pitch-yaw angles and angular velocity are in the joint frame's axes, "
        "bridge's in the child link's; a free body's pose and velocity in the world's, bridge's in its "
        "joint frame's, the link's pose in the file): the same motion in other coordinates, compared "
        "through that constant rotation"
    )
    return [Cause("drake_joint_frames", names, message)]


def _damping_cause(native: DrakeNative) -> list[Cause]:
    damped = {
        j.name(): float(j.default_damping_vector()[0])
        for j in _joints(native.plant)
        if j.num_velocities() == 1 and np.any(j.default_damping_vector())
    }
    if not damped:
        return []
    message = (
        f"<dynamics damping> of {len(damped)} joints (largest coefficient {max(damped.values()):g}) "
        "becomes joint damping, which CalcForceElementsContribution, inverse dynamics with "
        "force elements and a simulation apply; rigid-body M, h, g (compared here) leave it out "
        "(with: h with Drake's force elements; without: h compared)"
    )
    with_damping = replace(native, force_elements=True)
    return [Cause("drake_joint_damping", tuple(damped), message, native, with_damping, ("bias_forces",))]


def _reflected(plant) -> dict[str, float]:
    """Each actuated joint's default reflected inertia (rotor inertia x gear ratio^2), non-zero ones."""
    from pydrake.multibody.tree import JointActuatorIndex

    acts = [plant.get_joint_actuator(JointActuatorIndex(i)) for i in range(plant.num_actuators())]
    return {a.joint().name(): a.default_reflected_inertia() for a in acts if a.default_reflected_inertia()}


def _armature_matches(model: Model, reflected: dict[str, float]) -> bool:
    """Whether Drake's reflected inertias are the armature of bridge's joints (an SDF file's
    ``<drake:rotor_inertia>``, which both read), every other joint without armature."""
    armature = {j.name: j.armature for j in model.joints if j.armature}
    return armature == {k: float(v) for k, v in reflected.items()}


def _gravity_cause(native: DrakeNative) -> list[Cause]:
    """Drake's parser ignores an SDF world's ``<gravity>`` (a warning on its log): its plant has
    ``(0, 0, -9.81)`` where bridge's model has the file's gravity."""
    g = native.model.gravity
    parsed = np.array(native.plant.gravity_field().gravity_vector())
    if g is None or np.array_equal(g, parsed):
        return []
    message = (
        f"Drake's parser ignores the world's <gravity> {g.tolist()} (its plant has {parsed.tolist()}); "
        "bridge's model carries the file's (without: Drake's plant given the file's gravity)"
    )
    return [Cause("drake_world_gravity", ("gravity",), message, replace(native, gravity=g))]


def _transmission_cause(native: DrakeNative, kind: str = "urdf") -> list[Cause]:
    from pydrake.multibody.tree import JointActuatorIndex

    plant = native.plant
    if not plant.num_actuators():
        return []
    acts = [plant.get_joint_actuator(JointActuatorIndex(i)) for i in range(plant.num_actuators())]
    joints = tuple(a.joint().name() for a in acts)
    reflected = {
        a.joint().name(): a.default_reflected_inertia() for a in acts if a.default_reflected_inertia()
    }
    source = "<transmission>s"
    if kind != "urdf":
        source = "joints whose <effort> limit is not 0 (SDFormat's default -1 too)"
    message = f"{len(acts)} {source} become JointActuators"
    if not reflected:
        return [Cause("drake_transmissions", joints, message + " (no reflected inertia: no effect on M)")]
    if _armature_matches(native.model, reflected):
        return [
            Cause(
                "drake_transmissions",
                joints,
                message + "; their reflected inertia is the joint armature bridge's model has too "
                "(<drake:rotor_inertia> x <drake:gear_ratio>^2)",
            )
        ]
    message += (
        f"; their reflected inertia (rotor inertia x gear ratio^2, largest "
        f"{max(reflected.values()):g}) adds to M's diagonal (without: zeroed in Drake's context)"
    )
    return [Cause("drake_transmissions", joints, message, replace(native, zero_reflected=True))]


def _layout_causes(plant, model: Model, path: str) -> list[Cause]:
    causes = []
    if plant.num_constraints():
        causes.append(
            Cause(
                "drake_mimic_couplers",
                tuple(_mimic_tags(path)),
                f"{plant.num_constraints()} <mimic> relations become coupler constraints (a solver "
                "enforces them; the joints stay independent DOFs in M, h, g, as in bridge's default "
                "mimic='independent')",
            )
        )
    message = (
        "Drake's velocity order is its forest's (depth first from the base), not the URDF document "
        "order; bridge maps the joints by name"
    )
    return causes + dof_order_cause("drake_dof_order", model, _dof_order(plant, model), message)


def _dof_order(plant, model: Model) -> tuple[str, ...]:
    """Drake's joints in its velocity order, by bridge's DOF names (a universal joint ``J`` as ``J``,
    ``J__axis2``; floating joints that are not DOFs of the model, e.g. its base's, left out)."""
    from bridge.model.sdf import AXIS2_SUFFIX

    joints = sorted(_joints(plant), key=lambda j: j.velocity_start())
    dofs = set(model.dof_names)
    out: list[str] = []
    for j in joints:
        if j.num_velocities() == 2 and j.name() + AXIS2_SUFFIX in dofs:  # SDFormat universal joint
            out += [j.name(), j.name() + AXIS2_SUFFIX]
        elif j.num_velocities() and (j.num_velocities() == 1 or j.name() in dofs):
            out.append(j.name())
    return tuple(out)


@dataclass(frozen=True)
class DrakeLoader:
    """Drake's ``Parser`` compared with bridge's model of the file (a URDF, or with ``kind="sdf"``
    an SDFormat file: :meth:`for_kind`)."""

    kind: str = "urdf"
    prefix = "drake_"
    against = None
    joins = "default"
    unexplained = "Drake's parse and bridge's model disagree beyond what bridge can explain"

    @property
    def label(self) -> str:
        return "drake SDFormat parser" if self.kind == "sdf" else "drake URDF parser"

    def for_kind(self, kind: str) -> DrakeLoader:
        """The loader of a file of ``kind`` (Drake's Parser reads URDF and SDFormat)."""
        return self if kind == self.kind else DrakeLoader(kind)

    def load(self, source: Source, reference: Loaded | None = None) -> Loaded:
        try:
            with quiet_drake():
                plant = load_drake_urdf(source.path)
        except RuntimeError as exc:
            why = f"Drake's parser refuses the file: {str(exc).splitlines()[0]}"
            return Loaded(None, [Cause("drake_refuses", (), why)])
        if source.kind == "sdf":  # bridge's model under the SDF names Drake knows (bridge:name)
            model, causes = sdf_world(plant, sdf_named(source.model, source.path))
        else:
            model, causes = _world(plant, source.model, source.path)
        native = DrakeNative(plant, model)
        changed = _changed_inertias(plant, model)
        if changed:
            causes.append(_inertia_cause(native, changed))
        causes += _floating_causes(plant, model) + _frame_causes(native) + _damping_cause(native)
        causes += _transmission_cause(native, source.kind)
        causes += _layout_causes(plant, model, source.path)
        gravity = _gravity_cause(native)
        causes += gravity
        residual = None  # with every cause that changes M, h, g undone
        if changed or plant.num_actuators() or gravity:
            undone = _with_inertias(model, plant, changed) if changed else model
            zero = not _armature_matches(model, _reflected(plant))
            residual = DrakeNative(plant, undone, zero_reflected=zero, gravity=model.gravity)
        return Loaded(native, causes, residual, bodies=len(_body_names(plant)))


def sdf_world(plant, model: Model) -> tuple[Model, list[Cause]]:
    """bridge's model of an SDFormat file next to Drake's bodies: bridge's ``world`` link (a model
    attached to the world by a movable joint) is Drake's world body, and a universal joint's
    massless link has no Drake body (Drake's ``UniversalJoint`` has two DOFs)."""
    from bridge.model.sdf import AXIS2_SUFFIX

    joints = {j.name: j for j in model.joints}
    middles = {
        j.parent: name[: -len(AXIS2_SUFFIX)]
        for name, j in joints.items()
        if name.endswith(AXIS2_SUFFIX) and name[: -len(AXIS2_SUFFIX)] in joints
    }
    links = set(model.link_names) - set(middles) - ({"world"} if model.base == "world" else set())
    bodies = _body_names(plant)
    causes = []
    if bodies != links:
        differ = tuple(sorted(bodies ^ links))
        causes.append(Cause("drake_bodies", differ, "Drake's bodies are not the SDF links"))
    if middles:
        causes.append(
            Cause(
                "drake_universal_joints",
                tuple(sorted(middles.values())),
                "Drake's UniversalJoint (two DOFs, axis then axis2) is bridge's revolute joint J, then "
                f"J{AXIS2_SUFFIX}, through a massless link (the same motion, matched by name)",
            )
        )
    return model, causes + _moved_frames(plant, model)


def _moved_frames(plant, model: Model) -> list[Cause]:
    """Extra frames Drake puts elsewhere than bridge (another body, or a pose off by > 1e-12)."""
    moved = []
    for frame in model.frames:
        if not plant.HasFrameNamed(frame.name):
            continue
        drake = plant.GetFrameByName(frame.name)
        X = drake.GetFixedPoseInBodyFrame().GetAsMatrix4()
        if drake.body().name() != frame.link or np.abs(X - frame.link_H_frame.matrix).max() > 1e-12:
            moved.append(frame.name)
    if not moved:
        return []
    message = (
        "Drake's parser puts these <frame>s elsewhere on their link than SDFormat says (measured with "
        "Drake 1.51 for a frame attached_to a joint: it takes the frame's pose relative to the joint "
        "frame as its pose in the child link); bridge follows the specification. Frames leave M, h, g "
        "unchanged"
    )
    return [Cause("drake_frames_moved", tuple(moved), message)]


NATIVE = DrakeLoader()
