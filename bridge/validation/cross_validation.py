"""Cross-validation: ask the same questions of several engines and compare the answers.

``cross_validate`` draws seeded random states (base pose, joint positions within limits where
they exist, velocities, accelerations, torques and external wrenches), evaluates every facade
quantity with every engine in every requested representation, and compares every pair of engines.
It also checks identities that hold whatever the engine (:mod:`bridge.validation.identities`).

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
import os
import time
from collections.abc import Callable, Iterable, Sequence

import numpy as np

from bridge._array import as_bool, as_int, as_real
from bridge.backends import registry
from bridge.backends.native import QUANTITIES as NATIVE_QUANTITIES
from bridge.conventions.state import Representation, State
from bridge.dynamics.kindyn import KinDyn
from bridge.errors import BridgeError, InvalidValueError, SingularMassMatrixError
from bridge.model.gravity import model_gravity
from bridge.model.model import Model
from bridge.validation.identities import frame_pairs, identities
from bridge.validation.measure import result
from bridge.validation.report import Finding, Report
from bridge.validation.sampling import default_frames, random_states

__all__ = ["QUANTITIES", "available_engines", "cross_validate"]

#: every quantity compared, in the order of tables
QUANTITIES = (
    *NATIVE_QUANTITIES,
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

Values = dict[tuple[str, str | None], np.ndarray]


def available_engines() -> tuple[str, ...]:
    """The engines ``cross_validate`` and ``bridge check`` compare by default: the registered
    engines whose library is installed (found, not imported: this stays fast), but those compared
    on request only (``Library.on_request``: jaxsim)."""
    return tuple(e for e in registry.available_engines() if not registry.library(e).on_request)


def _forward(kd: KinDyn, inputs: dict, out: Values, singular: dict[str, str]) -> None:
    """Forward dynamics into ``out``, left out when the engine finds the mass matrix singular (its
    message goes to ``singular[engine]``)."""
    try:
        out[("forward_dynamics", None)] = kd.forward_dynamics(inputs["torques"])
        out[("forward_dynamics_wrenches", None)] = kd.forward_dynamics(inputs["torques"], inputs["wrenches"])
    except SingularMassMatrixError as exc:
        singular[kd.engine_name] = str(exc)
        out.pop(("forward_dynamics", None), None)


def _frame_values(kd: KinDyn, frames: Sequence[str], base_acc, s_ddot) -> Values:
    out: Values = {}
    for f, ref in frame_pairs(frames):
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


def _evaluate(kd: KinDyn, frames: Sequence[str], inputs: dict, singular: dict[str, str]) -> Values:
    """Every quantity for the current (batched) state of ``kd``."""
    model = kd.model
    nu_dot = inputs["nu_dot"]
    base_acc = nu_dot[:, :6] if model.floating else None
    s_ddot = nu_dot[:, model.nv - model.n_dofs :]
    out: Values = {
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
        _forward(kd, inputs, out, singular)
    out[("centroidal_momentum_matrix", None)] = kd.centroidal_momentum_matrix()
    out[("total_momentum_jacobian", None)] = kd.total_momentum_jacobian()
    out[("coriolis_matrix", None)] = kd.coriolis_matrix()
    out[("coriolis_forces", None)] = kd.coriolis_forces()
    out.update(_frame_values(kd, frames, base_acc, s_ddot))
    return out


def _floor(engine: str) -> float:
    """The engine's own tolerance floor (its registry record's ``rtol``: a float32 library's)."""
    return registry.library(engine).rtol


def _compare(report: Report, rep: str, values: dict[str, Values], rtol: float) -> None:
    """Every pair of engines' values into ``report`` (to ``rtol``, or the engines' floor)."""
    for a, b in itertools.combinations(values, 2):
        M = values[a][("mass_matrix", None)]
        tol = max(rtol, _floor(a), _floor(b))
        for (quantity, frame), ref in values[a].items():
            other = values[b].get((quantity, frame))
            if other is None:  # forward dynamics undefined for one of them (a finding)
                continue
            M_fd = M if quantity.startswith("forward_dynamics") else None  # backward error, see module doc
            report.results.append(result(quantity, rep, f"{a} vs {b}", other, ref, tol, frame, M_fd))


def _engines(
    model: Model, engines: list[str] | None, dropped: list[str], built: dict[str, KinDyn]
) -> list[str]:
    """The engines to compare: ``engines`` checked, or every installed one that accepts the model
    (an optional one that refuses it is left out with a note in ``dropped``; the KinDyns built to
    find out, in MIXED, go to ``built`` for the comparisons to use)."""
    if engines is None:
        engines = []
        for e in registry.available_engines():
            if registry.library(e).on_request:
                dropped.append(f"engine {e!r} compared on request only (engines=[..., {e!r}])")
                continue
            # an optional library, or any library on joints of several coordinates, may refuse it
            if registry.library(e).requires is not None or not model.single_coordinate:
                try:
                    built[e] = KinDyn(model, engine=e, representation="mixed")
                except BridgeError as exc:
                    dropped.append(f"engine {e!r} left out: {exc}")
                    continue
            engines.append(e)
    engines = [str(e).strip().lower() for e in engines]
    for e in engines:
        if e not in registry.engine_names():
            raise InvalidValueError(f"unknown engine {e!r}; available: {', '.join(registry.engine_names())}")
    return engines


def _inputs(model: Model, samples: int, frames: Sequence[str], rng: np.random.Generator) -> dict:
    return {
        "nu_dot": rng.normal(size=(samples, model.nv)),
        "torques": rng.normal(size=(samples, model.n_dofs)) * 10.0,
        "wrenches": {f: rng.normal(size=(samples, 6)) * 10.0 for f in frames[:3]},
        "gravity": np.broadcast_to(model_gravity(model), (samples, 3)),  # the file's, else the default
    }


def _singular(report: Report, subjects: tuple[str, ...], note: str) -> None:
    report.notes.append(note)
    report.findings.append(Finding("singular mass matrix", subjects, note))


def _run(
    model: Model,
    engines: list[str],
    reps: list[str],
    frames: list[str],
    state: State,
    inputs: dict,
    report: Report,
    options: dict,
) -> None:
    """Evaluate and compare every engine in every representation into ``report``."""
    singular: dict[str, str] = {}
    progress = options["progress"]
    for rep in reps:
        st = state.to(rep)
        values: dict[str, Values] = {}
        for e in engines:
            if progress:
                progress(f"{e} / {rep}")
            kd = options["built"].pop(e, None) if rep == "mixed" else None
            kd = kd or KinDyn(model, engine=e, representation=rep)
            kd.set_robot_state(st, inputs["gravity"])
            values[e] = _evaluate(kd, frames, inputs, singular)
            if options["identities"]:
                floor = _floor(e)
                fd_samples = options["fd_samples"] if floor <= options["fd_rtol"] else 0
                rtol = max(report.rtol, floor)
                report.results.extend(
                    identities(kd, e, rep, st, frames, inputs, fd_samples, rtol, options["fd_rtol"])
                )
        _compare(report, rep, values, report.rtol)
    for e, message in singular.items():
        _singular(report, (e,), f"{e}: forward dynamics not compared: {message}")


#: the most random states ``cross_validate`` draws (each one is computed by every engine in every
#: representation and kept in memory: 20 find what differs; 10,000 take hours on a humanoid)
MAX_SAMPLES = 10_000
_MANY_SAMPLES = (
    " (each sample is computed by every engine in every representation; 20 to 100 find what differs)"
)


def _load(source: str | os.PathLike | bytes) -> Model:
    """The model of a file (URDF or SDFormat by content: the registry's reader of its kind), or of
    URDF text or a robot name (``load_urdf``)."""
    from pathlib import Path

    from bridge._files import file_status
    from bridge.model.formats import input_kind
    from bridge.model.urdf import load_urdf

    if isinstance(source, (str, os.PathLike)) and not str(source).lstrip().startswith("<"):
        path = Path(source)
        if file_status(path, "model file") == "file":
            return registry.importer(input_kind(path))(path)
    return load_urdf(source)


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
        model: the neutral model, or a model file (URDF or SDFormat, by content), URDF text or a
            robot name.
        engines: engine names (see :mod:`bridge.backends.registry`); default: every installed engine
            (:func:`available_engines`) that accepts the model (an optional engine that refuses it,
            e.g. MuJoCo on massless moving links, is left out with a note), except the engines
            compared on request only (``Library.on_request``: jaxsim, which compiles per model;
            a note says so).
        representations: velocity representations to test.
        samples: number of random states (seeded by ``seed``).
        frames: frames for the frame quantities (default: :func:`default_frames`).
        rtol: tolerance of the engine-vs-engine comparisons (norm-wise, relative to max(1, ||ref||)).
        fd_rtol: tolerance of the finite-difference identities.
        fd_samples: how many of the samples the finite-difference identities use.
        identities: also check the engine-independent identities.
        progress: called with a short description before each step (for progress bars).
        native: ``model`` is a URDF file (or a robot name): compare the libraries' own loaders on it
            instead of bridge's engines (:func:`bridge.validation.native.compare_native`; the report's
            ``findings`` explain the differences); a library whose loader joins on request (MuJoCo's
            URDF compiler) joins when ``engines`` names it.

    ``model`` may also be a URDF path or robot name (loaded with :func:`bridge.load_urdf`).
    ``engines`` and ``representations`` may be given as one comma-separated string.

    A singular mass matrix (a DOF that moves no inertia, see :attr:`Model.massless_dofs`, or an
    engine raising :class:`bridge.SingularMassMatrixError`) is reported as a finding (cause
    ``"singular mass matrix"``) and forward dynamics is not compared where it is undefined.
    """
    samples = as_int(samples, "cross_validate: samples", minimum=1, maximum=MAX_SAMPLES, why=_MANY_SAMPLES)
    seed = as_int(seed, "cross_validate: seed", minimum=0)
    rtol = as_real(rtol, "cross_validate: rtol", positive=True)
    options = {
        "fd_rtol": as_real(fd_rtol, "cross_validate: fd_rtol", positive=True),
        "fd_samples": as_int(fd_samples, "cross_validate: fd_samples", minimum=0),
        "identities": as_bool(identities, "cross_validate: identities"),
        "progress": progress,
    }
    native = as_bool(native, "cross_validate: native")
    engines = _names(engines, "engines") if engines is not None else None
    representations = _names(representations, "representations")
    if not isinstance(model, Model | str | os.PathLike | bytes):
        raise InvalidValueError(
            "cross_validate: model must be a bridge Model, a URDF path or text, or a robot name, got "
            f"{type(model).__name__}"
        )
    if native:
        return _native(model, engines, representations, samples, seed, rtol)
    if not isinstance(model, Model):
        model = _load(model)
    dropped: list[str] = []
    options["built"] = {}
    engines = _engines(model, engines, dropped, options["built"])
    reps = [Representation.parse(r).value for r in representations]
    if not engines or not reps:
        raise InvalidValueError("cross_validate: give at least one engine and one representation")
    frames = _names(frames, "frames") if frames is not None else default_frames(model)
    for f in frames:
        model.frame(f)
    start = time.perf_counter()
    rng = np.random.default_rng(seed)
    state = random_states(model, samples, rng)
    inputs = _inputs(model, samples, frames, rng)
    report = Report(model.name, engines, reps, samples, seed, rtol)
    report.notes.extend(dropped)
    for e in engines:
        if _floor(e) > rtol:
            note = f"{e}: compared to rtol {_floor(e):g} (its arithmetic's floor)"
            if _floor(e) > options["fd_rtol"]:
                note += "; its finite-difference identities left out"
            report.notes.append(note)
    if model.massless_dofs:
        note = (
            "forward dynamics not compared: the mass matrix is singular because these joints move no "
            f"inertia: {', '.join(model.massless_dofs)}"
        )
        _singular(report, tuple(model.massless_dofs), note)
    _run(model, engines, reps, frames, state, inputs, report, options)
    report.seconds = time.perf_counter() - start
    return report


def _native(model, engines, representations, samples: int, seed: int, rtol: float) -> Report:
    """``cross_validate(native=True)``: the libraries' own loaders on the file ``model``."""
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
        requested=engines or (),
    )


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
