"""docs/getting_started.md: its table of extras lists every extra of pyproject.toml (an extra added
later must be described there), and its Python blocks run."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.docs.test_tutorials import python_blocks

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "getting_started.md"


def _extras() -> set[str]:
    tomllib = pytest.importorskip("tomllib", reason="tomllib is in Python 3.11+")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return set(project["optional-dependencies"])


def _table_extras(text: str) -> list[str]:
    """The first column of the table whose header is ``| extra | installs | what it enables |``."""
    table = text.split("| extra | installs | what it enables |", 1)[1].split("\n\n", 1)[0]
    return re.findall(r"^\| `([\w-]+)` \|", table, flags=re.M)


def test_the_extras_table_lists_every_extra_of_pyproject() -> None:
    listed = _table_extras(PAGE.read_text(encoding="utf-8"))
    assert len(listed) == len(set(listed)), listed
    missing, unknown = _extras() - set(listed), set(listed) - _extras()
    assert not missing, f"extras of pyproject.toml not described in docs/getting_started.md: {missing}"
    assert not unknown, f"docs/getting_started.md describes extras pyproject.toml does not have: {unknown}"


def test_the_page_is_in_the_navigation() -> None:
    assert "getting_started.md" in (ROOT / "mkdocs.yml").read_text(encoding="utf-8")


def test_the_python_blocks_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # the page uses the repository's models/ folder
    namespace: dict = {"__name__": "getting_started"}
    blocks = python_blocks(PAGE.read_text(encoding="utf-8"))
    assert len(blocks) >= 2
    for i, code in enumerate(blocks, 1):
        exec(compile(code, f"getting_started.md (python block {i})", "exec"), namespace)
