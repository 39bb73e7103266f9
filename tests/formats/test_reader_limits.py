"""What a reader holds for one message it assembles from several records is bounded by
``max_record_bytes``, with the error the other reader limits give (the limit's name, the file
position, what to do): a Claude Code turn (one ``message.id`` written over many lines, and the
tool results held behind it), an Anthropic assistant message (and the tool results of the user
messages after it) and a run of Responses items (an assistant turn, or bare input parts).
Regressions of the sweep of input shapes: a turn of 80,000 one-block lines held 4 KiB a block
(377 MB for a 42 MB file), orphan results and bare parts grew with the file; then of a review:
an Anthropic body's results piled up unbounded, its blocks' keys held 4 KiB each."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tracemalloc
from pathlib import Path
from typing import Any

import orjson
import pytest

from normalizer import InputError, LimitExceeded, Report
from normalizer.formats import _blocks, read_conversations, read_messages
from normalizer.formats._anthropic import AnthropicConverter
from normalizer.formats._claude import ClaudeCodeConverter
from normalizer.formats._records import DEFAULT_MAX_RECORD_BYTES

TEXT = "The quick brown fox jumps over the lazy dog. "


def jsonl(records: list[Any]) -> bytes:
    return b"".join(orjson.dumps(r) + b"\n" for r in records)


def write(tmp_path: Path, records: list[Any], name: str = "session.jsonl") -> Path:
    path = tmp_path / name
    path.write_bytes(jsonl(records))
    return path


def cc(kind: str, content: Any, mid: str = "msg_1", **fields: Any) -> dict[str, Any]:
    """A Claude Code line (an assistant one belongs to message ``mid``)."""
    message: dict[str, Any] = {"role": kind, "content": content}
    if kind == "assistant":
        message.update(id=mid, model="claude", type="message")
    return {"type": kind, "uuid": "u", "parentUuid": None, "isSidechain": False, "message": message, **fields}


def text(i: int) -> dict[str, Any]:
    return {"type": "text", "text": f"part {i} {TEXT}"}


def size(block: Any) -> int:
    """What a block adds to the pending turn: its JSON's size (keys sorted, compact)."""
    return len(orjson.dumps(block, option=orjson.OPT_SORT_KEYS))


def crossing(sizes: list[int], limit: int) -> int:
    """The 0-based index of the first item that takes a running total past ``limit``."""
    total = 0
    for i, n in enumerate(sizes):
        total += n
        if total > limit:
            return i
    raise AssertionError("the total never passes the limit")


def one_turn(blocks: int) -> list[dict[str, Any]]:
    """A user line, one message.id written over ``blocks`` lines (a block each), a user line."""
    return [cc("user", "start"), *(cc("assistant", [text(i)]) for i in range(blocks)), cc("user", "next")]


def orphans(results: int) -> list[dict[str, Any]]:
    """A text turn, then ``results`` lines of a tool result no call of it made."""
    tail = [cc("user", [{"type": "tool_result", "tool_use_id": f"gone_{i}", "content": f"r{i} {TEXT}"}]) for i in range(results)]
    return [cc("user", "start"), cc("assistant", [{"type": "text", "text": "hi"}]), *tail, cc("user", "next")]


def claude_messages(records: list[Any], **kwargs: Any) -> list[dict[str, Any]]:
    return list(read_messages(io.BytesIO(jsonl(records)), "claude-code", **kwargs))


def conversations(source: Any, **kwargs: Any) -> list[list[dict[str, Any]]]:
    """Each conversation's messages, read before the next conversation is asked for."""
    return [list(c.messages) for c in read_conversations(source, "claude-code", keep_sidechains=True, **kwargs)]


# -- Claude Code: one message.id over many lines ------------------------------------------------


def test_a_claude_turn_of_many_lines_is_refused_at_the_line_past_max_record_bytes(tmp_path: Path) -> None:
    limit = 2_000
    path = write(tmp_path, one_turn(40))
    # The blocks of lines 2, 3, ...: the first line past the limit is refused.
    line = 2 + crossing([size(text(i)) for i in range(40)], limit)
    with pytest.raises(LimitExceeded) as caught:
        list(read_messages(path, "claude-code", max_record_bytes=limit))
    exc = caught.value
    assert (exc.limit, exc.value) == ("max_record_bytes", limit)
    assert (exc.source, exc.line, exc.column) == (str(path), line, 1)
    assert str(exc) == (
        f"{path}:{line}:1: assistant message 'msg_1' (begun on line 2) and the tool results held behind it would "
        f"hold more than {limit} bytes of JSON. Raise max_record_bytes if one turn of this session really is that "
        "large (Claude Code writes a turn as a few lines)"
    )


def test_a_claude_turn_at_the_limit_is_read_and_one_byte_past_it_is_not() -> None:
    records = one_turn(10)
    held = sum(size(text(i)) for i in range(10))
    expected = claude_messages(records)
    assert claude_messages(records, max_record_bytes=held) == expected
    with pytest.raises(LimitExceeded) as caught:
        claude_messages(records, max_record_bytes=held - 1)
    assert caught.value.line == 11  # the tenth block's line


def test_repeated_blocks_count_once() -> None:
    # Streaming snapshots repeat a message's blocks: the duplicates are dropped, not held.
    block = text(0)
    records = [cc("user", "start"), *(cc("assistant", [block, text(1)]) for _ in range(50)), cc("user", "next")]
    report = Report()
    out = claude_messages(records, max_record_bytes=size(block) + size(text(1)), report=report)
    assert out == claude_messages(records)
    assert out[1]["content"] == f"{block['text']}\n\n{text(1)['text']}"
    assert report.counts["skip_duplicate_block"] == 98


def test_the_limit_is_per_turn_not_per_file() -> None:
    # 200 turns, each well under the limit, together far past it.
    records = [cc("user", "start")]
    for turn in range(200):
        records += [cc("assistant", [text(i)], mid=f"msg_{turn}") for i in range(3)]
        records.append(cc("user", f"next {turn}"))
    out = claude_messages(records, max_record_bytes=3 * size(text(0)) + 10)
    assert out == claude_messages(records)
    assert len(out) == 401


def test_a_refused_line_can_be_skipped_and_the_turn_goes_on_within_the_limit() -> None:
    limit = 5 * size(text(0))
    report = Report()
    out = claude_messages(one_turn(8), max_record_bytes=limit, on_invalid="skip", report=report)
    # Blocks 0-4 fill the turn; blocks 5-7 (lines 7-9) would take it past the limit.
    assert [r.line for r in report.records if r.kind == "skip_invalid"] == [7, 8, 9]
    assert out[1]["content"] == "\n\n".join(text(i)["text"] for i in range(5))
    assert out[-1] == {"role": "user", "content": "next"}


def test_a_turn_without_a_message_id_is_one_line() -> None:
    # No message.id, requestId or uuid: each line is a turn of its own, never merged.
    records = [cc("user", "start")]
    for i in range(3):
        line = cc("assistant", [text(i)])
        del line["message"]["id"], line["uuid"]
        records.append(line)
    out = claude_messages(records, max_record_bytes=size(text(0)))
    assert [m["content"] for m in out[1:]] == [text(i)["text"] for i in range(3)]
    with pytest.raises(LimitExceeded) as caught:
        claude_messages(records, max_record_bytes=size(text(0)) - 1)
    assert caught.value.line == 2
    assert "assistant message and the tool results" in str(caught.value)  # no id to name, no earlier line


# -- Claude Code: tool results held behind the pending turn -------------------------------------


def result_size(i: int) -> int:
    """What the tool message of ``orphans``' i-th result adds (keys and strings by their length)."""
    return len("role") + len("tool") + len("tool_call_id") + len(f"gone_{i}") + len("content") + len(f"r{i} {TEXT}")


def test_orphan_results_behind_a_text_turn_are_refused_past_max_record_bytes(tmp_path: Path) -> None:
    limit = 3_000
    path = write(tmp_path, orphans(100))
    first = size({"type": "text", "text": "hi"})  # the turn's own block (line 2)
    line = 3 + crossing([first + result_size(0)] + [result_size(i) for i in range(1, 100)], limit)
    with pytest.raises(LimitExceeded) as caught:
        list(read_messages(path, "claude-code", max_record_bytes=limit))
    exc = caught.value
    assert (exc.limit, exc.value, exc.source, exc.line, exc.column) == ("max_record_bytes", limit, str(path), line, 1)
    assert f"{path}:{line}:1: assistant message 'msg_1' (begun on line 2) and the tool results held" in str(exc)


def test_results_that_come_with_user_text_are_not_held() -> None:
    # The user text ends the turn on that line: its results go out at once, whatever their size.
    big = "x" * 10_000
    records = [
        cc("user", "start"),
        cc("assistant", [{"type": "tool_use", "id": "t1", "name": "Read", "input": {}}]),
        cc("user", [{"type": "tool_result", "tool_use_id": "t1", "content": big}, {"type": "text", "text": "go on"}]),
    ]
    out = claude_messages(records, max_record_bytes=1_000)
    assert [m["role"] for m in out] == ["user", "assistant", "tool", "user"]
    assert out[2]["content"] == big


def test_a_turn_with_its_results_within_the_limit_reads_as_before() -> None:
    use = {"type": "tool_use", "id": "t1", "name": "Read", "input": {"p": 1}}
    result = {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "data"}], "is_error": True}
    records = [cc("user", "hi"), cc("assistant", [{"type": "text", "text": "Reading."}]), cc("assistant", [use]),
               cc("user", [result]), cc("user", "thanks")]
    held = size({"type": "text", "text": "Reading."}) + size(use)
    held += len("role" "tool" "tool_call_id" "t1" "content" "data" "source_fields") + len(b'{"is_error":true}')
    expected = claude_messages(records)
    # (the reader holds the result's is_error too, aside for the writer; chat output has no such key)
    assert expected[2] == {"role": "tool", "tool_call_id": "t1", "content": "data"}
    assert claude_messages(records, max_record_bytes=held) == expected
    with pytest.raises(LimitExceeded) as caught:
        claude_messages(records, max_record_bytes=held - 1)
    assert caught.value.line == 4


def test_a_sidechain_turn_has_the_same_limit() -> None:
    side = [cc("user", "task", isSidechain=True), *(cc("assistant", [text(i)], isSidechain=True) for i in range(10))]
    records = [cc("user", "start"), cc("assistant", [text(0)], mid="msg_0"), *side, cc("user", "next")]
    limit = 4 * size(text(0))
    main, sub = conversations(io.BytesIO(jsonl(records)))
    assert [m["role"] for m in main] == ["user", "assistant", "user"] and [m["role"] for m in sub] == ["user", "assistant"]
    with pytest.raises(LimitExceeded) as caught:
        conversations(io.BytesIO(jsonl(records)), max_record_bytes=limit)
    assert caught.value.line == 8  # the sub-agent's fifth block (its turn began on line 4)
    assert "(begun on line 4)" in str(caught.value)


def test_the_converter_takes_the_limit_itself() -> None:
    conv = ClaudeCodeConverter(Report(), max_record_bytes=size(text(0)))
    assert conv.feed(cc("assistant", [text(0)]), line=1) == []
    with pytest.raises(LimitExceeded) as caught:
        conv.feed(cc("assistant", [text(1)]), line=2)
    assert (caught.value.limit, caught.value.line) == ("max_record_bytes", 2)
    # The refused line changed nothing: the turn is the first block alone.
    assert conv.close() == [{"role": "assistant", "content": text(0)["text"]}]
    assert ClaudeCodeConverter().max_record_bytes == DEFAULT_MAX_RECORD_BYTES


def read_traced(data: bytes, fmt: str) -> tuple[list[dict[str, Any]], int]:
    """The messages of ``data`` read as ``fmt``, and the peak of memory traced while reading."""
    tracemalloc.start()
    try:
        out = list(read_messages(io.BytesIO(data), fmt))
        return out, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_claude_turn_of_20000_lines_holds_a_few_bytes_a_block() -> None:
    # Each block's duplicate-detection key was orjson's bytes, which keep their 4 KiB buffer:
    # 20,000 blocks held 91 MB (traced) for 3.5 MB of text. Now about the text, and its key.
    out, peak = read_traced(jsonl(one_turn(20_000)), "claude-code")
    assert len(out) == 3 and out[1]["content"].count("\n\n") == 19_999
    assert peak < 30_000_000, peak


# -- Anthropic: an assistant message and the tool results held behind it ----------------------

ROOT = Path(__file__).parents[2]
ANTHROPIC_HINT = (
    "Raise max_record_bytes if one turn of this conversation really is that large (an assistant message and the "
    "tool results that answer it)"
)


def use(i: int) -> dict[str, Any]:
    return {"type": "tool_use", "id": f"t{i}", "name": "read_file", "input": {"path": f"a{i}.py"}}


def answer(i: int, content: str) -> dict[str, Any]:
    """A user message holding one tool result, for call ``t{i}``."""
    return {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{i}", "content": content}]}


def tool_size(i: int, content: str) -> int:
    """What ``answer(i, content)``'s tool message adds: its keys and strings by their length."""
    return len("role" "tool" "tool_call_id") + len(f"t{i}") + len("content") + len(content)


def asks(calls: int) -> list[dict[str, Any]]:
    """A user message, then one assistant message making ``calls`` calls."""
    return [{"role": "user", "content": "go"}, {"role": "assistant", "content": [use(i) for i in range(calls)]}]


def body(messages: list[dict[str, Any]]) -> bytes:
    """A request body with one message a line: message i is at line i + 2, column 1."""
    lines = b",\n".join(orjson.dumps(m) for m in messages)
    return b'{"model": "claude", "system": "Be brief.", "messages": [\n' + lines + b"\n]}\n"


def fed(conv: AnthropicConverter, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for message in messages:
        out += conv.feed(message)
    return out + conv.close()


def test_anthropic_results_held_behind_a_turn_are_refused_past_max_record_bytes() -> None:
    # Results wait behind the assistant message until the turn ends: every one was held,
    # whatever their number or size (the review's "Anthropic body").
    contents = [f"result {i} {TEXT}" for i in range(20)]
    messages = asks(20) + [answer(i, c) for i, c in enumerate(contents)]
    held = sum(size(use(i)) for i in range(20))
    limit = held + 500
    at = 2 + crossing([held + tool_size(0, contents[0])] + [tool_size(i, c) for i, c in enumerate(contents)][1:], limit)
    conv = AnthropicConverter(Report(), max_record_bytes=limit)
    for message in messages[:at]:
        assert conv.feed(message) == ([{"role": "user", "content": "go"}] if message is messages[0] else [])
    with pytest.raises(LimitExceeded) as caught:
        conv.feed(messages[at])
    exc = caught.value
    assert (exc.limit, exc.value, exc.source, exc.line, exc.column, exc.index) == ("max_record_bytes", limit, None, None, None, None)
    assert str(exc) == (
        f"input: assistant message (begun at message 1) and the tool results held behind it would hold more than "
        f"{limit} bytes of JSON. {ANTHROPIC_HINT}"
    )
    # The refused message changed nothing: the turn ends with the results before it.
    out = conv.close()
    assert [m.get("tool_call_id") for m in out] == [None, *(f"t{i}" for i in range(at - 2))]


def test_an_anthropic_turn_at_the_limit_is_read_and_one_byte_past_it_is_not() -> None:
    messages = asks(3) + [answer(i, f"r{i}") for i in range(3)] + [{"role": "user", "content": "thanks"}]
    held = sum(size(use(i)) for i in range(3)) + sum(tool_size(i, f"r{i}") for i in range(3))
    expected = fed(AnthropicConverter(), messages)
    assert [m["role"] for m in expected] == ["user", "assistant", "tool", "tool", "tool", "user"]
    assert fed(AnthropicConverter(max_record_bytes=held), messages) == expected
    conv = AnthropicConverter(max_record_bytes=held - 1)
    with pytest.raises(LimitExceeded, match=r"^input: assistant message \(begun at message 1\) and the tool results"):
        fed(conv, messages)
    assert conv._fed == 5  # the third result (message 4) was refused


def test_an_anthropic_turn_given_lines_says_the_line_it_began_on() -> None:
    # JSONL of Anthropic messages: lines, as Claude Code's.
    conv = AnthropicConverter(max_record_bytes=size(use(0)) + tool_size(0, "ok"))
    conv.feed(asks(1)[0], line=1)
    conv.feed(asks(1)[1], line=2)
    conv.feed(answer(0, "ok"), line=3)
    with pytest.raises(LimitExceeded) as caught:
        conv.feed(answer(0, "again"), line=4)
    assert caught.value.line == 4
    assert str(caught.value).startswith("input: assistant message (begun on line 2) and the tool results held behind it")


def test_an_anthropic_assistant_message_alone_past_the_limit_names_no_other_message() -> None:
    blocks = [text(i) for i in range(10)]
    held = sum(map(size, blocks))
    conv = AnthropicConverter(max_record_bytes=held)
    assert conv.feed({"role": "assistant", "content": blocks + blocks}) == []  # repeated blocks count once
    conv = AnthropicConverter(max_record_bytes=held - 1)
    conv.feed({"role": "user", "content": "go"})
    with pytest.raises(LimitExceeded) as caught:
        conv.feed({"role": "assistant", "content": blocks})
    assert str(caught.value).startswith(
        f"input: assistant message and the tool results held behind it would hold more than {held - 1} bytes of JSON."
    )
    assert conv.close() == []  # the refused message began no turn


def test_the_anthropic_limit_is_per_turn_and_results_with_user_text_are_not_held() -> None:
    # 100 turns, each within the limit, together far past it; a result that comes with user
    # text goes out on that message (the text ends the turn), whatever its size.
    big = "x" * 10_000
    messages: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    for turn in range(100):
        messages += [{"role": "assistant", "content": [use(turn)]}, answer(turn, "done")]
    messages += [{"role": "assistant", "content": [use(100)]},
                 {"role": "user", "content": [*answer(100, big)["content"], {"type": "text", "text": "go on"}]}]
    limit = size(use(100)) + tool_size(100, "done")
    assert fed(AnthropicConverter(max_record_bytes=limit), messages) == fed(AnthropicConverter(), messages)


def test_anthropic_cline_text_results_are_held_results_too() -> None:
    # Cline answers a call with user text: paired with the call, it is a result held like any.
    messages = [*asks(2), {"role": "user", "content": [{"type": "text", "text": "[read_file for 'a0.py'] Result:\nA"}]},
                {"role": "user", "content": [{"type": "text", "text": "[read_file for 'a1.py'] Result:\nB"}]}]
    held = size(use(0)) + size(use(1)) + tool_size(0, "A") + tool_size(1, "B")
    report = Report()
    out = fed(AnthropicConverter(report, max_record_bytes=held), messages)
    assert [(m["role"], m.get("content")) for m in out[2:]] == [("tool", "A"), ("tool", "B")]
    assert [r.kind for r in report.records] == ["pair_text_result"] * 2
    with pytest.raises(LimitExceeded, match=r"\(begun at message 1\)"):
        fed(AnthropicConverter(max_record_bytes=held - 1), messages)


def test_the_anthropic_converter_takes_the_limit_itself() -> None:
    assert AnthropicConverter().max_record_bytes == DEFAULT_MAX_RECORD_BYTES
    conv = AnthropicConverter(Report(), max_record_bytes=size(use(0)))
    assert conv.feed(asks(1)[1]) == []
    with pytest.raises(LimitExceeded):
        conv.feed(answer(0, "x"))
    with pytest.raises(InputError, match="expected an Anthropic message"):
        conv.feed({"role": "robot"})  # a refused message counts: the reader's index counts it too
    with pytest.raises(LimitExceeded, match=r"\(begun at message 0\)"):
        conv.feed(answer(0, "y"))
    assert conv._fed == 4


@pytest.mark.parametrize("block", [
    {"type": "tool_result", "tool_use_id": "t1", "content": "text, ü"},
    {"type": "tool_result", "tool_use_id": "t1"},
    {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
    {"type": "tool_result", "tool_use_id": "t1", "content": "failed", "is_error": True},
    {"type": "web_search_tool_result", "tool_use_id": "t1", "content": [{"type": "web_search_result", "url": "u"}]},
], ids=["text", "none", "parts", "fields", "server"])
def test_a_held_results_quick_size_is_its_size(block: dict[str, Any]) -> None:
    # The common tool message (text content, nothing else) is counted without the loop.
    result = AnthropicConverter()._result(block, None)
    assert _blocks.result_size(result) == _blocks.json_size(result)


def test_an_anthropic_message_of_20000_blocks_holds_a_few_bytes_a_block() -> None:
    # As a Claude turn's: each block's duplicate-detection key was orjson's bytes, which keep
    # their 4 KiB buffer: one assistant message of 20,000 blocks (a 1.6 MB body) peaked at
    # 96 MB (traced). Now 16 MB: the message, its keys, the output.
    message = {"role": "assistant", "content": [text(i) for i in range(20_000)]}
    out, peak = read_traced(body([{"role": "user", "content": "go"}, message, {"role": "user", "content": "next"}]),
                            "anthropic")
    assert len(out) == 4 and out[2]["content"].count("\n\n") == 19_999
    assert peak < 30_000_000, peak


@pytest.fixture(scope="module")
def default_bodies(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Two request bodies whose turn holds exactly the default limit, and one byte more: two
    results of about 32 MiB behind an assistant message of two calls (each message well
    under the limit itself, in bytes of the file)."""
    folder = tmp_path_factory.mktemp("anthropic")
    first = "a" * (DEFAULT_MAX_RECORD_BYTES // 2)
    rest = DEFAULT_MAX_RECORD_BYTES - size(use(0)) - size(use(1)) - tool_size(0, first) - tool_size(1, "")
    paths = []
    for name, n in (("at.json", rest), ("past.json", rest + 1)):
        path = folder / name
        path.write_bytes(body([*asks(2), answer(0, first), answer(1, "b" * n), {"role": "user", "content": "thanks"}]))
        paths.append(path)
    return paths[0], paths[1]


def test_an_anthropic_body_past_the_default_limit_is_refused_where_the_message_is(
    default_bodies: tuple[Path, Path],
) -> None:
    at, past = default_bodies
    out = list(read_messages(at, "anthropic"))
    assert [m["role"] for m in out] == ["system", "user", "assistant", "tool", "tool", "user"]
    with pytest.raises(LimitExceeded) as caught:
        list(read_messages(past, "anthropic"))
    exc = caught.value
    assert (exc.limit, exc.value, exc.source, exc.line, exc.column) == ("max_record_bytes", DEFAULT_MAX_RECORD_BYTES, str(past), 5, 1)
    assert str(exc) == (
        f"{past}:5:1: assistant message (begun at message 1) and the tool results held behind it would hold more than "
        f"{DEFAULT_MAX_RECORD_BYTES} bytes of JSON. {ANTHROPIC_HINT}"
    )


def test_the_command_line_refuses_an_anthropic_body_past_the_limit_in_one_line(default_bodies: tuple[Path, Path]) -> None:
    past = default_bodies[1]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "120"}
    done = subprocess.run([sys.executable, "-m", "normalizer", "repair", "--from", "anthropic", str(past)],
                          capture_output=True, env=env, timeout=120)
    assert done.returncode == 1  # as for every input error
    errors = [line for line in done.stderr.decode().splitlines() if line.startswith("error:")]
    assert errors == [
        f"error: {past}:5:1: assistant message (begun at message 1) and the tool results held behind it would hold "
        f"more than {DEFAULT_MAX_RECORD_BYTES} bytes of JSON. {ANTHROPIC_HINT}"
    ]
    assert b"Traceback" not in done.stderr


def test_an_anthropic_body_is_refused_past_the_readers_max_record_bytes(tmp_path: Path) -> None:
    contents = [f"result {i} {TEXT}" for i in range(20)]
    path = tmp_path / "request.json"
    path.write_bytes(body(asks(20) + [answer(i, c) for i, c in enumerate(contents)]))
    held = sum(size(use(i)) for i in range(20))
    limit = held + 500
    index = 2 + crossing([held + tool_size(0, contents[0])] + [tool_size(i, c) for i, c in enumerate(contents)][1:], limit)
    with pytest.raises(LimitExceeded) as caught:
        list(read_messages(path, "anthropic", max_record_bytes=limit))
    exc = caught.value
    assert (exc.limit, exc.value, exc.source, exc.line, exc.column) == ("max_record_bytes", limit, str(path), index + 2, 1)
    assert str(exc) == (
        f"{path}:{index + 2}:1: assistant message (begun at message 1) and the tool results held behind it would "
        f"hold more than {limit} bytes of JSON. {ANTHROPIC_HINT}"
    )
    report = Report()
    out = list(read_messages(path, "anthropic", max_record_bytes=limit, on_invalid="skip", report=report))
    assert [r.line for r in report.records if r.kind == "skip_invalid"] == list(range(index + 2, 24))  # lines 2-23: the 22 messages
    assert [m["tool_call_id"] for m in out[3:]] == [f"t{i}" for i in range(index - 2)]
