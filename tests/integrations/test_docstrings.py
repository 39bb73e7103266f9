"""The adapters' docstring examples run (each where its framework is installed)."""

from __future__ import annotations

import doctest
import importlib

import pytest


@pytest.mark.parametrize(("module", "framework"), [
    ("litellm", "litellm"),
    ("langchain", "langchain"),
    ("pydantic_ai", "pydantic_ai"),
])
def test_docstring_examples(module: str, framework: str) -> None:
    pytest.importorskip(framework, reason=f"{framework} is not installed")
    found = doctest.testmod(importlib.import_module(f"normalizer.integrations.{module}"))
    assert found.attempted > 0 and found.failed == 0
