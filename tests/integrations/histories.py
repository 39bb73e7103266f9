"""The broken history every integration test sends, in each framework's form, and what a
repaired one is. Its defects: one model turn stored as two messages (text, then the calls),
``""`` next to the calls, a result whose call is gone, and a call never answered."""

from __future__ import annotations

from typing import Any

SYSTEM = "You are a coding agent."
STUB = "[no result: this tool call was not answered in the stored history]"


def call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


#: Chat Completions form.
BROKEN: list[dict[str, Any]] = [
    {"role": "system", "content": SYSTEM},
    {"role": "user", "content": "What is in the repo?"},
    {"role": "assistant", "content": "Let me look."},
    {"role": "assistant", "content": "", "tool_calls": [call("call_ls", "ls", '{"path": "."}')]},
    {"role": "tool", "tool_call_id": "call_ls", "content": "README.md"},
    {"role": "tool", "tool_call_id": "call_gone", "content": "output of a call that was compacted away"},
    {"role": "user", "content": "Read the README."},
    {"role": "assistant", "content": "", "tool_calls": [call("call_cat", "cat", '{"path": "README.md"}')]},
    {"role": "user", "content": "Never mind. Summarise the repo."},
]

#: What the default profile (and ``openai``) makes of it.
REPAIRED: list[dict[str, Any]] = [
    {"role": "system", "content": SYSTEM},
    {"role": "user", "content": "What is in the repo?"},
    {"role": "assistant", "content": "Let me look.", "tool_calls": [call("call_ls", "ls", '{"path": "."}')]},
    {"role": "tool", "tool_call_id": "call_ls", "content": "README.md"},
    {"role": "user", "content": "Read the README."},
    {"role": "assistant", "content": None, "tool_calls": [call("call_cat", "cat", '{"path": "README.md"}')]},
    {"role": "tool", "tool_call_id": "call_cat", "content": STUB},
    {"role": "user", "content": "Never mind. Summarise the repo."},
]

#: The report's counts for it.
COUNTS = {"merge_assistant": 1, "empty_content_to_null": 1, "drop_orphan_result": 1, "stub_missing_result": 1}


def without_nulls(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Messages as clients that leave out null keys send them (LiteLLM, ...)."""
    return [{k: v for k, v in m.items() if v is not None} for m in messages]


def output_message(text: str, item_id: str) -> dict[str, Any]:
    return {"type": "message", "id": item_id, "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}


def function_call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"type": "function_call", "call_id": call_id, "name": name, "arguments": arguments}


def function_call_output(call_id: str, output: str) -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call_id, "output": output}


#: Responses input items (an Agents SDK session): the same defects. The turn split in two
#: message items, the second one "" before the call; the system prompt is the agent's
#: instructions, and the last user message is the run's input.
BROKEN_ITEMS: list[dict[str, Any]] = [
    {"role": "user", "content": "What is in the repo?"},
    output_message("Let me look.", "msg_1"),
    output_message("", "msg_2"),
    function_call("call_ls", "ls", '{"path": "."}'),
    function_call_output("call_ls", "README.md"),
    function_call_output("call_gone", "output of a call that was compacted away"),
    {"role": "user", "content": "Read the README."},
    function_call("call_cat", "cat", '{"path": "README.md"}'),
]

#: What the repair makes of them, as Responses items.
REPAIRED_ITEMS: list[dict[str, Any]] = [
    {"role": "user", "content": "What is in the repo?"},
    {"type": "message", "role": "assistant", "id": "msg_1", "status": "completed",
     "content": [{"type": "output_text", "text": "Let me look.", "annotations": []}]},
    function_call("call_ls", "ls", '{"path": "."}'),
    function_call_output("call_ls", "README.md"),
    {"role": "user", "content": "Read the README."},
    function_call("call_cat", "cat", '{"path": "README.md"}'),
    function_call_output("call_cat", STUB),
]
