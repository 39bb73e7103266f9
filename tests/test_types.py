"""The typed API (``normalizer._types``): mypy --strict accepts a correct caller, passing the
output to the OpenAI SDK without a cast, and rejects misspelled options and profile names."""

from __future__ import annotations

import re
import sys
import typing
from pathlib import Path

import pytest

import normalizer
from normalizer import PROFILES, ProfileName

HERE = Path(__file__).parent / "typing"


@pytest.fixture(scope="module")
def mypy_output() -> str:
    # One mypy run for both files: the OpenAI SDK's types take most of a minute to read.
    api = pytest.importorskip("mypy.api")
    pytest.importorskip("openai", reason="the OpenAI SDK is what the output must be assignable to")
    # mypy raises the interpreter's recursion limit for its own run and leaves it raised:
    # restored here, or tests after this module that pin what happens past the default limit
    # (tests/formats/test_hostile_records.py's deep nesting) would see another interpreter.
    limit = sys.getrecursionlimit()
    try:
        stdout, stderr, _ = api.run(["--strict", "--no-incremental", "--show-error-codes", "--no-error-summary",
                                     str(HERE / "usage_ok.py"), str(HERE / "usage_bad.py")])
    finally:
        sys.setrecursionlimit(limit)
    return stdout + stderr


def test_the_profile_literal_names_every_built_in_profile() -> None:
    names = [n for n in typing.get_args(ProfileName) if ":" not in n]
    assert names == list(PROFILES)


def test_a_correct_caller_type_checks(mypy_output: str) -> None:
    assert [line for line in mypy_output.splitlines() if "usage_ok.py" in line] == []


def test_misspelled_options_and_profiles_are_type_errors(mypy_output: str) -> None:
    lines = sorted({int(m.group(1)) for m in re.finditer(r"usage_bad\.py:(\d+): error", mypy_output)})
    assert lines == [11, 12, 13, 14], mypy_output


def test_at_run_time_messages_are_plain_dicts() -> None:
    out = list(normalizer.repair([{"role": "user", "content": "hi"}]))
    assert out == [{"role": "user", "content": "hi"}] and type(out[0]) is dict


def test_the_typed_keywords_are_the_options_fields_with_the_same_types() -> None:
    # RepairOptions is written out (a TypedDict cannot be made from a model for a type
    # checker); this is the one test that keeps it in step with Options, the declaration.
    from normalizer import Options, Repair
    from normalizer._types import RepairOptions

    typed = typing.get_type_hints(RepairOptions, localns={"Repair": Repair})
    declared = {("validate" if name == "validate_messages" else name): info.annotation
                for name, info in Options.model_fields.items()}
    assert list(typed) == list(declared)
    assert {name: str(hint) for name, hint in typed.items()} == {name: str(hint) for name, hint in declared.items()}
