"""Names that clash once a library renames them: MuJoCo's world body and bridge's links.

MuJoCo names its world body ``"world"``, so ``to_mujoco`` gives a link ``"world"`` another body name
(``"world_"``, with more ``"_"`` while that is a link's name too). A model with links ``"world"`` and
``"world_"`` (and ``"world__"``...) must compile, its MJCF text must load back, and every frame must
be where bridge's own Featherstone engine puts it (a body named after the wrong link is a silently
wrong number). Joints may share names with links (URDF keeps them apart, as MuJoCo does).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bridge
from bridge.backends import registry
from bridge.backends.mujoco.model import mujoco_body_name
from tests.helpers import assert_close, random_state, renamed, small_model

pytestmark = pytest.mark.skipif(not registry.library("mujoco").installed, reason="needs the mujoco extra")

POOL = ("world", "world_", "world__", "world___", "a", "b", "c", "d", "e", "f", "g", "tool")


@st.composite
def clashing_models(draw) -> bridge.Model:
    """The small model (every joint kind, axis origins, a frame), its names drawn from POOL: link
    names include ``world`` and its variants, joints may be named like links."""
    model = small_model(np.random.default_rng(draw(st.integers(0, 3))), floating=draw(st.booleans()))
    names = draw(st.permutations(POOL))
    n = len(model.links)
    links = dict(zip(model.link_names, names[:n], strict=True))
    frames = dict(zip([f.name for f in model.frames], names[n : n + len(model.frames)], strict=True))
    joint_names = draw(st.lists(st.sampled_from(POOL), min_size=len(model.joints), max_size=len(model.joints),
                                unique=True))  # fmt: skip
    return renamed(model, links, dict(zip(model.joint_names, joint_names, strict=True)), frames)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(model=clashing_models(), seed=st.integers(0, 2))
def test_links_named_like_the_world_body(model: bridge.Model, seed: int) -> None:
    bodies = {mujoco_body_name(link, model.link_names) for link in model.link_names}
    assert "world" not in bodies and len(bodies) == len(model.link_names)
    st_ = random_state(model, np.random.default_rng(seed))
    ref = bridge.KinDyn(model, "featherstone", "mixed")
    ref.set_robot_state(st_)
    kd = bridge.KinDyn(model, "mujoco", "mixed")
    kd.set_robot_state(st_)
    for frame in model.frame_names:
        assert_close(kd.frame_transform(frame), ref.frame_transform(frame), 1e-10, frame)
        assert_close(kd.frame_jacobian(frame), ref.frame_jacobian(frame), 1e-10, frame)
    assert_close(kd.mass_matrix(), ref.mass_matrix(), 1e-10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bridge.BridgeWarning)
        text = bridge.to_mjcf(model)
    import mujoco

    m = mujoco.MjModel.from_xml_string(text)  # (it compiles: no repeated body name)
    assert m.nbody == len(bridge.to_mujoco(model).body_pos)


def test_a_link_world_next_to_a_link_world_(tmp_path) -> None:
    inertia = bridge.SpatialInertia(1.0, [0.0, 0.0, 0.1], np.diag([0.1, 0.2, 0.3]))
    links = [bridge.Link("world", inertia), bridge.Link("world_", inertia)]
    joints = [bridge.Joint("j", "revolute", "world", "world_", bridge.Transform.identity(), axis=[0, 0, 1])]
    model = bridge.Model("w", links, joints, [], "world", ("j",), True)
    assert mujoco_body_name("world", model.link_names) == "world__"
    assert mujoco_body_name("world_", model.link_names) == "world_"
    m = bridge.to_mujoco(model)
    import mujoco

    names = {mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_BODY, b) for b in range(m.nbody)}
    assert names == {"world", "world__", "world_"}
    path = tmp_path / "w.xml"
    path.write_text(bridge.to_mjcf(model))
    back = bridge.load_mjcf(path)  # the MJCF text reads back, "world" as "world__"
    assert set(back.link_names) == {"world__", "world_"} and back.dof_names == ("j",)
    state = bridge.State(np.eye(4), np.array([0.3]), np.ones(6), np.array([0.5]), "mixed")
    kd, ref, kd_back = bridge.KinDyn(model, "mujoco"), bridge.KinDyn(model, "pinocchio"), bridge.KinDyn(back)
    for k in (kd, ref, kd_back):
        k.set_robot_state(state)
    assert_close(kd.frame_transform("world_"), ref.frame_transform("world_"), 1e-12)
    assert_close(kd.bias_forces(), ref.bias_forces(), 1e-10)
    assert_close(kd_back.mass_matrix(), ref.mass_matrix(), 1e-12)
