"""Where each record begins: JSONL lines, and a JSON document's records wherever the slices
that ijson is given cut it (the positions are worked out lazily, from the events' tokens)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from normalizer import InvalidMessage, Position, Report
from normalizer.formats import read_conversations, read_messages
from normalizer.formats._document import DocReader
from normalizer.formats._records import Meta, Record, position_of

# Every kind of record the stream array can hold, after an array at the same depth (tools),
# with escapes, non-ASCII text and a number cut wherever the pieces cut it.
RECORDS = [
    '{"role": "user", "content": "é\\"ü \\\\"}',
    "12345",
    '"a string with \\"quotes\\" and \\\\ backslashes, ünïcode"',
    "[1, 2]",
    "true",
    '{"role": "assistant", "content": null, "n": -1.5e3}',
]
HEAD = '{"tools": [{"type": "function"}, 2, "x"], "model": "m",\n "messages": [\n'
TAIL = '\n ], "after": [3, 4]}\n'


def document() -> tuple[bytes, list[Position]]:
    """The document, and where each record begins (counted on the text, independently)."""
    text = HEAD
    expected = []
    for i, record in enumerate(RECORDS):
        text += "  " if i % 2 == 0 else "\t "
        lines = text.split("\n")
        expected.append(Position(len(lines), len(lines[-1]) + 1))
        text += record + (",\n" if i < len(RECORDS) - 1 else "")
    return (text + TAIL).encode(), expected


@pytest.mark.parametrize("size", [1, 2, 3, 4, 5, 7, 11, 13, 64, 1 << 20])
def test_document_records_are_placed_wherever_the_pieces_cut_them(size: int) -> None:
    data, expected = document()
    doc = DocReader("doc.json")
    out: list[Record | Meta] = []
    for start in range(0, len(data), size):
        out += doc.feed(data[start : start + size])
    out += doc.close()
    records = [r for r in out if isinstance(r, Record)]
    assert [r.value for r in records] == [json.loads(r) for r in RECORDS]
    assert [position_of(r.place) for r in records] == expected
    assert [m.key for m in out if isinstance(m, Meta)] == ["tools", "model", "after"]


def test_a_whole_object_record_is_placed_where_the_document_begins() -> None:
    doc = DocReader("doc.json")
    out = doc.feed(b'\n\n  {"type": "message", "role": "user", "content": "hi"}\n') + doc.close()
    records = [r for r in out if isinstance(r, Record)]
    assert [position_of(r.place) for r in records] == [Position(3, 3)]


def test_message_positions_in_jsonl_and_documents(tmp_path: Path) -> None:
    messages = [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]
    jsonl = tmp_path / "s.jsonl"
    jsonl.write_bytes(b"\n" + b"\n\n".join(orjson.dumps(m) for m in messages) + b"\n")
    stream = read_messages(jsonl)
    assert stream.position is None
    assert [(m, stream.position) for m in stream] == [(messages[0], Position(2, 1)), (messages[1], Position(4, 1))]
    doc = tmp_path / "s.json"
    doc.write_text(json.dumps({"messages": messages}, indent=2))
    stream = read_messages(doc)
    assert [(m, stream.position) for m in stream] == [(messages[0], Position(3, 5)), (messages[1], Position(7, 5))]


def test_conversation_positions(tmp_path: Path) -> None:
    data = [{"conversations": [{"from": "human", "value": "hi"}]}, {"conversations": [{"from": "gpt", "value": "yo"}]}]
    path = tmp_path / "sharegpt.json"
    path.write_text(json.dumps(data, indent=1))
    stream = read_conversations(path)
    assert [(c.index, stream.position) for c in stream] == [(0, Position(2, 2)), (1, Position(10, 2))]


def test_a_bad_record_of_a_document_is_named_by_its_position() -> None:
    data = b'[\n  {"role": "user", "content": "hi"},\n  {"role": "robot"}\n]'
    with pytest.raises(InvalidMessage) as exc:
        list(read_messages(io.BytesIO(data), "anthropic"))
    assert (exc.value.source, exc.value.line, exc.value.column, exc.value.index) == ("<stream>", 3, 3, None)
    report = Report()
    assert list(read_messages(io.BytesIO(b'[1,\n {"role": "user", "content": "hi"}]'), "chat", report=report, on_invalid="skip")) == [
        {"role": "user", "content": "hi"}
    ]
    assert [(r.kind, r.line, r.dropped) for r in report.records] == [("skip_invalid", 1, 1)]
    assert report.records[0].detail.startswith("<stream>:1:2: expected a chat message")


# -- quotes and backslashes, counted in linear time --------------------------------------------------


def _escape_walk(data: bytes, escaped: bool = False) -> list[int]:
    """The offsets of the quotes no backslash escapes, one byte at a time (the reference)."""
    found, state = [], escaped
    for i, byte in enumerate(data):
        if state:
            state = False
        elif byte == 0x5C:
            state = True
        elif byte == 0x22:
            found.append(i)
    return found


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from([b"\\", b"\\" * 9, b'"', b"a", b"\\" * 20 + b'"']), max_size=30), st.booleans())
def test_unescaped_quotes_are_counted_and_found_as_a_byte_walk_would(parts: list[bytes], escaped: bool) -> None:
    from normalizer.formats._scan import opening_quote as _opening_quote
    from normalizer.formats._scan import unescaped_quotes as _unescaped_quotes

    data = b"".join(parts)
    walked = _escape_walk(data, escaped)
    assert _unescaped_quotes(b"\\" + data if escaped else data) == len(walked)
    assert _opening_quote(data, escaped) == (walked[-1] if walked else None)


def test_a_long_backslash_run_is_one_pass_not_a_pass_per_backslash(monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs longer than _COUNTED_RUNS drop the escapes in one regex pass: a document whose
    string is one run of backslashes took a pass over each 256 KiB piece per backslash
    (a 240 KB run: 107 s)."""
    from normalizer.formats import _scan

    passes = []

    class Counting:
        def sub(self, repl: bytes, data: bytes) -> bytes:
            passes.append(len(data))
            return _scan.re.compile(rb"\\.", _scan.re.DOTALL).sub(repl, data)

    monkeypatch.setattr(_scan, "_ESCAPE", Counting())
    run = b"\\" * 200_000
    data = b'[{"role": "user", "content": "' + run + b'\\""}, {"role": "user", "content": "x"}\n, {"role": 5}]'
    with pytest.raises(InvalidMessage) as exc:
        list(read_messages(io.BytesIO(data)))
    assert (exc.value.line, exc.value.column) == (2, 3)
    assert 1 <= len(passes) <= 2  # the piece holding the run (and the one it spills into)
    messages = list(read_messages(io.BytesIO(data[: data.index(b"\n")] + b"]")))
    assert messages[0]["content"] == "\\" * 100_000 + '"'
