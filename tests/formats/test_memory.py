"""In-memory conversions (``formats/_memory.py``): the same converters and encoders as the
files, over a list; input left as it is; what has no chat form recorded."""

from __future__ import annotations

import copy
import doctest
from typing import Any

import normalizer
import normalizer.formats._memory
from normalizer.formats import from_anthropic, from_responses, to_anthropic, to_responses

ITEMS: list[dict[str, Any]] = [
    {"role": "user", "content": "What is in the repo?"},
    {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
     "content": [{"type": "output_text", "text": "Let me look.", "annotations": []}]},
    {"type": "function_call", "call_id": "call_ls", "name": "ls", "arguments": "{}"},
    {"type": "function_call_output", "call_id": "call_ls", "output": "README.md"},
]

ANTHROPIC: list[dict[str, Any]] = [
    {"role": "user", "content": [{"type": "text", "text": "What is in the repo?"}]},
    {"role": "assistant", "content": [
        {"type": "text", "text": "Let me look."},
        {"type": "tool_use", "id": "toolu_ls", "name": "ls", "input": {}},
    ]},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_ls", "content": "README.md"}]},
]


def test_docstring_examples() -> None:
    assert doctest.testmod(normalizer.formats._memory).failed == 0


CHAT: list[dict[str, Any]] = [
    {"role": "user", "content": "What is in the repo?"},
    {"role": "assistant", "content": "Let me look.", "tool_calls": [
        {"id": "call_ls", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]},
    {"role": "tool", "tool_call_id": "call_ls", "content": "README.md"},
]


def test_responses_come_out_as_plain_chat() -> None:
    before = copy.deepcopy(ITEMS)
    assert from_responses(ITEMS) == CHAT  # the item's id and status are no chat keys
    assert ITEMS == before


def test_responses_round_trip() -> None:
    # Asked for, the message item's id and status ride along (source_fields), so writing it
    # back keeps them.
    chat = from_responses(ITEMS, keep_source_fields=True)
    assert chat == [CHAT[0], {**CHAT[1], "source_fields": {"id": "msg_1", "status": "completed"}}, CHAT[2]]
    back = to_responses(chat)
    assert [item.get("type", "message") for item in back] == ["message", "message", "function_call", "function_call_output"]
    assert [item.get("id") for item in back] == [None, "msg_1", None, None]
    assert from_responses(back, keep_source_fields=True) == chat
    # Without them, the assistant message item gets the SDK's placeholder id.
    assert [item.get("id") for item in to_responses(CHAT)] == [None, "__fake_id__", None, None]


def test_anthropic_round_trip_with_system() -> None:
    chat = from_anthropic(ANTHROPIC, system="Be brief.")
    assert chat[0] == {"role": "system", "content": "Be brief."}
    assert normalizer.check(chat, profile="anthropic") == []
    request = to_anthropic(chat)
    assert request["system"] == "Be brief."
    assert from_anthropic(request["messages"], system=request["system"]) == chat
    assert "system" not in to_anthropic(chat[1:])


def test_what_has_no_chat_form_is_reported() -> None:
    report = normalizer.Report()
    chat = from_responses([*ITEMS, {"type": "web_search_call", "id": "ws_1", "status": "completed"}], report=report)
    assert len(chat) == 3
    assert report.counts
