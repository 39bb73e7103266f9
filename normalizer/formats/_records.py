"""Bytes to JSON values, and where each value began: the record layer of the readers (sans-I/O).

Two containers are read, both in constant memory, from bytes fed in chunks:

* **JSONL**: one JSON value per line. :class:`LineSplitter` cuts chunks into lines (a line
  past ``max_line_bytes`` is refused as soon as it is that long, so a 2 GB line is never
  held); the reader (``_reader``) decodes each line with orjson in the loop that converts
  it, using the error helpers here. A record's place is its line number.
* **A JSON document**: an array of records, or an object whose ``messages`` / ``input`` /
  ``contents`` array (the formats' own: ``_registry.RECORD_ARRAYS``; some also under
  ``request.body``, as in hermes request dumps) is the record stream.
  :class:`~._document.DocReader` pushes the bytes into ijson's push parser in slices of
  :data:`DOC_SLICE_BYTES` (but for those of a long string, held back and pushed together:
  :class:`~._scan.OpenToken`) and :class:`~._document.DocWalker` turns its events into
  :class:`Record` and :class:`Meta` values (the object's other keys). A record (or meta value) that takes more
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
completes it (a number only once the byte after it is seen), which :class:`~._scan.Slice` follows.

**Lone surrogates.** A ``\\ud800``-style escape that is not half of a UTF-16 pair denotes no
character: it cannot be written as UTF-8, so nothing downstream (orjson, pydantic's JSON
dump, a terminal) can carry it. This is the one policy for them, everywhere: *files* are
refused at read time with an :class:`InvalidMessage` at ``file:line:column`` (JSONL through
orjson, which refuses them; documents through :class:`~._scan.SurrogateScan`, because ijson's C
backend would silently turn them into ``?``). *In-memory* values (Python ``str`` can hold
them) are refused where they would have to be encoded: a pydantic model whose dump fails is
an :class:`InvalidMessage` naming the message (``_messages.as_message``), pydantic refuses
them in a message's keys, :meth:`Report.model_dump_json` replaces them with U+FFFD and says
so in a ``replace_surrogates`` record (``_report``), and the writers refuse them with an
:class:`InvalidMessage` naming the message index (``_writing.unwritable``).

The layer is four modules: this one (the JSONL splitter, places, the limits and their
errors, :func:`sniff`), ``_document`` (:class:`~._document.DocReader`, :class:`~._document.DocWalker`),
``_scan`` (where a document's events are in its bytes: slices, tokens cut by a slice's end,
surrogates) and ``_keys`` (:class:`~._keys.KeysScanner`, the first pass for keys that come
after the records).

Which container a file is comes from its first bytes (:func:`sniff`): ``[`` is a document;
``{`` is JSONL when its first line is a complete JSON value, else a (pretty-printed)
document. A UTF-8 byte order mark is skipped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from io import BytesIO
from typing import TYPE_CHECKING, Any, Final, Literal, Union

import orjson

from .._defaults import DEFAULT_MAX_DEPTH as _DEFAULT_MAX_DEPTH
from .._errors import InputError, InvalidMessage, LimitExceeded
from .._json import MAX_INT_DIGITS, JSONDecodeError, loads

if TYPE_CHECKING:
    from ._scan import Slice

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
    "not_json",
    "column_of",
    "too_deep",
    "keys_held_too_long",
    "lone_surrogate",
    "too_many_digits",
    "past_double",
    "nesting_at",
    "sniff",
    "Sniffer",
    "CONTAINER_PREFIXES",
    "REQUEST_KEYS",
    "STRING_REST",
    "LONG_DIGITS",
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
#: :class:`~._document.DocReader`. Each slice's events are walked before the next is parsed, so at most
#: a slice's worth wait (one per byte at worst, ``[[[[``: about 20 MB, held only until the
#: depth limit stops it). A long string is not what sets it: ijson's C lexer re-reads a
#: token cut by a slice from its first byte, which made a string cost time quadratic in its
#: length over the slice size (or over the chunk size, when a pipe gives 64 KiB at a time);
#: the slices that only go on with an open string or number are held back and pushed
#: together, in amounts that double (:class:`OpenToken`), so each of its bytes is lexed
#: about three times whatever the slices and chunks.
DOC_SLICE_BYTES = 256 * 1024

BOM = b"\xef\xbb\xbf"


# -- where things are -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Position:
    """Where a record begins in its file: 1-based line, and 1-based column in characters
    (a JSONL record is its line: column 1)."""

    line: int
    column: int

    def as_fields(self) -> dict[str, int]:
        """``line`` and ``column`` as keyword arguments (an error's place)."""
        return {"line": self.line, "column": self.column}


@dataclass(slots=True)
class DocPlace:
    """Where a document record began, not yet worked out: its first event's slice and
    number there (see the module docstring). :meth:`resolve` works it out."""

    slice: Slice
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


@dataclass(slots=True)
class Record:
    """One element of a file's record stream, decoded. (Made per record, and a document's
    :class:`DocPlace` per value: slots classes, not frozen, as a frozen dataclass is built
    at twice a tuple's cost; neither is changed once made.)"""

    value: Any
    place: Place | None  # None: a record given in memory, nowhere in a file
    number: int  # 0-based number of the record in the file


@dataclass(frozen=True, slots=True)
class Meta:
    """One of a document's other keys (``model``, ``tools``, ``system``, a dump's
    ``request.body.model``...) and its value, for the conversation's ``extra``. (One per key,
    not per record: frozen, at a frozen dataclass's cost.)"""

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
        long = LONG_DIGITS.search(raw)
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


def not_json(raw: bytes, *, source: str, line: int, max_depth: int) -> InputError:
    """Why orjson refused a JSONL line, said of the line without its newline (orjson would
    place an unfinished value's end on the line after it)."""
    body = raw.removesuffix(b"\n")
    try:
        orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        return line_error(body, exc, source=source, line=line, max_depth=max_depth)
    raise AssertionError("a line refused with its newline parses without it")  # whitespace either way


# An integer of more digits than Python reads (a run of digits, in a string or not: only
# looked for once the parser has failed on one).
LONG_DIGITS: Final = re.compile(rb"-?[0-9]{%d,}" % (MAX_INT_DIGITS + 1))


def column_of(raw: bytes, offset: int) -> int:
    """1-based column, in characters, of byte ``offset`` of a line."""
    return len(raw[:offset].decode("utf-8", "replace")) + 1


def keys_held_too_long(limit: int, **where: Any) -> LimitExceeded:
    """A JSON document read past ``max_record_bytes`` with only its keys so far, and its
    format not known until a record tells it: the keys would all be held until then."""
    return LimitExceeded(
        f"the JSON document's keys before its first record take more than {limit} bytes, and its "
        f"format is not known until a record tells it: they would all be held until then",
        limit="max_record_bytes",
        value=limit,
        **where,
        hint="Name the format (format=..., on the command line --from) or raise max_record_bytes",
    )


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
STRING_REST = re.compile(rb'[^"\\]*(?:\\.[^"\\]*)*"', re.S)


def nesting_at(data: bytes, max_depth: int, depth: int = 0, in_string: bool = False, escaped: bool = False) -> int | None:
    """Offset of the first bracket of ``data`` that opens level ``max_depth + 1``, else None.

    ``depth``, ``in_string`` and ``escaped`` (the byte before ``data`` was a backslash) are
    the state at ``data[0]``: a document's slice may begin inside a string. ``data`` is valid
    JSON text up to the offset looked for.
    """
    pos = 0
    if in_string:
        rest = STRING_REST.match(data, 1 if escaped else 0)
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



#: Where a document's own keys sit: the top level, or a dump's request body.
CONTAINER_PREFIXES = ("", "request.body.", "body.")

#: Top-level keys of any request body or dump, whatever its format (whose records sit beside
#: other fields): a dump's root, a model, a token limit. A fine-tuning line has ``messages``
#: (and ``tools``) but never ``model`` or ``max_tokens``. The formats add their own
#: (``_registry.body_keys``).
REQUEST_KEYS = frozenset({prefix.partition(".")[0] for prefix in CONTAINER_PREFIXES if prefix} | {"model", "max_tokens"})


# -- sniffing ---------------------------------------------------------------------------------


def sniff(head: bytes, at_eof: bool, *,
          body_keys: frozenset[str] = REQUEST_KEYS) -> Literal["jsonl", "document", "empty", "more"]:
    """Which container the bytes read so far show (``"more"``: read on). ``body_keys``: the
    keys that make an object on one line a request body, not a JSONL record (the formats'
    own, ``_registry.body_keys``: for a format of one conversation per file, its record
    arrays too, ``messages`` or ``input``; for a format of one conversation per line, none,
    an object on one line being a record whatever its keys: the fine-tuning writer keeps a
    request's ``model``, ``max_tokens`` and ``system`` beside ``messages``, and a file of
    one such line was read as a request body, its messages refused as fine-tuning records)."""
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
    if isinstance(value, dict) and not value.keys().isdisjoint(body_keys):
        # A request body or dump written on one line: a document, if nothing follows it.
        rest = text[len(first):].strip()
        if rest:
            return "jsonl"
        return "document" if at_eof else "more"
    return "jsonl"




class Sniffer:
    """Reads the head of a file until :func:`sniff` can tell, and judges it again only when
    a chunk can change the verdict: the first bytes that are not whitespace, the end of the
    line they begin, something after that line, the end of the input. So a long first line,
    a long run of leading whitespace or of blank lines after a one-line document cost one
    join and one parse, not one a chunk (quadratic: a one-line request body followed by
    blank lines was re-parsed 324 times). Past ``max_line_bytes`` with the first line still
    open, it says ``"jsonl"``: the line splitter refuses the line, with its position."""

    def __init__(self, max_line_bytes: int, *, body_keys: frozenset[str] = REQUEST_KEYS) -> None:
        self.max_line_bytes = max_line_bytes
        self.body_keys = body_keys  # see sniff()
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
        kind = sniff(self.head, at_eof=not chunk, body_keys=self.body_keys)
        if kind == "more" and self._line_end < 0 and self._size > self.max_line_bytes:
            return "jsonl"
        return "auto" if kind == "more" else kind



def count_newlines(data: bytes | bytearray) -> int:
    """How many ``\n`` ``data`` holds. ``count`` compares byte by byte (about 8 instructions
    a byte); ``readlines`` finds each newline with ``memchr`` (under one a byte on lines of a
    kilobyte, about as much as ``count`` on lines of 20 bytes), and the lines it makes live no
    longer than this call."""
    lines = BytesIO(data).readlines()
    return len(lines) - (1 if lines and lines[-1][-1:] != b"\n" else 0)
