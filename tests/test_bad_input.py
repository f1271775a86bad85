"""Every bad input of issue 21 gives a BridgeError naming what is wrong, or a correct result.

One test per case: URDF values that load and then used to break an engine, API misuse, and the
slightly non-orthonormal base rotation. (The command line is tested in tests/test_cli_misuse.py,
random misuse of every public function in tests/test_bad_input_properties.py.)
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import bridge
from bridge.model.massless import diagonal_mass_entries
from bridge.validation.check import random_states
from tests.helpers import assert_close

ENGINES = ("pinocchio", "idyntree", "featherstone")

TEMPLATE = """<robot name="r">
  <link name="a"><inertial><mass value="1"/>
    <inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="b"><inertial><origin xyz="{com}"/><mass value="{mass}"/>
    <inertia ixx="{ixx}" iyy="{iyy}" izz="{izz}" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="j" type="revolute"><parent link="a"/><child link="b"/><origin xyz="0 0 0.1"/>
    <axis xyz="0 0 1"/><limit {limit}/></joint>
</robot>"""


def urdf(
    com: str = "0.1 0 0",
    mass: str = "1",
    ixx: str = "0.1",
    iyy: str = "0.1",
    izz: str = "0.1",
    limit: str = 'lower="-1" upper="1" effort="5" velocity="1"',
) -> str:
    return TEMPLATE.format(com=com, mass=mass, ixx=ixx, iyy=iyy, izz=izz, limit=limit)


def load(text: str, **kwargs) -> bridge.Model:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bridge.BridgeWarning)
        return bridge.load_urdf(text, **kwargs)


def kindyn(model: bridge.Model, engine: str, rep: str = "mixed") -> bridge.KinDyn:
    kd = bridge.KinDyn(model, engine, rep)
    kd.set_state(np.eye(4), np.zeros(model.n_dofs), np.zeros(6), np.zeros(model.n_dofs))
    return kd


@pytest.fixture(scope="module")
def model() -> bridge.Model:
    return load(urdf())


# --------------------------------------------------------------------------- URDF values
@pytest.mark.parametrize("attr", ["effort", "velocity"])
def test_negative_effort_or_velocity_loads_with_a_warning_and_every_engine_works(attr: str) -> None:
    limit = 'lower="-1" upper="1" effort="5" velocity="1"'.replace(f'{attr}="', f'{attr}="-')
    with pytest.warns(bridge.URDFWarning, match=rf"joint 'j': <limit {attr}=-\d.*> is negative"):
        model = bridge.load_urdf(urdf(limit=limit))
    with pytest.raises(bridge.URDFError, match=rf"joint 'j': <limit {attr}="):
        bridge.load_urdf(urdf(limit=limit), strict=True)
    for engine in ENGINES:
        assert np.all(np.isfinite(kindyn(model, engine).forward_dynamics(np.ones(1))))
    assert getattr(bridge.to_pinocchio(model), f"{attr}Limit")[-1] > 1e300  # no limit


def test_lower_above_upper_loads_with_a_warning_and_cross_validates() -> None:
    text = urdf(limit='lower="1" upper="-1" effort="5" velocity="1"')
    with pytest.warns(bridge.URDFWarning, match=r"joint 'j': <limit lower=1.0 upper=-1.0> has lower > upper"):
        model = bridge.load_urdf(text)
    with pytest.raises(bridge.URDFError, match="lower > upper"):
        bridge.load_urdf(text, strict=True)
    s = random_states(model, 50, np.random.default_rng(0)).s
    assert np.all(np.abs(s) <= np.pi) and np.ptp(s) > 2.0  # read as no limits
    assert bridge.cross_validate(model, samples=2, representations=["mixed"]).ok


@pytest.mark.parametrize(
    ("attrs", "field"),
    [
        ({"iyy": "1e308"}, "iyy='1e308'"),
        ({"izz": "1e308"}, "izz='1e308'"),
        ({"ixx": "1e200", "iyy": "1e200", "izz": "1e200"}, "ixx='1e200'"),
        ({"mass": "1e150"}, "value='1e150'"),
        ({"com": "1e120 0 0"}, "xyz='1e120 0 0'"),
    ],
)
def test_huge_inertial_values_are_refused_at_load(attrs: dict, field: str) -> None:
    with pytest.raises(bridge.URDFError, match=rf"link 'b': <\w+ {field}> is beyond 1e\+100"):
        bridge.load_urdf(urdf(**attrs))


def test_point_mass_on_the_joint_axis_is_a_massless_dof() -> None:
    # the child's mass sits on the z axis of joint j, with no moment of inertia: M = [0]
    model = load(urdf(com="0 0 0.3", ixx="0", iyy="0", izz="0"), floating=False)
    assert model.massless_dofs == ("j",)
    for engine in ENGINES:
        kd = kindyn(model, engine)
        np.testing.assert_allclose(kd.mass_matrix(), [[0.0]], atol=1e-15)
        with pytest.raises(bridge.SingularMassMatrixError, match="move no inertia: j"):
            kd.forward_dynamics(np.ones(1))
    report = bridge.cross_validate(model, samples=2)
    assert report.ok
    assert [f.cause for f in report.findings] == ["singular mass matrix"]
    assert report.findings[0].subjects == ("j",)
    # off the axis, or with a moment of inertia about it, the joint moves inertia
    assert load(urdf(com="1e-3 0 0.3", ixx="0", iyy="0", izz="0"), floating=False).massless_dofs == ()
    assert load(urdf(com="0 0 0.3", ixx="1e-4", iyy="1e-4", izz="1e-4"), floating=False).massless_dofs == ()


def test_massless_dofs_see_mass_moved_off_the_axis_by_a_joint_further_down() -> None:
    # b is a point mass on j's axis, but c (moved by k) is off it at most configurations
    text = urdf(com="0 0 0.3", ixx="0", iyy="0", izz="0").replace(
        "</robot>",
        '<link name="c"><inertial><origin xyz="0 0 0"/><mass value="1"/>'
        '<inertia ixx="0" iyy="0" izz="0" ixy="0" ixz="0" iyz="0"/></inertial></link>'
        '<joint name="k" type="prismatic"><parent link="b"/><child link="c"/><axis xyz="1 0 0"/>'
        '<limit lower="-1" upper="1" effort="1" velocity="1"/></joint></robot>',
    )
    model = load(text, floating=False)
    assert model.massless_dofs == ()  # singular only at k = 0
    diag, _ = diagonal_mass_entries(model, np.array([[0.3, 0.0], [0.3, 0.5]]))
    np.testing.assert_allclose(diag[:, 0], [0.0, 0.25], atol=1e-15)


def test_massless_dofs_match_the_engines_mass_matrix_diagonal(model: bridge.Model) -> None:
    s = np.array([[0.7]])
    diag, _ = diagonal_mass_entries(model.with_fixed_base(), s)
    kd = bridge.KinDyn(model.with_fixed_base(), "pinocchio")
    kd.set_state(np.eye(4), s[0], np.zeros(6), np.zeros(1))
    np.testing.assert_allclose(diag[0], np.diagonal(kd.mass_matrix()), rtol=1e-12)


def test_singular_mass_matrix_without_a_massless_dof_is_an_error_in_every_engine() -> None:
    # two coaxial joints in a row with a massless link between them: M = [[I, I], [I, I]]
    text = urdf(mass="0", ixx="0", iyy="0", izz="0").replace(
        "</robot>",
        '<link name="c"><inertial><origin xyz="0.2 0 0"/><mass value="1"/>'
        '<inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>'
        '<joint name="k" type="continuous"><parent link="b"/><child link="c"/><axis xyz="0 0 1"/></joint>'
        "</robot>",
    )
    model = load(text, floating=False)
    assert model.massless_dofs == ()
    for engine in ENGINES:
        with pytest.raises(bridge.SingularMassMatrixError, match="model 'r'"):
            kindyn(model, engine).forward_dynamics(np.ones(2))


def test_non_physical_inertias_give_the_same_forward_dynamics_in_every_engine() -> None:
    # an indefinite mass matrix: iDynTree's Cholesky refuses it, KinDyn solves M a = tau - h itself
    model = load(urdf(iyy="-0.3", izz="-0.5"), check_inertia=False)
    results = [kindyn(model, engine).forward_dynamics(np.ones(1)) for engine in ENGINES]
    for r in results[1:]:
        np.testing.assert_allclose(r, results[0], rtol=1e-9, atol=1e-12)
    assert bridge.cross_validate(model, samples=3).ok


# --------------------------------------------------------------------------- API misuse
@pytest.mark.parametrize("engine", ENGINES)
def test_batch_shapes_that_do_not_broadcast(model: bridge.Model, engine: str) -> None:
    kd = bridge.KinDyn(model, engine)
    H5 = np.broadcast_to(np.eye(4), (5, 4, 4))
    with pytest.raises(bridge.StateError, match=r"batch shapes \(5,\) and \(3,\)"):
        kd.set_state(H5, np.zeros((3, 1)), np.zeros(6), np.zeros(1))
    with pytest.raises(bridge.StateError, match=r"gravity: batch shape \(7,\) does not broadcast .* \(5,\)"):
        kd.set_state(H5, np.zeros((5, 1)), np.zeros(6), np.zeros(1), gravity=np.zeros((7, 3)))
    with pytest.raises(bridge.StateError, match="empty batch"):
        kd.set_state(np.zeros((0, 4, 4)), np.zeros((0, 1)), np.zeros((0, 6)), np.zeros((0, 1)))
    kd.set_state(H5, np.zeros((5, 1)), np.zeros(6), np.zeros(1))
    with pytest.raises(bridge.ShapeError, match=r"s_ddot: batch shape \(3,\)"):
        kd.inverse_dynamics(np.zeros(6), np.zeros((3, 1)))
    with pytest.raises(bridge.ShapeError, match=r"joint_torques: batch shape \(4,\)"):
        kd.forward_dynamics(np.zeros((4, 1)))
    assert kd.inverse_dynamics(np.zeros(6), np.zeros((5, 1))).shape == (5, 7)  # broadcasting is fine


@pytest.mark.parametrize("engine", ENGINES)
def test_wrong_argument_types(model: bridge.Model, engine: str) -> None:
    kd = kindyn(model, engine)
    with pytest.raises(bridge.ShapeError, match=r"external wrench on 'b': batch shape \(6,\)"):
        kd.inverse_dynamics(np.zeros(6), np.zeros(1), {"b": np.zeros((6, 6))})
    with pytest.raises(bridge.ShapeError, match="external wrench on 'b'"):
        kd.forward_dynamics(np.zeros(1), {"b": np.zeros(5)})
    with pytest.raises(bridge.InvalidValueError, match="joint_torques: cannot convert"):
        kd.forward_dynamics("x")
    with pytest.raises(bridge.InvalidValueError, match=r"frame: expected a frame name \(str\), got \['b'\]"):
        kd.frame_transform(["b"])
    with pytest.raises(bridge.InvalidValueError, match="frame: expected a frame name"):
        kd.frame_jacobian(None)
    with pytest.raises(bridge.StateError, match=r"joint positions s: cannot convert.*complex"):
        kd.set_state(np.eye(4), np.array([1j]), np.zeros(6), np.zeros(1))
    with pytest.raises(bridge.StateError, match="set_robot_state expects a bridge State"):
        kd.set_robot_state(None)


@pytest.mark.parametrize("engine", ENGINES)
def test_huge_inputs_give_an_error_not_nan(model: bridge.Model, engine: str) -> None:
    kd = bridge.KinDyn(model, engine)
    # numpy's overflow RuntimeWarnings may come first (not silenced by bridge); the result is an error
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        kd.set_state(np.eye(4), [1e200], np.full(6, 1e200), [1e200])
        what = r"bias_forces of model 'r' is not finite.*s_dot up"
        with pytest.raises(bridge.InvalidValueError, match=what):
            kd.bias_forces()
        with pytest.raises(bridge.InvalidValueError, match="not finite"):
            kd.inverse_dynamics(np.zeros(6), np.zeros(1))
        with pytest.raises(bridge.InvalidValueError, match="not finite"):
            kd.frame_bias_acc("b")


def test_locked_positions_must_be_finite_numbers() -> None:
    with pytest.raises(bridge.ModelError, match="locked position of joint 'j': expected a finite number"):
        load(urdf(), locked={"j": float("nan")})
    with pytest.raises(bridge.ModelError, match="locked position of joint 'j': expected a real number"):
        load(urdf(), locked={"j": "abc"})
    with pytest.raises(bridge.ModelError, match=r"locked must be a mapping"):
        load(urdf(), locked=["j"])
    assert load(urdf(), locked={"j": 0.5}).locked_joints == {"j": 0.5}


def test_conversion_functions_refuse_wrong_types(model: bridge.Model) -> None:
    state = bridge.State(np.eye(4), np.zeros(1), np.zeros(6), np.zeros(1))
    with pytest.raises(bridge.BackendError, match="to_pinocchio expects a bridge Model, got NoneType"):
        bridge.to_pinocchio(None)
    with pytest.raises(bridge.BackendError, match=r"from_pinocchio expects a pinocchio\.Model, got str"):
        bridge.from_pinocchio("x")
    with pytest.raises(bridge.StateError, match="to_pinocchio_state expects a bridge State, got NoneType"):
        bridge.to_pinocchio_state(model, None)
    with pytest.raises(bridge.StateError, match="from_pinocchio_state expects a bridge Model"):
        bridge.from_pinocchio_state(None, np.zeros(8), np.zeros(7))
    with pytest.raises(bridge.BridgeError, match="to_idyntree"):
        bridge.to_idyntree(None)
    with pytest.raises(bridge.BridgeError, match="from_idyntree"):
        bridge.from_idyntree("x")
    with pytest.raises(bridge.BridgeError, match="to_featherstone"):
        bridge.to_featherstone(None)
    with pytest.raises(bridge.StateError, match="expected a model and a bridge State"):
        bridge.velocity_transform(model, None, "body", "mixed")
    M = np.eye(7)
    with pytest.raises(bridge.ShapeError, match=r"h: expected shape \(\.\.\., 7\), got \(3,\)"):
        bridge.convert_bias_forces(model, state, np.zeros(3), M, "body", "mixed")
    with pytest.raises(bridge.ShapeError, match=r"M: expected shape \(\.\.\., 7, 7\)"):
        bridge.convert_mass_matrix(model, state, np.eye(6), "body", "mixed")
    batch3 = bridge.State(np.broadcast_to(np.eye(4), (3, 4, 4)), np.zeros(1), np.zeros(6), np.zeros(1))
    with pytest.raises(bridge.ShapeError, match=r"nu: batch shape \(4,\) does not broadcast"):
        bridge.convert_velocity(model, batch3, np.zeros((4, 7)), "body", "mixed")
    with pytest.raises(bridge.ShapeError, match=r"J: expected shape \(\.\.\., m, 7\)"):
        bridge.convert_jacobian(model, state, np.zeros(7), "body", "mixed")


def test_cross_validate_arguments(model: bridge.Model) -> None:
    for kwargs, match in [
        ({"rtol": -1}, "rtol: expected a positive number"),
        ({"rtol": float("nan")}, "rtol: expected a finite number"),
        ({"fd_rtol": 0.0}, "fd_rtol: expected a positive number"),
        ({"seed": -5}, "seed: expected an integer >= 0"),
        ({"samples": 0}, "samples: expected an integer >= 1"),
        ({"samples": 2.5}, "samples: expected an integer"),
        ({"engines": ["pinocchio", 3]}, "engines must be names"),
        ({"engines": ["nope"]}, "unknown engine 'nope'"),
        ({"engines": []}, "at least one engine"),
        ({"identities": "no"}, "identities: expected True or False"),
    ]:
        with pytest.raises(bridge.InvalidValueError, match=match):
            bridge.cross_validate(model, **kwargs)
    with pytest.raises(bridge.InvalidValueError, match="model must be a bridge Model"):
        bridge.cross_validate(None)
    # a comma-separated string of engines is accepted
    report = bridge.cross_validate(model, engines="pinocchio, idyntree", representations="body", samples=1)
    assert report.engines == ["pinocchio", "idyntree"] and report.ok


def test_cross_validate_accepts_a_robot_name() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bridge.BridgeWarning)
        report = bridge.cross_validate("solo12", engines=["pinocchio"], representations=["body"], samples=1)
    assert report.model == "solo" and report.ok


def test_load_urdf_paths_and_flags(tmp_path) -> None:
    with pytest.raises(bridge.ModelFileNotFoundError, match="URDF file name is empty"):
        bridge.load_urdf("")
    with pytest.raises(bridge.URDFError, match="'/dev/null' is not a regular file"):
        bridge.load_urdf("/dev/null")
    with pytest.raises(bridge.ModelFileNotFoundError, match="is a directory"):
        bridge.load_urdf(tmp_path)
    for flag in ("floating", "strict", "check_inertia"):
        with pytest.raises(bridge.ModelError, match=f"{flag}: expected True or False, got 'no'"):
            bridge.load_urdf(urdf(), **{flag: "no"})
    assert not load(urdf(), floating=np.bool_(False)).floating


# --------------------------------------------------------------------------- rotations
def _almost_rotation(defect: float) -> np.ndarray:
    from scipy.spatial.transform import Rotation

    H = np.eye(4)
    H[:3, :3] = Rotation.from_euler("xyz", [0.3, -0.2, 1.1]).as_matrix()
    H[0, 1] += defect
    H[:3, 3] = [0.1, -0.2, 0.3]
    return H


def test_a_base_rotation_slightly_off_orthonormal_is_projected_once_for_every_engine() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bridge.BridgeWarning)
        model = bridge.load_urdf("panda")
    H = _almost_rotation(3e-9)
    rng = np.random.default_rng(1)
    s, v, sd = rng.normal(size=model.n_dofs), rng.normal(size=6), rng.normal(size=model.n_dofs)
    out = {}
    for engine in ENGINES:
        kd = bridge.KinDyn(model, engine, "body")
        kd.set_state(H, s, v, sd)
        R = kd.state.world_H_base.rotation
        np.testing.assert_allclose(R.T @ R, np.eye(3), atol=1e-15)
        assert np.abs(R - H[:3, :3]).max() < 1e-8  # the nearest rotation
        out[engine] = (kd.mass_matrix(), kd.bias_forces(), kd.frame_transform("panda_hand"))
    for engine in ENGINES[1:]:
        for a, b in zip(out[engine], out["pinocchio"], strict=True):
            assert np.linalg.norm(a - b) <= 1e-12 * max(1.0, np.linalg.norm(b))
    # the same through State and Transform; far from orthonormal is still an error
    np.testing.assert_array_equal(bridge.State(H, s, v, sd).world_H_base.matrix, bridge.Transform(H).matrix)
    with pytest.raises(bridge.StateError, match="not orthonormal"):
        bridge.State(_almost_rotation(1e-6), s, v, sd)


def test_exact_rotations_are_kept_bit_for_bit() -> None:
    H = _almost_rotation(0.0)
    np.testing.assert_array_equal(bridge.Transform(H).matrix, H)


def test_hot_path_skips_result_checks_only_for_moderate_inputs(model: bridge.Model) -> None:
    """The single-state hot path takes finite inputs below bridge.conventions.state.MODERATE only; larger ones
    go through State and every result is checked (the same numbers either way when finite)."""
    kd = bridge.KinDyn(model, "pinocchio")
    kd.set_state(np.eye(4), [0.1], np.full(6, 0.2), [0.3])
    assert kd._moderate
    h_small = kd.bias_forces()
    kd.set_state(np.eye(4), [0.1], np.full(6, 1e60), [0.3])
    assert not kd._moderate  # general path: results checked
    assert np.all(np.isfinite(kd.bias_forces()))
    kd.set_robot_state(bridge.State(np.eye(4), [0.1], np.full(6, 0.2), [0.3], "mixed"))
    assert not kd._moderate
    assert_close(kd.bias_forces(), h_small, 1e-12)
