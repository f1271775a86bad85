"""Shared pytest configuration: the --runslow flag for long sweeps, and hypothesis profiles.

Hypothesis runs derandomized by default (the same examples on every machine, so CI cannot fail on
an example nobody saw locally); ``--hypothesis-profile=explore`` draws fresh random examples, more
of them.
"""

from __future__ import annotations

import pytest
from hypothesis import settings

settings.register_profile("default", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("explore", derandomize=False, deadline=None, max_examples=500, print_blob=True)
settings.load_profile("default")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--runslow", action="store_true", default=False, help="run slow sweeps too")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--runslow"):
        return
    skip = pytest.mark.skip(reason="slow sweep: run with --runslow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
