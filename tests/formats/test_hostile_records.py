"""Arbitrary records and bytes: every reader ends with messages or the project's own error."""

from __future__ import annotations

import io
import json
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import normalizer
from normalizer import InputError, InvalidMessage, Report
from normalizer.formats import FORMATS, read_conversations, read_messages

json_scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=12))
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)),
    max_leaves=10,
)
# Records shaped like each format's, with wrong types in every field.
keys = st.sampled_from([
    "type", "role", "content", "payload", "message", "id", "call_id", "name", "arguments", "output",
    "tool_calls", "tool_call_id", "conversations", "from", "value", "messages", "isSidechain", "summary",
    "text", "input", "tool_use_id", "is_error", "replacement_history", "num_turns", "base_instructions",
    "parentUuid", "isMeta", "encrypted_content", "action", "refusal", "thinking", "source", "image_url", "system",
])
typed_values = st.one_of(
    json_values,
    st.sampled_from(["message", "function_call", "function_call_output", "reasoning", "response_item",
                     "event_msg", "assistant", "user", "tool", "tool_use", "tool_result", "text", "human", "gpt",
                     "function_call", "observation", "compacted", "user_message", "thread_rolled_back",
                     "turn_aborted", "session_meta", "custom_tool_call", "local_shell_call", "thinking", "image",
                     "input_image", "refusal", "input_text", "output_text", "custom_tool_call_output", "reasoning"]),
)
records = st.recursive(
    st.dictionaries(keys, typed_values, max_size=6),
    lambda inner: st.dictionaries(keys, st.one_of(typed_values, inner, st.lists(inner, max_size=3)), max_size=6),
    max_leaves=15,
)

SETTINGS = settings(max_examples=int(os.environ.get("HOSTILE_EXAMPLES", "150")), deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("fmt", sorted(FORMATS))
@SETTINGS
@given(data=st.lists(st.one_of(records, json_values), max_size=8))
def test_converters_take_arbitrary_records(fmt, data):
    converter = FORMATS[fmt](Report())
    try:
        out = []
        for line, record in enumerate(data, 1):
            out += converter.feed(record, line=line)
        out += converter.close()
    except InputError as exc:
        assert exc.line is not None or exc.index is not None or exc.source is not None, str(exc)
        return
    # What a converter produced, the core either repairs or rejects with a positioned error.
    try:
        list(normalizer.repair([m for m in out if isinstance(m, dict)]))
    except InputError as exc:
        assert exc.index is not None


@SETTINGS
@given(st.binary(max_size=300))
def test_arbitrary_bytes_read_or_fail_clearly(raw):
    try:
        for _ in read_messages(io.BytesIO(raw)):
            pass
    except InputError as exc:
        assert str(exc)


def _encode(value):
    return json.dumps(value).encode()


containers = st.sampled_from(["jsonl", "array", "messages", "input", "body", "system"])


@SETTINGS
@given(data=st.lists(st.one_of(records, json_values), max_size=6), container=containers, fmt=st.sampled_from(["auto", *sorted(FORMATS)]), extra=json_values, on_invalid=st.sampled_from(["error", "skip"]))
def test_files_of_arbitrary_records_read_or_fail_clearly(data, container, fmt, extra, on_invalid):
    """The same records written as a file (JSONL or a document): the readers, detection and
    document meta keys included, end with messages or a positioned InputError."""
    if container == "jsonl":
        raw = b"\n".join(_encode(r) for r in data)
    elif container == "array":
        raw = _encode(data)
    elif container == "body":
        raw = _encode({"request": {"body": {"messages": data, "system": extra}}})
    else:
        raw = _encode({container: data, "system": extra, "system_prompt": extra} if container != "system" else {"system": extra, "messages": data})
    try:
        for conv in read_conversations(io.BytesIO(raw), fmt, on_invalid=on_invalid):
            list(conv.messages)
    except InputError as exc:
        assert exc.line is not None or exc.index is not None or exc.source is not None, str(exc)


@pytest.mark.parametrize("raw", [b"", b"\xef\xbb\xbf", b"\n\n\n"])
def test_files_with_no_record_give_no_message(raw):
    assert list(read_messages(io.BytesIO(raw))) == []


@pytest.mark.parametrize(
    ("raw", "where_and_what"),
    [
        (b"\xff\xfe{}", "<stream>:1:1: not UTF-8 text (byte 0xff)"),
        (b"[", "<stream>:1:2: the JSON document ends too early (after record 0)"),
        (b'{"role": "user"', "<stream>:1:16: not JSON: unexpected end of data"),
        (b"\x00" * 10, "<stream>:1:1: not JSON: unexpected character"),
    ],
)
def test_broken_files_are_errors_that_say_where_and_what(raw, where_and_what):
    with pytest.raises(InputError) as caught:
        list(read_messages(io.BytesIO(raw)))
    assert str(caught.value).startswith(where_and_what)


# -- regressions: one per bug the property tests found ------------------------------------------


def _run(fmt, records):
    converter = FORMATS[fmt](Report())
    out = []
    for line, record in enumerate(records, 1):
        out += converter.feed(record, line=line)
    return out + converter.close()


def _nested(depth):
    value = []
    for _ in range(depth):
        value = [value]
    return value


def test_responses_message_role_of_any_type_is_a_clear_error():
    # was: TypeError: unhashable type: 'dict' (role tested against a set)
    with pytest.raises(InvalidMessage, match="role dict") as exc:
        _run("responses", [{"role": {}}])
    assert exc.value.line == 1 and exc.value.field == "role"


def test_content_part_type_of_any_type_is_kept_not_a_crash():
    # was: TypeError: unhashable type (a part's "type" tested against a set)
    out = _run("responses", [{"role": "user", "content": [{"type": {"x": 1}, "text": "a"}]}])
    assert out == [{"role": "user", "content": [{"type": {"x": 1}, "text": "a"}]}]


@pytest.mark.parametrize(
    ("fmt", "records", "what"),
    [
        ("responses", [{"type": "function_call", "name": "f", "call_id": {"a": 1}}, {"type": "function_call_output", "call_id": "c"}], "'call_id'"),
        ("responses", [{"type": "function_call", "name": "f", "id": 7}], "'id'"),
        (
            "claude-code",
            [
                {"type": "assistant", "message": {"content": [{"type": "tool_use", "name": "f", "id": ["x"]}]}},
                {"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": "t"}]}},
            ],
            "'tool_use' block's 'id'",
        ),
        ("anthropic", [{"role": "assistant", "content": [{"type": "tool_use", "name": "f", "id": 1}]}], "'tool_use' block's 'id'"),
    ],
)
def test_call_ids_must_be_strings(fmt, records, what):
    # was: a dict / list id reached the call list, and TypeError (unhashable) when its turn
    # was flushed with results; a number went on to the core as a call id
    with pytest.raises(InvalidMessage, match=what) as exc:
        _run(fmt, records)
    assert exc.value.line == 1 and "must be a string" in str(exc.value)


def test_function_call_name_error_names_the_item_and_the_type():
    with pytest.raises(InvalidMessage, match="a Responses 'function_call' item needs a string 'name', got dict") as exc:
        _run("responses", [{"type": "function_call", "name": {}, "call_id": "c"}])
    assert exc.value.line == 1


BIG = 2**70


@pytest.mark.parametrize(
    ("fmt", "records"),
    [
        ("responses", [{"type": "function_call", "name": "f", "call_id": "c", "arguments": {"n": BIG}}]),
        ("responses", [{"type": "function_call_output", "call_id": "c", "output": {"n": BIG}}]),
        ("claude-code", [{"type": "assistant", "message": {"content": [{"type": "thinking", "thinking": "x", "n": BIG}]}}]),
        ("anthropic", [{"role": "assistant", "content": [{"type": "tool_use", "name": "f", "id": "t", "input": {"n": BIG}}]}]),
        ("sharegpt", [{"conversations": [{"from": "human", "value": {"n": BIG}}]}]),
    ],
)
def test_integers_past_64_bits_are_written_not_a_crash(fmt, records):
    # was: TypeError "Integer exceeds 64-bit range" from orjson (a JSON document keeps big ints)
    out = _run(fmt, records)
    assert str(BIG) in repr(out)


def test_deeply_nested_record_is_described_not_a_recursion_error():
    # was: RecursionError from repr() while building the error message
    with pytest.raises(InvalidMessage, match="expected a chat message") as exc:
        _run("chat", [_nested(5000)])
    assert exc.value.line == 1


@pytest.mark.parametrize("depth", [300, 5000])
def test_deeply_nested_arguments(depth):
    # was: TypeError "Recursion limit reached" from orjson past 254 levels
    records = [{"type": "function_call", "name": "f", "call_id": "c", "arguments": _nested(depth)}]
    if depth < 900:
        (msg,) = _run("responses", records)
        assert msg["tool_calls"][0]["function"]["arguments"] == "[" * (depth + 1) + "]" * (depth + 1)
    else:
        with pytest.raises(InvalidMessage, match="nested too deeply") as exc:
            _run("responses", records)
        assert exc.value.line == 1


@pytest.mark.parametrize(
    ("fmt", "records", "expected"),
    [
        # was: the record's own "role" replaced the converted one (a tool result became a user turn)
        (
            "responses",
            [{"type": "function_call_output", "call_id": "c", "output": "x", "role": "user"}],
            [{"role": "tool", "tool_call_id": "c", "content": "x", "source_fields": {"role": "user"}}],
        ),
        (
            "claude-code",
            [
                {"type": "assistant", "message": {"id": "m", "content": [{"type": "tool_use", "name": "f", "id": "t", "function": 1}]}},
                {"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": "t", "content": "r", "role": "user"}]}},
            ],
            [
                {"role": "assistant", "content": None, "tool_calls": [
                    {"id": "t", "type": "function", "function": {"name": "f", "arguments": "{}"}, "source_fields": {"function": 1}}]},
                {"role": "tool", "tool_call_id": "t", "content": "r", "source_fields": {"role": "user"}},
            ],
        ),
        (
            "sharegpt",
            [{"conversations": [{"from": "human", "value": "hi", "role": "tool"}]}],
            [{"role": "user", "content": "hi"}],
        ),
    ],
)
def test_record_keys_never_replace_converted_ones(fmt, records, expected):
    report = Report()
    converter = FORMATS[fmt](report)
    out = []
    for line, record in enumerate(records, 1):
        out += converter.feed(record, line=line)
    out += converter.close()
    assert out == expected
    # The clashing value is kept: under source_fields (Responses, Claude), or in the report.
    assert bool(report.records) == (fmt == "sharegpt")


@pytest.mark.parametrize(
    "raw",
    [
        b'{"type": [], "payload": 1}\n',
        b'{"role": "user", "content": [{"type": {}}]}\n{"role": "user", "content": "x"}\n',
    ],
)
def test_detection_takes_any_type_field(raw):
    # was: TypeError: unhashable type (a record's "type" or a part's "type" looked up in a set)
    try:
        list(read_messages(io.BytesIO(raw)))
    except InputError as exc:
        assert exc.source is not None


def test_a_rejected_function_call_leaves_no_empty_turn():
    # was: the pending turn was opened before the item was checked, so a skipped bad item
    # still produced an empty assistant message
    converter = FORMATS["responses"](Report())
    with pytest.raises(InvalidMessage):
        converter.feed({"type": "function_call", "name": "f", "call_id": 5}, line=1)
    assert converter.close() == []


def test_a_rejected_claude_line_does_not_lose_the_pending_turn():
    # was: the pending turn was flushed before the new line's blocks were encoded; a block
    # too deep to encode then raised and the flushed turn was lost with the return value
    converter = FORMATS["claude-code"](Report())
    assert converter.feed({"type": "assistant", "message": {"id": "m1", "content": [{"type": "text", "text": "a"}]}}, line=1) == []
    deep = {"type": "assistant", "message": {"id": "m2", "content": [{"type": "text", "text": "b"}, {"type": "x", "v": _nested(5000)}]}}
    with pytest.raises(InvalidMessage, match="nested too deeply") as exc:
        converter.feed(deep, line=2)
    assert exc.value.line == 2
    assert converter.close() == [{"role": "assistant", "content": "a"}]
