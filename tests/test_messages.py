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


# -- lone surrogates in memory (attack campaign item 13; the policy: normalizer.formats._records) -----------


def test_a_model_with_a_lone_surrogate_key_is_an_invalid_message_naming_index_and_path():
    # was: UnicodeEncodeError out of the model's JSON dump
    import pydantic

    from normalizer import InvalidMessage
    from normalizer._messages import validate_message

    class Part(pydantic.BaseModel):
        model_config = pydantic.ConfigDict(extra="allow")

    class Msg(pydantic.BaseModel):
        model_config = pydantic.ConfigDict(extra="allow")
        role: str
        parts: list[Part] = []

    bad = Part()
    bad.__pydantic_extra__["z\udc00"] = 2
    with pytest.raises(InvalidMessage) as exc:
        validate_message(Msg(role="user", parts=[Part(), bad]), 3)
    assert (exc.value.index, exc.value.field) == (3, "parts.1")
    assert str(exc.value) == (
        "message 3: parts.1: lone surrogate in 'z\\udc00' (half of a UTF-16 pair: not a character). "
        "Text must be valid Unicode; replace or drop the surrogate before normalizing"
    )


def test_a_report_holding_a_lone_surrogate_dumps_with_a_note():
    # was: PydanticSerializationError although model_dump_json() is documented to work
    import orjson

    from normalizer import Report

    report = Report()
    report.add("x", "d\ud800", dropped={"k\udc00": ["a\ud800b"]})
    dumped = orjson.loads(report.model_dump_json())
    assert dumped["records"][0]["detail"] == "d\ufffd"
    assert dumped["records"][0]["dropped"] == {"k\ufffd": ["a\ufffdb"]}
    assert dumped["records"][1]["kind"] == "replace_surrogates"
    assert dumped["records"][1]["detail"].startswith("3 lone surrogate(s)")
    assert dumped["counts"] == {"x": 1, "replace_surrogates": 1}
    assert report.records[0].dropped == {"k\udc00": ["a\ud800b"]}  # the report itself is untouched


def test_the_models_are_loaded_by_the_first_message_off_the_fast_path():
    # Start-up: plain messages never need the pydantic models (_message_models); the first
    # message that does loads them, and from then on the core calls the adapter's own method.
    import subprocess
    import sys

    code = (
        "import sys; from normalizer import repair, _messages\n"
        "list(repair([{'role': 'user', 'content': 'hi'}]))\n"
        "print('normalizer._message_models' in sys.modules, 'pydantic.type_adapter' in sys.modules)\n"
        "list(repair([{'role': 'user', 'content': [{'type': 'text', 'text': 'hi'}]}]))\n"
        "print('normalizer._message_models' in sys.modules, _messages.validate_python == _messages.MESSAGE.validate_python)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False", "True", "True"]
