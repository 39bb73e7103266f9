"""``chatnorm repair`` telling a session from the rest (``batch.detect.peek``): the head of
an input is judged once, read ahead no further than it must, and given back whole."""

from __future__ import annotations

import orjson
import pytest


def peek(data: bytes, monkeypatch: pytest.MonkeyPatch, chunk: int | None = None) -> tuple[str | None, int, bytes]:
    """``_peek`` on ``data`` (read ``chunk`` bytes at a time, as a pipe gives them):
    the format, how many times the head was judged, and what the input then gives (all of
    it, from the start)."""
    import io

    from normalizer.batch import detect
    from normalizer.batch.streams import Input
    from normalizer.formats import _records

    judged = []
    real = _records.sniff

    def counting_sniff(head: bytes, at_eof: bool, **kwargs: bool) -> str:
        judged.append(len(head))
        return real(head, at_eof, **kwargs)

    class Pipe(io.BytesIO):
        def read1(self, n: int = -1) -> bytes:
            return self.read(min(n, chunk) if chunk and n > 0 else n)

    monkeypatch.setattr(_records, "sniff", counting_sniff)
    src = Input(Pipe(data), "x", None)
    fmt = detect.peek(src).fmt
    rest = b"".join(iter(lambda: src.read(1 << 16), b""))
    return fmt, len(judged), rest


def test_a_long_one_line_document_is_judged_once_when_its_line_ends(monkeypatch: pytest.MonkeyPatch):
    """A request body written on one line (as SDKs write JSON) is read once and judged at
    its end, not joined and judged again at every chunk (that was quadratic: 1.7 s for a
    27 MB body, 0.9 s now)."""
    from normalizer.formats._records import CHUNK_BYTES

    body = orjson.dumps({"model": "m", "messages": [{"role": "user", "content": "x" * 1000}] * 8000})
    assert len(body) > 30 * CHUNK_BYTES and b"\n" not in body
    fmt, judged, rest = peek(body, monkeypatch)
    assert (fmt, judged, rest) == (None, 2, body)  # the first chunk, then the end of the line
    fmt, judged, rest = peek(body + b"\n", monkeypatch)
    # the first chunk, the one that ends the line, and the end (a body on one line is a
    # document only when nothing follows it)
    assert (fmt, judged, rest) == (None, 3, body + b"\n")


def test_a_session_whose_first_line_is_long_is_still_told(monkeypatch: pytest.MonkeyPatch):
    """A Claude Code session whose first line carries a large tool result: read on to the
    end of that line (and the lines after it), then told as the session it is."""
    from normalizer.formats._records import CHUNK_BYTES

    first = orjson.dumps({"type": "user", "uuid": "u1", "parentUuid": None, "sessionId": "s", "timestamp": "t",
                          "message": {"role": "user", "content": "y" * (5 * CHUNK_BYTES)}})
    second = orjson.dumps({"type": "assistant", "uuid": "a1", "parentUuid": "u1", "sessionId": "s", "timestamp": "t",
                           "message": {"role": "assistant", "content": [{"type": "text", "text": "ok"}]}})
    data = first + b"\n" + second + b"\n"
    fmt, judged, rest = peek(data, monkeypatch)
    assert fmt == "claude-code" and rest == data
    assert judged == 2  # the first chunk, then the chunk that ends the first line


def test_a_first_line_past_the_line_limit_is_left_to_the_chat_reader(monkeypatch: pytest.MonkeyPatch):
    from normalizer.batch import detect
    from normalizer.batch.streams import Input

    monkeypatch.setattr(detect, "DEFAULT_MAX_LINE_BYTES", 3 * detect.CHUNK_BYTES)
    data = b'{"messages": "' + b"z" * (10 * detect.CHUNK_BYTES) + b'"}'
    fmt, judged, rest = peek(data, monkeypatch)
    assert (fmt, rest) == (None, data)
    assert judged == 1  # the first chunk; past the limit the line is the line reader's to refuse


def test_blank_lines_between_records_are_passed_over_not_read_64_mib_ahead(monkeypatch: pytest.MonkeyPatch):
    """The first records are the first lines that are not blank: a JSONL file with a blank
    line after each record is told from its first 16 records (blank lines used to count,
    so 8 records never made 16 and the peek read on to 64 MiB, joining the head again at
    every chunk: 10.7 s for 73 MB, 38 s on a pipe)."""
    from normalizer.batch import detect
    from normalizer.batch.streams import Input

    line = orjson.dumps({"role": "user", "content": "x" * 200}) + b"\n\n"
    data = line * 50_000
    consumed = []
    real = detect.FirstRecords.feed

    def feed(self: detect.FirstRecords, data: bytes, *, final: bool) -> object:
        consumed.append(len(data))
        return real(self, data, final=final)

    monkeypatch.setattr(detect.FirstRecords, "feed", feed)
    fmt, judged, rest = peek(data, monkeypatch, chunk=1 << 16)
    assert (fmt, judged, rest) == ("chat", 1, data)
    assert sum(consumed) == 1 << 16  # the first chunk held 16 records


def test_leading_whitespace_and_blank_lines_after_a_body_are_judged_once(monkeypatch: pytest.MonkeyPatch):
    """Whitespace before a document, and blank lines after a one-line body, change nothing:
    the head is judged when its first content comes, when that line ends, and at the end,
    not at every chunk (a one-line body followed by blank lines was judged 324 times)."""
    body = orjson.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]})
    spaced = b" \n" * 200_000 + b'[{"role": "user", "content": "hi"}]\n'
    fmt, judged, rest = peek(spaced, monkeypatch, chunk=1 << 16)
    assert (fmt, judged, rest) == (None, 1, spaced)  # "[": a document, at its first byte
    fmt, judged, rest = peek(body + b"\n" * 500_000, monkeypatch, chunk=1 << 16)
    assert (fmt, judged, rest) == (None, 2, body + b"\n" * 500_000)  # its line, then the end
    fmt, judged, rest = peek(body + b"\n" * 500_000 + b'{"role": "user", "content": "x"}\n', monkeypatch,
                             chunk=1 << 16)
    from normalizer.formats._detect import detect_format

    expected = detect_format([orjson.loads(body), {"role": "user", "content": "x"}])
    assert (fmt, judged) == (expected, 2)  # its line, then the next record: JSONL after all
