"""What a Claude Code 1.0 session's sub-agent transcript holds with ``keep_sidechains`` is bounded
by ``max_record_bytes``, as every message a reader assembles from several records is: the
transcript's messages were all held until it ended (the next one's first line, or the end of
the file), however long it ran. Now they count as they come, in bytes of their JSON (keys and
strings by their length, other values as JSON), the pending turn as it will be given out; the
line that would take the transcript past the limit is refused at file:line:column, naming the
line it began on, and the transcript ends there (what it gave out before goes out, skipped;
its later lines are left out). Found by a review of the buffers a reader keeps."""

from __future__ import annotations

import io
import tracemalloc
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from normalizer import LimitExceeded, Report
from normalizer.formats import _claude, aread_conversations, read_conversations, read_messages
from normalizer.formats._claude import ClaudeCodeConverter
from realdata import SAMPLES, needs_samples

HINT = (
    "Raise max_record_bytes if this sub-agent transcript really is that large, or read the session without "
    "keep_sidechains (its sub-agent lines are then left out)"
)
TOTAL_HINT = (
    "A session's sub-agent transcripts are given out after its main conversation, so they are all held until it "
    "ends: raise max_record_bytes if they really are that large, or read the session without keep_sidechains (its "
    "sub-agent lines are then left out)"
)


def cc(kind: str, content: Any, mid: str | None = None, *, side: bool = False, root: bool = False) -> dict[str, Any]:
    """A Claude Code line; an assistant one belongs to message ``mid``; ``root``: no parent."""
    message: dict[str, Any] = {"role": kind, "content": content}
    if kind == "assistant":
        message.update(id=mid, model="claude", type="message")
    return {"type": kind, "uuid": "u", "parentUuid": None if root else "p", "isSidechain": side, "message": message}


def side(kind: str, content: Any, mid: str | None = None, *, root: bool = False) -> dict[str, Any]:
    return cc(kind, content, mid, side=True, root=root)


def use(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": arguments}


def result(call_id: str, content: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": call_id, "content": content}


def jsonl(records: list[Any]) -> bytes:
    return b"".join(orjson.dumps(r) + b"\n" for r in records)


def size(message: dict[str, Any]) -> int:
    """What a message adds to its transcript: its keys and strings by their length, any other
    value by its JSON (written here again, not taken from the code under test)."""
    return sum(len(k) + (len(v) if isinstance(v, str) else len(orjson.dumps(v))) for k, v in message.items())


def call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


# A session with a Task sub-agent between the Task call and its result (Claude Code 1.0 writes
# the sub-agent's lines into the session, isSidechain), one line a block. The sub-agent's prompt
# alone is more than any turn of the main conversation holds (with its results): the limits
# these tests try refuse no main turn.
PROMPT = "Find the config file, the one the build reads first. " * 4
SESSION = [
    cc("user", "start", root=True),                                               # 1
    cc("assistant", [{"type": "text", "text": "Hello."}], "m0"),                  # 2
    cc("user", "Find the config."),                                               # 3
    cc("assistant", [use("task1", "Task", prompt="find it")], "m1"),              # 4
    side("user", PROMPT, root=True),                                              # 5: the transcript begins
    side("assistant", [{"type": "text", "text": "Looking."}], "s1"),              # 6
    side("assistant", [use("t1", "Glob", pattern="*.toml")], "s1"),               # 7
    side("user", [result("t1", "pyproject.toml")]),                               # 8
    side("assistant", [{"type": "text", "text": "It is pyproject.toml."}], "s2"),  # 9: its last turn
    cc("user", [result("task1", "It is pyproject.toml.")]),                       # 10
    cc("assistant", [{"type": "text", "text": "Done."}], "m2"),                   # 11
    cc("user", "thanks"),                                                         # 12
]
MAIN: list[dict[str, Any]] = [
    {"role": "user", "content": "start"},
    {"role": "assistant", "content": "Hello."},
    {"role": "user", "content": "Find the config."},
    {"role": "assistant", "content": None, "tool_calls": [call("task1", "Task", '{"prompt":"find it"}')]},
    {"role": "tool", "tool_call_id": "task1", "content": "It is pyproject.toml."},
    {"role": "assistant", "content": "Done."},
    {"role": "user", "content": "thanks"},
]
SUB: list[dict[str, Any]] = [
    {"role": "user", "content": PROMPT},
    {"role": "assistant", "content": "Looking.", "tool_calls": [call("t1", "Glob", '{"pattern":"*.toml"}')]},
    {"role": "tool", "tool_call_id": "t1", "content": "pyproject.toml"},
    {"role": "assistant", "content": "It is pyproject.toml."},
]
# What the transcript holds after each of its lines (5-9): its messages given out, and its
# pending turn as it will be given out.
HELD = [
    size(SUB[0]),
    size(SUB[0]) + size({"role": "assistant", "content": "Looking."}),
    size(SUB[0]) + size(SUB[1]),
    size(SUB[0]) + size(SUB[1]) + size(SUB[2]),
    sum(map(size, SUB)),
]
TOTAL = HELD[-1]


def conversations(source: Any, *, kept: bool = False, **kwargs: Any) -> list[list[dict[str, Any]]]:
    """Each conversation's messages, read before the next conversation is asked for
    (``kept``: with what the reader keeps aside for the writer, as it holds them)."""
    stream = read_conversations(source, "claude-code", keep_sidechains=True, **kwargs)
    if kept:
        stream.keep_source_fields()
    return [list(c.messages) for c in stream]


class Pipe(io.BytesIO):
    """A stream that gives a line at each read (as a pipe may): the reader gives out the
    messages of each line before it reads the next."""

    def read(self, n: int | None = -1) -> bytes:
        return self.readline()


def write(tmp_path: Path, records: list[Any]) -> Path:
    path = tmp_path / "session.jsonl"
    path.write_bytes(jsonl(records))
    return path


def message(began: int | None, limit: int) -> str:
    since = "" if began is None else f" (begun on line {began})"
    return f"the sub-agent (isSidechain) transcript{since} would hold more than {limit} bytes of JSON in its messages"


# -- the limit, through the reader ---------------------------------------------------------------


def test_the_session_reads_as_it_did() -> None:
    assert conversations(io.BytesIO(jsonl(SESSION))) == [MAIN, SUB]
    assert HELD == sorted(HELD)


def test_a_transcript_at_the_limit_is_read_and_one_byte_past_it_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, SESSION)
    assert conversations(path, max_record_bytes=TOTAL) == [MAIN, SUB]
    limit = TOTAL - 1
    with pytest.raises(LimitExceeded) as caught:
        conversations(path, max_record_bytes=limit)
    exc = caught.value
    # Refused at its last turn's line (9), which takes it past, not where it ends (the end of the file).
    assert (exc.limit, exc.value, exc.source, exc.line, exc.column) == ("max_record_bytes", limit, str(path), 9, 1)
    assert str(exc) == f"{path}:9:1: {message(5, limit)}. {HINT}"


def test_the_main_conversations_messages_before_it_go_out_as_they_were() -> None:
    got: list[dict[str, Any]] = []
    with pytest.raises(LimitExceeded) as caught:
        for conversation in read_conversations(Pipe(jsonl(SESSION)), "claude-code", keep_sidechains=True,
                                               max_record_bytes=TOTAL - 1):
            for item in conversation.messages:
                got.append(item)
    assert str(caught.value) == f"<stream>:9:1: {message(5, TOTAL - 1)}. {HINT}"
    assert got == MAIN[:3]  # the fourth (the Task call) waits for its result, past line 9


@pytest.mark.parametrize("at", range(5))
def test_each_line_of_a_transcript_is_refused_where_it_takes_it_past(at: int) -> None:
    # A user message given out (5), a turn begun (6), a call added to it (7), a result held
    # behind it (8), the turn given out as the next begins (9): each counts at its own line.
    records = io.BytesIO(jsonl(SESSION))
    with pytest.raises(LimitExceeded) as caught:
        conversations(records, max_record_bytes=HELD[at] - 1)
    assert (caught.value.line, caught.value.column) == (5 + at, 1)
    assert caught.value.what == message(None if at == 0 else 5, HELD[at] - 1)  # no "begun" at its first line
    if at < 4:
        assert conversations(io.BytesIO(jsonl(SESSION[:5 + at] + SESSION[9:])), max_record_bytes=HELD[at])[1] == (
            conversations(io.BytesIO(jsonl(SESSION[:5 + at] + SESSION[9:])))[1])


def test_read_messages_refuses_it_too(tmp_path: Path) -> None:
    # read_messages gives the main conversation only; the sub-agent's transcript is held all the same.
    path = write(tmp_path, SESSION)
    assert list(read_messages(path, "claude-code", keep_sidechains=True, max_record_bytes=TOTAL)) == MAIN
    with pytest.raises(LimitExceeded) as caught:
        list(read_messages(path, "claude-code", keep_sidechains=True, max_record_bytes=TOTAL - 1))
    exc = caught.value
    assert (exc.limit, exc.value, exc.line, exc.column) == ("max_record_bytes", TOTAL - 1, 9, 1)
    assert str(exc) == f"{path}:9:1: {message(5, TOTAL - 1)}. {HINT}"
    got: list[dict[str, Any]] = []
    with pytest.raises(LimitExceeded):
        for item in read_messages(Pipe(jsonl(SESSION)), "claude-code", keep_sidechains=True, max_record_bytes=TOTAL - 1):
            got.append(item)
    assert got == MAIN[:3]


def test_without_keep_sidechains_nothing_is_held_or_refused() -> None:
    report = Report()
    out = list(read_messages(io.BytesIO(jsonl(SESSION)), "claude-code", max_record_bytes=HELD[0] - 1, report=report))
    assert out == MAIN
    assert report.counts["drop_sidechain"] == 5


def test_skipped_the_transcript_ends_where_it_went_past() -> None:
    # Refused at line 9 (its second turn begins: the first is given out with it, past the
    # limit), the transcript is what it gave out before (line 5's message); line 9 is skipped,
    # the sub-agent's later lines left out (noted, with the line), the next sub-agent read whole.
    extra = [side("user", "and the lock file?"), side("assistant", [{"type": "text", "text": "uv.lock"}], "s3")]
    second = [side("user", "Second task.", root=True), side("assistant", [{"type": "text", "text": "On it."}], "s4")]
    records = SESSION[:9] + extra + SESSION[9:] + second  # the sub-agent's lines 10-11, the next one's 15-16
    report = Report()
    out = conversations(io.BytesIO(jsonl(records)), max_record_bytes=HELD[3], on_invalid="skip", report=report)
    assert out == [MAIN, SUB[:1], [{"role": "user", "content": "Second task."}, {"role": "assistant", "content": "On it."}]]
    assert [(r.kind, r.line) for r in report.records] == [("skip_invalid", 9), ("drop_sidechain", 10), ("drop_sidechain", 11)]
    skipped, dropped = report.records[0], report.records[1]
    assert skipped.detail == f"<stream>:9:1: {message(5, HELD[3])}. {HINT}"
    assert skipped.dropped == records[8]
    assert dropped.detail == (
        "sub-agent (user) line left out: its transcript (begun on line 5) went past max_record_bytes on line 9")
    assert dropped.dropped == extra[0]


def test_a_transcript_at_the_end_of_the_file_is_refused_at_its_line_not_at_the_end() -> None:
    # The file ends inside the sub-agent's run: its last turn would go out at close(), after
    # the main conversation's last turn (the Task call, still waiting for its result). That
    # turn counts at its line, so close() refuses nothing and the Task call still goes out.
    records = SESSION[:9]
    report = Report()
    out = conversations(io.BytesIO(jsonl(records)), max_record_bytes=TOTAL - 1, on_invalid="skip", report=report)
    # The transcript is what it gave out before line 9 (its first turn was still pending).
    assert out == [MAIN[:4], SUB[:1]]
    assert [(r.kind, r.line) for r in report.records] == [("skip_invalid", 9)]


def test_a_transcript_does_not_refuse_the_next_ones_first_line() -> None:
    # A transcript's last turn goes out at the next transcript's first line: counted already,
    # it never refuses that line (it belongs to another transcript).
    second = [side("user", "Again.", root=True), side("assistant", [{"type": "text", "text": "Again done."}], "s9")]
    records = SESSION[:9] + second + SESSION[9:]
    again = [{"role": "user", "content": "Again."}, {"role": "assistant", "content": "Again done."}]
    # (read_messages holds no finished transcript: only each one's own limit applies)
    assert list(read_messages(io.BytesIO(jsonl(records)), "claude-code", keep_sidechains=True,
                              max_record_bytes=TOTAL)) == MAIN
    # (the conversation readers hold both until the main conversation ends: that is their sum)
    out = conversations(io.BytesIO(jsonl(records)), max_record_bytes=TOTAL + sum(map(size, again)))
    assert out == [MAIN, SUB, again]
    with pytest.raises(LimitExceeded) as caught:
        conversations(io.BytesIO(jsonl(records)), max_record_bytes=TOTAL - 1)
    assert caught.value.line == 9


def test_each_transcript_has_the_limit_and_so_have_they_all_together() -> None:
    # 50 sub-agents, each at the limit: each one is read, and the conversation readers hold
    # them all until the main conversation ends (they come after it), so together they are
    # bounded too: refused at the line the one that takes them past began on (19: the third;
    # the Task call's lines 1-4, then five lines a sub-agent).
    records = SESSION[:4]
    for i in range(50):
        records += SESSION[4:9]
    out = conversations(io.BytesIO(jsonl(records)), max_record_bytes=50 * TOTAL)
    assert out[1:] == [SUB] * 50
    with pytest.raises(LimitExceeded) as caught:
        conversations(io.BytesIO(jsonl(records)), max_record_bytes=50 * TOTAL - 1)
    exc = caught.value
    assert (exc.limit, exc.value, exc.source, exc.line, exc.column) == (
        "max_record_bytes", 50 * TOTAL - 1, "<stream>", 4 + 49 * 5 + 1, None)
    assert str(exc) == (
        f"<stream>:250: with this sub-agent (isSidechain) transcript, the ones held until the main conversation "
        f"ends would hold more than {50 * TOTAL - 1} bytes of JSON in their messages together. {TOTAL_HINT}")
    with pytest.raises(LimitExceeded) as caught:
        conversations(io.BytesIO(jsonl(records)), max_record_bytes=TOTAL)
    assert caught.value.line == 10  # the second sub-agent's first line


def test_the_message_readers_count_no_transcript_against_the_total() -> None:
    # They give out the main conversation only, and let each transcript go as it ends.
    records = SESSION[:4]
    for i in range(50):
        records += SESSION[4:9]
    assert list(read_messages(io.BytesIO(jsonl(records)), "claude-code", keep_sidechains=True,
                              max_record_bytes=TOTAL)) == MAIN[:4]


@pytest.mark.anyio
async def test_the_async_reader_bounds_them_all_together() -> None:
    records = SESSION[:4] + SESSION[4:9] + SESSION[4:9] + SESSION[9:]
    stream = aread_conversations(io.BytesIO(jsonl(records)), "claude-code", keep_sidechains=True,
                                 max_record_bytes=2 * TOTAL)
    assert [[m async for m in c.messages] if not isinstance(c.messages, list) else c.messages
            async for c in stream] == [MAIN, SUB, SUB]
    stream = aread_conversations(io.BytesIO(jsonl(records)), "claude-code", keep_sidechains=True,
                                 max_record_bytes=2 * TOTAL - 1)
    with pytest.raises(LimitExceeded) as caught:
        async for c in stream:
            if not isinstance(c.messages, list):
                async for _ in c.messages:
                    pass
    assert caught.value.line == 10


# -- the converter ---------------------------------------------------------------------------------


def test_the_converter_refuses_the_line_and_gives_out_what_came_before() -> None:
    conv = ClaudeCodeConverter(Report(), keep_sidechains=True, max_record_bytes=HELD[3])
    for number, record in enumerate(SESSION[:8], 1):
        conv.feed(record, line=number)
    with pytest.raises(LimitExceeded) as caught:
        conv.feed(SESSION[8], line=9)
    exc = caught.value
    assert (exc.what, exc.limit, exc.value, exc.line, exc.column) == (message(5, HELD[3]), "max_record_bytes", HELD[3], 9, None)
    assert exc.hint == HINT
    assert [(s.messages, s.line) for s in conv.take_sidechains()] == [(SUB[:1], 5)]
    assert conv.feed(side("user", "more"), line=10) == []  # left out: its transcript ended at line 9
    out = [m for number, record in enumerate(SESSION[9:], 10) for m in conv.feed(record, line=number)] + conv.close()
    assert out == MAIN[3:]
    assert conv.take_sidechains() == []


def test_records_without_lines_are_refused_without_saying_where() -> None:
    conv = ClaudeCodeConverter(keep_sidechains=True, max_record_bytes=HELD[1])
    for record in SESSION[:6]:
        conv.feed(record)
    with pytest.raises(LimitExceeded) as caught:
        conv.feed(SESSION[6])
    assert (caught.value.what, caught.value.line) == (message(None, HELD[1]), None)
    report = Report()
    conv.report = report
    conv.feed(SESSION[7])
    assert [(r.kind, r.detail) for r in report.records] == [
        ("drop_sidechain", "sub-agent (user) line left out: its transcript went past max_record_bytes")]


def test_a_turn_too_big_on_its_own_is_refused_as_before_and_the_transcript_goes_on() -> None:
    # The nested converter's own bound on a turn comes first, with its own words: that line
    # changes nothing, and the transcript goes on within its limit.
    big = side("assistant", [{"type": "text", "text": "x" * TOTAL}], "s1")
    conv = ClaudeCodeConverter(keep_sidechains=True, max_record_bytes=TOTAL)
    for number, record in enumerate(SESSION[:5], 1):
        conv.feed(record, line=number)
    with pytest.raises(LimitExceeded) as caught:
        conv.feed(big, line=6)
    assert caught.value.what == f"assistant message 's1' and the tool results held behind it would hold more than {TOTAL} bytes of JSON"
    for number, record in enumerate(SESSION[5:], 6):
        conv.feed(record, line=number)
    conv.close()
    assert [s.messages for s in conv.take_sidechains()] == [SUB]


# -- the pending turn's size -----------------------------------------------------------------------

_BLOCKS = st.sampled_from([
    {"type": "text", "text": "Looking."},
    {"type": "text", "text": ""},
    {"type": "text", "text": "ü ✓ \"quoted\"\n"},
    {"type": "thinking", "thinking": "hmm", "signature": "sig"},
    {"type": "thinking", "thinking": "", "signature": "s2"},
    {"type": "redacted_thinking", "data": "xx"},
    use("t1", "Read", path="a.py"),
    use("t2", "Bash", command='echo "hi"'),
    {"type": "server_tool_use", "id": "srv1", "name": "web_search", "input": {"q": "x"}},
    {"type": "web_search_tool_result", "tool_use_id": "srv1", "content": [{"type": "web_search_result", "url": "u"}]},
    {"type": "image", "source": {}},
])
_RESULTS = st.sampled_from([
    result("t1", "data"),
    result("t2", ""),
    {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "a"}], "is_error": True},
    result("gone", "late"),
])
_LINES = st.lists(st.one_of(
    st.tuples(st.just("assistant"), st.lists(_BLOCKS, max_size=3), st.sampled_from(["a", "b"])),
    st.tuples(st.just("user"), st.lists(_RESULTS, min_size=1, max_size=2), st.none()),
    st.tuples(st.just("text"), st.just("go on"), st.none()),
), max_size=12)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_LINES)
def test_a_pending_turn_counts_what_it_will_give_out(lines: list[tuple[str, Any, Any]]) -> None:
    # Kept up to date line by line, the count is the size of what the turn gives out (its
    # message and its results), whatever blocks it gathered.
    conv = ClaudeCodeConverter()
    sizes: _claude._TurnSize | None = None
    for kind, content, mid in lines:
        record = cc("assistant", content, mid) if kind == "assistant" else cc("user", content)
        conv.feed(record)
        turn = conv._turn
        if turn is None:
            continue
        if sizes is None or sizes.turn is not turn:
            sizes = _claude._TurnSize(turn)
        sizes.update()
        assert sizes.size == sum(map(size, turn.flush()))


@needs_samples
def test_a_real_sub_agent_at_the_limit_is_read_and_one_byte_past_it_is_refused() -> None:
    path = next(SAMPLES.glob("claude_code/ccviewer_*.jsonl"))
    main, *_ = conversations(path)
    main_kept, *subs = conversations(path, kept=True)  # (sized as the reader holds them: source fields and all)
    assert len(subs) == 2
    largest = max(sum(map(size, sub)) for sub in subs)
    # Each transcript on its own (read_messages holds none of them once ended)...
    assert list(read_messages(path, "claude-code", keep_sidechains=True, max_record_bytes=largest)) == main
    with pytest.raises(LimitExceeded) as caught:
        list(read_messages(path, "claude-code", keep_sidechains=True, max_record_bytes=largest - 1))
    assert (caught.value.line, caught.value.what) == (40, message(26, largest - 1))  # the second sub-agent's last turn
    # ... and all of them together, held until the main conversation ends.
    together = sum(sum(map(size, sub)) for sub in subs)
    assert conversations(path, kept=True, max_record_bytes=together) == [main_kept, *subs]
    with pytest.raises(LimitExceeded) as caught:
        conversations(path, max_record_bytes=together - 1)
    assert (caught.value.line, caught.value.column) == (26, None)  # where the second began


# -- memory ------------------------------------------------------------------------------------------


def long_sub_agent(turns: int) -> list[dict[str, Any]]:
    """The session's start, then a sub-agent of ``turns`` turns of about 2 KB each."""
    body = "The quick brown fox jumps over the lazy dog. " * 45
    lines = [side("assistant", [{"type": "text", "text": f"{i} {body}"}], f"s{i}") for i in range(turns)]
    return [*SESSION[:4], side("user", "Go.", root=True), *lines, *SESSION[9:]]


def peak_reading(path: Path, **kwargs: Any) -> tuple[int, list[list[dict[str, Any]]]]:
    tracemalloc.start()
    try:
        out = conversations(path, on_invalid="skip", report=Report(max_records=0), **kwargs)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return peak, out


def test_what_a_long_transcript_holds_is_bounded(tmp_path: Path) -> None:
    # 5,000 turns (10 MB of text): held whole until the sub-agent ended, whatever its length.
    # Within 256 KiB it ends there and the rest of it is read past, held nowhere.
    path = write(tmp_path, long_sub_agent(5_000))
    whole_peak, whole = peak_reading(path)
    peak, out = peak_reading(path, max_record_bytes=256 * 1024)
    assert len(whole[1]) == 5_001 and whole[0] == MAIN
    assert out[0] == MAIN and out[1] == whole[1][:len(out[1])] and 100 < len(out[1]) < 130
    assert whole_peak > 8_000_000, whole_peak
    assert peak < 3_000_000, peak


def test_the_message_readers_hold_no_transcript(tmp_path: Path) -> None:
    # read_messages gives out the main conversation only: the sub-agents' transcripts it
    # cannot give out are let go as each ends, not held to the end of the file.
    body = "The quick brown fox jumps over the lazy dog. " * 45
    agents = [line for k in range(10) for line in [
        side("user", "Go.", root=True),
        *(side("assistant", [{"type": "text", "text": f"{k} {i} {body}"}], f"s{k}.{i}") for i in range(500)),
    ]]
    path = write(tmp_path, [*SESSION[:4], *agents, *SESSION[9:]])
    tracemalloc.start()
    try:
        messages = list(read_messages(path, keep_sidechains=True, report=Report(max_records=0)))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert messages == MAIN
    assert peak < 4_000_000, peak  # one transcript at a time (all ten held to the end: 12 MB)
