"""The documentation site builds with ``mkdocs build --strict`` (no warnings) when mkdocs is
installed (the ``docs`` extra: ``pip install -e '.[docs]'``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_mkdocs_build_strict(tmp_path: Path) -> None:
    pytest.importorskip("mkdocs", reason="mkdocs is not installed (it is in the test extra)")
    pytest.importorskip("mkdocstrings", reason="mkdocstrings is not installed (it is in the test extra)")
    site = tmp_path / "site"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "--config-file",
            str(ROOT / "mkdocs.yml"),
            "--site-dir",
            str(site),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "WARNING" not in proc.stderr, proc.stderr
    for page in ("index.html", "conventions/index.html", "theory/index.html", "tutorials/reroot/index.html"):
        assert (site / page).is_file(), page
    # the API reference is generated from the docstrings
    convert_api = (site / "api" / "convert" / "index.html").read_text(encoding="utf-8")
    assert "velocity_transform" in convert_api and "nu_target = T @ nu_source" in convert_api
    conventions = (site / "conventions" / "index.html").read_text(encoding="utf-8")
    assert conventions.count("<table>") >= 6
