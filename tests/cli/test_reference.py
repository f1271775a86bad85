"""docs/cli.md is the command-line reference rendered from the typer app (bridge.cli.reference):
it is up to date, and it lists every command and every option that ``--help`` shows."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bridge.cli import reference
from tests.cli.runner import run

DOC = Path(__file__).resolve().parents[2] / "docs" / "cli.md"


def _help_options(text: str) -> set[str]:
    """The option strings of the Options panel of a ``--help`` (the first column of each row; a
    wrapped description continues far to the right)."""
    out: set[str] = set()
    for line in text.splitlines():
        match = re.match(r"\s*│[ *]{1,5}(-.*)", line)
        if match is None:
            continue
        for token in match.group(1).split():
            if token.startswith("<") or not token.startswith("-"):
                break
            out.add(token)
    return out


def test_the_reference_is_up_to_date() -> None:
    """Regenerate and compare: after changing a command run
    ``python -m bridge.cli.reference --write docs/cli.md``."""
    assert DOC.read_text(encoding="utf-8") == reference.render(), (
        "docs/cli.md is out of date: python -m bridge.cli.reference --write docs/cli.md"
    )


def test_every_command_and_option_of_help_is_in_the_reference() -> None:
    text = DOC.read_text(encoding="utf-8")
    top = run("--help")
    names = [name for name, _ in reference.commands()]
    assert set(names) >= {"check", "info", "convert", "models", "version"}
    for name, command in reference.commands():
        assert re.search(rf"│ {name} ", top.output), name  # in the Commands panel of bridge --help
        assert f"## bridge {name}\n" in text
        shown = _help_options(run(name, "--help").output) - {"--help"}
        assert shown == set(reference.options_of(command)), name
        section = text.split(f"## bridge {name}\n", 1)[1].split("\n## ", 1)[0]
        for option in shown:
            assert f"`{option}`" in section, (name, option)


def test_exit_codes_are_listed() -> None:
    from bridge.cli.app import EXIT_CODES, EXIT_SKIPPED

    text = DOC.read_text(encoding="utf-8")
    assert {0, 1, 2, EXIT_SKIPPED} <= set(EXIT_CODES)
    for code in EXIT_CODES:
        assert f"\n| {code} | " in text


def test_write_and_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cli.md"
    assert reference.main(["--check", str(out)]) == 1
    assert reference.main(["--write", str(out)]) == 0
    assert reference.main(["--check", str(out)]) == 0
    out.write_text(out.read_text() + "edited\n")
    assert reference.main(["--check", str(out)]) == 1
    assert "out of date" in capsys.readouterr().err
    assert reference.main(["--bogus"]) == 2
