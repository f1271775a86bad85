"""Do the libraries' *own* file loaders give the dynamics bridge gives? And if not, why?

:func:`compare_native` reads the registry (:data:`bridge.backends.registry.LIBRARIES`): every
installed library with a native-loader comparison (``record.native``, a
:class:`bridge.backends.native.NativeLoader` in its backend package) loads the file with its own
loader; its M, h and g at bridge's random states (in every representation, bridge's base and DOF
order) are compared with its reference: bridge's model of the file, or another library's own
loader (Pinocchio's loader is compared with iDynTree's). One row per quantity and representation,
``"<loader> vs <reference>"``, and one :class:`~bridge.validation.report.Finding` per cause the
library recognises, with the error as loaded and with that cause removed (:func:`explain`):

* Pinocchio's and iDynTree's URDF loaders: ``massless_inertia_dropped`` (iDynTree makes a massless
  link with a rotational inertia a frame and drops the inertia), ``root_link_is_frame``,
  ``mimic_joints``, ``nonphysical_inertia``, ``fixed_joints_merged``, ``dof_order``;
* Drake's parser (when installed): ``drake_world_welded``, ``drake_floating_joint``,
  ``drake_joint_damping``, ``drake_transmissions``, ``drake_mimic_couplers``,
  ``drake_inertia_replaced``, ``drake_dof_order``, ``drake_refuses``; on an SDFormat file (which
  only Drake's parser reads) also ``drake_universal_joints`` and ``drake_frames_moved``;
* MuJoCo's URDF compiler (on request: ``engines`` names ``mujoco``): ``mujoco_armature``,
  ``mujoco_damping``, ``mujoco_fused_bodies``, ``mujoco_inertia_from_geoms``,
  ``mujoco_balanced_inertia``, ``mujoco_dof_order``, ``mujoco_meshes_removed``,
  ``mujoco_fixed_base``, ``mujoco_refuses``; on an MJCF file (by default: no other loader reads
  MJCF) MuJoCo's compiler against bridge's model of the file (:mod:`bridge.backends.mujoco.native_mjcf`);
* ``<prefix>unexplained``: what remains when every recognised cause is removed (should not happen).

The file's kind comes from its root element (:func:`bridge.backends.registry.file_kind`): a URDF is
read with ``load_urdf``, another kind with the registry's reader of it (``Library.imports``), and
the libraries whose own loader does not read that kind (``Library.loads``) are left out with a note.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from bridge.backends import registry
from bridge.backends.native import (
    QUANTITIES,
    REFUSED,
    Cause,
    Loaded,
    Native,
    NativeLoader,
    Source,
    loader_for,
)
from bridge.conventions.state import Representation, State
from bridge.dynamics.kindyn import KinDyn
from bridge.errors import BridgeWarning
from bridge.model.formats import input_kind
from bridge.robots import resolve_model_path
from bridge.validation.measure import errors
from bridge.validation.report import Finding, Report, Result
from bridge.validation.sampling import random_states

__all__ = ["compare_native", "explain"]

Errors = dict[tuple[str, str], np.ndarray]  # (quantity, representation) -> relative error per sample


def _source(path: str) -> Source:
    """bridge's reading of the file (``load_urdf`` defaults for a URDF, else the registry's reader
    of its kind) and the warnings it gave."""
    kind = input_kind(path)  # (another root element: read as URDF, whose reader says what is wrong)
    read = registry.importer(kind)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always", BridgeWarning)
        model = read(path)
    found = tuple((w.category, str(w.message)) for w in record if issubclass(w.category, BridgeWarning))
    return Source(path, model, found, kind)


def _states(native: Native, samples: int, seed: int, rep: Representation) -> list[State]:
    """bridge's random states of ``native.model`` in ``rep`` (a fixed base where the library puts it)."""
    batch = random_states(native.model, samples, np.random.default_rng(seed)).to(rep)
    out = []
    for k in range(samples):
        H = batch.world_H_base[k] if native.base_pose is None else native.base_pose
        out.append(State(H, batch.s[k], batch.base_velocity[k], batch.s_dot[k], rep, layout=batch.layout))
    return out


def _bridge(native: Native, states: list[State]) -> list[dict[str, np.ndarray]]:
    """bridge's M, h, g (its first installed engine) of ``native.model`` at ``states``."""
    kd = KinDyn(native.model, engine=registry.available_engines()[0], representation=states[0].representation)
    out = []
    for st in states:
        kd.set_robot_state(st)
        out.append(
            {
                "mass_matrix": kd.mass_matrix(),
                "bias_forces": kd.bias_forces(),
                "gravity_forces": kd.gravity_forces(),
            }
        )
    return out


@dataclass
class _Comparison:
    """One loader against its reference (None: bridge's model) at seeded states; errors cached."""

    reference: Native | None
    reps: list[Representation]
    samples: int
    seed: int
    #: id -> (the native, its errors): the native is kept so that its id is not reused by another
    #: (a variant without a cause is a temporary; a freed one's id would return stale errors)
    cache: dict[int, tuple[Native, Errors]] = field(default_factory=dict)

    def errors(self, native: Native) -> Errors:
        """Relative errors of ``native`` against the reference, per quantity and representation."""
        if id(native) not in self.cache:
            self.cache[id(native)] = (native, self._measure(native))
        return self.cache[id(native)][1]

    def _measure(self, native: Native) -> Errors:
        out: Errors = {}
        for i, rep in enumerate(self.reps):
            if i and not native.model.floating and native.model.single_coordinate:
                # a fixed base with one-coordinate joints: the same numbers in every representation
                out.update({(q, rep.value): out[(q, self.reps[0].value)] for q in QUANTITIES})
                continue
            states = _states(native, self.samples, self.seed, rep)
            mine = [native.dynamics(st) for st in states]
            ref = (
                [self.reference.dynamics(st) for st in states] if self.reference else _bridge(native, states)
            )
            for q in QUANTITIES:
                a = np.stack([m[q] for m in mine])
                b = np.stack([r[q] for r in ref])
                out[(q, rep.value)] = errors(a, b)[1]
        return out

    def worst(self, native: Native | object, quantities: Iterable[str] = QUANTITIES) -> float | None:
        """The largest error of ``native`` over ``quantities`` (None for a refused variant)."""
        if native is REFUSED:
            return None
        errs = self.errors(native)
        return max((float(v.max()) for (q, _), v in errs.items() if q in quantities), default=0.0)


def explain(cause: Cause, comparison: _Comparison, loaded: Loaded) -> Finding:
    """The finding of ``cause``: with its errors as loaded (or as ``cause.with_``) and with the
    cause removed (``cause.without``, or the loader's numbers without the inertias it ``drops``)."""
    if not cause.measured:
        return Finding(cause.cause, cause.subjects, cause.message)
    without = loaded.drop(cause.drops) if cause.drops else cause.without
    return Finding(
        cause.cause,
        cause.subjects,
        cause.message,
        comparison.worst(cause.with_ or loaded.native, cause.quantities),
        comparison.worst(without, cause.quantities),
    )


def _rows(report: Report, pair: str, errs: Errors, rtol: float) -> None:
    for (quantity, rep), e in errs.items():
        worst = int(np.argmax(e))
        report.results.append(
            Result(quantity, rep, pair, float("nan"), float(e[worst]), worst, rtol, bool(e.max() <= rtol))
        )


def _residual(loaded: Loaded, reference: Loaded | None) -> Native | object:
    """The loader's numbers with every recognised cause removed."""
    drops = [link for c in (reference.causes if reference else ()) for link in c.drops]
    if drops and loaded.drop is not None:
        return loaded.drop(drops)
    return loaded.residual or loaded.native


def _compare(
    report: Report, loader: NativeLoader, loaded: Loaded, ref: tuple[str, Loaded | None], options: dict
) -> None:
    """One loader against its reference (``(label, loaded)``): rows, findings and notes into ``report``."""
    label, reference = ref
    causes = [*(reference.causes if reference else ()), *loaded.causes]
    if loaded.native is None:
        report.findings.extend(Finding(c.cause, c.subjects, c.message) for c in causes)
        report.notes.append(f"{loader.label} refuses the file (see the {loader.prefix}refuses finding)")
        return
    rtol = report.rtol
    comparison = _Comparison(
        reference.native if reference else None, options["reps"], report.samples, report.seed
    )
    _rows(report, f"{loader.label} vs {label}", comparison.errors(loaded.native), rtol)
    report.findings.extend(explain(c, comparison, loaded) for c in causes)
    raw = comparison.worst(loaded.native)
    residual = comparison.worst(_residual(loaded, reference))
    if residual is None or residual > rtol:
        report.findings.append(Finding(f"{loader.prefix}unexplained", (), loader.unexplained, raw, residual))
    if raw > rtol:
        rest = "-" if residual is None else f"{residual:.1e}"
        report.notes.append(
            f"{loader.label} and {label} differ by {raw:.1e}; without the causes found below, by {rest}"
            + (" (all explained)" if residual is not None and residual <= rtol else "")
        )


def _joins(loader: NativeLoader, name: str, requested: set[str], kind: str) -> bool:
    """Whether a registered library's loader takes part on a file of ``kind``."""
    if loader.joins == "default" or kind in getattr(loader, "default_on", ()):
        return True
    return loader.joins == "on request" and name in requested


def _loaders(
    libraries: Iterable[object] | None, requested: set[str], notes: list[str], kind: str = "urdf"
) -> list[NativeLoader]:
    """The loaders to compare: ``libraries`` (names or loaders), or the registry's: every installed
    library whose loader reads files of ``kind`` and joins by default (or by default on that kind),
    and those that join on request when ``requested`` names them. Libraries whose own loader does
    not read ``kind`` are left out with a note."""
    if libraries is not None:
        given = [registry.library(x).load("native") if isinstance(x, str) else x for x in libraries]
        return [loader_for(loader, kind) for loader in given]
    chosen = []
    for record in registry.LIBRARIES.values():
        if record.native is None:
            continue
        if kind not in record.loads:
            reads = " and ".join(k.upper() for k in record.loads) or "no file"
            notes.append(f"{record.name}'s own loader reads {reads}, not {kind.upper()}: left out")
            continue
        if not record.installed:
            if record.name in requested:
                record.require(f"the native comparison of {record.name!r}")
            notes.append(
                f"{record.name} is not installed: its own loader is left out (extra [{record.extra}])"
            )
            continue
        loader = record.load("native")
        if _joins(loader, record.name, requested, kind):
            chosen.append(loader_for(loader, kind))
    return sorted(chosen, key=lambda loader: loader.joins != "default")


def compare_native(
    path: str | Path,
    libraries: Iterable[object] | None = None,
    samples: int = 5,
    seed: int = 0,
    rtol: float = 1e-10,
    representations: Iterable[object] = ("body", "inertial", "mixed"),
    requested: Iterable[str] = (),
) -> Report:
    """Compare the libraries' own loaders on the file ``path`` (a URDF or MJCF path, or a robot name).

    ``libraries``: the loaders to compare (registered names or :class:`~bridge.backends.native.NativeLoader`
    objects); default: the registry's (see :func:`_loaders`, ``requested`` naming those that join on
    request). The report's engines are the loaders' labels; ``report.ok`` is False when a loader
    disagrees with its reference, explained or not, or when nothing could be compared.
    """
    start = time.perf_counter()
    path = str(resolve_model_path(path))
    source = _source(path)
    reps = [Representation.parse(r) for r in representations]
    name = Path(path).stem if source.model.name is None else source.model.name
    report = Report(name, [], [r.value for r in reps], samples, seed, rtol, empty_ok=False)
    requested_names = {str(r).strip().lower() for r in requested}
    loaders = _loaders(libraries, requested_names, report.notes, source.kind)
    for loader in loaders:
        ref_label, reference = "bridge", None
        if loader.against is not None:
            ref_loader = registry.library(loader.against).load("native")
            ref_label, reference = ref_loader.label, ref_loader.load(source)
            if reference.native is None:  # the reference refuses the file: bridge's model instead
                report.findings.extend(Finding(c.cause, c.subjects, c.message) for c in reference.causes)
                found = ", ".join(c.cause for c in reference.causes)
                report.notes.append(
                    f"{ref_label} refuses the file ({found}): {loader.label} is compared with bridge's model"
                )
                ref_label, reference = "bridge", None
        loaded = loader.load(source, reference)
        if loaded.native is not None:
            report.engines += [loader.label] + ([ref_label] if reference else [])
        _compare(report, loader, loaded, (ref_label, reference), {"reps": reps})
    report.seconds = time.perf_counter() - start
    return report
