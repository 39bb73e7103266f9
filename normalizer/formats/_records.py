"""Bytes to JSON values, and where each value began: the record layer of the readers (sans-I/O).

Two containers are read, both in constant memory, from bytes fed in chunks:

* **JSONL**: one JSON value per line. :class:`LineSplitter` cuts chunks into lines (a line
  past ``max_line_bytes`` is refused as soon as it is that long, so a 2 GB line is never
  held); the reader (``_reader``) decodes each line with orjson in the loop that converts
  it, using the error helpers here. A record's place is its line number.
* **A JSON document**: an array of records, or an object whose ``messages`` / ``input`` array
  (also under ``request.body``, as in hermes request dumps) is the record stream.
  :class:`DocReader` pushes the bytes into ijson's push parser in slices of
  :data:`DOC_SLICE_BYTES` (but for those of a long string, held back and pushed together:
  :class:`_OpenToken`) and :class:`DocWalker` turns its events into :class:`Record` and
  :class:`Meta` values (the object's other keys). A record (or meta value) that takes more
  than ``max_record_bytes`` of the file is refused while it is read.

Both refuse nesting deeper than ``max_depth`` (:data:`DEFAULT_MAX_DEPTH`) with
:class:`LimitExceeded`: orjson cannot write back a value nested past 255 levels, and ijson's
cost grows with depth, so a hostile file is stopped where it is read, not where it is written.
Errors name ``file:line:column``.

**Where a record began** (:class:`Position`). A JSONL record is its line: its place is the
line number, an int the reader has anyway, and its position ``(line, 1)`` is built only when
asked for. ijson says nothing of where its events are, and finding every record's offset as
the bytes go by would cost a tokenizer pass over the whole file (about a third of the
document reader's time). So a document record's place is a :class:`DocPlace`: the slice its
first event came from and that event's number in the slice. Only when a position is asked
for (an error, a ``check`` finding) is that slice tokenized, once, to turn event numbers into
offsets: each ijson event is one token, and a token's event arrives with the slice that
completes it (a number only once the byte after it is seen), which :class:`_Slice` follows.

**Lone surrogates.** A ``\\ud800``-style escape that is not half of a UTF-16 pair denotes no
character: it cannot be written as UTF-8, so nothing downstream (orjson, pydantic's JSON
dump, a terminal) can carry it. This is the one policy for them, everywhere: *files* are
refused at read time with an :class:`InvalidMessage` at ``file:line:column`` (JSONL through
orjson, which refuses them; documents through :class:`_SurrogateScan`, because ijson's C
backend would silently turn them into ``?``). *In-memory* values (Python ``str`` can hold
them) are refused where they would have to be encoded: a pydantic model whose dump fails is
an :class:`InvalidMessage` naming the message (``_messages.as_message``), pydantic refuses
them in a message's keys, :meth:`Report.model_dump_json` replaces them with U+FFFD and says
so in a ``replace_surrogates`` record (``_report``), and the writers refuse them with an
:class:`InvalidMessage` naming the message index (``_encode.unwritable``).

Which container a file is comes from its first bytes (:func:`sniff`): ``[`` is a document;
``{`` is JSONL when its first line is a complete JSON value, else a (pretty-printed)
document. A UTF-8 byte order mark is skipped.
"""

from __future__ import annotations

import codecs
import math
import re
from collections.abc import Iterable
from decimal import Decimal
from io import BytesIO
from typing import Any, Final, Literal, NamedTuple, Union

import orjson

from .._defaults import DEFAULT_MAX_DEPTH as _DEFAULT_MAX_DEPTH
from .._errors import InputError, InvalidMessage, LimitExceeded
from .._json import MAX_INT_DIGITS, JSONDecodeError, loads

__all__ = [
    "DEFAULT_MAX_LINE_BYTES",
    "DEFAULT_MAX_DEPTH",
    "DEFAULT_MAX_RECORD_BYTES",
    "CHUNK_BYTES",
    "DOC_SLICE_BYTES",
    "BOM",
    "Position",
    "DocPlace",
    "Place",
    "Record",
    "Meta",
    "position_of",
    "LineSplitter",
    "count_newlines",
    "line_error",
    "column_of",
    "too_deep",
    "lone_surrogate",
    "too_many_digits",
    "past_double",
    "nesting_at",
    "sniff",
    "Sniffer",
    "DocWalker",
    "DocReader",
    "KeysScanner",
    "CONTAINER_PREFIXES",
]

#: Longest JSONL line accepted, in bytes (64 MiB). A real session line is a few KB to a few
#: MB (a big tool output); a longer one is far more likely a corrupt or hostile file than
#: data, and holding it would break the constant-memory promise. Pass ``max_line_bytes``
#: to change it.
DEFAULT_MAX_LINE_BYTES = 64 * 1024 * 1024

#: Largest record (or top-level value) of a JSON document, in bytes of the file consumed while
#: it is built: the document's twin of ``max_line_bytes``, with the same default and for the
#: same reason. Also the most a converter holds for one message it assembles from several
#: records (a Claude Code turn and the results behind it, a Responses turn or run of bare
#: input parts), in bytes of their JSON. Pass ``max_record_bytes`` to change it.
DEFAULT_MAX_RECORD_BYTES = DEFAULT_MAX_LINE_BYTES

#: Deepest nesting accepted (``_defaults``: the core applies it to in-memory messages too).
DEFAULT_MAX_DEPTH = _DEFAULT_MAX_DEPTH

#: Bytes fetched per read. Large enough that the per-call cost (a thread hop in async mode)
#: is amortised over hundreds of lines; small enough not to matter for memory.
CHUNK_BYTES = 256 * 1024

#: Bytes of a JSON document handed to ijson at once, whatever the size of the chunks fed to
#: :class:`DocReader`. Each slice's events are walked before the next is parsed, so at most
#: a slice's worth wait (one per byte at worst, ``[[[[``: about 20 MB, held only until the
#: depth limit stops it). A long string is not what sets it: ijson's C lexer re-reads a
#: token cut by a slice from its first byte, which made a string cost time quadratic in its
#: length over the slice size (or over the chunk size, when a pipe gives 64 KiB at a time);
#: the slices that only go on with an open string or number are held back and pushed
#: together, in amounts that double (:class:`_OpenToken`), so each of its bytes is lexed
#: about three times whatever the slices and chunks.
DOC_SLICE_BYTES = 256 * 1024

BOM = b"\xef\xbb\xbf"


# -- where things are -------------------------------------------------------------------------


class Position(NamedTuple):
    """Where a record begins in its file: 1-based line, and 1-based column in characters
    (a JSONL record is its line: column 1)."""

    line: int
    column: int


class DocPlace(NamedTuple):
    """Where a document record began, not yet worked out: its first event's slice and
    number there (see the module docstring). :meth:`resolve` works it out."""

    slice: _Slice
    event: int

    def resolve(self) -> Position | None:
        return self.slice.position(self.event)


#: A record's place: a JSONL line number, or a document record's :class:`DocPlace`.
Place = Union[int, DocPlace]


def position_of(place: Place | None) -> Position | None:
    """The :class:`Position` of a place (None: unknown)."""
    if place is None:
        return None
    if type(place) is int:
        return Position(place, 1)
    return place.resolve()  # type: ignore[union-attr]  # the only other kind of place


class Record(NamedTuple):
    """One element of a file's record stream, decoded."""

    value: Any
    place: Place | None  # None: a record given in memory, nowhere in a file
    number: int  # 0-based number of the record in the file (``index`` is tuple's)


class Meta(NamedTuple):
    """One of a document's other keys (``model``, ``tools``, ``system``, a dump's
    ``request.body.model``...) and its value, for the conversation's ``extra``."""

    key: str
    value: Any
    place: Place | None  # None: given in memory, nowhere in a file


# -- JSONL ------------------------------------------------------------------------------------


class LineSplitter:
    """Bytes in, complete lines out (sans-I/O). Refuses lines longer than ``max_line_bytes``
    as soon as they get that long, without holding more than that.

    ``line`` is the number of lines handed out so far: the first line of the next ``feed()``
    is line ``line + 1``. (Lines are not numbered one by one: the caller counts them in the
    loop it runs over them anyway.)

    Each line ``feed()`` hands out keeps its ``\n`` (the last line of a file, from ``close()``,
    has none; the newline is not counted against ``max_line_bytes``). Cutting is a ``memchr``
    per line (``BytesIO.readlines``) rather than ``bytes.split``'s byte-by-byte loop: on lines
    of about a kilobyte, a fifth of the instructions. A trailing newline is whitespace to
    orjson; a caller that wants the bare line cuts it off.
    """

    def __init__(self, *, source: str, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> None:
        self.source = source
        self.max_line_bytes = max_line_bytes
        self.line = 0
        self._pending: list[bytes] = []
        self._pending_len = 0

    def feed(self, chunk: bytes) -> list[bytes]:
        if b"\n" not in chunk:
            self._hold(chunk)
            return []
        pieces = BytesIO(chunk).readlines()  # shares chunk's bytes: no copy of the chunk
        rest = b"" if pieces[-1][-1:] == b"\n" else pieces.pop()
        if self._pending:
            pieces[0] = b"".join(self._pending) + pieces[0]
            self._pending, self._pending_len = [], 0
        longest = self.max_line_bytes + 1  # each piece's newline is not part of its length
        if max(map(len, pieces)) > longest:  # one C-speed pass; the loop is rare
            for n, piece in enumerate(pieces):
                if len(piece) > longest:
                    raise self._too_long(self.line + n + 1)
        self.line += len(pieces)
        self._hold(rest)
        return pieces

    def close(self) -> list[bytes]:
        if not self._pending:
            return []
        self.line += 1
        last = b"".join(self._pending)
        self._pending, self._pending_len = [], 0
        return [last]

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


# -- errors at a place in the bytes -----------------------------------------------------------


def line_error(raw: bytes, exc: orjson.JSONDecodeError, *, source: str, line: int, max_depth: int) -> InputError:
    """Why orjson refused a JSONL line, at ``source:line:column``: not UTF-8, a lone surrogate,
    nested past orjson's own limit (worded as past ours), or not JSON."""
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as bad:
        # orjson reports invalid UTF-8 at column 1; find the real position ourselves.
        return InvalidMessage(
            f"not UTF-8 text (byte 0x{raw[bad.start]:02x})",
            source=source,
            line=line,
            column=column_of(raw, bad.start),
            hint="Session files are UTF-8; re-encode the file",
        )
    if "surrogate" in exc.msg:
        # orjson's column is that of the escape; say what it is, in the document's words too.
        escape = raw.decode("utf-8")[exc.pos : exc.pos + 6].encode("utf-8", "replace")  # pos: characters
        return lone_surrogate(escape, source=source, line=line, column=exc.colno)
    at = nesting_at(raw, max_depth) if "depth" in exc.msg else None
    if at is not None:  # past orjson's own limit (1024): the same error as past ours
        return too_deep(max_depth, source=source, line=line, column=column_of(raw, at))
    if "infinity" in exc.msg:  # "number is infinity when parsed as double": see .._json
        # An integer of more than MAX_INT_DIGITS digits (what jiter refuses, and orjson
        # says of any past 308), or orjson's first complaint of a line refused for another
        # reason, a float beyond a double.
        long = _LONG_DIGITS.search(raw)
        if long is not None:
            return too_many_digits(source=source, line=line, column=column_of(raw, long.start()))
        return past_double(source=source, line=line, column=exc.colno)
    # One line is one document, so orjson's column (in characters) is the line's column.
    return InvalidMessage(
        f"not JSON: {exc.msg}",
        source=source,
        line=line,
        column=exc.colno,
        hint="Each line of a JSONL file must be one complete JSON value",
    )


# An integer of more digits than Python reads (a run of digits, in a string or not: only
# looked for once the parser has failed on one).
_LONG_DIGITS: Final = re.compile(rb"-?[0-9]{%d,}" % (MAX_INT_DIGITS + 1))


def column_of(raw: bytes, offset: int) -> int:
    """1-based column, in characters, of byte ``offset`` of a line."""
    return len(raw[:offset].decode("utf-8", "replace")) + 1


def too_deep(max_depth: int, **where: Any) -> LimitExceeded:
    """The one wording of a refused nesting (JSONL lines and documents)."""
    return LimitExceeded(
        f"nested deeper than {max_depth} levels",
        limit="max_depth",
        value=max_depth,
        hint="A chat message is about 10 levels deep; raise max_depth if this data is genuine",
        **where,
    )


def too_many_digits(**where: Any) -> InvalidMessage:
    """The one wording of a refused integer too long to read (JSONL lines and documents)."""
    return InvalidMessage(
        f"an integer of more than {MAX_INT_DIGITS:,} digits: more than Python reads as a number",
        hint="Write a number that long as a string",
        **where,
    )


def past_double(**where: Any) -> InvalidMessage:
    """The one wording of a refused number beyond the range of a double (a float past about
    1.8e308: infinity), which no float can hold (see ``.._json``)."""
    return InvalidMessage(
        "a number beyond the range of a double (about 1.8e308): no float holds it",
        hint="Write it as a string",
        **where,
    )


def lone_surrogate(escape: bytes, **where: Any) -> InvalidMessage:
    """The one wording of a refused lone surrogate (see the module docstring)."""
    return InvalidMessage(
        f"lone surrogate {escape.decode('ascii', 'replace')} in a string (half of a UTF-16 pair: not a character)",
        hint="Remove the escape or re-export the file as valid UTF-8 text",
        **where,
    )


# A JSON string (complete) or a bracket. Strings are skipped whole, at C speed.
_TOKENS = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.S)
# The rest of a string begun before the bytes at hand, up to its closing quote.
_STRING_REST = re.compile(rb'[^"\\]*(?:\\.[^"\\]*)*"', re.S)


def nesting_at(data: bytes, max_depth: int, depth: int = 0, in_string: bool = False, escaped: bool = False) -> int | None:
    """Offset of the first bracket of ``data`` that opens level ``max_depth + 1``, else None.

    ``depth``, ``in_string`` and ``escaped`` (the byte before ``data`` was a backslash) are
    the state at ``data[0]``: a document's slice may begin inside a string. ``data`` is valid
    JSON text up to the offset looked for.
    """
    pos = 0
    if in_string:
        rest = _STRING_REST.match(data, 1 if escaped else 0)
        if rest is None:
            return None
        pos = rest.end()
    for token in _TOKENS.finditer(data, pos):
        bracket = token.group()
        if bracket == b"[" or bracket == b"{":
            depth += 1
            if depth > max_depth:
                return token.start()
        elif bracket == b"]" or bracket == b"}":
            depth -= 1
    return None


def _ijson() -> Any:
    """The ijson module, imported at the first JSON document rather than with this module:
    JSONL, the common case (and the command line's), never needs the parser (~3 ms of
    start-up: ijson picks its C backend when imported)."""
    import ijson  # type: ignore[import-untyped]  # ijson ships no type information

    return ijson


def _parser_errors(ijson: Any) -> tuple[type[Exception], ...]:
    """What ijson's parser raises on bad input: its own errors, bad UTF-8, and an integer of
    more than :data:`MAX_INT_DIGITS` digits (Python's limit, which its C backend meets
    turning the digits into an int, and reports as a SystemError around the ValueError)."""
    return (ijson.JSONError, UnicodeDecodeError, ValueError, SystemError)


# -- sniffing ---------------------------------------------------------------------------------


def sniff(head: bytes, at_eof: bool, *, single: bool = False,
          lines: bool = False) -> Literal["jsonl", "document", "empty", "more"]:
    """Which container the bytes read so far show (``"more"``: read on). ``single``: the
    format named is one conversation per file (chat, responses, anthropic), so an object on
    one line that holds ``messages`` or ``input`` is a request body, not a JSONL record.
    ``lines``: the format named is one conversation per line (finetune), so an object on one
    line is a record whatever its keys (the fine-tuning writer keeps a request's ``model``,
    ``max_tokens`` and ``system`` beside ``messages``: a file of one such line was read as a
    request body, and its messages refused as fine-tuning records)."""
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
        value = loads(first)  # (as the reader parses a line)
    except JSONDecodeError as exc:
        # Cut short at the end of the line: an object that continues on the next lines.
        if exc.pos >= len(first.decode("utf-8", "replace").rstrip()) and end >= 0:
            return "document"
        return "jsonl"
    keys = _REQUEST_KEYS | _CONVERSATION_KEYS if single else _REQUEST_KEYS
    if isinstance(value, dict) and not lines and not value.keys().isdisjoint(keys):
        # A request body or dump written on one line: a document, if nothing follows it.
        rest = text[len(first):].strip()
        if rest:
            return "jsonl"
        return "document" if at_eof else "more"
    return "jsonl"


# Top-level keys of request bodies and dumps (whose messages sit beside other fields). A
# fine-tuning line has "messages" (and "tools") but never "model" or "max_tokens".
_REQUEST_KEYS = frozenset({"request", "body", "input", "system", "system_prompt", "model", "max_tokens"})
# What holds one conversation's records (with a format that reads one conversation per file).
_CONVERSATION_KEYS = frozenset({"messages", "input"})


class Sniffer:
    """Reads the head of a file until :func:`sniff` can tell, and judges it again only when
    a chunk can change the verdict: the first bytes that are not whitespace, the end of the
    line they begin, something after that line, the end of the input. So a long first line,
    a long run of leading whitespace or of blank lines after a one-line document cost one
    join and one parse, not one a chunk (quadratic: a one-line request body followed by
    blank lines was re-parsed 324 times). Past ``max_line_bytes`` with the first line still
    open, it says ``"jsonl"``: the line splitter refuses the line, with its position."""

    def __init__(self, max_line_bytes: int, *, single: bool = False, lines: bool = False) -> None:
        self.max_line_bytes = max_line_bytes
        self.single = single  # see sniff()
        self.lines = lines
        self._parts: list[bytes] = []
        self._size = 0
        self._start = -1  # offset of the first byte past the BOM and the whitespace (-1: none yet)
        self._line_end = -1  # offset of the first newline after it (-1: none yet)
        self.head = b""

    def feed(self, chunk: bytes) -> str:
        """``"auto"`` while it cannot tell, else :func:`sniff`'s verdict (``b""``: the end)."""
        offset = self._size
        self._parts.append(chunk)
        self._size += len(chunk)
        judge = not chunk
        if self._start < 0:
            skip = 3 if offset == 0 and chunk.startswith(BOM) else 0
            content = len(chunk) - len(chunk[skip:].lstrip())
            if content < len(chunk):
                self._start = offset + content
                judge = True
        if self._start >= 0:
            if self._line_end < 0:
                at = chunk.find(b"\n", max(self._start - offset, 0))
                if at >= 0:
                    self._line_end = offset + at
                    judge = True
            elif not chunk.isspace():
                judge = True  # something after the first line
        if not judge:
            if self._line_end < 0 and self._size > self.max_line_bytes:
                self.head = b"".join(self._parts)
                return "jsonl"
            return "auto"
        self.head = b"".join(self._parts)
        self._parts = [self.head]
        kind = sniff(self.head, at_eof=not chunk, single=self.single, lines=self.lines)
        if kind == "more" and self._line_end < 0 and self._size > self.max_line_bytes:
            return "jsonl"
        return "auto" if kind == "more" else kind


# -- JSON documents ---------------------------------------------------------------------------

# Arrays that hold the record stream, by path, and objects we descend into to find one.
_STREAMS = {"messages", "input", "request.body.messages", "request.body.input", "body.messages", "body.input"}
_DESCEND = {"", "request", "request.body", "body"}


class _TooDeep(Exception):
    """Raised by the walker at the first bracket past ``max_depth``; the reader positions it."""


class _PastDouble(Exception):
    """Raised by the walker at a number beyond the range of a double (``place``: its event;
    None in the first pass, which places nothing)."""

    def __init__(self, place: DocPlace | None) -> None:
        self.place = place


def _float(number: Decimal, place: DocPlace | None) -> float:
    """A document's number that is not an integer, as the float orjson would parse it to
    (the nearest double: ``float`` of the Decimal ijson gives, exact, is that); refused
    when it is beyond the range of a double (infinity, which orjson refuses too)."""
    value = float(number)
    if math.isinf(value):
        raise _PastDouble(place)
    return value


class DocWalker:
    """ijson's prefix-free (``basic_parse``) events in, records and meta values out (sans-I/O),
    building one value at a time.

    Prefix-free because ijson's ``parse`` events each carry their full path: memory and time
    grow with depth squared (a 400 KB file nested 200,000 deep took 22 GB). The walker keeps
    the path only of the few outer objects it descends into, and a depth counter.
    """

    def __init__(self, max_depth: int = DEFAULT_MAX_DEPTH) -> None:
        self.max_depth = max_depth
        self.depth = 0  # brackets open, counted from the document's outermost one
        self.index = 0
        self.stream: str | None = None  # path of the array being streamed
        self.streamed = False
        self.stream_path: str | None = None  # the path of the record array, once it began
        # A document with no stream array is one record: its top-level values, kept until the
        # stream array begins (then they are no record, and let go) or the document ends.
        # DocReader bounds them as one record (drop_top: past max_record_bytes, not kept).
        self.top: dict[str, Any] = {}
        self.top_over = False  # top took more than max_record_bytes: it cannot be one record
        self.target: str | None = None  # what is being built: None a stream item, else a meta key
        # The value being built: its open containers, innermost last (empty: none is), and
        # the key of the innermost object's next value. Built here, in walk()'s loop, rather
        # than by ijson's ObjectBuilder: a method call per event was most of a document's cost.
        self._open: list[Any] = []
        self._value_key: Any = None
        self._maps: list[str] = []  # paths of the objects descended into, outermost first
        self._key: str | None = None  # the current key of the innermost of them
        self._began: DocPlace | None = None  # where the value being built began
        self._first: DocPlace | None = None  # the document's first event

    @property
    def building(self) -> bool:
        return bool(self._open)

    def walk(self, events: list[tuple[str, Any]], where: _Slice) -> list[Record | Meta]:
        """The records and meta values one slice's events complete (``where``: that slice,
        to place the values that begin in it). One loop for the slice, not one call per
        event: a document has about ten events per message."""
        out: list[Record | Meta] = []
        if self._first is None and events:
            self._first = DocPlace(where, 0)
        depth = self.depth
        max_depth = self.max_depth
        open_ = self._open  # the containers of the value being built (mutated in place)
        key = self._value_key
        try:
            for n, (ev, value) in enumerate(events):
                if open_:  # building a value: most events of a document
                    if ev == "map_key":
                        key = value
                        continue
                    if ev == "end_map" or ev == "end_array":
                        depth -= 1
                        done = open_.pop()
                        if not open_:
                            out.append(self._done(done))
                        continue
                    if ev == "start_map" or ev == "start_array":
                        depth += 1
                        if depth > max_depth:
                            raise _TooDeep
                        value = {} if ev == "start_map" else []
                        top = open_[-1]
                        if type(top) is dict:
                            top[key] = value
                        else:
                            top.append(value)
                        open_.append(value)
                        continue
                    if type(value) is Decimal:  # a number that is not an integer (see DocReader)
                        value = _float(value, DocPlace(where, n))
                    top = open_[-1]
                    if type(top) is dict:
                        top[key] = value
                    else:
                        top.append(value)
                    continue
                if ev == "start_map" or ev == "start_array":
                    depth += 1
                    if depth > max_depth:
                        raise _TooDeep
                elif ev == "end_map" or ev == "end_array":
                    depth -= 1
                if self.stream is not None:
                    if ev == "end_array":  # items are built whole, so this closes the stream itself
                        self.stream = None
                        continue
                    self._start(ev, value, None, DocPlace(where, n), out)
                    continue
                if ev == "map_key":
                    self._key = value
                    continue
                if ev == "end_map":  # only objects descended into get here; others are built
                    self._maps.pop()
                    self._key = None
                    continue
                path = self._path()
                if ev == "start_array" and (path in _STREAMS or (path == "" and not self.top)):
                    self.stream = self.stream_path = path
                    self.streamed = True
                    self.top = {}  # no longer a record: its keys are only Meta values now
                    continue
                if ev == "start_map" and path in _DESCEND:
                    self._maps.append(path)
                    self._key = None
                    continue
                self._start(ev, value, path, DocPlace(where, n), out)
        finally:
            self.depth = depth
            self._value_key = key
        return out

    def _path(self) -> str:
        """Dotted path of the value starting here (ijson's prefix spelling)."""
        if not self._maps:
            return ""
        parent = self._maps[-1]
        key = self._key or ""
        return f"{parent}.{key}" if parent else key

    def _start(self, ev: str, value: Any, target: str | None, place: DocPlace, out: list[Record | Meta]) -> None:
        """Begin the value of this event (a scalar is done at once)."""
        self.target = target
        self._began = place
        if ev == "start_map" or ev == "start_array":
            self._open.append({} if ev == "start_map" else [])
        else:
            out.append(self._done(_float(value, place) if type(value) is Decimal else value))

    def _done(self, value: Any) -> Record | Meta:
        place = self._began
        assert place is not None  # set by _start, which every value goes through
        if self.target is None:
            self.index += 1
            return Record(value, place, self.index - 1)
        if "." not in self.target and not self.streamed and not self.top_over:
            self.top[self.target] = value
        return Meta(self.target, value, place)

    def drop_top(self) -> None:
        """The top-level values took more than a record may: let them go (see DocReader)."""
        self.top_over = True
        self.top = {}

    def end(self) -> list[Record | Meta]:
        """At the end of the document: an object with no stream array is itself one record."""
        if not self.streamed and self.top:
            assert self._first is not None  # the object's own events came first
            return [Record(dict(self.top), self._first, 0)]
        return []


# A \uXXXX escape of a UTF-16 surrogate: a high one with the low one after it (a pair, fine),
# a high one alone, or a low one alone.
_SURROGATE = re.compile(rb"\\u[dD][89abAB][0-9a-fA-F]{2}(\\u[dD][c-fC-F][0-9a-fA-F]{2})?|\\u[dD][c-fC-F][0-9a-fA-F]{2}")
_PAIR = 12  # bytes of an escaped pair: what must be in view to judge a high surrogate


class _SurrogateScan:
    """Finds the first lone surrogate escape in a document's bytes, fed in pieces (sans-I/O).

    ijson's C backend turns a lone high surrogate into ``?`` without a word, so the bytes
    are looked at before it parses them. Rare in real files (only ASCII-escaped emoji look
    like one), so the regex runs only on pieces holding ``\\u`` followed by ``d``. An escape
    preceded by an odd run of backslashes is text (``\\\\ud800``), not an escape: the run
    is counted, across pieces too.
    """

    def __init__(self) -> None:
        self._carry = b""  # the last bytes seen, not yet judged (an escape may go on)
        self._carry_at = 0  # offset in the document of _carry[0]
        self._run = 0  # backslashes just before _carry[0]

    def feed(self, piece: bytes, final: bool = False) -> tuple[int, bytes] | None:
        """Document offset of the first lone surrogate escape and the bytes from it on, else None."""
        window = self._carry + piece if self._carry else piece
        judged = len(window) if final else max(len(window) - _PAIR + 1, 0)
        found = None
        if b"\\ud" in window or b"\\uD" in window:
            found, judged = self._lone(window, judged)
        self._run = self._run_before(window, judged)
        self._carry_at += judged
        self._carry = window[judged:]
        return found

    def _lone(self, window: bytes, judged: int) -> tuple[tuple[int, bytes] | None, int]:
        """The first lone escape starting before ``judged``, and where judging stopped (past
        ``judged`` when a pair straddles it: its low half must not be judged again alone)."""
        for m in _SURROGATE.finditer(window):
            if m.start() >= judged:
                break
            judged = max(judged, m.end())
            if self._run_before(window, m.start()) % 2:
                continue  # an escaped backslash followed by the text "ud800"
            high = window[m.start() + 3] in b"89abAB"
            if not high or m.group(1) is None:  # a low one alone, or a high one with no low one
                return (self._carry_at + m.start(), window[m.start() :]), judged
        return None, judged

    def _run_before(self, window: bytes, end: int) -> int:
        run = _backslashes_before(window, end)
        return run + (self._run if run == end else 0)


def _backslashes_before(data: bytes, end: int) -> int:
    """How many backslashes stand just before ``data[end]``, counted where they are (a copy
    of ``data`` up to each quote asked about would make a piece quadratic)."""
    start = end
    while start > 0 and data[start - 1] == 0x5C:  # nearly always zero steps
        start -= 1
    return end - start


class _Where:
    """Line, column and string state of a document's bytes, piece by piece (for errors only;
    a few C-speed counts a piece)."""

    def __init__(self) -> None:
        self.offset = 0  # bytes before the current piece
        self.line = 1  # line of the current piece's first byte
        self.line_start = 0  # document offset where that line starts
        self.line_chars = 0  # characters of that line before the piece
        self.in_string = False  # the piece begins inside a string
        self.escaped = False  # ... right after a backslash
        self.quotes = 0  # quotes no backslash escapes in the last piece (the cut asks again)

    def at(self, piece: bytes, rel: int) -> dict[str, int]:
        """``line`` and ``column`` (in characters) of byte ``rel`` of the current piece."""
        line, column = _line_column(self.line, self.line_chars, piece, rel)
        return {"line": line, "column": column}

    def advance(self, piece: bytes) -> None:
        self.strings(piece)
        newlines = count_newlines(piece)
        tail = piece
        if newlines:
            self.line += newlines
            cut = piece.rfind(b"\n") + 1
            self.line_start = self.offset + cut
            self.line_chars = 0
            tail = piece[cut:]
        self.line_chars += _chars(tail)
        self.offset += len(piece)

    def strings(self, piece: bytes) -> None:
        """The string state only, past ``piece`` (all the first pass of :class:`KeysScanner`
        needs: it places nothing)."""
        # Quotes not escaped flip the state; a quote is escaped by an odd run of backslashes.
        # Outside strings there are no backslashes in valid JSON, so runs only matter inside
        # strings.
        data = b"\\" + piece if self.escaped else piece
        self.quotes = _unescaped_quotes(data)
        self.in_string ^= bool(self.quotes % 2)
        run = len(data) - len(data.rstrip(b"\\")) if data.endswith(b"\\") else 0
        self.escaped = bool(run % 2)


def _unescaped_quotes(data: bytes) -> int:
    """How many quotes of ``data`` no backslash escapes (``data`` begins outside an escape).

    The quotes preceded by k or more backslashes are counted for k = 1, 2...: the
    alternating sum is the number of escaped ones. A few C-speed counts for real text,
    whose runs are short; a run longer than :data:`_COUNTED_RUNS` (only hostile input has
    one) would cost a pass over the piece per backslash, so the escapes are then removed in
    one pass instead (a 240 KB run took 107 s)."""
    quotes = data.count(b'"')
    if not quotes or b"\\" not in data:
        return quotes
    escaped, sign, pattern = 0, 1, b'\\"'
    for _ in range(_COUNTED_RUNS):
        n = data.count(pattern)
        if not n:
            return quotes - escaped
        escaped += sign * n
        sign, pattern = -sign, b"\\" + pattern
    return _ESCAPE.sub(b"", data).count(b'"')


#: Backslash runs before a quote counted pass by pass (see _unescaped_quotes).
_COUNTED_RUNS: Final = 8
#: A backslash and the byte it escapes (what _unescaped_quotes removes in its one pass).
_ESCAPE: Final = re.compile(rb"\\.", re.DOTALL)


def count_newlines(data: bytes | bytearray) -> int:
    """How many ``\n`` ``data`` holds. ``count`` compares byte by byte (about 8 instructions
    a byte); ``readlines`` finds each newline with ``memchr`` (under one a byte on lines of a
    kilobyte, about as much as ``count`` on lines of 20 bytes), and the lines it makes live no
    longer than this call."""
    lines = BytesIO(data).readlines()
    return len(lines) - (1 if lines and lines[-1][-1:] != b"\n" else 0)


def _line_column(line: int, line_chars: int, piece: bytes, rel: int) -> tuple[int, int]:
    """Line and column (in characters) of byte ``rel`` of a piece that begins on ``line``,
    after ``line_chars`` characters of it."""
    head = piece[:rel]
    newlines = head.count(b"\n")
    if newlines:
        return line + newlines, _chars(head[head.rfind(b"\n") + 1 :]) + 1
    return line, line_chars + _chars(head) + 1


def _chars(data: bytes) -> int:
    """Characters of UTF-8 bytes: the bytes that are not continuation bytes (exact even when
    a piece boundary splits a character, unlike decoding with "replace")."""
    return len(data) - len(data.translate(None, _NOT_CONTINUATION))


# translate() deletes what it is given: delete all but the continuation bytes, count the rest.
_NOT_CONTINUATION = bytes(b for b in range(256) if not 0x80 <= b <= 0xBF)


def _doc_error(exc: Exception, source: str, walker: DocWalker, where: dict[str, int]) -> InputError:
    # ijson says nothing of where; the start of the slice it was parsing is the best we know.
    text = str(exc)
    if isinstance(exc, _ijson().IncompleteJSONError) and ("premature EOF" in text or "incomplete" in text.lower()):
        return InputError(
            f"the JSON document ends too early (after record {walker.index})",
            source=source,
            **where,
            hint="The file looks truncated; repair or re-export it, or convert it to JSONL",
        )
    if isinstance(exc, UnicodeDecodeError):
        return InvalidMessage(
            f"not UTF-8 text (after record {walker.index})",
            source=source,
            line=where["line"],
            column=where["column"],
            hint="Session files are UTF-8; re-encode the file",
        )
    return InputError(
        f"not valid JSON (after record {walker.index}): {_parser_reason(text)}", source=source, **where,
        hint="Check the file is one JSON array or object"
    )


def _parser_reason(text: str) -> str:
    """What the JSON parser (yajl, through ijson) found wrong, without its own framing: its
    first line only (the rest is a copy of the input with a ``(right here) ------^`` marker,
    which our FILE:LINE:COLUMN replaces), minus the ``parse error:`` prefix."""
    first = text.strip().splitlines()[0].strip() if text.strip() else "the parser gave no reason"
    for prefix in ("parse error:", "lexical error:"):
        if first.startswith(prefix):
            first = first[len(prefix):].strip()
    return first.rstrip(".")


def _bad_utf8(piece: bytes) -> int | None:
    """Offset of the first byte of ``piece`` that is not UTF-8 (a character cut by the end
    of the piece is not one), else None."""
    try:
        piece.decode("utf-8")
    except UnicodeDecodeError as bad:
        if bad.reason != "unexpected end of data":
            return bad.start
    return None


# One token per ijson event: a string (group 1 is its closing quote: None when the bytes at
# hand cut it), a bracket, or a scalar (number, true, false, null). Commas, colons and
# whitespace make no event.
_EVENT_TOKENS = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*(")?|[\[\]{}]|[^\s\[\]{}:,"]+', re.S)
_SCALAR_BYTES = bytes(b for b in range(256) if b not in b' \t\n\r\x0b\x0c[]{}:,"')
_LITERALS = (b"true", b"false", b"null")


def _scalar_tail(piece: bytes) -> int:
    """Bytes of the scalar (number or literal) ``piece`` ends with, if it is one whose event
    ijson gives only with the next bytes: a number (yajl must see the byte after it to know
    it ended) or a cut literal. 0 otherwise. (Outside strings only.)"""
    tail = len(piece) - len(piece.rstrip(_SCALAR_BYTES))
    return tail if tail and piece[-tail:] not in _LITERALS else 0


def _opening_quote(piece: bytes, escaped: bool, quotes: int | None = None) -> int | None:
    """Offset of the last unescaped quote of a piece that ends inside a string (so the quote
    that opened it), or None when the string began before the piece. ``escaped``: the byte
    before the piece was a backslash; ``quotes``: its unescaped quotes, if counted already."""
    if not (_unescaped_quotes(b"\\" + piece if escaped else piece) if quotes is None else quotes):
        return None  # (a piece inside a long string: C-speed counts, not a step per quote)
    end = len(piece)
    while True:
        at = piece.rfind(b'"', 0, end)
        if at < 0:
            return None
        run = _backslashes_before(piece, at)
        if run == at and escaped:
            run += 1  # the run goes on into the last piece
        if run % 2 == 0:
            return at
        end = at


class _Cut(NamedTuple):
    """Where a token cut by a slice boundary began: its first slice's bytes and state, and
    the offset there (the bytes only, not that slice: a chain of slices would hold the file)."""

    piece: bytes
    line: int
    line_chars: int
    offset: int

    def position(self) -> Position:
        return Position(*_line_column(self.line, self.line_chars, self.piece, self.offset))


class _Slice:
    """One slice of a document as ijson was given it, with the reading state at its first
    byte: enough to work out, later and only if asked, where each of its events began."""

    __slots__ = ("piece", "line", "line_chars", "in_string", "escaped", "carried", "_offsets")

    def __init__(self, piece: bytes, where: _Where, carried: _Cut | None) -> None:
        self.piece = piece
        self.line = where.line
        self.line_chars = where.line_chars
        self.in_string = where.in_string
        self.escaped = where.escaped
        # Where the token cut by this slice's start (a string, or a scalar: see _scalar_tail)
        # began; None when no token is cut.
        self.carried = carried
        self._offsets: list[int] | None = None

    def position(self, event: int) -> Position | None:
        """Where the token of this slice's ``event``-th event begins (None: not in it)."""
        if event == 0 and self.carried is not None:
            return self.carried.position()
        if self._offsets is None:
            self._offsets = self._event_offsets()
        if event >= len(self._offsets):
            return None
        return Position(*_line_column(self.line, self.line_chars, self.piece, self._offsets[event]))

    def cut(self, in_string_at_end: bool, quotes: int | None = None) -> _Cut | None:
        """Where the token this slice's end cuts began (the next slice's ``carried``);
        ``quotes``: the unescaped quotes of the slice, if counted already (_Where.strings)."""
        piece = self.piece
        if in_string_at_end:
            at = _opening_quote(piece, self.escaped, quotes)
            if at is None:
                return self.carried  # the string began before this slice
            return _Cut(piece, self.line, self.line_chars, at)
        tail = _scalar_tail(piece)
        if not tail:
            return None
        if tail == len(piece) and self.carried is not None:
            return self.carried  # the scalar began before this slice
        return _Cut(piece, self.line, self.line_chars, len(piece) - tail)

    def _event_offsets(self) -> list[int]:
        """Offset of each event's token, in event order: the token cut by the slice's start
        first (its event comes with this slice; :meth:`position` places it where it began),
        then each token begun here, but for one cut by the end (its event comes later)."""
        piece = self.piece
        offsets: list[int] = []
        pos = 0
        if self.in_string:
            rest = _STRING_REST.match(piece, 1 if self.escaped else 0)
            if rest is None:
                return offsets  # the whole slice is inside one string
            offsets.append(0)
            pos = rest.end()
        elif self.carried is not None:
            offsets.append(0)
            while pos < len(piece) and piece[pos] in _SCALAR_BYTES:
                pos += 1
        last: re.Match[bytes] | None = None
        for token in _EVENT_TOKENS.finditer(piece, pos):
            if piece[token.start()] == 0x22 and token.group(1) is None:
                return offsets  # a string the slice cuts: everything after it is inside it
            offsets.append(token.start())
            last = token
        if last is not None and last.end() == len(piece) and _scalar_tail(piece):
            offsets.pop()
        return offsets


class _OpenToken:
    """The token (a string, or a number) that a document's bytes so far end inside, when a
    slice boundary cuts one, and the slices of it held back from the parser.

    yajl keeps the part of a token it was given and lexes it again, from its first byte,
    with the next bytes: pushed slice by slice, a string of N bytes cost N²/2 over the slice
    size (``chatnorm repair`` on 16 MB of JSON text in one string: 3.6 s; from a pipe, read
    64 KiB at a time, 10.7 s; now 0.7 and 0.9 s). So a slice that only goes on with the open token -- it does
    not end it, and holds nothing yajl's lexer refuses (:meth:`goes_on`), so that ijson
    would give no event and raise no error for it -- is held back. The held slices are
    pushed once they are as many bytes as the token's bytes already pushed (each byte is
    lexed about three times in all), or before the next slice that is not held, or at the
    end of the document.

    Nothing else changes: the readers keep every other account (positions, the surrogate
    scan, the size limit) slice by slice, held or not, and the slice after a hold is pushed
    alone, onto the token's bytes so far, as it was. What is held is at most as much as was
    pushed of the token (and a slice), and within the value being read: under
    ``max_record_bytes``, besides yajl's own copy. (So a string refused at the limit peaks
    higher than it did: an 80 MB one past the default 64 MiB, at 159 MB RSS, 95 before: half
    of it held, joined once to be pushed, beside yajl's.)
    """

    __slots__ = ("size", "held", "held_bytes", "number", "hex_owed", "utf8_tail", "number_tail")

    def __init__(self) -> None:
        self.size = 0  # bytes of the open token so far, held ones too (0: no token is open)
        self.held: list[bytes] = []  # slices held back, in order
        self.held_bytes = 0
        # What lexing the next bytes depends on: is the token a number (not a cut literal),
        # hex digits a \u escape cut by the end still needs, the first bytes of a UTF-8
        # character the end cuts (a string), the last two bytes (a number).
        self.number = False
        self.hex_owed = 0
        self.utf8_tail = b""
        self.number_tail = b""

    def goes_on(self, piece: bytes, in_string: bool, escaped: bool) -> bool:
        """Whether ``piece``, the next slice, only goes on with the open token (``in_string``,
        ``escaped``: it begins inside a string, and right after an escaping backslash)."""
        if not self.size:
            return False
        if in_string:
            return _string_goes_on(piece, escaped, self.hex_owed, self.utf8_tail)
        return self.number and piece.isdigit() and _digits_go_on(self.number_tail)

    def hold(self, piece: bytes, in_string: bool, escaped: bool) -> bytes | None:
        """Hold ``piece`` (:meth:`goes_on` said it may be); the bytes held, to push now, once
        they are as many as the token's bytes already pushed (None: hold on)."""
        self.follow(piece, None, in_string, escaped)
        self.held.append(piece)
        self.held_bytes += len(piece)
        if self.held_bytes < self.size - self.held_bytes:
            return None
        return self.release()

    def release(self) -> bytes:
        """The bytes held, to push before the next slice (b"": none). Pushed apart from it, so
        that the parser is as it was when each slice was pushed: the token's bytes so far
        kept, the slice to lex (the same events, and errors word for word: yajl quotes the
        bytes it was given around the one it refuses)."""
        data = b"".join(self.held)
        self.held, self.held_bytes = [], 0
        return data

    def passed(self, at: _Slice, state: _Where) -> _Cut | None:
        """After the slice ``at`` was pushed (``state``: the string state past it): the token
        its end cuts, followed, as the next slice's ``carried``."""
        in_string = state.in_string
        cut = at.cut(in_string, state.quotes)
        if cut is None:
            self.size, self.hex_owed, self.utf8_tail = 0, 0, b""  # (the next string begins afresh)
        else:
            self.follow(at.piece, None if cut is at.carried else cut.offset, in_string, at.escaped)
        return cut

    def follow(self, piece: bytes, begins: int | None, in_string: bool, escaped: bool) -> None:
        """Keep account of ``piece``, whose end is inside the token, which began at offset
        ``begins`` of it (None: before it); ``escaped``: the piece begins after an escaping
        backslash. A few operations on its last bytes."""
        if begins is None:
            self.size += len(piece)
        else:
            self.size = len(piece) - begins
        if in_string:
            # (Both work from the piece's last bytes, which never reach back past the quote
            # that opened a string begun in it: no state of the string before is used then.)
            self.hex_owed = _hex_owed(piece, escaped, self.hex_owed)
            self.utf8_tail = _utf8_tail(piece if len(piece) >= 3 else self.utf8_tail + piece)
            return
        self.hex_owed, self.utf8_tail = 0, b""
        if begins is None:
            self.number_tail = (self.number_tail + piece[-2:])[-2:]
        else:
            self.number = piece[begins] in b"-0123456789"
            self.number_tail = piece[max(begins, len(piece) - 2) :]


def _string_goes_on(piece: bytes, escaped: bool, hex_owed: int, utf8_tail: bytes) -> bool:
    """Whether ``piece``, which begins inside a string, only goes on with it for yajl's lexer:
    no quote ends it, and the lexer takes every byte (escapes it knows, no control
    character, UTF-8 it reads), so it would give nothing and raise nothing. The state at its
    start: after an escaping backslash (``escaped``), owing ``hex_owed`` hex digits of a
    ``\\u`` escape, after ``utf8_tail``, the first bytes of a character it cuts.

    C-speed passes over the piece, cheapest first: a slice that ends the string (most of
    them, in a document of short strings) is told by a ``memchr``, or by the regex stopping
    at the quote."""
    if hex_owed:
        text = b"\\u" + b"0" * (4 - hex_owed) + piece  # the escape it finishes, whole
    else:
        text = b"\\" + piece if escaped else piece
    if b"\\" in text:
        body = _STRING_BODY.match(text)  # up to the first byte no string can hold there
        if body is None or _OPEN_ESCAPE.fullmatch(text, body.end()) is None:
            return False
    elif b'"' in text or len(text.translate(None, _CONTROL_BYTES)) != len(text):
        return False
    if utf8_tail or not piece.isascii():
        # Python's strict decoder refuses all yajl does and more (overlong forms, encoded
        # surrogates): a piece it refuses is pushed alone, as it was, for yajl to judge.
        try:
            codecs.utf_8_decode(utf8_tail + piece, "strict", False)  # (a character cut by the end is fine)
        except UnicodeDecodeError:
            return False
    return True


#: What a string may hold, as yajl lexes it: no quote, backslash or control character but
#: in an escape it knows. Each alternative begins where the one before cannot go on: no
#: backtracking, one pass.
_STRING_BODY: Final = re.compile(rb'[^"\\\x00-\x1f]*(?:\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})[^"\\\x00-\x1f]*)*')
#: An escape a piece's end cuts (the lexer waits for the rest).
_OPEN_ESCAPE: Final = re.compile(rb"(?:\\(?:u[0-9a-fA-F]{0,3})?)?")
_HEX_DIGITS: Final = re.compile(rb"[0-9a-fA-F]{0,3}")
_CONTROL_BYTES: Final = bytes(range(0x20))


def _hex_owed(piece: bytes, escaped: bool, owed: int) -> int:
    """Hex digits still needed by a ``\\uXXXX`` escape that the end of ``piece`` (inside a
    string) cuts, else 0; ``escaped``, ``owed``: the same at its start (``escaped``: it
    begins after an escaping backslash)."""
    if len(piece) < owed:  # still inside the escape begun before it, if all hex digits
        return owed - len(piece) if _HEX_DIGITS.fullmatch(piece) else 0
    at = piece.rfind(b"u", max(len(piece) - 4, 0))
    if at < 0 or _HEX_DIGITS.fullmatch(piece, at + 1) is None:
        return 0
    run = _backslashes_before(piece, at)
    if run == at and escaped:
        run += 1  # the run goes on into the piece before
    return 4 - (len(piece) - at - 1) if run % 2 else 0


def _utf8_tail(data: bytes) -> bytes:
    """The first bytes of a UTF-8 character that ``data`` ends in the middle of, else b""."""
    for back in range(1, min(len(data), 3) + 1):
        byte = data[-back]
        if byte < 0x80:
            return b""
        if byte >= 0xC0:  # a first byte: how long is its character?
            length = 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
            return data[-back:] if back < length else b""
    return b""


def _digits_go_on(tail: bytes) -> bool:
    """Whether digits after a number that ends with ``tail`` (its last two bytes, or all of
    it) go on with it for yajl, giving no event: not after a lone first digit ``0`` (yajl
    ends the number there, at the next digit, and begins another) nor a lone minus sign
    (``-0``, likewise). Conservative: after ``100`` or ``1e-0`` too it says no (the digits
    are pushed, as they were)."""
    last = tail[-1]
    before = tail[-2] if len(tail) == 2 else None
    if last == 0x30:  # "0"
        return before is not None and before in b"123456789.eE+"
    if last == 0x2D:  # "-"
        return before is not None and before in b"eE"
    return last in b"123456789.eE+"


class DocReader:
    """Bytes of a JSON document in, records out (sans-I/O), through ijson's push parser.

    ijson's own async functions are asyncio-only with its C backend; pushing chunks into
    ``basic_parse_coro`` works the same under any event loop, and for the sync reader too.
    Chunks are pushed in slices of :data:`DOC_SLICE_BYTES`, each walked before the next is
    parsed: that bounds the events held, and lets the depth and size limits stop a hostile
    file within a slice of where it turns hostile. Slices that only go on with a long string
    (or number) are held back and pushed together (:class:`_OpenToken`: linear time, not
    quadratic); they are accounted for one by one all the same, so what comes out, and the
    errors and their positions, are those of pushing each.
    """

    def __init__(
        self, source: str, *, max_depth: int = DEFAULT_MAX_DEPTH, max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES
    ) -> None:
        self.source = source
        self.max_record_bytes = max_record_bytes
        self.walker = DocWalker(max_depth)
        ijson = _ijson()
        self._errors = _parser_errors(ijson)
        self._events = ijson.sendable_list()
        # Numbers as ijson's C backend reads them without use_float: an integer exact (with
        # use_float, past 64 bits it is an "integer overflow" error that stops the document),
        # anything else a Decimal, made a float by the walker (_float). Floats are rare in a
        # chat history, and the walker's test for one replaces the one it made for a container.
        self._coro = ijson.basic_parse_coro(self._events, use_float=False)
        self._surrogates = _SurrogateScan()
        self._where = _Where()
        self._mark = 0  # offset from which the value now being read began to be consumed
        self._carried: _Cut | None = None  # where the token the last slice cut began
        self._token = _OpenToken()  # that token, and the slices of it held back from ijson
        # Whitespace before the document's first byte and after its last one so far: an object
        # with no stream array is one record, of the bytes from its "{" to its "}".
        self._lead: int | None = None
        self._trail = 0

    @property
    def consumed(self) -> int:
        """Bytes of the document parsed so far."""
        return self._where.offset

    def feed(self, chunk: bytes) -> list[Record | Meta]:
        out: list[Record | Meta] = []
        for start in range(0, len(chunk), DOC_SLICE_BYTES):
            out.extend(self._slice(chunk[start : start + DOC_SLICE_BYTES]))
        return out

    def close(self) -> list[Record | Meta]:
        self._check_surrogates(b"", final=True)
        try:
            held = self._token.release()  # a document ending inside a token (yajl says so)
            if held:
                self._coro.send(held)
            self._coro.close()
        except self._errors as exc:
            raise self._parse_error(exc, b"") from None
        out = self._drain(b"", _Slice(b"", self._where, self._carried))
        walker = self.walker
        if not walker.streamed and (walker.top_over or (walker.top and self._object_bytes() > self.max_record_bytes)):
            raise self._object_too_big()
        return out + walker.end()

    def _slice(self, piece: bytes) -> list[Record | Meta]:
        self._check_surrogates(piece)
        self._spaces(piece)
        state = self._where
        if self._token.goes_on(piece, state.in_string, state.escaped):
            return self._hold(piece)
        try:
            held = self._token.release()
            if held:
                self._coro.send(held)  # (gives no event and no error: see _hold)
            self._coro.send(piece)
        except self._errors as exc:
            raise self._parse_error(exc, piece) from None
        where = _Slice(piece, state, self._carried)
        out = self._drain(piece, where)
        state.advance(piece)
        self._carried = self._token.passed(where, state)
        self._count(out, piece)
        return out

    def _hold(self, piece: bytes) -> list[Record | Meta]:
        """A slice that only goes on with the token the last one cut, held back from the parser
        (:class:`_OpenToken`). Pushed, it would have given no event and raised no error, and
        the token would still be cut by its end (``_carried`` stays): all else is as for a
        pushed slice, its size counted against the record's."""
        state = self._where
        self._spaces(piece)
        ripe = self._token.hold(piece, state.in_string, state.escaped)
        if ripe is not None:
            try:
                self._coro.send(ripe)
            except self._errors as exc:  # (cannot be: the held bytes were lexed here first)
                raise self._parse_error(exc, piece) from None
        state.advance(piece)
        self._count([], piece)
        return []

    def _count(self, out: list[Record | Meta], piece: bytes) -> None:
        """Count a slice (``piece``, giving ``out``) against the size of the value being read,
        and, until a stream array begins, the document's own object (one record if none does)."""
        end = self._where.offset
        if out:
            self._mark = end  # a value ended in this slice: the next one starts counting here
        elif end - self._mark > self.max_record_bytes:
            raise self._too_big(piece)
        walker = self.walker
        if not walker.streamed and not walker.top_over and walker.depth > 0:
            # The object is still open: its "}" is past what was read, so it is longer than
            # this. Past the limit its values are let go (drop_top); refused at the end if no
            # stream array came (close), since one may still come.
            if end - (self._lead or 0) >= self.max_record_bytes:
                walker.drop_top()

    def _spaces(self, piece: bytes) -> None:
        """Note the whitespace around the document (for :meth:`_object_bytes`)."""
        if not piece:
            return
        if self._lead is None:
            text = piece.lstrip(b" \t\r\n")
            if text:
                self._lead = self._where.offset + len(piece) - len(text)
        trail = len(piece) - len(piece.rstrip(b" \t\r\n"))
        self._trail = self._trail + trail if trail == len(piece) else trail

    @property
    def open_bytes(self) -> int:
        """Bytes of the document's value read so far, while it is open (0 once it has ended):
        from its first byte (whitespace before it left out)."""
        if self.walker.depth == 0:
            return 0
        return self._where.offset - (self._lead or 0)

    def _object_bytes(self) -> int:
        """Bytes of the document's value, from its first byte to its last (at the end)."""
        return self._where.offset - (self._lead or 0) - self._trail

    def here(self) -> dict[str, int]:
        """Where the document has been read to (``line``, ``column``), for an error."""
        return self._where.at(b"", 0)

    def _object_too_big(self) -> LimitExceeded:
        """The document's object, with no stream array, is one record: past max_record_bytes."""
        first = self.walker._first
        position = first.resolve() if first is not None else None
        return LimitExceeded(
            f"record 0 of the JSON document (the object itself: it has no messages or input array) "
            f"is larger than {self.max_record_bytes} bytes",
            limit="max_record_bytes",
            value=self.max_record_bytes,
            source=self.source,
            **(position._asdict() if position is not None else {}),
            hint="Raise max_record_bytes if the record is genuine (or convert the file to JSONL)",
        )

    def _parse_error(self, exc: Exception, piece: bytes) -> InputError:
        # ijson fails on a lone low surrogate (and on bad UTF-8) that the scan may still hold
        # back, waiting for the bytes after it: judge those first, for the precise error.
        self._check_surrogates(piece, final=True, fed=True)
        bad = _bad_utf8(piece)
        if bad is not None:
            return InvalidMessage(
                f"not UTF-8 text (byte 0x{piece[bad]:02x})",
                source=self.source,
                **self._where.at(piece, bad),  # type: ignore[arg-type]
                hint="Session files are UTF-8; re-encode the file",
            )
        if isinstance(exc, (ValueError, SystemError)):
            return too_many_digits(source=self.source, **self._long_number(piece))
        return _doc_error(exc, self.source, self.walker, self._where.at(piece, 0))

    def _long_number(self, piece: bytes) -> dict[str, int]:
        """Where the integer of too many digits that the parser failed on begins: the token
        the slice's start cuts, when ``piece`` goes on with one, else the first such run of
        digits in it (else, not found: the slice's start)."""
        state = self._where
        if self._carried is not None and not state.in_string and piece[:1].isdigit():
            return dict(self._carried.position()._asdict())
        found = _LONG_DIGITS.search(piece)
        return state.at(piece, found.start() if found else 0)

    def _drain(self, piece: bytes, where: _Slice) -> list[Record | Meta]:
        depth = self.walker.depth
        try:
            return self.walker.walk(self._events, where)
        except _TooDeep:
            state = self._where
            at = nesting_at(piece, self.walker.max_depth, depth, state.in_string, state.escaped)
            raise too_deep(self.walker.max_depth, source=self.source, **state.at(piece, at or 0)) from None
        except _PastDouble as exc:
            position = exc.place.resolve() if exc.place is not None else None
            raise past_double(source=self.source, **(position._asdict() if position else {})) from None
        finally:
            del self._events[:]

    def _check_surrogates(self, piece: bytes, final: bool = False, fed: bool = False) -> None:
        """Raise at the first lone surrogate escape; ``fed``: ``piece`` (the one being parsed,
        which positions are relative to) was already scanned, judge what is held back."""
        found = self._surrogates.feed(b"" if fed else piece, final)
        if found is None:
            return
        at, rest = found
        where = self._where
        rel = at - where.offset
        if rel >= 0:
            position = where.at(piece, rel)
        else:
            # Begun in the bytes carried from the last piece: inside a string, so on this
            # piece's first line, the carried characters to the left of it.
            position = {"line": where.line, "column": where.line_chars + 1 - _chars(rest[:-rel])}
        raise lone_surrogate(rest[:6], source=self.source, **position)

    def _too_big(self, piece: bytes) -> LimitExceeded:
        walker = self.walker
        what = f"record {walker.index}" if walker.target is None or not walker.building else f"the value of {walker.target!r}"
        return LimitExceeded(
            f"{what} of the JSON document is larger than {self.max_record_bytes} bytes",
            limit="max_record_bytes",
            value=self.max_record_bytes,
            source=self.source,
            **self._where.at(b"", 0),
            hint="Raise max_record_bytes if the record is genuine (or convert the file to JSONL)",
        )


#: Where a document's own keys sit: the top level, or a dump's request body.
CONTAINER_PREFIXES = ("", "request.body.", "body.")


class KeysScanner:
    """The values of some of a JSON document's own keys (top level, or in ``request.body`` /
    ``body``), from the document's bytes fed in chunks (sans-I/O).

    The first pass that lets a request body's ``system`` (or ``instructions``, or a hermes
    snapshot's ``system_prompt``) written *after* its messages be placed before them: the
    reader asks for it when a document's record array begins and no such key came before.
    Only the wanted values are built; everything else is tokenized by ijson's C parser and
    passed over, a counter and a flag per event. :meth:`close` gives ``{path: value}``, or
    None when the bytes are not a document it can read to the end (bad JSON, nesting past
    ``max_depth``): the main pass then says what is wrong, and where.
    """

    def __init__(self, keys: Iterable[str], *, max_depth: int = DEFAULT_MAX_DEPTH) -> None:
        self._wanted = {prefix + key for prefix in CONTAINER_PREFIXES for key in keys}
        self._max_depth = max_depth
        ijson = _ijson()
        self._errors = _parser_errors(ijson)
        self._events = ijson.sendable_list()
        self._coro = ijson.basic_parse_coro(self._events, use_float=False)  # (as DocReader's)
        self._names: list[str] = []  # keys of the open objects that could hold a wanted key
        self._depth = 0  # containers open
        self._blocked = 0  # of them: arrays, or objects too deep to hold a wanted key
        self._key: str | None = None  # the current key of the innermost object
        self._open: list[Any] = []  # the wanted value being built (its open containers)
        self._value_key: Any = None
        self._target = ""
        self._failed = False
        self.found: dict[str, Any] = {}
        # A long string is held back as the main pass holds it (DocReader, _OpenToken), or
        # this pass would be the quadratic one: the string state, the token cut, what is held.
        self._state = _Where()
        self._carried: _Cut | None = None
        self._token = _OpenToken()

    def feed(self, chunk: bytes) -> None:
        for start in range(0, len(chunk), DOC_SLICE_BYTES):
            if self._failed:
                return
            try:
                self._push(chunk[start : start + DOC_SLICE_BYTES])
            except self._errors:
                self._failed = True
                return
            self._walk()

    def _push(self, piece: bytes) -> None:
        """Push the slice ``piece`` into the parser, or hold it back, as DocReader does."""
        state, token = self._state, self._token
        if token.goes_on(piece, state.in_string, state.escaped):
            ripe = token.hold(piece, state.in_string, state.escaped)
            state.strings(piece)
            if ripe is not None:
                self._coro.send(ripe)
            return
        held = token.release()
        if held:
            self._coro.send(held)
        self._coro.send(piece)
        at = _Slice(piece, state, self._carried)
        state.strings(piece)
        self._carried = token.passed(at, state)

    def close(self) -> dict[str, Any] | None:
        if not self._failed:
            try:
                held = self._token.release()
                if held:
                    self._coro.send(held)
                self._coro.close()
            except self._errors:
                self._failed = True
            else:
                self._walk()
        return None if self._failed else self.found

    def _walk(self) -> None:
        open_ = self._open
        try:
            for ev, value in self._events:
                if open_:  # building a wanted value (as DocWalker.walk builds one)
                    if ev == "map_key":
                        self._value_key = value
                        continue
                    if ev == "end_map" or ev == "end_array":
                        done = open_.pop()
                        if not open_:
                            self.found[self._target] = done
                        continue
                    if ev == "start_map" or ev == "start_array":
                        if self._depth + len(open_) >= self._max_depth:
                            self._failed = True
                            return
                        value = {} if ev == "start_map" else []
                    elif type(value) is Decimal:
                        value = _float(value, None)
                    top = open_[-1]
                    if type(top) is dict:
                        top[self._value_key] = value
                    else:
                        top.append(value)
                    if type(value) is dict or type(value) is list:
                        open_.append(value)
                    continue
                if ev == "map_key":
                    self._key = value
                    continue
                if ev == "end_map" or ev == "end_array":
                    self._depth -= 1
                    if self._blocked:
                        self._blocked -= 1
                    else:
                        self._names.pop()
                    continue
                if not self._blocked and self._depth:
                    path = ".".join(self._names[1:] + [self._key or ""])
                    if path in self._wanted:
                        self._target = path
                        if ev == "start_map" or ev == "start_array":
                            open_.append({} if ev == "start_map" else [])
                        else:
                            self.found[path] = _float(value, None) if type(value) is Decimal else value
                        continue
                if ev == "start_map" or ev == "start_array":
                    self._depth += 1
                    if self._depth > self._max_depth:
                        self._failed = True
                        return
                    # Only objects a few levels down, reached through objects, can hold one.
                    if self._blocked or ev == "start_array" or self._depth > 3:
                        self._blocked += 1
                    else:
                        self._names.append(self._key or "")
        except _PastDouble:
            self._failed = True  # the main pass refuses it, at its place
        finally:
            del self._events[:]
