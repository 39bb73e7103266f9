"""What the Responses reader holds for one message it assembles from several items (an
assistant turn, or bare input parts) is bounded by ``max_record_bytes``, as in
``test_reader_limits`` (which holds the Claude Code and Anthropic readers' cases); and what
real sessions hold, far less than the default limit."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import orjson
import pytest

from normalizer import LimitExceeded, Report
from normalizer.formats import read_messages
from normalizer.formats._records import DEFAULT_MAX_RECORD_BYTES
from normalizer.formats._responses import ResponsesConverter
from realdata import SAMPLES, needs_samples
from test_reader_limits import conversations, crossing, jsonl, write


# -- Responses: bare input parts and the pending assistant turn ---------------------------------


def responses(items: list[Any], **kwargs: Any) -> list[dict[str, Any]]:
    return list(read_messages(io.BytesIO(jsonl(items)), "responses", **kwargs))


def item_size(item: dict[str, Any]) -> int:
    """What an item adds: the size of its JSON."""
    return len(orjson.dumps(item))


def test_bare_input_parts_are_refused_past_max_record_bytes(tmp_path: Path) -> None:
    parts = [{"type": "input_text", "text": f"part {i}"} for i in range(100)]
    items = [*parts, {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "ok"}]}]
    path = write(tmp_path, items, "items.jsonl")
    limit = 500
    line = 1 + crossing([item_size(p) for p in parts], limit)
    with pytest.raises(LimitExceeded) as caught:
        list(read_messages(path, "responses", max_record_bytes=limit))
    exc = caught.value
    assert (exc.limit, exc.value, exc.source, exc.line, exc.column) == ("max_record_bytes", limit, str(path), line, 1)
    assert str(exc) == (
        f"{path}:{line}:1: the user message made of bare input part items (begun on line 1) would hold more than "
        f"{limit} bytes of JSON. Raise max_record_bytes if one message of this history really is that large"
    )


def test_bare_input_parts_make_the_same_message_and_record_as_before() -> None:
    # Each part is converted as it comes (the item let go): the message is the one the whole
    # run made at once, and the record names the item types.
    items = [
        {"type": "input_text", "text": "look at", "cache_control": {"type": "ephemeral"}},
        {"type": "input_image", "image_url": "data:image/png;base64,AA", "detail": "low"},
        {"type": "input_file", "file_id": "f1"},
        {"type": "input_text", "text": "this"},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "ok"}]},
    ]
    report = Report()
    held = sum(map(item_size, items[:4]))
    out = responses(items, report=report, max_record_bytes=held)
    assert out == [
        {"role": "user", "content": [
            {"type": "text", "text": "look at", "cache_control": {"type": "ephemeral"}},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA", "detail": "low"}},
            {"type": "input_file", "file_id": "f1"},
            {"type": "text", "text": "this"},
        ]},
        {"role": "assistant", "content": "ok"},
    ]
    assert [(r.kind, r.detail, r.line) for r in report.records] == [
        ("group_input_parts", "4 bare input part item(s) (input_file, input_image, input_text) became one user message", 1),
    ]
    with pytest.raises(LimitExceeded):
        responses(items, max_record_bytes=held - 1)


def test_runs_of_bare_parts_are_counted_apart() -> None:
    run = [{"type": "input_text", "text": f"part {i}"} for i in range(5)]
    said = {"type": "message", "role": "assistant", "content": "ok"}
    items = (run + [said]) * 20
    out = responses(items, max_record_bytes=sum(map(item_size, run)))
    assert out == responses(items)
    assert len(out) == 40


def test_an_assistant_turn_of_many_items_is_refused_past_max_record_bytes(tmp_path: Path) -> None:
    calls = [{"type": "function_call", "call_id": f"c{i}", "name": "f", "arguments": "{}"} for i in range(100)]
    items = [{"type": "message", "role": "user", "content": "go"}, *calls]
    path = write(tmp_path, items, "items.jsonl")
    limit = 2_000
    line = 2 + crossing([item_size(c) for c in calls], limit)
    with pytest.raises(LimitExceeded) as caught:
        list(read_messages(path, "responses", max_record_bytes=limit))
    exc = caught.value
    assert (exc.limit, exc.value, exc.source, exc.line, exc.column) == ("max_record_bytes", limit, str(path), line, 1)
    assert str(exc).startswith(
        f"{path}:{line}:1: the assistant turn made of reasoning, message and call items (begun on line 2) would hold "
        f"more than {limit} bytes of JSON."
    )


def test_an_assistant_turn_within_the_limit_reads_as_before() -> None:
    reasoning = {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "thinking"}],
                 "encrypted_content": "gAAA"}
    said = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Looking."}]}
    call = {"type": "function_call", "call_id": "c1", "name": "ls", "arguments": "{}"}
    items = [{"type": "message", "role": "user", "content": "go"}, reasoning, said, call,
             {"type": "function_call_output", "call_id": "c1", "output": "a.py"}]
    held = sum(map(item_size, (reasoning, said, call)))
    expected = responses(items)
    assert expected[1]["tool_calls"][0]["id"] == "c1" and expected[1]["reasoning_content"] == "thinking"
    assert responses(items, max_record_bytes=held) == expected
    with pytest.raises(LimitExceeded) as caught:
        responses(items, max_record_bytes=held - 1)
    assert caught.value.line == 4  # the call: the turn's third item


def test_the_responses_converter_takes_the_limit_itself() -> None:
    part = {"type": "input_text", "text": "hello"}
    conv = ResponsesConverter(Report(), max_record_bytes=item_size(part))
    assert conv.feed(part, line=1) == []
    with pytest.raises(LimitExceeded) as caught:
        conv.feed(part, line=2)
    assert (caught.value.limit, caught.value.line) == ("max_record_bytes", 2)
    assert conv.close() == [{"role": "user", "content": "hello"}]  # the refused item changed nothing
    assert ResponsesConverter().max_record_bytes == DEFAULT_MAX_RECORD_BYTES


def test_items_given_in_memory_that_no_json_holds_are_still_read() -> None:
    # The size of an item that orjson cannot write (records given in memory) is its repr's:
    # counting it refuses nothing that was read before.
    class Opaque:
        def __repr__(self) -> str:
            return "Opaque()"

    items = [{"type": "reasoning", "id": "rs_1", "summary": [], "extra": Opaque()},
             {"type": "message", "role": "assistant", "content": "ok"}]
    out = list(read_messages(items, "responses"))
    assert out[0]["content"] == "ok"
    assert out[0]["reasoning_items"][0]["extra"] is items[0]["extra"]


# -- real sessions ------------------------------------------------------------------------------


@needs_samples
def test_real_sessions_hold_far_less_than_the_default_limit() -> None:
    # The largest turn of the sample sessions, with its results, is well under 1 MiB: the
    # default (64 MiB) leaves two orders of magnitude, and the output does not depend on it.
    paths = sorted(SAMPLES.glob("**/claude_code/*.jsonl"))
    assert paths
    for path in paths:
        assert conversations(path, max_record_bytes=1 << 20) == conversations(path), path
