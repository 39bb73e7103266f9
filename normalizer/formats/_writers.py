"""Chat messages out: chat JSONL (the default), a JSON array, fine-tuning JSONL, OpenAI
Responses input items, Anthropic Messages.

Every writer streams: what an encoder of ``_registry.ENCODERS`` makes of one message (or one
conversation, for fine-tuning JSONL) is gathered and written in blocks of about
:data:`FLUSH_BYTES`, so the output is never built in memory. The encoders hold every rule of
the formats; :func:`_pump` and :func:`_apump` only pump, sync and async. A destination is a
path, ``"-"`` (stdout) or a binary file object; a file we open we also close. Each writer
returns the number of messages (or conversations) written.
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable, Mapping
from typing import IO, Any, Union

import orjson

from .._errors import InvalidMessage
from ._anthropic_writer import AnthropicWriter
from ._registry import ENCODERS
from ._responses_writer import ResponsesWriter
from ._source import Opened
from ._writing import FLUSH_BYTES, Container, FormatWriter, ask_source_fields, encode_conversation, unwritable

__all__ = [
    "FLUSH_BYTES",
    "WRITERS",
    "write_jsonl",
    "write_json_array",
    "write_finetune",
    "write_responses",
    "write_anthropic",
    "awrite_jsonl",
    "awrite_json_array",
    "awrite_finetune",
    "awrite_responses",
    "awrite_anthropic",
    "encode_conversation",
]

Dest = Union[str, "os.PathLike[str]", IO[bytes], Any]
# A run of output: (messages, extra) per conversation; one for the message writers.
Pairs = Iterable[tuple[Any, Mapping[str, Any]]]


def open_dest(dest: Dest) -> Opened[Any]:
    """The binary file to write ``dest`` to (``-``: standard output), its name, and whether
    it was opened here, so that the writer closes it (:class:`Opened`)."""
    if dest == "-":
        return Opened(sys.stdout.buffer, "<stdout>", owned=False)
    if isinstance(dest, (str, os.PathLike)):
        return Opened(open(dest, "wb"), os.fspath(dest), owned=True)
    if not hasattr(dest, "write"):
        raise TypeError(f"expected a path, '-' or a binary file object, got {type(dest).__name__}")
    return Opened(dest, str(getattr(dest, "name", "<file>")), owned=False)


def _conversation_parts(item: Any) -> tuple[Any, Mapping[str, Any]]:
    # A Conversation (from the readers), or a (messages, extra) pair.
    if hasattr(item, "messages"):
        return item.messages, getattr(item, "extra", {}) or {}
    messages, extra = item
    return messages, extra or {}


def _pump(f: Any, conversations: Pairs, encoder: FormatWriter, per_message: bool) -> int:
    """Encode a run into ``f`` in blocks; returns the messages written (``per_message``), else
    the conversations."""
    messages_done = conversations_done = 0
    buf = bytearray(encoder.start())
    message, refused = encoder.message, encoder.refused
    try:
        for messages, extra in conversations:
            if encoder.restores_from:
                ask_source_fields(messages, encoder.restores_from)
            buf += encoder.begin(extra)
            for m in messages:
                try:
                    buf += message(m)
                except orjson.JSONEncodeError as exc:
                    buf += refused(m, exc)  # an integer past 64 bits (see FormatWriter.again)
                messages_done += 1
                if len(buf) >= FLUSH_BYTES:
                    f.write(bytes(buf))
                    buf.clear()
            buf += encoder.end()
            conversations_done += 1
            if len(buf) >= FLUSH_BYTES:
                f.write(bytes(buf))
                buf.clear()
        buf += encoder.finish()
    except orjson.JSONEncodeError as exc:
        raise unwritable(exc, messages_done if per_message else conversations_done) from None
    except InvalidMessage as exc:
        raise _placed(exc, messages_done if per_message else conversations_done) from None
    if buf:
        f.write(bytes(buf))
    return messages_done if per_message else conversations_done


def _placed(exc: InvalidMessage, index: int) -> InvalidMessage:
    """An encoder's refusal of the message at ``index`` (encoders do not count messages)."""
    if exc.index is None:
        exc.index = index
        exc.located()
    return exc


def _write(conversations: Pairs, dest: Dest, kind: str | FormatWriter, per_message: bool) -> int:
    opened = open_dest(dest)
    try:
        count = _pump(opened.file, conversations, ENCODERS[kind]() if isinstance(kind, str) else kind, per_message)
        opened.file.flush()
    finally:
        if opened.owned:
            opened.file.close()
    return count


def write_jsonl(messages: Iterable[Mapping[str, Any]], dest: Dest) -> int:
    """One chat message per line."""
    return _write([(messages, {})], dest, "jsonl", True)


def write_json_array(messages: Iterable[Mapping[str, Any]], dest: Dest) -> int:
    """A JSON array of chat messages, one per line, streamed."""
    return _write([(messages, {})], dest, "json", True)


def write_finetune(conversations: Iterable[Any], dest: Dest) -> int:
    """One conversation per line, ``{"messages": [...], **extra}``.

    ``conversations`` holds :class:`~normalizer.formats.Conversation` objects or
    ``(messages, extra)`` pairs; ``extra`` (``tools``, ``parallel_tool_calls``...) is written
    back untouched.
    """
    return _write(map(_conversation_parts, conversations), dest, "finetune", False)


def write_responses(messages: Iterable[Mapping[str, Any]], dest: Dest, *, container: Container = "array") -> int:
    """OpenAI Responses input items (what an OpenAI Agents SDK session stores), one per line
    of a JSON array (``container="lines"``: JSONL); see :class:`~._responses_writer.ResponsesWriter`.
    Returns the number of chat messages written."""
    return _write([(messages, {})], dest, ResponsesWriter(container=container), True)


def write_anthropic(messages: Iterable[Mapping[str, Any]], dest: Dest, *, container: Container = "object") -> int:
    """An Anthropic Messages request, ``{"system": ..., "messages": [...]}`` (``container=
    "array"``: the messages list alone); see :class:`~._anthropic_writer.AnthropicWriter`. Returns
    the number of chat messages written."""
    return _write([(messages, {})], dest, AnthropicWriter(container=container), True)


def _writer_of(name: str) -> Callable[..., int]:
    """The sync writer of an output format that has no function of its own here: its
    messages (or, for one conversation per record, its conversations) into ``dest``."""
    if ENCODERS[name].multi:
        def write_conversations(conversations: Iterable[Any], dest: Dest) -> int:
            return _write(map(_conversation_parts, conversations), dest, name, False)

        return write_conversations

    def write_messages(messages: Iterable[Mapping[str, Any]], dest: Dest) -> int:
        return _write([(messages, {})], dest, name, True)

    return write_messages


_OWN_WRITERS: dict[str, Callable[..., int]] = {
    "jsonl": write_jsonl, "json": write_json_array, "finetune": write_finetune,
    "responses": write_responses, "anthropic": write_anthropic,
}

#: Output format name -> sync writer (for the CLI's ``--to``): one for every encoder of the
#: registry, in its order (the public ``write_*`` function where there is one).
WRITERS: dict[str, Callable[..., int]] = {name: _OWN_WRITERS.get(name) or _writer_of(name) for name in ENCODERS}


async def _aiter(items: Iterable[Any] | AsyncIterable[Any]) -> AsyncIterator[Any]:
    if isinstance(items, AsyncIterable):
        async for item in items:
            yield item
    else:
        for item in items:
            yield item


async def _apump(f: Any, conversations: AsyncIterator[tuple[Any, Mapping[str, Any]]], encoder: FormatWriter, per_message: bool) -> int:
    """The async twin of :func:`_pump` (a conversation's messages may be an async iterable)."""
    messages_done = conversations_done = 0
    buf = bytearray(encoder.start())
    message, refused = encoder.message, encoder.refused
    try:
        async for messages, extra in conversations:
            if encoder.restores_from:
                ask_source_fields(messages, encoder.restores_from)
            buf += encoder.begin(extra)
            async for m in _aiter(messages):
                try:
                    buf += message(m)
                except orjson.JSONEncodeError as exc:
                    buf += refused(m, exc)  # an integer past 64 bits (see FormatWriter.again)
                messages_done += 1
                if len(buf) >= FLUSH_BYTES:
                    await f.write(bytes(buf))
                    buf.clear()
            buf += encoder.end()
            conversations_done += 1
            if len(buf) >= FLUSH_BYTES:
                await f.write(bytes(buf))
                buf.clear()
        buf += encoder.finish()
    except orjson.JSONEncodeError as exc:
        raise unwritable(exc, messages_done if per_message else conversations_done) from None
    except InvalidMessage as exc:
        raise _placed(exc, messages_done if per_message else conversations_done) from None
    if buf:
        await f.write(bytes(buf))
    return messages_done if per_message else conversations_done


async def _awrite(conversations: AsyncIterator[tuple[Any, Mapping[str, Any]]], dest: Dest, kind: str | FormatWriter, per_message: bool) -> int:
    import anyio

    f: Any
    if dest == "-":
        f, owned = anyio.wrap_file(sys.stdout.buffer), False
    elif isinstance(dest, (str, os.PathLike)):
        f, owned = await anyio.open_file(dest, "wb"), True
    elif hasattr(dest, "write") and not hasattr(dest, "wrapped") and not _is_async_write(dest):
        f, owned = anyio.wrap_file(dest), False
    else:
        f, owned = dest, False
    try:
        count = await _apump(f, conversations, ENCODERS[kind]() if isinstance(kind, str) else kind, per_message)
        if hasattr(f, "flush"):
            await f.flush()
    finally:
        if owned:
            await f.aclose()
    return count


async def _one(messages: Any) -> AsyncIterator[tuple[Any, Mapping[str, Any]]]:
    yield messages, {}


async def _pairs(conversations: Iterable[Any] | AsyncIterable[Any]) -> AsyncIterator[tuple[Any, Mapping[str, Any]]]:
    async for item in _aiter(conversations):
        yield _conversation_parts(item)


def _is_async_write(dest: Any) -> bool:
    import inspect

    return inspect.iscoroutinefunction(getattr(dest, "write", None))


async def awrite_jsonl(messages: Iterable[Mapping[str, Any]] | AsyncIterable[Mapping[str, Any]], dest: Dest) -> int:
    """The async twin of :func:`write_jsonl` (takes a sync or async iterable)."""
    return await _awrite(_one(messages), dest, "jsonl", True)


async def awrite_json_array(messages: Iterable[Mapping[str, Any]] | AsyncIterable[Mapping[str, Any]], dest: Dest) -> int:
    """The async twin of :func:`write_json_array`."""
    return await _awrite(_one(messages), dest, "json", True)


async def awrite_finetune(conversations: Iterable[Any] | AsyncIterable[Any], dest: Dest) -> int:
    """The async twin of :func:`write_finetune` (a conversation's messages may be async)."""
    return await _awrite(_pairs(conversations), dest, "finetune", False)


async def awrite_responses(
    messages: Iterable[Mapping[str, Any]] | AsyncIterable[Mapping[str, Any]], dest: Dest, *, container: Container = "array"
) -> int:
    """The async twin of :func:`write_responses`."""
    return await _awrite(_one(messages), dest, ResponsesWriter(container=container), True)


async def awrite_anthropic(
    messages: Iterable[Mapping[str, Any]] | AsyncIterable[Mapping[str, Any]], dest: Dest, *, container: Container = "object"
) -> int:
    """The async twin of :func:`write_anthropic`."""
    return await _awrite(_one(messages), dest, AnthropicWriter(container=container), True)
