"""MuJoCo models go back to MuJoCo: several joints per body, exactly (issue 28).

``to_mujoco`` merges each chain of massless links joined by movable joints into one MuJoCo body
with several joints (:mod:`bridge.backends.mujoco.bodies`). Every MJCF file the tests use (the
hand-written ones under ``models/mjcf/``, MuJoCo's own test models in the ``mujoco`` wheel, the
DeepMind control suite in the ``dm-control`` wheel) that ``load_mjcf`` loads goes back to an
MjModel whose M, h, ID and FD equal the original's to 1e-12, and the mujoco engine joins the others
against MuJoCo's numbers on the original file, in every representation.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

import bridge

mujoco = pytest.importorskip("mujoco", reason="MuJoCo is not installed (pip install '.[mujoco]')")

from bridge.backends.mujoco import load_mjcf, to_mujoco  # noqa: E402
from bridge.backends.mujoco.model import rigid_body_flags  # noqa: E402
from tests.backends.mujoco_reference import (  # noqa: E402
    MUJOCO_TESTDATA,
    SUITE,
    assert_engines_equal_mujoco,
    engines_for,
    random_qpos,
)
from tests.helpers import random_state  # noqa: E402

MJCF = Path(__file__).resolve().parents[2] / "models" / "mjcf"


HAND_WRITTEN = (
    "arm", "quadruped", "passive_extras", "site_names", "planar_runner", "humanoid_hips", "ball_joint",
    "two_free",
)  # fmt: skip
#: the suite's models (dog and quadruped have a second free body, a ball: scenes)
SUITE_MODELS = (
    "acrobot", "ball_in_cup", "cartpole", "cheetah", "dog", "finger", "fish", "hopper", "humanoid",
    "humanoid_CMU", "lqr", "manipulator", "pendulum", "point_mass", "quadruped", "reacher", "stacker",
    "swimmer", "walker",
)  # fmt: skip


def _files() -> list[object]:
    files = [pytest.param(MJCF / f"{n}.xml", id=n) for n in HAND_WRITTEN]
    mark = pytest.mark.skipif(SUITE is None, reason="dm-control is not installed (part of the test extra)")
    files += [pytest.param((SUITE or Path()) / f"{n}.xml", id=f"suite-{n}", marks=mark) for n in SUITE_MODELS]
    files.append(pytest.param((MUJOCO_TESTDATA or Path()) / "msh.xml", id="mujoco-testdata-msh"))
    files.append(pytest.param((MUJOCO_TESTDATA or Path()) / "model.xml", id="mujoco-testdata-model"))
    return files


def _load(path: Path) -> bridge.Model:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # damping, tendons, ...: not part of the rigid-body model
        return load_mjcf(path)


def _compiled(path: Path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return mujoco.MjModel.from_xml_path(str(path))


def _numbers(mm, qpos, qvel, qacc, qfrc) -> tuple[np.ndarray, ...]:
    """MuJoCo's M, h, ID and FD on ``mm`` under the rigid-body flags."""
    mm.opt.disableflags = rigid_body_flags(mujoco)
    d = mujoco.MjData(mm)
    d.qpos[:], d.qvel[:] = qpos, qvel
    mujoco.mj_forward(mm, d)
    M = np.zeros((mm.nv, mm.nv))
    mujoco.mj_fullM(mm, d, M)
    h = d.qfrc_bias.copy()
    d.qacc[:] = qacc
    mujoco.mj_inverse(mm, d)
    tau = d.qfrc_inverse.copy()
    d.qfrc_applied[:] = qfrc
    mujoco.mj_forward(mm, d)
    return M, h, tau, d.qacc.copy()


@pytest.mark.parametrize("path", _files())
def test_mjcf_goes_back_to_mujoco_exactly(path: Path) -> None:
    """to_mujoco(load_mjcf(file)) has MuJoCo's M, h, ID and FD of the file to 1e-12 relative, at the
    same qpos and qvel (MuJoCo's joint positions are bridge's; a joint ref is folded into the rest)."""
    model = _load(path)
    original, back = _compiled(path), to_mujoco(model)
    assert back.nv == original.nv and back.nq == original.nq
    back.opt.gravity[:] = original.opt.gravity
    rng = np.random.default_rng(3)
    for _ in range(2):
        qpos = random_qpos(original, rng)
        qvel, qacc, qfrc = rng.normal(size=(3, original.nv))
        want = _numbers(original, qpos, qvel, qacc, qfrc)
        got = _numbers(back, qpos, qvel, qacc, qfrc)
        for what, a, b in zip(("M", "h", "ID"), got[:3], want[:3], strict=True):
            scale = max(1.0, float(np.abs(b).max(initial=0.0)))
            assert float(np.abs(a - b).max(initial=0.0)) <= 1e-12 * scale, f"{path.name} {what}"
        # FD: the rebuilt model's accelerations satisfy the original's equations of motion to 1e-12
        # (its forward error is that over the conditioning of M: 1.5e-12 relative for the suite's
        # manipulator, whose fingers make M ill-conditioned)
        M, h = want[0], want[1]
        residual = M @ got[3] + h - qfrc
        terms = np.abs(M) @ np.abs(got[3]) + np.abs(h) + np.abs(qfrc)  # what the residual sums
        scale = max(1.0, float(terms.max(initial=0.0)))
        assert float(np.abs(residual).max(initial=0.0)) <= 1e-12 * scale, f"{path.name} FD"


@pytest.mark.parametrize("representation", ["body", "inertial", "mixed"])
@pytest.mark.parametrize("name", ["planar_runner", "humanoid_hips", "quadruped"])
def test_every_engine_with_mujoco_equals_mujoco_on_the_file(name: str, representation: str) -> None:
    """The mujoco engine joins every other engine on models with 2- and 3-joint bodies (joint pos
    off the body origin, ref, a planar base): M, h, ID, FD, Jacobians, site poses to 1e-10."""
    path = MJCF / f"{name}.xml"
    model = _load(path)
    engines = engines_for(model)
    assert "mujoco" in engines
    for seed in (0, 1):
        errors = assert_engines_equal_mujoco(
            model, _compiled(path), np.random.default_rng(seed), engines, representation=representation
        )
        assert "mujoco FD" in errors


@pytest.mark.skipif(SUITE is None, reason="dm-control is not installed (part of the test extra)")
@pytest.mark.parametrize("name", ["cheetah", "humanoid", "hopper", "fish"])
def test_suite_models_every_engine_with_mujoco(name: str) -> None:
    model = _load(SUITE / f"{name}.xml")
    engines = engines_for(model)
    assert "mujoco" in engines
    assert_engines_equal_mujoco(model, _compiled(SUITE / f"{name}.xml"), np.random.default_rng(5), engines)


def test_cross_validate_includes_mujoco_and_the_merged_links_frames() -> None:
    """cross_validate runs the mujoco engine on a model with multi-joint bodies, frames on the links
    inside the merged chains included (the engine reads them from its kinematic twin)."""
    model = _load(MJCF / "humanoid_hips.xml")
    inner = [name for name in model.link_names if "__" in name]
    assert len(inner) == 5  # abdomen_z, two on each hip
    report = bridge.cross_validate(model, samples=2, frames=[model.base, "right_shin", *inner[:3], "chest"])
    assert "mujoco" in report.engines
    assert report.ok, report.summary()


def _chain_with_massless_middle(floating: bool) -> bridge.Model:
    """A random chain whose links 2 and 3 are massless (between joints): a URDF's 3-axis joint."""
    model = bridge.random_model(
        6, seed=8, massless_probability=0.0, joint_kinds=("revolute", "prismatic"), floating=floating,
        branching=0.0,
    )  # fmt: skip
    zero = bridge.SpatialInertia(0.0, [0, 0, 0], np.zeros((3, 3)))
    links = list(model.links)
    for k in (2, 3):
        links[k] = bridge.Link(links[k].name, zero)
    return model.replace(links=tuple(links))


@pytest.mark.parametrize("floating", [True, False])
def test_urdf_massless_links_between_joints_run_on_mujoco(floating: bool) -> None:
    """A chain with massless links between joints (as URDF files build multi-axis joints) runs on
    the mujoco engine, every quantity equal to pinocchio's, the massless links' frames too."""
    model = _chain_with_massless_middle(floating)
    mm = to_mujoco(model)
    assert mm.nbody == len(model.links) - 2 + 1  # two links merged, plus the world body
    frames = [model.links[2].name, model.links[3].name, model.links[-1].name]
    report = bridge.cross_validate(model, engines=["pinocchio", "mujoco"], samples=3, frames=frames)
    assert report.ok, report.summary()


def test_a_frame_on_a_merged_link_runs_on_the_twin() -> None:
    """An extra frame on a massless link inside a chain moves with some of the body's joints only:
    no site carries it, the MjModel leaves it out with a warning naming it, and the mujoco engine
    reads it from its kinematic twin, equal to pinocchio's."""
    model = _chain_with_massless_middle(False)
    mid = model.links[2].name
    H = bridge.Transform.from_rpy([0.1, 0.2, 0.3], [0.05, -0.1, 0.2])
    with_frame = model.replace(frames=(bridge.Frame("sensor", mid, H),))
    with pytest.warns(bridge.BridgeWarning, match=rf"\[{mid!r}, 'sensor'\] on link {mid!r}"):
        mm = to_mujoco(with_frame)
    assert mujoco.mj_name2id(mm, mujoco.mjtObj.mjOBJ_SITE, "sensor") == -1
    report = bridge.cross_validate(with_frame, engines=["pinocchio", "mujoco"], samples=2, frames=["sensor"])
    assert report.ok, report.summary()


def test_a_branching_massless_link_names_why_it_is_not_merged() -> None:
    model = bridge.random_model(6, seed=2, massless_probability=0.0, joint_kinds=("revolute",), branching=1.0)
    lumped = model.lumped()
    branch = next(link.name for link in lumped.links[1:] if len(lumped.child_joints(link.name)) > 1)
    zero = bridge.SpatialInertia(0.0, [0, 0, 0], np.zeros((3, 3)))
    massless = model.replace(
        links=tuple(bridge.Link(lk.name, zero) if lk.name == branch else lk for lk in model.links)
    )
    with pytest.raises(bridge.UnsupportedError, match="child joints") as info:
        to_mujoco(massless)
    assert branch in str(info.value) and "bound_mass" in str(info.value)


def test_balance_inertia_like_mujocos_balanceinertia() -> None:
    """Moments violating A + B >= C: refused naming the link and the option; balance_inertia=True
    makes them their mean with a warning giving the link and the size of the change. The mujoco
    engine stays exact and names the option."""
    model = bridge.random_model(3, seed=1, massless_probability=0.0, joint_kinds=("revolute",))
    last = model.links[-1]
    bad = bridge.SpatialInertia(1.0, [0.0, 0.0, 0.1], np.diag([0.01, 0.02, 0.5]))
    model = model.replace(links=(*model.links[:-1], bridge.Link(last.name, bad)))
    with pytest.raises(bridge.UnsupportedError, match="balance_inertia") as info:
        to_mujoco(model)
    assert last.name in str(info.value)
    with pytest.raises(bridge.UnsupportedError, match="balance_inertia"):
        bridge.KinDyn(model, "mujoco")
    with pytest.warns(bridge.BridgeWarning, match="balance_inertia") as rec:
        mm = to_mujoco(model, balance_inertia=True)
    message = str(rec[0].message)
    assert last.name in message and "change 0.323" in message
    b = mujoco.mj_name2id(mm, mujoco.mjtObj.mjOBJ_BODY, last.name)
    np.testing.assert_allclose(mm.body_inertia[b], np.full(3, 0.53 / 3), rtol=1e-14)


def test_mujoco_testdata_scene_with_a_ball_and_free_bodies() -> None:
    """MuJoCo's own test model (in the wheel): a ball joint, five free bodies and hinges, unnamed free
    joints among them, is a scene rooted at the world body; every engine that takes it equals MuJoCo
    in every representation (iDynTree, which has no ball or free joint, refuses it by name)."""
    if MUJOCO_TESTDATA is None or not (MUJOCO_TESTDATA / "model.xml").is_file():
        pytest.skip("the mujoco wheel has no testdata/model.xml")
    model = _load(MUJOCO_TESTDATA / "model.xml")
    kinds = [model.joint(d).kind.value for d in model.dof_names]
    assert not model.floating and model.base == "world" and kinds.count("free") == 5 and "ball" in kinds
    with pytest.raises(bridge.BridgeError, match="several coordinates"):
        bridge.KinDyn(model, "idyntree")
    for k, rep in enumerate(("body", "inertial", "mixed")):
        mm = _compiled(MUJOCO_TESTDATA / "model.xml")
        errors = assert_engines_equal_mujoco(model, mm, np.random.default_rng(k), representation=rep)
        assert {"pinocchio ID", "featherstone FD", "mujoco M"} <= set(errors)


# --------------------------------------------------------------------------- MJCF export
def _robots_mujoco_accepts(limit: int) -> list[bridge.Model]:
    out = []
    for name in bridge.robot_names():
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = bridge.load_urdf(bridge.robot_path(name))
                to_mujoco(model)
        except bridge.BridgeError:
            continue
        out.append(model)
        if len(out) == limit:
            break
    return out


def test_to_mjcf_is_exact_against_idyntree_and_keeps_every_frame() -> None:
    """URDF -> MJCF: MuJoCo's M, h and FD on the written file equal iDynTree's on the URDF to 1e-10
    (shipped robots MuJoCo accepts), and every URDF frame (links merged by fixed joints, extra
    frames) is a site or a body."""
    from bridge.backends.mujoco import from_mujoco_state, to_mujoco_state
    from bridge.conventions.convert import velocity_change

    models = _robots_mujoco_accepts(4)
    assert len(models) >= 2
    for model in models:
        mm = mujoco.MjModel.from_xml_string(bridge.to_mjcf(model))
        names = {mujoco.mj_id2name(mm, mujoco.mjtObj.mjOBJ_SITE, i) for i in range(mm.nsite)}
        names |= {mujoco.mj_id2name(mm, mujoco.mjtObj.mjOBJ_BODY, b) for b in range(mm.nbody)}
        assert set(model.frame_names) <= names | plan_merged(model)
        kd = bridge.KinDyn(model, "idyntree", "mixed")
        rng = np.random.default_rng(2)
        st = random_state(model, rng, "mixed")
        kd.set_robot_state(st)
        qpos, qvel = to_mujoco_state(model, st)
        if not model.floating:
            H = st.world_H_base
            mm.body_pos[1], mm.body_quat[1] = H.translation, H.as_quaternion_wxyz()
        tau = rng.normal(size=model.n_dofs)
        cov = velocity_change(model, st, "mixed", "mujoco")
        qfrc = cov.force(np.r_[np.zeros(model.nv - model.n_dofs), tau])
        M, h, _, qacc = _numbers(mm, qpos, qvel, np.zeros(mm.nv), qfrc)
        for what, a, b in (
            ("M", cov.matrix_back(M), kd.mass_matrix()),
            ("h", cov.bias_back(h, M), kd.bias_forces()),
            ("FD", cov.acceleration_back(qacc), kd.forward_dynamics(tau)),
        ):
            assert float(np.abs(a - b).max()) <= 1e-10 * max(1.0, float(np.abs(b).max())), (model.name, what)
        assert from_mujoco_state(model, qpos, qvel, "mixed").s.shape == st.s.shape


def plan_merged(model: bridge.Model) -> set[str]:
    from bridge.backends.mujoco.twin import merged_links

    return merged_links(model)


def test_mjcf_to_urdf_to_mjcf_round_trip() -> None:
    """MJCF -> URDF (several joints per body as named massless links) -> bridge -> MuJoCo equals
    MuJoCo on the original file to 1e-10 (armature aside: URDF has none)."""
    path = MJCF / "humanoid_hips.xml"
    model = _load(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        urdf = model.to_urdf()
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "m.urdf"
        p.write_text(urdf)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            again = bridge.load_urdf(p)
    original = _compiled(path)
    original.dof_armature[:] = 0.0
    mujoco.mj_setConst(original, mujoco.MjData(original))  # (MuJoCo 4's simple DOFs: dof_M0)
    back = to_mujoco(again)
    assert back.nbody == original.nbody and back.nv == original.nv
    rng = np.random.default_rng(1)
    qpos = original.qpos0 + rng.uniform(-1.0, 1.0, original.nq)
    qpos[3:7] /= np.linalg.norm(qpos[3:7])
    qvel, qacc, qfrc = rng.normal(size=(3, original.nv))
    for a, b in zip(
        _numbers(back, qpos, qvel, qacc, qfrc), _numbers(original, qpos, qvel, qacc, qfrc), strict=True
    ):
        assert float(np.abs(a - b).max()) <= 1e-10 * max(1.0, float(np.abs(b).max()))


def test_to_mjcf_writes_no_empty_range() -> None:
    """URDF's lower = upper = 0 (no limit given) is not written as a range MuJoCo refuses."""
    import mujoco

    model = bridge.load_urdf(bridge.robot_path("double_pendulum"))
    xml = bridge.to_mjcf(model)
    assert 'range="0 0"' not in xml and "range=" not in xml
    mujoco.MjModel.from_xml_string(xml)  # compiles
