"""Reading files: containers, positions in errors, limits, skipping, async, writers."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from normalizer import InputError, InvalidMessage, LimitExceeded, Report, UsageError
from normalizer.formats._writers import awrite_finetune, awrite_json_array, awrite_jsonl, write_finetune, write_json_array, write_jsonl
from normalizer.formats._records import LineSplitter, count_newlines
from normalizer.formats import aread_conversations, aread_messages, detect_format, read_conversations, read_messages

from realdata import sample_files

CHAT = [
    {"role": "user", "content": "hi"},
    {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
    {"role": "tool", "tool_call_id": "c1", "content": "é ok"},
]


def jsonl(messages: list[Any]) -> bytes:
    return b"".join(orjson.dumps(m) + b"\n" for m in messages)


def write(tmp_path: Path, data: bytes, name: str = "in.jsonl") -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


@pytest.mark.parametrize(
    "data",
    [
        jsonl(CHAT),
        jsonl(CHAT).rstrip(b"\n"),  # no final newline
        b"\xef\xbb\xbf" + jsonl(CHAT),  # UTF-8 BOM
        jsonl(CHAT).replace(b"\n", b"\r\n"),  # Windows line ends
        b"\n" + jsonl(CHAT).replace(b"\n", b"\n\n"),  # blank lines
        orjson.dumps(CHAT),  # a JSON array on one line
        json.dumps(CHAT, indent=2).encode(),  # a pretty-printed array
        b"\xef\xbb\xbf" + json.dumps({"model": "m", "messages": CHAT}, indent=1).encode(),
        orjson.dumps({"request": {"method": "POST", "body": {"model": "m", "messages": CHAT}}, "error": {"code": 400}}),
    ],
    ids=["jsonl", "no-final-newline", "bom", "crlf", "blank-lines", "array", "pretty-array", "bom-object", "request-dump"],
)
def test_containers(tmp_path: Path, data: bytes) -> None:
    stream = read_messages(write(tmp_path, data))
    assert list(stream) == CHAT
    assert stream.format == "chat" and stream.report.format == "chat"
    assert stream.report.counts == {}  # the format is an attribute, not a repair
    assert not stream.report.changed


def test_file_object_and_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    assert list(read_messages(io.BytesIO(jsonl(CHAT)))) == CHAT

    class Stdin:
        buffer = io.BufferedReader(io.BytesIO(jsonl(CHAT)))  # type: ignore[arg-type]

    monkeypatch.setattr("sys.stdin", Stdin)
    assert list(read_messages("-")) == CHAT


def test_document_meta_goes_to_extra(tmp_path: Path) -> None:
    path = write(tmp_path, orjson.dumps({"model": "m", "messages": CHAT, "tools": [{"type": "function"}]}), "body.json")
    convs = [(list(c.messages), c.extra) for c in read_conversations(path)]
    assert convs == [(CHAT, {"model": "m", "tools": [{"type": "function"}]})]


def test_empty_file(tmp_path: Path) -> None:
    for data in (b"", b"\n\n", b"\xef\xbb\xbf", b"   "):
        assert list(read_messages(write(tmp_path, data))) == []


def test_non_json_line_names_file_line_and_column(tmp_path: Path) -> None:
    path = write(tmp_path, jsonl(CHAT[:1]) + b'{"role": "user", "content": "x",, }\n' + jsonl(CHAT[1:]))
    with pytest.raises(InvalidMessage) as exc:
        list(read_messages(path))
    assert (exc.value.source, exc.value.line, exc.value.column) == (str(path), 2, 33)
    assert str(exc.value).startswith(f"{path}:2:33: not JSON: ")


def test_column_counts_characters_not_bytes(tmp_path: Path) -> None:
    path = write(tmp_path, '{"role": "user", "content": "éé" x}\n'.encode())
    with pytest.raises(InvalidMessage) as exc:
        list(read_messages(path, "chat"))
    assert exc.value.column == 34  # 36 in bytes


def test_invalid_utf8_names_the_column(tmp_path: Path) -> None:
    path = write(tmp_path, jsonl(CHAT[:1]) + b'{"role": "user", "content": "ab\xff"}\n')
    with pytest.raises(InvalidMessage) as exc:
        list(read_messages(path))
    assert (exc.value.line, exc.value.column) == (2, 32)
    assert "not UTF-8" in str(exc.value)


def test_on_invalid_skip_counts_and_keeps_the_line(tmp_path: Path) -> None:
    path = write(tmp_path, jsonl(CHAT[:1]) + b"not json\n" + jsonl([{"no": "role"}]) + jsonl(CHAT[1:]))
    report = Report()
    out = list(read_messages(path, "chat", report=report, on_invalid="skip"))
    assert out == CHAT
    assert report.counts["skip_invalid"] == 2
    assert [(r.line, r.dropped) for r in report.records] == [(2, "not json"), (3, {"no": "role"})]


def test_unknown_record_shape_is_a_clear_error(tmp_path: Path) -> None:
    path = write(tmp_path, jsonl([{"hello": "world"}]))
    with pytest.raises(InputError) as exc:
        list(read_messages(path))
    assert exc.value.line == 1 and "cannot tell the format" in str(exc.value)
    path = write(tmp_path, jsonl(CHAT[:1] + [[1, 2]]))
    with pytest.raises(InputError) as exc:
        list(read_messages(path))
    assert exc.value.line == 2 and "expected a chat message" in str(exc.value)


def test_truncated_json_array(tmp_path: Path) -> None:
    data = json.dumps(CHAT, indent=2).encode()
    path = write(tmp_path, data[: len(data) // 2], "cut.json")
    with pytest.raises(InputError) as exc:
        list(read_messages(path))
    assert "ends too early" in str(exc.value) and exc.value.source == str(path)


def test_line_limit(tmp_path: Path) -> None:
    long = jsonl([{"role": "user", "content": "x" * 5000}])
    path = write(tmp_path, jsonl(CHAT[:1]) + long + jsonl(CHAT[:1]))
    with pytest.raises(LimitExceeded) as exc:
        list(read_messages(path, max_line_bytes=4096))
    assert (exc.value.line, exc.value.limit, exc.value.value) == (2, "max_line_bytes", 4096)
    assert str(exc.value).startswith(f"{path}:2: line is longer than 4096 bytes")
    assert len(list(read_messages(path, max_line_bytes=8192))) == 3


# -- LineSplitter: lines that keep their newline, cut where bytes.split cuts -----------------


def split_all(data: bytes, size: int, **kwargs: Any) -> list[bytes]:
    lines = LineSplitter(source="s", **kwargs)
    out: list[bytes] = []
    for start in range(0, len(data), size):
        out += lines.feed(data[start : start + size])
    return out + lines.close()


@pytest.mark.parametrize("data", [b"", b"a", b"a\n", b"\n\n", b"ab\r\ncd\n\nef", b'{"x":1}\n{"y":[2]}\n' * 3 + b"tail"])
@pytest.mark.parametrize("size", [1, 2, 3, 7, 1000])
def test_line_splitter_keeps_ends_and_cuts_the_same_lines_as_split(data: bytes, size: int) -> None:
    bare = data.split(b"\n")[: -1 if data.endswith(b"\n") or not data else None]
    kept = split_all(data, size)
    assert b"".join(kept) == data
    assert [line.removesuffix(b"\n") for line in kept] == bare


@pytest.mark.parametrize("size", [1, 4, 100])
def test_line_splitter_refuses_a_line_one_byte_past_the_limit_newline_not_counted(size: int) -> None:
    ok = b"x" * 8 + b"\n" + b"y" * 8
    assert len(split_all(ok, size, max_line_bytes=8)) == 2
    with pytest.raises(LimitExceeded) as exc:
        split_all(b"x\n" + b"y" * 9 + b"\n", size, max_line_bytes=8)
    assert (exc.value.line, exc.value.value) == (2, 8)


@pytest.mark.parametrize(
    ("data", "expected"),
    [(b"", 0), (b"a", 0), (b"\n", 1), (b"a\nb", 1), (b"a\nb\n", 2), (b"\n\n\n", 3), (b'{"a":1}\n' * 1000 + b"]", 1000)],
)
def test_newlines_are_counted_exactly(data: bytes, expected: int) -> None:
    # A document's line numbers, and what an interrupted run says it left on stdout.
    assert count_newlines(bytearray(data)) == count_newlines(data) == expected == data.count(b"\n")


def test_a_truncated_line_is_placed_on_its_own_line_not_the_next() -> None:
    # The reader's lines keep their newline; orjson would place the end of an unfinished
    # value on the line after it.
    with pytest.raises(InvalidMessage) as exc:
        list(read_messages(io.BytesIO(b'{"role":"user","content":"hi"}\n{"role":"user"\n')))
    assert (exc.value.line, exc.value.column) == (2, 15)  # just past "user"
    report = Report()
    data = b'{"role":"user","content":"hi"}\n{"role":\r\n'
    assert list(read_messages(io.BytesIO(data), on_invalid="skip", report=report)) == [CHAT[0]]
    assert [(r.line, r.dropped) for r in report.records] == [(2, '{"role":\r')]


def test_huge_line_is_never_read_whole(tmp_path: Path) -> None:
    # 40 MB on one line, refused at 1 MB: the reader must stop long before the end.
    path = tmp_path / "big.jsonl"
    with path.open("wb") as f:
        f.write(b'{"role": "user", "content": "')
        for _ in range(40):
            f.write(b"x" * 1_000_000)
        f.write(b'"}\n')

    class Counting(io.FileIO):
        read_bytes = 0

        def read(self, n: int = -1) -> bytes:  # type: ignore[override]
            data = super().read(n)
            Counting.read_bytes += len(data)
            return data

    with Counting(path, "rb") as f, pytest.raises(LimitExceeded):
        list(read_messages(f, max_line_bytes=1_000_000))
    assert Counting.read_bytes < 3_000_000


def test_bad_arguments() -> None:
    with pytest.raises(UsageError):
        read_messages("x", "nope")
    with pytest.raises(UsageError):
        read_messages("x", bogus=True)
    with pytest.raises(InputError, match="cannot open"):
        list(read_messages("/nonexistent/file.jsonl"))


def test_several_conversations_need_read_conversations(tmp_path: Path) -> None:
    path = write(tmp_path, jsonl([{"messages": CHAT}, {"messages": CHAT[:1]}]))
    with pytest.raises(InputError, match="several conversations"):
        list(read_messages(path))
    assert [len(c.messages) for c in read_conversations(path)] == [3, 1]


def test_detect_format() -> None:
    assert detect_format([{"timestamp": "t", "type": "session_meta", "payload": {}}]) == "codex"
    assert detect_format([{"type": "file-history-snapshot", "messageId": "m", "snapshot": {}}]) == "claude-code"
    assert detect_format([{"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"}]) == "responses"
    assert detect_format([{"role": "user", "content": "x"}, {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "f", "input": {}}]}]) == "anthropic"
    assert detect_format([{"role": "user", "content": [{"type": "input_text", "text": "x"}]}]) == "responses"
    assert detect_format([{"role": "user", "content": "x"}]) == "chat"
    assert detect_format([{"role": "user", "content": "x"}], hint="system") == "anthropic"
    assert detect_format([{"conversations": []}]) == "sharegpt"
    assert detect_format([{"messages": []}]) == "finetune"
    with pytest.raises(InputError):
        detect_format([{"x": 1}])


# -- async ------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_async_read_matches_sync(samples: Path) -> None:
    for path in sample_files("", "**/*.json*"):
        if "training" in str(path):
            sync = [list(c.messages) for c in read_conversations(path)]
            got = [c.messages async for c in aread_conversations(path)]
        else:
            sync = [list(read_messages(path))]
            stream = aread_messages(path)
            got = [[m async for m in stream]]
            assert stream.format is not None
        assert got == sync, path


@pytest.mark.anyio
async def test_async_errors_and_file_objects(tmp_path: Path) -> None:
    path = write(tmp_path, jsonl(CHAT[:1]) + b"{oops\n")
    with pytest.raises(InvalidMessage) as exc:
        [m async for m in aread_messages(path)]
    assert (exc.value.line, exc.value.column) == (2, 2)
    assert [m async for m in aread_messages(io.BytesIO(jsonl(CHAT)))] == CHAT
    doc = write(tmp_path, json.dumps({"system_prompt": "S", "messages": CHAT}, indent=2).encode(), "snap.json")
    assert [m async for m in aread_messages(doc)] == [{"role": "system", "content": "S"}, *CHAT]
    convs = [c async for c in aread_conversations(doc)]
    assert len(convs) == 1


@pytest.mark.anyio
async def test_an_async_read_refused_between_chunks_closes_its_file(tmp_path: Path) -> None:
    # Refused by the stream's own side (several conversations), not by the reader: the pump
    # that opened the file is closed then and there, not left to the collector (trio warns,
    # and the suite treats an unraisable warning as an error).
    path = write(tmp_path, jsonl([{"messages": CHAT}, {"messages": CHAT[:1]}]))
    with pytest.raises(InputError, match="several conversations"):
        [m async for m in aread_messages(path)]


# -- writers ----------------------------------------------------------------------------------


def test_writers_round_trip(tmp_path: Path) -> None:
    assert write_jsonl(iter(CHAT), tmp_path / "a.jsonl") == 3
    assert (tmp_path / "a.jsonl").read_bytes() == jsonl(CHAT)
    assert write_json_array(iter(CHAT), tmp_path / "a.json") == 3
    assert json.loads((tmp_path / "a.json").read_text()) == CHAT
    assert write_json_array(iter([]), tmp_path / "empty.json") == 0
    assert json.loads((tmp_path / "empty.json").read_text()) == []
    buf = io.BytesIO()
    conversations = [(CHAT, {"tools": [], "parallel_tool_calls": False}), (CHAT[:1], {})]
    assert write_finetune(conversations, buf) == 2
    assert [json.loads(line) for line in buf.getvalue().splitlines()] == [
        {"messages": CHAT, "tools": [], "parallel_tool_calls": False},
        {"messages": CHAT[:1]},
    ]
    # Fine-tuning JSONL read back gives the same conversations and other keys.
    path = write(tmp_path, buf.getvalue(), "ft.jsonl")
    assert [(c.messages, c.extra) for c in read_conversations(path)] == [(m, e) for m, e in conversations]


@pytest.mark.anyio
async def test_async_writers(tmp_path: Path) -> None:
    async def agen() -> Any:
        for m in CHAT:
            yield m

    assert await awrite_jsonl(agen(), tmp_path / "a.jsonl") == 3
    assert (tmp_path / "a.jsonl").read_bytes() == jsonl(CHAT)
    assert await awrite_json_array(CHAT, tmp_path / "a.json") == 3
    assert json.loads((tmp_path / "a.json").read_text()) == CHAT
    buf = io.BytesIO()
    assert await awrite_finetune([(agen(), {"k": 1})], buf) == 1
    assert json.loads(buf.getvalue()) == {"messages": CHAT, "k": 1}
