"""Chat messages out: chat JSONL (the default), a JSON array, fine-tuning JSONL.

Every writer streams: one message (or one conversation, for fine-tuning JSONL) is encoded
at a time with orjson and written in blocks of about :data:`FLUSH_BYTES`, so the output is
never built in memory. A destination is a path, ``"-"`` (stdout) or a binary file object;
a file we open we also close. Each writer returns the number of messages (or conversations)
written.
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterable, Iterable, Mapping
from typing import IO, Any, Literal, Union

import orjson

from .._errors import InvalidMessage

__all__ = [
    "FLUSH_BYTES",
    "WRITERS",
    "write_jsonl",
    "write_json_array",
    "write_finetune",
    "awrite_jsonl",
    "awrite_json_array",
    "awrite_finetune",
    "encode_conversation",
]

#: Bytes gathered before one write (one thread hop in async mode).
FLUSH_BYTES = 256 * 1024

Dest = Union[str, "os.PathLike[str]", IO[bytes], Any]
Kind = Literal["jsonl", "json", "finetune"]

_LINE = orjson.OPT_APPEND_NEWLINE


def _open(dest: Dest) -> tuple[Any, bool]:
    if dest == "-":
        return sys.stdout.buffer, False
    if isinstance(dest, (str, os.PathLike)):
        return open(dest, "wb"), True
    if not hasattr(dest, "write"):
        raise TypeError(f"expected a path, '-' or a binary file object, got {type(dest).__name__}")
    return dest, False


def encode_conversation(messages: Iterable[Mapping[str, Any]], extra: Mapping[str, Any] | None = None) -> bytes:
    """One fine-tuning line: ``{"messages": [...], **extra}`` (other keys as they were)."""
    record: dict[str, Any] = {"messages": list(messages)}
    if extra:
        for key, value in extra.items():
            if key != "messages":
                record[key] = value
    return orjson.dumps(record, option=_LINE)


def _conversation_parts(item: Any) -> tuple[Iterable[Mapping[str, Any]], Mapping[str, Any]]:
    # A Conversation (from the readers), or a (messages, extra) pair.
    if hasattr(item, "messages"):
        return item.messages, getattr(item, "extra", {}) or {}
    messages, extra = item
    return messages, extra or {}


def _unwritable(exc: Exception, index: int) -> InvalidMessage:
    # orjson cannot write a lone surrogate or a value nested past 255 levels; the readers
    # refuse both in files, so only in-memory input reaches here (see the policy in formats._records).
    return InvalidMessage(
        f"cannot be written as JSON ({exc})", index=index,
        hint="a string holds a lone surrogate, or a value is nested too deeply; fix or drop it before writing",
    )


def _chunks(items: Iterable[Any], kind: Kind, counter: list[int]) -> Iterable[bytes]:
    """Encoded output in blocks of about FLUSH_BYTES."""
    try:
        yield from _encoded(items, kind, counter)
    except orjson.JSONEncodeError as exc:
        raise _unwritable(exc, counter[0]) from None


def _encoded(items: Iterable[Any], kind: Kind, counter: list[int]) -> Iterable[bytes]:
    buf = bytearray(b"[" if kind == "json" else b"")
    first = True
    for item in items:
        if kind == "finetune":
            messages, extra = _conversation_parts(item)
            buf += encode_conversation(messages, extra)
        elif kind == "json":
            if not first:
                buf += b","
            buf += b"\n"
            buf += orjson.dumps(item)
        else:
            buf += orjson.dumps(item, option=_LINE)
        first = False
        counter[0] += 1
        if len(buf) >= FLUSH_BYTES:
            yield bytes(buf)
            buf.clear()
    if kind == "json":
        buf += b"]\n" if first else b"\n]\n"
    if buf:
        yield bytes(buf)


def _write(items: Iterable[Any], dest: Dest, kind: Kind) -> int:
    f, owned = _open(dest)
    counter = [0]
    try:
        for chunk in _chunks(items, kind, counter):
            f.write(chunk)
        f.flush()
    finally:
        if owned:
            f.close()
    return counter[0]


def write_jsonl(messages: Iterable[Mapping[str, Any]], dest: Dest) -> int:
    """One chat message per line."""
    return _write(messages, dest, "jsonl")


def write_json_array(messages: Iterable[Mapping[str, Any]], dest: Dest) -> int:
    """A JSON array of chat messages, one per line, streamed."""
    return _write(messages, dest, "json")


def write_finetune(conversations: Iterable[Any], dest: Dest) -> int:
    """One conversation per line, ``{"messages": [...], **extra}``.

    ``conversations`` holds :class:`~normalizer.formats.Conversation` objects or
    ``(messages, extra)`` pairs; ``extra`` (``tools``, ``parallel_tool_calls``...) is written
    back untouched.
    """
    return _write(conversations, dest, "finetune")


#: Output format name -> sync writer (for the CLI's ``--to``).
WRITERS = {"jsonl": write_jsonl, "json": write_json_array, "finetune": write_finetune}


async def _aiter(items: Iterable[Any] | AsyncIterable[Any]) -> Any:
    if isinstance(items, AsyncIterable):
        async for item in items:
            yield item
    else:
        for item in items:
            yield item


async def _awrite(items: Iterable[Any] | AsyncIterable[Any], dest: Dest, kind: Kind) -> int:
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
    count = 0
    buf = bytearray(b"[" if kind == "json" else b"")
    try:
        async for item in _aiter(items):
            if kind == "finetune":
                messages, extra = _conversation_parts(item)
                if isinstance(messages, AsyncIterable):
                    messages = [m async for m in messages]
                buf += encode_conversation(messages, extra)
            elif kind == "json":
                buf += b",\n" if count else b"\n"
                buf += orjson.dumps(item)
            else:
                buf += orjson.dumps(item, option=_LINE)
            count += 1
            if len(buf) >= FLUSH_BYTES:
                await f.write(bytes(buf))
                buf.clear()
        if kind == "json":
            buf += b"\n]\n" if count else b"]\n"
        if buf:
            await f.write(bytes(buf))
        if hasattr(f, "flush"):
            await f.flush()
    except orjson.JSONEncodeError as exc:
        raise _unwritable(exc, count) from None
    finally:
        if owned:
            await f.aclose()
    return count


def _is_async_write(dest: Any) -> bool:
    import inspect

    return inspect.iscoroutinefunction(getattr(dest, "write", None))


async def awrite_jsonl(messages: Iterable[Mapping[str, Any]] | AsyncIterable[Mapping[str, Any]], dest: Dest) -> int:
    """The async twin of :func:`write_jsonl` (takes a sync or async iterable)."""
    return await _awrite(messages, dest, "jsonl")


async def awrite_json_array(messages: Iterable[Mapping[str, Any]] | AsyncIterable[Mapping[str, Any]], dest: Dest) -> int:
    """The async twin of :func:`write_json_array`."""
    return await _awrite(messages, dest, "json")


async def awrite_finetune(conversations: Iterable[Any] | AsyncIterable[Any], dest: Dest) -> int:
    """The async twin of :func:`write_finetune` (a conversation's messages may be async)."""
    return await _awrite(conversations, dest, "finetune")
