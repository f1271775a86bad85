"""Drake's own URDF parser next to bridge's loader (bridge.backends.drake.native): the same physical
states give the same M, h and g to 1e-10, or a finding explains the difference."""

from __future__ import annotations

import logging

import pytest

pytest.importorskip("pydrake", reason="Drake is not installed (pip install 'bridge-dynamics[drake]')")

from bridge.backends.drake.native import compare_native
from bridge.robots import robot_path


@pytest.fixture(autouse=True)
def _quiet_drake():
    """Drake's parser logs a warning per non-physical inertia; keep the test output readable."""
    logger = logging.getLogger("drake")
    level = logger.level
    logger.setLevel(logging.ERROR)
    yield
    logger.setLevel(level)


@pytest.mark.parametrize(
    ("name", "finding"),
    [
        ("iCubGazeboV2_5", "<dynamics damping> of 32 joints"),
        ("solo12", "named 'base_link' for the free base 'base_link'"),
        ("panda", "constraints (mimic joints as couplers"),
        ("ur5_robot", "the URDF link 'world' is Drake's world body"),
        ("double_pendulum_continuous", "joint damping"),
    ],
)
def test_drake_parser_agrees_with_bridge(name: str, finding: str) -> None:
    report = compare_native(robot_path(name))
    assert report.ok, str(report)
    assert any(finding in f for f in report.findings), str(report)


def test_nonphysical_inertias_are_a_finding() -> None:
    report = compare_native(robot_path("anymal_c_simple_description/anymal"))
    assert not report.ok
    assert report.max_rel["gravity_forces"] < 1e-10  # masses and centres of mass agree
    assert any("replaces the rotational inertia of 'depth_camera_front_camera'" in f for f in report.findings)


def test_parser_refusal_is_a_finding() -> None:
    report = compare_native(robot_path("talos_reduced"))
    assert not report.ok and not report.max_rel
    assert any("refuses the file" in f and "cannot mimic" in f for f in report.findings), str(report)
