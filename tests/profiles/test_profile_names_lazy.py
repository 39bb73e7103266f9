"""The profiles package's front door: lazy names (PEP 562), as in the package's own."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import normalizer.profiles as profiles

INIT = Path(profiles.__file__)


def test_all_is_the_export_table() -> None:
    assert sorted(profiles.__all__) == sorted(profiles._EXPORTS)
    assert len(profiles.__all__) == len(set(profiles.__all__))


@pytest.mark.parametrize("name", sorted(profiles._EXPORTS))
def test_each_name_is_its_module_s_own(name: str) -> None:
    module = importlib.import_module(profiles._EXPORTS[name], "normalizer.profiles")
    assert getattr(profiles, name) is getattr(module, name)


def test_the_type_checking_imports_mirror_the_table() -> None:
    tree = ast.parse(INIT.read_text())
    [block] = [node for node in tree.body if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"]
    seen = {alias.name: "." * node.level + (node.module or "")
            for node in block.body if isinstance(node, ast.ImportFrom) for alias in node.names}
    assert seen == profiles._EXPORTS


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="module 'normalizer.profiles' has no attribute 'nope'"):
        profiles.nope  # noqa: B018
    assert "check" in dir(profiles)


def test_repairing_loads_neither_the_checker_nor_the_model_table() -> None:
    code = (
        "import sys; from normalizer import repair\n"
        "assert list(repair([{'role': 'user', 'content': 'hi'}], profile='mistral'))\n"
        "print(sorted(m for m in ('normalizer.profiles._check', 'normalizer.profiles._models') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
