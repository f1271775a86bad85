"""MuJoCo's own numbers on a compiled MJCF model, and bridge's engines measured against them.

Shared by the MuJoCo tests (hand-written MJCF files, Menagerie robots): the model comes from
:func:`bridge.load_mjcf`, the reference from MuJoCo on the same file with the rigid-body flags
(no contacts, constraints, limits, springs or dampers; armature stays). Importing this module
imports MuJoCo: test modules import it after ``pytest.importorskip("mujoco")``.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import mujoco
import numpy as np

import bridge
from bridge.backends.mujoco import from_mujoco_state, site_frame_name, to_mujoco
from bridge.backends.mujoco.model import rigid_body_flags
from bridge.conventions.convert import velocity_change
from tests.helpers import float64_engines


def package_dir(name: str, *parts: str) -> Path | None:
    """The folder ``parts`` inside the installed package ``name`` (None: not installed)."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)), *parts)


#: MuJoCo files shipped by installed packages: the control suite (dm-control) and MuJoCo's test models
SUITE = package_dir("dm_control", "suite")
MUJOCO_TESTDATA = package_dir("mujoco", "testdata")

#: how many sites get their Jacobian compared (the first and the last ones; every site's pose is)
JACOBIAN_SITES = 2


def _name(mm, objtype, i: int, default: str) -> str:
    """A MuJoCo name, or the name :func:`bridge.from_mujoco` gives an unnamed object."""
    return mujoco.mj_id2name(mm, objtype, i) or default


def random_qpos(mm, rng: np.random.Generator) -> np.ndarray:
    """``qpos0`` moved by uniform [-1, 1] in every coordinate, each ball's and free joint's
    quaternion then a random unit quaternion (uniformly distributed rotations)."""
    qpos = np.array(mm.qpos0) + rng.uniform(-1.0, 1.0, mm.nq)
    JNT = mujoco.mjtJoint
    for j in range(mm.njnt):
        start = {JNT.mjJNT_FREE: 3, JNT.mjJNT_BALL: 0}.get(mujoco.mjtJoint(mm.jnt_type[j]))
        if start is not None:
            at = int(mm.jnt_qposadr[j]) + start
            q = rng.normal(size=4)
            qpos[at : at + 4] = q / np.linalg.norm(q)
    return qpos


def with_constants(mm):
    """``mm`` after ``mj_setConst``: MuJoCo 4 takes the mass matrix of its "simple" DOFs (a slide or
    free body, ``dof_simplenum``) from ``dof_M0``, made when compiling: ``dof_armature`` or
    ``body_mass`` changed afterwards enter M only once the constants are set again."""
    mujoco.mj_setConst(mm, mujoco.MjData(mm))
    return mm


def without_free_armature(mm):
    """``mm`` with no armature on its free joints (bridge's model leaves it out), constants set."""
    for j in range(mm.njnt):
        if mm.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE:
            mm.dof_armature[mm.jnt_dofadr[j] : mm.jnt_dofadr[j] + 6] = 0.0
    return with_constants(mm)


@dataclass
class MujocoReference:
    """MuJoCo's numbers at one random state (MuJoCo's coordinates: ``qvel``, ``qacc``, ``qfrc``).

    ``M`` (nv, nv) from ``mj_fullM`` (armature included), ``h`` (nv,) ``qfrc_bias``, ``tau`` (nv,)
    ``qfrc_inverse`` at ``qacc``, ``qacc_fd`` (nv,) forward dynamics under ``qfrc_applied = qfrc``,
    ``sites`` [(site name, body name, position (3,), rotation (3, 3) in world)] in MuJoCo's order,
    and ``jacobians`` {("body" | "site", name): (6, nv) [linear; angular] of the frame's origin,
    world axes} for the body of the last joint and a few sites.
    """

    qpos: np.ndarray
    qvel: np.ndarray
    qacc: np.ndarray
    qfrc: np.ndarray
    M: np.ndarray
    h: np.ndarray
    tau: np.ndarray
    qacc_fd: np.ndarray
    sites: list[tuple[str, str, np.ndarray, np.ndarray]]
    jacobians: dict[tuple[str, str], np.ndarray]


def mujoco_reference(mm, rng: np.random.Generator, floating: bool = False) -> MujocoReference:
    """MuJoCo's numbers on ``mm`` (its flags set to rigid-body dynamics) at a random state
    (:func:`random_qpos`; ``floating`` is not needed any more: every free joint's quaternion is
    drawn as a unit one)."""
    mm.opt.disableflags = rigid_body_flags(mujoco)
    qpos = random_qpos(mm, rng)
    qvel, qacc, qfrc = rng.normal(size=(3, mm.nv))
    d = mujoco.MjData(mm)
    d.qpos[:], d.qvel[:] = qpos, qvel
    mujoco.mj_forward(mm, d)
    M = np.zeros((mm.nv, mm.nv))
    mujoco.mj_fullM(mm, d, M)
    h = d.qfrc_bias.copy()
    body = [_name(mm, mujoco.mjtObj.mjOBJ_BODY, b, f"body{b}") for b in range(mm.nbody)]
    body[0] = _name(mm, mujoco.mjtObj.mjOBJ_BODY, 0, "world")
    sites = [
        (
            _name(mm, mujoco.mjtObj.mjOBJ_SITE, i, f"site{i}"),
            body[mm.site_bodyid[i]],
            d.site_xpos[i].copy(),
            d.site_xmat[i].reshape(3, 3).copy(),
        )
        for i in range(mm.nsite)
    ]
    jacobians = {}
    jacp, jacr = np.zeros((3, mm.nv)), np.zeros((3, mm.nv))
    if mm.njnt:
        b = int(mm.jnt_bodyid[mm.njnt - 1])
        mujoco.mj_jacBody(mm, d, jacp, jacr, b)
        jacobians["body", body[b]] = np.vstack([jacp, jacr])
    for i in sorted({0, mm.nsite - 1} if mm.nsite else set())[:JACOBIAN_SITES]:
        mujoco.mj_jacSite(mm, d, jacp, jacr, i)
        jacobians["site", sites[i][0]] = np.vstack([jacp, jacr])
    d.qacc[:] = qacc
    mujoco.mj_inverse(mm, d)
    tau = d.qfrc_inverse.copy()
    d.qfrc_applied[:] = qfrc
    mujoco.mj_forward(mm, d)
    return MujocoReference(qpos, qvel, qacc, qfrc, M, h, tau, d.qacc.copy(), sites, jacobians)


def site_frames(model: bridge.Model, sites: list[tuple[str, str]]) -> dict[str, str]:
    """{site: bridge frame} for the (site, body) pairs in MuJoCo's order whose body is in the model
    (a floating model leaves out the static bodies of the world), named as from_mujoco names them."""
    links = set(model.link_names)
    taken = set(links)
    out = {}
    for site, body in sites:
        if body in links:
            out[site] = site_frame_name(site, taken)
            taken.add(out[site])
    return out


def relative_error(actual: object, desired: object) -> float:
    """``|actual - desired| / |desired|`` in the Frobenius norm (the absolute error if desired is 0)."""
    a, d = np.asarray(actual, dtype=float), np.asarray(desired, dtype=float)
    if a.shape != d.shape:
        return float("inf")
    err, size = float(np.linalg.norm(a - d)), float(np.linalg.norm(d))
    return err / size if size > 0.0 else err


def _mujoco_mass(mm, floating: bool) -> float:
    """The mass of the bodies :func:`bridge.from_mujoco` keeps: the free body's subtree for a
    floating base, every body for a fixed one."""
    if floating:
        free = list(np.asarray(mm.jnt_type)).index(mujoco.mjtJoint.mjJNT_FREE)
        return float(mm.body_subtreemass[mm.jnt_bodyid[free]])
    return float(np.sum(mm.body_mass))


#: the engines compared on models with planar, ball or free joints: those whose converters take them
#: (iDynTree, jaxsim and Newton refuse them by name; Drake's converter takes them on branch
#: drake-joints, not merged into this one yet: add "drake" once it is)
WIDE_ENGINES = ("pinocchio", "featherstone", "mujoco", "drake")


def _takes(engine: str, model: bridge.Model) -> bool:
    """Whether ``engine`` takes ``model`` (iDynTree, for one, refuses ball and free joints by name)."""
    if not model.single_coordinate and engine not in WIDE_ENGINES:
        return False
    try:
        bridge.KinDyn(model, engine)
    except bridge.BridgeError:
        return False
    return True


def engines_for(model: bridge.Model) -> list[str]:
    """The installed engines for a comparison with MuJoCo: pinocchio, idyntree, featherstone, drake
    when installed, and bridge's own mujoco engine when MuJoCo accepts bridge's rebuild of the model
    (a body holding several joints comes back as one body; a model MuJoCo refuses, e.g. a massless
    leaf, leaves it out; an engine refusing the model's joints is left out). Float64 engines only
    (1e-10 comparisons): Newton's float32 engine is compared to its floor in
    tests/backends/test_newton.py."""
    engines = [e for e in float64_engines() if e != "mujoco" and _takes(e, model)]
    try:
        to_mujoco(model)
        engines.append("mujoco")
    except bridge.UnsupportedError:
        pass
    return engines


def engine_errors(
    model: bridge.Model,
    mm,
    rng: np.random.Generator,
    engines: Iterable[str],
    representation: str = "mixed",
) -> dict[str, float]:
    """Relative error of every engine's numbers on ``model`` against MuJoCo's on ``mm``:
    ``{"<engine> <quantity>": error}`` for the mass matrix (armature included), bias forces, inverse
    dynamics, forward dynamics, the Jacobians of :class:`MujocoReference` and the site poses
    (positions and rotations; relative to 1 m), plus ``"armature"`` (the model's against
    ``dof_armature``) and ``"mass"`` (total mass against MuJoCo's bodies in the model)."""
    ref = mujoco_reference(mm, rng, model.floating)
    n = model.n_dofs
    frames = site_frames(model, [(site, body) for site, body, _, _ in ref.sites])
    jacobians = {
        (name if kind == "body" else frames[name]): J
        for (kind, name), J in ref.jacobians.items()
        if kind == "body" or name in frames
    }
    armature = np.array(mm.dof_armature)
    for j in range(mm.njnt):  # (bridge's model leaves a free joint's armature out, with a warning)
        if mm.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE:
            armature[mm.jnt_dofadr[j] : mm.jnt_dofadr[j] + 6] = 0.0
    errors = {
        "armature": relative_error(model.armature, armature[mm.nv - n :]),
        "mass": relative_error(model.total_mass, _mujoco_mass(mm, model.floating)),
    }
    st = from_mujoco_state(model, ref.qpos, ref.qvel, representation)
    cov = velocity_change(model, st, representation, "mujoco")
    nu_dot = cov.acceleration_back(ref.qacc)
    base = nu_dot[:6] if model.floating else None
    for engine in engines:
        kd = bridge.KinDyn(model, engine, representation)
        kd.set_robot_state(st, np.array(mm.opt.gravity))
        e = {
            "M": relative_error(kd.mass_matrix(), cov.matrix_back(ref.M)),
            "h": relative_error(kd.bias_forces(), cov.bias_back(ref.h, ref.M)),
            "ID": relative_error(kd.inverse_dynamics(base, nu_dot[model.nv - n :]), cov.force_back(ref.tau)),
            "FD": relative_error(
                kd.forward_dynamics(cov.force_back(ref.qfrc)), cov.acceleration_back(ref.qacc_fd)
            ),
        }
        if representation == "mixed":  # MuJoCo's Jacobians are MIXED ones (frame origin, world axes)
            e["J"] = max(
                (relative_error(kd.frame_jacobian(f), cov.jacobian_back(J)) for f, J in jacobians.items()),
                default=0.0,
            )
        pose = 0.0
        for site, _, p, R in ref.sites:
            if site not in frames:
                continue
            H = kd.frame_transform(frames[site])
            pose = max(pose, float(np.max(np.abs(H[:3, 3] - p)) / max(1.0, float(np.max(np.abs(p))))))
            pose = max(pose, float(np.max(np.abs(H[:3, :3] - R))))
        e["sites"] = pose
        errors.update({f"{engine} {k}": v for k, v in e.items()})
    return errors


def assert_engines_equal_mujoco(
    model: bridge.Model,
    mm,
    rng: np.random.Generator,
    engines: Iterable[str] | None = None,
    rtol: float = 1e-10,
    representation: str = "mixed",
    site_tol: float = 1e-12,
) -> dict[str, float]:
    """Every engine in ``engines`` (default :func:`engines_for`) on ``model`` equals MuJoCo's own
    numbers on ``mm``: ``rtol`` relative for the dynamics and Jacobians, ``site_tol`` for the site
    poses (see :func:`engine_errors`); returns the errors."""
    engines = engines_for(model) if engines is None else list(engines)
    errors = engine_errors(model, mm, rng, engines, representation)
    bad = {
        k: v for k, v in errors.items() if not v <= (site_tol if k.endswith(" sites") else rtol)
    }  # NaN fails
    assert not bad, f"{model.name}: errors above {rtol:.0e} (site poses {site_tol:.0e}): " + ", ".join(
        f"{k} {v:.2e}" for k, v in bad.items()
    )
    return errors
