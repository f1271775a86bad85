"""load_sdf: SDFormat's pose semantics, joints, frames and base, the options of load_urdf, and every
malformed document a bridge error naming the file and element (never a raw XML/numpy exception)."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

import bridge
from bridge.model.sdf import AXIS2_SUFFIX

ROOT = Path(__file__).resolve().parents[2]
SDF = ROOT / "models" / "sdf"
_INERTIAL = (
    "<inertial><mass>1</mass><inertia><ixx>0.1</ixx><iyy>0.2</iyy><izz>0.15</izz></inertia></inertial>"
)


def _doc(body: str, version: str = "1.9", name: str = "m") -> str:
    return f'<?xml version="1.0"?><sdf version="{version}"><model name="{name}">{body}</model></sdf>'


def _link(name: str, pose: str = "", extra: str = "") -> str:
    return f'<link name="{name}">{pose}{_INERTIAL}{extra}</link>'


def _joint(name: str, parent: str, child: str, kind: str = "revolute", inner: str = "") -> str:
    axis = "" if kind == "fixed" or "<axis>" in inner else "<axis><xyz>0 0 1</xyz></axis>"
    ends = f"<parent>{parent}</parent><child>{child}</child>"
    return f'<joint name="{name}" type="{kind}">{ends}{axis}{inner}</joint>'


def _close(a, b, tol: float = 1e-12) -> bool:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return bool(np.abs(a - b).max() <= tol * max(1.0, np.abs(b).max()))


# ------------------------------------------------------------------ the same model as the URDF
def test_offsets_sdf_is_the_offsets_urdf() -> None:
    """models/sdf/offsets.sdf (each link posed relative to its parent, joint frames at the child)
    gives load_urdf's model of models/offsets.urdf: links, inertias, joints, axes, limits, order."""
    sdf, urdf = bridge.load_sdf(SDF / "offsets.sdf"), bridge.load_urdf(ROOT / "models" / "offsets.urdf")
    assert (sdf.name, sdf.base, sdf.floating, sdf.dof_names) == (urdf.name, urdf.base, True, urdf.dof_names)
    assert sdf.link_names == urdf.link_names and sdf.joint_names == urdf.joint_names
    for a, b in zip(sdf.links, urdf.links, strict=True):
        assert _close(a.inertia.as_matrix(), b.inertia.as_matrix()), a.name
    for a, b in zip(sdf.joints, urdf.joints, strict=True):
        assert (a.kind, a.parent, a.child, a.limits) == (b.kind, b.parent, b.child, b.limits), a.name
        assert _close(a.parent_H_child.matrix, b.parent_H_child.matrix), a.name
        assert _close(a.axis, b.axis) and _close(a.axis_origin, b.axis_origin), a.name
    from bridge.validation.sampling import random_states

    states = random_states(urdf, 2, np.random.default_rng(0))
    M = []
    for model in (sdf, urdf):
        kd = bridge.KinDyn(model, "featherstone")
        kd.set_robot_state(states)
        M.append(kd.mass_matrix())
    assert _close(M[0], M[1], 1e-13)


# ------------------------------------------------------------------ pose semantics
def _H(xyz=(0, 0, 0), rpy=(0, 0, 0)) -> np.ndarray:
    return bridge.Transform.from_rpy(np.array(rpy, dtype=float), np.array(xyz, dtype=float)).matrix


def test_frames_sdf_follows_the_pose_semantics() -> None:
    """Hand computations for models/sdf/frames.sdf: every pose resolved through its relative_to."""
    model = bridge.load_sdf(SDF / "frames.sdf")
    assert model.floating and model.base == "pelvis"  # the root of the tree, not the canonical link
    M_pelvis = _H((0.1, 0, 0.8), (0, 0, 0.2))
    M_waist = M_pelvis @ _H((0, 0.02, 0.1), (0.1, 0, 0))
    M_torso = M_waist @ _H((0, 0, 0.25))
    waist = model.joint("waist")
    assert _close(waist.parent_H_child.matrix, np.linalg.inv(M_pelvis) @ M_torso)
    assert _close(waist.axis_origin, np.linalg.inv(M_torso)[:3] @ M_waist[:, 3])  # joint origin in torso
    assert _close(waist.axis, np.linalg.inv(M_torso)[:3, :3] @ [0, 0, 1])  # expressed in __model__
    # a chain of explicit frames: shoulder_site attached to shoulder_mount attached to torso
    torso_site = _H((0.02, 0.2, 0.3), (0, 0, 0.5)) @ _H((0, 0.05, 0), (0.4, 0, 0))
    site = model.frame("shoulder_site")
    assert site.link == "torso" and _close(site.link_H_frame.matrix, torso_site)
    shoulder = model.joint("shoulder")
    assert _close(shoulder.parent_H_child.matrix, torso_site @ _H((0, 0.15, 0)))
    assert _close(shoulder.axis_origin, [0, -0.15, 0])  # the joint frame is at the site
    mount_axis = np.array([1, 0, 0.2]) / np.linalg.norm([1, 0, 0.2])
    site_R_mount = _H(rpy=(0.4, 0, 0))[:3, :3].T
    assert _close(shoulder.axis, site_R_mount @ mount_axis)  # arm's axes are the site's
    # degrees, a quaternion pose, a frame attached to a joint (the joint's child link)
    forearm = model.joint("elbow").parent_H_child.matrix
    assert _close(forearm, _H((0.01, 0.3, -0.02), np.deg2rad([20, -10, 35])))
    wrist = model.frame("wrist_axis")
    assert wrist.link == "forearm" and _close(wrist.link_H_frame.matrix, _H((0, 0.25, 0), (0, 0.7, 0)))
    q = np.array([0.1, 0.2, 0.3, 0.9273618495495703])
    hand = bridge.Transform.from_quaternion_xyzw(q / np.linalg.norm(q), [0.01, 0.02, 0.03]).matrix
    assert _close(model.joint("wrist_slide").parent_H_child.matrix, wrist.link_H_frame.matrix @ hand)
    assert model.joint("wrist_slide").kind is bridge.JointKind.PRISMATIC
    assert (
        model.joint("elbow").kind is bridge.JointKind.CONTINUOUS and model.joint("elbow").limits.lower is None
    )
    assert model.joint("shoulder").limits == bridge.JointLimits()  # SDFormat's 1e16 and -1: no limits
    # inertial frame: <pose> in the link frame, moments about the COM in its axes
    arm = model.link("arm").inertia
    R = _H(rpy=(np.pi / 2, 0, 0))[:3, :3]
    assert _close(arm.com, [0, 0.1, 0]) and _close(arm.inertia_com, R @ np.diag([0.01, 0.01, 0.002]) @ R.T)
    toe = model.frame("toe")  # attached to leg, posed relative to the hip joint (at the mount)
    assert toe.link == "leg" and _close(toe.link_H_frame.matrix, _H((0.1, 0.1, -0.3)))
    assert set(model.frame_names) == {
        *model.link_names,
        "mount",
        "shoulder_mount",
        "shoulder_site",
        "wrist_axis",
        "toe",
    }
    assert model.frame("mount").link == "torso"  # attached to __model__: the canonical link


def test_universal_joint_is_two_joints_through_a_massless_link() -> None:
    model = bridge.load_sdf(SDF / "universal.sdf")
    assert not model.floating and model.base == "base"  # welded to the world
    assert "world_weld" not in model.joint_names
    assert model.dof_names == ("cardan", "cardan" + AXIS2_SUFFIX, "hooke", "hooke" + AXIS2_SUFFIX, "tip_pin")
    first, second = model.joint("cardan"), model.joint("cardan" + AXIS2_SUFFIX)
    assert (first.parent, first.child, second.parent, second.child) == (
        "base",
        "link1__cardan",
        "link1__cardan",
        "link1",
    )
    assert model.link("link1__cardan").mass == 0.0
    assert _close(first.axis, [1, 0, 0]) and _close(second.axis, [0, 1, 0])  # the joint frame's axes
    assert _close(second.axis_origin, [0, 0, 0.05])
    rest = first.parent_H_child.matrix @ second.parent_H_child.matrix
    assert _close(rest, _H((0.1, 0, -0.3), (0.2, 0, 0)))
    # at any position: Rot(axis1, a) fixed in the parent, then Rot(axis2, b) fixed in the child
    a, b = 0.3, -0.7
    H = first.transform(a).matrix @ second.transform(b).matrix
    J = rest @ _H((0, 0, 0.05))  # the joint frame in base: its <pose> in link1
    expected = J @ _H(rpy=(a, 0, 0)) @ bridge.Transform.exp_so3([0, b, 0]).matrix @ np.linalg.inv(J) @ rest
    assert _close(H, expected)


def test_world_file_and_a_movable_joint_to_the_world() -> None:
    with pytest.warns(bridge.SDFWarning, match=r"the world's <physics> are not part of model 'slider'"):
        model = bridge.load_sdf(SDF / "world_slider.sdf")
    assert model.base == "world" and not model.floating and model.link("world").mass == 0.0
    assert model.gravity.tolist() == [0.0, 0.0, -9.81]  # the world's <gravity>
    rail = model.joint("rail")
    # the carriage in the world: the model pose, then its own pose in the model frame
    assert _close(rail.parent_H_child.matrix, _H((0, 0, 0.5), (0, 0, 0.3)) @ _H((0.2, 0, 0)))
    assert _close(rail.axis, [1, 0, 0])  # expressed in __model__, which the carriage's axes are
    with pytest.raises(bridge.SDFError, match="are not part of model"):
        bridge.load_sdf(SDF / "world_slider.sdf", strict=True)


# ------------------------------------------------------------------ options (as load_urdf's)
def test_options_base_joints_locked_floating() -> None:
    path = SDF / "offsets.sdf"
    assert bridge.load_sdf(path, floating=False).nv == bridge.load_sdf(path).nv - 6
    rerooted = bridge.load_sdf(path, base="wheel")
    assert rerooted.base == "wheel" and rerooted.link_names == bridge.load_sdf(path).link_names
    reduced = bridge.load_sdf(path, joints=["tilt", "shoulder"], locked={"slide": 0.1})
    assert reduced.dof_names == ("tilt", "shoulder") and reduced.locked_joints == {"slide": 0.1, "spin": 0.0}
    universal = bridge.load_sdf(SDF / "universal.sdf", floating=True)
    assert universal.floating and universal.base == "base"
    with pytest.raises(bridge.UnknownNameError, match="nolink"):
        bridge.load_sdf(path, base="nolink")
    with pytest.raises(bridge.UnknownNameError):
        bridge.load_sdf(path, joints=["nojoint"])
    with pytest.raises(bridge.ModelError):
        bridge.load_sdf(path, floating="no")
    text = (SDF / "offsets.sdf").read_text()
    order = ("shoulder", "slide", "spin", "tilt")
    assert bridge.load_sdf(text).dof_names == bridge.load_sdf(text.encode()).dof_names == order


def test_mimic_like_load_urdf() -> None:
    mimic = (
        "<mimic joint='a'><multiplier>2</multiplier><offset>0.1</offset><reference>0.05</reference></mimic>"
    )
    body = (
        _link("base")
        + _link("l1")
        + _link("l2")
        + _joint("a", "base", "l1")
        + _joint("b", "base", "l2", inner=f"<axis><xyz>0 1 0</xyz>{mimic}</axis>")
    )
    with pytest.warns(
        bridge.MimicJointWarning, match="joint 'b' is a mimic joint .of 'a'. with multiplier 2 and offset 0"
    ):
        model = bridge.load_sdf(_doc(body))
    assert model.dof_names == ("a", "b")
    coupled = bridge.load_sdf(_doc(body), mimic="coupled")
    assert coupled.dof_names == ("a",)
    (relation,) = coupled.mimics
    assert (relation.multiplier, relation.offset) == (
        2.0,
        pytest.approx(0.1 - 2 * 0.05),
    )  # SDFormat's reference
    with pytest.raises(bridge.UnsupportedError):
        bridge.load_sdf(_doc(body), mimic="error")


def test_legacy_use_parent_model_frame() -> None:
    """SDFormat 1.6: poses in the model frame; an axis in the model frame with use_parent_model_frame."""
    body = (
        _link("a")
        + _link("b", "<pose>0 0 1 0 0 1.5707963267948966</pose>")
        + _joint(
            "j",
            "a",
            "b",
            inner="<axis><xyz>1 0 0</xyz><use_parent_model_frame>true</use_parent_model_frame></axis>",
        )
    )
    j = bridge.load_sdf(_doc(body, version="1.6")).joint("j")
    assert _close(j.axis, [0, -1, 0])  # the model's x in b's axes (b turned by 90 degrees about z)
    j = bridge.load_sdf(_doc(body.replace("true", "false"), version="1.6")).joint("j")
    assert _close(j.axis, [1, 0, 0])


def test_link_without_inertial_has_sdformats_default_inertia() -> None:
    model = bridge.load_sdf(_doc('<link name="a"/><link name="b"/>' + _joint("j", "a", "b")))
    assert model.link("a").mass == 1.0 and _close(model.link("a").inertia.inertia_com, np.eye(3))


def test_load_model_and_cross_validate_read_sdf_by_content(tmp_path) -> None:
    renamed = tmp_path / "robot.model"
    renamed.write_text((SDF / "offsets.sdf").read_text())
    assert bridge.load_model(renamed).dof_names == bridge.load_sdf(renamed).dof_names
    assert bridge.load_model(renamed, floating=False).nv == 4
    from bridge.backends.registry import file_kind, importer

    assert file_kind(renamed) == "sdf" and importer("sdf") is bridge.load_sdf


def test_a_root_after_a_long_comment_is_an_sdf_file(tmp_path) -> None:
    """The kind is read from the root element, however long the comments before it (a licence)."""
    path = tmp_path / "robot.model"
    licence = "<!--" + "Licensed under the Apache License, Version 2.0.\n" * 500 + "-->\n"
    path.write_text(
        '<?xml version="1.0"?>\n' + licence + (SDF / "offsets.sdf").read_text().split("?>", 1)[-1]
    )
    assert len(licence) > 20_000
    from bridge.backends.registry import file_kind

    assert file_kind(path) == "sdf"
    assert bridge.load_model(path).dof_names == bridge.load_sdf(SDF / "offsets.sdf").dof_names


_STEP = "<pose>0 0 0.001 0 0 0.01</pose>"


def _chain(n: int) -> str:
    """A link and ``n`` frames, each attached to the one before (poses relative to it)."""
    frames = "".join(
        f'<frame name="f{i}" attached_to="{"a" if i == 0 else f"f{i - 1}"}">{_STEP}</frame>' for i in range(n)
    )
    return _doc(_link("a") + frames)


def _seconds(n: int) -> tuple[float, bridge.Model]:
    """CPU seconds of this thread loading a chain of ``n`` frames (the garbage collector off: it
    would walk the whole heap of the test process), and the model."""
    import gc
    import time

    text = _chain(n)
    gc.collect()
    gc.disable()
    try:
        start = time.thread_time()
        model = bridge.load_sdf(text)
        return time.thread_time() - start, model
    finally:
        gc.enable()


def test_a_long_chain_of_attached_frames_takes_linear_time() -> None:
    """Each frame's link is found once (memoised): 4,000 chained frames in well under a second (the
    walk from every frame to its link was cubic: 192 s), four times the frames about four times the
    time (cubic: 64 times)."""
    bridge.load_sdf(_chain(10))  # (imports done)
    short, _ = _seconds(1000)
    seconds, model = _seconds(4000)
    assert len(model.frames) == 4000 and model.frame("f3999").link == "a"
    H = model.frame("f3999").link_H_frame
    assert _close(H.translation[2], sum(0.001 for _ in range(4000)), 1e-9)
    assert seconds < 1.0, f"{seconds:.2f} s"
    assert seconds < 10 * max(short, 1e-3), f"4000 frames: {seconds:.3f} s, 1000 frames: {short:.3f} s"


def test_a_cycle_of_attached_frames_is_still_an_error() -> None:
    text = _doc(_link("a") + '<frame name="x" attached_to="y"/><frame name="y" attached_to="z"/>'
                '<frame name="z" attached_to="x"/>')  # fmt: skip
    with pytest.raises(bridge.SDFError, match="attached_to form a cycle 'x' -> 'y' -> 'z' -> 'x'"):
        bridge.load_sdf(text)


# ------------------------------------------------------------------ errors
_GOOD = _link("a") + _link("b") + _joint("j", "a", "b")
BAD = [
    ("<sdf version='1.9'><model name='m'>", bridge.SDFError, "malformed XML"),
    ("<robot name='r'/>", bridge.SDFError, "no <sdf> element"),
    ("<sdf><model name='m'/></sdf>", bridge.SDFError, "no version"),
    ("<sdf version='one'><model name='m'/></sdf>", bridge.SDFError, "not an SDFormat version"),
    ("<sdf version='1.9'/>", bridge.SDFError, "no <model>"),
    (
        "<sdf version='1.9'><model name='a'>"
        + _link("x")
        + "</model><model name='b'>"
        + _link("y")
        + "</model></sdf>",
        bridge.UnsupportedError,
        "2 models ('a', 'b')",
    ),
    (
        "<sdf version='1.9'><include><uri>model://x</uri></include></sdf>",
        bridge.UnsupportedError,
        "<include> of 'model://x'",
    ),
    (
        "<sdf version='1.9'><world name='w'><include><uri>model://ground</uri></include>"
        "<model name='m'>" + _link("a") + "</model></world></sdf>",
        bridge.UnsupportedError,
        "<include>",
    ),
    (
        _doc(_GOOD + "<model name='inner'>" + _link("x") + "</model>"),
        bridge.UnsupportedError,
        "nested <model> 'inner'",
    ),
    (_doc(_GOOD + "<static>true</static>"), bridge.UnsupportedError, "is static"),
    (_doc(""), bridge.SDFError, "has no <link>"),
    (_doc("<link/>"), bridge.SDFError, "a <link> element has no name"),
    (_doc(_link("a") + _link("a")), bridge.SDFError, "duplicate name 'a'"),
    (_doc(_GOOD + "<frame name='a'/>"), bridge.SDFError, "duplicate name 'a' (a link and a frame)"),
    (_doc(_link("__model__")), bridge.SDFError, "reserved"),
    (_doc(_link("a") + _link("b") + _joint("j", "a", "b", kind="screw")), bridge.UnsupportedError, "'screw'"),
    (
        _doc(_link("a") + _link("b") + _joint("j", "a", "b", kind="gearbox")),
        bridge.UnsupportedError,
        "'gearbox'",
    ),
    (
        _doc(_link("a") + _link("b") + _joint("j", "a", "b", kind="revolute2")),
        bridge.UnsupportedError,
        "'revolute2'",
    ),
    (
        _doc(_link("a") + _link("b") + _joint("j", "a", "b", kind="hinge")),
        bridge.UnsupportedError,
        "unknown type 'hinge'",
    ),
    (
        _doc(_link("a") + _link("b") + "<joint name='j' type='fixed'><child>b</child></joint>"),
        bridge.SDFError,
        "joint 'j': no <parent>",
    ),
    (_doc(_link("a") + _link("b") + _joint("j", "a", "c")), bridge.UnknownNameError, "'c'"),
    (_doc(_link("a") + _link("b") + _joint("j", "a", "x::b")), bridge.UnsupportedError, "nested model"),
    (_doc(_link("a") + _joint("j", "a", "a")), bridge.SDFError, "connects link 'a' to itself"),
    (
        _doc(_link("a") + _link("b") + _joint("j", "a", "b") + _joint("k", "b", "a")),
        bridge.SDFError,
        "no root link: the joints form a closed kinematic loop",
    ),
    (
        _doc(_link("a") + _link("b") + _link("c") + _joint("j", "a", "c") + _joint("k", "b", "c")),
        bridge.SDFError,
        "link 'c' has two parents (joints 'j' and 'k'): a closed kinematic loop",
    ),
    (_doc(_link("a", "<pose relative_to='nowhere'/>")), bridge.UnknownNameError, "nowhere"),
    (
        _doc(_link("a", "<pose relative_to='f'/>") + "<frame name='f'><pose relative_to='a'/></frame>"),
        bridge.SDFError,
        "relative_to form a cycle",
    ),
    (
        _doc(_link("a") + "<frame name='f' attached_to='g'/><frame name='g' attached_to='f'/>"),
        bridge.SDFError,
        "attached_to form a cycle",
    ),
    (
        _doc(_link("a", "<pose>0 0 1</pose>")),
        bridge.SDFError,
        "link 'a': <pose>0 0 1</pose> is not 6 finite numbers",
    ),
    (_doc(_link("a", "<pose>0 0 x 0 0 0</pose>")), bridge.SDFError, "is not 6 finite numbers"),
    (_doc(_link("a", "<pose>0 0 nan 0 0 0</pose>")), bridge.SDFError, "is not 6 finite numbers"),
    (_doc(_link("a", "<pose>0 0 1e200 0 0 0</pose>")), bridge.SDFError, "beyond 1e+100"),
    (
        _doc(_link("a", "<pose rotation_format='quat_xyzw'>0 0 0 0 0 0 0</pose>")),
        bridge.SDFError,
        "zero quaternion",
    ),
    (
        _doc(_link("a", "<pose rotation_format='matrix'>0 0 0 0 0 0</pose>")),
        bridge.SDFError,
        "rotation_format='matrix'",
    ),
    (
        _doc(_link("a") + _link("b") + _joint("j", "a", "b", inner="<axis><xyz>0 0 0</xyz></axis>")),
        bridge.SDFError,
        "joint 'j' <axis>: a zero axis",
    ),
    (
        _doc("<link name='a'><inertial><mass>heavy</mass></inertial></link>"),
        bridge.SDFError,
        "link 'a': <mass>heavy</mass> is not 1 finite numbers",
    ),
    (_doc("<link name='a'><inertial/><inertial/></link>"), bridge.SDFError, "2 <inertial> elements"),
    (
        '<sdf version="1.9"><model name="m" canonical_link="zz">' + _link("a") + "</model></sdf>",
        bridge.SDFError,
        "canonical_link 'zz' is not a link",
    ),
    (
        _doc(_link("a") + _link("b") + _joint("j", "b", "world")),
        bridge.SDFError,
        "has the world as its <child>",
    ),
    (_doc(_link("a") + "<frame name='f' attached_to='world'/>"), bridge.SDFError, "attached to the world"),
    (
        _doc(_link("a") + "<joint name='j'><parent>a</parent><child>a</child></joint>"),
        bridge.SDFError,
        "no type",
    ),
    (
        _doc(_link("a") + _link("b") + _joint("j", "a", "b", inner="<axis><xyz>0 0 1</xyz><mimic/></axis>")),
        bridge.SDFError,
        "<mimic> has no joint attribute",
    ),
]


@pytest.mark.parametrize(("text", "error", "message"), BAD, ids=range(len(BAD)))
def test_bad_documents_name_the_file_and_element(text: str, error: type, message: str, tmp_path) -> None:
    path = tmp_path / "bad.sdf"
    path.write_text(text)
    with pytest.raises(error) as info:
        bridge.load_sdf(path)
    assert message in str(info.value), str(info.value)
    assert str(path) in str(info.value), str(info.value)
    with pytest.raises(error):  # the same document as text
        bridge.load_sdf(text)


def test_bad_sources() -> None:
    with pytest.raises(bridge.ModelFileNotFoundError, match="not found"):
        bridge.load_sdf("/no/such/file.sdf")
    with pytest.raises(bridge.ModelFileNotFoundError, match="directory"):
        bridge.load_sdf(SDF)
    with pytest.raises(bridge.ModelFileNotFoundError, match="empty"):
        bridge.load_sdf("  ")
    with pytest.raises(bridge.SDFError, match="expects a file path or SDF XML text, got int"):
        bridge.load_sdf(3)  # type: ignore[arg-type]
    path = SDF / "offsets.sdf"
    for kwargs, match in [
        ({"base": 3}, "base: expected a link name"),
        ({"joints": "tilt"}, "not the string 'tilt'"),
        ({"joints": [1]}, "sequence of joint names"),
        ({"locked": [("tilt", 0.1)]}, "locked must be a mapping"),
        ({"locked": {"tilt": "x"}}, "locked position of joint 'tilt'"),
        ({"mimic": "maybe"}, "mimic must be one of"),
        ({"strict": "yes"}, "strict"),
    ]:
        with pytest.raises(bridge.ModelError, match=match):
            bridge.load_sdf(path, **kwargs)


def test_nonphysical_inertia_warns_or_raises() -> None:
    moments = "<ixx>0.01</ixx><iyy>0.01</iyy><izz>0.05</izz>"  # 0.01 + 0.01 < 0.05
    bad = f"<link name='b'><inertial><mass>1</mass><inertia>{moments}</inertia></inertial></link>"
    text = _doc(_link("a") + bad + _joint("j", "a", "b"))
    with pytest.warns(bridge.NonPhysicalInertiaWarning, match="link 'b'"):
        bridge.load_sdf(text)
    with pytest.raises(bridge.InertiaError, match="link 'b'"):
        bridge.load_sdf(text, strict=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bridge.load_sdf(text, check_inertia=False)


def test_every_truncation_and_element_removal_is_a_bridge_error_or_a_model() -> None:
    """Cut models/sdf/frames.sdf at many places and drop each element in turn: load_sdf either
    loads or raises a bridge error (never a raw exception)."""
    import xml.etree.ElementTree as ET

    text = (SDF / "frames.sdf").read_text()
    variants = [text[:k] for k in range(0, len(text), max(1, len(text) // 60))]
    root = ET.fromstring(text)
    for parent in root.iter():
        for child in list(parent):
            parent.remove(child)
            variants.append(ET.tostring(root, encoding="unicode"))
            parent.insert(0, child)
            if len(variants) > 400:
                break
    for variant in variants:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", bridge.BridgeWarning)
                bridge.load_sdf(variant if variant.strip() else "<")
        except bridge.BridgeError:
            pass


@pytest.mark.parametrize(
    ("name", "error", "match"),
    [
        ("cassie.sdf", bridge.UnsupportedError, "has type 'gearbox'"),
        ("cassie_v2.sdf", bridge.SDFError, "has two parents .*: a closed kinematic loop"),
        ("cassie_reduced.sdf", bridge.SDFError, "has two parents .*: a closed kinematic loop"),
    ],
)
def test_example_robot_data_cassie_is_refused_by_name(name: str, error: type, match: str) -> None:
    """Cassie's SDFs (example-robot-data) have gearbox joints and closed loops (their ball joints
    close the loops)."""
    from importlib import metadata

    try:
        dist = metadata.distribution("example-robot-data")
    except metadata.PackageNotFoundError:
        pytest.skip("example-robot-data is not installed")
    share = Path(dist.locate_file("cmeel.prefix")) / "share" / "example-robot-data"
    path = share / "robots" / "cassie_description" / "robots" / name
    if not path.is_file():
        pytest.skip(f"{path} is not shipped")
    with pytest.raises(error, match=match) as info:
        bridge.load_sdf(path)
    assert str(path) in str(info.value)
