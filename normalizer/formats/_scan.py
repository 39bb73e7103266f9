"""Where a JSON document's events are in its bytes (sans-I/O): the byte-level half of the
document reader (``_document``; see ``_records``' docstring, "Where a record began").

ijson says nothing of where its events are. :class:`Slice` is one slice of the document as
it was pushed, able to say where its n-th event began (tokenizing the slice once, when a
position is first asked for); :class:`Where` follows the line, column and string state
across slices; :class:`OpenToken` holds back the slices of a long string or number (pushed
together: linear time); :class:`SurrogateScan` finds a lone surrogate escape, which ijson's
C backend would silently turn into ``?``.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass
from typing import Final

from ._records import STRING_REST, Position, count_newlines

__all__ = [
    "SurrogateScan", "Where", "Cut", "Slice", "OpenToken", "unescaped_quotes", "line_column", "chars",
    "bad_utf8", "scalar_tail", "opening_quote", "string_goes_on", "hex_owed", "utf8_tail", "digits_go_on",
]


_SURROGATE = re.compile(rb"\\u[dD][89abAB][0-9a-fA-F]{2}(\\u[dD][c-fC-F][0-9a-fA-F]{2})?|\\u[dD][c-fC-F][0-9a-fA-F]{2}")
_PAIR = 12  # bytes of an escaped pair: what must be in view to judge a high surrogate


class SurrogateScan:
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
        run = backslashes_before(window, end)
        return run + (self._run if run == end else 0)


def backslashes_before(data: bytes, end: int) -> int:
    """How many backslashes stand just before ``data[end]``, counted where they are (a copy
    of ``data`` up to each quote asked about would make a piece quadratic)."""
    start = end
    while start > 0 and data[start - 1] == 0x5C:  # nearly always zero steps
        start -= 1
    return end - start


class Where:
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
        at = line_column(self.line, self.line_chars, piece, rel)
        return {"line": at.line, "column": at.column}

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
        self.line_chars += chars(tail)
        self.offset += len(piece)

    def strings(self, piece: bytes) -> None:
        """The string state only, past ``piece`` (all the first pass of :class:`KeysScanner`
        needs: it places nothing)."""
        # Quotes not escaped flip the state; a quote is escaped by an odd run of backslashes.
        # Outside strings there are no backslashes in valid JSON, so runs only matter inside
        # strings.
        data = b"\\" + piece if self.escaped else piece
        self.quotes = unescaped_quotes(data)
        self.in_string ^= bool(self.quotes % 2)
        run = len(data) - len(data.rstrip(b"\\")) if data.endswith(b"\\") else 0
        self.escaped = bool(run % 2)


def unescaped_quotes(data: bytes) -> int:
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


#: Backslash runs before a quote counted pass by pass (see unescaped_quotes).


#: Backslash runs before a quote counted pass by pass (see unescaped_quotes).
_COUNTED_RUNS: Final = 8
#: A backslash and the byte it escapes (what unescaped_quotes removes in its one pass).
_ESCAPE: Final = re.compile(rb"\\.", re.DOTALL)


def line_column(line: int, line_chars: int, piece: bytes, rel: int) -> Position:
    """Line and column (in characters) of byte ``rel`` of a piece that begins on ``line``,
    after ``line_chars`` characters of it."""
    head = piece[:rel]
    newlines = head.count(b"\n")
    if newlines:
        return Position(line + newlines, chars(head[head.rfind(b"\n") + 1 :]) + 1)
    return Position(line, line_chars + chars(head) + 1)


def chars(data: bytes) -> int:
    """Characters of UTF-8 bytes: the bytes that are not continuation bytes (exact even when
    a piece boundary splits a character, unlike decoding with "replace")."""
    return len(data) - len(data.translate(None, _NOT_CONTINUATION))


# translate() deletes what it is given: delete all but the continuation bytes, count the rest.
_NOT_CONTINUATION = bytes(b for b in range(256) if not 0x80 <= b <= 0xBF)




def bad_utf8(piece: bytes) -> int | None:
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


def scalar_tail(piece: bytes) -> int:
    """Bytes of the scalar (number or literal) ``piece`` ends with, if it is one whose event
    ijson gives only with the next bytes: a number (yajl must see the byte after it to know
    it ended) or a cut literal. 0 otherwise. (Outside strings only.)"""
    tail = len(piece) - len(piece.rstrip(_SCALAR_BYTES))
    return tail if tail and piece[-tail:] not in _LITERALS else 0


def opening_quote(piece: bytes, escaped: bool, quotes: int | None = None) -> int | None:
    """Offset of the last unescaped quote of a piece that ends inside a string (so the quote
    that opened it), or None when the string began before the piece. ``escaped``: the byte
    before the piece was a backslash; ``quotes``: its unescaped quotes, if counted already."""
    if not (unescaped_quotes(b"\\" + piece if escaped else piece) if quotes is None else quotes):
        return None  # (a piece inside a long string: C-speed counts, not a step per quote)
    end = len(piece)
    while True:
        at = piece.rfind(b'"', 0, end)
        if at < 0:
            return None
        run = backslashes_before(piece, at)
        if run == at and escaped:
            run += 1  # the run goes on into the last piece
        if run % 2 == 0:
            return at
        end = at


@dataclass(frozen=True, slots=True)
class Cut:
    """Where a token cut by a slice boundary began: its first slice's bytes and state, and
    the offset there (the bytes only, not that slice: a chain of slices would hold the file)."""

    piece: bytes
    line: int
    line_chars: int
    offset: int

    def position(self) -> Position:
        return line_column(self.line, self.line_chars, self.piece, self.offset)


class Slice:
    """One slice of a document as ijson was given it, with the reading state at its first
    byte: enough to work out, later and only if asked, where each of its events began."""

    __slots__ = ("piece", "line", "line_chars", "in_string", "escaped", "carried", "_offsets")

    def __init__(self, piece: bytes, where: Where, carried: Cut | None) -> None:
        self.piece = piece
        self.line = where.line
        self.line_chars = where.line_chars
        self.in_string = where.in_string
        self.escaped = where.escaped
        # Where the token cut by this slice's start (a string, or a scalar: see scalar_tail)
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
        return line_column(self.line, self.line_chars, self.piece, self._offsets[event])

    def cut(self, in_string_at_end: bool, quotes: int | None = None) -> Cut | None:
        """Where the token this slice's end cuts began (the next slice's ``carried``);
        ``quotes``: the unescaped quotes of the slice, if counted already (Where.strings)."""
        piece = self.piece
        if in_string_at_end:
            at = opening_quote(piece, self.escaped, quotes)
            if at is None:
                return self.carried  # the string began before this slice
            return Cut(piece, self.line, self.line_chars, at)
        tail = scalar_tail(piece)
        if not tail:
            return None
        if tail == len(piece) and self.carried is not None:
            return self.carried  # the scalar began before this slice
        return Cut(piece, self.line, self.line_chars, len(piece) - tail)

    def _event_offsets(self) -> list[int]:
        """Offset of each event's token, in event order: the token cut by the slice's start
        first (its event comes with this slice; :meth:`position` places it where it began),
        then each token begun here, but for one cut by the end (its event comes later)."""
        piece = self.piece
        offsets: list[int] = []
        pos = 0
        if self.in_string:
            rest = STRING_REST.match(piece, 1 if self.escaped else 0)
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
        if last is not None and last.end() == len(piece) and scalar_tail(piece):
            offsets.pop()
        return offsets


class OpenToken:
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
            return string_goes_on(piece, escaped, self.hex_owed, self.utf8_tail)
        return self.number and piece.isdigit() and digits_go_on(self.number_tail)

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

    def passed(self, at: Slice, state: Where) -> Cut | None:
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
            self.hex_owed = hex_owed(piece, escaped, self.hex_owed)
            self.utf8_tail = utf8_tail(piece if len(piece) >= 3 else self.utf8_tail + piece)
            return
        self.hex_owed, self.utf8_tail = 0, b""
        if begins is None:
            self.number_tail = (self.number_tail + piece[-2:])[-2:]
        else:
            self.number = piece[begins] in b"-0123456789"
            self.number_tail = piece[max(begins, len(piece) - 2) :]


def string_goes_on(piece: bytes, escaped: bool, hex_owed: int, utf8_tail: bytes) -> bool:
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


def hex_owed(piece: bytes, escaped: bool, owed: int) -> int:
    """Hex digits still needed by a ``\\uXXXX`` escape that the end of ``piece`` (inside a
    string) cuts, else 0; ``escaped``, ``owed``: the same at its start (``escaped``: it
    begins after an escaping backslash)."""
    if len(piece) < owed:  # still inside the escape begun before it, if all hex digits
        return owed - len(piece) if _HEX_DIGITS.fullmatch(piece) else 0
    at = piece.rfind(b"u", max(len(piece) - 4, 0))
    if at < 0 or _HEX_DIGITS.fullmatch(piece, at + 1) is None:
        return 0
    run = backslashes_before(piece, at)
    if run == at and escaped:
        run += 1  # the run goes on into the piece before
    return 4 - (len(piece) - at - 1) if run % 2 else 0


def utf8_tail(data: bytes) -> bytes:
    """The first bytes of a UTF-8 character that ``data`` ends in the middle of, else b""."""
    for back in range(1, min(len(data), 3) + 1):
        byte = data[-back]
        if byte < 0x80:
            return b""
        if byte >= 0xC0:  # a first byte: how long is its character?
            length = 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
            return data[-back:] if back < length else b""
    return b""


def digits_go_on(tail: bytes) -> bool:
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
