"""Do Pinocchio's and iDynTree's *own* URDF loaders give the same dynamics on a file? And if not, why?

:func:`compare_native` loads the file with each library's loader (Pinocchio ``buildModelFromUrdf``
with a free flyer, iDynTree ``ModelLoader``), gives both the same physical states (joints mapped by
name, the base pose and velocity converted between the libraries' conventions by bridge), and
compares the mass matrix, bias forces and gravity forces in every representation. The report
carries a :class:`Finding` per cause bridge recognises in the file, with the link or joint it
concerns and, for causes that change the dynamics, the error with and without that cause (the
cause removed from Pinocchio's model):

* ``massless_inertia_dropped``: a massless link with a rotational inertia hanging on a fixed joint;
  iDynTree's loader turns it into a frame and drops its inertia, Pinocchio keeps it (merged into the
  parent body). Effect measured by removing it from Pinocchio's model.
* ``root_link_is_frame``: iDynTree made the (massless) root link a frame of its child; the floating
  base is then that child link for iDynTree, and bridge moves states and results between the two.
* ``mimic_joints``: both loaders ignore ``<mimic>`` relations (independent DOFs).
* ``fixed_joints_merged``: Pinocchio merges links joined by fixed joints into one body; no effect
  on the dynamics.
* ``dof_order``: the loaders number the DOFs differently; bridge maps them by joint name.
* ``nonphysical_inertia``: inertias no rigid body can have; both loaders take them as they are.
* ``unexplained``: what remains when every recognised cause is removed (should not happen).

When Drake is installed, its own ``Parser`` joins (engine "drake URDF parser", compared with
bridge's model of the file; :mod:`bridge.validation.drake_native`), with findings prefixed ``drake_``:
``drake_world_welded`` (a link named ``world`` is Drake's world: the robot is welded there),
``drake_floating_joint``, ``drake_joint_damping`` (kept as joint damping: the effect on h if Drake's
force elements are counted), ``drake_transmissions`` (JointActuators; reflected inertia adds to M),
``drake_mimic_couplers`` (coupler constraints, independent DOFs in M), ``drake_inertia_replaced``
(non-physical inertias replaced by isotropic ones), ``drake_dof_order``, ``drake_refuses`` and
``drake_unexplained``.

With ``mujoco=True`` (``cross_validate(path, native=True, engines=[..., "mujoco"])``, ``bridge check
FILE --native --engines pinocchio,idyntree,mujoco``), MuJoCo's own URDF compiler joins: its M, h, g
against bridge's model of the file, and findings prefixed ``mujoco_`` (armature, damping, fused
bodies, inertias from geoms, balanced inertias; see ``bridge.validation.mujoco_native``).

Engine code lives in the backends (``bridge.backends.pinocchio.native``, ``bridge.backends.idyntree.native``),
imported when the comparison runs.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from bridge.conventions.state import Representation, State
from bridge.errors import BridgeWarning, MimicJointWarning, NonPhysicalInertiaWarning
from bridge.model.model import Model

__all__ = ["Finding", "compare_native"]

QUANTITIES = ("mass_matrix", "bias_forces", "gravity_forces")
PAIR = "pinocchio URDF loader vs idyntree URDF loader"


@dataclass(frozen=True)
class Finding:
    """One recognised difference between the loaders.

    ``error_with`` / ``error_without``: the largest relative error of M, h, g over all samples and
    representations as the loaders give them, and with this cause removed (None for causes that do
    not change the dynamics).
    """

    cause: str
    subjects: tuple[str, ...]
    message: str
    error_with: float | None = None
    error_without: float | None = None

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class _Loaded:
    path: str
    pm: object  # Pinocchio's model
    im: object  # iDynTree's model
    urdf: Model  # bridge's own reading of the file (independent mimic joints, no inertia check)
    messages: list[tuple[type, str]] = field(default_factory=list)


def _load(path: str) -> _Loaded:
    from bridge.backends.idyntree import native as idyntree_native
    from bridge.backends.pinocchio import native as pinocchio_native
    from bridge.model.urdf import load_urdf

    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always", BridgeWarning)
        urdf = load_urdf(path)
    messages = [(w.category, str(w.message)) for w in record if issubclass(w.category, BridgeWarning)]
    pm = pinocchio_native.load_urdf_model(path)
    im = idyntree_native.load_urdf_model(path)
    return _Loaded(path, pm, im, urdf, messages)


def _dropped_inertias(loaded: _Loaded) -> list[str]:
    from bridge.backends.idyntree import native as idyntree_native

    return [
        link.name
        for link in loaded.urdf.links
        if link.mass == 0.0
        and np.any(link.inertia.inertia_com != 0.0)
        and not idyntree_native.has_link(loaded.im, link.name)
    ]


def _without(loaded: _Loaded, links: list[str]):
    """Pinocchio's model with the inertias of ``links`` removed (a copy)."""
    import pinocchio as pin

    from bridge.backends.pinocchio import native as pinocchio_native

    pm = pin.Model(loaded.pm)
    for name in links:
        inertia = loaded.urdf.link(name).inertia
        pinocchio_native.drop_link_inertia(pm, name, 0.0, inertia.com, inertia.inertia_com)
    return pm


def _skew(r: np.ndarray) -> np.ndarray:
    return np.array([[0.0, -r[2], r[1]], [r[2], 0.0, -r[0]], [-r[1], r[0], 0.0]])


def _base_change(model: Model, link: str, st: State, rep: Representation):
    """iDynTree's floating base ``link`` rigidly attached to Pinocchio's base B: (world_H_link, link
    velocity, T, T_dot nu) with nu_link = T nu_B (docs/theory.md, "Three ways to write the velocity of the
    base")."""
    B_H_L = model.forward_kinematics(np.zeros(model.n_dofs))[link].matrix  # fixed joints between
    world_H_B = st.world_H_base.matrix
    w = st.base_velocity[3:]
    n = st.s.shape[-1]
    A = np.eye(6)
    Adot_nu = np.zeros(6)
    if rep is Representation.BODY:  # L_X_B, constant
        R, p = B_H_L[:3, :3].T, -B_H_L[:3, :3].T @ B_H_L[:3, 3]
        A[:3, :3], A[:3, 3:], A[3:, 3:] = R, _skew(p) @ R, R
    elif rep is Representation.MIXED:  # [pdot_L; w] = [pdot_B + w x r; w], r = p_L - p_B in world
        r = world_H_B[:3, :3] @ B_H_L[:3, 3]
        A[:3, 3:] = -_skew(r)
        Adot_nu[:3] = np.cross(w, np.cross(w, r))
    T = np.eye(6 + n)
    T[:6, :6] = A
    return world_H_B @ B_H_L, A @ st.base_velocity, T, np.concatenate([Adot_nu, np.zeros(n)])


def _errors(loaded: _Loaded, pms: dict[str, object], reps, samples: int, seed: int) -> dict:
    """Relative errors {variant: {(quantity, rep): array over samples}} of Pinocchio (each variant of
    its model) against iDynTree."""
    from bridge.backends.idyntree import native as idyntree_native
    from bridge.backends.pinocchio.native import dynamics, native_layout, native_state
    from bridge.conventions.convert import convert_bias_forces, convert_mass_matrix
    from bridge.validation.check import random_states

    model = loaded.urdf
    theirs = idyntree_native.dof_names(loaded.im)
    perm = np.array([model.dof_index(d) for d in theirs], dtype=int)
    full = np.concatenate([np.arange(6), 6 + perm])
    layout = native_layout(loaded.pm)
    in_pin = {name: k for k, name in enumerate(layout.dof_names)}
    mine_from_pin = np.concatenate(
        [np.arange(6), 6 + np.array([in_pin[d] for d in model.dof_names], dtype=int)]
    )
    base = model.base
    if not idyntree_native.has_link(loaded.im, base):
        base = idyntree_native.frame_link(loaded.im, base)
    gravity = np.array([0.0, 0.0, -9.81])
    rng = np.random.default_rng(seed)
    states = random_states(model, samples, rng)
    out: dict[str, dict] = {v: {} for v in pms}
    for rep in reps:
        rep = Representation.parse(rep)
        batch = states.to(rep)
        for k in range(samples):
            st = State(batch.world_H_base[k], batch.s[k], batch.base_velocity[k], batch.s_dot[k], rep)
            H, v_base = st.world_H_base.matrix, st.base_velocity
            Ti = T_dot_nu = None
            if base != model.base:
                H, v_base, T, T_dot_nu = _base_change(model, base, st, rep)
                Ti = np.linalg.inv(T)
            ref = idyntree_native.dynamics(
                loaded.im, base, rep, H, st.s[perm], v_base, st.s_dot[perm], gravity
            )
            body = st.to("body")  # Pinocchio's free-flyer velocity is the base velocity in the base frame
            q, v = native_state(
                loaded.pm,
                layout,
                st.world_H_base.matrix,
                body.base_velocity,
                dict(zip(model.dof_names, st.s, strict=True)),
                dict(zip(model.dof_names, st.s_dot, strict=True)),
            )
            rest = State(body.world_H_base, body.s, np.zeros(6), np.zeros(model.n_dofs), "body")
            o = np.ix_(mine_from_pin, mine_from_pin)
            for variant, pm in pms.items():
                d = dynamics(pm, q, v)
                Mb = d["mass_matrix"][o]
                M = convert_mass_matrix(model, body, Mb, "body", rep.value)
                h = convert_bias_forces(model, body, d["bias_forces"][mine_from_pin], Mb, "body", rep.value)
                g = convert_bias_forces(
                    model, rest, d["gravity_forces"][mine_from_pin], Mb, "body", rep.value
                )
                if Ti is not None:
                    M, h, g = Ti.T @ M @ Ti, Ti.T @ (h - M @ Ti @ T_dot_nu), Ti.T @ g
                mine = {
                    "mass_matrix": M[np.ix_(full, full)],
                    "bias_forces": h[full],
                    "gravity_forces": g[full],
                }
                for quantity in QUANTITIES:
                    a, b = mine[quantity], ref[quantity]
                    err = float(np.linalg.norm(a - b) / max(1.0, np.linalg.norm(b)))
                    out[variant].setdefault((quantity, rep.value), []).append(err)
    return out


def _worst(errors: dict) -> float:
    return max((max(v) for v in errors.values()), default=0.0)


def compare_native(
    path: str | Path,
    samples: int = 5,
    seed: int = 0,
    rtol: float = 1e-10,
    representations=("body", "inertial", "mixed"),
    mujoco: bool = False,
):
    """Compare Pinocchio's and iDynTree's own loaders on ``path``: a :class:`bridge.validation.check.Report`
    with engines ``["pinocchio URDF loader", "idyntree URDF loader"]``, results for M, h, g per
    representation, and ``findings`` (see the module docstring). ``report.ok`` is False when the
    loaders disagree, explained or not."""
    from bridge.backends.idyntree import native as idyntree_native
    from bridge.robots import resolve_model_path
    from bridge.validation.check import Report, Result

    start = time.perf_counter()
    path = str(resolve_model_path(path))
    loaded = _load(path)
    reps = [Representation.parse(r).value for r in representations]
    model = loaded.urdf
    theirs = idyntree_native.dof_names(loaded.im)
    if sorted(theirs) != sorted(model.dof_names):
        from bridge.errors import BackendError

        raise BackendError(
            f"{path}: the loaders see different joints (pinocchio {sorted(model.dof_names)}, "
            f"idyntree {sorted(theirs)})"
        )
    dropped = _dropped_inertias(loaded)
    variants = {"as loaded": loaded.pm}
    for name in dropped:
        variants[name] = _without(loaded, [name])
    if len(dropped) > 1:
        variants["all causes"] = _without(loaded, dropped)
    errors = _errors(loaded, variants, reps, samples, seed)
    report = Report(
        Path(path).stem if loaded.urdf.name is None else loaded.urdf.name,
        ["pinocchio URDF loader", "idyntree URDF loader"],
        reps,
        samples,
        seed,
        rtol,
    )
    for (quantity, rep), errs in errors["as loaded"].items():
        worst = int(np.argmax(errs))
        report.results.append(
            Result(
                quantity, rep, PAIR, float("nan"), float(errs[worst]), worst, rtol, bool(max(errs) <= rtol)
            )
        )
    raw = _worst(errors["as loaded"])
    findings: list[Finding] = []
    for name in dropped:
        findings.append(
            Finding(
                "massless_inertia_dropped",
                (name,),
                f"link {name!r} has zero mass but a rotational inertia; iDynTree's loader makes it a frame "
                "and drops the inertia, Pinocchio keeps it (merged into the parent body)",
                raw,
                _worst(errors[name]),
            )
        )
    if not idyntree_native.has_link(loaded.im, model.base):
        findings.append(
            Finding(
                "root_link_is_frame",
                (model.base,),
                f"iDynTree's loader made the massless root link {model.base!r} a frame of "
                f"{idyntree_native.frame_link(loaded.im, model.base)!r}, its floating base there; bridge "
                "moves states and results between the two bases",
            )
        )
    mimic = [
        m.split("joint ", 1)[1].split(" ")[0].strip("'") for c, m in loaded.messages if c is MimicJointWarning
    ]
    if mimic:
        findings.append(
            Finding(
                "mimic_joints",
                tuple(mimic),
                "both loaders ignore the <mimic> relations (independent DOFs; Pinocchio's mimic=True and "
                "bridge's mimic='coupled' keep them)",
            )
        )
    nonphysical = [
        m.split("link ", 1)[1].split(":")[0].strip("'")
        for c, m in loaded.messages
        if c is NonPhysicalInertiaWarning
    ]
    if nonphysical:
        findings.append(
            Finding(
                "nonphysical_inertia",
                tuple(nonphysical),
                "inertias no rigid body can have; both loaders take them as they are (no effect on "
                "agreement)",
            )
        )
    merged = [j.name for j in loaded.urdf.joints if not j.movable]
    if merged:
        findings.append(
            Finding(
                "fixed_joints_merged",
                tuple(merged),
                f"Pinocchio merges the links of {len(merged)} fixed joints into their parent bodies (kept "
                "as frames), "
                f"iDynTree keeps {idyntree_native.n_links(loaded.im)} links; no effect on the dynamics",
            )
        )
    if list(theirs) != list(model.dof_names):
        findings.append(
            Finding(
                "dof_order",
                tuple(d for d, e in zip(model.dof_names, theirs, strict=True) if d != e),
                "the loaders number the DOFs differently; bridge maps them by joint name",
            )
        )
    residual = _worst(errors["all causes" if len(dropped) > 1 else (dropped[0] if dropped else "as loaded")])
    if residual > rtol:
        findings.append(
            Finding(
                "unexplained",
                (),
                "the loaders disagree beyond what bridge can explain",
                raw,
                residual,
            )
        )
    if raw > rtol:
        report.notes.append(
            f"the loaders differ by {raw:.1e}; without the causes found below, by {residual:.1e}"
            + (" (all explained)" if residual <= rtol else "")
        )
    findings.extend(_drake(loaded, report, reps, samples, seed, rtol))
    if mujoco:
        _add_mujoco(report, findings, path, samples, seed, rtol, reps)
    report.findings = findings
    report.seconds = time.perf_counter() - start
    return report


DRAKE_PAIR = "drake URDF parser vs bridge"


def _drake(loaded: _Loaded, report, reps: list[str], samples: int, seed: int, rtol: float) -> list[Finding]:
    """Drake's own URDF parser next to bridge's model of the file, when pydrake is installed: its
    M, h, g rows in ``report`` (engine "drake URDF parser") and its findings (causes ``drake_*``,
    :func:`bridge.validation.drake_native.compare_native`); a note when Drake is not installed."""
    import importlib.util

    if importlib.util.find_spec("pydrake") is None:
        report.notes.append("Drake is not installed: its URDF parser is left out (extra [drake])")
        return []
    import logging

    from bridge.validation.check import Result
    from bridge.validation.drake_native import compare_native as drake_compare

    logger = logging.getLogger("drake")  # one warning per non-physical inertia: a finding instead
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        out = drake_compare(loaded.path, loaded.urdf, samples, seed, rtol, representations=reps)
    finally:
        logger.setLevel(level)
    if out.by_rep:
        report.engines.append("drake URDF parser")
    for (quantity, rep), err in out.by_rep.items():
        report.results.append(Result(quantity, rep, DRAKE_PAIR, float("nan"), err, 0, rtol, err <= rtol))
    return list(out.findings)


def _add_mujoco(
    report, findings: list[Finding], path: str, samples: int, seed: int, rtol: float, reps
) -> None:
    """MuJoCo's own URDF compiler against bridge's model of the file: results and findings added."""
    from bridge.validation.check import Result
    from bridge.validation.mujoco_native import compare_native as compare_mujoco

    pair = "mujoco URDF compiler vs bridge"
    out = compare_mujoco(path, samples=samples, seed=seed, rtol=rtol)
    report.engines.append("mujoco URDF compiler")
    findings.extend(out.findings)
    for quantity, errs in out.errors.items():
        worst = int(np.argmax(errs))
        ok = bool(max(errs) <= rtol)
        for rep in reps:  # a fixed base: the same numbers in every representation
            report.results.append(
                Result(quantity, rep, pair, float("nan"), float(errs[worst]), worst, rtol, ok)
            )
    if not out.errors:
        report.notes.append("MuJoCo's compiler refuses the file (see the mujoco_refuses finding)")
    elif out.worst > rtol:
        report.notes.append(
            f"MuJoCo's URDF compiler differs from bridge by {out.worst:.1e} (see the mujoco_ findings)"
        )
