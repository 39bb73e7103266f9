"""Validation at the edge: errors name index and field; the fast path agrees with pydantic."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from normalizer import InvalidMessage
from normalizer._messages import MESSAGE, is_plain, validate_message

values = st.one_of(
    st.none(), st.text(max_size=5), st.integers(), st.booleans(), st.binary(max_size=3),
    st.lists(st.text(max_size=3), max_size=2), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)
functions = st.dictionaries(st.sampled_from(["name", "arguments", "x"]), values, max_size=3)
calls = st.dictionaries(
    st.sampled_from(["id", "call_id", "type", "function", "extra"]), st.one_of(values, functions), max_size=5
)
messages = st.builds(
    lambda role, fields: {"role": role, **fields},
    st.sampled_from(["system", "developer", "user", "assistant", "tool"]),
    st.dictionaries(
        st.sampled_from(["content", "name", "tool_call_id", "reasoning_content", "tool_calls", "x_extra"]),
        st.one_of(values, st.lists(calls, max_size=2)),
        max_size=5,
    ),
)


@settings(max_examples=2000, deadline=None)
@given(messages)
def test_fast_path_accepts_only_what_the_adapter_returns_unchanged(message):
    if is_plain(message):
        assert MESSAGE.validate_python(message) == message


def test_fast_path_covers_the_common_shapes():
    assert is_plain({"role": "user", "content": "hi"})
    assert is_plain({"role": "tool", "tool_call_id": "c1", "content": "out"})
    assert is_plain({
        "role": "assistant", "content": None,
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
    })
    assert not is_plain({"role": "user", "content": [{"type": "text", "text": "x"}]})
    assert not is_plain({"role": "robot", "content": "x"})


@pytest.mark.parametrize(
    ("message", "field", "text"),
    [
        ({"role": "user", "content": 5}, "content", "content: expected a list or a string, got int 5"),
        ({"content": "x"}, "role", "message has no 'role'"),
        ({"role": "bot"}, "role", "unknown role 'bot'"),
        ({"role": "assistant", "tool_calls": "x"}, "tool_calls", "tool_calls: expected a list"),
        ({"role": "assistant", "tool_calls": [{"function": [1]}]}, "tool_calls.0.function", "expected an object"),
        ({"role": "tool", "tool_call_id": 7}, "tool_call_id", "expected a string, got int 7"),
    ],
)
def test_errors_name_the_index_and_the_field(message, field, text):
    with pytest.raises(InvalidMessage) as info:
        validate_message(message, 7)
    assert info.value.index == 7 and info.value.field == field
    assert str(info.value).startswith("message 7: ") and text in str(info.value)


def test_not_an_object():
    with pytest.raises(InvalidMessage, match="message 0: expected a message object, got list"):
        validate_message([1, 2], 0)


def test_validation_returns_a_copy_with_extras():
    original = {"role": "user", "content": [{"type": "text", "text": "x"}], "x_trace": {"id": 1}}
    validated = validate_message(original, 0)
    assert validated == original and validated is not original
