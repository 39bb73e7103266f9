"""JSON documents to records (sans-I/O): :class:`DocReader` pushes a document's bytes into
ijson's push parser and :class:`DocWalker` turns its events into records and meta values
(see ``_records``' docstring: "A JSON document"). Loaded at the first document: JSONL never
needs ijson.
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any

from .._errors import InputError, InvalidMessage, LimitExceeded
from ._records import (
    CONTAINER_PREFIXES,
    DEFAULT_MAX_DEPTH,
    DEFAULT_MAX_RECORD_BYTES,
    DOC_SLICE_BYTES,
    LONG_DIGITS,
    DocPlace,
    Meta,
    Record,
    lone_surrogate,
    nesting_at,
    past_double,
    too_deep,
    too_many_digits,
)
from ._registry import RECORD_ARRAYS
from ._scan import Cut, OpenToken, Slice, SurrogateScan, Where, bad_utf8, chars

__all__ = ["DocWalker", "DocReader", "PastDouble", "TooDeep", "as_float", "load_ijson", "parser_errors"]


def load_ijson() -> Any:
    """The ijson module, imported at the first JSON document rather than with this module:
    JSONL, the common case (and the command line's), never needs the parser (~3 ms of
    start-up: ijson picks its C backend when imported)."""
    import ijson  # type: ignore[import-untyped]  # ijson ships no type information

    return ijson


def parser_errors(ijson: Any) -> tuple[type[Exception], ...]:
    """What ijson's parser raises on bad input: its own errors, bad UTF-8, and an integer of
    more than :data:`MAX_INT_DIGITS` digits (Python's limit, which its C backend meets
    turning the digits into an int, and reports as a SystemError around the ValueError)."""
    return (ijson.JSONError, UnicodeDecodeError, ValueError, SystemError)



# -- JSON documents ---------------------------------------------------------------------------

# Arrays that hold the record stream, by path (the formats' own, from the registry), and the
# objects we descend into to find one: the document itself, and the way down to a dump's body.
_STREAMS = RECORD_ARRAYS
_DESCEND = frozenset({""} | {prefix[:at] for prefix in CONTAINER_PREFIXES for at, char in enumerate(prefix) if char == "."})


class TooDeep(Exception):
    """Raised by the walker at the first bracket past ``max_depth``; the reader positions it."""


class PastDouble(Exception):
    """Raised by the walker at a number beyond the range of a double (``place``: its event;
    None in the first pass, which places nothing)."""

    def __init__(self, place: DocPlace | None) -> None:
        self.place = place


def as_float(number: Decimal, place: DocPlace | None) -> float:
    """A document's number that is not an integer, as the float orjson would parse it to
    (the nearest double: ``float`` of the Decimal ijson gives, exact, is that); refused
    when it is beyond the range of a double (infinity, which orjson refuses too)."""
    value = float(number)
    if math.isinf(value):
        raise PastDouble(place)
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

    def walk(self, events: list[tuple[str, Any]], where: Slice) -> list[Record | Meta]:
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
                            raise TooDeep
                        value = {} if ev == "start_map" else []
                        top = open_[-1]
                        if type(top) is dict:
                            top[key] = value
                        else:
                            top.append(value)
                        open_.append(value)
                        continue
                    if type(value) is Decimal:  # a number that is not an integer (see DocReader)
                        value = as_float(value, DocPlace(where, n))
                    top = open_[-1]
                    if type(top) is dict:
                        top[key] = value
                    else:
                        top.append(value)
                    continue
                if ev == "start_map" or ev == "start_array":
                    depth += 1
                    if depth > max_depth:
                        raise TooDeep
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
            out.append(self._done(as_float(value, place) if type(value) is Decimal else value))

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


def _doc_error(exc: Exception, source: str, walker: DocWalker, where: dict[str, int]) -> InputError:
    # ijson says nothing of where; the start of the slice it was parsing is the best we know.
    text = str(exc)
    if isinstance(exc, load_ijson().IncompleteJSONError) and ("premature EOF" in text or "incomplete" in text.lower()):
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




class DocReader:
    """Bytes of a JSON document in, records out (sans-I/O), through ijson's push parser.

    ijson's own async functions are asyncio-only with its C backend; pushing chunks into
    ``basic_parse_coro`` works the same under any event loop, and for the sync reader too.
    Chunks are pushed in slices of :data:`DOC_SLICE_BYTES`, each walked before the next is
    parsed: that bounds the events held, and lets the depth and size limits stop a hostile
    file within a slice of where it turns hostile. Slices that only go on with a long string
    (or number) are held back and pushed together (:class:`OpenToken`: linear time, not
    quadratic); they are accounted for one by one all the same, so what comes out, and the
    errors and their positions, are those of pushing each.
    """

    def __init__(
        self, source: str, *, max_depth: int = DEFAULT_MAX_DEPTH, max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES
    ) -> None:
        self.source = source
        self.max_record_bytes = max_record_bytes
        self.walker = DocWalker(max_depth)
        ijson = load_ijson()
        self._errors = parser_errors(ijson)
        self._events = ijson.sendable_list()
        # Numbers as ijson's C backend reads them without use_float: an integer exact (with
        # use_float, past 64 bits it is an "integer overflow" error that stops the document),
        # anything else a Decimal, made a float by the walker (as_float). Floats are rare in a
        # chat history, and the walker's test for one replaces the one it made for a container.
        self._coro = ijson.basic_parse_coro(self._events, use_float=False)
        self._surrogates = SurrogateScan()
        self._where = Where()
        self._mark = 0  # offset from which the value now being read began to be consumed
        self._carried: Cut | None = None  # where the token the last slice cut began
        self._token = OpenToken()  # that token, and the slices of it held back from ijson
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
        out = self._drain(b"", Slice(b"", self._where, self._carried))
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
        where = Slice(piece, state, self._carried)
        out = self._drain(piece, where)
        state.advance(piece)
        self._carried = self._token.passed(where, state)
        self._count(out, piece)
        return out

    def _hold(self, piece: bytes) -> list[Record | Meta]:
        """A slice that only goes on with the token the last one cut, held back from the parser
        (:class:`OpenToken`). Pushed, it would have given no event and raised no error, and
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
            **(position.as_fields() if position is not None else {}),
            hint="Raise max_record_bytes if the record is genuine (or convert the file to JSONL)",
        )

    def _parse_error(self, exc: Exception, piece: bytes) -> InputError:
        # ijson fails on a lone low surrogate (and on bad UTF-8) that the scan may still hold
        # back, waiting for the bytes after it: judge those first, for the precise error.
        self._check_surrogates(piece, final=True, fed=True)
        bad = bad_utf8(piece)
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
            return self._carried.position().as_fields()
        found = LONG_DIGITS.search(piece)
        return state.at(piece, found.start() if found else 0)

    def _drain(self, piece: bytes, where: Slice) -> list[Record | Meta]:
        depth = self.walker.depth
        try:
            return self.walker.walk(self._events, where)
        except TooDeep:
            state = self._where
            at = nesting_at(piece, self.walker.max_depth, depth, state.in_string, state.escaped)
            raise too_deep(self.walker.max_depth, source=self.source, **state.at(piece, at or 0)) from None
        except PastDouble as exc:
            position = exc.place.resolve() if exc.place is not None else None
            raise past_double(source=self.source, **(position.as_fields() if position else {})) from None
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
            position = {"line": where.line, "column": where.line_chars + 1 - chars(rest[:-rel])}
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
