"""Chat messages in, bytes out: the output formats, as encoders (sans-I/O).

Each output format is an :class:`Encoder` in the :data:`ENCODERS` table, keyed by its name
(the CLI's ``--to``). An encoder turns one run of output into bytes, and does no I/O: the
library's writers (``_writers``) and the command line (``cli._repair``) only gather what it
returns and write it in blocks of :data:`FLUSH_BYTES`. A run is::

    start()                                  once
      begin(extra)                           per conversation (its other keys)
        message(m)                           per message (b"" when the encoder holds it)
      end()                                  per conversation
    finish()                                 once

``message`` is an attribute, not a method, so that the chat JSONL encoder's is orjson's
own ``dumps`` (through ``functools.partial``): the per-message path of the CLI pays one C
call, no Python frame. An encoder that holds ``multi`` is one conversation per record
(fine-tuning JSONL); the others hold one conversation, and a second is refused by whoever
pumps them.

orjson cannot write a lone surrogate or a value nested past 255 levels (the readers refuse
both in files, so only in-memory input gets here): pumps turn its error into an
:class:`InvalidMessage` naming the item with :func:`unwritable`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping
from typing import Any, ClassVar

import orjson

from .._errors import InvalidMessage

__all__ = [
    "FLUSH_BYTES",
    "ENCODERS",
    "Encoder",
    "JsonlEncoder",
    "JsonArrayEncoder",
    "FinetuneEncoder",
    "encode_conversation",
    "unwritable",
]

#: Output bytes gathered before one write (one thread hop in async mode, one progress update
#: on the command line): large enough to amortise both, small enough not to matter for memory.
FLUSH_BYTES = 256 * 1024

_LINE = orjson.OPT_APPEND_NEWLINE

Message = Mapping[str, Any]


class Encoder:
    """One output format: messages in, bytes out, no I/O (see the module docstring)."""

    #: The name in :data:`ENCODERS` (and ``--to``).
    name: ClassVar[str]
    #: One conversation per record (fine-tuning JSONL): several conversations can be written.
    multi: ClassVar[bool] = False
    #: One message to bytes (``b""`` while the encoder holds it).
    message: Callable[[Message], bytes]

    def start(self) -> bytes:
        return b""

    def begin(self, extra: Mapping[str, Any]) -> bytes:
        return b""

    def end(self) -> bytes:
        return b""

    def finish(self) -> bytes:
        return b""


class JsonlEncoder(Encoder):
    """Chat JSONL: one message per line."""

    name = "jsonl"

    def __init__(self) -> None:
        self.message = functools.partial(orjson.dumps, option=_LINE)


class JsonArrayEncoder(Encoder):
    """One JSON array of chat messages, one per line: ``[``, then ``\\n`` + message and
    ``,\\n`` + message..., then ``\\n]`` (``[]`` when empty)."""

    name = "json"

    def __init__(self) -> None:
        self._separator = b"\n"  # before the first message; ",\n" before each of the others
        self.message = self._message

    def start(self) -> bytes:
        return b"["

    def _message(self, message: Message) -> bytes:
        data = self._separator + orjson.dumps(message)
        self._separator = b",\n"
        return data

    def finish(self) -> bytes:
        return b"]\n" if self._separator == b"\n" else b"\n]\n"


class FinetuneEncoder(Encoder):
    """OpenAI fine-tuning JSONL: one conversation per line, ``{"messages": [...], **extra}``.
    A conversation is held whole until it ends (one line is one JSON value)."""

    name = "finetune"
    multi = True

    def __init__(self) -> None:
        self._messages: list[Message] = []
        self._extra: Mapping[str, Any] = {}
        self.message = self._message

    def begin(self, extra: Mapping[str, Any]) -> bytes:
        self._messages, self._extra = [], extra
        return b""

    def _message(self, message: Message) -> bytes:
        self._messages.append(message)
        return b""

    def end(self) -> bytes:
        messages, self._messages = self._messages, []
        return encode_conversation(messages, self._extra)


#: Output format name -> encoder class (a new encoder per output).
ENCODERS: dict[str, type[Encoder]] = {
    JsonlEncoder.name: JsonlEncoder,
    JsonArrayEncoder.name: JsonArrayEncoder,
    FinetuneEncoder.name: FinetuneEncoder,
}


def encode_conversation(messages: Iterable[Message], extra: Mapping[str, Any] | None = None) -> bytes:
    """One fine-tuning line: ``{"messages": [...], **extra}`` (other keys as they were)."""
    record: dict[str, Any] = {"messages": list(messages)}
    if extra:
        for key, value in extra.items():
            if key != "messages":
                record[key] = value
    return orjson.dumps(record, option=_LINE)


def unwritable(exc: Exception, index: int) -> InvalidMessage:
    """orjson's refusal of item ``index`` (a message, or a conversation) as an input error."""
    return InvalidMessage(
        f"cannot be written as JSON ({exc})", index=index,
        hint="a string holds a lone surrogate, or a value is nested too deeply; fix or drop it before writing",
    )
