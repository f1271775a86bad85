"""Default loading accepts what Pinocchio's and iDynTree's loaders accept, with warnings; strict=True
refuses it; robots load by name; the XML declaration's version is tolerated."""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path

import pinocchio as pin
import pytest

import bridge
from bridge.model.urdf import load_urdf
from bridge.robots import robot_path

MODELS = Path(__file__).resolve().parents[2] / "models"
ROBOT = """<?xml version="0.0" ?>
<robot name="dog">
  <link name="a"><inertial><mass value="1"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
  <link name="b"><inertial><mass value="1"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
  <joint name="j" type="revolute"><parent link="a"/><child link="b"/><axis xyz="0 0 1"/>
    <limit effort="1" velocity="1"/></joint>
</robot>
"""


def _bridge_warnings(record) -> list[str]:
    return [str(w.message) for w in record if issubclass(w.category, bridge.BridgeWarning)]


def test_warning_classes() -> None:
    for cls in (bridge.NonPhysicalInertiaWarning, bridge.MimicJointWarning, bridge.URDFWarning):
        assert issubclass(cls, bridge.BridgeWarning) and issubclass(cls, UserWarning)
    assert not issubclass(bridge.BridgeWarning, bridge.BridgeError)


@pytest.mark.parametrize("version", ["0.0", "2.0", ""])
def test_bogus_xml_declaration_is_tolerated(tmp_path: Path, version: str) -> None:
    path = tmp_path / "dog.urdf"
    path.write_text(ROBOT.replace('"0.0"', f'"{version}"'))
    pin.buildModelFromUrdf(str(path))  # the libraries read it
    with pytest.warns(bridge.URDFWarning) as record:
        model = load_urdf(path)
    assert model.dof_names == ("j",)
    (message,) = _bridge_warnings(record)
    assert message == (
        f"{path}: the XML declaration says version {version!r}, which is not an XML version (read as XML 1.0)"
    )
    for text in message, str(record[0].message):
        assert "yourdfpy" not in text and "parsing approach" not in text
    with pytest.raises(bridge.URDFError, match="the XML declaration says version"):
        load_urdf(path, strict=True)
    # as bytes too, and a correct declaration gives no warning
    with pytest.warns(bridge.URDFWarning):
        load_urdf(path.read_bytes())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_urdf(ROBOT.replace('"0.0"', '"1.0"').encode())


def test_no_message_names_the_parsing_dependency(tmp_path: Path) -> None:
    for name in sorted(p.name for p in (MODELS / "bad").glob("*.urdf")):
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            try:
                load_urdf(MODELS / "bad" / name, strict=name == "mimic.urdf")
            except bridge.BridgeError as exc:
                assert "yourdfpy" not in str(exc), str(exc)
        for w in record:
            assert "yourdfpy" not in str(w.message)


def test_check_inertia_false_silences_inertia_warnings() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_urdf(MODELS / "bad" / "triangle_inertia.urdf", check_inertia=False)
        load_urdf(MODELS / "bad" / "mimic.urdf", mimic="independent")
        load_urdf(MODELS / "bad" / "mimic.urdf", mimic="independent", strict=True)


def test_warnings_can_be_errors_through_the_warnings_filter() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", bridge.BridgeWarning)
        with pytest.raises(bridge.NonPhysicalInertiaWarning, match="link 'bad_link': principal moments"):
            load_urdf(MODELS / "bad" / "triangle_inertia.urdf")


def test_mimic_modes_and_their_messages() -> None:
    path = MODELS / "bad" / "mimic.urdf"
    with pytest.warns(
        bridge.MimicJointWarning, match=r"joint 'finger2_joint' is a mimic joint \(of 'finger1_"
    ):
        assert load_urdf(path).dof_names == ("finger1_joint", "finger2_joint")
    with pytest.raises(bridge.UnsupportedError, match="mimic='error' rejects mimic joints"):
        load_urdf(path, mimic="error")
    with pytest.raises(bridge.UnsupportedError, match="strict loading needs mimic='independent'"):
        load_urdf(path, strict=True)
    assert load_urdf(path, mimic="coupled", strict=True).dof_names == ("finger1_joint",)


def test_mimic_on_fixed_or_unknown_joints(tmp_path: Path) -> None:
    text = (MODELS / "bad" / "mimic.urdf").read_text()
    fixed = text.replace('name="finger2_joint" type="prismatic"', 'name="finger2_joint" type="fixed"')
    with pytest.warns(bridge.MimicJointWarning, match="it is a fixed joint, so the <mimic> element has no"):
        assert load_urdf(fixed).dof_names == ("finger1_joint",)
    assert load_urdf(fixed, mimic="coupled").dof_names == ("finger1_joint",)  # nothing to couple
    unknown = text.replace('<mimic joint="finger1_joint"/>', '<mimic joint="ghost"/>')
    with pytest.warns(bridge.MimicJointWarning, match="its master is not a joint of the robot"):
        load_urdf(unknown)
    with pytest.raises(bridge.URDFError, match="mimic='coupled' cannot keep the relation: its master is not"):
        load_urdf(unknown, mimic="coupled")
    bad = text.replace('<mimic joint="finger1_joint"/>', '<mimic joint="finger1_joint" multiplier="x"/>')
    with pytest.raises(bridge.URDFError, match="<mimic multiplier='x'> is not a finite number"):
        load_urdf(bad)


def test_robots_load_by_name() -> None:
    model = bridge.load_urdf("iCubGazeboV2_5")
    assert model.name == "iCub" and model.n_dofs == 32
    assert (
        bridge.load_urdf("talos", mimic="independent").n_dofs == bridge.load_urdf(robot_path("talos")).n_dofs
    )
    assert bridge.robots.robot_path("panda") == robot_path("panda")
    assert "panda" in bridge.robot_names() and bridge.robot_path("icub") == robot_path("iCubGazeboV2_5")
    with pytest.raises(
        bridge.ModelFileNotFoundError, match=r"not found: 'pandaa' \(nor a robot name; did you mean 'panda'"
    ):
        bridge.load_urdf("pandaa")
    with pytest.raises(bridge.ModelFileNotFoundError, match=r"^URDF file not found: 'nope/robot\.urdf'$"):
        bridge.load_urdf("nope/robot.urdf")


def test_import_bridge_stays_light() -> None:
    code = (
        "import sys, bridge\n"
        "bridge.robots\n"
        "heavy = {'pinocchio', 'idyntree', 'yourdfpy', 'icub_models'} & set(sys.modules)\n"
        "print(sorted(heavy))"
    )
    env_path = str(Path(__file__).resolve().parents[2])
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env={"PYTHONPATH": env_path}
    )
    assert out.stdout.strip() == "[]"
