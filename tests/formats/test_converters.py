"""Codex history control, Claude Code line handling, Anthropic and ShareGPT, exact outputs."""

from __future__ import annotations

import io
from dataclasses import FrozenInstanceError, fields
from typing import Any

import orjson
import pytest

from normalizer import InputError, Report
from normalizer.formats import AnthropicConverter, ClaudeCodeConverter, FinetuneConverter, ShareGPTConverter, read_messages
from normalizer.formats._common import SplitRecord


def rollout(*lines: tuple[str, dict[str, Any]]) -> io.BytesIO:
    return io.BytesIO(b"".join(orjson.dumps({"timestamp": "t", "type": t, "payload": p}) + b"\n" for t, p in lines))


def user(text: str) -> tuple[str, dict[str, Any]]:
    return ("response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]})


def said(text: str) -> tuple[str, dict[str, Any]]:
    return ("response_item", {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]})


def event(kind: str, **fields: Any) -> tuple[str, dict[str, Any]]:
    return ("event_msg", {"type": kind, **fields})


def test_codex_compacted_with_replacement_history() -> None:
    src = rollout(
        ("session_meta", {"id": "s", "base_instructions": {"text": "You are Codex."}}),
        user("old"), event("user_message", message="old"), said("old answer"),
        ("compacted", {"message": "sum", "replacement_history": [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "kept"}]}]}),
        user("new"), said("new answer"),
    )
    report = Report()
    assert list(read_messages(src, report=report)) == [
        {"role": "system", "content": "You are Codex."},
        {"role": "user", "content": "kept"},
        {"role": "user", "content": "new"},
        {"role": "assistant", "content": "new answer"},
    ]
    assert report.counts["skip_compacted"] == 2


def test_codex_compacted_without_replacement_keeps_user_messages() -> None:
    src = rollout(user("old"), said("old answer"), ("compacted", {"message": "summary of it"}), user("new"))
    assert list(read_messages(src, "codex")) == [
        {"role": "user", "content": "old"},
        {"role": "assistant", "content": "summary of it"},
        {"role": "user", "content": "new"},
    ]


def test_codex_rollback_removes_the_last_turns() -> None:
    src = rollout(
        user("one"), event("user_message", message="one"), said("1"),
        user("two"), event("user_message", message="two"), said("2"),
        event("thread_rolled_back", num_turns=1),
        user("three"), event("user_message", message="three"), said("3"),
    )
    report = Report()
    assert [m["content"] for m in read_messages(src, report=report)] == ["one", "1", "three", "3"]
    assert report.counts["skip_rolled_back"] == 2


def test_codex_history_control_on_a_stream_is_recorded(monkeypatch: pytest.MonkeyPatch) -> None:
    src = rollout(user("old"), ("compacted", {"message": "sum"}), event("thread_rolled_back", num_turns=1), user("new"))

    class Unseekable(io.BufferedReader):
        def seekable(self) -> bool:
            return False

    report = Report()
    out = list(read_messages(Unseekable(src), "codex", report=report))  # type: ignore[arg-type]
    assert [m["content"] for m in out] == ["old", "new"]
    assert report.counts["compaction_not_applied"] == 1 and report.counts["rollback_not_applied"] == 1
    assert report.records[0].dropped == {"message": "sum"}


def test_codex_turn_aborted_ends_the_turn_and_unknown_lines_are_counted() -> None:
    call = {"type": "function_call", "name": "shell", "arguments": "{}", "call_id": "c"}
    src = rollout(user("go"), ("response_item", call), event("turn_aborted", reason="interrupted"), ("world_state", {}), ("brand_new", {}), said("after"))
    report = Report()
    out = list(read_messages(src, report=report))
    assert [m["role"] for m in out] == ["user", "assistant", "assistant"]
    assert out[1]["tool_calls"][0]["id"] == "c" and out[2]["content"] == "after"
    assert report.counts["skip_world_state"] == 1 and report.counts["skip_unknown_line"] == 1


def cc(kind: str, content: Any, **fields: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"role": kind, "content": content}
    if kind == "assistant":
        message["id"] = fields.pop("mid", "m1")
        message["model"] = fields.pop("model", "claude")
    return {"type": kind, "uuid": "u", "parentUuid": None, "isSidechain": False, "message": message, **fields}


def feed_all(conv: Any, records: list[Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i, rec in enumerate(records):
        out += conv.feed(rec, line=i + 1)
    return out + conv.close()


def test_claude_code_merges_and_drops() -> None:
    use = {"type": "tool_use", "id": "t1", "name": "Read", "input": {"p": 1}}
    records = [
        cc("user", "hi"),
        cc("assistant", [{"type": "thinking", "thinking": "", "signature": "sig"}]),
        cc("assistant", [{"type": "text", "text": "Reading."}]),
        cc("assistant", [{"type": "text", "text": "Reading."}]),  # streaming duplicate
        cc("assistant", [use]),
        {"type": "system", "subtype": "stop_hook_summary"},
        cc("user", [{"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "data"}], "is_error": True}]),
        cc("assistant", [{"type": "text", "text": "API Error: 529"}], mid="m9", model="<synthetic>", isApiErrorMessage=True),
        cc("user", [{"type": "text", "text": "thanks"}, {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA"}}]),
    ]
    report = Report()
    out = feed_all(ClaudeCodeConverter(report), records)
    assert out == [
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": "Reading.",
            "tool_calls": [{"id": "t1", "type": "function", "function": {"name": "Read", "arguments": '{"p":1}'}}],
            "thinking_blocks": [{"type": "thinking", "thinking": "", "signature": "sig"}],
        },
        {"role": "tool", "tool_call_id": "t1", "content": "data", "source_fields": {"is_error": True}},
        {"role": "user", "content": [{"type": "text", "text": "thanks"}, {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA"}}]},
    ]
    assert report.counts == {"skip_duplicate_block": 1, "skip_system": 1, "drop_synthetic": 1}
    assert report.records[0].dropped == records[7]


def test_claude_code_bad_lines() -> None:
    conv = ClaudeCodeConverter(Report())
    with pytest.raises(InputError):
        conv.feed({"no": "type"}, line=3)
    with pytest.raises(InputError):
        conv.feed({"type": "user", "message": "text"}, line=4)
    with pytest.raises(InputError):
        conv.feed(cc("assistant", 5), line=5)


def test_anthropic_request() -> None:
    body = {
        "model": "claude",
        "system": [{"type": "text", "text": "Be brief."}],
        "messages": [
            {"role": "user", "content": "weather?"},
            {"role": "assistant", "content": [{"type": "text", "text": "Checking."}, {"type": "tool_use", "id": "a", "name": "w", "input": {}}, {"type": "tool_use", "id": "b", "name": "w", "input": {"c": 1}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "b", "content": "sun"}, {"type": "tool_result", "tool_use_id": "a", "content": "rain"}, {"type": "text", "text": "and?"}]},
        ],
    }
    report = Report()
    stream = read_messages(io.BytesIO(orjson.dumps(body)), report=report)
    assert list(stream) == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "weather?"},
        {"role": "assistant", "content": "Checking.", "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "w", "arguments": "{}"}},
            {"id": "b", "type": "function", "function": {"name": "w", "arguments": '{"c":1}'}},
        ]},
        {"role": "tool", "tool_call_id": "a", "content": "rain"},
        {"role": "tool", "tool_call_id": "b", "content": "sun"},
        {"role": "user", "content": "and?"},
    ]
    assert stream.format == "anthropic"
    late = AnthropicConverter(report)
    late.feed({"role": "user", "content": "x"})
    assert late.meta("system", "late") == [] and report.counts["drop_late_system"] == 1


def test_sharegpt_pairs_by_position() -> None:
    record = {
        "system": "sys",
        "conversations": [
            {"from": "human", "value": "q"},
            {"from": "gpt", "value": "let me see"},
            {"from": "function_call", "value": '[{"name": "a", "arguments": {"x": 1}}, {"name": "b", "arguments": "{}"}]'},
            {"from": "observation", "value": "A"},
            {"from": "observation", "value": "B"},
            {"from": "observation", "value": "C"},
            {"from": "gpt", "value": "done"},
        ],
        "tools": '[{"name": "a", "parameters": {}}]',
        "id": 7,
    }
    conv = ShareGPTConverter(Report())
    conv.split({"conversations": []})
    split = conv.split(record)
    assert split.messages == [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": "let me see", "tool_calls": [
            {"id": "call_1_0", "type": "function", "function": {"name": "a", "arguments": '{"x":1}'}},
            {"id": "call_1_1", "type": "function", "function": {"name": "b", "arguments": "{}"}},
        ]},
        {"role": "tool", "tool_call_id": "call_1_0", "content": "A"},
        {"role": "tool", "tool_call_id": "call_1_1", "content": "B"},
        {"role": "tool", "tool_call_id": "call_1_orphan_0", "content": "C"},
        {"role": "assistant", "content": "done"},
    ]
    assert split.extra == {"tools": [{"type": "function", "function": {"name": "a", "parameters": {}}}], "id": 7}
    with pytest.raises(InputError):
        conv.split({"conversations": [{"from": "alien", "value": "?"}]}, line=2)


def test_finetune_keeps_other_keys_untouched() -> None:
    record = {"messages": [{"role": "user", "content": "q", "weight": 0}], "tools": [{"type": "function", "function": {"name": "f"}}], "parallel_tool_calls": False}
    split = FinetuneConverter(Report()).split(record)
    assert split == SplitRecord(messages=record["messages"],
                                extra={"tools": record["tools"], "parallel_tool_calls": False})
    assert [f.name for f in fields(SplitRecord)] == ["messages", "extra"]
    with pytest.raises(FrozenInstanceError):
        split.messages = []  # type: ignore[misc]
    with pytest.raises(InputError):
        FinetuneConverter(Report()).split({"messages": [{"content": "no role"}]})
