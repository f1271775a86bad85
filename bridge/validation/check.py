"""Cross-validation: ask the same questions of several engines and compare the answers.

``cross_validate`` draws seeded random states (base pose, joint positions within limits where
they exist, velocities, accelerations, torques and external wrenches), evaluates every facade
quantity with every engine in every requested representation, and compares every pair of engines.
It also checks identities that hold whatever the engine: forward dynamics undoes inverse dynamics,
the momentum matrices times nu are the momenta, ``C nu + g = h``, and, by central finite
differences along a trajectory integrated with the drawn acceleration, accelerations are time
derivatives of velocities, ``M_dot = C + C^T``, the relative Jacobian times ``s_dot`` is the
derivative of the relative transform and the frame Jacobian derivative is the derivative of the
frame Jacobian (whose product with nu is the frame bias acceleration).

An error is measured norm-wise per sample: ``abs = ||a - b||`` and ``rel = abs / max(1, ||b||)``
(b the reference: the first engine of the pair). A comparison passes when ``rel <= rtol`` for every
sample; finite-difference identities use ``fd_rtol`` (1e-6 by default).

Generalized accelerations from forward dynamics are compared by their normwise backward error:
``||M (a - b)|| / max(1, ||M|| ||b||)`` with the reference engine's mass matrix. Two engines that both
solve ``M nu_dot = f`` to machine precision can differ in ``nu_dot`` by ``cond(M)`` times that
precision, which for real humanoids near singular configurations (cond(M) ~ 1e8) is far above
1e-10; the backward error is what "agree to 1e-10" can promise for a linear solve.
"""

from __future__ import annotations

import itertools
import json
import os
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field

import numpy as np

from bridge._array import as_bool, as_int, as_real
from bridge.backends import registry
from bridge.conventions.state import Representation, State
from bridge.dynamics.integration import integrate
from bridge.dynamics.kindyn import KinDyn
from bridge.errors import BridgeError, InvalidValueError, SingularMassMatrixError
from bridge.model.model import Model
from bridge.spatial import DEFAULT_GRAVITY, Transform

__all__ = [
    "QUANTITIES",
    "Report",
    "Result",
    "available_engines",
    "cross_validate",
    "default_frames",
    "random_states",
]

def available_engines() -> tuple[str, ...]:
    """The registered engines whose library is installed (found, not imported: this stays fast)."""
    return registry.available_engines()


QUANTITIES = (
    "mass_matrix",
    "bias_forces",
    "gravity_forces",
    "inverse_dynamics",
    "inverse_dynamics_wrenches",
    "forward_dynamics",
    "forward_dynamics_wrenches",
    "frame_transform",
    "frame_velocity",
    "frame_jacobian",
    "frame_bias_acc",
    "frame_jacobian_derivative",
    "frame_acceleration",
    "com_position",
    "com_velocity",
    "com_jacobian",
    "centroidal_momentum",
    "total_momentum",
    "centroidal_momentum_matrix",
    "total_momentum_jacobian",
    "coriolis_matrix",
    "coriolis_forces",
    "relative_transform",
    "relative_jacobian",
)


@dataclass(frozen=True)
class Result:
    """One comparison: a quantity in a representation between two engines, or an identity."""

    quantity: str
    representation: str
    engines: str  # "pinocchio vs idyntree", or "pinocchio: FD(ID(a)) = a"
    max_abs: float
    max_rel: float
    worst_sample: int
    tolerance: float
    passed: bool
    frame: str | None = None


@dataclass
class Report:
    """Results of :func:`cross_validate`."""

    model: str
    engines: list[str]
    representations: list[str]
    samples: int
    seed: int
    rtol: float
    results: list[Result] = field(default_factory=list)
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)
    #: with ``native=True``: the recognised differences between the libraries' own loaders
    #: (:class:`bridge.validation.native.Finding`)
    findings: list = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(r.passed for r in self.results)

    @property
    def failures(self) -> list[Result]:
        return [r for r in self.results if not r.passed]

    def summary_rows(self) -> list[Result]:
        """One row per (quantity, representation, engines): the worst over frames."""
        worst: dict[tuple[str, str, str], Result] = {}
        for r in self.results:
            key = (r.quantity, r.representation, r.engines)
            prev = worst.get(key)
            if prev is None or (r.max_rel / r.tolerance) > (prev.max_rel / prev.tolerance):
                worst[key] = r
        return list(worst.values())

    def to_dict(self) -> dict:
        return {
            "model": self.model,
            "engines": self.engines,
            "representations": self.representations,
            "samples": self.samples,
            "seed": self.seed,
            "rtol": self.rtol,
            "ok": self.ok,
            "seconds": self.seconds,
            "notes": self.notes,
            "findings": [f.to_dict() for f in self.findings],
            "results": [asdict(r) for r in self.results],
        }

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent)

    def __str__(self) -> str:
        lines = [
            f"cross-validation of {self.model!r}: engines {', '.join(self.engines)}; "
            f"representations {', '.join(self.representations)}; {self.samples} samples, seed {self.seed}, "
            f"rtol {self.rtol:g}",
            f"{'quantity':<28} {'repr':<9} {'engines':<36} {'max abs':>10} {'max rel':>10}  result",
        ]
        for r in self.summary_rows():
            what = r.quantity + (f"[{r.frame}]" if r.frame and not r.passed else "")
            lines.append(
                f"{what:<28} {r.representation:<9} {r.engines:<36} {r.max_abs:>10.2e} {r.max_rel:>10.2e}  "
                + ("ok" if r.passed else f"FAIL (sample {r.worst_sample})")
            )
        lines.extend(f"note: {note}" for note in self.notes)
        for f in self.findings:
            effect = (
                f" (error {f.error_with:.1e} with it, {f.error_without:.1e} without)"
                if f.error_with is not None
                else ""
            )
            lines.append(f"finding {f.cause}: {', '.join(f.subjects)}: {f.message}{effect}")
        n_fail = len(self.failures)
        lines.append(
            f"{'all agree' if self.ok else f'{n_fail} of {len(self.results)} comparisons disagree'} "
            f"({self.seconds:.2f} s)"
        )
        return "\n".join(lines)


# --------------------------------------------------------------------------- inputs
def default_frames(model: Model, limit: int = 6) -> list[str]:
    """A few informative frames: the leaf links (end effectors, feet) and the base."""
    parents = {j.parent for j in model.joints}
    leaves = [link.name for link in model.links if link.name not in parents and link.name != model.base]
    # prefer leaves far from the base (longest chains first)
    depth: dict[str, int] = {model.base: 0}
    for j in model.depth_first_joints:
        depth[j.child] = depth[j.parent] + 1
    leaves.sort(key=lambda name: -depth.get(name, 0))
    chosen = leaves[: max(0, limit - 1)]
    extra = [f.name for f in model.frames][: max(0, limit - 1 - len(chosen))]
    return [model.base, *chosen, *extra]


def random_states(model: Model, n: int, rng: np.random.Generator) -> State:
    """``n`` random states (MIXED): positions within the joint limits intersected with [-pi, pi]
    (rotational) or [-1, 1] m (prismatic); base pose, velocities uniformly/normally random."""
    lo = np.full(model.n_dofs, -np.pi)
    hi = np.full(model.n_dofs, np.pi)
    for k, joint in enumerate(model.movable_joints):
        lim = joint.limits
        span = np.pi if joint.kind.rotational else 1.0
        lower = -np.inf if lim.lower is None else lim.lower
        upper = np.inf if lim.upper is None else lim.upper
        if lower > upper:  # PyBullet's "no limits" (the URDF loader warns)
            lower, upper = -np.inf, np.inf
        lo[k], hi[k] = max(lower, -span), min(upper, span)
        if not hi[k] > lo[k] and np.isfinite(lower) and np.isfinite(upper):
            lo[k], hi[k] = lower, upper  # a narrow range away from zero
    s = rng.uniform(lo, hi, size=(n, model.n_dofs))
    q = rng.normal(size=(n, 4))
    H = Transform.from_quaternion_xyzw(
        q / np.linalg.norm(q, axis=-1, keepdims=True), rng.uniform(-1, 1, (n, 3))
    )
    v = rng.normal(size=(n, 6)) if model.floating else np.zeros((n, 6))
    s_dot = rng.normal(size=(n, model.n_dofs))
    return State(H, s, v, s_dot, Representation.MIXED)


# --------------------------------------------------------------------------- comparisons
def _errors(a: np.ndarray, b: np.ndarray, M: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Per-sample norm-wise absolute and relative (to max(1, ||b||)) errors; sample axis first.

    With ``M`` (accelerations): the backward error ``||M (a - b)|| / max(1, ||M|| ||b||)``.
    """
    n = a.shape[0]
    if M is not None:
        diff = np.linalg.norm(_mv(M, a - b).reshape(n, -1), axis=1)
        scale = np.linalg.norm(M.reshape(n, -1), axis=1) * np.linalg.norm(b.reshape(n, -1), axis=1)
        return diff, diff / np.maximum(1.0, scale)
    diff = np.linalg.norm((a - b).reshape(n, -1), axis=1)
    scale = np.maximum(1.0, np.linalg.norm(b.reshape(n, -1), axis=1))
    return diff, diff / scale


def _mv(M: np.ndarray, v: np.ndarray) -> np.ndarray:
    return np.einsum("...ij,...j->...i", M, v)


def _result(quantity, rep, engines, a, b, tol, frame=None, M=None) -> Result:
    abs_err, rel_err = _errors(np.asarray(a), np.asarray(b), M)
    worst = int(np.argmax(rel_err))
    return Result(
        quantity=quantity,
        representation=rep,
        engines=engines,
        max_abs=float(abs_err.max()),
        max_rel=float(rel_err.max()),
        worst_sample=worst,
        tolerance=tol,
        passed=bool(np.all(rel_err <= tol)),
        frame=frame,
    )


def _evaluate(
    kd: KinDyn, frames: Sequence[str], inputs: dict, singular: dict[str, str] | None = None
) -> dict[tuple[str, str | None], np.ndarray]:
    """Every quantity for the current (batched) state of ``kd``; forward dynamics is left out when
    the engine finds the mass matrix singular (its message goes to ``singular[engine]``)."""
    model = kd.model
    nu_dot = inputs["nu_dot"]
    base_acc = nu_dot[:, :6] if model.floating else None
    s_ddot = nu_dot[:, model.nv - model.n_dofs :]
    out: dict[tuple[str, str | None], np.ndarray] = {
        ("mass_matrix", None): kd.mass_matrix(),
        ("bias_forces", None): kd.bias_forces(),
        ("gravity_forces", None): kd.gravity_forces(),
        ("inverse_dynamics", None): kd.inverse_dynamics(base_acc, s_ddot),
        ("inverse_dynamics_wrenches", None): kd.inverse_dynamics(base_acc, s_ddot, inputs["wrenches"]),
        ("com_position", None): kd.com_position(),
        ("com_velocity", None): kd.com_velocity(),
        ("com_jacobian", None): kd.com_jacobian(),
        ("centroidal_momentum", None): kd.centroidal_momentum(),
        ("total_momentum", None): kd.total_momentum(),
    }
    if not model.massless_dofs:
        try:
            out[("forward_dynamics", None)] = kd.forward_dynamics(inputs["torques"])
            out[("forward_dynamics_wrenches", None)] = kd.forward_dynamics(
                inputs["torques"], inputs["wrenches"]
            )
        except SingularMassMatrixError as exc:
            if singular is not None:
                singular[kd.engine_name] = str(exc)
            out.pop(("forward_dynamics", None), None)
    out[("centroidal_momentum_matrix", None)] = kd.centroidal_momentum_matrix()
    out[("total_momentum_jacobian", None)] = kd.total_momentum_jacobian()
    out[("coriolis_matrix", None)] = kd.coriolis_matrix()
    out[("coriolis_forces", None)] = kd.coriolis_forces()
    for f, ref in _frame_pairs(frames):
        out[("relative_transform", f"{f} w.r.t. {ref}")] = kd.relative_transform(f, ref)
        out[("relative_jacobian", f"{f} w.r.t. {ref}")] = kd.relative_jacobian(f, ref)
    for f in frames:
        out[("frame_transform", f)] = kd.frame_transform(f)
        out[("frame_velocity", f)] = kd.frame_velocity(f)
        out[("frame_jacobian", f)] = kd.frame_jacobian(f)
        out[("frame_bias_acc", f)] = kd.frame_bias_acc(f)
        out[("frame_jacobian_derivative", f)] = kd.frame_jacobian_derivative(f)
        out[("frame_acceleration", f)] = kd.frame_acceleration(f, base_acc, s_ddot)
    return out


def _frame_pairs(frames: Sequence[str]) -> list[tuple[str, str]]:
    """(frame, reference) pairs for the relative quantities: every frame w.r.t. the first leaf."""
    if len(frames) < 2:
        return []
    ref = frames[1]
    return [(f, ref) for f in frames if f != ref]


def _relative_twist(H: np.ndarray, H_dot: np.ndarray, rep: str) -> np.ndarray:
    """The velocity of F relative to R from ``R_H_F`` and its time derivative (..., 4, 4), in F
    (body), R (inertial) or F[R] (mixed), linear first."""
    R, R_dot = H[..., :3, :3], H_dot[..., :3, :3]
    p, p_dot = H[..., :3, 3], H_dot[..., :3, 3]
    if rep == "body":
        W = np.swapaxes(R, -1, -2) @ R_dot
        lin = np.einsum("...ji,...j->...i", R, p_dot)
    else:
        W = R_dot @ np.swapaxes(R, -1, -2)
        lin = p_dot - np.einsum("...ij,...j->...i", W, p) if rep == "inertial" else p_dot
    w = np.stack([W[..., 2, 1], W[..., 0, 2], W[..., 1, 0]], axis=-1)
    return np.concatenate([lin, w], axis=-1)


def _identities(
    kd: KinDyn,
    engine: str,
    rep: str,
    state: State,
    frames: Sequence[str],
    inputs: dict,
    fd_samples: int,
    rtol: float,
    fd_rtol: float,
) -> list[Result]:
    model = kd.model
    nu_dot = inputs["nu_dot"]
    base_acc = nu_dot[:, :6] if model.floating else None
    s_ddot = nu_dot[:, model.nv - model.n_dofs :]
    results = []
    tau = kd.inverse_dynamics(base_acc, s_ddot)
    if not model.massless_dofs:
        try:
            fd = kd.forward_dynamics(tau)
        except SingularMassMatrixError:  # reported by _evaluate
            fd = None
        if fd is not None:
            M = kd.mass_matrix()
            what = f"{engine}: FD(ID(a)) = a"
            results.append(_result("forward_dynamics", rep, what, fd, nu_dot, rtol, M=M))
    if model.floating:  # the base rows of the generalized momentum are the total momentum
        Mnu = np.einsum("...ij,...j->...i", kd.mass_matrix(), kd.nu)[..., :6]
        hB = kd.total_momentum()
        results.append(_result("total_momentum", rep, f"{engine}: momentum = (M nu)[:6]", hB, Mnu, rtol))
    mv = _mv
    nu = kd.nu
    results.append(
        _result(
            "centroidal_momentum_matrix",
            rep,
            f"{engine}: CMM nu = centroidal momentum",
            mv(kd.centroidal_momentum_matrix(), nu),
            kd.centroidal_momentum(),
            rtol,
        )
    )
    results.append(
        _result(
            "total_momentum_jacobian",
            rep,
            f"{engine}: J nu = total momentum",
            mv(kd.total_momentum_jacobian(), nu),
            kd.total_momentum(),
            rtol,
        )
    )
    h, g = kd.bias_forces(), kd.gravity_forces()
    C = kd.coriolis_matrix()
    results.append(_result("coriolis_matrix", rep, f"{engine}: C nu + g = h", mv(C, nu) + g, h, rtol))
    results.append(
        _result("coriolis_forces", rep, f"{engine}: C nu = h - g", kd.coriolis_forces() + g, h, rtol)
    )
    for f in frames:
        results.append(
            _result(
                "frame_jacobian_derivative",
                rep,
                f"{engine}: J_dot nu = frame_bias_acc",
                mv(kd.frame_jacobian_derivative(f), nu),
                kd.frame_bias_acc(f),
                rtol,
                f,
            )
        )
    # finite differences on the first few samples
    k = min(fd_samples, nu_dot.shape[0])
    if k == 0:
        return results
    sub = State(
        state.world_H_base[:k], state.s[:k], state.base_velocity[:k], state.s_dot[:k], state.representation
    )
    ba = nu_dot[:k, :6] if model.floating else np.zeros((k, 6))
    sdd = s_ddot[:k]
    h = 1e-4
    probes: list[tuple[str, str | None, Callable[[KinDyn], np.ndarray]]] = [
        ("frame_acceleration", f, (lambda kk, f=f: kk.frame_velocity(f))) for f in frames
    ]
    moved = [integrate(sub, ba, sdd, dt) for dt in (h, -h)]
    kds = []
    for m in moved:
        kk = KinDyn(model, engine=engine, representation=rep)
        kk.set_robot_state(m, inputs["gravity"][:k])
        kds.append(kk)
    kd_sub = KinDyn(model, engine=engine, representation=rep)
    kd_sub.set_robot_state(sub, inputs["gravity"][:k])
    for quantity, frame, fn in probes:
        fd = (fn(kds[0]) - fn(kds[1])) / (2 * h)
        exact = kd_sub.frame_acceleration(frame, ba if model.floating else None, sdd)
        results.append(_result(quantity, rep, f"{engine}: d/dt frame_velocity", exact, fd, fd_rtol, frame))
    fd = (kds[0].com_position() - kds[1].com_position()) / (2 * h)
    results.append(
        _result("com_velocity", rep, f"{engine}: d/dt com_position", kd_sub.com_velocity(), fd, fd_rtol)
    )
    # skew symmetry: M_dot = C + C^T, M_dot by central differences along the motion
    M_dot = (kds[0].mass_matrix() - kds[1].mass_matrix()) / (2 * h)
    C_sub = kd_sub.coriolis_matrix()
    results.append(
        _result(
            "coriolis_matrix",
            rep,
            f"{engine}: M_dot = C + C^T",
            C_sub + np.swapaxes(C_sub, -1, -2),
            M_dot,
            fd_rtol,
        )
    )
    # the frame Jacobian's derivative along the motion (J depends on the configuration only)
    for f in frames:
        fd = (kds[0].frame_jacobian(f) - kds[1].frame_jacobian(f)) / (2 * h)
        exact = kd_sub.frame_jacobian_derivative(f)
        results.append(
            _result("frame_jacobian_derivative", rep, f"{engine}: d/dt frame_jacobian", exact, fd, fd_rtol, f)
        )
    # relative Jacobian times s_dot: the derivative of the relative transform
    s_dot = sub.s_dot
    for f, ref in _frame_pairs(frames):
        H_dot = (kds[0].relative_transform(f, ref) - kds[1].relative_transform(f, ref)) / (2 * h)
        fd = _relative_twist(kd_sub.relative_transform(f, ref), H_dot, rep)
        exact = mv(kd_sub.relative_jacobian(f, ref), s_dot)
        results.append(
            _result(
                "relative_jacobian",
                rep,
                f"{engine}: d/dt relative_transform",
                exact,
                fd,
                fd_rtol,
                f"{f} w.r.t. {ref}",
            )
        )
    return results


def cross_validate(
    model: Model | str,
    engines: Iterable[str] | None = None,
    representations: Iterable[object] = ("body", "inertial", "mixed"),
    samples: int = 20,
    seed: int = 0,
    frames: Sequence[str] | None = None,
    rtol: float = 1e-10,
    fd_rtol: float = 1e-6,
    fd_samples: int = 3,
    identities: bool = True,
    progress: Callable[[str], None] | None = None,
    native: bool = False,
) -> Report:
    """Compare every facade quantity between every pair of ``engines`` at random states.

    Args:
        model: the neutral model.
        engines: engine names (see :mod:`bridge.backends.registry`); default: every installed engine
            (:func:`available_engines`) that accepts the model (an optional engine that refuses it,
            e.g. MuJoCo on massless moving links, is left out with a note).
        representations: velocity representations to test.
        samples: number of random states (seeded by ``seed``).
        frames: frames for the frame quantities (default: :func:`default_frames`).
        rtol: tolerance of the engine-vs-engine comparisons (norm-wise, relative to max(1, ||ref||)).
        fd_rtol: tolerance of the finite-difference identities.
        fd_samples: how many of the samples the finite-difference identities use.
        identities: also check the engine-independent identities.
        progress: called with a short description before each step (for progress bars).
        native: ``model`` is a URDF file (or a robot name): compare Pinocchio's and iDynTree's own
            URDF loaders on it instead of bridge's engines (:func:`bridge.validation.native.compare_native`;
            the report's ``findings`` explain the differences); ``"mujoco"`` in ``engines`` adds
            MuJoCo's own URDF compiler.

    ``model`` may also be a URDF path or robot name (loaded with :func:`bridge.load_urdf`).
    ``engines`` and ``representations`` may be given as one comma-separated string.

    A singular mass matrix (a DOF that moves no inertia, see :attr:`Model.massless_dofs`, or an
    engine raising :class:`bridge.SingularMassMatrixError`) is reported as a finding (cause
    ``"singular mass matrix"``) and forward dynamics is not compared where it is undefined.
    """
    samples = as_int(samples, "cross_validate: samples", minimum=1)
    seed = as_int(seed, "cross_validate: seed", minimum=0)
    rtol = as_real(rtol, "cross_validate: rtol", positive=True)
    fd_rtol = as_real(fd_rtol, "cross_validate: fd_rtol", positive=True)
    fd_samples = as_int(fd_samples, "cross_validate: fd_samples", minimum=0)
    identities = as_bool(identities, "cross_validate: identities")
    native = as_bool(native, "cross_validate: native")
    engines = _names(engines, "engines") if engines is not None else None
    representations = _names(representations, "representations")
    if not isinstance(model, Model | str | os.PathLike | bytes):
        raise InvalidValueError(
            "cross_validate: model must be a bridge Model, a URDF path or text, or a robot name, got "
            f"{type(model).__name__}"
        )
    if native:
        from bridge.validation.native import compare_native

        if isinstance(model, Model):
            raise InvalidValueError(
                "cross_validate(native=True) needs the URDF file (or robot name), not a Model"
            )
        return compare_native(
            model,
            samples=min(samples, 5),
            seed=seed,
            rtol=rtol,
            representations=representations,
            mujoco=engines is not None and "mujoco" in engines,
        )
    if not isinstance(model, Model):
        from bridge.model.urdf import load_urdf

        model = load_urdf(model)
    dropped: list[str] = []
    if engines is None:  # every installed engine that accepts the model
        engines = []
        for e in available_engines():
            if registry.library(e).requires is not None:
                try:
                    KinDyn(model, engine=e)
                except BridgeError as exc:
                    dropped.append(f"engine {e!r} left out: {exc}")
                    continue
            engines.append(e)
    engines = [str(e).strip().lower() for e in engines]
    for e in engines:
        if e not in registry.engine_names():
            raise InvalidValueError(f"unknown engine {e!r}; available: {', '.join(registry.engine_names())}")
    reps = [Representation.parse(r).value for r in representations]
    if not engines or not reps:
        raise InvalidValueError("cross_validate: give at least one engine and one representation")
    frames = _names(frames, "frames") if frames is not None else default_frames(model)
    for f in frames:
        model.frame(f)
    start = time.perf_counter()
    rng = np.random.default_rng(seed)
    state = random_states(model, samples, rng)
    inputs = {
        "nu_dot": rng.normal(size=(samples, model.nv)),
        "torques": rng.normal(size=(samples, model.n_dofs)) * 10.0,
        "wrenches": {f: rng.normal(size=(samples, 6)) * 10.0 for f in frames[:3]},
        "gravity": np.broadcast_to(np.array(DEFAULT_GRAVITY), (samples, 3)),
    }
    report = Report(model.name, engines, reps, samples, seed, rtol)
    report.notes.extend(dropped)
    if model.massless_dofs:
        message = (
            "forward dynamics not compared: the mass matrix is singular because these joints move no "
            f"inertia: {', '.join(model.massless_dofs)}"
        )
        report.notes.append(message)
        report.findings.append(_finding(tuple(model.massless_dofs), message))
    singular: dict[str, str] = {}
    for rep in reps:
        st = state.to(rep)
        values: dict[str, dict] = {}
        for e in engines:
            if progress:
                progress(f"{e} / {rep}")
            kd = KinDyn(model, engine=e, representation=rep)
            kd.set_robot_state(st, inputs["gravity"])
            values[e] = _evaluate(kd, frames, inputs, singular)
            if identities:
                report.results.extend(_identities(kd, e, rep, st, frames, inputs, fd_samples, rtol, fd_rtol))
        for a, b in itertools.combinations(engines, 2):
            M = values[a][("mass_matrix", None)]
            for (quantity, frame), ref in values[a].items():
                other = values[b].get((quantity, frame))
                if other is None:  # forward dynamics undefined for one of them (a finding)
                    continue
                M_fd = (
                    M if quantity.startswith("forward_dynamics") else None
                )  # backward error, see module doc
                report.results.append(_result(quantity, rep, f"{a} vs {b}", other, ref, rtol, frame, M_fd))
    for e, message in singular.items():
        note = f"{e}: forward dynamics not compared: {message}"
        report.notes.append(note)
        report.findings.append(_finding((e,), note))
    report.seconds = time.perf_counter() - start
    return report


def _finding(subjects: tuple[str, ...], message: str):
    from bridge.validation.native import Finding

    return Finding("singular mass matrix", subjects, message)


def _names(value: object, what: str) -> list[str]:
    """A list of names from a sequence of strings (or enums) or one comma-separated string."""
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    try:
        items = list(value)  # type: ignore[call-overload]
    except TypeError:
        raise InvalidValueError(f"cross_validate: {what} must be a list of names, got {value!r}") from None
    for item in items:
        if not isinstance(item, str | Representation):
            raise InvalidValueError(f"cross_validate: {what} must be names (str), got {item!r}")
    return items
