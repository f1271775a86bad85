"""Ready ``casadi.Function`` objects for the common conversions between two conventions.

Each function builds symbols, runs bridge's conversion on them (the functional path) and returns a
``casadi.Function`` whose inputs are documented by name:

* a source convention with a configuration (a library's: "pinocchio", "mujoco", "drake",
  "featherstone", ...): ``q`` (nq,) in that library's layout (its quaternion order and place, its
  joint order, continuous joints as it stores them) and ``nu`` (nv,) its generalized velocity;
* a neutral source ("body", "inertial", "mixed"): ``H`` (4, 4) the base pose (floating base only),
  ``s`` (n,) the joints in the model's order and ``nu`` (nv,) in that representation.

The model is a numpy constant of the graph. Values are not checked inside the graph (a unit
quaternion is the caller's business: the conversions read the rotation from it as given).
Imported by ``bridge.casadi_*`` only; this module and :mod:`bridge.spatial.xp_casadi` import
casadi.
"""

from __future__ import annotations

import casadi
import numpy as np

from bridge._array import as_int
from bridge.conventions.convert import (
    convert_bias_forces,
    convert_jacobian,
    convert_mass_matrix,
    velocity_transform,
)
from bridge.conventions.native_state import from_native_state, joint_layout
from bridge.conventions.registry import convention
from bridge.conventions.state import State
from bridge.errors import InvalidValueError
from bridge.model.model import Model

__all__ = ["casadi_bias_forces", "casadi_jacobian", "casadi_mass_matrix", "casadi_velocity_transform"]


#: the most rows ``casadi_jacobian`` takes (a stack of every frame Jacobian of a humanoid has a few
#: hundred; beyond this the symbols alone take gigabytes)
MAX_ROWS = 10_000


def _symbol(kind: object):
    if not isinstance(kind, str) or kind not in ("SX", "MX"):
        raise InvalidValueError(f"symbol: expected 'SX' or 'MX', got {kind!r}")
    return getattr(casadi, kind)


def _state_inputs(model: Model, source: object, kind: str) -> tuple[list, list[str], State]:
    """The symbols (and their names) of a state in ``source``'s layout, and the State they give."""
    if not isinstance(model, Model):
        raise InvalidValueError(f"expected a bridge Model first, got {type(model).__name__}")
    sym = _symbol(kind)
    conv = convention(source)
    nv = model.nv
    nu = sym.sym("nu", nv)
    if conv.configuration is not None:
        q = sym.sym("q", joint_layout(model, conv).nq)
        return [q, nu], ["q", "nu"], from_native_state(model, q, nu, conv, "body")
    rep = conv.name
    s = sym.sym("s", model.n_dofs)
    H = sym.sym("H", 4, 4) if model.floating else casadi.DM.eye(4)
    base, joints = (nu[0:6], nu[6:nv]) if model.floating else (casadi.DM.zeros(6, 1), nu)
    perm = conv.permutation(model)
    if perm is not None:
        joints = joints[np.argsort(perm).tolist()]
    st = State(H, s, base, joints, rep)
    ins, names = ([H, s, nu], ["H", "s", "nu"]) if model.floating else ([s, nu], ["s", "nu"])
    return ins, names, st


def casadi_velocity_transform(
    model: Model, source: object, target: object, symbol: str = "SX"
) -> casadi.Function:
    """``casadi.Function`` "T" of the source state (module docstring) -> ``(T, T_dot)`` (nv, nv):
    ``nu_target = T nu_source`` and its time derivative along the motion."""
    ins, names, st = _state_inputs(model, source, symbol)
    T, T_dot = velocity_transform(model, st, source, target)
    return casadi.Function("T", ins, [T, T_dot], names, ["T", "T_dot"])


def casadi_mass_matrix(model: Model, source: object, target: object, symbol: str = "SX") -> casadi.Function:
    """``casadi.Function`` "M" of the source state and ``M`` (nv, nv) in ``source`` -> the mass
    matrix in ``target``."""
    ins, names, st = _state_inputs(model, source, symbol)
    M = _symbol(symbol).sym("M", model.nv, model.nv)
    out = convert_mass_matrix(model, st, M, source, target)
    return casadi.Function("M", [*ins, M], [out], [*names, "M"], ["M_t"])


def casadi_bias_forces(model: Model, source: object, target: object, symbol: str = "SX") -> casadi.Function:
    """``casadi.Function`` "h" of the source state, ``h`` (nv,) and ``M`` (nv, nv) in ``source``
    -> the bias forces in ``target`` (the inverse dynamics at zero acceleration there)."""
    ins, names, st = _state_inputs(model, source, symbol)
    sym = _symbol(symbol)
    h, M = sym.sym("h", model.nv), sym.sym("M", model.nv, model.nv)
    out = convert_bias_forces(model, st, h, M, source, target)
    return casadi.Function("h", [*ins, h, M], [out], [*names, "h", "M"], ["h_t"])


def casadi_jacobian(
    model: Model, source: object, target: object, rows: int = 6, symbol: str = "SX"
) -> casadi.Function:
    """``casadi.Function`` "J" of the source state and ``J`` (rows, nv) in ``source`` (``v = J nu``;
    a frame Jacobian, the centroidal momentum matrix, ...) -> the same Jacobian in ``target``.
    ``rows``: an integer from 1 to :data:`MAX_ROWS`."""
    rows = as_int(rows, "casadi_jacobian: rows", minimum=1, maximum=MAX_ROWS, why=" (build it per block)")
    ins, names, st = _state_inputs(model, source, symbol)
    J = _symbol(symbol).sym("J", rows, model.nv)
    out = convert_jacobian(model, st, J, source, target)
    return casadi.Function("J", [*ins, J], [out], [*names, "J"], ["J_t"])
