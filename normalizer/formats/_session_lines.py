"""A session file's lines as the in-format repair sees them (``_sessions.py``): what a line
is to the pairing rules (:class:`Info`), a line read (:class:`Line`), a call and the turn
that made it (:class:`Call`, :class:`Turn`), and what one format's lines mean
(:class:`Dialect`: Claude Code, Codex; Gemini CLI's is in ``_session_gemini``). The stub lines they write are shaped in ``.._stub``.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from .._json import loads
from .._stub import claude_code_stub, codex_stub
from ._records import BOM

__all__ = ["Kind", "Info", "Line", "LineRecord", "Call", "Turn", "Dialect", "ClaudeCode", "Codex", "REPLY", "str_in"]

#: Codex: the key of an assistant message (a reply), not of a reasoning item (see
#: ``_sessions``: one written between a call and its output holds the lines after it).
REPLY: Final = object()

# What a line is to the pairing rules.
Kind = Literal["calls", "assistant", "results", "user", "reset", "other"]

@dataclass(slots=True)  # one per line kept while a turn waits: no __dict__ each
class Info:
    """A line as the pairing rules see it."""

    kind: Kind = "other"
    key: Any = None  # Claude Code: the assistant turn's message.id
    calls: dict[str, str] = field(default_factory=dict)  # call id -> call kind, in call order (the first of an id)
    results: list[str] = field(default_factory=list)  # call ids answered
    chain: bool = False  # Claude Code: a line of the thread's parentUuid chain
    uuid: str | None = None  # Claude Code: of any line with one (of the thread or not)
    parent: str | None = None


class Line:
    """A line read: its bytes (terminator apart), its value (let go if the line is kept
    after it was read: see ``forget``), where it was, what it is."""

    __slots__ = ("body", "end", "value", "number", "info", "linear", "back", "synthetic", "record", "forgotten", "placed")

    def __init__(self, body: bytes, end: bytes, value: Any, number: int, info: Info) -> None:
        self.body = body
        self.end = end
        self.value = value
        self.number = number
        self.info = info
        self.linear = False  # its parent was the chain line before it (re-pointed with it)
        self.back = False  # a result that hangs from the tool_use line of a call it answers (written before it)
        self.synthetic: Call | None = None  # a synthetic result, for this call
        self.record: LineRecord | None = None  # to record when written
        self.forgotten = False  # its value was let go (see forget)
        self.placed = False  # a late result left in its place, its call answered: written as it is (see _resolve)

    def forget(self) -> None:
        """Let the parsed value go, for a line kept after it was read (a call waiting for its
        result, a held line, a result moving up): a value takes several times the line's
        bytes, and it is seldom needed again (see ``parsed``)."""
        if self.value is not None:
            self.value, self.forgotten = None, True

    def parsed(self) -> Any:
        """The line's value; parsed again if it was let go (not kept: it is needed once, to
        re-point the line or to copy a call's envelope into its synthetic result)."""
        if not self.forgotten:
            return self.value
        return loads(self.body[len(BOM):] if self.body.startswith(BOM) else self.body)


@dataclass(frozen=True, slots=True)
class LineRecord:
    """A change to record when its line is written (a stub added, a line moved)."""

    kind: str
    detail: str


@dataclass(slots=True)
class Call:
    id: str
    kind: str
    line: Line


class Turn:
    __slots__ = ("key", "calls", "answered", "accepting", "call_bytes")

    def __init__(self, key: Any) -> None:
        self.key = key
        self.calls: dict[str, Call] = {}  # in call order
        self.call_bytes = 0  # the bytes of the lines its calls keep (see SessionRepairer._keep_calls)
        # Only ids of ``calls`` (every add checks it, and calls are never taken out): the
        # turn has open calls while it is the smaller of the two (see ``waits``).
        self.answered: set[str] = set()
        self.accepting = True  # Codex: assistant items still join this turn

    def waits(self) -> bool:
        """Some call is still unanswered. Asked for every line of a wait: constant time,
        where building ``unanswered()`` costs one step per call of the turn."""
        return len(self.answered) < len(self.calls)

    def unanswered(self) -> list[Call]:
        """The open calls, in call order (once per turn, for their synthetic results)."""
        return [c for i, c in self.calls.items() if i not in self.answered]


# -- the formats ---------------------------------------------------------------------------------


class Dialect:
    """What one format's lines mean, and how it writes a synthetic result."""

    name: str
    #: Its lines form a parentUuid chain, whose order (not the file's) is the conversation's:
    #: a turn's results may be written after the next turn's first lines.
    chained: bool = False
    #: Its file is a log replayed whole (Gemini CLI: a later line can change any message), so
    #: no line is decided before the end: the repairer holds them all for ``_session_gemini``.
    replayed: bool = False

    def classify(self, value: Any) -> Info:
        raise NotImplementedError

    def continues(self, turn: Turn, info: Info) -> bool:
        raise NotImplementedError

    def stub(self, call: Call, text: str, timestamp: Any) -> dict[str, Any]:
        raise NotImplementedError

    def without_results(self, value: Any, ids: set[str]) -> Any:
        """The line's value without its results for ``ids``."""
        raise NotImplementedError


class ClaudeCode(Dialect):
    name = "claude-code"
    chained = True

    def __init__(self) -> None:
        self.side: bool | None = None  # isSidechain of the thread being repaired (its first line's)

    def classify(self, value: Any) -> Info:
        info = Info()
        if not isinstance(value, dict):
            return info
        kind = value.get("type")
        message = value.get("message")
        side = bool(value.get("isSidechain"))
        # A line of results only, before the thread is known, answers nothing (it is removed):
        # the thread is the next line's, the first of the file once it is gone (a fixed point).
        early = self.side is None and kind == "user" and isinstance(message, dict) and _results_only(message.get("content"))
        if self.side is None and kind in ("user", "assistant") and isinstance(message, dict) and not early:
            self.side = side  # a sub-agent file is all sidechain: its thread is the sidechain
        line_uuid = value.get("uuid")
        if isinstance(line_uuid, str):
            parent = value.get("parentUuid")
            info.uuid, info.parent = line_uuid, parent if isinstance(parent, str) else None
        if side != self.side and not early:
            return info  # another thread (an inline sidechain), or not known yet: untouched
        info.chain = info.uuid is not None
        if kind == "system" and value.get("subtype") == "compact_boundary":
            info.kind = "reset"
            return info
        if not isinstance(message, dict):
            return info
        content = message.get("content")
        if kind == "assistant":
            if message.get("model") == "<synthetic>" or value.get("isApiErrorMessage"):
                return info  # a harness error line: not a model turn
            info.key = message.get("id") or value.get("requestId") or line_uuid
            if isinstance(content, list):
                for block in content:
                    if isinstance(block, dict) and block.get("type") == "tool_use" and isinstance(block.get("id"), str):
                        info.calls.setdefault(block["id"], "tool_use")
            info.kind = "calls" if info.calls else "assistant"
        elif kind == "user" and not value.get("isMeta"):
            blocks = content if isinstance(content, list) else [content]
            other = False
            for block in blocks:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    if isinstance(block.get("tool_use_id"), str):
                        info.results.append(block["tool_use_id"])
                elif block is not None:
                    other = True
            info.kind = "user" if other or not info.results else "results"
        return info

    def continues(self, turn: Turn, info: Info) -> bool:
        return info.key is not None and info.key == turn.key

    def stub(self, call: Call, text: str, timestamp: Any) -> dict[str, Any]:
        return claude_code_stub(call.line.parsed(), call.id, text, timestamp)

    def without_results(self, value: Any, ids: set[str]) -> Any:
        message = value["message"]
        content = [b for b in message["content"] if not (isinstance(b, dict) and b.get("type") == "tool_result" and str_in(b.get("tool_use_id"), ids))]
        return {**value, "message": {**message, "content": content}}


def _results_only(content: Any) -> bool:
    return isinstance(content, list) and bool(content) and all(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)


def str_in(value: Any, keys: Collection[str]) -> bool:
    """``value in keys`` for any JSON value: a list or a dict (unhashable) is in no set of ids."""
    return isinstance(value, str) and value in keys


_CODEX_CALLS = {"function_call": "function_call", "custom_tool_call": "custom_tool_call", "local_shell_call": "local_shell_call"}


class Codex(Dialect):
    name = "codex"

    def classify(self, value: Any) -> Info:
        info = Info()
        if not isinstance(value, dict):
            return info
        if value.get("type") == "compacted":
            info.kind = "reset"
            return info
        payload = value.get("payload")
        if value.get("type") != "response_item" or not isinstance(payload, dict):
            return info
        kind = payload.get("type")
        if isinstance(kind, str) and kind in _CODEX_CALLS:  # (any JSON value: a list is unhashable)
            call_id = payload.get("call_id") or payload.get("id")
            if isinstance(call_id, str):
                info.kind = "calls"
                info.calls[call_id] = kind
        elif kind == "reasoning" or (kind == "message" and payload.get("role") == "assistant"):
            info.kind = "assistant"
            info.key = REPLY if kind == "message" else None
        elif kind == "message":
            info.kind = "user"
        elif isinstance(kind, str) and kind.endswith("_output") and isinstance(payload.get("call_id"), str):
            info.kind = "results"
            info.results.append(payload["call_id"])
        return info

    def continues(self, turn: Turn, info: Info) -> bool:
        return turn.accepting

    def stub(self, call: Call, text: str, timestamp: Any) -> dict[str, Any]:
        return codex_stub(call.id, call.kind, text, timestamp)

    def without_results(self, value: Any, ids: set[str]) -> Any:
        raise AssertionError("a Codex output line holds one result")  # pragma: no cover
