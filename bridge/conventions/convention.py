"""Conventions declared as data, and the joint order between two of them.

A :class:`Convention` is a library's (or a neutral representation's) way of writing a generalized
velocity and a configuration: its base velocity (a
:class:`~bridge.conventions.declaration.BaseVelocity`), where the base pose and the joints sit in
``q`` (a :class:`~bridge.conventions.declaration.Configuration`) and its joint order (a rule from
the model). :class:`JointOrder` is the joint block P of the change of variables between two of
them. Everything else is derived from these declarations by
:mod:`bridge.conventions.change_of_variables`.

This module is neutral: it names no library.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from bridge._cache import ModelCache
from bridge.conventions.declaration import BaseMaps, BaseVelocity, Configuration
from bridge.conventions.state import Representation, velocity_declaration
from bridge.errors import InvalidValueError

if TYPE_CHECKING:  # pragma: no cover
    from bridge.model.model import Model

__all__ = ["BODY", "INERTIAL", "MIXED", "NEUTRAL", "Convention", "JointOrder"]


@dataclass(frozen=True, eq=False)
class Convention:
    """A library's convention, declared as data: its base velocity, its configuration and its
    joint order. Every map between two conventions is derived from two such declarations.

    Attributes:
        name: the name users pass ("body", "pinocchio", ...).
        velocity: how the base velocity is written (:class:`~bridge.conventions.declaration.BaseVelocity`;
            a :class:`Representation` or its name stands for the neutral one).
        joint_order: optional ``model -> perm`` with ``native_joints[i] = model_joints[perm[i]]``
            (None: the model's DOF order).
        configuration: where the base pose and the joints sit in the configuration vector
            (:class:`~bridge.conventions.declaration.Configuration`; None: the convention has no
            configuration layout of its own, e.g. a neutral representation).
    """

    name: str
    velocity: BaseVelocity
    joint_order: Callable[[Model], np.ndarray | None] | None = None
    configuration: Configuration | None = None
    _perms: ModelCache = field(default_factory=ModelCache, repr=False)
    _bound: ModelCache = field(default_factory=ModelCache, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.velocity, BaseVelocity):
            object.__setattr__(self, "velocity", velocity_declaration(Representation.parse(self.velocity)))
        if self.configuration is not None and not isinstance(self.configuration, Configuration):
            raise InvalidValueError(
                f"Convention {self.name!r}: configuration must be a Configuration, got "
                f"{type(self.configuration).__name__}"
            )
        if self.joint_order is not None and not callable(self.joint_order):
            raise InvalidValueError(f"Convention {self.name!r}: joint_order must be callable (model -> perm)")

    def __repr__(self) -> str:
        return f"Convention({self.name!r})"

    @property
    def representation(self) -> Representation | None:
        """The neutral representation measuring the same velocity (whatever the order of its
        halves), or None (e.g. MuJoCo's free joint)."""
        for rep, conv in NEUTRAL.items():
            if conv.velocity.same_frame(self.velocity):
                return rep
        return None

    def bound(self, model: Model) -> Convention:
        """This convention with its model-dependent base point filled in from ``model`` (the base
        link's centre of mass for ``Point.BASE_COM``, in base axes); itself when its base velocity
        needs nothing from the model. Made once per model; every map takes the bound one."""
        if not self.velocity.needs_model:
            return self
        kept = self._bound.of(model)  # (a model not weak-referenceable: nothing kept)
        cached = kept.get("bound")
        if cached is None:
            com = model.link(model.base).inertia.com
            cached = Convention(self.name, self.velocity.bound(com), self.joint_order, self.configuration)
            object.__setattr__(cached, "_perms", self._perms)
            cached = kept.setdefault("bound", cached)
        return cached

    def maps(self, world_H_base, v_body: np.ndarray) -> BaseMaps:
        """The base maps of this convention at a pose and BODY base velocity (..., 6)."""
        return self.velocity.maps(world_H_base, v_body)

    def permutation(self, model: Model) -> np.ndarray | None:
        """``perm`` (n,) with ``native[i] = model[perm[i]]``, None for the model's own order
        (computed once per model)."""
        if self.joint_order is None:
            return None
        kept = self._perms.of(model)  # (a model not weak-referenceable: nothing kept)
        cached = kept.get("perm", _MISSING)
        if cached is _MISSING:
            cached = kept.setdefault("perm", _canonical_perm(self.joint_order(model)))
        return cached

    def entry_permutation(self, model: Model) -> np.ndarray | None:
        """:meth:`permutation` over the joint velocity entries (n_dofs,): each joint's ``nv`` entries
        move together (the same as :meth:`permutation` when every joint has one)."""
        return expand_permutation(self.permutation(model), model)


def expand_permutation(perm: np.ndarray | None, model: Model) -> np.ndarray | None:
    """A permutation of the DOF joints as the permutation of their velocity entries."""
    if perm is None or model.single_coordinate:
        return perm
    start = model.coordinates.v_start
    out = np.concatenate([np.arange(start[k], start[k + 1]) for k in perm.tolist()] or [np.zeros(0)])
    out = out.astype(np.intp)
    out.setflags(write=False)
    return out


_MISSING = object()


def _canonical_perm(perm: object) -> np.ndarray | None:
    if perm is None:
        return None
    p = np.array(perm, dtype=np.intp)
    if np.array_equal(p, np.arange(p.shape[0])):
        return None
    p.setflags(write=False)
    return p


BODY = Convention("body", "body")
INERTIAL = Convention("inertial", "inertial")
MIXED = Convention("mixed", "mixed")


class JointOrder:
    """The joint block P of T and the index arrays of its products, computed once per model.

    ``(P x)[i] = x[perm[i]]``; ``nb`` is 6 for a floating base, 0 for a fixed one. Index arrays
    are absolute column indices into (nv,) vectors: ``forward`` picks the joints of the target from a
    source vector (``forward_full``: the same behind the base columns), ``back`` a whole source
    vector from a target one (base columns first).
    """

    __slots__ = ("__weakref__", "back", "forward", "forward_full", "inverse", "n", "nb", "nv", "perm")

    def __init__(self, perm: np.ndarray | None, n: int, nb: int) -> None:
        self.perm = perm
        self.n, self.nb, self.nv = n, nb, nb + n
        if perm is None:
            self.inverse = self.forward = self.forward_full = self.back = None
        else:
            self.inverse = np.argsort(perm)
            self.forward = nb + perm
            self.forward_full = np.concatenate([np.arange(nb), self.forward]).astype(np.intp)
            self.back = np.concatenate([np.arange(nb), nb + self.inverse]).astype(np.intp)

    @classmethod
    def between(cls, model: Model, source: Convention, target: Convention) -> JointOrder:
        """The joint order from ``source`` to ``target`` for ``model`` (cached per model)."""
        key = (source, target)
        cache = _ORDERS.of(model)
        order = cache.get(key)
        if order is None:
            ps, pt = source.entry_permutation(model), target.entry_permutation(model)
            n = model.n_dofs
            # nu_s = nu_m[ps] and nu_t = nu_m[pt] (m: the model's order)
            inv_s = np.argsort(ps) if ps is not None else np.arange(n)
            perm = _canonical_perm(inv_s[pt] if pt is not None else inv_s)
            order = cache[key] = cls(perm, n, 6 if model.floating else 0)
        return order

    def matrix(self) -> np.ndarray:
        """Dense P (n, n)."""
        P = np.eye(self.n)
        return P if self.perm is None else P[self.perm]


_ORDERS = ModelCache()


#: neutral convention of each representation
NEUTRAL: dict[Representation, Convention] = {
    Representation.BODY: BODY,
    Representation.INERTIAL: INERTIAL,
    Representation.MIXED: MIXED,
}
