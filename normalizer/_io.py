"""Record sources: decoded JSON values with their position, read from files as a stream.

Two containers are read, both in constant memory:

* **JSONL**: one JSON value per line, split from fixed-size chunks (so a 2 GB line is never
  read whole: past ``max_line_bytes`` it is refused with :class:`LimitExceeded`) and decoded
  with orjson. Errors name ``file:line:column``.
* **A JSON document**: an array of records, or an object whose ``messages`` / ``input`` array
  (also under ``request.body``, as in hermes request dumps) is the record stream; parsed
  incrementally with ijson. The object's other keys come out as ``meta`` events.

Which one a file is comes from its first bytes (:func:`sniff`): ``[`` is a document; ``{``
is JSONL when its first line is a complete JSON value, else a (pretty-printed) document.
A UTF-8 byte order mark is skipped. The sync and async readers share every decision; they
differ only in how bytes are fetched.
"""

from __future__ import annotations

import io
import os
import sys
from collections.abc import AsyncIterator, Iterator
from typing import IO, Any, Literal, Union

import ijson
import orjson

from ._errors import InputError, InvalidMessage, LimitExceeded
from ._report import Report

__all__ = [
    "DEFAULT_MAX_LINE_BYTES",
    "CHUNK_BYTES",
    "Record",
    "Source",
    "LineSplitter",
    "decode_line",
    "open_source",
    "aopen_source",
    "iter_records",
    "aiter_records",
    "iter_raw_lines",
    "aiter_raw_lines",
]

#: Longest JSONL line accepted, in bytes (64 MiB). A real session line is a few KB to a few
#: MB (a big tool output); a longer one is far more likely a corrupt or hostile file than
#: data, and holding it would break the constant-memory promise. Pass ``max_line_bytes``
#: to change it.
DEFAULT_MAX_LINE_BYTES = 64 * 1024 * 1024

#: Bytes fetched per read. Large enough that the per-call cost (a thread hop in async mode)
#: is amortised over hundreds of lines; small enough not to matter for memory.
CHUNK_BYTES = 256 * 1024

BOM = b"\xef\xbb\xbf"

Source = Union[str, "os.PathLike[str]", IO[bytes], Any]
OnInvalid = Literal["error", "skip"]

#: ``(kind, value, line, index)``: kind is ``"record"`` (an element of the stream) or
#: ``"meta"`` (``value`` is ``(key, value)`` of a document's other top-level keys). ``line``
#: is 1-based for JSONL, None in documents; ``index`` is the 0-based record number.
Record = tuple[str, Any, Union[int, None], int]


# -- opening ----------------------------------------------------------------------------------


def _name(source: Any) -> str:
    if source == "-":
        return "<stdin>"
    if isinstance(source, (str, os.PathLike)):
        return os.fspath(source)
    name = getattr(source, "name", None)
    return name if isinstance(name, str) else "<stream>"


def open_source(source: Source) -> tuple[IO[bytes], str, bool]:
    """``(binary file, display name, whether we opened it and must close it)``."""
    if source == "-":
        return sys.stdin.buffer, "<stdin>", False
    if isinstance(source, (str, os.PathLike)):
        try:
            return open(source, "rb"), _name(source), True
        except OSError as exc:
            raise InputError(f"cannot open: {exc.strerror}", source=_name(source)) from None
    if not hasattr(source, "read"):
        raise TypeError(f"expected a path, '-' or a binary file object, got {type(source).__name__}")
    if isinstance(source, io.TextIOBase):
        raise TypeError("open the file in binary mode ('rb'): lines are decoded as UTF-8 here")
    return source, _name(source), False


async def aopen_source(source: Source) -> tuple[Any, str, bool]:
    """The async twin of :func:`open_source`: an object with ``async read(n)``."""
    import anyio

    if source == "-":
        return anyio.wrap_file(sys.stdin.buffer), "<stdin>", False
    if isinstance(source, (str, os.PathLike)):
        try:
            return await anyio.open_file(source, "rb"), _name(source), True
        except OSError as exc:
            raise InputError(f"cannot open: {exc.strerror}", source=_name(source)) from None
    read = getattr(source, "read", None)
    if read is None:
        raise TypeError(f"expected a path, '-' or a binary file object, got {type(source).__name__}")
    import inspect

    if inspect.iscoroutinefunction(read):
        return source, _name(source), False
    return anyio.wrap_file(source), _name(source), False  # a sync file: reads run in a thread


# -- JSONL ------------------------------------------------------------------------------------


class LineSplitter:
    """Bytes in, complete lines out (sans-I/O). Refuses lines longer than ``max_line_bytes``
    as soon as they get that long, without holding more than that."""

    def __init__(self, *, source: str, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> None:
        self.source = source
        self.max_line_bytes = max_line_bytes
        self.line = 0  # number of the last line handed out
        self._pending: list[bytes] = []
        self._pending_len = 0

    def feed(self, chunk: bytes) -> list[tuple[int, bytes]]:
        if b"\n" not in chunk:
            self._hold(chunk)
            return []
        pieces = chunk.split(b"\n")
        rest = pieces.pop()
        if self._pending:
            pieces[0] = b"".join(self._pending) + pieces[0]
            self._pending, self._pending_len = [], 0
        out = []
        for piece in pieces:
            self.line += 1
            if len(piece) > self.max_line_bytes:
                raise self._too_long(self.line)
            out.append((self.line, piece))
        self._hold(rest)
        return out

    def close(self) -> list[tuple[int, bytes]]:
        if not self._pending:
            return []
        self.line += 1
        last = b"".join(self._pending)
        self._pending, self._pending_len = [], 0
        return [(self.line, last)]

    def _hold(self, piece: bytes) -> None:
        if not piece:
            return
        self._pending.append(piece)
        self._pending_len += len(piece)
        if self._pending_len > self.max_line_bytes:
            raise self._too_long(self.line + 1)

    def _too_long(self, line: int) -> LimitExceeded:
        return LimitExceeded(
            f"line is longer than {self.max_line_bytes} bytes",
            limit="max_line_bytes",
            value=self.max_line_bytes,
            source=self.source,
            line=line,
            hint="Raise max_line_bytes if the line is genuine (is this really a JSONL file?)",
        )


def decode_line(raw: bytes, *, source: str, line: int) -> Any:
    """One JSONL line to a JSON value, or :class:`InvalidMessage` at ``source:line:column``."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as bad:
            # orjson reports invalid UTF-8 at column 1; find the real position ourselves.
            column = len(raw[: bad.start].decode("utf-8", "replace")) + 1
            raise InvalidMessage(
                f"not UTF-8 text (byte 0x{raw[bad.start]:02x})",
                source=source,
                line=line,
                column=column,
                hint="Session files are UTF-8; re-encode the file",
            ) from None
        # One line is one document, so orjson's column (in characters) is the line's column.
        raise InvalidMessage(
            f"not JSON: {exc.msg}",
            source=source,
            line=line,
            column=exc.colno,
            hint="Each line of a JSONL file must be one complete JSON value",
        ) from None


def _skip_or_raise(exc: InputError, raw: Any, line: int | None, on_invalid: OnInvalid, report: Report | None) -> None:
    if on_invalid != "skip":
        raise exc
    if report is not None:
        report.add("skip_invalid", str(exc), line=line, dropped=raw)


def _jsonl_records(
    lines: list[tuple[int, bytes]], index: int, source: str, on_invalid: OnInvalid, report: Report | None
) -> tuple[list[Record], int]:
    out: list[Record] = []
    for line, raw in lines:
        if line == 1 and raw.startswith(BOM):
            raw = raw[3:]
        if not raw or raw.isspace():
            continue  # blank lines (and a trailing newline) carry nothing (isspace: no copy)
        try:
            value = decode_line(raw, source=source, line=line)
        except InvalidMessage as exc:
            _skip_or_raise(exc, raw.decode("utf-8", "backslashreplace"), line, on_invalid, report)
            continue
        out.append(("record", value, line, index))
        index += 1
    return out, index


# -- sniffing ---------------------------------------------------------------------------------


def sniff(head: bytes, at_eof: bool) -> Literal["jsonl", "document", "empty", "more"]:
    """Which container the bytes read so far show (``"more"``: read on)."""
    if head.startswith(BOM):
        head = head[3:]
    text = head.lstrip()
    if not text:
        return "empty" if at_eof else "more"
    if text[:1] == b"[":
        return "document"
    if text[:1] != b"{":
        return "jsonl"  # not a document we know: let the line reader say what is wrong
    end = text.find(b"\n")
    if end < 0 and not at_eof:
        return "more"
    first = text if end < 0 else text[:end]
    try:
        value = orjson.loads(first)
    except orjson.JSONDecodeError as exc:
        # Cut short at the end of the line: an object that continues on the next lines.
        if exc.pos >= len(first.decode("utf-8", "replace").rstrip()) and end >= 0:
            return "document"
        return "jsonl"
    if isinstance(value, dict) and not value.keys().isdisjoint(_REQUEST_KEYS):
        # A request body or dump written on one line: a document, if nothing follows it.
        rest = text[len(first):].strip()
        if rest:
            return "jsonl"
        return "document" if at_eof else "more"
    return "jsonl"


# Top-level keys of request bodies and dumps (whose messages sit beside other fields).
_REQUEST_KEYS = frozenset({"request", "body", "input", "system", "system_prompt"})


class _Sniffer:
    """Reads the head of a file until :func:`sniff` can tell; joins chunks only when needed
    (at a newline or the end), so a long first line costs no quadratic copying."""

    def __init__(self, max_line_bytes: int) -> None:
        self.max_line_bytes = max_line_bytes
        self._parts: list[bytes] = []
        self._size = 0
        self.head = b""

    def feed(self, chunk: bytes) -> str:
        self._parts.append(chunk)
        self._size += len(chunk)
        if chunk and b"\n" not in chunk and self._size > 2 * CHUNK_BYTES:
            if self._size > self.max_line_bytes:
                self.head = b"".join(self._parts)
                return "jsonl"  # the line splitter refuses the line, with its position
            return "auto"
        self.head = b"".join(self._parts)
        self._parts = [self.head]
        kind = sniff(self.head, at_eof=not chunk)
        return "auto" if kind == "more" else kind


# -- JSON documents ---------------------------------------------------------------------------

# Arrays that hold the record stream, by ijson prefix, and objects we descend into to find one.
_STREAMS = {"messages", "input", "request.body.messages", "request.body.input", "body.messages", "body.input"}
_DESCEND = {"", "request", "request.body", "body"}


class DocWalker:
    """ijson events in, records and meta values out (sans-I/O), building one value at a time."""

    def __init__(self) -> None:
        self.index = 0
        self.stream: str | None = None  # prefix of the array being streamed
        self.streamed = False
        self.top: dict[str, Any] = {}  # a document with no stream array is one record
        self._builder: Any = None
        self._depth = 0
        self._target: str | None = None  # None: building a stream item; else a meta key

    def event(self, prefix: str, ev: str, value: Any) -> list[Record]:
        if self._builder is not None:
            self._builder.event(ev, value)
            if ev in ("start_map", "start_array"):
                self._depth += 1
            elif ev in ("end_map", "end_array"):
                self._depth -= 1
            if self._depth == 0:
                return self._done(self._builder.value)
            return []
        if self.stream is not None:
            if ev == "end_array" and prefix == self.stream:
                self.stream = None
                return []
            return self._start(ev, value, None)
        if ev == "start_array" and (prefix in _STREAMS or (prefix == "" and not self.top)):
            self.stream = prefix
            self.streamed = True
            return []
        if ev == "start_map" and prefix in _DESCEND:
            return []
        if ev in ("map_key", "end_map") and prefix in _DESCEND:
            return []
        return self._start(ev, value, prefix)

    def _start(self, ev: str, value: Any, target: str | None) -> list[Record]:
        self._target = target
        if ev in ("start_map", "start_array"):
            self._builder = ijson.ObjectBuilder()
            self._builder.event(ev, value)
            self._depth = 1
            return []
        return self._done(value)

    def _done(self, value: Any) -> list[Record]:
        self._builder = None
        if self._target is None:
            self.index += 1
            return [("record", value, None, self.index - 1)]
        if "." not in self._target:
            self.top[self._target] = value
        return [("meta", (self._target, value), None, self.index)]

    def end(self) -> list[Record]:
        """At the end of the document: an object with no stream array is itself one record."""
        if not self.streamed and self.top:
            return [("record", dict(self.top), None, 0)]
        return []


def _doc_error(exc: Exception, source: str, walker: DocWalker) -> InputError:
    text = str(exc)
    if isinstance(exc, ijson.IncompleteJSONError) and ("premature EOF" in text or "incomplete" in text.lower()):
        return InputError(
            f"the JSON document ends too early (after record {walker.index}): {text}",
            source=source,
            hint="The file looks truncated; repair or re-export it, or convert it to JSONL",
        )
    return InputError(f"not valid JSON (after record {walker.index}): {text.strip()}", source=source, hint="Check the file is one JSON array or object")


class DocReader:
    """Bytes of a JSON document in, records out (sans-I/O), through ijson's push parser.

    ijson's own async functions are asyncio-only with its C backend; pushing chunks into
    ``parse_coro`` works the same under any event loop, and for the sync reader too.
    """

    def __init__(self, source: str) -> None:
        self.source = source
        self.walker = DocWalker()
        self._events = ijson.sendable_list()
        self._coro = ijson.parse_coro(self._events, use_float=True)

    def feed(self, chunk: bytes) -> list[Record]:
        try:
            self._coro.send(chunk)
        except ijson.JSONError as exc:
            raise _doc_error(exc, self.source, self.walker) from None
        return self._drain()

    def close(self) -> list[Record]:
        try:
            self._coro.close()
        except ijson.JSONError as exc:
            raise _doc_error(exc, self.source, self.walker) from None
        out = self._drain()
        return out + self.walker.end()

    def _drain(self) -> list[Record]:
        out: list[Record] = []
        event = self.walker.event
        for prefix, ev, value in self._events:
            out.extend(event(prefix, ev, value))
        del self._events[:]
        return out


# -- the sync and async readers -----------------------------------------------------------------


def iter_records(
    f: IO[bytes],
    source: str,
    *,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    on_invalid: OnInvalid = "error",
    report: Report | None = None,
    container: Literal["auto", "jsonl", "document"] = "auto",
) -> Iterator[Record]:
    """Records of a binary file, JSONL or JSON document (see the module docstring)."""
    head = b""
    kind = container
    if kind == "auto":
        sniffer = _Sniffer(max_line_bytes)
        while kind == "auto":
            kind = sniffer.feed(f.read(CHUNK_BYTES))
        head = sniffer.head
        if kind == "empty":
            return
    if kind == "document":
        if head.startswith(BOM):
            head = head[3:]
        doc = DocReader(source)
        chunk = head
        while chunk:
            yield from doc.feed(chunk)
            chunk = f.read(CHUNK_BYTES)
        yield from doc.close()
        return
    splitter = LineSplitter(source=source, max_line_bytes=max_line_bytes)
    index = 0
    chunk = head
    while True:
        records, index = _jsonl_records(splitter.feed(chunk) if chunk else splitter.close(), index, source, on_invalid, report)
        yield from records
        if not chunk:
            return
        chunk = f.read(CHUNK_BYTES)


async def aiter_records(
    f: Any,
    source: str,
    *,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    on_invalid: OnInvalid = "error",
    report: Report | None = None,
    container: Literal["auto", "jsonl", "document"] = "auto",
) -> AsyncIterator[Record]:
    """The async twin of :func:`iter_records`; ``f`` has ``async read(n)``."""
    head = b""
    kind = container
    if kind == "auto":
        sniffer = _Sniffer(max_line_bytes)
        while kind == "auto":
            kind = sniffer.feed(await f.read(CHUNK_BYTES))
        head = sniffer.head
        if kind == "empty":
            return
    if kind == "document":
        if head.startswith(BOM):
            head = head[3:]
        doc = DocReader(source)
        chunk = head
        while chunk:
            for rec in doc.feed(chunk):
                yield rec
            chunk = await f.read(CHUNK_BYTES)
        for rec in doc.close():
            yield rec
        return
    splitter = LineSplitter(source=source, max_line_bytes=max_line_bytes)
    index = 0
    chunk = head
    while True:
        records, index = _jsonl_records(splitter.feed(chunk) if chunk else splitter.close(), index, source, on_invalid, report)
        for rec in records:
            yield rec
        if not chunk:
            return
        chunk = await f.read(CHUNK_BYTES)


def iter_raw_lines(f: IO[bytes], source: str, *, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> Iterator[tuple[int, bytes]]:
    """``(line, bytes)`` of a binary file, for pre-scans (no decoding)."""
    splitter = LineSplitter(source=source, max_line_bytes=max_line_bytes)
    while True:
        chunk = f.read(CHUNK_BYTES)
        if not chunk:
            yield from splitter.close()
            return
        yield from splitter.feed(chunk)


async def aiter_raw_lines(f: Any, source: str, *, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> AsyncIterator[tuple[int, bytes]]:
    splitter = LineSplitter(source=source, max_line_bytes=max_line_bytes)
    while True:
        chunk = await f.read(CHUNK_BYTES)
        for item in splitter.feed(chunk) if chunk else splitter.close():
            yield item
        if not chunk:
            return
