"""A model file format registered at run time is read and written everywhere, with no other edit.

The toy format (root element ``<toy>``, suffix ``.toy``) wraps a URDF document: its reader unwraps
it and hands it to ``load_urdf`` with the loading options, its writer wraps ``model_to_urdf``'s text.
One :func:`bridge.model.formats.register_format` call, and ``bridge info``, ``bridge convert`` (in
and out), ``bridge check``, :func:`bridge.load_model` and the registry's ``importer`` / ``exporter``
take it; unregistered, it is gone from all of them.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import bridge
from bridge.backends import registry
from bridge.model import formats
from tests.cli.runner import MODELS, run

OFFSETS = MODELS / "offsets.urdf"
TOY = formats.Format(
    name="toy",
    title="TOY",
    description="a URDF document inside a <toy> element (a test's format)",
    root="toy",
    suffixes=(".toy",),
    reader=f"{__name__}:read_toy",
    writer=f"{__name__}:write_toy",
    options=True,
)


def read_toy(path: str | Path, **options: object) -> bridge.Model:
    """The model of a toy file: its URDF, read with ``load_urdf``'s options."""
    root = ET.parse(path).getroot()
    return bridge.load_urdf(ET.tostring(root[0], encoding="unicode"), **options)


def write_toy(model: bridge.Model) -> str:
    """The toy file of ``model``: its URDF inside ``<toy>``."""
    from bridge.model.urdf_writer import model_to_urdf

    urdf = ET.fromstring(model_to_urdf(model).encode("utf-8"))
    toy = ET.Element("toy")
    toy.append(urdf)
    return ET.tostring(toy, encoding="unicode") + "\n"


@pytest.fixture
def toy() -> Iterator[formats.Format]:
    formats.register_format(TOY)
    try:
        yield TOY
    finally:
        formats.unregister_format("toy")


def _same(a: bridge.Model, b: bridge.Model) -> None:
    assert a.dof_names == b.dof_names and a.base == b.base and a.link_names == b.link_names
    for la, lb in zip(a.links, b.links, strict=True):
        np.testing.assert_allclose(la.inertia.as_matrix(), lb.inertia.as_matrix(), rtol=1e-12, atol=1e-14)
    for ja, jb in zip(a.joints, b.joints, strict=True):
        assert (ja.name, ja.parent, ja.child) == (jb.name, jb.parent, jb.child)
        np.testing.assert_allclose(
            np.asarray(ja.parent_H_child.as_matrix()), np.asarray(jb.parent_H_child.as_matrix()), atol=1e-14
        )


def test_convert_info_check_and_load_model_take_a_format_registered_at_run_time(
    toy: formats.Format, tmp_path: Path
) -> None:
    out = tmp_path / "robot.toy"
    res = run("convert", str(OFFSETS), "-o", str(out), "--base", "wheel")
    assert res.exit_code == 0, res.output
    assert formats.file_kind(out) == "toy" and out.read_text().startswith("<toy>")
    urdf = bridge.load_urdf(OFFSETS, base="wheel").to_urdf()  # what the toy file wraps
    expected = bridge.load_urdf(urdf)
    _same(bridge.load_model(out), expected)
    # the loading options reach the table's reader, as for URDF
    _same(bridge.load_model(out, joints=["spin"]), bridge.load_urdf(urdf, joints=["spin"]))
    assert registry.importer("toy") is read_toy and registry.exporter("toy") is write_toy

    res = run("info", str(out), "--joints", "spin")
    assert res.exit_code == 0, res.output
    assert "spin" in res.output and "tilt" not in res.output.split("DOF order")[1]

    res = run("check", str(out), "--samples", "1", "--engines", "featherstone")
    assert res.exit_code == 0, res.output

    back = tmp_path / "back.urdf"  # and out of it, into a format of the table
    res = run("convert", str(out), "-o", str(back))
    assert res.exit_code == 0, res.output
    _same(bridge.load_urdf(back), bridge.load_urdf(expected.to_urdf()))
    # the file is told by its content: a toy file named .urdf is still read as toy
    renamed = tmp_path / "toy_inside.urdf"
    renamed.write_text(out.read_text())
    _same(bridge.load_model(renamed), expected)


def test_the_suffix_and_kind_errors_name_the_file_and_every_format(
    toy: formats.Format, tmp_path: Path
) -> None:
    out = tmp_path / "robot.txt"
    res = run("convert", str(OFFSETS), "-o", str(out))
    assert (
        res.exit_code == 2 and res.output.startswith("error: ") and len(res.output.strip().splitlines()) == 1
    )
    for text in (str(out), "'.txt'", ".urdf (URDF)", ".sdf (SDFormat)", ".xml/.mjcf (MJCF)", ".toy (TOY)"):
        assert text in res.output.replace("\n", ""), res.output
    assert not out.exists()
    with pytest.raises(
        bridge.InvalidValueError, match=r"unknown model file kind 'usd'; known: urdf, sdf, mjcf, toy"
    ):
        registry.importer("usd")


def test_a_format_unregistered_is_gone_everywhere(tmp_path: Path) -> None:
    formats.register_format(TOY)
    try:
        out = tmp_path / "robot.toy"
        assert run("convert", str(OFFSETS), "-o", str(out)).exit_code == 0
    finally:
        formats.unregister_format("toy")
    assert formats.file_kind(out) is None
    res = run("info", str(out))  # read as URDF, whose reader names the root element it found
    assert res.exit_code == 2 and "toy" in res.output, res.output
    res = run("convert", str(OFFSETS), "-o", str(tmp_path / "again.toy"))
    assert res.exit_code == 2 and "'.toy'" in res.output, res.output
    with pytest.raises(bridge.InvalidValueError, match="unknown model file kind 'toy'"):
        registry.exporter("toy")


def test_a_format_without_the_loading_options_refuses_them_by_name(tmp_path: Path) -> None:
    """``options=False``: the table says the reader takes none, so each command and load_model
    refuse them, naming the flags and the formats that take them."""
    import dataclasses

    formats.register_format(dataclasses.replace(TOY, options=False, reader=f"{__name__}:read_toy_plain"))
    try:
        out = tmp_path / "robot.toy"
        assert run("convert", str(OFFSETS), "-o", str(out)).exit_code == 0
        _same(bridge.load_model(out), bridge.load_urdf(bridge.load_urdf(OFFSETS).to_urdf()))
        for command in (["info"], ["convert", "-o", str(tmp_path / "x.urdf")]):
            res = run(command[0], str(out), *command[1:], "--base", "wheel", "--strict")
            assert res.exit_code == 2, res.output
            assert "--base, --strict apply to URDF files only (and to SDFormat files)" in res.output
        with pytest.raises(bridge.ModelError, match="read as TOY: base applies to URDF files only"):
            bridge.load_model(out, base="wheel")
    finally:
        formats.unregister_format("toy")


def read_toy_plain(path: str | Path) -> bridge.Model:
    """A toy reader taking no loading options."""
    return read_toy(path)
