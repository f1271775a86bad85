"""The jaxsim cells of docs/conventions.md, checked against the installed jaxsim.

Imported by tests/docs/test_conventions.py (whose page check looks up cell tests among its own
names). The model is the small test model (every joint kind, non-zero axis origins, a fixed joint,
a frame ``tool``) built by jaxsim from bridge's SDFormat text; velocities are checked against central
finite differences of jaxsim's own poses, along a base motion of constant body velocity
(``H(t) = H0 expm(t xi^)``) and constant joint velocities. Skipped when jaxsim is not installed.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

import bridge
from tests.docs._math import DT, expm, matrix_to_quat_xyzw, quat_xyzw_to_matrix, skew
from tests.helpers import small_model

__all__ = [
    "jaxsim_case",
    "test_base_pose_jaxsim",
    "test_base_vel_jaxsim",
    "test_bias_jaxsim",
    "test_dof_order_jaxsim",
    "test_fixed_jaxsim",
    "test_mass_jaxsim",
    "test_order_jaxsim",
    "test_quat_jaxsim",
    "test_rep_jaxsim",
]


def _close(a, b, rtol=1e-9) -> bool:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return a.shape == b.shape and float(np.linalg.norm(a - b)) <= rtol * max(1.0, float(np.linalg.norm(b)))


def _wxyz(R: np.ndarray) -> np.ndarray:
    x, y, z, w = matrix_to_quat_xyzw(R)
    return np.array([w, x, y, z])


def _hat(xi: np.ndarray) -> np.ndarray:
    """4x4 of a twist (v, w), linear first."""
    out = np.zeros((4, 4))
    out[:3, :3], out[:3, 3] = skew(xi[3:]), xi[:3]
    return out


@pytest.fixture(scope="module")
def jaxsim_case():
    """The small model in jaxsim, a base pose H0, a body base velocity xi, joint positions and
    velocities (jaxsim's order), and ``data(t, rep)``: jaxsim's data at time t along the motion."""
    pytest.importorskip("jaxsim", reason="jaxsim is not installed (pip install 'bridge-dynamics[jaxsim]')")
    from bridge.backends.jaxsim.model import to_jaxsim

    rng = np.random.default_rng(31)
    model = small_model(rng)
    js_model = to_jaxsim(model)
    H0 = np.eye(4)
    H0[:3, :3], H0[:3, 3] = quat_xyzw_to_matrix(rng.normal(size=4)), rng.normal(size=3)
    xi = rng.normal(size=6)  # body velocity of the base, linear first
    s, sd = rng.uniform(-1, 1, model.n_dofs), rng.normal(size=model.n_dofs)

    def data(t: float, rep: str = "Body", base_velocity: np.ndarray | None = None):
        import jaxsim.api as js
        from jaxsim import VelRepr

        H = H0 @ expm(t * _hat(xi))
        v = xi if base_velocity is None else base_velocity
        return js.data.JaxSimModelData.build(
            model=js_model,
            base_position=H[:3, 3],
            base_quaternion=_wxyz(H[:3, :3]),
            joint_positions=s + t * sd,
            base_linear_velocity=v[:3],
            base_angular_velocity=v[3:],
            joint_velocities=sd,
            velocity_representation=getattr(VelRepr, rep),
        )

    return SimpleNamespace(model=model, js_model=js_model, H0=H0, xi=xi, s=s, sd=sd, data=data)


def _H(t: float, c) -> np.ndarray:
    return c.H0 @ expm(t * _hat(c.xi))


def _fd(f):
    return (np.asarray(f(DT)) - np.asarray(f(-DT))) / (2 * DT)


def _tool_pose(c, t: float) -> np.ndarray:
    import jaxsim.api as js

    return np.asarray(js.frame.transform(c.js_model, c.data(t), frame_index=_tool(c)))


def _tool(c) -> int:
    import jaxsim.api as js

    return int(js.frame.name_to_idx(c.js_model, frame_name="tool"))


# ------------------------------------------------------------------ cells
def test_quat_jaxsim(jaxsim_case):
    """(w, x, y, z) of the rotation W_R_B: data.base_quaternion, data.base_transform."""
    c = jaxsim_case
    d = c.data(0.0)
    assert _close(np.asarray(d.base_quaternion), _wxyz(c.H0[:3, :3]), 1e-14)
    assert _close(np.asarray(d.base_transform), c.H0, 1e-14)


def test_base_pose_jaxsim(jaxsim_case):
    """JaxSimModelData.build(base_position, base_quaternion, joint_positions, ...): bridge's
    to_jaxsim_state gives q = [W_p_B; wxyz; joints] with jaxsim's i-th joint the model's perm[i]."""
    from bridge.backends.jaxsim import to_jaxsim_state

    c = jaxsim_case
    n = c.model.n_dofs
    st = bridge.State(c.H0, np.arange(n, dtype=float), np.zeros(6), np.zeros(n))
    q, _ = to_jaxsim_state(c.model, st)
    assert _close(q[:3], c.H0[:3, 3], 1e-15) and _close(q[3:7], _wxyz(c.H0[:3, :3]), 1e-14)
    perm = q[7:].astype(int)
    assert tuple(c.model.dof_names[k] for k in perm) == tuple(c.js_model.joint_names())
    d = c.data(0.0)
    assert _close(np.asarray(d.base_position), c.H0[:3, 3], 1e-15)


def test_order_jaxsim(jaxsim_case):
    """Linear first: base velocity, link velocities, Jacobian rows (velocity of the tool frame
    in MIXED: (p_dot, omega) from finite differences of jaxsim's own poses)."""
    import jaxsim.api as js
    from jaxsim import VelRepr

    c = jaxsim_case
    d = c.data(0.0)
    with d.switch_velocity_representation(VelRepr.Mixed):
        v = np.asarray(js.frame.velocity(c.js_model, d, frame_index=_tool(c)))
    H, H_dot = _tool_pose(c, 0.0), _fd(lambda t: _tool_pose(c, t))
    W = H_dot[:3, :3] @ H[:3, :3].T
    assert _close(v[:3], H_dot[:3, 3]) and _close(v[3:], [W[2, 1], W[0, 2], W[1, 0]])


def test_rep_jaxsim(jaxsim_case):
    """VelRepr.Body, Inertial, Mixed are bridge's body, inertial, mixed (the frame velocity of the
    tool frame against (H^-1 H_dot)^v, (H_dot H^-1)^v and (o_dot, omega))."""
    import jaxsim.api as js
    from jaxsim import VelRepr

    c = jaxsim_case
    d = c.data(0.0)
    H, H_dot = _tool_pose(c, 0.0), _fd(lambda t: _tool_pose(c, t))
    Hinv = np.linalg.inv(H)
    body, spatial = Hinv @ H_dot, H_dot @ Hinv
    vee = lambda X: np.r_[X[:3, 3], X[2, 1], X[0, 2], X[1, 0]]  # noqa: E731
    expected = {"Body": vee(body), "Inertial": vee(spatial), "Mixed": np.r_[H_dot[:3, 3], vee(spatial)[3:]]}
    for rep, ref in expected.items():
        with d.switch_velocity_representation(getattr(VelRepr, rep)):
            assert _close(np.asarray(js.frame.velocity(c.js_model, d, frame_index=_tool(c))), ref), rep


def test_base_vel_jaxsim(jaxsim_case):
    """base_linear_velocity, base_angular_velocity in the data's representation, linear first: the
    body velocity xi given in Body is (Rᵀ o_dot, ω_B), read back in Mixed as (o_dot, ω_A)."""
    from jaxsim import VelRepr

    c = jaxsim_case
    d = c.data(0.0)
    H_dot = _fd(lambda t: _H(t, c))
    assert _close(np.asarray(d.base_velocity), c.xi, 1e-14)
    with d.switch_velocity_representation(VelRepr.Mixed):
        W = H_dot[:3, :3] @ c.H0[:3, :3].T
        assert _close(np.asarray(d.base_velocity), np.r_[H_dot[:3, 3], W[2, 1], W[0, 2], W[1, 0]])


def test_dof_order_jaxsim(jaxsim_case):
    """Breadth first from the base over the links left after merging fixed joints, children by
    name; joint i moves link i + 1: not the model's DOF order."""
    from bridge.backends.jaxsim.state import jaxsim_tree

    c = jaxsim_case
    names = tuple(c.js_model.joint_names())
    assert names != c.model.dof_names and set(names) == set(c.model.dof_names)
    links = c.js_model.link_names()
    tree = jaxsim_tree(c.model)
    for i, name in enumerate(names):
        assert tree.joint(name).child == links[i + 1]
    depth = {tree.base: 0}
    for j in tree.depth_first_joints:
        depth[j.child] = depth[j.parent] + 1
    assert [depth[link] for link in links] == sorted(depth[link] for link in links)  # breadth first


def test_fixed_jaxsim(jaxsim_case):
    """Fixed joints merged: links joined by one are one jaxsim link, the others jaxsim frames."""
    c = jaxsim_case
    (fixed,) = [j for j in c.model.joints if not j.movable]
    assert fixed.child not in c.js_model.link_names() and fixed.child in c.js_model.frame_names()
    assert "tool" in c.js_model.frame_names()
    assert c.js_model.number_of_links() == len(c.model.links) - 1


def test_mass_jaxsim(jaxsim_case):
    """free_floating_mass_matrix: (6 + n) square, kinetic energy ½ νᵀ M ν in the representation."""
    import jaxsim.api as js

    c = jaxsim_case
    d = c.data(0.0, "Inertial", c.xi)
    M = np.asarray(js.model.free_floating_mass_matrix(c.js_model, d))
    nu = np.asarray(d.generalized_velocity)
    assert M.shape == (6 + c.model.n_dofs,) * 2
    assert _close(0.5 * nu @ M @ nu, float(js.model.kinetic_energy(c.js_model, d)), 1e-12)


def test_bias_jaxsim(jaxsim_case):
    """free_floating_bias_forces includes gravity (h = C ν + g); free_floating_gravity_forces is g;
    gravity is a model constant along -z (positive 9.81 given to build_from_model_description)."""
    import jaxsim.api as js

    c = jaxsim_case
    d = c.data(0.0, "Mixed", np.zeros(6))
    still = js.data.JaxSimModelData.build(
        model=c.js_model,
        base_position=d.base_position,
        base_quaternion=d.base_quaternion,
        joint_positions=d.joint_positions,
        velocity_representation=d.velocity_representation,
    )
    h0 = np.asarray(js.model.free_floating_bias_forces(c.js_model, still))
    g = np.asarray(js.model.free_floating_gravity_forces(c.js_model, still))
    assert _close(h0, g, 1e-12) and c.js_model.gravity == -9.81
    # the base's gravity wrench in MIXED: (m g, c x m g) with c the centre of mass from the base origin
    m = c.model.total_mass
    com = np.asarray(js.com.com_position(c.js_model, still)) - np.asarray(still.base_position)
    f = m * np.array([0.0, 0.0, -9.81])
    assert _close(g[:6], -np.r_[f, np.cross(com, f)], 1e-12)
