"""The ``finetune`` format: OpenAI fine-tuning JSONL, one conversation per line,
``{"messages": [...], "tools": [...], ...}``, in and out (formats.md §4).

The other keys are kept untouched. LLaMA-Factory "v1" lines (content parts ``{"type":
"text"|"reasoning"|"tool_call", "value"}``, ``tool`` messages without ids) are converted,
their calls paired with their results by position (``_pairing``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from .._json import dumps as json_dumps
from .._report import Report
from ._common import SplitRecord, count, describe, dumps, invalid
from ._format import Clue, Evidence, Format, Output
from ._pairing import CallText, Pairing, chat_tools, parse_call
from ._writing import FormatWriter, Message, pair

__all__ = ["FinetuneConverter", "FinetuneWriter", "guess", "FORMAT"]


class FinetuneConverter:
    """One fine-tuning line ``{"messages": [...], ...}`` in, that conversation out."""

    name = "finetune"
    multi = True

    def __init__(self, report: Report | None = None) -> None:
        self.report = report
        self._n = 0

    def feed(self, record: Any, *, line: int | None = None) -> list[dict[str, Any]]:
        return self.split(record, line=line).messages

    def close(self) -> list[dict[str, Any]]:
        return []

    def split(self, record: Any, *, line: int | None = None) -> SplitRecord:
        """The conversation's messages (LLaMA-Factory v1 lines converted), and its other keys."""
        messages = record.get("messages") if isinstance(record, dict) else None
        if not isinstance(messages, list):
            raise invalid(f"expected a fine-tuning record {{\"messages\": [...]}}, got {describe(record)}", line=line, field="messages")
        if any(_is_v1(m) for m in messages):
            out = self._v1(messages, line)
            count(self.report, "convert_llamafactory_v1")
        else:
            for i, m in enumerate(messages):
                if not isinstance(m, dict) or not isinstance(m.get("role"), str):
                    raise invalid(f"messages[{i}] is {describe(m)}, expected a chat message", line=line, field=f"messages.{i}")
            out = list(messages)
        self._n += 1
        other = {k: v for k, v in record.items() if k != "messages"}
        if isinstance(other.get("tools"), str):
            other["tools"] = chat_tools(other["tools"], self.report)
        return SplitRecord(messages=out, extra=other)

    def _v1(self, messages: list[Any], line: int | None) -> list[dict[str, Any]]:
        pairing = Pairing(self._n, self.report, line)
        for i, m in enumerate(messages):
            where = f"messages[{i}]"
            if not isinstance(m, dict) or not isinstance(m.get("role"), str):
                raise invalid(f"{where} is {describe(m)}, expected a message", line=line)
            role, content = m["role"], m.get("content")
            extra = {k: v for k, v in m.items() if k not in ("role", "content")}
            texts: list[str] = []
            reasoning: list[str] = []
            calls = _v1_parts(content, line, where, texts, reasoning)
            if role == "assistant":
                pairing.assistant(texts, reasoning, calls, extra)
            elif role == "tool":
                pairing.result("".join(texts), extra)
            else:
                pairing.message(role, "".join(texts), extra)
        return pairing.close()


def _is_v1(message: Any) -> bool:
    content = message.get("content") if isinstance(message, dict) else None
    return isinstance(content, list) and any(isinstance(p, dict) and "value" in p and "text" not in p for p in content)


def _v1_parts(content: Any, line: int | None, where: str, texts: list[str], reasoning: list[str]) -> list[CallText]:
    """A LLaMA-Factory v1 message's content parts: its texts and reasoning appended to the
    lists given (nothing built per message for the sorting); its calls."""
    if isinstance(content, str):
        texts.append(content)
        return []
    if not isinstance(content, list):
        raise invalid(f"{where} content is {describe(content)}", line=line)
    calls: list[CallText] = []
    for part in content:
        if not isinstance(part, dict):
            raise invalid(f"{where} content part is {describe(part)}", line=line)
        kind, value = part.get("type"), part.get("value", part.get("text", ""))
        if kind == "reasoning":
            reasoning.append(value if isinstance(value, str) else dumps(value, line=line, what=f"{where} reasoning"))
        elif kind == "tool_call":
            calls.extend(parse_call(value, line, f"{where} tool_call"))
        else:
            texts.append(value if isinstance(value, str) else dumps(value, line=line, what=f"{where} content"))
    return calls


class FinetuneWriter(FormatWriter):
    """OpenAI fine-tuning JSONL: one conversation per line, ``{"messages": [...], **extra}``.

    Written as it comes, not held: ``begin`` opens the line, each message follows it, and
    ``end`` closes the list and writes the conversation's other keys (known at ``begin``)
    and the newline. The bytes are those of one ``orjson.dumps`` of the whole record
    (:func:`encode_conversation`), and what is held is one message: a conversation of any
    length converts in bounded memory (the line it makes is as long as it is)."""

    name = "finetune"
    multi = True

    def __init__(self) -> None:
        self._tail = b"}\n"
        self._separator = b""
        self.message = self._message

    def begin(self, extra: Mapping[str, Any]) -> bytes:
        # The other keys are written now (an unwritable one fails here, not at the end).
        self._tail = b"".join([b"," + pair(k, v) for k, v in extra.items() if k != "messages"]) + b"}\n"
        self._separator = b""
        return b'{"messages":['

    def _message(self, message: Message) -> bytes:
        try:
            data = orjson.dumps(message)
        except orjson.JSONEncodeError:  # an integer past 64 bits (see .._json), or its error again
            data = json_dumps(message)
        data = self._separator + data
        self._separator = b","
        return data

    def end(self) -> bytes:
        return b"]" + self._tail


def guess(record: dict[str, Any]) -> Clue | None:
    """A record that holds a ``messages`` list."""
    return Clue(Evidence.CONVERSATION) if isinstance(record.get("messages"), list) else None


FORMAT: Format = Format("finetune", FinetuneConverter, guess, outputs=(Output("finetune", 30, FinetuneWriter),), per_line=True, source_fields=False)
