"""The README's Python example runs as written."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_python_example_runs() -> None:
    text = README.read_text()
    section = text.split("## From Python", 1)[1]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    assert blocks, "no Python example in the README"
    namespace: dict = {}
    exec(compile(blocks[0], str(README), "exec"), namespace)  # the README's own code
    assert namespace["report"].ok
    assert namespace["nu_dot"].shape == (namespace["model"].nv,)
