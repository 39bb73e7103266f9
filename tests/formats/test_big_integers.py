"""Integers past 64 bits come back exactly as they went in (``normalizer._json``).

orjson, the package's JSON codec, parses an integer outside ``[-2**63, 2**64)`` as a float
(``123456789012345678901234567890`` came out of a repair as ``1.2345678901234568e+29``, with
no word), refuses one of 309 digits or more as "infinity", and refuses to write one; ijson's
C parser, with ``use_float``, stopped a JSON document at one ("integer overflow", at the
slice's start). Pinned here for the readers (JSONL and documents), the writers (every output
format), the tool-call arguments that a profile or an output format parses, the session
repairer, and the limits: an integer of more than 4,300 digits (Python's) and, in a
document, a number beyond the range of a double are refused where they are.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import normalizer
from normalizer import InvalidMessage, Report
from normalizer._json import dumps, loads
from normalizer.formats import (
    awrite_jsonl,
    read_conversations,
    read_messages,
    to_anthropic,
    write_anthropic,
    write_finetune,
    write_json_array,
    write_jsonl,
    write_responses,
)
from normalizer.formats._records import sniff
from normalizer.formats._sessions import SessionRepairer

BIG = 123456789012345678901234567890
#: orjson's edges (it reads and writes [-2**63, 2**64) itself), a 400-digit one, big negatives.
INTS = [2**64 - 1, 2**64, -(2**63), -(2**63) - 1, 2**63, -(2**64), BIG, -BIG, int("9" * 400), -int("8" * 400)]
#: Floats stay floats, however large (1e+20 is what orjson makes of 100000000000000000000).
FLOATS = [1e20, 1.5e300, -2.5e-300, 0.5, 1.0, -0.0, 1.8446744073709552e19]


def compact(value: Any, option: int = 0) -> bytes:
    """What orjson would write for ``value`` if it wrote any integer: its bytes for the value
    with each integer past 64 bits swapped for a marker string, the marker then swapped for
    the digits (made apart from ``_json.dumps``, which writes them through orjson.Fragment)."""
    found: list[int] = []

    def swap(item: Any) -> Any:
        if isinstance(item, int) and not isinstance(item, bool) and not -(2**63) <= item < 2**64:
            found.append(item)
            return f"\x00\uffff{len(found) - 1}\uffff\x00"
        if isinstance(item, dict):
            return {key: swap(value) for key, value in item.items()}
        if isinstance(item, list):
            return [swap(value) for value in item]
        return item

    data = orjson.dumps(swap(value), option=option)
    for n, item in enumerate(found):
        data = data.replace(orjson.dumps(f"\x00\uffff{n}\uffff\x00"), str(item).encode())
    return data


def typed(value: Any) -> str:
    """A value's JSON with its types told apart (``1 == 1.0`` in Python, not here)."""
    return json.dumps(value)


MESSAGE = {"role": "user", "content": f"hi {BIG}", "text": str(BIG), "n": BIG, "ints": INTS, "floats": FLOATS}
LINE = compact(MESSAGE) + b"\n"


# -- reading ------------------------------------------------------------------------------------


def test_a_jsonl_line_reads_its_integers_exactly_and_is_written_back_byte_for_byte(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    path.write_bytes(LINE)
    messages = list(read_messages(path))
    assert typed(messages) == typed([MESSAGE])  # ints are ints, floats are floats, the string is a string
    out = io.BytesIO()
    write_jsonl(messages, out)
    assert out.getvalue() == LINE
    path.write_bytes(out.getvalue())
    again = io.BytesIO()
    write_jsonl(read_messages(path), again)
    assert again.getvalue() == LINE  # a fixed point


@pytest.mark.parametrize("container", ["array", "object"])
def test_a_json_document_reads_its_integers_exactly(tmp_path: Path, container: str) -> None:
    if container == "array":
        data = b"[\n" + compact(MESSAGE) + b"\n]\n"
    else:  # a request body: the other keys too, before and after the messages
        data = b'{"seed": ' + str(-BIG).encode() + b', "messages": [' + compact(MESSAGE) + b'], "n": ' + str(2**64).encode() + b"}"
    path = tmp_path / "big.json"
    path.write_bytes(data)
    stream = iter(read_conversations(path))
    conversation = next(stream)
    messages = list(conversation.messages)  # (streamed: read before the rest of the file)
    assert list(stream) == []
    assert typed(messages) == typed([MESSAGE])
    if container == "object":
        assert typed(conversation.extra) == typed({"seed": -BIG, "n": 2**64})
    out = io.BytesIO()
    write_json_array(messages, out)
    assert out.getvalue() == b"[\n" + compact(MESSAGE) + b"\n]\n"


def test_a_request_body_whose_system_key_follows_its_messages_keeps_its_integers(tmp_path: Path) -> None:
    # The first pass (KeysScanner) builds the system key's value; the main pass the rest.
    path = tmp_path / "body.json"
    path.write_bytes(b'{"messages": [' + compact(MESSAGE) + b'], "system": [{"type": "text", "text": "s", "n": '
                     + str(BIG).encode() + b', "f": 1.5}]}')
    stream = iter(read_conversations(path, format="anthropic"))
    conversation = next(stream)
    list(conversation.messages)
    assert list(stream) == []
    assert typed(conversation.extra["system"]) == typed([{"type": "text", "text": "s", "n": BIG, "f": 1.5}])


def test_a_one_line_request_body_with_a_long_integer_is_a_document() -> None:
    assert sniff(b'{"model": "m", "n": ' + b"9" * 400 + b"}", at_eof=True) == "document"


def test_a_line_nested_past_the_parsers_own_limit_is_read_exactly(tmp_path: Path) -> None:
    # jiter stops at 200 levels; orjson reads it, and the standard library then gives its value.
    depth = 250
    line = b'{"role": "user", "content": "hi", "deep": ' + b"[" * depth + str(BIG).encode() + b"]" * depth + b"}\n"
    path = tmp_path / "deep.jsonl"
    path.write_bytes(line)
    (message,) = read_messages(path, max_depth=depth + 1)
    value = message["deep"]
    for _ in range(depth):
        (value,) = value
    assert value == BIG and type(value) is int


# -- writing ------------------------------------------------------------------------------------


def _write_finetune(messages: list[Any], out: io.BytesIO) -> int:
    return write_finetune([(messages, {"seed": BIG})], out)


@pytest.mark.parametrize("writer", [write_jsonl, write_json_array, _write_finetune, write_responses, write_anthropic])
def test_every_writer_writes_integers_past_64_bits_as_their_digits(writer: Any) -> None:
    calls = [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": compact({"n": BIG, "m": -BIG}).decode()}}]
    messages = [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "hi", "n": BIG},
        {"role": "assistant", "content": None, "tool_calls": calls},
        {"role": "tool", "tool_call_id": "c1", "content": "ok", "big": [2**64, -(2**63) - 1]},
    ]
    out = io.BytesIO()
    writer(messages, out)
    text = out.getvalue().decode()
    assert str(BIG) in text and "e+29" not in text and "e+19" not in text and "e+18" not in text
    if writer is write_anthropic:  # the call's input is its arguments parsed: the integers as they were
        request = loads(out.getvalue())
        assert typed(request["messages"][1]["content"][0]["input"]) == typed({"n": BIG, "m": -BIG})


@pytest.mark.anyio
async def test_the_async_writer_writes_them_too() -> None:
    out = io.BytesIO()
    await awrite_jsonl([MESSAGE], out)
    assert out.getvalue() == LINE


def test_a_message_too_long_to_write_is_refused_with_its_index() -> None:
    huge = 10**5000  # (only in memory: no reader gives one)
    with pytest.raises(InvalidMessage, match=r"message 1: cannot be written as JSON") as info:
        write_jsonl([{"role": "user", "content": "a"}, {"role": "user", "content": "b", "n": huge}], io.BytesIO())
    assert "4,300 digits" in str(info.value)


# -- tool-call arguments --------------------------------------------------------------------------

ARGUMENTS = '{"n": 123456789012345678901234567890, "m": -9223372036854775809, "s": "123456789012345678901234567890", "f": 1e+20}'
LONG_ARGUMENTS = '{"n": ' + "9" * 400 + "}"


def call_history(arguments: str) -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": arguments}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "ok"},
    ]


def test_a_profile_that_sends_arguments_as_an_object_keeps_their_integers() -> None:
    out = list(normalizer.repair(call_history(ARGUMENTS), profile="ollama"))
    arguments = out[1]["tool_calls"][0]["function"]["arguments"]
    assert typed(arguments) == typed({"n": BIG, "m": -(2**63) - 1, "s": str(BIG), "f": 1e20})


@pytest.mark.parametrize("profile", ["anthropic", "bedrock"])
def test_arguments_holding_a_long_integer_are_valid_json_to_the_profiles_that_repair_them(profile: str) -> None:
    # orjson refuses an integer of 309 digits or more: the arguments were "repaired" to {}.
    history = call_history(LONG_ARGUMENTS)
    stream = normalizer.repair(history, profile=profile)
    assert list(stream) == history and not stream.report.changed
    assert normalizer.check(history, profile) == []


def test_the_anthropic_input_of_a_call_keeps_its_integers() -> None:
    request = to_anthropic(call_history(ARGUMENTS))
    block = request["messages"][1]["content"][0]
    assert typed(block["input"]) == typed({"n": BIG, "m": -(2**63) - 1, "s": str(BIG), "f": 1e20})


# -- the session repairer -------------------------------------------------------------------------

ENV = {"isSidechain": False, "userType": "external", "cwd": "/repo", "sessionId": "s-1", "gitBranch": "main",
       "version": "2.0.64"}


def test_a_session_line_the_repair_rewrites_keeps_its_integers() -> None:
    call = {"parentUuid": "u1", **ENV, "message": {"model": "m", "id": "msg_1", "type": "message", "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"n": BIG}}]},
            "type": "assistant", "uuid": "u2", "timestamp": "2026-01-01T00:00:02.000Z", "requestId": 2**64}
    results = {"parentUuid": "u2", **ENV, "type": "user", "message": {"role": "user", "content": [
        {"tool_use_id": "t1", "type": "tool_result", "content": "a"},
        {"tool_use_id": "gone", "type": "tool_result", "content": "b"}]},
        "uuid": "u3", "timestamp": "2026-01-01T00:00:03.000Z", "n": -BIG, "f": 1e20}
    first = {"parentUuid": None, **ENV, "type": "user", "message": {"role": "user", "content": "hi"}, "uuid": "u1",
             "timestamp": "2026-01-01T00:00:01.000Z"}
    data = b"".join(compact(v) + b"\n" for v in (first, call, results))
    repairer = SessionRepairer()
    out = repairer.feed(data) + repairer.close()
    kept = {**results, "message": {"role": "user", "content": [results["message"]["content"][0]]}}
    assert out == b"".join(compact(v) + b"\n" for v in (first, call, kept))  # the result line written anew
    assert [r.kind for r in repairer.report.records] == ["drop_orphan_result"]


# -- refused where exactness cannot be had --------------------------------------------------------


def test_an_integer_of_more_than_4300_digits_in_a_jsonl_line_is_refused_at_its_column(tmp_path: Path) -> None:
    path = tmp_path / "huge.jsonl"
    path.write_bytes(b'{"role": "user", "content": "hi"}\n{"role": "user", "n": ' + b"7" * 4301 + b"}\n")
    with pytest.raises(InvalidMessage) as info:
        list(read_messages(path))
    assert str(info.value) == (f"{path}:2:23: an integer of more than 4,300 digits: more than Python reads as a "
                               "number. Write a number that long as a string")
    report = Report()
    assert list(read_messages(path, on_invalid="skip", report=report)) == [{"role": "user", "content": "hi"}]
    assert report.counts == {"skip_invalid": 1} and report.records[0].line == 2


def test_an_integer_of_more_than_4300_digits_in_a_document_is_refused_at_its_place(tmp_path: Path) -> None:
    path = tmp_path / "huge.json"
    path.write_bytes(b'[{"role": "user", "content": "hi"},\n {"role": "user", "n": ' + b"7" * 4301 + b"}]")
    with pytest.raises(InvalidMessage) as info:
        list(read_messages(path))
    assert str(info.value).startswith(f"{path}:2:24: an integer of more than 4,300 digits")


def test_a_number_beyond_a_double_in_a_document_is_refused_at_its_place(tmp_path: Path) -> None:
    path = tmp_path / "inf.json"
    path.write_bytes(b'[{"role": "user", "content": "hi"},\n {"role": "user", "content": "x", "f": -1e400}]')
    with pytest.raises(InvalidMessage) as info:
        list(read_messages(path))
    assert str(info.value) == (f"{path}:2:40: a number beyond the range of a double (about 1.8e308): no float holds "
                               "it. Write it as a string")


def test_a_number_beyond_a_double_in_a_jsonl_line_is_infinity(tmp_path: Path) -> None:
    # The one difference from orjson (see normalizer._json): a JSONL line is parsed whole, and
    # telling such a number apart would cost a pass over every line. Pinned so that a change
    # of it is a decision.
    path = tmp_path / "inf.jsonl"
    path.write_bytes(b'{"role": "user", "content": "x", "f": 1e400}\n')
    (message,) = read_messages(path)
    assert message["f"] == float("inf")


# -- the codec itself -----------------------------------------------------------------------------

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.integers(min_value=-(10**400), max_value=10**400)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(JSON_VALUES)
def test_dumps_is_orjsons_bytes_with_every_integer_as_its_digits(value: Any) -> None:
    assert dumps(value) == compact(value)
    assert dumps(value, orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE) == compact(
        value, orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE)


@settings(max_examples=300, deadline=None)
@given(JSON_VALUES)
def test_loads_gives_back_the_value_with_its_types(value: Any) -> None:
    assert typed(loads(compact(value))) == typed(value)
    assert typed(loads(compact(value).decode())) == typed(value)


def test_loads_refuses_what_orjson_refuses_in_orjsons_words() -> None:
    for text in (b"NaN", b"[1,]", b'{"a": 1', b'"\\ud800"', b"01", b""):
        with pytest.raises(orjson.JSONDecodeError) as ours:
            loads(text)
        with pytest.raises(orjson.JSONDecodeError) as theirs:
            orjson.loads(text)
        assert (ours.value.msg, ours.value.pos) == (theirs.value.msg, theirs.value.pos)
