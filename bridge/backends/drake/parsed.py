"""Drake's q and v of a plant its own ``Parser`` made from a file, at states of bridge's model of it.

A parsed plant lays its coordinates out its own way: Drake's forest order (several trees: bodies left
floating get their joints at ``Finalize``, after the others), a floating base wherever its tree is,
and joint frames where the file puts them. :class:`ParsedLayout` matches bridge's model to it by
name (the joints, :func:`dof_slot`; the base body) and gives, for one neutral state:

* ``q``: the base pose (``SetFreeBodyPose``), each one-coordinate joint's position, and each ball,
  free or planar joint's coordinates of ``X_FM`` between *Drake's* frames F and M: the neutral
  joint's motion ``P_H_F^-1 parent_H_child(q) C_H_M``. A file's ball joint frame rotated against
  its child link (an SDFormat ``<pose>`` with a rotation) gives Drake roll-pitch-yaw angles in that
  frame; a link SDFormat leaves free is floating in Drake's world, where bridge's model has a free
  joint from the fixed base (the base's pose, Drake's weld, is then part of F);
* ``v``: :data:`~bridge.backends.drake.state.DRAKE`'s velocity of the state (the change of variables
  to :attr:`ParsedLayout.convention`), then a constant map ``C`` per joint from the frames bridge's
  ``to_drake`` would use to Drake's (``w_d = R_A^T w``, ``v_d = R_A^T v`` with ``R_A`` the rotation of
  Drake's F in the neutral one; the identity where the frames agree), scattered into Drake's order
  (:attr:`ParsedLayout.index`).

So Drake's ``M_D``, ``h_D``, ``g_D`` in the convention's coordinates are ``C^T M_D[index, index] C``,
``C^T h_D[index]``, ``C^T g_D[index]``, and the change of variables takes them to the state's.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bridge.backends.drake.model import joint_frames
from bridge.backends.drake.state import DRAKE
from bridge.conventions.change_of_variables import NEUTRAL, Convention, change_of_variables
from bridge.conventions.state import State
from bridge.errors import BackendError
from bridge.model.joints import JointKind
from bridge.model.model import Model
from bridge.spatial import Transform
from bridge.spatial.so3 import matrix_to_rpy

__all__ = ["ParsedLayout", "dof_slot", "native_state"]


def dof_slot(plant, name: str) -> tuple[object, int]:
    """(Drake joint, offset in its coordinates) of bridge's DOF ``name``: the joint of that name, or
    for the second DOF of an SDFormat universal joint ``J`` (``J__axis2``, :mod:`bridge.model.sdf`)
    Drake's two-DOF ``UniversalJoint`` ``J`` at offset 1."""
    from bridge.model.sdf import AXIS2_SUFFIX

    if not plant.HasJointNamed(name) and name.endswith(AXIS2_SUFFIX):
        joint = plant.GetJointByName(name[: -len(AXIS2_SUFFIX)])
        if joint.num_velocities() == 2:
            return joint, 1
    return plant.GetJointByName(name), 0


def _pose(frame) -> Transform:
    return Transform(np.array(frame.GetFixedPoseInBodyFrame().GetAsMatrix4()), check=False)


@dataclass(frozen=True)
class _Wide:
    """A ball, free or planar joint ``k`` (model order): Drake's joint, its frames in the neutral
    parent and child (``P_H_F``, ``C_H_M``) and the velocity map ``C`` (nv, nv) from the neutral
    frames' velocity to Drake's."""

    k: int
    kind: JointKind
    joint: object
    P_H_F: Transform
    C_H_M: Transform
    C: np.ndarray


def _wide(plant, model: Model, k: int, dj, base_pose: np.ndarray | None) -> _Wide:
    """The :class:`_Wide` of DOF joint ``k``, whose Drake joint is ``dj``; BackendError when Drake's
    joint is not the neutral one up to constant frames (another body, a child frame off the child
    origin for a free or planar joint, a planar joint in another plane)."""
    joint = model.joint(model.dof_names[k])
    kind = joint.kind
    where = f"Drake's joint {dj.name()!r} ({dj.type_name()}) and bridge's {kind.value} joint"
    expected = {JointKind.BALL: "ball_rpy", JointKind.PLANAR: "planar"}.get(kind)
    if (expected and dj.type_name() != expected) or (kind is JointKind.FREE and dj.num_velocities() != 6):
        raise BackendError(f"{where} are not the same kind of joint")
    if dj.child_body().name() != joint.child:
        raise BackendError(f"{where} move different bodies ({dj.child_body().name()!r}, {joint.child!r})")
    P_H_F = _pose(dj.frame_on_parent())
    if dj.parent_body().name() != joint.parent:
        world = plant.world_body().index()
        if dj.parent_body().index() != world or joint.parent != model.base or model.floating:
            raise BackendError(f"{where} hang from different bodies")
        # a body free in Drake's world, free on bridge's fixed base: F seen from the base
        base_pose = np.eye(4) if base_pose is None else base_pose
        P_H_F = Transform(np.linalg.inv(base_pose), check=False) @ P_H_F
    C_H_M = _pose(dj.frame_on_child())
    P_H_Fn, C_H_Mn = joint_frames(joint)
    A, B = P_H_Fn.inverse() @ P_H_F, C_H_Mn.inverse() @ C_H_M
    R = A.rotation
    if np.abs(R - np.eye(3)).max() <= 1e-12:  # the same axes (to rounding): no map
        R = np.eye(3)
    if kind is not JointKind.BALL and np.abs(B.translation).max() > 1e-12:
        raise BackendError(f"{where}: Drake's child frame is off the child's origin")
    if kind is JointKind.PLANAR and np.abs(R[:, 2] - [0.0, 0.0, 1.0]).max() > 1e-12:
        raise BackendError(f"{where} move in different planes")
    if kind is JointKind.BALL:
        C = R.T
    elif kind is JointKind.FREE:
        C = np.kron(np.eye(2), R.T)
    else:
        C = np.eye(3)
        C[:2, :2] = R[:2, :2].T
    return _Wide(k, kind, dj, P_H_F, C_H_M, C)


def _base_joint(plant, model: Model) -> _Wide:
    """The floating joint of a floating ``model``'s base in ``plant`` (from Drake's world: an
    explicit ``QuaternionFloatingJoint`` or ``RpyFloatingJoint``, or the one ``Finalize`` adds) as a
    free joint from the world at the identity; BackendError without one."""
    from pydrake.multibody.tree import JointIndex

    world = plant.world_body().index()
    for i in range(plant.num_joints()):
        dj = plant.get_joint(JointIndex(i))
        if (
            dj.num_velocities() == 6
            and dj.child_body().name() == model.base
            and dj.parent_body().index() == world
        ):
            P_H_F, C_H_M = _pose(dj.frame_on_parent()), _pose(dj.frame_on_child())
            if np.abs(C_H_M.translation).max() > 1e-12:
                raise BackendError(
                    f"Drake's floating joint {dj.name()!r}: its child frame is off the base origin"
                )
            R = P_H_F.rotation
            R = np.eye(3) if np.abs(R - np.eye(3)).max() <= 1e-12 else R
            return _Wide(-1, JointKind.FREE, dj, P_H_F, C_H_M, np.kron(np.eye(2), R.T))
    raise BackendError(f"Drake's plant has no floating joint from the world to the base {model.base!r}")


def _free_q(joint, X: np.ndarray) -> np.ndarray:
    """A floating joint's q of ``X_FM``: roll-pitch-yaw and position (``RpyFloatingJoint``), else
    quaternion w first and position."""
    if joint.type_name() == "rpy_floating":
        return np.concatenate([matrix_to_rpy(X[:3, :3]), X[:3, 3]])
    return np.concatenate([Transform(X, check=False).as_quaternion_wxyz(), X[:3, 3]])


class ParsedLayout:
    """Drake's ``(q, v)`` of a parsed ``plant`` for states of bridge's ``model`` (module docstring).

    Attributes: ``convention`` (Drake's convention, its joint order the plant's), ``index`` (nv,):
    where each entry of the convention's velocity is in the plant's v, ``C`` (nv, nv): the constant
    map from the convention's velocity to the plant's (None: the identity), ``base_pose``: a fixed
    base's pose where Drake welds it (None: floating).
    """

    def __init__(self, plant, model: Model, base_pose: np.ndarray | None = None) -> None:
        self.plant, self.model, self.base_pose = plant, model, base_pose
        slots = [dof_slot(plant, d) for d in model.dof_names]
        starts = [j.velocity_start() + off for j, off in slots]
        perm = np.argsort(starts, kind="stable")
        self.convention = Convention(
            "drake-parser", DRAKE.velocity, joint_order=lambda _m: perm, configuration=DRAKE.configuration
        )
        self.slots = slots
        coords = model.coordinates
        self.wide = {k: _wide(plant, model, k, slots[k][0], base_pose) for k in coords.wide}
        index = []
        self.base = None
        if model.floating:
            self.base = _base_joint(plant, model)
            start = self.base.joint.velocity_start()
            index += range(start, start + 6)
        for k in perm.tolist():
            j, off = slots[k]
            index += range(j.velocity_start() + off, j.velocity_start() + off + coords.kinds[k].nv)
        self.index = np.array(index, dtype=np.intp)
        if sorted(index) != list(range(plant.num_velocities())):
            raise BackendError(
                f"Drake's plant has {plant.num_velocities()} velocities, bridge's model {model.name!r} "
                f"{len(index)} in other places: they are not the same joints"
            )
        self.C = None
        maps = [*self.wide.values(), *([self.base] if self.base is not None else [])]
        if any(not np.array_equal(w.C, np.eye(w.kind.nv)) for w in maps):
            C = np.eye(len(index))
            if self.base is not None:
                C[:6, :6] = self.base.C
            at = 6 if model.floating else 0
            for k in perm.tolist():
                nv = coords.kinds[k].nv
                if k in self.wide:
                    C[at : at + nv, at : at + nv] = self.wide[k].C
                at += nv
            self.C = C

    def state(self, state: State) -> tuple[np.ndarray, np.ndarray]:
        """Drake's ``(q, v)`` for one neutral state of the model (a fixed base where Drake welds it:
        the state's pose is not used)."""
        plant, model = self.plant, self.model
        q = plant.GetPositions(plant.CreateDefaultContext()).copy()
        if self.base is not None:
            b = self.base
            X = (b.P_H_F.inverse() @ state.world_H_base @ b.C_H_M).matrix
            q[b.joint.position_start() : b.joint.position_start() + b.joint.num_positions()] = _free_q(
                b.joint, X
            )
        coords = model.coordinates
        for k, (j, off) in enumerate(self.slots):
            sk = np.asarray(state.s)[coords.q_slice(k)]
            if k in self.wide:
                q[j.position_start() : j.position_start() + j.num_positions()] = self._q(k, sk)
            else:
                q[j.position_start() + off] = sk[0]
        cov = change_of_variables(model, state, NEUTRAL[state.representation], self.convention)
        v_conv = cov.velocity(state.nu if model.floating else state.s_dot)
        if self.C is not None:
            v_conv = self.C @ v_conv
        v = np.zeros(plant.num_velocities())
        v[self.index] = v_conv
        return q, v

    def _q(self, k: int, s: np.ndarray) -> np.ndarray:
        """Drake's coordinates of wide joint ``k`` at neutral positions ``s``: ``X_FM`` between
        Drake's frames as roll-pitch-yaw (ball), quaternion w first and position (free; roll-pitch-yaw
        and position for an ``RpyFloatingJoint``, whose v is a ``QuaternionFloatingJoint``'s) or
        (x, y, theta) (planar)."""
        w = self.wide[k]
        joint = self.model.joint(self.model.dof_names[k])
        X = (w.P_H_F.inverse() @ joint.transform(s) @ w.C_H_M).matrix
        if w.kind is JointKind.BALL:
            return matrix_to_rpy(X[:3, :3])
        if w.kind is JointKind.FREE:
            return _free_q(w.joint, X)
        return np.array([X[0, 3], X[1, 3], np.arctan2(X[1, 0], X[0, 0])])

    def back(self, M: np.ndarray, *forces: np.ndarray) -> tuple[np.ndarray, ...]:
        """Drake's mass matrix and generalized forces (plant order) in the convention's coordinates."""
        ix = self.index
        M = M[np.ix_(ix, ix)]
        forces = tuple(f[ix] for f in forces)
        if self.C is not None:
            M = self.C.T @ M @ self.C
            forces = tuple(self.C.T @ f for f in forces)
        return (M, *forces)


def native_state(plant, model: Model, state: State) -> tuple[np.ndarray, np.ndarray]:
    """``(q, v)`` of a Drake plant (any layout, e.g. the Parser's) for one neutral state of
    ``model``, matching joints and the base body by name (a welded base ignores the base pose)."""
    return ParsedLayout(plant, model, _welded_pose(plant, model)).state(state)


def _welded_pose(plant, model: Model) -> np.ndarray | None:
    if model.floating:
        return None
    context = plant.CreateDefaultContext()
    base = model.base if plant.HasFrameNamed(model.base) else None
    if base is None:
        return np.eye(4)
    return plant.CalcRelativeTransform(
        context, plant.world_frame(), plant.GetFrameByName(base)
    ).GetAsMatrix4()
