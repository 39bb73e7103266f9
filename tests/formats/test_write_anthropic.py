"""``--to anthropic``: chat messages out as an Anthropic Messages request.

Pinned exactly on hand-made histories; every sample's request passes Anthropic's rules as
research/providers.md §5 words them (checked here by :func:`anthropic_violations`), keeps
every thinking block byte for byte, and is a fixed point; a request in the writer's own
spelling (the Anthropic SDK's) round-trips equal as JSON.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest

import normalizer
from normalizer import InvalidMessage, awrite_anthropic, write_anthropic
from normalizer.formats import read_messages

from realdata import sample_files
from session_checks import anthropic_violations

SESSIONS = [
    p for p in sample_files("", "**/*.json*")
    if "chat_training" not in p.parts and p.suffix in (".json", ".jsonl")
]
THINKING = {"type": "thinking", "thinking": "Read the file first.", "signature": "EqQBCkgIARABGAIiQL/opaque=="}


def request(messages: list[dict[str, Any]], **kwargs: Any) -> Any:
    out = io.BytesIO()
    write_anthropic(messages, out, **kwargs)
    return orjson.loads(out.getvalue())


def written(messages: list[dict[str, Any]], **kwargs: Any) -> bytes:
    out = io.BytesIO()
    write_anthropic(messages, out, **kwargs)
    return out.getvalue()


def call(call_id: str, arguments: str = '{"path": "a.txt"}') -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": "read", "arguments": arguments}}


# -- exact requests ---------------------------------------------------------------------------------


def test_a_history_as_a_request() -> None:
    history = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "What is in a.txt and b.txt?"},
        {"role": "assistant", "content": "Reading both.", "reasoning_content": "Read the file first.",
         "thinking_blocks": [THINKING], "tool_calls": [call("toolu_1"), call("toolu_2", '{"path": "b.txt"}')]},
        {"role": "tool", "tool_call_id": "toolu_1", "content": "hello"},
        {"role": "tool", "tool_call_id": "toolu_2", "content": "no such file", "is_error": True},
        {"role": "user", "content": "Thanks."},
        {"role": "assistant", "content": "a.txt says hello; b.txt is missing.", "name": "bot"},
    ]
    assert request(history) == {"system": "Be brief.", "messages": [
        {"role": "user", "content": "What is in a.txt and b.txt?"},
        {"role": "assistant", "content": [
            THINKING,
            {"type": "text", "text": "Reading both."},
            {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"path": "a.txt"}},
            {"type": "tool_use", "id": "toolu_2", "name": "read", "input": {"path": "b.txt"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "hello"},
            {"type": "tool_result", "tool_use_id": "toolu_2", "content": "no such file", "is_error": True},
            {"type": "text", "text": "Thanks."}]},
        {"role": "assistant", "content": [{"type": "text", "text": "a.txt says hello; b.txt is missing."}]},
    ]}


def test_same_role_turns_are_merged_but_thinking_never_joins_another_turn() -> None:
    other = {"type": "thinking", "thinking": "Second.", "signature": "c2ln"}
    out = request([
        {"role": "user", "content": "one"},
        {"role": "user", "content": [{"type": "text", "text": "two"}, {"type": "text", "text": "  "}]},
        {"role": "assistant", "content": "a", "thinking_blocks": [THINKING]},
        {"role": "assistant", "content": "b"},
        {"role": "assistant", "content": "c", "thinking_blocks": [other]},
    ])
    assert out["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}]},
        {"role": "assistant", "content": [THINKING, {"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
        {"role": "assistant", "content": [other, {"type": "text", "text": "c"}]},
    ]


def test_system_messages_images_and_an_empty_assistant() -> None:
    out = request([
        {"role": "system", "content": "One."},
        {"role": "developer", "content": [{"type": "text", "text": "Two."}]},
        {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBO"}},
                                     {"type": "image_url", "image_url": {"url": "https://x/y.png"}}]},
        {"role": "assistant", "content": "   "},
        {"role": "system", "content": "Later."},
    ])
    assert out == {
        "system": [{"type": "text", "text": "One."}, {"type": "text", "text": "Two."}],
        "messages": [
            {"role": "user", "content": [
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBO"}},
                {"type": "image", "source": {"type": "url", "url": "https://x/y.png"}}]},
            {"role": "system", "content": "Later."},
        ],
    }


def test_containers() -> None:
    history = [{"role": "system", "content": "s"}, {"role": "user", "content": "hi"}]
    assert written([]) == b'{"messages":[\n]}\n'
    assert written(history) == b'{"system":"s","messages":[\n{"role":"user","content":"hi"}\n]}\n'
    assert written(history, container="array") == b'[\n{"role":"system","content":"s"},\n{"role":"user","content":"hi"}\n]\n'
    assert written(history, container="lines") == b'{"role":"system","content":"s"}\n{"role":"user","content":"hi"}\n'


def test_arguments_that_are_not_an_object_are_refused_naming_the_message() -> None:
    history = [{"role": "user", "content": "q"}, {"role": "assistant", "content": None, "tool_calls": [call("c", "[1, 2]")]}]
    with pytest.raises(InvalidMessage) as exc:
        written(history)
    assert str(exc.value) == (
        "message 1: call 'c': its arguments are not a JSON object, and an Anthropic tool_use input "
        "must be one. Repair the arguments, or write another format"
    )


# -- samples ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", SESSIONS, ids=lambda p: p.name[:40])
def test_every_sample_passes_anthropic_s_rules_with_its_thinking_intact(path: Path) -> None:
    repaired = list(normalizer.repair(read_messages(path)))
    out = request(repaired)
    assert anthropic_violations(out["messages"]) == []
    # every thinking block, in order, whole: the same keys in the same order, the same values
    read = [block for m in repaired for block in m.get("thinking_blocks") or ()]
    written_blocks = [b for m in out["messages"] if isinstance(m["content"], list) for b in m["content"]
                      if b.get("type") in ("thinking", "redacted_thinking")]
    assert [list(b.items()) for b in written_blocks] == [list(b.items()) for b in read]


@pytest.mark.parametrize("path", SESSIONS, ids=lambda p: p.name[:40])
def test_every_sample_s_request_is_a_fixed_point(path: Path) -> None:
    first = written(list(normalizer.repair(read_messages(path))))
    stream = read_messages(io.BytesIO(first), "anthropic")
    again = normalizer.repair(stream)
    assert written(list(again)) == first
    assert not again.report.changed and not stream.report.changed


def test_the_checker_finds_what_anthropic_refuses() -> None:
    bad = [
        {"role": "assistant", "content": [{"type": "text", "text": "x"}, THINKING,
                                          {"type": "tool_use", "id": "a.b", "name": "f", "input": {}}]},
        {"role": "user", "content": [{"type": "text", "text": " "}, {"type": "tool_result", "tool_use_id": "zz", "content": ""}]},
        {"role": "user", "content": ""},
    ]
    assert anthropic_violations(bad) == [
        "messages.0.content.0: the first block must be thinking",
        "messages.0: tool_use.id 'a.b' should match '^[a-zA-Z0-9_-]+$'",
        "messages.0: `tool_use` ids were found without `tool_result` blocks immediately after: a.b",
        "messages.1: text content blocks must contain non-whitespace text",
        "messages.1: Did not find 1 `tool_result` block(s) at the beginning of this message",
        "messages.1: unexpected `tool_use_id` found in `tool_result` blocks: zz",
        "messages.2: roles must alternate",
        "messages.2: all messages must have non-empty content",
    ]


# -- round trips ------------------------------------------------------------------------------------

# A request as the Anthropic SDK takes it: the assistant turns are the API's own content blocks.
SDK_REQUEST = {
    "model": "claude-sonnet-4-5", "max_tokens": 1024, "system": "You are terse.",
    "messages": [
        {"role": "user", "content": "What is in a.txt?"},
        {"role": "assistant", "content": [
            THINKING, {"type": "text", "text": "Reading it."},
            {"type": "tool_use", "id": "toolu_01", "name": "read", "input": {"path": "a.txt"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01", "content": "hello", "is_error": False}]},
        {"role": "assistant", "content": [{"type": "text", "text": "It says hello."}]},
    ],
    "tools": [{"name": "read", "input_schema": {"type": "object"}}],
}


def test_an_anthropic_request_round_trips_equal_as_json() -> None:
    from normalizer.formats import read_conversations

    out = io.BytesIO()
    encoder = normalizer.ENCODERS["anthropic"]()
    conversations = read_conversations(io.BytesIO(orjson.dumps(SDK_REQUEST)), "anthropic")
    conversations.keep_source_fields()  # (an encoder driven by hand asks for what its reader kept aside)
    for conv in conversations:
        out.write(encoder.start() + encoder.begin(conv.extra))
        stream = normalizer.repair(conv.messages)
        for m in stream:
            out.write(encoder.message(m))
        out.write(encoder.end() + encoder.finish())
        assert not stream.report.changed
    assert orjson.loads(out.getvalue()) == SDK_REQUEST


def test_the_async_twin_writes_the_same_bytes() -> None:
    history = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]

    async def go() -> bytes:
        out = io.BytesIO()
        assert await awrite_anthropic(history, out) == 2
        return out.getvalue()

    assert anyio.run(go) == written(history)


def test_a_server_tool_and_its_result_are_written_back_as_the_assistant_s_own_blocks() -> None:
    # Read as a call and its tool message (issue 15); written back as Anthropic ran them: a
    # server_tool_use and its web_search_tool_result in the assistant's message, never a
    # client tool_use answered by the user; is_error and the other fields restored.
    search = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "x"}}
    found = {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1",
             "content": [{"type": "web_search_result", "url": "https://example.com", "title": "Example"}]}
    body = {"messages": [
        {"role": "user", "content": "Search the web"},
        {"role": "assistant", "content": [{"type": "text", "text": "Searching."}, search, found]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_2", "content": "x", "is_error": True}]},
    ]}
    stream = read_messages(io.BytesIO(orjson.dumps(body)), "anthropic")
    stream.keep_source_fields()  # (a list of the messages, written back: asked for what the reader kept aside)
    messages = list(stream)
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "tool"]
    out = request(messages)
    assert out["messages"][:2] == body["messages"][:2]
    assert out["messages"][2]["content"][0]["is_error"] is True
