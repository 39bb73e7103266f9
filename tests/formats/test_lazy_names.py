"""The formats package's front door: lazy names (PEP 562), as in the package's own."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import normalizer.formats as formats

INIT = Path(formats.__file__)


def test_all_is_the_export_table() -> None:
    assert sorted(formats.__all__) == sorted(formats._EXPORTS)
    assert len(formats.__all__) == len(set(formats.__all__))


@pytest.mark.parametrize("name", sorted(formats._EXPORTS))
def test_each_name_is_its_module_s_own(name: str) -> None:
    module = importlib.import_module(formats._EXPORTS[name], "normalizer.formats")
    assert getattr(formats, name) is getattr(module, name)


def test_the_type_checking_imports_mirror_the_table() -> None:
    tree = ast.parse(INIT.read_text())
    [block] = [node for node in tree.body if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"]
    seen = {alias.name: "." * node.level + (node.module or "")
            for node in block.body if isinstance(node, ast.ImportFrom) for alias in node.names}
    assert seen == formats._EXPORTS


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="module 'normalizer.formats' has no attribute 'nope'"):
        formats.nope  # noqa: B018
    assert "read_messages" in dir(formats)


def test_the_session_formats_are_one_tuple() -> None:
    from normalizer.formats import _sessions

    assert formats.SESSION_FORMATS is _sessions.SESSION_FORMATS == ("claude-code", "codex", "gemini-cli")


def test_reading_jsonl_loads_neither_the_document_parser_nor_the_session_repairers() -> None:
    code = (
        "import io, sys; from normalizer.formats import read_messages\n"
        "assert list(read_messages(io.BytesIO(b'{\"role\": \"user\", \"content\": \"hi\"}\\n')))\n"
        "print(sorted(m for m in ('ijson', 'normalizer.formats._sessions', 'normalizer.formats._writers', "
        "'normalizer.formats._memory') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
    code = "import io, sys; from normalizer.formats import read_messages; list(read_messages(io.BytesIO(b'[]'))); print('ijson' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "True"
