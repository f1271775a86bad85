"""How large a model Drake's engine takes: its plant's set-up time grows with the square of its bodies.

``MultibodyPlant.Finalize()`` and ``CreateDefaultContext()`` take time quadratic in the number of
bodies, whatever the tree's shape (measured with Drake's own API, no bridge code: 0.23 s at 2,000
bodies, 1.0 s at 4,000, 1.5 to 3.4 s at 5,000 on a loaded 2-core machine; a 5,000-link chain through
bridge 2.2 to 3.7 s). ``size_problem`` (the registry's size check of Drake) predicts it as
``SECONDS_PER_BODY2`` n^2 and refuses a model over the set-up budget
(``bridge.backends.limits.setup_budget``, 2 s unless the user changes it: about 4,470 bodies).
"""

from __future__ import annotations

from bridge.backends.limits import budget_hint, setup_budget

__all__ = ["SECONDS_PER_BODY2", "setup_seconds", "size_problem"]

#: predicted plant set-up seconds per squared body count (the upper end of the measurements)
SECONDS_PER_BODY2 = 1e-7


def setup_seconds(n_bodies: int) -> float:
    """The predicted set-up time (s) of a Drake plant of ``n_bodies`` bodies."""
    return SECONDS_PER_BODY2 * n_bodies**2


def size_problem(model: object) -> str | None:
    """Why Drake's engine refuses ``model`` (None: it takes it): its predicted set-up time is over
    the set-up budget."""
    model = getattr(model, "full", None) or model  # a coupled model converts as its full model
    n = len(model.links) + 1  # and the world body
    need, budget = setup_seconds(n), setup_budget()
    if need <= budget:
        return None
    return (
        f"Drake's plant set-up time grows with the square of its bodies: about {need:.1f} s for the "
        f"{n} bodies of model {model.name!r}, over the set-up budget of {budget:g} s ({budget_hint('setup')})"
    )
