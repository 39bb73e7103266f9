"""The package's front door: lazy names (PEP 562), one table, and what `import normalizer` costs."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import normalizer

INIT = Path(normalizer.__file__)


def test_all_is_the_export_table() -> None:
    assert sorted(normalizer.__all__) == sorted(["__version__", *normalizer._EXPORTS])
    assert len(normalizer.__all__) == len(set(normalizer.__all__))


@pytest.mark.parametrize("name", sorted(normalizer._EXPORTS))
def test_each_name_is_its_module_s_own(name: str) -> None:
    module = importlib.import_module(normalizer._EXPORTS[name], "normalizer")
    assert getattr(normalizer, name) is getattr(module, name)


def test_the_type_checking_imports_mirror_the_table() -> None:
    # What type checkers and IDEs see is what the package gives at run time.
    tree = ast.parse(INIT.read_text())
    [block] = [node for node in tree.body if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"]
    seen = {alias.name: "." * node.level + (node.module or "")
            for node in block.body if isinstance(node, ast.ImportFrom) and node.level for alias in node.names}
    assert seen == normalizer._EXPORTS


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="module 'normalizer' has no attribute 'nope'"):
        normalizer.nope  # noqa: B018
    assert "repair" in dir(normalizer)


def test_importing_the_package_loads_no_dependency() -> None:
    # `import normalizer` is this file only; the first name used loads what it needs.
    code = ("import sys, normalizer; "
            "print(sorted(m for m in ('pydantic', 'anyio', 'orjson', 'transitions', 'normalizer._core') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
    code = "import sys; from normalizer import repair; print(list(repair([{'role': 'user', 'content': 'hi'}])))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[{'role': 'user', 'content': 'hi'}]"
