"""Conventions by name: every library's convention resolves after a plain ``import bridge``."""

from __future__ import annotations

import subprocess
import sys

_SCRIPT = """
import numpy as np
import bridge
model = bridge.random_model(3, seed=1)
state = bridge.State(np.eye(4), np.zeros(model.n_dofs), np.zeros(6), np.zeros(model.n_dofs))
print(bridge.velocity_transform(model, state, "mixed", "pinocchio")[0].shape)
"""


def test_library_conventions_resolve_after_import_bridge() -> None:
    run = subprocess.run([sys.executable, "-c", _SCRIPT], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
