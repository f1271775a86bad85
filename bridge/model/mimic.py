"""Mimic joints kept as a constraint: one DOF per master, the dynamics projected on the masters.

A URDF ``<mimic joint="m" multiplier="k" offset="o"/>`` on joint ``j`` states ``s_j = k s_m + o``.
Loaded with ``mimic="coupled"`` (:func:`bridge.load_urdf`), the model is a :class:`CoupledModel`:
its ``dof_names`` are the independent joints (masters and unrelated joints), its ``full`` model has
every movable joint as a DOF, and the constant matrix ``G`` (n_full, n) and offset ``o`` (n_full,)
map the reduced joint positions to the full ones::

    s_full = G s + o,     s_dot_full = G s_dot,     s_ddot_full = G s_ddot.

With ``G_nu = blkdiag(I_6, G)`` (floating base) the reduced dynamics is the projection of the
full one (the constraint is ideal and ``G`` is constant, so ``G_dot = 0``)::

    M = G_nu^T M_full G_nu,   h = G_nu^T h_full(s_full, G_nu nu),   tau = G_nu^T tau_full,
    J_frame = J_frame_full G_nu,   nu_dot = M^-1 (tau - G_nu^T (h_full - J^T f)).

Kinetic energy ``nu^T M nu / 2`` and power ``tau . nu`` are those of the full model at the
expanded state. Every engine answers for a coupled model through this projection (see
:mod:`bridge.backends.coupled`); this module is neutral (it names no library).

A chain (a joint mimicking a mimic joint) is resolved to the root master; a cycle is an error.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from bridge.errors import ModelError, UnknownNameError, UnsupportedError
from bridge.model.model import Model

__all__ = ["CoupledModel", "Mimic", "couple", "require_uncoupled"]


@dataclass(frozen=True)
class Mimic:
    """``s[joint] = multiplier * s[master] + offset`` (URDF ``<mimic>`` semantics)."""

    joint: str
    master: str
    multiplier: float = 1.0
    offset: float = 0.0


def _resolve(mimics: Iterable[Mimic]) -> dict[str, Mimic]:
    """Every mimic joint -> its relation to a master that mimics nothing (chains composed)."""
    direct = {m.joint: m for m in mimics}
    out: dict[str, Mimic] = {}
    for name in direct:
        k, o, cur, seen = 1.0, 0.0, name, [name]
        while cur in direct:
            m = direct[cur]
            k, o = k * m.multiplier, o + k * m.offset  # s = k (mult s_master + off) + o
            cur = m.master
            if cur in seen:
                raise ModelError(f"mimic joints form a cycle: {' -> '.join(map(repr, [*seen, cur]))}")
            seen.append(cur)
        out[name] = Mimic(name, cur, k, o)
    return out


@dataclass(frozen=True, eq=False, repr=False)
class CoupledModel(Model):
    """A :class:`Model` whose mimic joints follow their masters (see the module docstring).

    ``links``, ``joints``, ``frames``, ``base`` and ``floating`` are those of ``full``;
    ``dof_names`` are the independent joints; ``mimics`` the resolved relations (master not a
    mimic joint).
    """

    full: Model | None = None
    mimics: tuple[Mimic, ...] = ()

    def _validate(self) -> None:
        full = self.full
        if not isinstance(full, Model) or isinstance(full, CoupledModel):
            raise ModelError("a CoupledModel needs its full model (every movable joint a DOF)")
        if (self.links, self.joints, self.frames, self.base, self.floating) != (
            full.links,
            full.joints,
            full.frames,
            full.base,
            full.floating,
        ):
            raise ModelError("a CoupledModel has the links, joints, frames and base of its full model")
        followers = [m.joint for m in self.mimics]
        for m in self.mimics:
            if m.joint not in full.dof_names:
                raise UnknownNameError("DOF", m.joint, full.dof_names, where=f"model {self.name!r}")
            if m.master not in self.dof_names:
                raise ModelError(f"mimic joint {m.joint!r}: its master {m.master!r} is not a DOF")
        if len(set(followers)) != len(followers):
            raise ModelError("a joint mimics two masters")
        if len(set(self.dof_names)) != len(self.dof_names):
            raise ModelError("a joint appears twice in the DOF list")
        if sorted([*self.dof_names, *followers]) != sorted(full.dof_names):
            raise ModelError(
                f"the DOFs {list(self.dof_names)} and the mimic joints {followers} must be the full "
                f"model's DOFs {list(full.dof_names)}"
            )

    # ------------------------------------------------------------------ the coupling
    @cached_property
    def G(self) -> np.ndarray:
        """``s_full = G s + offset``: (n_full, n), full DOFs in ``full.dof_names`` order."""
        G = np.zeros((self.full.n_dofs, self.n_dofs))
        for k, name in enumerate(self.dof_names):
            G[self.full.dof_index(name), k] = 1.0
        for m in self.mimics:
            G[self.full.dof_index(m.joint), self.dof_index(m.master)] = m.multiplier
        G.flags.writeable = False
        return G

    @cached_property
    def offset(self) -> np.ndarray:
        """(n_full,): the mimic offsets (zero for the independent DOFs)."""
        o = np.zeros(self.full.n_dofs)
        for m in self.mimics:
            o[self.full.dof_index(m.joint)] = m.offset
        o.flags.writeable = False
        return o

    @cached_property
    def G_nu(self) -> np.ndarray:
        """``nu_full = G_nu nu``: (nv_full, nv), ``blkdiag(I_6, G)`` for a floating base."""
        nb = 6 if self.floating else 0
        out = np.zeros((nb + self.full.n_dofs, nb + self.n_dofs))
        out[:nb, :nb] = np.eye(nb)
        out[nb:, nb:] = self.G
        out.flags.writeable = False
        return out

    def full_positions(self, s: object) -> np.ndarray:
        """``G s + offset`` (..., n_full) for joint positions ``s`` (..., n)."""
        return np.einsum("ij,...j->...i", self.G, np.asarray(s, dtype=np.float64)) + self.offset

    def full_velocities(self, s_dot: object) -> np.ndarray:
        """``G s_dot`` (..., n_full) (also for accelerations)."""
        return np.einsum("ij,...j->...i", self.G, np.asarray(s_dot, dtype=np.float64))

    @property
    def mimic_joints(self) -> dict[str, Mimic]:
        return {m.joint: m for m in self.mimics}

    # ------------------------------------------------------------------ Model overrides
    @cached_property
    def massless_dofs(self) -> tuple[str, ...]:
        massless = set(self.full.massless_dofs)
        return tuple(
            d
            for k, d in enumerate(self.dof_names)
            if all(self.full.dof_names[i] in massless for i in np.flatnonzero(self.G[:, k]))
        )

    def forward_kinematics(self, s: object) -> dict:
        from bridge._array import as_float_array

        s = as_float_array(s, "joint positions s", (self.n_dofs,))
        return self.full.forward_kinematics(self.full_positions(s))

    def with_base(self, link: str) -> Model:
        # re-rooting keeps the sign of every joint position: the relations hold unchanged
        return couple(self.full.with_base(link), self.mimics, self.dof_names)

    def with_dofs(self, names: Sequence[str], locked: Mapping[str, float] | None = None) -> Model:
        """Independent DOFs ``names``; mimic joints follow their masters (locked with them)."""
        names = tuple(names)
        locked = dict(locked or {})
        relations = self.mimic_joints
        for n in (*names, *locked):
            if n in relations:
                raise ModelError(
                    f"joint {n!r} mimics {relations[n].master!r}: name its master instead (or load the "
                    "URDF with mimic='independent')"
                )
        full_locked = dict(locked)
        kept = []
        for m in self.mimics:
            if m.master in names:
                kept.append(m)
            else:  # locked with its master (at the master's locked position, default 0)
                full_locked[m.joint] = m.multiplier * locked.get(m.master, 0.0) + m.offset
        full_names = names + tuple(m.joint for m in kept)
        return couple(self.full.with_dofs(full_names, full_locked), kept, names)

    def with_fixed_base(self) -> Model:
        return couple(self.full.with_fixed_base(), self.mimics, self.dof_names)

    def with_floating_base(self) -> Model:
        return couple(self.full.with_floating_base(), self.mimics, self.dof_names)

    def lumped(self) -> Model:
        return couple(self.full.lumped(), self.mimics, self.dof_names)

    def summary(self) -> str:
        return f"{super().summary()}, {len(self.mimics)} mimic joints coupled"


def couple(model: Model, mimics: Iterable[Mimic], dof_names: Sequence[str] | None = None) -> Model:
    """``model`` with the mimic relations kept (a :class:`CoupledModel`; ``model`` if there are none).

    ``dof_names``: the independent DOFs' order (default: ``model.dof_names`` without the mimic
    joints). Masters and mimic joints must be DOFs of ``model``.
    """
    if isinstance(model, CoupledModel):
        model = model.full
    mimics = list(mimics)
    if not mimics:
        return model
    relations = _resolve(mimics)
    for m in relations.values():
        for name in (m.joint, m.master):
            if name not in model.dof_names:
                if name in model.joint_names:
                    raise ModelError(f"mimic joint {m.joint!r}: joint {name!r} is fixed (or locked)")
                raise UnknownNameError("joint", name, model.joint_names, where=f"model {model.name!r}")
    if dof_names is None:
        dof_names = tuple(d for d in model.dof_names if d not in relations)
    return CoupledModel(
        name=model.name,
        links=model.links,
        joints=model.joints,
        frames=model.frames,
        base=model.base,
        dof_names=tuple(dof_names),
        floating=model.floating,
        synthetic_links=model.synthetic_links,
        gravity=model.gravity,
        full=model,
        mimics=tuple(relations[d] for d in model.dof_names if d in relations),
    )


def require_uncoupled(model: Model, coordinates: str) -> None:
    """Raise an :class:`~bridge.errors.UnsupportedError` when ``model`` keeps mimic joints coupled.

    ``coordinates`` names the coordinates that have no mimic joints (every mimic joint is a DOF of
    its own there, so a state or generalized velocity of ``model``, one entry per master, has no
    meaning in them). The message says what to do instead.
    """
    if isinstance(model, CoupledModel):
        raise UnsupportedError(
            f"model {model.name!r} keeps {len(model.mimics)} mimic joints coupled (mimic='coupled'), "
            f"and {coordinates} have no mimic joints: convert model.full (every mimic joint a DOF) "
            "with the expanded state (model.full_positions(s), model.full_velocities(s_dot)), or "
            "use bridge.KinDyn, whose engines answer for the coupled model in any representation"
        )
