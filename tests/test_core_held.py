"""``_core/_held.py``: the size of a held message. ``plain_calls_size`` is a one-pass walk of
a plain call list; it must give what the general walk (``nested_size``) gives, or None."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from normalizer._core._held import message_size, nested_size, plain_calls_size

_CALLS = [
    {"id": "c1", "type": "function", "function": {"name": "shell", "arguments": '{"cmd": "ls"}'}},
    {"id": "c22", "type": "function", "function": {"name": "read_file", "arguments": "{}"}},
]


def _general(calls: list[Any]) -> int:
    return nested_size([calls])


def test_plain_calls_are_sized_as_the_general_walk_sizes_them():
    assert plain_calls_size(_CALLS) == _general(_CALLS) == 2 + sum(
        3 + len("id") + len(c["id"]) + len("type") + len("function") + len("function") + 2
        + len("name") + len(c["function"]["name"]) + len("arguments") + len(c["function"]["arguments"])
        for c in _CALLS
    )


def test_a_message_with_calls_is_sized_as_before():
    message = {"role": "assistant", "content": "", "tool_calls": _CALLS}
    top = 3 + len("role") + len("assistant") + len("content") + len("tool_calls")
    assert message_size(message) == top + _general(_CALLS)


def test_a_call_met_twice_is_left_to_the_general_walk():
    twice = [_CALLS[0], _CALLS[0]]
    assert plain_calls_size(twice) is None
    assert message_size({"role": "assistant", "tool_calls": twice}) == 2 + 4 + 9 + 10 + _general(twice)


def test_a_shared_function_is_left_to_the_general_walk():
    function = {"name": "f", "arguments": "{}"}
    shared = [{"id": "a", "function": function}, {"id": "b", "function": function}]
    assert plain_calls_size(shared) is None


def test_anything_but_strings_and_dicts_of_strings_is_left_to_the_general_walk():
    assert plain_calls_size([{"id": "a", "index": 0}]) is None
    assert plain_calls_size([{"id": "a", "function": {"name": "f", "arguments": {"x": "1"}}}]) is None
    assert plain_calls_size(["text"]) is None
    assert plain_calls_size([{1: "a"}]) is None
    cyclic: dict[str, Any] = {"id": "a"}
    cyclic["function"] = cyclic
    assert plain_calls_size([cyclic]) is None
    assert message_size({"role": "assistant", "tool_calls": [cyclic]}) == 2 + 4 + 9 + 10 + _general([cyclic])


def _plain(calls: list[Any]) -> bool:
    # What plain_calls_size promises to size: dicts with str keys and values that are strs or
    # dicts of strs, no container met twice.
    containers = [id(calls)]
    for call in calls:
        if type(call) is not dict or not all(type(key) is str for key in call):
            return False
        containers.append(id(call))
        for value in call.values():
            if type(value) is dict:
                if not all(type(k) is str and type(v) is str for k, v in value.items()):
                    return False
                containers.append(id(value))
            elif type(value) is not str:
                return False
    return len(set(containers)) == len(containers)


_TEXT = st.text(max_size=6)
_LEAF = st.one_of(_TEXT, st.none(), st.integers(), st.booleans())
_INNER = st.dictionaries(_TEXT, st.one_of(_TEXT, _LEAF), max_size=3)
_CALL = st.dictionaries(_TEXT, st.one_of(_TEXT, _INNER, _LEAF), max_size=4)


@settings(max_examples=300, deadline=None)
@given(st.lists(_CALL, max_size=4), st.data())
def test_generated_call_lists_are_sized_as_the_general_walk_sizes_them(calls, data):
    if calls and data.draw(st.booleans()):
        calls.append(calls[data.draw(st.integers(0, len(calls) - 1))])  # sometimes one met twice
    assert plain_calls_size(calls) == (_general(calls) if _plain(calls) else None)
    message = {"role": "assistant", "content": "x", "tool_calls": calls}
    assert message_size(message) == 3 + 4 + 9 + 7 + 1 + 10 + _general(calls)
