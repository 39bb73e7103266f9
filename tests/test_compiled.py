"""The compiled build (``.ci/compiled``) really is compiled, and ``normalizer.compiled`` says which runs."""

from __future__ import annotations

import os
import tomllib
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

import pytest

import normalizer
import normalizer._compiled
import normalizer._content
import normalizer._core._normalizer
import normalizer._note
import normalizer._plain
import normalizer._table
import normalizer._depth
import normalizer.formats._reader
import normalizer.profiles._encode
import normalizer.profiles._stage

COMPILED_MODULES = [
    normalizer._core._normalizer, normalizer._table, normalizer._content, normalizer._plain, normalizer._note,
    normalizer.profiles._encode, normalizer.profiles._stage, normalizer._depth,
    normalizer.formats._reader,
]


ROOT = Path(__file__).resolve().parents[1]


def hook_includes() -> tuple[str, ...]:
    """The modules the build hook compiles, as pyproject.toml lists them (their one home)."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    paths = config["tool"]["hatch"]["build"]["targets"]["wheel"]["hooks"]["custom"]["include"]
    return tuple(sorted(p.removesuffix(".py").replace("/", ".") for p in paths))


@pytest.mark.skipif(not os.environ.get("CHATNORM_EXPECT_COMPILED"), reason="not the compiled build (.ci/compiled)")
def test_the_hot_modules_are_the_compiled_ones() -> None:
    assert [m.__name__ for m in COMPILED_MODULES if not m.__file__.endswith((".so", ".pyd"))] == []
    assert normalizer.compiled == hook_includes()


@pytest.mark.skipif(bool(os.environ.get("CHATNORM_EXPECT_COMPILED")), reason="the compiled build")
def test_the_source_tree_runs_pure_python() -> None:
    # tests run against the checkout: an .so left there by a build would shadow the sources
    assert normalizer.compiled == ()


def test_compiled_lists_this_interpreters_extension_modules(tmp_path: Path) -> None:
    package = tmp_path / "normalizer"
    (package / "_core").mkdir(parents=True)
    (package / "__pycache__").mkdir()
    suffix = EXTENSION_SUFFIXES[0]
    for name in ["_table.py", f"_table{suffix}", f"_core/_normalizer{suffix}", "_core/_normalizer.py",
                 f"__pycache__/_x{suffix}", "_plain.cpython-29-x86_64-linux-gnu.so.bak", "_note.py"]:
        (package / name).write_bytes(b"")
    assert normalizer._compiled.compiled_modules(str(package)) == ("normalizer._core._normalizer", "normalizer._table")
    assert normalizer._compiled.compiled_modules(str(tmp_path / "nothing")) == ()


def test_the_hook_compiles_the_modules_that_exist() -> None:
    assert [m for m in hook_includes() if not (ROOT / (m.replace(".", "/") + ".py")).is_file()] == []


def test_the_pure_python_modules_are_the_fallback_and_behave_the_same() -> None:
    # Both builds run this suite; the core's results do not depend on which one is loaded.
    history = [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"},
               {"role": "assistant", "content": "b"}]
    out = list(normalizer.repair(history, profile="mistral"))
    assert out == [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a\nb", "prefix": True}]
