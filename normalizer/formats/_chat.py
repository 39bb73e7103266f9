"""The ``chat`` format: Chat Completions messages, in and out (formats.md §4).

Read as they are (the core validates and repairs them): a JSON array, JSONL, or an object
with ``messages`` (a request body, a hermes request dump or session snapshot, whose
``system_prompt`` becomes the leading system message). Written as chat JSONL (``--to
jsonl``) or one JSON array (``--to json``), or the object it was read from.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

import orjson

from .._errors import UsageError
from .._json import dumps
from .._report import Report
from ._common import describe, invalid, note_extra
from ._format import Clue, DocumentKeys, Evidence, Format, Output
from ._writing import LINE, Container, FormatWriter, Layout, Message

__all__ = ["ChatConverter", "JsonlWriter", "JsonArrayWriter", "guess", "FORMAT"]


class ChatConverter:
    """Chat Completions messages in, the same messages out (validation is the core's job)."""

    name = "chat"
    multi = False

    def __init__(self, report: Report | None = None) -> None:
        self.report = report
        self._started = False

    def meta(self, key: str, value: Any, *, line: int | None = None) -> list[dict[str, Any]]:
        # hermes session snapshots keep the system prompt next to the messages (§3.3).
        if key == "system_prompt" and isinstance(value, str) and value:
            if self._started:
                note_extra(self.report, "drop_late_system", "'system_prompt' came after the messages already read (from "
                           "a stream, the messages are held only up to max_record_bytes: read the file itself to "
                           "place it first)", line=line, dropped=value)
                return []
            return [{"role": "system", "content": value}]
        return []

    def feed(self, record: Any, *, line: int | None = None) -> list[dict[str, Any]]:
        if not isinstance(record, dict) or not isinstance(record.get("role"), str):
            raise invalid(
                f"expected a chat message {{role, content}}, got {describe(record)}",
                line=line,
                field="role",
                hint="Is this a chat history? Try another --from format",
            )
        self._started = True
        return [record]

    def close(self) -> list[dict[str, Any]]:
        return []


# -- writing ------------------------------------------------------------------------------------


class JsonlWriter(FormatWriter):
    """Chat JSONL: one message per line."""

    name = "jsonl"

    def __init__(self) -> None:
        self.message = functools.partial(orjson.dumps, option=LINE)
        self.again = functools.partial(dumps, option=LINE)


class JsonArrayWriter(FormatWriter):
    """One JSON array of chat messages, one per line: ``[``, then ``\\n`` + message and
    ``,\\n`` + message..., then ``\\n]`` (``[]`` when empty).

    ``container="object"`` writes the conversation's other keys around the array, as
    ``{..., "messages": [...], ...}``: a request body or a hermes session snapshot written
    back as it was. A snapshot's ``system_prompt``, which the reader made the first message,
    goes back to its key.
    """

    name = "json"

    def __init__(self, *, container: Container = "array") -> None:
        if container == "lines":
            raise UsageError("chat messages one per line are --to jsonl")
        self._layout = Layout(container, "messages")
        self._extra: Mapping[str, Any] = {}
        self._values: dict[str, Any] = {}
        self.message = self._layout.record if container == "array" else self._message

    def begin(self, extra: Mapping[str, Any]) -> bytes:
        if self._layout.container == "array":
            return self._layout.open({}, extra)
        self._extra = extra  # the object opens at the first message (see _message)
        return b""

    def _message(self, message: Message) -> bytes:
        if self._layout.opened:
            return self._layout.record(message)
        prompt = self._extra.get("system_prompt")
        if message.get("role") == "system" and isinstance(prompt, str) and prompt and not self._values:
            # the snapshot's system_prompt, which the reader made the first message; the object
            # opens at the next one (the snapshot's keys before its messages are known then)
            self._values = {"system_prompt": message.get("content")}
            return b""
        return self._layout.open(self._values, self._extra) + self._layout.record(message)

    def end(self) -> bytes:
        opened = b"" if self._layout.opened else self._layout.open(self._values, self._extra)
        return opened + self._layout.close()

    def finish(self) -> bytes:
        return self._layout.empty()


# -- the format -----------------------------------------------------------------------------------

def guess(record: dict[str, Any]) -> Clue | None:
    """A message with a string ``role``; a tool message, or one with calls, settles it (a
    plain ``{"role", "content"}`` could be Anthropic or Responses too: a weak guess)."""
    role = record.get("role")
    if not isinstance(role, str):
        return None
    return Clue(Evidence.ROLE, role == "tool" or "tool_calls" in record or "tool_call_id" in record)


FORMAT: Format = Format(
    "chat", ChatConverter, guess,
    outputs=(Output("jsonl", 10, JsonlWriter), Output("json", 20, JsonArrayWriter)),
    per_file=True, plain_records=True, source_fields=False,
    document=DocumentKeys(arrays=("messages",), dumped=True, system_keys=("system_prompt",), body_keys=("system_prompt",)),
)
