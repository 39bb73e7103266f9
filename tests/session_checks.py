"""Checks on what a repair writes in a tool's own format: Anthropic's rules for a request, the
parentUuid chain of a Claude Code session, and where to cut a sample to break it."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson

TOOL_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def anthropic_violations(messages: list[dict[str, Any]]) -> list[str]:
    """What Anthropic's Messages API refuses in ``messages`` (providers.md §5, AN-1..AN-16):
    each violation as ``"messages.N: <the API's words>"``."""
    out: list[str] = []
    seen: set[str] = set()
    for i, m in enumerate(messages):
        content = m["content"]
        blocks = content if isinstance(content, list) else ([{"type": "text", "text": content}] if content else [])
        before = messages[i - 1] if i else None
        if m["role"] not in ("user", "assistant"):
            out.append(f'messages.{i}: Unexpected role "{m["role"]}"')  # AN-12
        if before is not None and before["role"] == m["role"]:
            out.append(f"messages.{i}: roles must alternate")  # AN-10
        if not blocks and not (m["role"] == "assistant" and i == len(messages) - 1):
            out.append(f"messages.{i}: all messages must have non-empty content")  # AN-8
        for block in blocks:
            if block.get("type") == "text" and not block["text"].strip():
                out.append(f"messages.{i}: text content blocks must contain non-whitespace text")  # AN-7
        kinds = [b.get("type") for b in blocks]
        if m["role"] == "assistant":
            if {"thinking", "redacted_thinking"} & set(kinds) and kinds[0] not in ("thinking", "redacted_thinking"):
                out.append(f"messages.{i}.content.0: the first block must be thinking")  # AN-15
            if kinds and kinds[-1] == "thinking":
                out.append(f"messages.{i}: The final block in an assistant message cannot be `thinking`")  # AN-16
            uses = [b["id"] for b in blocks if b.get("type") == "tool_use"]
            for use in uses:
                if use in seen:
                    out.append(f"messages.{i}: `tool_use` ids must be unique")  # AN-4
                if not TOOL_ID.match(use):
                    out.append(f"messages.{i}: tool_use.id {use!r} should match '^[a-zA-Z0-9_-]+$'")  # AN-5
                seen.add(use)
            after = messages[i + 1]["content"] if i + 1 < len(messages) else []
            answered = [b.get("tool_use_id") for b in after if b.get("type") == "tool_result"] if isinstance(after, list) else []
            missing = [u for u in uses if u not in answered]
            if missing:
                out.append(f"messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately after: {', '.join(missing)}")  # AN-1
        else:
            results = [b.get("tool_use_id") for b in blocks if b.get("type") == "tool_result"]
            if kinds[: len(results)] != ["tool_result"] * len(results):
                out.append(f"messages.{i}: Did not find {len(results)} `tool_result` block(s) at the beginning of this message")  # AN-2
            previous = before["content"] if before is not None and before["role"] == "assistant" and isinstance(before["content"], list) else []
            uses = {b.get("id") for b in previous if b.get("type") == "tool_use"}
            out += [f"messages.{i}: unexpected `tool_use_id` found in `tool_result` blocks: {r}" for r in results if r not in uses]  # AN-3
    return out


def lines_of(data: bytes) -> list[Any]:
    return [orjson.loads(line) for line in data.splitlines()]


def calls_of(value: Any) -> list[str]:
    if value.get("type") == "assistant" and isinstance(value.get("message"), dict) and isinstance(value["message"].get("content"), list):
        return [b["id"] for b in value["message"]["content"] if b.get("type") == "tool_use"]
    payload = value.get("payload")
    if value.get("type") == "response_item" and payload.get("type") in ("function_call", "custom_tool_call"):
        return [payload["call_id"]]
    return []


def results_of(value: Any) -> list[str]:
    message = value.get("message")
    if value.get("type") == "user" and isinstance(message, dict) and isinstance(message.get("content"), list):
        return [b["tool_use_id"] for b in message["content"] if isinstance(b, dict) and b.get("type") == "tool_result"]
    payload = value.get("payload")
    if value.get("type") == "response_item" and str(payload.get("type")).endswith("_output"):
        return [payload["call_id"]]
    return []


def cuts(path: Path) -> dict[str, int]:
    """Where to cut a sample: right after its first call, and after the first result of its
    first parallel batch (calls of one turn, some answered), as 1-based line counts."""
    values = lines_of(path.read_bytes())
    found: dict[str, int] = {}
    open_calls: list[str] = []
    for n, value in enumerate(values, 1):
        calls = calls_of(value)
        if calls and "after a call" not in found:
            found["after a call"] = n
        open_calls += calls
        answered = [r for r in results_of(value) if r in open_calls]
        if answered and len(open_calls) >= 2 and len(open_calls) > len(answered) and "mid-batch" not in found:
            found["mid-batch"] = n
        for r in answered:
            open_calls.remove(r)
    return found




def _ahead(lines: list[Any]) -> set[str]:
    """Parents a file names that are not earlier lines of it: later lines (Claude Code can
    write a line before the one it hangs from), or lines of another file (a sub-agent
    transcript hangs from lines of the main session's)."""
    seen: set[str] = set()
    ahead = set()
    for v in lines:
        parent = v.get("parentUuid")
        if isinstance(parent, str) and parent not in seen:
            ahead.add(parent)
        if isinstance(v.get("uuid"), str):
            seen.add(v["uuid"])
    return ahead


def assert_chain_whole(lines: list[Any], before: list[Any] | None = None) -> None:
    """Every parentUuid names a line of the file: an earlier one (or a later one, where
    ``before``, the input, named it ahead too), or outside the file where the input had it so
    (null only where the thread starts or a compaction boundary restarts it); and the chain
    from the last line, walked as Claude Code walks it, reaches the first line of the thread
    (or, in a file that hangs from another, a line that hangs from it), with no loop."""
    sides = [bool(v.get("isSidechain")) for v in lines if v.get("type") in ("user", "assistant")]
    if not sides:
        return  # no conversation yet: no chain to keep
    thread = [v for v in lines if "uuid" in v and bool(v.get("isSidechain")) == sides[0]]
    source = before if before is not None else lines
    ahead = _ahead(source)
    outside = ahead - {v["uuid"] for v in source if isinstance(v.get("uuid"), str)}
    every = {v["uuid"]: v for v in thread}
    seen: set[str] = set()
    for n, v in enumerate(thread):
        parent = v.get("parentUuid")
        if parent is None:
            assert n == 0 or v.get("subtype") == "compact_boundary", v["uuid"]
        else:
            assert parent in seen or (parent in ahead and parent in every) or parent in outside, (v["uuid"], parent)
        seen.add(v["uuid"])
    at, walked = thread[-1], {thread[-1]["uuid"]}
    while at.get("parentUuid") in every:
        at = every[at["parentUuid"]]
        assert at["uuid"] not in walked, ("a loop", at["uuid"])
        walked.add(at["uuid"])
    assert at is thread[0] or at.get("subtype") == "compact_boundary" or at.get("parentUuid") in outside


def main_chain(lines: list[Any]) -> list[Any]:
    """The lines Claude Code sends on resume: from the thread's last line up its parentUuid
    chain (through compaction boundaries' logicalParentUuid), first line first; with the
    lines of a parallel batch that the walk passes by (the other lines of an assistant
    message.id on the chain, and the results hanging from them), which Claude Code must
    recover, as its own 2.1 files need it: a result hangs from its own tool_use line there,
    and the walk passes one call of a batch only. (That recovery is assumed here, not
    observed: the owner tests resume repaired files with the real CLI.)"""
    sides = [bool(v.get("isSidechain")) for v in lines if v.get("type") in ("user", "assistant")]
    if not sides:
        return []
    thread = [v for v in lines if isinstance(v.get("uuid"), str) and bool(v.get("isSidechain")) == sides[0]]
    every = {v["uuid"]: v for v in thread}
    at: Any = thread[-1]
    walked: list[Any] = []
    seen: set[str] = set()
    while at is not None and at["uuid"] not in seen:
        walked.append(at)
        seen.add(at["uuid"])
        parent = at.get("parentUuid") or at.get("logicalParentUuid")
        at = every.get(parent) if isinstance(parent, str) else None
    ids = {_message_id(v) for v in walked} - {None}
    calls = {v["uuid"] for v in thread if _message_id(v) in ids}
    batch = calls | {v["uuid"] for v in thread if v.get("parentUuid") in calls and results_of(v)}
    return walked[::-1] + [v for v in thread if v["uuid"] in batch - seen]


def _message_id(value: Any) -> Any:
    message = value.get("message")
    return message.get("id") if value.get("type") == "assistant" and isinstance(message, dict) else None


def assert_messages_kept(before: list[Any], after: list[Any], dropped: Sequence[Any] = ()) -> None:
    """Every user and assistant message on the input's main chain is on the repaired file's
    main chain (a repair never makes Claude Code lose history on resume), but for the lines
    the repair removed (``dropped``: the report's whole lines)."""
    gone = set()
    for d in dropped:
        if isinstance(d, str):
            try:
                value = orjson.loads(d)
            except orjson.JSONDecodeError:
                continue
            if isinstance(value, dict):
                gone.add(value.get("uuid"))
    carried = {v["uuid"] for v in main_chain(after)}
    lost = [v["uuid"] for v in main_chain(before)
            if v.get("type") in ("user", "assistant") and v["uuid"] not in carried and v["uuid"] not in gone]
    assert lost == [], ("lost from the chain Claude Code walks", lost)
