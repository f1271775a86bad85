"""Models shared by the tests of bridge.dynamics: one object each for the whole run (engines compile
per model object: jaxsim for tens of seconds)."""

from __future__ import annotations

import numpy as np

from tests.helpers import small_model

#: floating -> the small tree of tests.helpers.small_model (every joint kind, a frame "tool")
MODELS = {floating: small_model(np.random.default_rng(0), floating) for floating in (True, False)}
