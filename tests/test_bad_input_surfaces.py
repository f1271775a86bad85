"""Hostile input on the surfaces of issue 29 (derivatives, relative quantities, converters, MJCF):
a BridgeError naming the argument, or a finite result; never a crash, a raw exception, a numpy
warning before bridge's error, or a silent NaN."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import bridge
from bridge.backends import registry
from bridge.backends.registry import available_engines

ENGINES = tuple(available_engines())

LINK = '<link name="{}"><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>'  # noqa: E501
ONE_LINK = f'<robot name="one">{LINK.format("a")}</robot>'
WELDED = (
    f'<robot name="welded">{LINK.format("a")}{LINK.format("b")}'
    '<joint name="w" type="fixed"><parent link="a"/><child link="b"/></joint></robot>'
)
REVOLUTE = (
    f'<robot name="r">{LINK.format("a")}{LINK.format("b")}'
    '<joint name="j" type="revolute"><parent link="a"/><child link="b"/><axis xyz="0 0 1"/>'
    '<limit lower="-1" upper="1" effort="1" velocity="1"/></joint></robot>'
)


def load(text: str, **kwargs) -> bridge.Model:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bridge.BridgeWarning)
        return bridge.load_urdf(text, **kwargs)


def at_rest(model: bridge.Model, engine: str) -> bridge.KinDyn:
    kd = bridge.KinDyn(model, engine)
    n = model.n_dofs
    kd.set_state(np.eye(4), np.full(n, 0.1), np.zeros(6), np.full(n, 0.2))
    return kd


# --------------------------------------------------------------------------- 1. no crash
@pytest.mark.parametrize("text", [ONE_LINK, WELDED], ids=["one-link", "welded"])
def test_jacobian_derivative_of_a_model_without_dofs_does_not_crash(text: str) -> None:
    """Pinocchio's getFrameJacobianTimeVariation crashes the interpreter at nv = 0: run in a child
    (every engine but jaxsim, which refuses a model without joints at build)."""
    engines = [e for e in ENGINES if e != "jaxsim"]
    code = textwrap.dedent(
        f"""
        import warnings, numpy as np, bridge
        warnings.simplefilter("ignore")
        model = bridge.load_urdf({text!r}, floating=False)
        for engine in {engines!r}:
            kd = bridge.KinDyn(model, engine)
            kd.set_state(np.eye(4), [], np.zeros(6), [])
            assert kd.frame_jacobian_derivative("a").shape == (6, 0), engine
            derivatives = kd.inverse_dynamics_derivatives(None, []) + kd.forward_dynamics_derivatives([])
            assert all(d.shape == (0, 0) for d in derivatives), engine
        print("done")
        """
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip().endswith("done")


# --------------------------------------------------------------------------- 2. raw exceptions
@pytest.mark.parametrize("engine", ENGINES)
def test_derivative_arguments_are_checked(engine: str) -> None:
    kd = at_rest(load(REVOLUTE), engine)
    with pytest.raises(bridge.InvalidValueError, match="joint_torques: cannot convert"):
        kd.forward_dynamics_derivatives("x")
    with pytest.raises(bridge.ShapeError, match=r"joint_torques: batch shape \(3,\)"):
        kd.forward_dynamics_derivatives(np.zeros((3, 1)))
    with pytest.raises(bridge.ShapeError, match=r"joint_torques: batch shape \(3,\)"):
        kd.forward_dynamics_derivatives(np.zeros((3, 7)))
    with pytest.raises(bridge.InvalidValueError, match="base_acc: cannot convert"):
        kd.inverse_dynamics_derivatives("x", [0.0])


@pytest.mark.parametrize("engine", ENGINES)
def test_frame_names_of_the_wrong_type(engine: str) -> None:
    kd = at_rest(load(REVOLUTE), engine)
    with pytest.raises(bridge.InvalidValueError, match=r"frame: expected a frame name \(str\), got \['b'\]"):
        kd.relative_transform(["b"], "a")
    with pytest.raises(bridge.InvalidValueError, match="frame: expected a frame name"):
        kd.relative_jacobian("b", {"a": 1})
    with pytest.raises(bridge.InvalidValueError, match="frame: expected a frame name"):
        kd.frame_jacobian_derivative(["b"])
    with pytest.raises(bridge.UnknownNameError, match="'bb'"):
        kd.relative_transform("bb", "a")


# --------------------------------------------------------------------------- 3. non-finite results
@pytest.mark.parametrize("engine", ENGINES)
def test_huge_velocities_give_bridges_error_without_numpy_warnings(engine: str) -> None:
    kd = bridge.KinDyn(load(REVOLUTE), engine)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # a numpy warning fails the test
        kd.set_state(np.eye(4), [0.1], np.full(6, 1e200), [1e200])
        too_large = r"is not finite: the float64 products overflow; the inputs are too large"
        if registry.library(engine).rtol > 0:  # a float32 engine (Newton) says so
            too_large = rf"is not finite: the {engine} engine computes in float32 .* the inputs are too large"
        for query in (
            lambda: kd.inverse_dynamics_derivatives(np.zeros(6), [0.0]),
            lambda: kd.forward_dynamics_derivatives([0.0]),
            lambda: kd.forward_dynamics([0.0]),
            lambda: kd.inverse_dynamics(np.zeros(6), [0.0]),
            kd.bias_forces,
            lambda: kd.frame_bias_acc("b"),
        ):
            with pytest.raises(bridge.InvalidValueError, match=too_large):
                query()
        with pytest.raises(bridge.InvalidValueError, match="inverse_dynamics_derivatives of model 'r'"):
            kd.inverse_dynamics_derivatives(np.zeros(6), [0.0])


@pytest.mark.parametrize("junk", [None, "x", 3, 1.5])
def test_converters_refuse_what_is_not_their_input(junk: object) -> None:
    model = load(REVOLUTE)
    state = bridge.State(np.eye(4), [0.0], np.zeros(6), [0.0])
    for library in ("mujoco", "drake"):  # the converters bridge re-exports for the optional libraries
        if library not in ENGINES:
            continue
        to_model, from_model = getattr(bridge, f"to_{library}"), getattr(bridge, f"from_{library}")
        to_state, from_state = (
            getattr(bridge, f"to_{library}_state"),
            getattr(bridge, f"from_{library}_state"),
        )
        with pytest.raises(bridge.BackendError, match=f"to_{library} expects a bridge Model"):
            to_model(junk)
        with pytest.raises(bridge.BackendError, match=f"from_{library} expects a"):
            from_model(junk)
        with pytest.raises(bridge.StateError, match="model: expected a bridge Model"):
            to_state(junk, state)
        with pytest.raises(bridge.StateError, match="expected a bridge State"):
            to_state(model, junk)
        with pytest.raises(bridge.StateError, match="model: expected a bridge Model"):
            from_state(junk, np.zeros(8), np.zeros(7))
    if "mujoco" in ENGINES:
        for loader in (bridge.load_mjcf, bridge.load_model):
            if not isinstance(junk, str):
                with pytest.raises(
                    bridge.ModelFileNotFoundError, match=f"{loader.__name__}: expected a file path"
                ):
                    loader(junk)


@pytest.mark.skipif("mujoco" not in ENGINES, reason="needs the mujoco extra")
def test_to_mujoco_gravity_and_an_mjcf_model_name_that_is_not_utf8(tmp_path) -> None:
    model = load(REVOLUTE)
    with pytest.raises(bridge.InvalidValueError, match="to_mujoco: gravity: cannot convert"):
        bridge.to_mujoco(model, gravity="down")
    with pytest.raises(bridge.ShapeError, match="to_mujoco: gravity: expected shape"):
        bridge.to_mujoco(model, gravity=[1.0, 2.0])
    with pytest.raises(bridge.InvalidValueError, match="to_mujoco: gravity: contains NaN"):
        bridge.to_mujoco(model, gravity=[np.nan, 0.0, 0.0])
    path = tmp_path / "latin1.xml"
    path.write_bytes(
        b'<mujoco model="r\xf6bot"><worldbody><body name="b"><freejoint/><geom size="0.1"/></body>'
        b"</worldbody></mujoco>"
    )
    assert bridge.load_mjcf(path).name.startswith("r")
