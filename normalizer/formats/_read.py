"""Files in, chat messages (or conversations) out: the readers behind the public API.

Every decision of a read is :class:`~._reader.Reader`'s (sans-I/O). This module opens the
file and pumps it, twice over: :func:`_items` for the sync readers, :func:`_aitems` for the
async ones. Each pump is one generator that does the I/O -- fetch a chunk, or read the file
again for a plan (:func:`_plan` / :func:`_aplan`, the same steps), or take the next record of
an in-memory source (a list of Responses items, OpenAI SDK objects: :func:`_batches`) -- and
hands the reader's events on: messages are yielded, a place (a JSONL line number, or a document's
``DocPlace``) is noted as that of the messages after it, and the rare events go to
:class:`StreamState`, the consumer's side written once. So a message costs the consumer
one loop step and one type test.

:class:`MessageStream` and :class:`ConversationStream` (and their ``Async`` twins) wrap the
pumps with ``.report``, ``.format`` and ``.position`` (where the last message came from).
"""

from __future__ import annotations

import itertools
import os
from contextlib import aclosing
from collections.abc import AsyncGenerator, AsyncIterable, AsyncIterator, Generator, Iterable, Iterator
from typing import Any

from .._errors import InputError
from .._report import Report, new_report
from ._common import without_source
from ._reader import FORMATS, Conversation, Event, Limits, OnInvalid, Reader
from ._records import (
    CHUNK_BYTES,
    DEFAULT_MAX_DEPTH,
    DEFAULT_MAX_LINE_BYTES,
    DEFAULT_MAX_RECORD_BYTES,
    DocPlace,
    Position,
)
from ._database_head import is_database
from ._stream_state import StreamState
from ._source import IN_MEMORY, Source, aopen_source, in_memory, open_source, start_of

__all__ = [
    "FORMATS",
    "Conversation",
    "MessageStream",
    "AsyncMessageStream",
    "ConversationStream",
    "AsyncConversationStream",
    "read_messages",
    "aread_messages",
    "read_conversations",
    "aread_conversations",
    "open_source",
    "aopen_source",
]

# -- the sync pump ----------------------------------------------------------------------------


def _items(source: Source, reader: Reader, state: StreamState) -> Generator[Any, None, None]:
    """Messages (and, unless ``state.expand``, conversations) of a file: the sync pump."""
    for batch in _batches(source, reader, state):
        strip = state.strip_source(reader.format)
        for event in batch:
            if type(event) is dict:
                yield without_source(event) if strip else event
            elif type(event) is int or type(event) is DocPlace:
                state.at = event
            else:
                yield from state.other(event)


def _batches(source: Source, reader: Reader, state: StreamState) -> Generator[list[Event], None, None]:
    """The reader's events, a batch per chunk of the file (or per in-memory record)."""
    if is_database(source):
        yield from _database(source, reader, state)
        return
    if in_memory(source):
        reader.source = state.source = IN_MEMORY
        values = iter(source)  # type: ignore[arg-type]  # in_memory() said it is iterable
        while not reader.done:
            if reader.wants_plan:
                yield reader.set_plan(None)  # records in memory are read once
                continue
            for value in values:
                yield reader.feed_value(value)
                if reader.wants_plan:
                    break
            else:
                yield reader.close()
        return
    opened = open_source(source)
    f = opened.file
    reader.source = state.source = opened.name
    try:
        start = start_of(f)
        while not reader.done:
            if reader.wants_plan:
                yield reader.set_plan(_plan(f, start, reader))
            else:
                chunk = f.read(CHUNK_BYTES)
                yield reader.feed(chunk) if chunk else reader.close()
    finally:
        if opened.owned:
            f.close()


def _database(source: Any, reader: Reader, state: StreamState) -> Generator[list[Event], None, None]:
    """An ``opencode.db`` (SQLite's header, see ``_opencode_db``): its sessions, each one
    conversation, read from SQLite rather than pumped through the reader as bytes."""
    from ._opencode_db import database_conversations  # (sqlite3 loaded only for a database)

    name = os.fspath(source)
    reader.source = state.source = name
    if reader.format not in (None, "opencode"):
        raise InputError(f"this is a SQLite database, not a {reader.format} file", source=name,
                         hint="An opencode.db is read with --from opencode (or --from auto)")
    reader.format = reader.report.format = "opencode"
    reader.container = "sqlite"
    state.several = "; or read one session of it: session=ID (on the command line: --session ID)"
    session = reader.options.get("session")
    for conversation in database_conversations(source, session, reader.report, source=name,
                                               skip=reader.on_invalid == "skip"):
        yield [conversation]
    reader.done = True


def _plan(f: Any, start: int | None, reader: Reader) -> Any:
    """The file read again from its start into the reader's planner (None: it cannot be)."""
    if start is None:
        return None
    here = f.tell()
    f.seek(start)
    try:
        planner = reader.plan_scan()
        while chunk := f.read(CHUNK_BYTES):
            planner.feed(chunk)
        return planner.close()
    finally:
        f.seek(here)


def _conversations(items: Iterator[Any], state: StreamState) -> Generator[Conversation, None, None]:
    for item in items:
        if isinstance(item, Conversation):
            yield item
            continue
        # The first message of a whole-file session: the rest of the stream is its messages.
        messages = itertools.chain((item,), items)
        yield state.main(messages)
        for _ in messages:  # whatever the caller did not read still has to be read past
            pass
        break
    else:
        if state.extra:  # a document with keys but no messages
            yield state.main([])
    yield from state.sidechains()


class _Stream:
    """What a stream of a file says besides its items: the report, the format, and where the
    last message came from."""

    def __init__(self, reader: Reader, *, expand: bool, twin: str) -> None:
        #: Skips and conversion notes; ``report.format`` is the format read.
        self.report = reader.report
        self._reader = reader
        self._state = StreamState(expand=expand, twin=twin, max_record_bytes=reader.limits.max_record_bytes)

    @property
    def format(self) -> str | None:
        """The format read, once known (it is before the first item), else None."""
        return self._reader.format

    @property
    def container(self) -> str | None:
        """How the file holds its records: ``"jsonl"``, ``"array"`` or ``"object"`` (a JSON
        document), once its first bytes are read, else None."""
        return self._reader.container

    @property
    def position(self) -> Position | None:
        """Where the last message yielded came from: its record's JSONL line (column 1), or
        where the record begins in a JSON document; for a message a converter assembled from
        several records, the record that completed it; in a file of several conversations,
        the record of the current conversation. None before the first message."""
        return self._state.position

    def keep_source_fields(self, formats: Iterable[str] | None = None) -> None:
        """Hand the messages out with the fields their reader kept aside for a writer of the
        source format (a Responses item's ``id`` and ``status``, a ``tool_result``'s
        ``is_error``, a Gemini part's ``thoughtSignature``...), under ``source_fields`` on a
        message and on a call, from here on (ask before reading): when the format read is
        one of ``formats`` (None: whatever it is). Not for chat output: no provider knows the
        key. The writers of the source formats ask for them themselves
        (``write_responses(repair(read_messages(f)), ...)``); a list made of the stream has
        none."""
        self._state.keep_from = None if formats is None else frozenset(formats)


class MessageStream(_Stream, Iterator[dict[str, Any]]):
    """The chat messages of a file, one at a time, with ``.report``, ``.format`` and
    ``.position``."""

    def __init__(self, source: Source, reader: Reader) -> None:
        super().__init__(reader, expand=True, twin="read_conversations()")
        self._messages = _items(source, reader, self._state)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        # The generator itself: a for-loop then skips one Python call per message.
        return self._messages

    def __next__(self) -> dict[str, Any]:
        return next(self._messages)

    def close(self) -> None:
        self._messages.close()


class ConversationStream(_Stream, Iterator[Conversation]):
    """The conversations of a file, one at a time (see :func:`read_conversations`), with
    ``.report``, ``.format`` and ``.position``."""

    def __init__(self, source: Source, reader: Reader) -> None:
        super().__init__(reader, expand=False, twin="read_conversations()")
        self._conversations = _conversations(_items(source, reader, self._state), self._state)

    def __iter__(self) -> ConversationStream:
        return self

    def __next__(self) -> Conversation:
        return next(self._conversations)

    def close(self) -> None:
        self._conversations.close()


# -- the async pump ---------------------------------------------------------------------------


async def _aitems(source: Source, reader: Reader, state: StreamState) -> AsyncGenerator[Any, None]:
    """The async twin of :func:`_items`."""
    # Closed here when an event is refused (state.other): an async generator is not closed
    # when it is let go, so the file would stay open until the collector came by.
    async with aclosing(_abatches(source, reader, state)) as batches:
        async for batch in batches:
            strip = state.strip_source(reader.format)
            for event in batch:
                if type(event) is dict:
                    yield without_source(event) if strip else event
                elif type(event) is int or type(event) is DocPlace:
                    state.at = event
                else:
                    for item in state.other(event):
                        yield item


async def _abatches(source: Source, reader: Reader, state: StreamState) -> AsyncGenerator[list[Event], None]:
    """The async twin of :func:`_batches` (an in-memory source may be an async iterable)."""
    if is_database(source):  # SQLite reads it, in this thread (a database is read from a path)
        for batch in _database(source, reader, state):
            yield batch
        return
    if isinstance(source, AsyncIterable) and in_memory(source):
        reader.source = state.source = IN_MEMORY
        async for value in source:
            if reader.wants_plan:
                yield reader.set_plan(None)
            yield reader.feed_value(value)
        while not reader.done:
            yield reader.set_plan(None) if reader.wants_plan else reader.close()
        return
    if in_memory(source):
        for batch in _batches(source, reader, state):
            yield batch
        return
    opened = await aopen_source(source)
    f = opened.file
    reader.source = state.source = opened.name
    try:
        wrapped = getattr(f, "wrapped", None)  # anyio's wrapper of a sync file: seekable maybe
        start = start_of(wrapped) if wrapped is not None else None
        while not reader.done:
            if reader.wants_plan:
                yield reader.set_plan(await _aplan(f, start, reader))
            else:
                chunk = await f.read(CHUNK_BYTES)
                yield reader.feed(chunk) if chunk else reader.close()
    finally:
        if opened.owned:
            await f.aclose()


async def _aplan(f: Any, start: int | None, reader: Reader) -> Any:
    """The async twin of :func:`_plan`."""
    if start is None:
        return None
    here = await f.tell()
    await f.seek(start)
    try:
        planner = reader.plan_scan()
        while chunk := await f.read(CHUNK_BYTES):
            planner.feed(chunk)
        return planner.close()
    finally:
        await f.seek(here)


async def _aconversations(items: AsyncIterator[Any], state: StreamState) -> AsyncGenerator[Conversation, None]:
    """The async twin of :func:`_conversations`."""
    async for item in items:
        if isinstance(item, Conversation):
            yield item
            continue
        messages = _aprepend(item, items)
        yield state.main(messages)
        async for _ in messages:
            pass
        break
    else:
        if state.extra:
            yield state.main([])
    for side in state.sidechains():
        yield side


async def _aprepend(first: Any, rest: AsyncIterator[Any]) -> AsyncGenerator[Any, None]:
    yield first
    async for item in rest:
        yield item


class AsyncMessageStream(_Stream, AsyncIterator[dict[str, Any]]):
    """The async twin of :class:`MessageStream` (``async for``; ``await aclose()``)."""

    def __init__(self, source: Source, reader: Reader) -> None:
        super().__init__(reader, expand=True, twin="aread_conversations()")
        self._messages = _aitems(source, reader, self._state)

    def __aiter__(self) -> AsyncIterator[dict[str, Any]]:
        # The async generator itself: an async for-loop then skips one coroutine per message.
        return self._messages

    async def __anext__(self) -> dict[str, Any]:
        message: dict[str, Any] = await self._messages.__anext__()
        return message

    async def aclose(self) -> None:
        await self._messages.aclose()


class AsyncConversationStream(_Stream, AsyncIterator[Conversation]):
    """The async twin of :class:`ConversationStream`; a whole-file conversation's messages
    are an async iterator here (consume it before asking for the next conversation)."""

    def __init__(self, source: Source, reader: Reader) -> None:
        super().__init__(reader, expand=False, twin="aread_conversations()")
        self._conversations = _aconversations(_aitems(source, reader, self._state), self._state)

    def __aiter__(self) -> AsyncConversationStream:
        return self

    async def __anext__(self) -> Conversation:
        return await self._conversations.__anext__()

    async def aclose(self) -> None:
        await self._conversations.aclose()


# -- the public readers -------------------------------------------------------------------------


def _reader(format: str, report: Report | None, on_invalid: OnInvalid, limits: Limits, options: dict[str, Any]) -> Reader:
    # Made at the call, not at the first next(): wrong arguments fail where they are given.
    return Reader(format, report=report if report is not None else new_report(), on_invalid=on_invalid, limits=limits, options=options)


def read_messages(
    source: Source,
    format: str = "auto",
    *,
    report: Report | None = None,
    on_invalid: OnInvalid = "error",
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    max_depth: int = DEFAULT_MAX_DEPTH,
    max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES,
    **options: Any,
) -> MessageStream:
    """Stream the chat messages of a session or history file, or of records in memory.

    Args:
        source: a path, ``"-"`` for stdin, a binary file object, or records already in
            memory: any iterable of dicts or of objects with ``model_dump`` (a Responses
            ``input`` list, the OpenAI SDK's ``response.output``...), read as a file's
            records would be (``read_messages(items, format="responses")``).
        format: ``"auto"`` (detect from the first records) or a key of :data:`FORMATS`.
        report: where skipped records and conversion notes go (a new one if None); its
            ``format`` is set to the format read.
        on_invalid: ``"error"`` raises on a bad line or record; ``"skip"`` leaves it out and
            records it (``skip_invalid``).
        max_line_bytes: longest JSONL line accepted.
        max_depth: deepest nesting accepted, in a JSONL line or a JSON document (counted
            from its outermost bracket); deeper input raises LimitExceeded where it is read.
        max_record_bytes: largest record of a JSON document, in bytes of the file; also the
            most held for one message assembled from several records (a Claude Code turn and
            its held tool results, a Responses turn or run of bare input parts), in bytes of
            their JSON.
        options: ``keep_meta`` (claude-code), ``base_instructions`` (codex).

    Returns:
        An iterator of message dicts with ``.report``, ``.format`` and ``.position``.

    Raises:
        InputError: bad input (with file, line and column where known), lone surrogate
            escapes included; LimitExceeded for an over-long line, an over-large document
            record, too deep a nesting, or a message assembled from several records past
            max_record_bytes; also for a file of several conversations (use
            :func:`read_conversations`).
        UsageError: an unknown format or option.
    """
    limits = Limits(max_line_bytes, max_depth, max_record_bytes)
    return MessageStream(source, _reader(format, report, on_invalid, limits, options))


def read_conversations(
    source: Source,
    format: str = "auto",
    *,
    report: Report | None = None,
    on_invalid: OnInvalid = "error",
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    max_depth: int = DEFAULT_MAX_DEPTH,
    max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES,
    **options: Any,
) -> ConversationStream:
    """Stream the conversations of a file: one per line of fine-tuning JSONL or ShareGPT
    record, else one for the whole file (plus, with ``keep_sidechains=True`` on a Claude
    Code session, one per sub-agent transcript, after the main one). Each transcript is
    held up to ``max_record_bytes`` while it is read; the finished ones are held until the
    main conversation ends, since they come after it, up to ``max_record_bytes`` all
    together: the transcript that would take them past it is refused with
    :class:`LimitExceeded` at the line it began on.

    Arguments as :func:`read_messages`, plus ``keep_sidechains`` (claude-code). Returns an
    iterator of :class:`Conversation` with ``.report``, ``.format`` and ``.position``.
    """
    limits = Limits(max_line_bytes, max_depth, max_record_bytes)
    return ConversationStream(source, _reader(format, report, on_invalid, limits, options))


def aread_messages(
    source: Source,
    format: str = "auto",
    *,
    report: Report | None = None,
    on_invalid: OnInvalid = "error",
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    max_depth: int = DEFAULT_MAX_DEPTH,
    max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES,
    **options: Any,
) -> AsyncMessageStream:
    """The async twin of :func:`read_messages` (asyncio or trio, through anyio); records in
    memory may also come from an async iterable."""
    limits = Limits(max_line_bytes, max_depth, max_record_bytes)
    return AsyncMessageStream(source, _reader(format, report, on_invalid, limits, options))


def aread_conversations(
    source: Source,
    format: str = "auto",
    *,
    report: Report | None = None,
    on_invalid: OnInvalid = "error",
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    max_depth: int = DEFAULT_MAX_DEPTH,
    max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES,
    **options: Any,
) -> AsyncConversationStream:
    """The async twin of :func:`read_conversations`. A whole-file conversation's messages
    are an async iterator here; consume it before asking for the next conversation."""
    limits = Limits(max_line_bytes, max_depth, max_record_bytes)
    return AsyncConversationStream(source, _reader(format, report, on_invalid, limits, options))
