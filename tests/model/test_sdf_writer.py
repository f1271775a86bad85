"""``Model.to_sdf()``: exact SDFormat that Drake's own SDFormat parser reads into the same dynamics.

Drake parses the written text (``Parser.AddModels(file_contents=..., file_type="sdf")``); its
``MultibodyPlant``'s M, h and g (three representations), inverse and forward dynamics (MIXED) and
frame poses equal bridge's engines on the source model to 1e-12 relative: random trees (floating,
fixed, re-rooted so that axes miss the child origins, massless links, armature as Drake's rotor
inertia), icub-models' iCub and example-robot-data robots. The round trip through bridge's SDFormat
reader runs when ``bridge.load_sdf`` exists.
"""

from __future__ import annotations

import warnings
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bridge
from bridge.model.sdf_writer import SDF_VERSION, WORLD_JOINT
from bridge.robots import robot_path
from bridge.validation.sampling import random_states
from tests.cli.runner import MODELS, run
from tests.helpers import assert_close, renamed, small_model

REPS = ("body", "inertial", "mixed")


# ------------------------------------------------------------------ the text
def test_text_structure_and_exact_numbers() -> None:
    model = small_model(np.random.default_rng(0))
    root = ET.fromstring(model.to_sdf())
    assert root.tag == "sdf" and root.get("version") == SDF_VERSION
    (m,) = root.findall("model")
    assert m.get("canonical_link") == model.base
    assert next(link.get("name") for link in m.findall("link")) == model.base
    assert {link.get("name") for link in m.findall("link")} == set(model.link_names)
    movable = [j.get("name") for j in m.findall("joint") if j.get("type") != "fixed"]
    assert movable == list(model.dof_names)  # DOFs in document order
    assert {f.get("name"): f.get("attached_to") for f in m.findall("frame")} == {"tool": "e"}
    assert not [j for j in m.findall("joint") if j.find("parent").text == "world"]  # floating: free
    for link in model.links:
        el = m.find(f"link[@name='{link.name}']")
        assert float(el.find("inertial/mass").text) == link.mass  # repr: the same double
        com = [float(x) for x in el.find("inertial/pose").text.split()[:3]]
        assert com == link.inertia.com.tolist()
        I3 = link.inertia.inertia_com
        assert float(el.find("inertial/inertia/ixy").text) == I3[0, 1]
        assert float(el.find("inertial/inertia/izz").text) == I3[2, 2]
    j1 = m.find("joint[@name='j1']")
    assert j1.find("pose").get("relative_to") == "a"
    assert [float(x) for x in j1.find("axis/xyz").text.split()] == model.joint("j1").axis.tolist()
    assert m.find("link[@name='b']/pose").get("relative_to") == "j1"


def test_fixed_base_is_welded_to_the_world_and_massless_links_are_zero() -> None:
    model = bridge.random_model(10, 3, floating=False, massless_probability=0.5)
    root = ET.fromstring(model.to_sdf())
    welds = [j for j in root.iter("joint") if j.find("parent").text == "world"]
    assert (
        len(welds) == 1 and welds[0].get("name") == WORLD_JOINT and welds[0].find("child").text == model.base
    )
    massless = [link for link in model.links if link.mass == 0.0]
    assert massless
    for link in massless:  # SDFormat's default inertial is a unit mass: zero is written
        assert float(root.find(f".//link[@name='{link.name}']/inertial/mass").text) == 0.0


def test_coupled_model_is_refused() -> None:
    model = bridge.load_urdf(MODELS / "mimic_offsets.urdf", mimic="coupled")
    with pytest.raises(bridge.UnsupportedError, match="SDFormat"):
        model.to_sdf()
    assert "<sdf" in model.full.to_sdf()


def test_reserved_names_get_sdf_names_and_keep_their_own() -> None:
    model = bridge.load_urdf(robot_path("ur5"))  # its root link is called 'world'
    assert "world" in model.link_names
    for m in (model, model.with_base("base_link").with_fixed_base()):
        root = ET.fromstring(m.to_sdf())
        names = [el.get("name") for el in root.iter() if el.tag in ("link", "joint", "frame")]
        assert "world" not in names and len(set(names)) == len(names)
        back = bridge.load_sdf(m.to_sdf())
        assert back.link_names == m.link_names and back.base == m.base and back.floating == m.floating


@settings(max_examples=20, deadline=None)
@given(
    names=st.lists(st.sampled_from("abcdefgh"), min_size=5, max_size=5, unique=True),
    floating=st.booleans(),
    seed=st.integers(0, 3),
)
def test_joints_named_like_links_round_trip(names: list[str], floating: bool, seed: int) -> None:
    """URDF keeps link and joint names apart, SDFormat does not: a joint named like a link or frame
    gets a unique SDF name, its own kept in ``bridge:name``: the file is valid, reads back with the
    model's names and the same dynamics, and nothing is said about it."""
    model = small_model(np.random.default_rng(seed), floating)
    model = renamed(
        model,
        {n: n for n in model.link_names},
        dict(zip(model.joint_names, names, strict=True)),
        {"tool": "h" if "h" not in names else "tool"},
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        text = model.to_sdf()
    assert not [w for w in caught if issubclass(w.category, bridge.SDFWarning)]
    back = bridge.load_sdf(text)
    assert back.dof_names == model.dof_names and set(back.joint_names) == set(model.joint_names)
    states = random_states(model, 2, np.random.default_rng(seed))
    kd, kd_back = bridge.KinDyn(model, "pinocchio"), bridge.KinDyn(back, "pinocchio")
    kd.set_robot_state(states)
    kd_back.set_robot_state(states)
    assert_close(kd_back.mass_matrix(), kd.mass_matrix(), 1e-12)
    assert_close(kd_back.bias_forces(), kd.bias_forces(), 1e-12)


def test_convert_writes_sdf(tmp_path: Path) -> None:
    out = tmp_path / "offsets.sdf"
    res = run("convert", str(MODELS / "offsets.urdf"), "-o", str(out))
    assert res.exit_code == 0, res.output
    assert out.read_text() == bridge.load_urdf(MODELS / "offsets.urdf").to_sdf()


# ------------------------------------------------------------------ Drake reads the same dynamics
def _drake_plant(text: str):
    from pydrake.multibody.parsing import Parser
    from pydrake.multibody.plant import MultibodyPlant

    plant = MultibodyPlant(0.0)
    Parser(plant).AddModels(file_contents=text, file_type="sdf")
    plant.Finalize()
    return plant


def _same_as_drake(model: bridge.Model, samples: int = 2, rtol: float = 1e-12) -> None:
    """Drake's plant of ``model.to_sdf()`` against Pinocchio on ``model``."""
    pytest.importorskip("pydrake", reason="Drake is not installed (pip install 'bridge-dynamics[drake]')")
    from pydrake.multibody.tree import MultibodyForces

    from bridge.backends.drake.native import DrakeNative, native_state
    from bridge.conventions.change_of_variables import NEUTRAL, change_of_variables
    from bridge.conventions.state import Representation

    plant = _drake_plant(model.to_sdf())
    native = DrakeNative(plant, model)
    batch = random_states(model, samples, np.random.default_rng(0))
    context = plant.CreateDefaultContext()
    world = plant.world_frame()
    for rep in REPS:
        kd = bridge.KinDyn(model, "pinocchio", rep)
        for k in range(samples):
            b = batch.to(rep)
            H = b.world_H_base[k] if model.floating else native.base_pose
            st = bridge.State(H, b.s[k], b.base_velocity[k], b.s_dot[k], rep)
            kd.set_robot_state(st)
            for name, value in native.dynamics(st).items():
                assert_close(value, getattr(kd, name)(), rtol, f"{model.name} {name} {rep}")
            if rep != "mixed":
                continue
            # inverse dynamics in MIXED (Drake's velocity is MIXED, permuted: T_dot = 0)
            q, v = native_state(plant, model, st)
            plant.SetPositions(context, q)
            plant.SetVelocities(context, v)
            cov = change_of_variables(model, st, NEUTRAL[Representation.MIXED], native.convention)
            nu_dot = np.random.default_rng(k).normal(size=model.nv)
            tau_D = plant.CalcInverseDynamics(context, cov.acceleration(nu_dot), MultibodyForces(plant))
            tau = cov.force_back(tau_D - plant.CalcGravityGeneralizedForces(context))
            base_acc, s_ddot = (nu_dot[:6], nu_dot[6:]) if model.floating else (None, nu_dot)
            assert_close(tau, kd.inverse_dynamics(base_acc, s_ddot), rtol, f"{model.name} ID")
            for f in model.frame_names:
                X = plant.CalcRelativeTransform(context, world, plant.GetFrameByName(f)).GetAsMatrix4()
                assert_close(X, kd.frame_transform(f), rtol, f"{model.name} frame {f}")


@pytest.mark.parametrize("floating", [True, False])
def test_drake_reads_the_small_model(floating: bool) -> None:
    _same_as_drake(small_model(np.random.default_rng(1), floating))


@pytest.mark.parametrize("seed", range(4))
def test_drake_reads_random_trees(seed: int) -> None:
    model = bridge.random_model(12, seed, floating=seed % 2 == 0, armature_probability=0.3)
    if seed >= 2:
        model = model.with_base(model.links[-1].name)  # re-rooted: axis origins off the child origins
    _same_as_drake(model)


@pytest.mark.parametrize("name", ["iCubGazeboV2_5", "panda", "solo12"])
def test_drake_reads_robots(name: str) -> None:
    model = bridge.load_urdf(robot_path(name))
    _same_as_drake(model, samples=1)
    _same_as_drake(model.with_fixed_base(), samples=1)


# ------------------------------------------------------------------ the round trip through the reader
def test_round_trip_through_load_sdf() -> None:
    """bridge -> SDF -> bridge (load_sdf) -> SDF -> Drake: the same dynamics (1e-12)."""
    load_sdf = getattr(bridge, "load_sdf", None)
    if load_sdf is None:
        pytest.skip("bridge.load_sdf (the SDFormat reader) is not part of this tree yet")
    for model in (small_model(np.random.default_rng(2)), bridge.load_urdf(robot_path("iCubGazeboV2_5"))):
        back = load_sdf(model.to_sdf())
        assert set(back.frame_names) >= set(model.frame_names)
        assert back.floating is model.floating and back.base == model.base
        back = back.with_dofs(model.dof_names)
        _same_as_drake(back)
        rng = np.random.default_rng(3)
        batch = random_states(model, 2, rng)
        for m_ in (model, back):
            kd = bridge.KinDyn(m_, "pinocchio")
            kd.set_robot_state(batch)
            if m_ is model:
                ref = (kd.mass_matrix(), kd.bias_forces())
            else:
                assert_close(kd.mass_matrix(), ref[0], 1e-12)
                assert_close(kd.bias_forces(), ref[1], 1e-12)
