"""Shared pytest configuration: the --runslow flag for long sweeps, hypothesis profiles, warp's
kernel cache.

Hypothesis runs derandomized by default (the same examples on every machine, so CI cannot fail on
an example nobody saw locally); ``--hypothesis-profile=explore`` draws fresh random examples, more
of them.
"""

from __future__ import annotations

import os
import tempfile

import pytest
from hypothesis import settings

settings.register_profile("default", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("explore", derandomize=False, deadline=None, max_examples=500, print_blob=True)
settings.load_profile("default")

# warp (the Newton engine) compiles its kernels once and caches them: in a temporary directory that
# outlives the run (read by warp when it starts, so without importing it here)
# bridge's model cache off (each load parses; nothing written to the user's cache folder); the cache's
# own tests (tests/model/test_cache.py) turn it on in a temporary folder
os.environ["BRIDGE_CACHE"] = "0"
os.environ.setdefault("WARP_CACHE_PATH", os.path.join(tempfile.gettempdir(), "bridge-warp-kernels"))


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--runslow", action="store_true", default=False, help="run slow sweeps too")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--runslow"):
        return
    skip = pytest.mark.skip(reason="slow sweep: run with --runslow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
