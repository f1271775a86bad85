"""Test helpers shared by several test modules (small hand-built models, random states)."""

from __future__ import annotations

import dataclasses

import numpy as np

from bridge.conventions.state import State
from bridge.model.model import Frame, Joint, Link, Model
from bridge.spatial import SpatialInertia, Transform


def float64_engines() -> tuple[str, ...]:
    """The installed engines that compute in float64 (registry floor ``rtol`` 0): what comparisons
    at 1e-10 take. A float32 engine (Newton) is compared to its floor in its own tests and through
    ``cross_validate``, which applies the floor."""
    from bridge.backends import registry
    from bridge.validation.cross_validation import available_engines

    # (an engine compared on request only, jaxsim, is compared in its own tests: it compiles per model)
    return tuple(e for e in available_engines() if registry.library(e).rtol == 0.0)


def random_transform(rng: np.random.Generator, batch: tuple[int, ...] = ()) -> Transform:
    q = rng.normal(size=(*batch, 4))
    return Transform.from_quaternion_xyzw(
        q / np.linalg.norm(q, axis=-1, keepdims=True), rng.normal(size=(*batch, 3))
    )


def small_model(rng: np.random.Generator, floating: bool = True) -> Model:
    """A tree with every joint kind, non-zero axis origins and a non-depth-first DOF order."""
    inertia = SpatialInertia(1.3, [0.05, -0.02, 0.1], np.diag([0.1, 0.12, 0.15]))
    links = [Link(n, inertia) for n in ("a", "b", "c", "d", "e", "f")]
    joints = [
        Joint(
            "j1",
            "revolute",
            "a",
            "b",
            random_transform(rng),
            axis=rng.normal(size=3),
            axis_origin=rng.normal(size=3),
        ),
        Joint("j2", "prismatic", "b", "c", random_transform(rng), axis=[1, 0, 0]),
        Joint(
            "j3", "continuous", "a", "d", random_transform(rng), axis=[0, 0, 1], axis_origin=[0.1, 0.2, 0.3]
        ),
        Joint("jf", "fixed", "d", "e", random_transform(rng)),
        Joint("j4", "revolute", "e", "f", random_transform(rng), axis=[0, -1, 0]),
    ]
    frames = [Frame("tool", "e", random_transform(rng))]
    return Model("small", links, joints, frames, "a", ("j4", "j2", "j3", "j1"), floating)


def random_state(
    model: Model, rng: np.random.Generator, rep: str = "mixed", batch: tuple[int, ...] = ()
) -> State:
    """A random state: one-coordinate joints in [-2, 2], planar, ball and free joints at random
    configurations of their kinds (:meth:`bridge.model.joints.JointSpec.random`)."""
    n = model.n_dofs
    if model.single_coordinate:
        return State(
            random_transform(rng, batch),
            rng.uniform(-2, 2, (*batch, n)),
            rng.normal(size=(*batch, 6)),
            rng.normal(size=(*batch, n)),
            rep,
        )
    H = random_transform(rng, batch)
    kinds = model.coordinates.kinds
    parts = [k.spec.random(rng, batch) if k.wide else rng.uniform(-2, 2, (*batch, 1)) for k in kinds]
    return State(
        H, np.concatenate(parts, axis=-1), rng.normal(size=(*batch, 6)), rng.normal(size=(*batch, n)), rep,
        layout=model,
    )  # fmt: skip


def wide_model(seed: int, floating: bool = True, n_links: int = 9) -> Model:
    """A random tree with planar, ball and free joints among one-coordinate and fixed joints (a free
    joint below the root, several free bodies on a fixed base), armature on some joints."""
    import bridge

    return bridge.random_model(
        n_links,
        seed=seed,
        joint_kinds=("revolute", "continuous", "prismatic", "fixed", "planar", "ball", "free"),
        floating=floating,
        armature_probability=0.3,
    )


def _compare(actual: object, desired: object, rtol: float, atol: float | None, norm: str) -> tuple[bool, str]:
    """``(passed, description)`` of ``|actual - desired| <= max(atol, rtol * |desired|)``."""
    a = np.asarray(actual, dtype=np.float64)
    d = np.asarray(desired, dtype=np.float64)
    if a.shape != d.shape:
        return False, f"shape {a.shape} != {d.shape}"
    diff = np.abs(a - d)
    if norm == "fro":
        err, size = float(np.linalg.norm(a - d)), float(np.linalg.norm(d))
    elif norm == "max":
        err, size = float(np.max(diff, initial=0.0)), float(np.max(np.abs(d), initial=0.0))
    else:
        raise ValueError(f"norm must be 'fro' or 'max', got {norm!r}")
    floor = rtol if atol is None else atol
    tol = max(floor, rtol * size)
    passed = bool(err <= tol)  # False for NaN
    text = (
        f"|actual - desired| = {err:.3e} ({'Frobenius' if norm == 'fro' else 'max abs'} norm), "
        f"tolerance {tol:.3e} = max(atol {floor:.1e}, rtol {rtol:.1e} * |desired| {size:.3e}); "
        f"relative error {err / size if size else float('inf'):.3e}"
    )
    if diff.size:
        flat = int(np.argmax(np.where(np.isnan(diff), np.inf, diff)))
        where = np.unravel_index(flat, diff.shape)
        text += (
            f"; largest element error {float(diff.flat[flat]):.3e} at index {tuple(int(i) for i in where)}: "
            f"actual {float(a.flat[flat])!r}, desired {float(d.flat[flat])!r}"
        )
    return passed, text


def assert_close(
    actual: object,
    desired: object,
    rtol: float = 1e-10,
    what: str = "",
    *,
    atol: float | None = None,
    norm: str = "fro",
) -> None:
    """Assert ``|actual - desired| <= max(atol, rtol * |desired|)`` and equal shapes.

    ``|.|`` is the Frobenius norm of the whole array (``norm="fro"``, the default) or its largest
    absolute entry (``norm="max"``). ``atol`` defaults to ``rtol``, so the default test is
    ``err <= rtol * max(1, |desired|)``: relative for large values, absolute below 1. On failure
    the message names ``what`` and gives the error, the tolerance, the relative error and the
    largest element-wise error with its index and both values.
    """
    passed, text = _compare(actual, desired, rtol, atol, norm)
    if not passed:
        raise AssertionError(f"{what or 'arrays'} not close: {text}")


def assert_not_close(
    actual: object,
    desired: object,
    rtol: float = 1e-10,
    what: str = "",
    *,
    atol: float | None = None,
    norm: str = "fro",
) -> None:
    """Assert that :func:`assert_close` with the same arguments would fail (a wrong formula is
    detected by the test that should catch it)."""
    passed, text = _compare(actual, desired, rtol, atol, norm)
    if passed:
        raise AssertionError(f"{what or 'arrays'} unexpectedly close: {text}")


def assert_single_state_path_equals_batched(engine: str, model: Model, rep: str, seed: int = 5) -> None:
    """An engine's single-state path (one unbatched state set from arrays) against its general
    path (the same state with a batch axis of one), for every kind of quantity, gravity and an
    external wrench included, to 1e-12; the state is kept."""
    import bridge

    rng = np.random.default_rng(seed)
    st = random_state(model, rng, rep)
    g = np.array([0.3, -0.2, -9.7])
    n, floating = model.n_dofs, model.floating
    nu_dot, tau = rng.normal(size=model.nv), rng.normal(size=n)
    frame = model.frame_names[-1]
    wrench = {frame: rng.normal(size=6)}
    single, batch = bridge.KinDyn(model, engine, rep), bridge.KinDyn(model, engine, rep)
    single.set_state(st.world_H_base.matrix, st.s, st.base_velocity, st.s_dot, gravity=g)
    ran = getattr(single._engine, "_single", False) or single._engine._single_args is not None
    assert ran, "the single-state path ran"
    H, s, v, sd = (x[None] for x in (st.world_H_base.matrix, st.s, st.base_velocity, st.s_dot))
    batch.set_state(H, s, v, sd, gravity=g)
    base_acc = nu_dot[:6] if floating else None
    for name, fn in {
        "M": lambda kd: kd.mass_matrix(),
        "h": lambda kd: kd.bias_forces(),
        "g": lambda kd: kd.gravity_forces(),
        "ID": lambda kd: kd.inverse_dynamics(base_acc, nu_dot[-n:], external_wrenches=wrench),
        "FD": lambda kd: kd.forward_dynamics(tau, external_wrenches=wrench),
        "J": lambda kd: kd.frame_jacobian(frame),
        "v": lambda kd: kd.frame_velocity(frame),
        "a": lambda kd: kd.frame_acceleration(frame, base_acc, nu_dot[-n:]),
        "bias acc": lambda kd: kd.frame_bias_acc(frame),
        "H": lambda kd: kd.frame_transform(frame),
        "com J": lambda kd: kd.com_jacobian(),
        "h_G": lambda kd: kd.centroidal_momentum(),
    }.items():
        one, many = fn(single), fn(batch)
        assert one.shape == many.shape[1:], name
        assert_close(one, many[0], 1e-12, f"{engine} {name} {rep} floating={floating}")
    kept = st.base_velocity if floating else np.zeros(6)  # (a fixed base has no base velocity)
    assert_close(single.state.base_velocity, kept, 0.0, "the state is kept")
    assert_close(single.state.s, st.s, 0.0, "the state is kept")


def compiled_and_numpy(model: Model, engine: str, rep: str, monkeypatch) -> tuple:
    """(a KinDyn whose library engine takes its compiled single-state path from the first state, one
    that stays on the numpy path); skips the test without numba (or with ``BRIDGE_NUMBA=0``)."""
    import pytest

    import bridge
    from bridge.backends.single import LibrarySingleState
    from bridge.derivatives.select import compiled_kernels

    if compiled_kernels() is None:
        pytest.skip("numba is not installed (or BRIDGE_NUMBA=0)")
    out = []
    for after in (0, 10**12):
        with monkeypatch.context() as m:
            m.setattr(LibrarySingleState, "COMPILE_AFTER", after)
            out.append(bridge.KinDyn(model, engine, rep))
    return out[0], out[1]


def renamed(model: Model, links: dict[str, str], joints: dict[str, str], frames: dict[str, str]) -> Model:
    """``model`` with its links, joints and extra frames renamed."""
    out_links = tuple(dataclasses.replace(lk, name=links[lk.name]) for lk in model.links)
    out_joints = tuple(
        dataclasses.replace(j, name=joints[j.name], parent=links[j.parent], child=links[j.child])
        for j in model.joints
    )
    out_frames = tuple(dataclasses.replace(f, name=frames[f.name], link=links[f.link]) for f in model.frames)
    return model.replace(
        links=out_links,
        joints=out_joints,
        frames=out_frames,
        base=links[model.base],
        dof_names=tuple(joints[d] for d in model.dof_names),
    )
