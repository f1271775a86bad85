"""The documentation site builds with ``mkdocs build --strict`` (no warnings) when mkdocs is
installed (the ``docs`` extra: ``pip install -e '.[docs]'``)."""

from __future__ import annotations

import re
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
    _no_sphinx_roles_left(site)
    _stateless_functions_and_derivatives_documented(site)


#: a Sphinx role printed as text: ":class:" then the name (in <code>, or with its backticks)
LITERAL_ROLE = re.compile(r":(?:py:)?(?:class|func|meth|attr|mod|data|exc|obj|const|type):(?:<code>|`)")


def _no_sphinx_roles_left(site: Path) -> None:
    """No page shows a Sphinx role as text (scripts/docstring_roles.py turns them into links, or
    code where the object has no page), and roles did become links."""
    left = {}
    for page in site.rglob("*.html"):
        found = LITERAL_ROLE.findall(page.read_text(encoding="utf-8"))
        if found:
            left[str(page.relative_to(site))] = len(found)
    assert not left, f"Sphinx roles printed as text: {left}"
    kindyn = (site / "api" / "kindyn" / "index.html").read_text(encoding="utf-8")
    assert (
        'href="../state/#bridge.conventions.state.State"' in kindyn
    )  # :class:`~bridge.conventions.state.State`
    assert "<autoref" not in kindyn  # every optional reference resolved or dropped by autorefs


def _stateless_functions_and_derivatives_documented(site: Path) -> None:
    """Every stateless function (bridge.dynamics.queries.QUERIES, the derivatives among them) and
    the KinDyn derivative methods have an entry in the API pages."""
    from bridge.dynamics.queries import QUERIES

    functional = (site / "api" / "functional" / "index.html").read_text(encoding="utf-8")
    for name in QUERIES:
        assert f'id="bridge.dynamics.functional.{name}"' in functional, name
    kindyn = (site / "api" / "kindyn" / "index.html").read_text(encoding="utf-8")
    for name in ("inverse_dynamics_derivatives", "forward_dynamics_derivatives", "frame_jacobian_derivative"):
        assert f'id="bridge.dynamics.kindyn.KinDyn.{name}"' in kindyn, name
    derivatives = (site / "api" / "derivatives" / "index.html").read_text(encoding="utf-8")
    assert 'id="bridge.derivatives.convert.convert_dynamics_derivatives"' in derivatives
