"""A file's head is judged once and its format detected once (``chatnorm repair`` with
``--from auto --to auto``, the default): the peek that tells a session from the rest hands
what it found to the reader (``formats._reader.Head``: the container, and the format when it
is the one the reader would find), and what comes out is what the reader finding them again
gave -- outputs, errors and their places, reports, exit statuses."""

from __future__ import annotations

import collections
import dataclasses
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from normalizer._errors import InputError, UsageError
from normalizer._report import new_report
from normalizer.batch import detect as _peeking
from normalizer.batch import pump as _pump
from normalizer.batch.streams import Input
from normalizer.cli._main import main
from normalizer.formats import _detect, _reader, _records
from normalizer.formats import _sessions  # noqa: F401 - its names bound before the counting ones are patched in
from normalizer.formats._reader import Reader
from normalizer.formats._records import DocPlace, Meta, position_of


def line(value: Any) -> bytes:
    return orjson.dumps(value) + b"\n"


def call(i: int) -> dict[str, Any]:
    return {"role": "assistant", "content": "", "tool_calls": [
        {"id": f"c{i}", "type": "function", "function": {"name": "sh", "arguments": "{}"}}]}


def claude(kind: str, uuid: str, parent: str | None, message: dict[str, Any]) -> dict[str, Any]:
    return {"type": kind, "uuid": uuid, "parentUuid": parent, "sessionId": "s", "timestamp": "t", "message": message}


def codex(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": "t", "type": kind, "payload": payload}


# One file of each kind. Every record differs from the others: a record guessed twice is a
# record seen twice, not two equal ones.
FILES: dict[str, bytes] = {
    # a tool call settles it at line 3
    "chat.jsonl": b"".join(line(m) for m in [
        {"role": "system", "content": "be brief"}, {"role": "user", "content": "list files"}, call(1),
        {"role": "tool", "tool_call_id": "c1", "content": "a b"}, {"role": "assistant", "content": "a, b"},
        {"role": "assistant", "content": "and more"}, call(2)]),
    # plain messages: nothing settles it, the end decides (and 20 of them: the first 16 do)
    "plain.jsonl": b"".join(line({"role": "user" if i % 2 else "assistant", "content": f"m{i}"}) for i in range(3)),
    "long.jsonl": b"".join(line({"role": "user", "content": f"q{i}"}) for i in range(20)) + line(call(9)),
    "array.json": orjson.dumps([{"role": "user", "content": "hi"}, call(3), {"role": "tool", "tool_call_id": "c3",
                                                                             "content": "ok"}]),
    # one line, its system prompt after the messages: the reader's first pass finds it
    "body.json": orjson.dumps({"model": "m", "messages": [{"role": "user", "content": "q"}], "system": "s"}),
    "claude.jsonl": b"".join(line(r) for r in [
        claude("user", "u1", None, {"role": "user", "content": "hi"}),
        claude("assistant", "a1", "u1", {"role": "assistant", "content": [
            {"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}]})]),
    "codex.jsonl": b"".join(line(r) for r in [
        codex("session_meta", {"id": "x", "cwd": "/"}),
        codex("response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}),
        codex("response_item", {"type": "function_call", "call_id": "k1", "name": "sh", "arguments": "{}"})]),
    "responses.jsonl": b"".join(line(r) for r in [
        {"role": "user", "content": [{"type": "input_text", "text": "hi"}]},
        {"type": "function_call", "call_id": "r1", "name": "sh", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "r1", "output": "ok"}]),
    "finetune.jsonl": line({"messages": [{"role": "user", "content": "a"}]}) + line({"messages": [call(4)]}),
    "empty.jsonl": b"",
    "blank.jsonl": b"\n  \n",
    # the first lines say nothing: the peek cannot tell, and the reader decides as before
    "nothing.jsonl": line({"x": 1}) + line({"y": 2}),
}
OPTIONS = [[], ["--on-invalid", "skip"], ["--profile", "openai"]]  # (a provider's profile: sessions as chat)


class Counts:
    """What one run judged and detected: heads judged (a Sniffer's verdict), records guessed
    (by their JSON), and verdicts from the guesses (``decide``, which detect_format is)."""

    def __init__(self) -> None:
        self.heads = 0
        self.guessed: collections.Counter[bytes] = collections.Counter()
        self.decided = 0


@pytest.fixture
def counts(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counts]:
    seen = Counts()
    feed, guess, decide = _records.Sniffer.feed, _detect.guess, _detect.decide

    def counting_feed(self: _records.Sniffer, chunk: bytes) -> str:
        kind = feed(self, chunk)
        seen.heads += kind != "auto"
        return kind

    def counting_guess(record: Any) -> _detect.Guess:
        seen.guessed[orjson.dumps(record, option=orjson.OPT_SORT_KEYS)] += 1
        return guess(record)

    def counting_decide(*args: Any, **kwargs: Any) -> str:
        seen.decided += 1
        return decide(*args, **kwargs)

    monkeypatch.setattr(_records.Sniffer, "feed", counting_feed)
    # Each module holds the names it imported; the session repairer's (imported above, with
    # the real ones) asks each line what it looks like to count the lines it recognises:
    # not a detection, and not counted.
    for module in (_detect, _reader, _peeking):
        monkeypatch.setattr(module, "guess", counting_guess, raising=False)
        monkeypatch.setattr(module, "decide", counting_decide, raising=False)
    yield seen


def repair(path: Path, out: Path, options: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[Any, ...]:
    """``chatnorm repair -q FILE -o OUT --report R``, in this process: exit status, stderr,
    the output's bytes (None: not written) and the report (its timing left out)."""
    report = out.with_suffix(".report.json")
    status = main(["repair", "-q", *options, str(path), "-o", str(out), "--report", str(report)])
    written = out.read_bytes() if out.exists() else None
    files = json.loads(report.read_text())["files"]
    for entry in files:
        entry.pop("seconds")
    return status, capsys.readouterr().err, written, files


def untold(*args: Any, head: Any = None, **kwargs: Any) -> Reader:
    """The chat pipe's reader as it was: told nothing, it finds the container and the format."""
    return Reader(*args, **kwargs)


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: " ".join(o) or "default")
@pytest.mark.parametrize("name", FILES)
def test_each_file_is_judged_and_detected_once_and_comes_out_as_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], counts: Counts,
    name: str, options: list[str],
):
    path = tmp_path / name
    path.write_bytes(FILES[name])
    (tmp_path / "now").mkdir()
    (tmp_path / "before").mkdir()
    now = repair(path, tmp_path / "now" / "out.jsonl", options, capsys)

    assert counts.heads == 1  # the peek's: the reader is told the container
    if name == "nothing.jsonl":
        # The peek cannot tell: the reader decides, as before, and says what is wrong.
        assert counts.decided == 2 and set(counts.guessed.values()) == {2}
        assert "cannot tell the format of this input" in now[1]
    elif name == "codex.jsonl" and "--profile" in options:
        # A rollout read as chat: the reader detects it itself, from its first line (its plan
        # comes after its first chunk is read: see Reader).
        assert counts.decided == 1 and list(counts.guessed.values()) == [2]
    else:
        assert counts.decided <= 1
        assert max(counts.guessed.values(), default=1) == 1  # no record guessed twice

    monkeypatch.setattr(_pump, "Reader", untold)
    before = repair(path, tmp_path / "before" / "out.jsonl", options, capsys)
    assert now[0] == before[0]
    assert now[1].replace("/now/", "/before/") == before[1]
    assert now[2] == before[2]
    assert json.dumps(now[3]).replace("/now/", "/before/") == json.dumps(before[3])


def test_what_the_peek_tells_the_reader():
    """The container always; the format when the reader would find it from the same records
    (a record that may nest too deep, or a head read past max_line_bytes, leave it to the
    reader); for a Codex rollout, the reader detects it itself (see Reader: its plan)."""

    def told(data: bytes) -> tuple[str | None, _reader.Head | None]:
        peeked = _peeking.peek(Input(io.BytesIO(data), "x", None))
        return peeked.fmt, peeked.head

    assert told(FILES["chat.jsonl"]) == ("chat", _reader.Head("jsonl", "chat"))
    assert told(FILES["long.jsonl"]) == ("chat", _reader.Head("jsonl", "chat"))
    assert told(FILES["claude.jsonl"]) == ("claude-code", _reader.Head("jsonl", "claude-code"))
    assert told(FILES["codex.jsonl"]) == ("codex", _reader.Head("jsonl", "codex"))
    assert Reader(report=new_report(), head=_reader.Head("jsonl", "codex")).format is None  # detected, then
    assert told(FILES["array.json"]) == (None, _reader.Head("document"))
    assert told(FILES["empty.jsonl"]) == (None, _reader.Head("empty"))
    assert told(FILES["blank.jsonl"]) == (None, _reader.Head("empty"))
    assert told(FILES["nothing.jsonl"]) == (None, _reader.Head("jsonl"))
    assert told(line({"x": "[" * 200}) + FILES["chat.jsonl"]) == ("chat", _reader.Head("jsonl"))
    assert told(line({"x": "[" * 100}) + FILES["chat.jsonl"]) == ("chat", _reader.Head("jsonl", "chat"))
    # A pipe that gives a byte order mark's first byte alone: the peek judged a cut head, the
    # reader (given it whole) finds the container itself.
    cut = Input(_Pipe(_records.BOM + FILES["array.json"], 1), "x", None)
    assert _peeking.peek(cut) == _peeking.Peek(None, None)
    with pytest.raises(UsageError, match="a head is told to a reader that detects"):
        Reader("chat", report=new_report(), head=_reader.Head("jsonl"))


# -- any file: the reader told what the peek found gives what it gives finding it ------------------

_LINES = [
    line({"role": "user", "content": "hi"}), line({"role": "assistant", "content": "yo"}), line(call(1)),
    line({"role": "tool", "tool_call_id": "c1", "content": "ok"}), line({"role": "user", "content": 5}),
    line({"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"}),
    line({"role": "user", "content": [{"type": "input_text", "text": "x"}]}),
    line({"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "f", "input": {}}]}),
    line(claude("user", "u1", None, {"role": "user", "content": "hi"})),
    line(codex("session_meta", {"id": "x"})),
    line({"messages": [{"role": "user", "content": "a"}]}), line({"conversations": [{"from": "human", "value": "a"}]}),
    line({"x": 1}), b"[1, 2]\n", b"5\n", b'{"role": "user", "cont\n', b"\n", b" \t\n",
    line({"role": "user", "content": "[" * 200}),  # brackets in a string: not deep, but the peek cannot tell
    orjson.dumps({"role": "user", "content": json.loads("[" * 130 + "1" + "]" * 130)}) + b"\n",  # too deep
    b'{"role": "user", "content": "\\ud800"}\n', b'{"role": "user", "content": "\xff"}\n',
    orjson.dumps({"model": "m", "messages": [{"role": "user", "content": "q"}]}) + b"\n",
]


class _Pipe(io.BytesIO):
    """Gives ``chunk`` bytes a read, as a pipe may."""

    def __init__(self, data: bytes, chunk: int) -> None:
        super().__init__(data)
        self.chunk = chunk

    def read1(self, n: int = -1) -> bytes:
        return self.read(min(n, self.chunk) if n > 0 else self.chunk)


def events(data: bytes, first: bytes, head: _reader.Head | None, on_invalid: str, chunk: int) -> list[Any]:
    """Everything a reader gives out for ``data``, fed as the command line feeds it (``first``,
    what the peek read and gave back, then ``chunk`` bytes at a time; a plan from the whole
    file when it asks for one), its report's records, and how it ended."""
    report = new_report()
    reader = Reader("auto", report=report, on_invalid=on_invalid, head=head)  # type: ignore[arg-type]
    rest = data[len(first):]
    pieces = iter([first, *(rest[i:i + chunk] for i in range(0, len(rest), chunk))] if first else [])
    out: list[Any] = []
    try:
        while not reader.done:
            if reader.wants_plan:
                planner = reader.plan_scan()
                planner.feed(data)
                out += reader.set_plan(planner.close())
            else:
                piece = next(pieces, b"")
                out += reader.feed(piece) if piece else reader.close()
    except InputError as exc:
        out.append(("raised", type(exc).__name__, str(exc)))
    return [*map(_comparable, out), reader.format, reader.container, [r.model_dump() for r in report.records],
            dict(report.counts)]


def _comparable(event: Any) -> Any:
    """An event with its place as the position it resolves to (a document's place holds the
    slice of the file it was read from)."""
    if isinstance(event, DocPlace):
        return position_of(event)
    if isinstance(event, Meta):
        return dataclasses.replace(event, place=position_of(event.place))
    return event


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_LINES), max_size=24), st.booleans(), st.sampled_from(["error", "skip"]),
       st.sampled_from([1, 7, 64, 1 << 16]))
def test_a_reader_told_gives_what_it_gives_finding_it(lines: list[bytes], bom: bool, on_invalid: str, chunk: int):
    data = (_records.BOM if bom else b"") + b"".join(lines)
    src = Input(_Pipe(data, chunk), "x", None)
    head = _peeking.peek(src).head
    first = src.read()  # what the peek read, given back
    assert events(data, first, head, on_invalid, chunk) == events(data, first, None, on_invalid, chunk)
