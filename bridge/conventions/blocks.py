"""The 3x3 blocks of the base maps, as expressions in the base pose: one algebra, two evaluators.

Every block of a declared base map ``L = [[P, Q], [0, S]]``, of its inverse and of any product
``L_t L_s^-1`` is a sum of terms of two kinds, with ``R = A_R_B``, ``p = A_o_B`` and ``R^-1 = R^T``:

* a rotation ``c R^b`` (``b`` in -1, 0, 1; ``R^0`` the identity);
* a skew term ``c (R^a p)^ R^b`` (``u^`` the cross-product matrix of u), or ``c (R^a k)^ R^b``
  with ``k`` a constant body-fixed vector in base axes (the base's centre of mass, for a base
  velocity taken at it: :attr:`bridge.conventions.declaration.Point.BASE_COM`).

They close under the operations the maps need, because ``R^a u^ R^-a = (R^a u)^``: products,
sums, negation and transposition (``((R^a p)^ R^b)^T = -(R^(a-b) p)^ R^-b``). :class:`Block` keeps
such a sum, simplified (terms with the same shape combined, zero coefficients dropped), so that
``R R^T`` is the identity exactly rather than to rounding.

:func:`evaluate` turns a block into numbers for poses with any batch axes (the reference path);
:mod:`bridge.conventions.single_state` turns the same blocks, once, into index maps into one pose
and a few small products (the single-state hot path). Both read the declarations' blocks from
:meth:`bridge.conventions.declaration.BaseVelocity.symbolic_blocks`: one derivation.

This module is neutral: it names no library.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bridge.errors import InvalidValueError
from bridge.spatial.xp import NUMPY, Ops

__all__ = ["IDENTITY", "ZERO", "Block", "Term", "evaluate", "rotation"]


@dataclass(frozen=True, order=True)
class Term:
    """``coef R^b`` (``skew`` False) or ``coef (R^a u)^ R^b`` (``skew`` True), with ``u`` the base
    origin ``p`` or, with ``fixed``, the constant body-fixed point ``k`` of the declaration."""

    skew: bool
    a: int
    b: int
    coef: float = 1.0
    fixed: bool = False

    def times(self, other: Term) -> Term:
        if self.skew and other.skew:
            raise InvalidValueError("base-map blocks: a product of two skew terms is not in the algebra")
        coef = self.coef * other.coef
        if not self.skew and not other.skew:
            return Term(False, 0, self.b + other.b, coef)
        if self.skew:  # (R^a p)^ R^b R^e
            return Term(True, self.a, self.b + other.b, coef, self.fixed)
        # R^e (R^a p)^ R^b = (R^(e+a) p)^ R^(e+b)
        return Term(True, self.b + other.a, self.b + other.b, coef, other.fixed)

    def transposed(self) -> Term:
        if not self.skew:
            return Term(False, 0, -self.b, self.coef)
        return Term(True, self.a - self.b, -self.b, -self.coef, self.fixed)


@dataclass(frozen=True)
class Block:
    """A sum of :class:`Term` (empty: the zero block)."""

    terms: tuple[Term, ...] = ()

    @staticmethod
    def of(terms) -> Block:
        combined: dict[tuple[bool, bool, int, int], float] = {}
        for t in terms:
            key = (t.skew, t.fixed and t.skew, t.a if t.skew else 0, t.b)
            combined[key] = combined.get(key, 0.0) + t.coef
        return Block(tuple(Term(s, a, b, c, f) for (s, f, a, b), c in sorted(combined.items()) if c != 0.0))

    def __add__(self, other: Block) -> Block:
        return Block.of((*self.terms, *other.terms))

    def __neg__(self) -> Block:
        return Block(tuple(Term(t.skew, t.a, t.b, -t.coef, t.fixed) for t in self.terms))

    def __matmul__(self, other: Block) -> Block:
        return Block.of(t.times(u) for t in self.terms for u in other.terms)

    @property
    def T(self) -> Block:
        return Block.of(t.transposed() for t in self.terms)

    @property
    def is_zero(self) -> bool:
        return not self.terms

    @property
    def rotation(self) -> int | None:
        """``b`` when the block is exactly ``R^b`` (one rotation, coefficient 1), else None."""
        if len(self.terms) == 1 and not self.terms[0].skew and self.terms[0].coef == 1.0:
            return self.terms[0].b
        return None


def rotation(b: int) -> Block:
    """The block ``R^b``."""
    return Block((Term(False, 0, b),))


IDENTITY = rotation(0)
ZERO = Block()


def _power(R: Any, ops: Ops, e: int) -> Any | None:
    if e == 0:
        return None
    if e in (1, -1):
        return R if e == 1 else ops.mT(R)
    raise InvalidValueError(f"base-map blocks: R^{e} does not occur in a declared map")


def evaluate(block: Block, R: Any, p: Any, ops: Ops = NUMPY, k: Any = None) -> Any | None:
    """The block (..., 3, 3) for rotations R (..., 3, 3) and origins p (..., 3) in the array
    namespace ``ops`` (numpy, JAX or CasADi), ``k`` (3,) the body-fixed point of ``fixed`` skew
    terms; None for zero. Functional: nothing is written in place."""
    out = None
    for t in block.terms:
        right = _power(R, ops, t.b)
        if t.skew:
            left = _power(R, ops, t.a)
            x = p
            if t.fixed:
                if k is None:
                    raise InvalidValueError("base-map blocks: a term at a body-fixed point needs the point")
                x = ops.constant(k, R) if isinstance(k, tuple | list) else k
            u = x if left is None else ops.matvec(left, x)
            value = ops.skew(u) if right is None else ops.matmul(ops.skew(u), right)
        else:
            value = ops.eye(3, R) if right is None else right
        value = value if t.coef == 1.0 else t.coef * value
        out = value if out is None else out + value
    return out
