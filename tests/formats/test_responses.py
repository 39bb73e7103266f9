"""Responses items -> chat messages, exact outputs (formats.md §4.1)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from normalizer import Report
from normalizer.formats import ResponsesConverter


def convert(items: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], Report]:
    report = Report()
    conv = ResponsesConverter(report)
    before = copy.deepcopy(items)
    out: list[dict[str, Any]] = []
    for i, item in enumerate(items):
        out += conv.feed(item, line=i + 1)
    out += conv.close()
    assert items == before, "the converter must not mutate its input"
    return out, report


USER = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "list files"}]}
CALL = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "shell", "arguments": '{"cmd":"ls"}'}
CALL2 = {"type": "function_call", "call_id": "call_2", "name": "read", "arguments": '{"path":"a"}'}
OUTPUT = {"type": "function_call_output", "call_id": "call_1", "output": "a\nb"}
TOOL_CALL = {"id": "call_1", "type": "function", "function": {"name": "shell", "arguments": '{"cmd":"ls"}'}, "source_fields": {"id": "fc_1"}}
TOOL_CALL2 = {"id": "call_2", "type": "function", "function": {"name": "read", "arguments": '{"path":"a"}'}}


def assistant_item(content: Any) -> dict[str, Any]:
    return {"type": "message", "role": "assistant", "content": content}


def test_message_plus_calls_is_one_assistant() -> None:
    out, _ = convert([USER, assistant_item([{"type": "output_text", "text": "Looking."}]), CALL, CALL2, OUTPUT])
    assert out == [
        {"role": "user", "content": "list files"},
        {"role": "assistant", "content": "Looking.", "tool_calls": [TOOL_CALL, TOOL_CALL2]},
        {"role": "tool", "tool_call_id": "call_1", "content": "a\nb"},
    ]


@pytest.mark.parametrize(
    "content",
    ["", None, [], [{"type": "output_text", "text": ""}], [{"type": "output_text", "text": "", "annotations": []}]],
    ids=["empty-string", "null", "empty-list", "empty-part", "empty-part-annotations"],
)
def test_empty_message_item_plus_call_is_still_one_assistant(content: Any) -> None:
    out, _ = convert([USER, assistant_item(content), CALL, OUTPUT])
    assert out == [
        {"role": "user", "content": "list files"},
        {"role": "assistant", "content": None, "tool_calls": [TOOL_CALL]},
        {"role": "tool", "tool_call_id": "call_1", "content": "a\nb"},
    ]


def test_call_before_message_item_is_the_same_turn() -> None:
    out, _ = convert([USER, CALL, assistant_item("")])
    assert out == [{"role": "user", "content": "list files"}, {"role": "assistant", "content": None, "tool_calls": [TOOL_CALL]}]


REASONING = {
    "type": "reasoning",
    "id": "rs_1",
    "summary": [{"type": "summary_text", "text": "**Plan**"}, {"type": "summary_text", "text": "look first"}],
    "encrypted_content": "gAAAAAsecret",
}


def test_reasoning_attaches_to_the_next_assistant_turn() -> None:
    out, _ = convert([USER, REASONING, CALL, OUTPUT, {**REASONING, "id": "rs_2", "summary": []}, assistant_item([{"type": "output_text", "text": "Done."}])])
    assert out == [
        {"role": "user", "content": "list files"},
        {"role": "assistant", "content": None, "reasoning_content": "**Plan**\n\nlook first", "tool_calls": [TOOL_CALL], "reasoning_items": [REASONING]},
        {"role": "tool", "tool_call_id": "call_1", "content": "a\nb"},
        {"role": "assistant", "content": "Done.", "reasoning_items": [{**REASONING, "id": "rs_2", "summary": []}]},
    ]


def test_reasoning_alone_at_the_end_is_kept() -> None:
    out, _ = convert([USER, REASONING])
    assert out[1] == {"role": "assistant", "content": "", "reasoning_content": "**Plan**\n\nlook first", "reasoning_items": [REASONING]}


def test_custom_tool_call_input_becomes_json_arguments() -> None:
    patch = "*** Begin Patch\n*** Update File: a.py\n+x = \"1\"\n*** End Patch"
    out, _ = convert([
        USER,
        {"type": "custom_tool_call", "status": "completed", "call_id": "call_p", "name": "apply_patch", "input": patch},
        {"type": "custom_tool_call_output", "call_id": "call_p", "output": "Success."},
    ])
    assert out[1] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [{
            "id": "call_p",
            "type": "function",
            "function": {"name": "apply_patch", "arguments": '{"input":"*** Begin Patch\\n*** Update File: a.py\\n+x = \\"1\\"\\n*** End Patch"}'},
            # (its item type too, aside for the writer: a chat call is a function call)
            "source_fields": {"status": "completed", "item_type": "custom_tool_call"},
        }],
    }
    assert out[2] == {"role": "tool", "tool_call_id": "call_p", "content": "Success."}


def test_local_shell_call() -> None:
    action = {"type": "exec", "command": ["ls"], "timeout_ms": 1000}
    out, _ = convert([USER, {"type": "local_shell_call", "call_id": "c", "status": "completed", "action": action}])
    assert out[1]["tool_calls"] == [{"id": "c", "type": "function", "function": {"name": "local_shell", "arguments": '{"type":"exec","command":["ls"],"timeout_ms":1000}'}, "source_fields": {"status": "completed", "item_type": "local_shell_call"}}]


def test_output_array_and_object() -> None:
    out, _ = convert([
        {"type": "function_call_output", "call_id": "a", "output": [{"type": "input_text", "text": "x"}, {"type": "input_image", "image_url": "data:image/png;base64,AA"}]},
        {"type": "function_call_output", "call_id": "b", "output": {"ok": True}},
    ])
    assert out == [
        {"role": "tool", "tool_call_id": "a", "content": [{"type": "text", "text": "x"}, {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA"}}]},
        {"role": "tool", "tool_call_id": "b", "content": '{"ok":true}'},
    ]


def test_easy_messages_roles_and_extra_fields() -> None:
    out, _ = convert([
        {"role": "developer", "content": "be brief"},
        {"type": "message", "role": "user", "id": "msg_1", "status": "completed", "content": "hi"},
    ])
    assert out == [{"role": "developer", "content": "be brief"}, {"role": "user", "content": "hi", "source_fields": {"id": "msg_1", "status": "completed"}}]


def test_hosted_and_unknown_items_are_recorded_not_converted() -> None:
    search = {"type": "web_search_call", "id": "ws_1", "status": "completed"}
    future = {"type": "hologram_call", "id": "h"}
    out, report = convert([USER, search, future, assistant_item("ok")])
    assert out == [{"role": "user", "content": "list files"}, {"role": "assistant", "content": "ok"}]
    assert report.counts == {"drop_web_search_call": 1, "drop_unknown_item": 1}
    assert [r.dropped for r in report.records] == [search, future]
    assert [r.line for r in report.records] == [2, 3]


@pytest.mark.parametrize("bad", [[1], "text", {"content": "no type"}, {"type": "message", "role": "robot", "content": ""}, {"type": "function_call", "call_id": "x"}])
def test_unknown_shapes_are_input_errors(bad: Any) -> None:
    from normalizer import InputError

    conv = ResponsesConverter(Report())
    conv.feed(CALL)
    with pytest.raises(InputError) as exc:
        conv.feed(bad, line=7)
    assert exc.value.line == 7
    # A rejected record leaves the pending turn as it was.
    assert conv.close() == [{"role": "assistant", "content": None, "tool_calls": [TOOL_CALL]}]
