"""Moved to :mod:`bridge.backends.drake.native`; this name stays for ``bridge.cli.info``."""

from __future__ import annotations

from bridge.backends.drake.native import load_drake_urdf

__all__ = ["load_drake_urdf"]
