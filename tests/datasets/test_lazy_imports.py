"""``import bridge``, the datasets package and ``bridge --help`` import neither Dask nor pyarrow: the
``datasets`` extra is imported when a file or a Dask array is handled, not before."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

_HEAVY = ("dask", "distributed", "pyarrow")

_PROBE = """
import json, runpy, sys
{setup}
print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & set({heavy!r}))))
"""


def _loaded(setup: str) -> list[str]:
    code = _PROBE.format(setup=setup, heavy=_HEAVY)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize(
    "setup",
    [
        "import bridge",
        "import bridge; bridge.convert_states; bridge.compute; bridge.convert_dataset; bridge.state_columns",
        "import bridge.datasets.convert, bridge.datasets.labels, bridge.datasets.pipeline, bridge.cli",
        "sys.argv = ['bridge', '--help']\ntry:\n    runpy.run_module('bridge.cli', run_name='__main__')\n"
        "except SystemExit:\n    pass",
        "sys.argv = ['bridge', 'convert-states', '--help']\ntry:\n"
        "    runpy.run_module('bridge.cli', run_name='__main__')\nexcept SystemExit:\n    pass",
    ],
    ids=["import bridge", "public names", "datasets modules", "bridge --help", "convert-states --help"],
)
def test_dask_and_pyarrow_are_not_imported(setup: str) -> None:
    assert _loaded(setup) == []


def test_numpy_arrays_convert_without_dask_or_pyarrow() -> None:
    setup = (
        "import numpy as np, bridge\n"
        "m = bridge.random_model(4, seed=1)\n"
        "from bridge.datasets.convert import state_columns\n"
        "q = np.zeros((3, len(state_columns(m, 'mujoco', ('q',))))); q[:, 3] = 1\n"
        "bridge.convert_states(m, q, np.zeros((3, m.nv)), 'mujoco', 'pinocchio')"
    )
    assert _loaded(setup) == []
