"""Builders for short scenario tests, and the checks every property test applies."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import json

import normalizer

Message = dict[str, Any]


def U(content: Any = "q", **extra: Any) -> Message:
    return {"role": "user", "content": content, **extra}


def S(content: Any = "sys", **extra: Any) -> Message:
    return {"role": "system", "content": content, **extra}


def call(call_id: str, name: str = "f", arguments: Any = "{}") -> Message:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def A(content: Any = None, calls: Iterable[str] | None = None, **extra: Any) -> Message:
    message: Message = {"role": "assistant", "content": content}
    if calls is not None:
        message["tool_calls"] = [call(c) for c in calls]
    message.update(extra)
    return message


def T(call_id: str | None, content: Any = "result", **extra: Any) -> Message:
    message: Message = {"role": "tool", "tool_call_id": call_id, "content": content}
    message.update(extra)
    return message


def repair_all(messages: Iterable[Any], **options: Any) -> tuple[list[Message], normalizer.Report]:
    stream = normalizer.repair(messages, **options)
    out = list(stream)
    return out, stream.report


def kinds(report: normalizer.Report) -> dict[str, int]:
    return dict(report.counts)


# ---------------------------------------------------------------- invariants


def _is_opaque(message: Message) -> bool:
    return message.get("finish_reason") == "incomplete" or bool(
        message.get("codex_reasoning_items") or message.get("codex_message_items")
    )


def _has_text(content: Any) -> bool:
    if isinstance(content, str):
        return bool(content.strip())
    if isinstance(content, list):
        for part in content:
            if isinstance(part, dict) and part.get("type") == "text":
                if str(part.get("text", "")).strip():
                    return True
            elif part is not None:
                return True
    return False


def assert_pairing_rules(out: list[Message], *, trailing_calls: str = "stub") -> None:
    """The rules of the default profile, over a whole output history."""
    i = 0
    previous: Message | None = None
    while i < len(out):
        m = out[i]
        role = m["role"]
        assert role != "tool", f"output {i}: tool message not right after its call's turn: {m}"
        if role == "assistant":
            calls = m.get("tool_calls")
            opaque = _is_opaque(m)  # kept exactly as stored: only pairing applies
            assert opaque or calls is None or calls, f"output {i}: empty tool_calls list"
            if not opaque:
                assert _has_text(m.get("content")) or calls, f"output {i}: empty assistant {m}"
                if calls:
                    assert m.get("content") != "" and not (
                        isinstance(m.get("content"), (str, list)) and not _has_text(m.get("content"))
                    ), f"output {i}: blank content next to tool calls"
            if previous is not None and previous["role"] == "assistant":
                assert _is_opaque(m) or _is_opaque(previous) or m.get("name") != previous.get("name"), (
                    f"output {i}: two consecutive assistant messages"
                )
            ids = [c.get("id") or c.get("call_id") for c in calls or []]
            if opaque:
                ids = list(dict.fromkeys(i for i in ids if i))
            assert len(ids) == len(set(ids)), f"output {i}: duplicate call ids {ids}"
            answered = []
            j = i + 1
            while j < len(out) and out[j]["role"] == "tool":
                answered.append(out[j]["tool_call_id"])
                j += 1
            if trailing_calls == "keep" and j == len(out):
                assert answered == ids[: len(answered)] or set(answered) <= set(ids)
            else:
                assert answered == ids, f"output {i}: calls {ids} answered by {answered}"
            previous = out[j - 1]
            i = j
            continue
        if role == "user" and previous is not None and previous["role"] == "user":
            assert m.get("name") != previous.get("name"), f"output {i}: two consecutive user messages"
        previous = m
        i += 1


def _texts(value: Any) -> list[str]:
    """Every non-blank string inside a content value."""
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, list):
        found: list[str] = []
        for part in value:
            if isinstance(part, dict):
                found += _texts(part.get("text"))
            else:
                found += _texts(part)
        return found
    return []


def assert_nothing_lost(inp: list[Message], out: list[Message], report: normalizer.Report) -> None:
    """Every text, reasoning, tool call and tool result of the input is in the output or
    kept whole in a report record (dropped). Compared as JSON text, since merges join."""
    # json, not orjson: Python ints beyond 64 bits are valid message content too.
    haystack = json.dumps(out, ensure_ascii=False) + json.dumps([r.dropped for r in report.records], ensure_ascii=False)
    for index, m in enumerate(inp):
        if not isinstance(m, dict):
            continue
        pieces = _texts(m.get("content")) + _texts(m.get("reasoning_content"))
        calls = m.get("tool_calls") if m.get("role") == "assistant" else None
        for c in calls if isinstance(calls, list) else []:
            fn = c.get("function") if isinstance(c, dict) else None
            if not isinstance(fn, dict):
                continue
            if fn.get("name"):
                pieces.append(fn["name"])
            if isinstance(fn.get("arguments"), str) and fn["arguments"].strip():
                pieces.append(fn["arguments"])
        for piece in pieces:
            needle = json.dumps(piece, ensure_ascii=False)[1:-1]
            assert needle in haystack, f"input {index}: {piece!r} is neither in the output nor in the report"


# ---------------------------------------------------------------- algorithmic guards


class Counting(dict):  # type: ignore[type-arg]
    """A dict that counts membership tests: swapped in for a core registry to count the
    probes an operation makes (an algorithmic property, not a timing)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.probes = 0

    def __contains__(self, key: object) -> bool:
        self.probes += 1
        return super().__contains__(key)


class within_seconds:
    """Fail (not hang) when the body runs longer than ``seconds``: for sizes where a
    quadratic algorithm takes minutes and a linear one well under a second, so the bound
    can be generous. SIGALRM: main thread, POSIX."""

    def __init__(self, seconds: int) -> None:
        self.seconds = seconds

    def __enter__(self) -> "within_seconds":
        import signal

        def expired(signum: int, frame: Any) -> None:
            raise TimeoutError(f"took more than {self.seconds} s: the algorithm is not linear")

        self._previous = signal.signal(signal.SIGALRM, expired)
        signal.alarm(self.seconds)
        return self

    def __exit__(self, *exc_info: object) -> None:
        import signal

        signal.alarm(0)
        signal.signal(signal.SIGALRM, self._previous)
