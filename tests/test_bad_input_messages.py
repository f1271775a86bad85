"""Issue 29: BridgeWarnings point at the caller's line, and messages about bad input name the file and
the body or joint (NaN/inf or huge values in MJCF, zero total mass, a model without DOF)."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

import bridge
from bridge.backends.registry import available_engines

ENGINES = tuple(available_engines())
MODELS = Path(__file__).resolve().parents[1] / "models"
needs_mujoco = pytest.mark.skipif("mujoco" not in ENGINES, reason="needs the mujoco extra")


def _warnings_of(load, path: Path) -> list[warnings.WarningMessage]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        load(path)
    bridge_warnings = [w for w in caught if issubclass(w.category, bridge.BridgeWarning)]
    assert bridge_warnings, f"{path.name} gives no BridgeWarning any more: pick another file"
    return bridge_warnings


@pytest.mark.parametrize(
    ("loader", "name"),
    [
        ("load_urdf", "mimic_offsets.urdf"),
        ("load_urdf", "bad/not_positive_inertia.urdf"),
        ("load_model", "mimic_offsets.urdf"),
        ("load_model", "bad/triangle_inertia.urdf"),
        pytest.param("load_mjcf", "mjcf/arm.xml", marks=needs_mujoco),
        pytest.param("load_model", "mjcf/arm.xml", marks=needs_mujoco),
        pytest.param("load_model", "mjcf/site_names.xml", marks=needs_mujoco),
    ],
)
def test_load_warnings_point_at_the_callers_line(loader: str, name: str) -> None:
    for w in _warnings_of(getattr(bridge, loader), MODELS / name):
        assert w.filename == __file__, (w.filename, w.lineno, str(w.message))


# --------------------------------------------------------------------------- MJCF values named
def _mjcf(tmp_path: Path, body: str = 'pos="0 0 1"', joint: str = "", inertial: str = 'mass="1"') -> Path:
    path = tmp_path / "m.xml"
    path.write_text(
        f'<mujoco model="m"><worldbody><body name="arm" {body}><joint name="hinge" axis="0 0 1" {joint}/>'
        f'<inertial pos="0 0 0" {inertial} diaginertia="0.1 0.1 0.1"/></body></worldbody></mujoco>'
    )
    return path


@needs_mujoco
@pytest.mark.parametrize(
    ("edit", "named"),
    [
        ({"body": 'pos="0 nan 1"'}, ["body 'arm'", "pos", "not finite"]),
        ({"body": 'pos="0 inf 1"'}, ["body 'arm'", "pos", "not finite"]),
        ({"body": 'quat="1 0 nan 0"'}, ["body 'arm'", "quat", "not finite"]),
        ({"joint": 'ref="nan"'}, ["joint 'hinge'", "ref", "not finite"]),
        ({"joint": 'ref="inf"'}, ["joint 'hinge'", "ref", "not finite"]),
        ({"inertial": 'mass="1e308"'}, ["body 'arm'", "mass", "beyond 1e+100"]),
    ],
)
def test_bad_mjcf_values_are_refused_at_load_naming_file_and_element(
    tmp_path: Path, edit: dict[str, str], named: list[str]
) -> None:
    path = _mjcf(tmp_path, **edit)
    with pytest.raises(bridge.BridgeError) as info:
        bridge.load_mjcf(path)
    message = str(info.value)
    assert str(path) in message
    for fragment in named:
        assert fragment in message, message


def _c_output(capfd) -> str:
    """What was written on the file descriptors 1 and 2 so far, C's buffered stdout flushed first."""
    import ctypes

    ctypes.CDLL(None).fflush(None)
    out, err = capfd.readouterr()
    return out + err


@needs_mujoco
def test_c_output_is_seen_by_these_tests(tmp_path: Path, capfd) -> None:
    """MuJoCo's parser itself prints its NaN warning (so the tests below would see it leak)."""
    import mujoco

    _c_output(capfd)
    with pytest.raises(ValueError):
        mujoco.MjModel.from_xml_path(str(_mjcf(tmp_path, inertial='mass="nan"')))
    assert "XML contains a 'NaN'" in _c_output(capfd)


@needs_mujoco
@pytest.mark.parametrize(
    ("edit", "named"),
    [
        ({"body": 'pos="0 nan 1"'}, "body 'arm': pos = '0 nan 1' is not finite"),
        ({"inertial": 'mass="nan"'}, "body 'arm': mass = 'nan' is not finite"),
        ({"joint": 'ref="nan"'}, "joint 'hinge' on body 'arm': ref = 'nan' is not finite"),
        ({"joint": 'armature="nan"'}, "joint 'hinge': armature must be finite"),
    ],
)
@pytest.mark.parametrize("loader", ["load_mjcf", "load_model"])
def test_a_nan_in_mjcf_gives_bridges_error_and_nothing_else(
    tmp_path: Path, capfd, loader: str, edit: dict[str, str], named: str
) -> None:
    """MuJoCo's own "XML contains a 'NaN'" line does not print: only bridge's error, naming the file,
    the element and the attribute (also where MuJoCo's compiler then fails about something else)."""
    path = _mjcf(tmp_path, **edit)
    _c_output(capfd)
    with pytest.raises(bridge.BridgeError) as info:
        getattr(bridge, loader)(path)
    assert _c_output(capfd) == ""
    assert str(path) in str(info.value) and named in str(info.value)


@needs_mujoco
def test_a_nan_bridge_does_not_read_is_a_warning_not_a_print(tmp_path: Path, capfd) -> None:
    path = _mjcf(tmp_path, joint='damping="nan"')
    _c_output(capfd)
    with pytest.warns(bridge.BridgeWarning, match="XML contains a 'NaN'") as caught:
        bridge.load_mjcf(path)
    assert _c_output(capfd) == ""
    assert any(str(path) in str(w.message) and w.filename == __file__ for w in caught)


# --------------------------------------------------------------------------- zero mass, no DOF
LINK = '<link name="{}"><inertial><mass value="{}"/><inertia ixx="{i}" iyy="{i}" izz="{i}" ixy="0" ixz="0" iyz="0"/></inertial></link>'  # noqa: E501
MASSLESS = (
    f'<robot name="massless">{LINK.format("a", 0, i=0)}{LINK.format("b", 0, i=0)}'
    '<joint name="j" type="continuous"><parent link="a"/><child link="b"/><axis xyz="0 0 1"/></joint></robot>'
)
ONE_LINK = f'<robot name="one">{LINK.format("a", 1, i=0.1)}</robot>'
MASS_QUERIES = (
    "com_position",
    "com_velocity",
    "com_jacobian",
    "centroidal_momentum",
    "centroidal_momentum_matrix",
    "total_momentum",
    "total_momentum_jacobian",
)


def _at_rest(text: str, engine: str, floating: bool) -> bridge.KinDyn:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bridge.BridgeWarning)
        model = bridge.load_urdf(text, floating=floating)
    kd = bridge.KinDyn(model, engine)
    n = model.n_dofs
    kd.set_state(np.eye(4), np.full(n, 0.1), np.zeros(6), np.full(n, 0.2))
    return kd


# MuJoCo and jaxsim (whose parser drops massless links) refuse it at build
@pytest.mark.parametrize("engine", [e for e in ENGINES if e not in ("mujoco", "jaxsim")])
@pytest.mark.parametrize("floating", [True, False])
def test_zero_total_mass_says_so(engine: str, floating: bool) -> None:
    kd = _at_rest(MASSLESS, engine, floating)
    for query in MASS_QUERIES:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no numpy warning before bridge's error
            with pytest.raises(bridge.InvalidValueError, match="total mass is zero") as info:
                getattr(kd, query)()
        assert query in str(info.value) and "'massless'" in str(info.value)
        assert "limitation" not in str(info.value)


@pytest.mark.parametrize("engine", [e for e in ENGINES if e != "jaxsim"])  # jaxsim needs a joint
def test_fixed_base_without_dof_com_and_momenta_answer_or_say_why(engine: str) -> None:
    kd = _at_rest(ONE_LINK, engine, floating=False)
    for query in ("com_position", "com_velocity", "centroidal_momentum", "total_momentum"):
        try:
            value = getattr(kd, query)()
        except bridge.InvalidValueError as exc:
            assert "fixed base and no DOF" in str(exc), str(exc)
        else:
            assert np.isfinite(value).all()


@needs_mujoco
@pytest.mark.parametrize("element", ["body", "joint", "site"])
def test_an_mjcf_name_that_is_not_utf8_is_refused_naming_it(tmp_path: Path, element: str) -> None:
    """MuJoCo keeps a name's bytes as the file has them (latin-1 here); bridge's names are text: a
    ModelError naming the file, the element and the bytes, in Python and on the command line."""
    names = {"body": b"b", "joint": b"j", "site": b"s"}
    names[element] = b"r\xe9gion"
    path = tmp_path / "latin1.xml"
    path.write_bytes(
        b'<mujoco model="m"><worldbody><body name="' + names["body"] + b'"><freejoint/>'
        b'<inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/><body name="c" pos="0 0 0.1"><joint name="'
        + names["joint"]
        + b'" type="hinge"/><inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/><site name="'
        + names["site"]
        + b'"/></body></body></worldbody></mujoco>'
    )
    for loader in (bridge.load_mjcf, bridge.load_model):
        with pytest.raises(bridge.ModelError, match=rf"latin1\.xml: the name of {element} \d+ is not UTF-8"):
            loader(path)
    from tests.cli.runner import run

    res = run("info", str(path))
    assert res.exit_code == 2 and len(res.output.strip().splitlines()) == 1, res.output
    assert "r\\xe9gion" in res.output
