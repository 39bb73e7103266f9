"""A long string (or number) in a JSON document costs time linear in its length, whatever
the chunks it comes in (a regression of the sweep of input shapes).

yajl, ijson's C parser, keeps the part of a token it was given and lexes it again from its
first byte with the next bytes pushed: pushed slice by slice, 16 MB of JSON text in a string
took 3.6 s, 10.7 s from a pipe (64 KiB reads). The readers now hold back the slices that only
go on with the token (``_scan.OpenToken``). Counted here: the bytes the lexer reads, not
the time. Checked against pushing every slice as it comes (the reader before, kept as the
reference by turning the holding off): the same records, the same errors word for word, at
the same positions, whatever the chunks.
"""

from __future__ import annotations

import io
import os
import sys
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from normalizer import InputError, LimitExceeded, Position
from normalizer.formats import _document, _keys
from normalizer.formats._document import DocReader
from normalizer.formats._keys import KeysScanner
from normalizer.formats._records import DOC_SLICE_BYTES, Meta, Record, position_of
from normalizer.formats._scan import OpenToken as _OpenToken
from normalizer.formats._scan import Where as _Where
from normalizer.formats._scan import digits_go_on as _digits_go_on
from normalizer.formats._scan import hex_owed as _hex_owed
from normalizer.formats._scan import string_goes_on as _string_goes_on
from normalizer.formats._scan import utf8_tail as _utf8_tail

KB = 1024
MB = 1024 * KB
HEAD = b'[{"role": "user", "content": "'
TAIL = b'"}]'
# A tool's output as JSON text: quotes, newlines and a non-ASCII character escaped or not.
TEXT = b'    print(\\"r\\u00e9sum\\u00e9\\", x) # caf\xc3\xa9 \xe6\xbc\xa2\\n'


def text(n: int, unit: bytes = TEXT) -> bytes:
    """``n`` bytes of string content made of ``unit``, cut where no escape or character is."""
    body = unit * (n // len(unit))
    return body + b"x" * (n - len(body))


def pieces(data: bytes, sizes: Sequence[int] | None) -> Iterator[bytes]:
    """``data`` in chunks of the sizes ``sizes`` cycles through (None: at once)."""
    if sizes is None:
        yield data
        return
    at = n = 0
    while at < len(data):
        size = sizes[n % len(sizes)]
        yield data[at : at + size]
        at, n = at + size, n + 1


class Lexed:
    """ijson's coroutine, counting the bytes its lexer reads: at each push, those pushed and
    those of the long token still open before them, which yajl reads again from the first
    (``opens``: the token's first byte; ``closes``: how many bytes yajl must have to end it,
    the one after a number included)."""

    def __init__(self, coro: Any, opens: int, closes: int) -> None:
        self.coro, self.opens, self.closes = coro, opens, closes
        self.pushed = self.read = self.pushes = 0

    def send(self, data: bytes) -> None:
        self.pushes += 1
        if self.opens < self.pushed < self.closes:
            self.read += self.pushed - self.opens
        self.read += len(data)
        self.pushed += len(data)
        self.coro.send(data)

    def close(self) -> None:
        self.coro.close()


def pushing_each_slice(mp: pytest.MonkeyPatch) -> None:
    """The reader as it was: every slice pushed as it comes (nothing goes on with a token)."""
    mp.setattr(_OpenToken, "goes_on", lambda self, piece, in_string, escaped: False)


def lexed(data: bytes, opens: int, closes: int, sizes: Sequence[int] | None, *, held: bool = True) -> Lexed:
    """The lexer's work for ``data`` (whose long token is ``data[opens:closes]``) fed in chunks;
    the records it gives are those of ``data`` at once."""
    with pytest.MonkeyPatch.context() as mp:
        if not held:
            pushing_each_slice(mp)
        doc = DocReader("doc.json")
        lex = doc._coro = Lexed(doc._coro, opens, closes)
        out: list[Record | Meta] = []
        for piece in pieces(data, sizes):
            out += doc.feed(piece)
        out += doc.close()
    assert [r.value for r in out] == orjson.loads(data)
    return lex


def outcome(data: bytes, sizes: Sequence[int] | None, *, held: bool = True, slice_bytes: int = DOC_SLICE_BYTES,
            **limits: Any) -> tuple[Any, ...]:  # fmt: skip
    """What a DocReader gives for ``data`` fed in chunks: its records and meta values with
    their positions, then its error (class, words, position) if it raises one."""
    with pytest.MonkeyPatch.context() as mp:
        if not held:
            pushing_each_slice(mp)
        mp.setattr(_document, "DOC_SLICE_BYTES", slice_bytes)
        mp.setattr(_keys, "DOC_SLICE_BYTES", slice_bytes)
        doc = DocReader("doc.json", **limits)
        out: list[Record | Meta] = []
        error: tuple[Any, ...] = ()
        try:
            for piece in pieces(data, sizes):
                out += doc.feed(piece)
            out += doc.close()
        except InputError as exc:
            error = (type(exc).__name__, str(exc), exc.line, exc.column)
    return [(type(r).__name__, r.value, position_of(r.place)) for r in out], error


def keys(data: bytes, sizes: Sequence[int] | None, *, held: bool = True, slice_bytes: int = DOC_SLICE_BYTES) -> Any:
    """What the first pass over a request body (KeysScanner) finds in ``data`` fed in chunks."""
    with pytest.MonkeyPatch.context() as mp:
        if not held:
            pushing_each_slice(mp)
        mp.setattr(_document, "DOC_SLICE_BYTES", slice_bytes)
        mp.setattr(_keys, "DOC_SLICE_BYTES", slice_bytes)
        scanner = KeysScanner(["system"])
        for piece in pieces(data, sizes):
            scanner.feed(piece)
        return scanner.close()


# -- the work, counted ------------------------------------------------------------------------


@pytest.mark.parametrize("size", [256 * KB, 1 * MB, 4 * MB])
@pytest.mark.parametrize("chunk", [64 * KB, 256 * KB, 1 * MB])
def test_a_long_string_is_lexed_a_few_times_not_once_a_slice(size: int, chunk: int) -> None:
    body = text(size)
    data = HEAD + body + TAIL
    lex = lexed(data, len(HEAD) - 1, len(HEAD) + len(body) + 1, [chunk])
    assert lex.read <= 4 * len(data)  # about 3: held bytes as many as those pushed, then once more
    # Each slice pushed as it came: the string read again at each, N²/2 over the slice. At 4 MB,
    # 9.5 times the document in 256 KiB slices, 33.5 times in a pipe's 64 KiB; at 16 MB 33.5
    # and 129.5 (3.6 s and 10.7 s for such text).
    before = lexed(data, len(HEAD) - 1, len(HEAD) + len(body) + 1, [chunk], held=False)
    slice_ = min(chunk, DOC_SLICE_BYTES)
    assert before.read >= len(data) * (len(data) // slice_) // 2
    assert lex.pushes <= 2 * (len(data) // slice_).bit_length() + 2  # (before: one a slice)


@pytest.mark.parametrize("sizes", [[1], [7], [1, 2, 3, 5, 8, 13], [4096]])
def test_small_chunks_cost_no_more(sizes: list[int]) -> None:
    # (Fed a byte at a time, 3,000 bytes of string were read 1,487 times over.)
    body = text(3000)
    data = HEAD + body + TAIL
    lex = lexed(data, len(HEAD) - 1, len(HEAD) + len(body) + 1, sizes)
    assert lex.read <= 4 * len(data)


def test_a_long_number_is_lexed_a_few_times_too() -> None:
    # A byte at a time: 4,000 pushes of a number read again from its first digit (a
    # fraction: yajl refuses an integer past 64 bits).
    data = b'[{"role": "user", "content": "x", "n": 0.' + b"1" * 4000 + b"}]"
    lex = lexed(data, data.index(b"0."), data.index(b"}]") + 1, [1])  # (yajl ends it at the "}")
    assert lex.read <= 4 * len(data)
    assert lexed(data, data.index(b"0."), data.index(b"}]") + 1, [1], held=False).read > 1000 * len(data)
    assert outcome(data, [1]) == outcome(data, None)


def test_the_first_pass_over_a_request_body_holds_the_string_too() -> None:
    # A body whose system key comes after its messages is read twice: the first pass
    # (KeysScanner) pushed slice by slice too.
    body = text(2 * MB)
    data = b'{"model": "m",\n "messages": [{"role": "user", "content": "' + body + b'"}],\n "system": "be brief"}'
    opens = data.index(b'"content": "') + len(b'"content": ')
    real = _document.load_ijson().basic_parse_coro

    def scanned(held: bool) -> Lexed:
        made: list[Lexed] = []

        def coro(events: Any, **kwargs: Any) -> Lexed:
            made.append(Lexed(real(events, **kwargs), opens, opens + len(body) + 2))
            return made[-1]

        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(_document.load_ijson(), "basic_parse_coro", coro)
            assert keys(data, [64 * KB], held=held) == {"system": "be brief"}
        return made[0]

    assert scanned(held=True).read <= 4 * len(data)
    assert scanned(held=False).read > 10 * len(data)  # (16.5 times)


def test_through_a_pipe(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # `cat f.json | chatnorm repair -`: the command reads what the pipe has (read1, 64 KiB at
    # most on Linux), not CHUNK_BYTES, so the reader is fed chunks smaller than a slice.
    from normalizer.cli._main import main

    body = text(4 * MB)
    data = HEAD + body + TAIL
    fed: list[int] = []
    made: list[Lexed] = []
    real_feed, real_init = DocReader.feed, DocReader.__init__

    def feed(self: DocReader, chunk: bytes) -> list[Record | Meta]:
        fed.append(len(chunk))
        return real_feed(self, chunk)

    def init(self: DocReader, *args: Any, **kwargs: Any) -> None:
        real_init(self, *args, **kwargs)
        made.append(Lexed(self._coro, len(HEAD) - 1, len(HEAD) + len(body) + 1))
        self._coro = made[-1]

    monkeypatch.setattr(DocReader, "feed", feed)
    monkeypatch.setattr(DocReader, "__init__", init)
    read, write = os.pipe()

    def writer() -> None:
        with open(write, "wb") as out:
            out.write(data)

    thread = threading.Thread(target=writer)
    thread.start()
    with io.TextIOWrapper(open(read, "rb")) as stdin:
        monkeypatch.setattr(sys, "stdin", stdin)
        assert main(["repair", "-q", "-", "-o", str(tmp_path / "out.jsonl")]) == 0
    thread.join()
    assert [orjson.loads(line) for line in (tmp_path / "out.jsonl").read_bytes().splitlines()] == orjson.loads(data)
    assert len(fed) > len(data) // DOC_SLICE_BYTES + 1  # smaller chunks than slices
    assert made[0].read <= 4 * len(data)


# -- the same records and errors, at the same positions -----------------------------------------

# Pieces of string content, good and bad (a control character, a bad escape, bytes that are
# not UTF-8 or that only yajl takes, a lone surrogate escape, a quote that ends the string).
ATOMS = [b"x", b"y" * 40, b"\\n", b'\\"', b"\\\\", b"\\/", b"\\u00e9", b"\\ud83d\\ude00", b"\xc3\xa9", b"\xe6\xbc\xa2",
         b"\xf0\x9f\x98\x80", b"\\ud800", b"\xff", b"\xc3", b"\x01", b"\t", b"\\q", b"\\u12G4", b"\xed\xa0\x80", b"\xc0\x80",
         b'"', b"\\", b"u", b"\\u", b" ", b"\n", b"12"]  # fmt: skip
NUMBER = [b"0", b"1", b"9", b"-", b".", b"e", b"E", b"+", b"x"]
OPENINGS = [
    HEAD,
    b'{"model": "m",\n "messages": [{"role": "user", "content": "',
    b'[\n  {"role": "user", "content": "a", "n": ',  # a number (or what comes instead)
    b'[1, "',
]
ENDINGS = [TAIL, b'"}],\n "system": "s"}', b"}]", b"", b"]", b'"]']


@settings(max_examples=400, deadline=None)
@given(
    opening=st.sampled_from(OPENINGS),
    atoms=st.lists(st.sampled_from(ATOMS + NUMBER), max_size=30),
    times=st.integers(1, 6),
    ending=st.sampled_from(ENDINGS),
    sizes=st.lists(st.integers(1, 40), min_size=1, max_size=6),
    slice_bytes=st.sampled_from([1, 3, 16, 64, DOC_SLICE_BYTES]),
    limit=st.sampled_from([None, 8, 40, 200]),
)
def test_whatever_the_chunks_and_slices_the_outcome_is_that_of_pushing_each_slice(
    opening: bytes, atoms: list[bytes], times: int, ending: bytes, sizes: list[int], slice_bytes: int, limit: int | None
) -> None:
    data = opening + b"".join(atoms) * times + ending
    limits = {} if limit is None else {"max_record_bytes": limit}
    got = outcome(data, sizes, slice_bytes=slice_bytes, **limits)
    assert got == outcome(data, sizes, held=False, slice_bytes=slice_bytes, **limits)
    assert keys(data, sizes, slice_bytes=slice_bytes) == keys(data, sizes, held=False, slice_bytes=slice_bytes)


LONG = text(3 * MB, b"0123456789abcdef" * 3 + b'\\"ok\\"\\n')  # ASCII: a bad byte's column is exact
CHUNKINGS = [None, [64 * KB], [256 * KB], [1 * MB], [100_003, 7, 65_536, 1_000_001]]


THIRD = b'  {"role": "user", "content": "'
AT = len(THIRD) + 1  # the column of the third line's string content


def line3(middle: bytes) -> bytes:
    return b'[\n  {"role": "user", "content": "hi"},\n' + THIRD + middle


@pytest.mark.parametrize(
    "data, what, where",
    [
        (line3(LONG[: 2 * MB] + b"\xff" + LONG + TAIL), "not UTF-8 text (byte 0xff)", (3, AT + 2 * MB)),
        (line3(LONG[: 2 * MB] + b"\\ud800" + LONG + TAIL),
         "lone surrogate \\ud800 in a string (half of a UTF-16 pair: not a character)", (3, AT + 2 * MB)),
        (line3(LONG), "the JSON document ends too early (after record 1)", (3, AT + len(LONG))),
    ],
    ids=["bad-utf8", "lone-surrogate", "unterminated"],
)  # fmt: skip
def test_an_error_in_a_long_string_is_placed_exactly_whatever_the_chunks(data: bytes, what: str, where: tuple[int, int]) -> None:
    for sizes in CHUNKINGS:
        records, error = outcome(data, sizes)  # (the records a chunk gives are lost with its error)
        assert (error[1].split(": ", 1)[1].startswith(what), error[2:]) == (True, where), sizes
        assert (records, error) == outcome(data, sizes, held=False), sizes


@pytest.mark.parametrize("bad", [b"\x01", b"\\q", b"\\u12G4", b"\xed\xa0\x80"], ids=["control", "escape", "hex", "encoded-surrogate"])
def test_what_yajl_refuses_in_a_long_string_is_refused_as_before(bad: bytes) -> None:
    data = line3(LONG[: 2 * MB] + bad + LONG + TAIL)
    for sizes in CHUNKINGS:
        records, error = outcome(data, sizes)
        assert error and error[0] in ("InputError", "InvalidMessage"), sizes
        assert (records, error) == outcome(data, sizes, held=False), sizes


def test_a_string_past_max_record_bytes_is_refused_as_before_and_as_soon() -> None:
    data = HEAD + text(10 * MB, b"x") + TAIL  # (ASCII: a column is a byte)
    for sizes in CHUNKINGS:
        got = outcome(data, sizes, max_record_bytes=1_000_000)
        assert got == outcome(data, sizes, held=False, max_record_bytes=1_000_000), sizes
        assert got[1][0] == "LimitExceeded"
    # At once (in 256 KiB slices): refused at the end of the 4th slice, 1,048,576 bytes read.
    assert outcome(data, None, max_record_bytes=1_000_000)[1][2:] == (1, 4 * DOC_SLICE_BYTES + 1)
    # What is held back stays under the limit (and a slice), and the error comes with the
    # chunk that crosses it.
    doc = DocReader("doc.json", max_record_bytes=1_000_000)
    held = 0
    with pytest.raises(LimitExceeded):
        for piece in pieces(data, [64 * KB]):
            doc.feed(piece)
            held = max(held, doc._token.held_bytes)
    assert 0 < held <= 1_000_000 + DOC_SLICE_BYTES
    assert doc.consumed <= 1_000_000 + 64 * KB


def test_records_around_long_strings_are_placed_as_before() -> None:
    # Long strings and numbers among short records, on several lines, cut everywhere.
    record = b'{"role": "user", "content": "' + text(300 * KB) + b'", "n": 0.' + b"7" * 3000 + b"}"
    data = b"[\n " + b",\n {\"role\": \"user\", \"content\": \"x\"},\n ".join([record] * 3) + b"\n]"
    expected = outcome(data, None)
    assert [position_of_ for _, _, position_of_ in expected[0]] == [Position(2, 2), Position(3, 2), Position(4, 2),
                                                                    Position(5, 2), Position(6, 2)]  # fmt: skip
    for sizes in CHUNKINGS[1:] + [[1000], [99_999]]:
        assert outcome(data, sizes) == expected == outcome(data, sizes, held=False), sizes


# -- what is held: only what the lexer would take without a word --------------------------------

STRING_BYTES = st.lists(st.sampled_from(ATOMS[:-4] + [b"u", b"0", b"a", b"\\u0", b"\\u00", b"\\u00e", b"\xe6", b"\xe6\xbc"]), max_size=12)


def parser_after(prefix: bytes) -> tuple[Any, list[Any]] | None:
    """ijson's coroutine fed ``prefix`` (None: it refused it), and its events."""
    ijson = _document.load_ijson()
    events = ijson.sendable_list()
    coro = ijson.basic_parse_coro(events, use_float=True)
    try:
        coro.send(prefix)
    except (ijson.JSONError, UnicodeDecodeError):
        return None
    return coro, events


@settings(max_examples=1500, deadline=None)
@given(STRING_BYTES, STRING_BYTES, st.integers(0, 3))
def test_a_piece_said_to_go_on_with_a_string_gives_nothing_and_raises_nothing(before: list[bytes], after: list[bytes], cut: int) -> None:
    prefix = b'["' + b"".join(before)
    piece = b"".join(after)[cut:] or b"z"
    state = _Where()
    state.strings(prefix)
    parser = parser_after(prefix)
    if parser is None or not state.in_string:
        return
    if _string_goes_on(piece, state.escaped, _hex_owed(prefix, False, 0), _utf8_tail(prefix)):
        coro, events = parser
        del events[:]
        coro.send(piece)  # no error
        assert list(events) == []


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(NUMBER[:-1] + [b"00", b"12"]), min_size=1, max_size=6), st.text("0123456789", min_size=1, max_size=4))
def test_digits_said_to_go_on_with_a_number_give_nothing_and_raise_nothing(number: list[bytes], digits: str) -> None:
    token = b"".join(number)
    parser = parser_after(b"[" + token)
    if parser is None or token[:1] not in b"-0123456789" or not _digits_go_on(token[-2:]):
        return
    coro, events = parser
    del events[:]
    coro.send(digits.encode())
    assert list(events) == []


@settings(max_examples=500, deadline=None)
@given(STRING_BYTES, st.lists(st.integers(1, 7), min_size=1, max_size=8))
def test_the_state_a_reader_keeps_at_a_slice_end_is_that_of_the_whole_string(content: list[bytes], sizes: list[int]) -> None:
    # Followed slice by slice, the escape and the character a string's end cuts are those
    # found on all of the string at once.
    data = b'["' + b"".join(content)
    if parser_after(data) is None:
        return  # refused where it goes wrong, whatever state comes after
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_document, "DOC_SLICE_BYTES", 2)
        mp.setattr(_keys, "DOC_SLICE_BYTES", 2)
        doc = DocReader("doc.json")
        for piece in pieces(data, sizes):
            try:
                doc.feed(piece)
            except InputError:
                return  # a lone surrogate
            seen = data[: doc.consumed]
            if doc._where.in_string:
                assert (doc._token.hex_owed, doc._token.utf8_tail) == (_hex_owed(seen, False, 0), _utf8_tail(seen))


@pytest.mark.parametrize(
    "data, owed",
    [(b"a\\u", 4), (b"a\\u0", 3), (b"a\\u00e", 1), (b"a\\u00e9", 0), (b"a\\\\u00", 0), (b"a\\\\\\u00", 2), (b"u12", 0)],
)
def test_hex_owed(data: bytes, owed: int) -> None:
    assert _hex_owed(data, False, 0) == owed
    assert _hex_owed(b"u12", True, 0) == 2  # the backslash ended the piece before
    assert _hex_owed(b"1", False, 3) == 2


def test_utf8_tail() -> None:
    assert [_utf8_tail(b) for b in (b"ab", b"a\xc3", b"\xc3\xa9", b"\xe6\xbc", b"\xe6\xbc\xa2", b"\xf0\x9f\x98", b"\x98")] == [
        b"", b"\xc3", b"", b"\xe6\xbc", b"", b"\xf0\x9f\x98", b""]  # fmt: skip

