"""The optional compiled build (``.ci/compiled``) really is compiled, and says so."""

from __future__ import annotations

import os

import pytest

import normalizer
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


@pytest.mark.skipif(not os.environ.get("CHATNORM_EXPECT_COMPILED"), reason="not the compiled build (.ci/compiled)")
def test_the_hot_modules_are_the_compiled_ones() -> None:
    assert [m.__name__ for m in COMPILED_MODULES if not m.__file__.endswith((".so", ".pyd"))] == []


def test_the_pure_python_modules_are_the_fallback_and_behave_the_same() -> None:
    # Both builds run this suite; the core's results do not depend on which one is loaded.
    history = [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"},
               {"role": "assistant", "content": "b"}]
    out = list(normalizer.repair(history, profile="mistral"))
    assert out == [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a\nb", "prefix": True}]
