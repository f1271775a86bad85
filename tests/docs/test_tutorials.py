"""Every ```python block of every tutorial runs, in order, in one namespace per page.

The tutorials assert their own results (plain ``assert`` and ``numpy.testing``), so a tutorial
whose numbers stop being true fails here. Blocks run in a temporary working directory.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bridge.backends import registry
from bridge.conventions.registry import convention_names, unregister_convention

TUTORIALS = Path(__file__).resolve().parents[2] / "docs" / "tutorials"
BLOCK = re.compile(r"^```python[^\n]*\n(.*?)^```\s*$", re.DOTALL | re.MULTILINE)
PAGES = sorted(TUTORIALS.glob("*.md"))
# a page that needs optional peers names their import names: <!-- requires: jax mujoco.mjx -->
REQUIRES = re.compile(r"<!--\s*requires:([^>]*)-->")


def python_blocks(text: str) -> list[str]:
    """The ```python blocks of a Markdown text, in order."""
    return BLOCK.findall(text)


def test_tutorial_pages_exist():
    names = {p.stem for p in PAGES}
    expected = {"load_urdf", "cross_validate", "convert_quantities", "reroot", "featherstone_batch"}
    expected |= {"derivatives", "mujoco", "add_convention", "autodiff"}
    assert expected <= names


def test_block_extraction():
    text = "intro\n```python\na = 1\n```\n\n```bash\nnot python\n```\n```python title=x\nb = a + 1\n```\n"
    assert python_blocks(text) == ["a = 1\n", "b = a + 1\n"]


@pytest.mark.parametrize("page", PAGES, ids=[p.stem for p in PAGES])
def test_tutorial_runs(page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = page.read_text(encoding="utf-8")
    for module in (m for found in REQUIRES.findall(text) for m in found.split()):
        pytest.importorskip(module, reason=f"{page.name} needs {module}")
    blocks = python_blocks(text)
    assert blocks, f"{page.name} has no ```python block"
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": f"tutorial_{page.stem}"}
    libraries, conventions = dict(registry.LIBRARIES), set(convention_names())
    try:
        for i, code in enumerate(blocks, 1):
            exec(compile(code, f"{page.name} (python block {i})", "exec"), namespace)
    finally:
        added = _undo_registrations(libraries, conventions)
    # a page that registers a library or a convention removes it again (other pages see the same
    # registries as a fresh `import bridge`)
    assert not added, f"{page.name} left registered: {added}"


def _undo_registrations(libraries: dict, conventions: set[str]) -> list[str]:
    """Unregister the libraries and conventions added since the snapshot; returns their names."""
    added = [name for name in registry.LIBRARIES if name not in libraries]
    for name in added:
        registry.unregister(name)
    extra = [name for name in convention_names() if name not in conventions]
    for name in extra:
        unregister_convention(name)
    return added + extra
