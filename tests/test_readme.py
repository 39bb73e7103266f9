"""The README says what the code does."""

from __future__ import annotations

import re
from pathlib import Path

from normalizer._state import diagram

README = (Path(__file__).parents[1] / "README.md").read_text(encoding="utf-8")


def test_state_diagram_is_rendered_from_the_machine():
    blocks = re.findall(r"```mermaid\n(.*?)```", README, re.S)
    assert blocks, "README has no mermaid diagram"
    assert blocks[0].strip() == diagram().strip()


def test_readme_names_the_ci_test_command():
    ci = (Path(__file__).parents[1] / ".ci" / "run").read_text()
    assert "python -m pytest" in ci
    assert "python -m pip install -e '.[test]' && python -m pytest" in README
