"""Small closed-form helpers for the documentation tests (rotations, the SO(3) left Jacobian,
central finite differences, the iCub fixture's trajectory), independent of every library under
test (bridge, Pinocchio, iDynTree)."""

from __future__ import annotations

import numpy as np

DT = 1e-5  # central finite differences: truncation ~ DT^2, rounding ~ 1e-16 / DT


def skew(w) -> np.ndarray:
    """3x3 cross-product matrix: ``skew(w) @ x == cross(w, x)``."""
    x, y, z = np.asarray(w, dtype=float)
    return np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])


def expm(A: np.ndarray) -> np.ndarray:
    """Matrix exponential by scaling and squaring of a Taylor series (accurate to ~1e-15 here)."""
    A = np.asarray(A, dtype=float)
    norm = float(np.linalg.norm(A, 1))
    k = max(0, int(np.ceil(np.log2(norm))) + 1) if norm > 0.5 else 0
    B = A / 2.0**k
    out = np.eye(A.shape[0])
    term = np.eye(A.shape[0])
    for i in range(1, 20):
        term = term @ B / i
        out = out + term
    for _ in range(k):
        out = out @ out
    return out


def quat_xyzw_to_matrix(q) -> np.ndarray:
    x, y, z, w = np.asarray(q, dtype=float) / np.linalg.norm(q)
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


def matrix_to_quat_xyzw(R: np.ndarray) -> np.ndarray:
    """Unit quaternion (x, y, z, w) of a rotation matrix (Shepperd's method)."""
    R = np.asarray(R, dtype=float)
    tr = np.trace(R)
    cands = [tr, R[0, 0], R[1, 1], R[2, 2]]
    k = int(np.argmax(cands))
    if k == 0:
        q = [R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1], 1 + tr]
    elif k == 1:
        q = [1 + R[0, 0] - R[1, 1] - R[2, 2], R[0, 1] + R[1, 0], R[0, 2] + R[2, 0], R[2, 1] - R[1, 2]]
    elif k == 2:
        q = [R[0, 1] + R[1, 0], 1 - R[0, 0] + R[1, 1] - R[2, 2], R[1, 2] + R[2, 1], R[0, 2] - R[2, 0]]
    else:
        q = [R[0, 2] + R[2, 0], R[1, 2] + R[2, 1], 1 - R[0, 0] - R[1, 1] + R[2, 2], R[1, 0] - R[0, 1]]
    q = np.array(q)
    return q / np.linalg.norm(q)


def random_rotation(rng: np.random.Generator) -> np.ndarray:
    return quat_xyzw_to_matrix(rng.normal(size=4))


def rot_z(angle: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def left_jacobian(x: np.ndarray) -> np.ndarray:
    """SO(3) left Jacobian: d/dt expm(x^) = (J(x) x_dot)^ expm(x^)."""
    th = np.linalg.norm(x)
    X = skew(x)
    if th < 1e-8:
        return np.eye(3) + 0.5 * X
    return np.eye(3) + (1 - np.cos(th)) / th**2 * X + (th - np.sin(th)) / th**3 * X @ X


def rng_pose(rng: np.random.Generator) -> np.ndarray:
    """A random 4x4 pose: uniform rotation, normal translation."""
    H = np.eye(4)
    H[:3, :3] = random_rotation(rng)
    H[:3, 3] = rng.normal(size=3)
    return H


def fd(f, dt: float = DT):
    """Central finite difference ``(f(dt) - f(-dt)) / (2 dt)`` of ``f`` at 0."""
    return (np.asarray(f(dt)) - np.asarray(f(-dt))) / (2 * dt)


def traj(c, t: float, accelerate: bool = True):
    """``(H, s, v_mixed, s_dot)`` at time t of the trajectory whose parameters ``c`` carries (the
    ``icub`` fixture of conftest.py: R0, o0, od, odd, w, al, s0, sd, sdd), exact velocities."""
    k = 1.0 if accelerate else 0.0
    x = t * c.w + k * 0.5 * t * t * c.al
    xd = c.w + k * t * c.al
    H = np.eye(4)
    H[:3, :3] = expm(skew(x)) @ c.R0
    H[:3, 3] = c.o0 + t * c.od + k * 0.5 * t * t * c.odd
    v = np.concatenate([c.od + k * t * c.odd, left_jacobian(x) @ xd])
    s = c.s0 + t * c.sd + k * 0.5 * t * t * c.sdd
    sd = c.sd + k * t * c.sdd
    return H, s, v, sd
