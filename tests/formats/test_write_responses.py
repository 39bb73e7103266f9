"""``--to responses``: chat messages out as OpenAI Responses input items.

Pinned exactly on hand-made histories; checked against the OpenAI Agents SDK's own converter
(``Converter.items_to_messages``) on every sample; a document in the writer's own spelling
(the Agents SDK's) round-trips equal as JSON; every sample's items are a fixed point.
"""

from __future__ import annotations

import io
from pathlib import Path
from collections.abc import Iterable
from typing import Any

import anyio
import orjson
import pytest

import normalizer
from normalizer import InputError, UsageError, awrite_responses, write_responses
from normalizer.formats import read_conversations, read_messages
from normalizer.formats._responses_writer import PLACEHOLDER_ITEM_ID

from realdata import sample_files

SESSIONS = [
    p for p in sample_files("", "**/*.json*")
    if "chat_training" not in p.parts and p.suffix in (".json", ".jsonl")
]
FC = {"name": "read", "arguments": '{"path": "a.txt"}'}


def items(messages: Iterable[dict[str, Any]], **kwargs: Any) -> Any:
    out = io.BytesIO()
    write_responses(messages, out, **kwargs)
    return orjson.loads(out.getvalue())


def written(messages: Iterable[dict[str, Any]], **kwargs: Any) -> bytes:
    out = io.BytesIO()
    write_responses(messages, out, **kwargs)
    return out.getvalue()


# -- exact items ------------------------------------------------------------------------------------


def test_a_history_as_items() -> None:
    reasoning = {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Look first."}],
                 "encrypted_content": "gAAAA-opaque"}
    history = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": [{"type": "text", "text": "What is in a.txt?"},
                                     {"type": "image_url", "image_url": {"url": "https://x/y.png", "detail": "low"}}]},
        {"role": "assistant", "content": "Reading it.", "reasoning_content": "Look first.", "reasoning_items": [reasoning],
         "tool_calls": [
             {"id": "call_1", "type": "function", "function": FC, "response_item_id": "fc_1"},
             {"id": "call_2", "type": "function", "function": {"name": "apply_patch", "arguments": '{"input":"*** Begin Patch"}'},
              "item_type": "custom_tool_call"},
         ]},
        {"role": "tool", "tool_call_id": "call_1", "content": "hello"},
        {"role": "tool", "tool_call_id": "call_2", "content": "done", "is_error": False},
        {"role": "assistant", "content": "It says hello.", "id": "msg_9", "status": "completed", "finish_reason": "stop"},
    ]
    assert items(history) == [
        {"role": "system", "content": "Be brief."},
        {"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": "What is in a.txt?"},
            {"type": "input_image", "image_url": "https://x/y.png", "detail": "low"}]},
        reasoning,
        {"type": "message", "role": "assistant", "id": PLACEHOLDER_ITEM_ID, "status": "completed",
         "content": [{"type": "output_text", "text": "Reading it.", "annotations": []}]},
        {"type": "function_call", "call_id": "call_1", "name": "read", "arguments": '{"path": "a.txt"}', "id": "fc_1"},
        {"type": "custom_tool_call", "call_id": "call_2", "name": "apply_patch", "input": "*** Begin Patch"},
        {"type": "function_call_output", "call_id": "call_1", "output": "hello"},
        {"type": "custom_tool_call_output", "call_id": "call_2", "output": "done"},
        {"type": "message", "role": "assistant", "id": "msg_9", "status": "completed",
         "content": [{"type": "output_text", "text": "It says hello.", "annotations": []}]},
    ]


def test_reasoning_items_are_written_back_whole_with_encrypted_content() -> None:
    reasoning = {"type": "reasoning", "summary": [], "content": None, "encrypted_content": "gAAAA" + "x" * 500}
    out = items([{"role": "user", "content": "q"},
                 {"role": "assistant", "content": None, "reasoning_items": [reasoning],
                  "tool_calls": [{"id": "c", "type": "function", "function": FC}]},
                 {"role": "tool", "tool_call_id": "c", "content": "r"}])
    assert out[1] == reasoning
    assert [i.get("type") for i in out] == [None, "reasoning", "function_call", "function_call_output"]


def test_reasoning_without_items_becomes_the_sdk_reasoning_item() -> None:
    thinking = {"type": "thinking", "thinking": "Hmm.", "signature": "sig=="}
    redacted = {"type": "redacted_thinking", "data": "opaque=="}
    out = items([{"role": "user", "content": "q"},
                 {"role": "assistant", "content": "a", "reasoning_content": "Hmm.", "thinking_blocks": [thinking, redacted]}])
    assert out[1] == {
        "id": PLACEHOLDER_ITEM_ID, "type": "reasoning", "summary": [{"text": "Hmm.", "type": "summary_text"}],
        "content": [{"text": "Hmm.", "type": "reasoning_text"}], "encrypted_content": "sig==",
        "provider_data": {"thinking_blocks": [thinking, redacted]},
    }
    # and the Anthropic writer finds the blocks there again, whole
    back = list(normalizer.repair(read_messages(io.BytesIO(orjson.dumps(out)), "responses")))
    request = io.BytesIO()
    normalizer.write_anthropic(back, request)
    assert orjson.loads(request.getvalue())["messages"][1]["content"][:2] == [thinking, redacted]


def test_a_turn_of_calls_only_has_no_message_item_and_keeps_its_message_id() -> None:
    calls = [{"id": "c", "type": "function", "function": FC}]
    assert [i["type"] for i in items([{"role": "assistant", "content": None, "tool_calls": calls}])] == ["function_call"]
    # a message item read with an empty text is written back (its id says it was there)
    out = items([{"role": "assistant", "content": None, "id": "msg_1", "tool_calls": calls}])
    assert out[0] == {"type": "message", "role": "assistant", "id": "msg_1", "status": "completed", "content": []}


def test_user_message_with_other_keys_is_a_message_item() -> None:
    assert items([{"role": "user", "content": "hi", "id": "msg_u", "name": "ann"}]) == [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}], "id": "msg_u"}]


# -- containers -------------------------------------------------------------------------------------


def test_containers() -> None:
    history = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]
    assert written([]) == b"[]\n"
    assert written(history, container="lines") == (
        b'{"role":"user","content":"hi"}\n'
        b'{"type":"message","role":"assistant","id":"__fake_id__","status":"completed","content":'
        b'[{"type":"output_text","text":"yo","annotations":[]}]}\n'
    )
    with pytest.raises(UsageError):
        written(history, container="tree")  # type: ignore[arg-type]


def _rewrite_body(body: dict[str, Any]) -> bytes:
    out = io.BytesIO()
    encoder = normalizer.ENCODERS["responses"](container="object")
    for conv in read_conversations(io.BytesIO(orjson.dumps(body)), "responses"):
        out.write(encoder.start() + encoder.begin(conv.extra))  # the keys read so far
        for m in normalizer.repair(conv.messages):
            out.write(encoder.message(m))
        out.write(encoder.end() + encoder.finish())  # and those read after the input
    return out.getvalue()


def test_a_request_body_keeps_its_other_keys_before_and_after_its_input() -> None:
    body = {"model": "gpt-5", "input": [{"role": "user", "content": "hi"}], "store": False}
    assert _rewrite_body(body) == b'{"model":"gpt-5","input":[\n{"role":"user","content":"hi"}\n],"store":false}\n'


def test_keys_of_a_nested_document_are_refused_in_an_object() -> None:
    encoder = normalizer.ENCODERS["responses"](container="object")
    with pytest.raises(InputError, match="nested"):
        encoder.begin({"request.body.model": "m"})


# -- the OpenAI Agents SDK ---------------------------------------------------------------------------


def _as_the_sdk_sees_it(message: dict[str, Any]) -> dict[str, Any]:
    """The fields of a Chat message the Agents SDK's converter gives back."""
    out = {k: v for k, v in message.items() if k in ("role", "content", "tool_calls", "tool_call_id", "refusal")}
    if "tool_calls" in out:
        out["tool_calls"] = [{"id": c["id"], "type": "function", "function": {
            "name": c["function"]["name"], "arguments": c["function"]["arguments"]}} for c in out["tool_calls"]]
    return out


@pytest.mark.parametrize("path", SESSIONS, ids=lambda p: p.name[:40])
def test_the_agents_sdk_reads_the_items_back_as_the_repaired_messages(path: Path) -> None:
    converter = pytest.importorskip("agents.models.chatcmpl_converter").Converter
    from agents.exceptions import UserError

    repaired = list(normalizer.repair(read_messages(path)))
    out = items(repaired)
    if any(item.get("type") == "custom_tool_call" for item in out):
        # A custom (free-form) tool call is a Responses-only feature: the SDK's Chat converter
        # refuses it by design, naming the item.
        with pytest.raises(UserError, match="Unhandled item type or structure: {'type': 'custom_tool_call'"):
            converter.items_to_messages(out)
        return
    assert [dict(m) for m in converter.items_to_messages(out)] == [_as_the_sdk_sees_it(m) for m in repaired]


def test_the_agents_sdk_keeps_text_and_calls_of_one_turn_together() -> None:
    converter = pytest.importorskip("agents.models.chatcmpl_converter").Converter
    turn = {"role": "assistant", "content": "Reading.", "tool_calls": [{"id": "c", "type": "function", "function": FC}]}
    back = converter.items_to_messages(items([{"role": "user", "content": "q"}, turn,
                                              {"role": "tool", "tool_call_id": "c", "content": "r"}]))
    assert [m["role"] for m in back] == ["user", "assistant", "tool"]
    assert back[1]["content"] == "Reading." and back[1]["tool_calls"][0]["id"] == "c"


# -- round trips ------------------------------------------------------------------------------------

# A session as the Agents SDK stores it (``SQLiteSession``): easy input messages for the user,
# the model's output items as the Responses API returns them.
SDK_SESSION = [
    {"role": "user", "content": "What's the weather in Paris?"},
    {"id": "rs_01", "type": "reasoning", "summary": [{"type": "summary_text", "text": "Use the tool."}],
     "encrypted_content": "gAAAAABo-opaque"},
    {"id": "msg_01", "type": "message", "role": "assistant", "status": "completed",
     "content": [{"type": "output_text", "text": "Checking.", "annotations": []}]},
    {"id": "fc_01", "type": "function_call", "call_id": "call_w", "name": "get_weather",
     "arguments": '{"city":"Paris"}', "status": "completed"},
    {"type": "function_call_output", "call_id": "call_w", "output": "18C, cloudy"},
    {"id": "msg_02", "type": "message", "role": "assistant", "status": "completed",
     "content": [{"type": "output_text", "text": "18C and cloudy.", "annotations": []}]},
]


def test_an_agents_sdk_session_round_trips_equal_as_json() -> None:
    # (the stream itself: the writer asks it for the items' own fields, kept beside the messages)
    stream = normalizer.repair(read_messages(io.BytesIO(orjson.dumps(SDK_SESSION)), "responses"))
    assert items(stream) == SDK_SESSION
    assert not stream.report.changed


@pytest.mark.parametrize("path", SESSIONS, ids=lambda p: p.name[:40])
def test_every_sample_s_items_are_a_fixed_point(path: Path) -> None:
    first = written(normalizer.repair(read_messages(path)))
    stream = read_messages(io.BytesIO(first), "responses")
    again = normalizer.repair(stream)
    assert written(again) == first
    assert not again.report.changed and not stream.report.changed


def test_the_async_twin_writes_the_same_bytes() -> None:
    history = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]

    async def go() -> bytes:
        out = io.BytesIO()
        assert await awrite_responses(history, out, container="lines") == 2
        return out.getvalue()

    assert anyio.run(go) == written(history, container="lines")
