"""Call arguments repaired (``profiles/_arguments.py``): closed where cut off, one copy of an
object written several times over."""

from __future__ import annotations

import copy

import pytest

import normalizer
from normalizer.profiles._arguments import close_json, one_copy


# -- arguments written several times over (hermes-agent's test_6841_repeated_tool_call_repair.py)


@pytest.mark.parametrize(("arguments", "repaired"), [
    ('{"category":"research"}{"category":"research"}', '{"category":"research"}'),
    ('{"category":"research"}{"category":"research"}{"category":"research"}', '{"category":"research"}'),
    ('{"a": 1}\n{"a": 1}\n', '{"a": 1}'),
    ('{"a": 1}{"a": 2}', "{}"),  # two different objects: not one call's arguments, nothing guessed
])
def test_arguments_repeated_collapse_to_one_copy(arguments: str, repaired: str) -> None:
    history = [{"role": "user", "content": "hi"},
               {"role": "assistant", "content": None, "tool_calls": [
                   {"id": "toolu_1", "type": "function", "function": {"name": "f", "arguments": arguments}}]},
               {"role": "tool", "tool_call_id": "toolu_1", "content": "r"}]
    stream = normalizer.repair(copy.deepcopy(history), profile="anthropic")
    out = list(stream)
    assert out[1]["tool_calls"][0]["function"]["arguments"] == repaired
    assert [(r.kind, r.dropped) for r in stream.report.records] == [
        ("repair_arguments", {"id": "toolu_1", "arguments": arguments})]
    assert list(normalizer.repair(out, profile="anthropic")) == out


def test_one_copy_needs_two_copies_of_one_object() -> None:
    assert one_copy('{"a": 1} {"a": 1}') == '{"a": 1}'
    assert one_copy('{"a": 1}') is None
    assert one_copy('[1][1]') is None  # arguments are an object
    assert one_copy('{"a": 1}{"a": 1') is None
    assert close_json('{"a": 1}{"a": 1') is None  # neither repeated nor cut off: "{}"
