"""The quick loop's declarations (``quick_loop.SLOW``) name tests that exist."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from quick_loop import SLOW

ROOT = Path(__file__).resolve().parents[1]


def _functions(module: Path) -> set[str]:
    tree = ast.parse(module.read_text(encoding="utf-8"))
    return {node.name for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}


@pytest.mark.parametrize("prefix", sorted(SLOW))
def test_every_slow_entry_names_a_test_that_exists(prefix: str) -> None:
    path, _, function = prefix.partition("::")
    target = ROOT / path
    if path.endswith("/"):
        assert target.is_dir() and any(target.glob("test_*.py")), prefix
    else:
        assert target.is_file(), prefix
        if function:
            assert function in _functions(target), prefix
    assert SLOW[prefix], prefix

