"""Cross-validation's public names in one place (``bridge.cross_validate`` lives here).

The work is split by job: :mod:`~bridge.validation.sampling` (random states, default frames),
:mod:`~bridge.validation.report` (Finding, Result, Report), :mod:`~bridge.validation.cross_validation`
(the engine comparison), :mod:`~bridge.validation.identities` and :mod:`~bridge.validation.native`
(the libraries' own loaders).
"""

from __future__ import annotations

from bridge.validation.cross_validation import QUANTITIES, available_engines, cross_validate
from bridge.validation.report import Finding, Report, Result
from bridge.validation.sampling import default_frames, random_states

__all__ = [
    "QUANTITIES",
    "Finding",
    "Report",
    "Result",
    "available_engines",
    "cross_validate",
    "default_frames",
    "random_states",
]
