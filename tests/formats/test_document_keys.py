"""A JSON document's own keys (its top-level values beside the record array) cost linear time
and bounded memory, whatever their number.

Regressions of an audit: with ``format="auto"`` every key waiting for the format to be
detected made the reader look at all of them again (``_detect`` rebuilt the list of waiting
records on each: 20,000 keys took 12.8 s, 100,000 after the messages 221 s), and what waited
was unbounded; ``DocWalker.top`` kept every top-level value after the record array began, and
the message readers kept every key in an ``extra`` they never hand out (1M keys, a 47 MB file:
202 MB); with no record array, the object (one record) was never bounded as a whole.

The bounds are ``max_record_bytes``: the keys read while the format is unknown and no record
has come (past it the format is decided from the records read, or refused if none came), the
object of a document with no record array (one record, from its ``{`` to its ``}``), and the
keys a conversation reader holds for the conversation's ``extra`` (by their keys' and
strings' length). Each refuses exactly one byte past.
"""

from __future__ import annotations

import io
import tracemalloc
from pathlib import Path
from typing import Any

import orjson
import pytest

from normalizer import LimitExceeded, Report
from normalizer.formats import read_conversations, read_messages
from normalizer.formats._stream_state import held_size as _held_size
from normalizer.formats._reader import Limits, Reader
from normalizer.formats._document import DocReader

MESSAGES = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "ok"}]


def _keys(n: int, size: int = 8) -> list[bytes]:
    return [b'"k%d": "%s"' % (i, b"x" * size) for i in range(n)]


def document(n: int, where: str = "before", messages: list[dict[str, Any]] = MESSAGES, size: int = 8) -> bytes:
    """An object with ``n`` keys before or after its ``messages`` array, one a line."""
    stream = b'"messages": ' + orjson.dumps(messages)
    keys = _keys(n, size)
    parts = keys + [stream] if where == "before" else [stream] + keys
    return b"{" + b",\n".join(parts) + b"}"


class Trickle(io.BytesIO):
    """A file that gives one byte a read: every byte is a chunk, so a limit is checked at each."""

    def read(self, n: int | None = -1) -> bytes:
        return super().read(1 if n is not None and n > 0 else n)


# -- linear work -------------------------------------------------------------------------------


@pytest.mark.parametrize("where", ["before", "after"])
def test_detection_looks_once_a_record_not_once_a_key(monkeypatch: pytest.MonkeyPatch, where: str) -> None:
    calls = [0]
    detect = Reader._detect

    def counted(self: Reader, **kwargs: Any) -> None:
        calls[0] += 1
        detect(self, **kwargs)

    monkeypatch.setattr(Reader, "_detect", counted)
    seen = []
    for n in (100, 20_000):
        calls[0] = 0
        stream = read_messages(io.BytesIO(document(n, where)))
        assert list(stream) == MESSAGES
        assert stream.format == "chat"
        seen.append(calls[0])
    assert seen[0] == seen[1] <= len(MESSAGES) + 2  # the same few looks, whatever the keys


def test_waiting_records_are_not_gathered_again_for_each_key(monkeypatch: pytest.MonkeyPatch) -> None:
    # What detection looks at is kept as the records come: at most one per record.
    reader = Reader(report=Report())
    out = reader.feed(document(5_000, "before")) + reader.set_plan({}) + reader.close()
    assert [e for e in out if type(e) is dict] == MESSAGES
    assert reader._waiting == [] and reader._pending == []


# -- the keys read while the format is unknown -------------------------------------------------


def _first_record_end(data: bytes) -> int:
    """Bytes up to and including the one that completes the first record."""
    return data.index(b"}", data.index(b'"messages"')) + 1


def test_keys_before_any_record_refused_one_byte_past() -> None:
    messages = [{"role": "user", "content": f"m{i}"} for i in range(20)]
    data = document(12, "before", messages)
    read = _first_record_end(data) - 1  # the bytes read while only keys had come
    # At the limit: the format is decided from the records as they come (or at the limit).
    assert list(read_messages(Trickle(data), max_record_bytes=read)) == messages
    with pytest.raises(LimitExceeded) as caught:
        list(read_messages(Trickle(data), max_record_bytes=read - 1))
    exc = caught.value
    assert exc.limit == "max_record_bytes" and exc.value == read - 1
    assert exc.line is not None and exc.column is not None and exc.hint and "--from" in exc.hint
    # Told the format, nothing waits for it: the same keys are read (read_messages keeps none).
    assert list(read_messages(Trickle(data), "chat", max_record_bytes=read - 1)) == messages


def test_keys_after_few_records_decide_with_what_was_read() -> None:
    # Two chat messages settle nothing (detection wants more); the keys after them waited
    # for the end of the document. Past the limit the format is decided from the two.
    data = document(3_000, "after")
    limit = 4096
    reader = Reader(report=Report(), limits=Limits(max_record_bytes=limit))
    out: list[Any] = []
    most = 0
    for i in range(0, len(data), 512):
        out += reader.feed(data[i : i + 512])
        while reader.wants_plan:
            out += reader.set_plan({})
        most = max(most, len(reader._pending))
    assert reader.format == "chat"  # before the end of the document
    out += reader.close()
    assert [e for e in out if type(e) is dict] == MESSAGES
    assert most < limit // 10  # the keys of a limit's worth of bytes at most (each is 14 or more)
    unlimited = list(read_messages(io.BytesIO(data)))
    assert unlimited == MESSAGES


# -- a document with no record array: one record -----------------------------------------------


def _object(n: int) -> bytes:
    return b'{"role": "user", "content": "hi",\n' + b",\n".join(_keys(n)) + b"}"


@pytest.mark.parametrize("fmt", ["chat", "auto"])
def test_object_without_records_refused_one_byte_past(fmt: str) -> None:
    obj = _object(50)
    data = b"  \n " + obj + b"\n\n"  # whitespace around it is not the record's
    size = len(obj)
    assert [m["content"] for m in read_messages(io.BytesIO(data), fmt, max_record_bytes=size)] == ["hi"]
    assert len(list(read_messages(Trickle(data), fmt, max_record_bytes=size))) == 1
    for source in (io.BytesIO(data), Trickle(data)):
        with pytest.raises(LimitExceeded) as caught:
            list(read_messages(source, fmt, max_record_bytes=size - 1))
        assert caught.value.limit == "max_record_bytes" and caught.value.value == size - 1
        assert caught.value.line is not None
    with pytest.raises(LimitExceeded) as caught:
        list(read_messages(io.BytesIO(data), "chat", max_record_bytes=size - 1))
    assert (caught.value.line, caught.value.column) == (2, 2)  # where the object (the record) begins


def test_long_object_is_let_go_while_read(tmp_path: Path) -> None:
    # Longer than a slice: its values are let go as soon as it is past the limit.
    reader = DocReader("<doc>", max_record_bytes=100_000)
    reader.feed(_object(40_000))
    assert reader.walker.top_over and reader.walker.top == {}
    with pytest.raises(LimitExceeded, match="record 0"):
        reader.close()


def test_keys_are_not_kept_once_the_stream_began() -> None:
    reader = DocReader("<doc>")
    metas = reader.feed(document(1_000, "after"))
    assert len(metas) > 1_000  # the messages and every key, given out
    assert reader.walker.top == {}
    reader = DocReader("<doc>")
    reader.feed(document(1_000, "before"))
    assert reader.walker.top == {}  # the keys before it too, once it began
    assert reader.close() == []


# -- the keys a conversation holds (extra) -----------------------------------------------------


def test_extra_refused_one_byte_past() -> None:
    data = document(5, "after", size=100)
    held = 5 * (len("k0") + 100)
    conversation = next(read_conversations(io.BytesIO(data), "chat", max_record_bytes=held))
    assert list(conversation.messages) == MESSAGES
    assert conversation.extra == {f"k{i}": "x" * 100 for i in range(5)}
    with pytest.raises(LimitExceeded) as caught:
        conversation = next(read_conversations(io.BytesIO(data), "chat", max_record_bytes=held - 1))
        list(conversation.messages)
    exc = caught.value
    assert exc.limit == "max_record_bytes" and exc.value == held - 1
    assert (exc.line, exc.column) == (6, 7)  # the last key's value
    assert "'k4'" in str(exc)
    # The message readers hand no extra out, and keep none.
    assert list(read_messages(io.BytesIO(data), "chat", max_record_bytes=held - 1)) == MESSAGES


def test_held_size_counts_keys_and_strings() -> None:
    assert _held_size("abc") == 3
    assert _held_size([{"name": "x", "n": 5}, None, True]) == len("name") + 1 + len("n") + 1 + 4 + 4
    assert _held_size({"a": {"bb": [1.5, "cc"]}}) == 1 + 2 + 3 + 2
    assert _held_size(2**70) == len(str(2**70))  # past 64 bits: its repr


# -- memory ------------------------------------------------------------------------------------


def _big(path: Path, n: int, where: str) -> Path:
    with open(path, "wb") as f:
        if where == "none":
            f.write(b'{"role": "user", "content": "hi"')
            for i in range(n):
                f.write(b',\n"k%d": "%s"' % (i, b"x" * 32))
            f.write(b"}")
        else:
            f.write(document(n, where, size=32))
    return path


def _peak(fn: Any) -> tuple[Any, int]:
    tracemalloc.start()
    try:
        try:
            result: Any = fn()
        except LimitExceeded as exc:
            result = exc
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


KEYS = 200_000  # a 9 MB file: 46 to 52 MB held before, 5.5 to 8.6 MB now
LIMIT = 1_000_000
MB = 1_000_000


@pytest.mark.parametrize("fmt", ["chat", "auto"])
@pytest.mark.parametrize("where", ["before", "after"])
def test_message_readers_hold_no_keys(tmp_path: Path, fmt: str, where: str) -> None:
    path = _big(tmp_path / "doc.json", KEYS, where)
    result, peak = _peak(lambda: list(read_messages(path, fmt, max_record_bytes=LIMIT)))
    if fmt == "auto" and where == "before":
        assert isinstance(result, LimitExceeded)  # the keys alone, waiting for the format
    else:
        assert result == MESSAGES
    assert peak < 20 * MB  # was 46 MB: every key held, twice


def test_object_without_records_bounded(tmp_path: Path) -> None:
    path = _big(tmp_path / "doc.json", KEYS, "none")
    for read in (read_messages, read_conversations):
        result, peak = _peak(lambda: [list(getattr(c, "messages", [c])) for c in read(path, "chat", max_record_bytes=LIMIT)])
        assert isinstance(result, LimitExceeded) and result.limit == "max_record_bytes"
        assert peak < 20 * MB  # was 52 MB for this file


def test_conversation_extra_bounded(tmp_path: Path) -> None:
    path = _big(tmp_path / "doc.json", KEYS, "after")

    def run() -> Any:
        return [list(c.messages) for c in read_conversations(path, "chat", max_record_bytes=LIMIT)]

    result, peak = _peak(run)
    assert isinstance(result, LimitExceeded) and "extra" in str(result)
    assert peak < 20 * MB
