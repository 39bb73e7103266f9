"""Claude Code sessions and Codex rollouts repaired in their own format.

Pinned exactly on hand-made sessions (every byte of the output), and on the real samples:
each clean sample comes back byte-identical; each sample cut right after a call, and in the
middle of a parallel batch, comes back as the same file plus synthetic result lines in the
tool's own shape, which our reader reads back as the same format, whose calls are all
answered (the core then finds nothing to pair), and whose ``parentUuid`` chain is whole.
"""

from __future__ import annotations

import io
import uuid
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
import pytest

import normalizer
from normalizer import InputError, InvalidMessage, LimitExceeded, UsageError
from normalizer.formats import read_messages
from normalizer.formats import _session_write, _sessions
from normalizer.formats._sessions import SessionRepairer, repair_session

from realdata import needs_samples, sample_files
from session_checks import (anthropic_violations, assert_chain_whole, assert_messages_kept, calls_of, cuts, lines_of, main_chain,
                            results_of)

STUB = normalizer.DEFAULT_STUB_TEXT
CLAUDE = sample_files("", "**/claude_code/*.jsonl")
CODEX = sample_files("", "**/codex*/*.jsonl")
PAIRING = {"stub_missing_result", "drop_orphan_result", "drop_duplicate_result", "move_result", "reorder_results"}


def repaired(data: bytes, **options: Any) -> tuple[bytes, normalizer.Report]:
    repairer = SessionRepairer(**options)
    return repairer.feed(data) + repairer.close(), repairer.report


def records(report: normalizer.Report) -> list[tuple[str, int | None, int | None, Any]]:
    return [(r.kind, r.line, r.output, r.dropped) for r in report.records]


def dumps(*values: dict[str, Any]) -> bytes:
    return b"".join(orjson.dumps(v) + b"\n" for v in values)


# -- a hand-made Claude Code session -------------------------------------------------------------

ENV = {"isSidechain": False, "userType": "external", "cwd": "/repo", "sessionId": "s-1", "gitBranch": "main"}


def cc_user(u: str, parent: str | None, text: Any, version: str = "2.0.64", **extra: Any) -> dict[str, Any]:
    return {"parentUuid": parent, **ENV, "version": version, "type": "user", "message": {"role": "user", "content": text},
            "uuid": u, "timestamp": f"2026-01-01T00:00:0{u[-1]}.000Z", **extra}


def cc_call(u: str, parent: str | None, call_id: str, version: str = "2.0.64", msg: str = "msg_1") -> dict[str, Any]:
    return {"parentUuid": parent, **ENV, "version": version, "message": {
        "model": "claude-sonnet-4-5", "id": msg, "type": "message", "role": "assistant",
        "content": [{"type": "tool_use", "id": call_id, "name": "Bash", "input": {"command": "ls"}}]},
        "type": "assistant", "uuid": u, "timestamp": f"2026-01-01T00:00:0{u[-1]}.000Z"}


def cc_text(u: str, parent: str | None, text: str, version: str = "2.0.64", msg: str = "msg_9") -> dict[str, Any]:
    return {"parentUuid": parent, **ENV, "version": version, "message": {
        "model": "claude-sonnet-4-5", "id": msg, "type": "message", "role": "assistant",
        "content": [{"type": "text", "text": text}]}, "type": "assistant", "uuid": u,
        "timestamp": f"2026-01-01T00:00:0{u[-1]}.000Z"}


def cc_result(u: str, parent: str | None, call_id: str, version: str = "2.0.64") -> dict[str, Any]:
    return cc_user(u, parent, [{"tool_use_id": call_id, "type": "tool_result", "content": "a.txt"}], version)


def stub_uuid(call_line: str, call_id: str) -> str:
    return str(uuid.uuid5(uuid.UUID("6f3c3b2e-4a43-5c1b-9a2e-636861746e6f"), f"{call_line}/{call_id}"))


def later(timestamp: str, ms: int) -> str:
    """``2026-01-01T00:00:02.000Z`` ``ms`` milliseconds later."""
    when = datetime.strptime(timestamp, "%Y-%m-%dT%H:%M:%S.%fZ") + timedelta(milliseconds=ms)
    return when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"


def cc_stub(parent: str | None, call_id: str, timestamp: str, version: str = "2.0.64", tree: bool = False,
            call_line: str | None = None, nth: int = 1) -> dict[str, Any]:
    """The synthetic result of the ``nth`` open call of a turn; ``call_line`` is the uuid of
    its tool_use line (``parent`` unless given); ``timestamp`` is the line's before it: the
    stub is ``nth`` ms later (Claude Code up to 2.0 resumes from the latest line, and of two
    of one timestamp from the first: a stub stamped like its call was never loaded)."""
    line = {"parentUuid": parent, **ENV, "version": version, "type": "user", "message": {"role": "user", "content": [
        {"tool_use_id": call_id, "type": "tool_result", "content": STUB, "is_error": True}]},
        "uuid": stub_uuid(call_line or str(parent), call_id), "timestamp": later(timestamp, nth),
        "toolUseResult": f"Error: {STUB}"}
    if tree:
        line["sourceToolAssistantUUID"] = parent
    return line


def test_a_clean_session_comes_back_byte_for_byte() -> None:
    data = dumps(cc_user("u1", None, "hi"), cc_call("u2", "u1", "t1"), cc_result("u3", "u2", "t1"), cc_text("u4", "u3", "done"))
    out, report = repaired(data)
    assert out == data and not report.changed and report.format == "claude-code"


def test_a_session_cut_after_a_tool_use_gets_a_synthetic_result() -> None:
    data = dumps(cc_user("u1", None, "hi"), cc_call("u2", "u1", "t1"))
    out, report = repaired(data)
    assert out == data + dumps(cc_stub("u2", "t1", "2026-01-01T00:00:02.000Z"))
    assert records(report) == [("stub_missing_result", 2, 2, None)]
    assert report.records[0].detail == "call t1 (line 2) was not answered; a synthetic tool_result line was added"
    again, report = repaired(out)
    assert again == out and not report.changed


def test_from_version_2_1_a_synthetic_result_hangs_from_its_tool_use_line() -> None:
    v = "2.1.38"
    data = dumps(cc_user("u1", None, "hi", v), cc_call("u2", "u1", "t1", v, "m"), cc_call("u3", "u2", "t2", v, "m"),
                 cc_result("u4", "u2", "t1", v))
    out, _ = repaired(data)
    assert out == data + dumps(cc_stub("u3", "t2", "2026-01-01T00:00:04.000Z", v, tree=True))


def test_a_call_id_left_open_in_two_turns_gets_two_synthetic_results_of_their_own() -> None:
    # Both used to get uuid5(sessionId/call id): two lines of one uuid, the chain a loop and
    # the first turn unreachable. Now each stub's uuid comes from its tool_use line's.
    data = dumps(cc_user("u1", None, "hi"), cc_call("a1", "u1", "t1", msg="m1"), cc_user("u2", "a1", "go on"),
                 cc_call("a2", "u2", "t1", msg="m2"), cc_user("u3", "a2", "and?"))
    out, report = repaired(data)
    s1, s2 = cc_stub("a1", "t1", "2026-01-01T00:00:01.000Z"), cc_stub("a2", "t1", "2026-01-01T00:00:02.000Z")
    assert s1["uuid"] != s2["uuid"]
    assert out == dumps(cc_user("u1", None, "hi"), cc_call("a1", "u1", "t1", msg="m1"), s1, cc_user("u2", s1["uuid"], "go on"),
                        cc_call("a2", "u2", "t1", msg="m2"), s2, cc_user("u3", s2["uuid"], "and?"))
    assert [x["uuid"] for x in main_chain(lines_of(out))] == ["u1", "a1", s1["uuid"], "u2", "a2", s2["uuid"], "u3"]
    assert_resumable(out, data)


@pytest.mark.parametrize("v", ["1.0.108", "2.0.76", "2.1.38"])
def test_synthetic_results_are_stamped_after_the_line_before_them_one_ms_apart(v: str) -> None:
    """Issue 35: Claude Code 2.0.76 (and 1.0) resumes from the latest line by timestamp, and
    of two of one timestamp from the first in the file: stubs stamped like their tool_use line
    were never loaded, nor the call (tests/owners proves 1.0.108, 2.0.76 and today's load them
    now). The n-th stub of a turn is n ms after the line before it; the rest of the shape is
    unchanged."""
    calls = [cc_call("u2", "u1", "t1", v, "m"), cc_call("u3", "u2", "t2", v, "m")]
    calls[1]["timestamp"] = "2026-01-01T00:00:59.999Z"  # the next ms is the next minute
    data = dumps(cc_user("u1", None, "hi", v), *calls)
    out = lines_of(repaired(data)[0])
    first, second = out[-2:]
    assert [first["timestamp"], second["timestamp"]] == ["2026-01-01T00:01:00.000Z", "2026-01-01T00:01:00.001Z"]
    tree = v.startswith("2.1")
    # 2.1 on: each hangs from its tool_use line; before: from the line before it
    assert first == cc_stub("u2" if tree else "u3", "t1", "2026-01-01T00:00:59.999Z", v, tree=tree, call_line="u2")
    assert second == cc_stub("u3" if tree else first["uuid"], "t2", "2026-01-01T00:00:59.999Z", v, tree=tree,
                             call_line="u3", nth=2)


def test_a_timestamp_not_in_claude_code_s_own_form_is_copied_as_it_is() -> None:
    call = cc_call("u2", "u1", "t1")
    call["timestamp"] = "2026-01-01T00:00:02Z"
    out = lines_of(repaired(dumps(cc_user("u1", None, "hi"), call))[0])
    assert out[-1]["timestamp"] == "2026-01-01T00:00:02Z"


def test_a_prompt_after_an_interrupted_tool_use_is_re_pointed_at_the_synthetic_result() -> None:
    data = dumps(cc_user("u1", None, "hi"), cc_call("u2", "u1", "t1"), cc_user("u3", "u2", "go on"), cc_text("u4", "u3", "ok"))
    out, report = repaired(data)
    stub = cc_stub("u2", "t1", "2026-01-01T00:00:02.000Z")
    assert out == dumps(cc_user("u1", None, "hi"), cc_call("u2", "u1", "t1"), stub,
                        cc_user("u3", stub["uuid"], "go on"), cc_text("u4", "u3", "ok"))
    assert records(report) == [("stub_missing_result", 2, 2, None), ("repoint_parent", 3, 3, {"parentUuid": "u2"})]


def test_a_late_result_moves_up_as_a_whole_line_and_the_chain_follows() -> None:
    late = cc_result("u4", "u3", "t1")
    data = dumps(cc_user("u1", None, "hi"), cc_call("u2", "u1", "t1"), cc_user("u3", "u2", "and?"), late, cc_text("u5", "u4", "ok"))
    out, report = repaired(data)
    assert out == dumps(cc_user("u1", None, "hi"), cc_call("u2", "u1", "t1"), {**late, "parentUuid": "u2"},
                        cc_user("u3", "u4", "and?"), cc_text("u5", "u3", "ok"))
    assert records(report) == [
        ("repoint_parent", 4, 2, {"parentUuid": "u3"}),
        ("move_result", 4, 2, None),
        ("repoint_parent", 3, 3, {"parentUuid": "u2"}),
        ("repoint_parent", 5, 4, {"parentUuid": "u4"}),
    ]


def test_orphan_and_duplicate_results_are_removed_whole() -> None:
    orphan, duplicate = cc_result("u4", "u3", "gone"), cc_result("u5", "u4", "t1")
    data = dumps(cc_user("u1", None, "hi"), cc_call("u2", "u1", "t1"), cc_result("u3", "u2", "t1"), orphan, duplicate,
                 cc_text("u6", "u5", "ok"))
    out, report = repaired(data)
    assert out == dumps(cc_user("u1", None, "hi"), cc_call("u2", "u1", "t1"), cc_result("u3", "u2", "t1"),
                        cc_text("u6", "u3", "ok"))
    assert records(report) == [
        ("drop_orphan_result", 4, None, orjson.dumps(orphan).decode()),
        ("drop_duplicate_result", 5, None, orjson.dumps(duplicate).decode()),
        ("repoint_parent", 6, 3, {"parentUuid": "u5"}),
    ]


def test_the_removed_lines_remembered_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    # Each removed line is remembered to the end (a later line may hang from it): at most
    # MAX_REMOVED_LINES of them; the one past it is refused at its line.
    monkeypatch.setattr(_session_write, "MAX_REMOVED_LINES", 2)
    head = [cc_user("u1", None, "hi"), cc_call("u2", "u1", "t1"), cc_result("u3", "u2", "t1")]
    orphans = [cc_result(f"o{i}", "u3", f"gone{i}") for i in range(3)]
    out, report = repaired(dumps(*head, *orphans[:2], cc_text("u9", "o1", "ok")))
    assert out == dumps(*head, cc_text("u9", "u3", "ok"))
    assert [r.kind for r in report.records] == ["drop_orphan_result", "drop_orphan_result", "repoint_parent"]
    with pytest.raises(LimitExceeded) as caught:
        repaired(dumps(*head, *orphans))
    exc = caught.value
    assert (exc.limit, exc.value, exc.line) == ("MAX_REMOVED_LINES", 2, 6)
    assert str(exc) == (
        "<input>:6: more than 2 lines of this session's chain would be removed (tool results that answer no call), "
        "each remembered to the end of the file for the lines that hang from it. No real session has this many; "
        "check that the file is one session, not several joined")


# -- lines written out of the chain's order --------------------------------------------------------
#
# Claude Code rebuilds a conversation by walking the parentUuid chain, and can write a line
# before the line it hangs from: here the next turn's first line (a2, which hangs from r1)
# before the result of the turn before (r1). The chain is u1 -> a1 -> r1 -> a2 -> r2 -> a3.

V21 = "2.1.38"


def chain_lines(v: str = V21) -> dict[str, dict[str, Any]]:
    return {"u1": cc_user("u1", None, "list files", v), "a1": cc_call("a1", "u1", "t1", v, "m1"),
            "a2": cc_call("a2", "r1", "t2", v, "m2"), "r1": cc_result("r1", "a1", "t1", v),
            "r2": cc_result("r2", "a2", "t2", v), "a3": cc_text("a3", "r2", "done", v, "m3")}


def assert_resumable(out: bytes, data: bytes) -> None:
    """What every repair must give: the chain whole (no parent removed, no loop), and the
    same bytes when repaired again."""
    assert_chain_whole(lines_of(out), lines_of(data))
    assert_messages_kept(lines_of(data), lines_of(out), [r.dropped for r in repaired(data)[1].records])
    again, report = repaired(out)
    assert again == out and not report.changed


@pytest.mark.parametrize("v", [V21, "2.0.64"])
def test_a_result_written_after_the_next_turn_began_moves_up_to_its_call(v: str) -> None:
    # It used to be removed as an orphan (its call's turn looked over) and answered with a
    # synthetic result, leaving a2, already written, hanging from a line no longer there.
    c = chain_lines(v)
    data = dumps(c["u1"], c["a1"], c["a2"], c["r1"], c["r2"], c["a3"])
    out, report = repaired(data)
    assert out == dumps(c["u1"], c["a1"], c["r1"], c["a2"], c["r2"], c["a3"])  # the chain's order, nothing edited
    assert records(report) == [("move_result", 4, 2, None)]
    assert report.records[0].detail == "result(s) t1 moved up to their call, before line 3"
    assert_chain_whole(lines_of(out))  # every parent an earlier line now
    assert_resumable(out, data)
    request = io.BytesIO()
    normalizer.write_anthropic(list(read_messages(io.BytesIO(out))), request)
    assert anthropic_violations(orjson.loads(request.getvalue())["messages"]) == []


@pytest.mark.parametrize("between", ["r2", "a2b", "progress"])
def test_a_result_written_two_lines_late_moves_up_too(between: str) -> None:
    # Between the next turn's first line and the late result: that turn's own result, one
    # more line of its message (a second content block), or a progress line.
    c = chain_lines()
    a2b = cc_text("a2b", "a2", "and then", V21, "m2")
    progress = {"parentUuid": "a2", **ENV, "type": "progress", "data": {"type": "hook_progress"}, "uuid": "p1", "timestamp": "t"}
    if between == "r2":
        data = dumps(c["u1"], c["a1"], c["a2"], c["r2"], c["r1"], c["a3"])
        expected = dumps(c["u1"], c["a1"], c["r1"], c["a2"], c["r2"], c["a3"])
    else:
        extra = a2b if between == "a2b" else progress
        r2 = {**c["r2"], "parentUuid": extra["uuid"]}
        data = dumps(c["u1"], c["a1"], c["a2"], extra, c["r1"], r2, c["a3"])
        expected = dumps(c["u1"], c["a1"], c["r1"], c["a2"], extra, r2, c["a3"])
    out, report = repaired(data)
    assert out == expected
    assert records(report) == [("move_result", 5, 2, None)]
    assert_chain_whole(lines_of(out))
    assert_resumable(out, data)


@pytest.mark.parametrize("v", [V21, "2.0.64"])
def test_a_result_moved_up_past_the_user_s_message_keeps_everything_on_the_chain(v: str) -> None:
    # The user wrote while the tool ran: u1 <- a1 <- u2 <- r1 <- a2, a progress line p1 on a
    # branch from a1. Moved up, r1 used to keep hanging from u2 (written after it now) and a2
    # to be re-pointed at p1, the line before it: the chain from the last line was
    # a2 -> p1 -> a1 -> u1, and Claude Code resumed without the call, its result and the
    # user's text. Now r1 takes its place on the chain too: u1 <- a1 <- r1 <- u2 <- a2.
    p1 = {"parentUuid": "a1", **ENV, "type": "progress", "data": {"type": "hook_progress"}, "uuid": "p1", "timestamp": "t"}
    u1, a1, u2 = cc_user("u1", None, "hi", v), cc_call("a1", "u1", "toolu_1", v, "m1"), cc_user("u2", "a1", "wait, also check the tests", v)
    r1, a2 = cc_result("r1", "u2", "toolu_1", v), cc_text("a2", "r1", "done", v, "m2")
    data = dumps(u1, a1, u2, p1, r1, a2)
    out, report = repaired(data)
    assert out == dumps(u1, a1, {**r1, "parentUuid": "a1"}, {**u2, "parentUuid": "r1"}, p1, {**a2, "parentUuid": "u2"})
    assert records(report) == [
        ("repoint_parent", 5, 2, {"parentUuid": "u2"}),
        ("move_result", 5, 2, None),
        ("repoint_parent", 3, 3, {"parentUuid": "a1"}),
        ("repoint_parent", 6, 5, {"parentUuid": "r1"}),
    ]
    assert [x["uuid"] for x in main_chain(lines_of(out))] == ["u1", "a1", "r1", "u2", "a2"]
    assert_resumable(out, data)


@needs_samples
@pytest.mark.parametrize("name", ["spotter_v2.1.38_tool_heavy", "spotter_v2.1.39_8463c716"])
def test_a_real_session_whose_user_wrote_while_a_tool_ran(name: str) -> None:
    """Each real call of a turn of one call gets a user message before its result, as Claude
    Code writes one typed while the tool runs (hanging from the call; the result hanging from
    it): the repair moves every result up to its call, and the chain from the last line
    carries every message it carried (calls, results, the user's text)."""
    path = next(p for p in CLAUDE if p.name.startswith(name))
    values = lines_of(path.read_bytes())
    turns: dict[str, int] = {}
    for value in values:
        if calls_of(value):
            turns[value["message"]["id"]] = turns.get(value["message"]["id"], 0) + 1
    single = {v["uuid"]: v for v in values if calls_of(v) and turns[v["message"]["id"]] == 1}
    lines: list[dict[str, Any]] = []
    typed = 0
    for value in values:
        call = single.get(value.get("parentUuid"))
        if call is not None and results_of(value) and value.get("type") == "user":
            typed += 1
            note = {**value, "uuid": f"typed-{typed}", "message": {"role": "user", "content": "wait, also check the tests"}}
            note.pop("toolUseResult", None)
            note.pop("sourceToolAssistantUUID", None)
            lines += [note, {**value, "parentUuid": note["uuid"]}]
        else:
            lines.append(value)
    assert typed >= 2
    data = dumps(*lines)
    out, report = repaired(data)
    assert report.counts["move_result"] == typed
    assert_resumable(out, data)
    request = io.BytesIO()
    normalizer.write_anthropic(list(read_messages(io.BytesIO(out))), request)
    assert [v for v in anthropic_violations(orjson.loads(request.getvalue())["messages"]) if "tool_" in v] == []


@pytest.mark.parametrize("v", [V21, "2.0.64"])
def test_a_user_line_between_the_parallel_calls_of_one_message_ends_no_turn(v: str) -> None:
    # u1 <- a1 (t1) <- u2 (typed while t1 ran), a1b (t2, the same message as a1) <- a1 <- ...,
    # r2 <- a1b, and r1 (t1's result) written last, hanging from u2: issue 35, pai_v2.0.71
    # user_between. u2 used to end the turn: t1 got a synthetic result, and its real one was
    # removed as an orphan. The message's later line goes on with the turn: it moves up, t1's
    # result after it, and u2 after the results, on the chain.
    u1, a1 = cc_user("u1", None, "list files", v), cc_call("a1", "u1", "t1", v, "m1")
    u2, a1b = cc_user("u2", "a1", "also check the tests please", v), cc_call("a4", "a1", "t2", v, "m1")
    r2, r1 = cc_result("r2", "a4", "t2", v), cc_result("r3", "u2", "t1", v)
    a2 = cc_text("a5", "r3", "done", v, "m2")
    data = dumps(u1, a1, u2, a1b, r2, r1, a2)
    out, report = repaired(data)
    assert out == dumps(u1, a1, a1b, r2, {**r1, "parentUuid": "r2"}, {**u2, "parentUuid": "r3"}, {**a2, "parentUuid": "u2"})
    assert [r[0] for r in records(report)] == ["move_call", "move_result", "repoint_parent", "move_result",
                                               "repoint_parent", "repoint_parent"]
    assert "stub_missing_result" not in report.counts and "drop_orphan_result" not in report.counts
    assert [x["uuid"] for x in main_chain(lines_of(out))] == ["u1", "a1", "a4", "r2", "r3", "u2", "a5"]
    assert_resumable(out, data)


def test_a_user_message_written_after_the_call_that_hangs_from_it_ends_no_turn() -> None:
    # u1 <- a1 <- r1 <- u2 <- a2 <- r2 <- a3, with a2 (a call) written before u2: u2 used to
    # end a2's turn, r2 moved up above it, and a3 was re-pointed at u2, leaving a2 and r2
    # off the chain. A line of the turn hangs from u2: it comes before the turn.
    c = chain_lines()
    u2 = cc_user("u2", "r1", "and the tests?", V21)
    a2 = {**c["a2"], "parentUuid": "u2"}
    data = dumps(c["u1"], c["a1"], c["r1"], a2, u2, c["r2"], c["a3"])
    out, report = repaired(data)
    assert out == data and not report.changed
    assert_resumable(out, data)


def test_a_late_result_that_hung_from_a_removed_line_hangs_from_that_line_s_parent() -> None:
    c = chain_lines()
    orphan = cc_result("o1", "a1", "gone", V21)  # answers no call: removed
    r1 = {**c["r1"], "parentUuid": "o1"}
    data = dumps(c["u1"], c["a1"], orphan, c["a2"], r1, c["r2"], c["a3"])
    out, report = repaired(data)
    assert out == dumps(c["u1"], c["a1"], c["r1"], c["a2"], c["r2"], c["a3"])
    assert records(report) == [
        ("drop_orphan_result", 3, None, orjson.dumps(orphan).decode()),
        ("repoint_parent", 5, 2, {"parentUuid": "o1"}),
        ("move_result", 5, 2, None),
    ]
    assert_resumable(out, data)


def test_a_late_result_that_hung_from_a_line_removed_after_it_moved_hangs_from_the_line_before() -> None:
    # The orphan is written after a2 too, held with it, and removed once the wait is over;
    # r1 hung from the line before it: moved up, it hangs from the line before it there.
    c = chain_lines()
    orphan = cc_result("o1", "a1", "gone", V21)
    r1 = {**c["r1"], "parentUuid": "o1"}
    data = dumps(c["u1"], c["a1"], c["a2"], orphan, r1, c["r2"], c["a3"])
    out, report = repaired(data)
    assert out == dumps(c["u1"], c["a1"], c["r1"], c["a2"], c["r2"], c["a3"])
    assert records(report) == [
        ("repoint_parent", 5, 2, {"parentUuid": "o1"}),
        ("move_result", 5, 2, None),
        ("drop_orphan_result", 4, None, orjson.dumps(orphan).decode()),
    ]
    assert_resumable(out, data)


def test_a_real_orphan_that_no_line_hangs_from_is_still_removed() -> None:
    c = chain_lines()
    orphan = cc_result("o1", "r1", "gone", V21)
    a2 = {**c["a2"], "parentUuid": "o1"}
    data = dumps(c["u1"], c["a1"], c["r1"], orphan, a2, c["r2"], c["a3"])
    out, report = repaired(data)
    assert out == dumps(c["u1"], c["a1"], c["r1"], c["a2"], c["r2"], c["a3"])
    assert records(report) == [("drop_orphan_result", 4, None, orjson.dumps(orphan).decode()),
                               ("repoint_parent", 5, 3, {"parentUuid": "o1"})]
    assert_resumable(out, data)
    # a result of the turn before, written after the next turn is over, that no line hangs from
    a2 = {**c["a2"], "parentUuid": "a1"}  # the chain says t1 went unanswered
    r1 = {**c["r1"], "parentUuid": "a3"}
    data = dumps(c["u1"], c["a1"], a2, c["r2"], c["a3"], r1)
    out, report = repaired(data)
    stub = cc_stub("a1", "t1", "2026-01-01T00:00:01.000Z", V21, tree=True)
    assert out == dumps(c["u1"], c["a1"], stub, {**a2, "parentUuid": stub["uuid"]}, c["r2"], c["a3"])
    assert records(report) == [("stub_missing_result", 2, 2, None), ("repoint_parent", 3, 3, {"parentUuid": "a1"}),
                               ("drop_orphan_result", 6, None, orjson.dumps(r1).decode())]
    assert_resumable(out, data)


@pytest.mark.parametrize("v", [V21, "2.0.64"])
@pytest.mark.parametrize("shape", ["next_turns", "after_a_prompt", "last_line"])
def test_a_result_written_after_the_next_turns_stays_in_its_place(v: str, shape: str) -> None:
    # Issue 35 (ccviewer_v1.0.108 and spotter_v2.1.38 result_after_next_turn): r1 written
    # after the next turn is over (next_turns), after the user's next prompt and the reply
    # to it (after_a_prompt), or last, after a prompt that hangs from it (last_line). Its call
    # used to get a synthetic result and r1 was kept (lines hang from it) or removed: Claude
    # Code 2.1.332, which walks the chain, sent the stub instead of the real result. Lines
    # held hang from r1, not read yet: the wait goes on until it comes, and the file, whose
    # chain is whole, is left as it is (Claude Code resumes from its last line: moved up, r1
    # would leave another line last).
    u1, a1, r1 = cc_user("u1", None, "list files", v), cc_call("a1", "u1", "t1", v, "m1"), cc_result("r1", "a1", "t1", v)
    if shape == "next_turns":
        a2, r2 = cc_call("a2", "r1", "t2", v, "m2"), cc_result("r2", "a2", "t2", v)
        data = dumps(u1, a1, a2, r2, cc_text("a3", "r2", "done", v, "m3"), r1)
    elif shape == "after_a_prompt":
        a2, u3 = cc_text("a2", "r1", "so", v, "m2"), cc_user("u3", "a2", "and then?", v)
        data = dumps(u1, a1, a2, u3, cc_text("a4", "u3", "done", v, "m3"), r1)
    else:
        data = dumps(u1, a1, cc_text("a2", "r1", "so", v, "m2"), cc_user("u3", "r1", "and then?", v), r1)
    out, report = repaired(data)
    assert out == data and not report.changed
    assert_resumable(out, data)


@pytest.mark.parametrize("orphan_results", ["drop", "error"])
def test_a_late_result_that_a_line_already_written_hangs_from_is_kept(orphan_results: str) -> None:
    # Written after the next turn is over, and after the wait for it ended (max_held_bytes):
    # its call has a synthetic result by then, but a2, written, hangs from it. Removed, it
    # would leave a2 hanging from nothing (the history above a2 cut off on resume): both
    # stay, the synthetic one on a branch of its own.
    c = chain_lines("2.0.64")
    data = dumps(c["u1"], c["a1"], c["a2"], c["r2"], c["a3"], c["r1"])
    budget = sum(len(orjson.dumps(c[k])) for k in ("a1", "a2", "r2")) + 10  # a3 ends the wait
    out, report = repaired(data, orphan_results=orphan_results, max_held_bytes=budget)
    stub = cc_stub("a1", "t1", "2026-01-01T00:00:01.000Z")
    assert out == dumps(c["u1"], c["a1"], stub, c["a2"], c["r2"], c["a3"], c["r1"])
    assert records(report) == [("stub_missing_result", 2, 2, None)]
    assert_resumable(out, data)

def test_a_line_of_no_thread_yet_that_hangs_from_a_later_result_keeps_it() -> None:
    # A progress line before the first message (its thread not known yet) is passed through
    # as it is; the result it hangs from is not removed under it either.
    progress = {"parentUuid": "o1", **ENV, "type": "progress", "data": {}, "uuid": "p1", "timestamp": "t"}
    orphan = cc_result("o1", "u1", "gone")
    data = dumps(progress, cc_user("u1", None, "hi"), orphan, cc_text("a2", "u1", "ok"))
    out, report = repaired(data)
    assert out == data and not report.changed


def test_a_rollout_s_output_after_the_next_assistant_item_moves_up_to_its_call() -> None:
    # It was removed as an orphan, and its call answered with a synthetic output: the real
    # result lost, where Codex itself would have kept it. Codex does not move an output; a
    # rollout's lines are its conversation's order, so the output moves up as a whole line.
    reply = cx("response_item", {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "ok"}]})
    late = cx("response_item", {"type": "custom_tool_call_output", "call_id": "call_2", "output": "done"})
    data = dumps(META, USER, CALL, PATCH, OUT, reply, late)
    out, report = repaired(data)
    assert out == dumps(META, USER, CALL, PATCH, OUT, late, reply)
    assert records(report) == [("move_result", 7, 5, None)]
    assert report.records[0].detail == "result(s) call_2 moved up to their call, before line 6"
    again, second = repaired(out)
    assert again == out and not second.changed


@pytest.mark.parametrize("parallel", [False, True])
def test_a_rollout_s_output_after_the_assistant_s_message_moves_up_to_its_call(parallel: bool) -> None:
    # function_call, message (assistant), function_call_output, user: the output moves up to
    # right after its call (as a whole line); Codex does not move it itself. A call of the
    # batch that is never answered gets its synthetic output there too.
    reply = cx("response_item", {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "running it"}]})
    calls = [CALL, PATCH] if parallel else [CALL]
    data = dumps(META, USER, *calls, reply, OUT, USER)
    out, report = repaired(data)
    stubs = [cx_stub("call_2", "2025-11-13T01:00:02.000Z", "custom_tool_call_output")] if parallel else []
    assert out == dumps(META, USER, *calls, OUT, *stubs, reply, USER)
    n = len(calls)
    assert records(report) == [("move_result", n + 4, n + 2, None)] + ([("stub_missing_result", 4, 5, None)] if parallel else [])
    again, second = repaired(out)
    assert again == out and not second.changed
    request = io.BytesIO()
    normalizer.write_anthropic(list(read_messages(io.BytesIO(out))), request)
    assert anthropic_violations(orjson.loads(request.getvalue())["messages"]) == []


def test_a_rollout_s_output_after_the_assistant_s_message_and_the_user_s_moves_up_to_its_call() -> None:
    # As after a user message alone: the wait lasts until the next turn after it.
    reply = cx("response_item", {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "running it"}]})
    out, report = repaired(dumps(META, USER, CALL, reply, USER, OUT))
    assert out == dumps(META, USER, CALL, OUT, reply, USER)
    assert records(report) == [("move_result", 6, 3, None)]
    assert repaired(out)[0] == out


def test_a_rollout_s_wait_after_the_assistant_s_message_is_bounded_by_max_held_bytes() -> None:
    reply = cx("response_item", {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "x" * 200}]})
    data = dumps(META, USER, CALL, reply, OUT, USER)
    room = sum(len(orjson.dumps(v)) for v in (CALL, reply, OUT))  # the call's line, the message held, the output moving up
    assert repaired(data, max_held_bytes=room)[0] == dumps(META, USER, CALL, OUT, reply, USER)
    with pytest.raises(LimitExceeded) as caught:
        repaired(data, max_held_bytes=room - 1)
    assert (caught.value.limit, caught.value.line) == ("max_held_bytes", 5)
    assert str(caught.value).startswith(
        "<input>:5: the late results moving up to their calls, with the lines of the calls and the lines held from line 4 on "
        "(the assistant's item they came after), come to more than max_held_bytes")


def test_the_parents_named_ahead_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    # Each parent a written line names that is not known to be written is remembered until
    # it is: at most MAX_PARENTS_AHEAD of them; the one past it is refused at its line.
    monkeypatch.setattr(_session_write, "MAX_PARENTS_AHEAD", 2)
    head = [cc_user("u1", None, "hi"), cc_text("u2", "u1", "ok")]
    ahead = [cc_text(f"b{i}", f"later{i}", "ok") for i in range(3)]
    out, _ = repaired(dumps(*head, *ahead[:2]))
    assert out == dumps(*head, *ahead[:2])
    with pytest.raises(LimitExceeded) as caught:
        repaired(dumps(*head, *ahead))
    exc = caught.value
    assert (exc.limit, exc.value, exc.line) == ("MAX_PARENTS_AHEAD", 2, 5)
    assert str(exc) == (
        "<input>:5: more than 2 lines of this session's chain hang from a line not known to be written before them "
        "(not the line before them, nor their own tool_use line: a line written after them, or a branch from far back), "
        "each remembered until that line is written so that it is not removed. No real session has this many; "
        "check that the file is one session, not several joined")


def shuffled_session(seed: int) -> bytes:
    """A Claude Code session of a few turns (parallel calls, progress lines, prompts), with
    lines moved a few places, removed, written twice, and orphan results added (some with
    the next line hanging from them)."""
    import random

    rng = random.Random(seed)
    version = rng.choice(["2.0.64", V21])
    lines: list[dict[str, Any]] = []

    def add(value: dict[str, Any]) -> str:
        lines.append(value)
        return str(value["uuid"])

    prev = add(cc_user("u0", None, "go", version))
    for t in range(rng.randint(1, 6)):
        calls = []
        for c in range(rng.randint(0, 3)):
            prev = add(cc_call(f"a{t}.{c}", prev, f"t{t}_{c}", version, f"m{t}"))
            calls.append(prev)
        for c, call in enumerate(calls):
            prev = add(cc_result(f"r{t}.{c}", call if version == V21 else prev, f"t{t}_{c}", version))
        if rng.random() < 0.3:
            prev = add({"parentUuid": prev, **ENV, "type": "progress", "data": {}, "uuid": f"p{t}", "timestamp": "t"})
        if rng.random() < 0.3:
            prev = add(cc_user(f"u{t}.9", prev, "more", version))
    add(cc_text("z9", prev, "done", version, "final"))
    for n in range(rng.randint(1, 5)):
        if len(lines) < 3:
            break
        op, i = rng.random(), rng.randrange(1, len(lines))
        if op < 0.45:
            lines.insert(min(len(lines), max(1, i + rng.choice([-2, -1, 1, 2, 3, 5]))), lines.pop(i))
        elif op < 0.6:
            del lines[i]
        elif op < 0.75:
            lines.insert(rng.randrange(i, len(lines) + 1), lines[i])
        else:
            orphan = cc_result(f"o{n}", lines[i - 1]["uuid"], "gone", version)
            lines.insert(i, orphan)
            if rng.random() < 0.5 and i + 1 < len(lines):
                lines[i + 1] = {**lines[i + 1], "parentUuid": orphan["uuid"]}
    return dumps(*lines)


#: Shuffles whose repair still leaves a message off the chain Claude Code walks (known gap),
#: in orders Claude Code does not write: a result before its call (108, 173, 320, 327, 348,
#: 382), a line written twice and the input's last line a result moved from far above.
LOSE_MESSAGES = {108, 122, 173, 320, 327, 348, 372, 382}


@pytest.mark.parametrize("seed", [498, 4586])
def test_a_wait_goes_on_only_for_a_line_still_not_read(seed: int) -> None:
    # Shuffles that once repaired to no fixed point: the wait went on for a line that a held
    # result hung from (its call, written after it), or for one read (moved up) meanwhile;
    # repaired again, with those lines in order, it ended, and the late result was removed.
    data = shuffled_session(seed)
    out, _ = repaired(data)
    again, report = repaired(out)
    assert again == out and not report.changed


def test_shuffled_sessions_never_lose_a_parent_and_repair_to_a_fixed_point() -> None:
    """Whatever the file's order: no line hangs from a line the repair removed, repairing
    again changes nothing, and every line removed is in the report, whole."""
    for seed in range(400):
        data = shuffled_session(seed)
        out, report = repaired(data)
        before, after = lines_of(data), lines_of(out)
        kept = {v["uuid"] for v in after}
        assert [v for v in after if v["parentUuid"] not in kept | {None} and v["parentUuid"] in {w["uuid"] for w in before}] == [], seed
        if seed not in LOSE_MESSAGES:
            assert_messages_kept(before, after, [r.dropped for r in report.records])
        again, second = repaired(out)
        assert again == out and not second.changed, seed
        dropped = [r.dropped for r in report.records if r.kind.startswith("drop_")]
        assert [v["uuid"] for v in before if v["uuid"] not in kept and orjson.dumps(v).decode() not in dropped] == [], seed


# -- lines nested too deep ----------------------------------------------------------------------------


def deep_prompt(levels: int, parent: str = "u2") -> bytes:
    """The user's next message after an unanswered call (re-pointed under its synthetic
    result), with ``levels`` arrays nested in it (the line nests ``levels + 1`` deep), and
    its newline: written here, as orjson writes 254 levels at most."""
    line = orjson.dumps(cc_user("u3", parent, "never mind", extra="DEEP"))
    return line.replace(b'"DEEP"', b"[" * levels + b'"x"' + b"]" * levels) + b"\n"


@pytest.mark.parametrize("levels", [128, 300, 1100])  # past max_depth, past what orjson writes, past what it reads
def test_a_line_nested_deeper_than_max_depth_is_refused_at_its_place(levels: int) -> None:
    # It used to pass, and, re-pointed under the synthetic result, to be written anew: past
    # 254 levels a traceback (orjson: "Recursion limit reached").
    data = dumps(cc_user("u1", None, "hi"), cc_call("u2", "u1", "t1")) + deep_prompt(levels)
    line = data.splitlines()[2]
    column = line.index(b"[") + 128  # the bracket that opens level 129 (the line's object is level 1)
    assert column == 381
    with pytest.raises(LimitExceeded) as caught:
        repaired(data)
    exc = caught.value
    assert (exc.limit, exc.value, exc.line, exc.column) == ("max_depth", 128, 3, 381)
    assert str(exc) == ("<input>:3:381: nested deeper than 128 levels. A chat message is about 10 levels deep; "
                        "raise max_depth if this data is genuine")
    # on_invalid='skip': removed like a line that is not JSON, kept whole in the report
    out, report = repaired(data, on_invalid="skip")
    assert out == dumps(cc_user("u1", None, "hi"), cc_call("u2", "u1", "t1"), cc_stub("u2", "t1", "2026-01-01T00:00:02.000Z"))
    assert records(report) == [("skip_invalid", 3, None, line.decode()), ("stub_missing_result", 2, 2, None)]
    assert report.records[0].detail == str(exc)


def test_max_depth_is_the_readers_limit_up_to_what_orjson_writes() -> None:
    data = dumps(cc_user("u1", None, "hi"), cc_call("u2", "u1", "t1")) + deep_prompt(127)  # 128 levels: accepted
    out, report = repaired(data)
    stub = cc_stub("u2", "t1", "2026-01-01T00:00:02.000Z")
    assert out == dumps(cc_user("u1", None, "hi"), cc_call("u2", "u1", "t1"), stub) + deep_prompt(127, stub["uuid"])
    with pytest.raises(LimitExceeded, match=r"^<input>:3:\d+: nested deeper than 100 levels"):
        repaired(data, max_depth=100)
    data = dumps(cc_user("u1", None, "hi"), cc_call("u2", "u1", "t1")) + deep_prompt(253)  # 254 levels: orjson's most
    out, _ = repaired(data, max_depth=254)
    assert out == dumps(cc_user("u1", None, "hi"), cc_call("u2", "u1", "t1"), stub) + deep_prompt(253, stub["uuid"])
    for bad in (255, -1, 1.5):
        with pytest.raises(UsageError, match=r"^max_depth must be an integer from 0 to 254 for a session repaired in its own"):
            SessionRepairer(max_depth=bad)  # type: ignore[arg-type]


def test_the_command_line_says_where_a_line_nests_too_deep_without_a_traceback(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    src = tmp_path / "s.jsonl"
    src.write_bytes(dumps(cc_user("u1", None, "hi"), cc_call("u2", "u1", "t1")) + deep_prompt(300))

    def chatnorm(*args: Any) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run([sys.executable, "-m", "normalizer", *map(str, args)], capture_output=True, timeout=60,
                              env={**os.environ, "PYTHONPATH": str(root), "COLUMNS": "120"})

    result = chatnorm("repair", src, "-o", tmp_path / "out.jsonl")
    err = result.stderr.decode()
    assert result.returncode == 1 and "Traceback" not in err
    assert [line for line in err.splitlines() if line.startswith("error:")] == [
        f"error: {src}:3:381: nested deeper than 128 levels. A chat message is about 10 levels deep; "
        "raise max_depth if this data is genuine"]
    result = chatnorm("repair", "--on-invalid", "skip", src, "-o", tmp_path / "out.jsonl")
    assert result.returncode == 0 and "Traceback" not in result.stderr.decode()
    assert result.stderr.decode().splitlines()[0] == f"{src}: 3 in, 3 out; skip_invalid 1, stub_missing_result 1"
    assert (tmp_path / "out.jsonl").read_bytes() == dumps(
        cc_user("u1", None, "hi"), cc_call("u2", "u1", "t1"), cc_stub("u2", "t1", "2026-01-01T00:00:02.000Z"))


def test_the_lines_of_one_turns_calls_are_bounded_by_max_held_bytes() -> None:
    # Each call keeps its line until the turn ends (a synthetic result copies its envelope):
    # the lines of one turn's calls come to at most max_held_bytes; the next turn starts afresh.
    calls = [cc_call("u2", "u1", "t1"), cc_call("u3", "u2", "t2"), cc_call("u4", "u3", "t3")]
    data = dumps(cc_user("u1", None, "hi"), *calls, *(cc_result(f"r{i}", f"u{i + 2}", f"t{i + 1}") for i in range(3)),
                 cc_call("u8", "r2", "t9", msg="msg_2"), cc_result("u9", "u8", "t9"))
    both = sum(len(orjson.dumps(c)) for c in calls)
    out, report = repaired(data, max_held_bytes=both)
    assert out == data and not report.changed
    with pytest.raises(LimitExceeded) as caught:
        repaired(data, max_held_bytes=both - 1)
    exc = caught.value
    assert (exc.limit, exc.value, exc.line) == ("max_held_bytes", both - 1, 4)
    assert str(exc) == (
        f"<input>:4: the lines with the tool calls of one turn (from line 2 on), each kept until the turn ends, come "
        f"to more than max_held_bytes ({both - 1} bytes). Raise max_held_bytes (in Python: repair_session(..., "
        "max_held_bytes=N)) if one turn of this session really makes calls that large")
    # A rollout's calls the same way (the output ends the turn: the next call starts another).
    rollout = dumps(META, USER, CALL, PATCH, OUT, cx_stub("call_2", "t"))
    assert repaired(rollout, max_held_bytes=len(orjson.dumps(CALL)) + len(orjson.dumps(PATCH)))[0] == rollout
    with pytest.raises(LimitExceeded) as caught:
        repaired(rollout, max_held_bytes=len(orjson.dumps(CALL)) + len(orjson.dumps(PATCH)) - 1)
    assert (caught.value.line, caught.value.what.startswith("the lines with the tool calls of one turn (from line 3 on)")) == (4, True)


def test_what_is_not_the_conversation_passes_through_untouched() -> None:
    snapshot = {"type": "file-history-snapshot", "messageId": "x", "snapshot": {}, "isSnapshotUpdate": False}
    side = {**cc_user("s1", None, "sub-agent prompt"), "isSidechain": True}
    meta = cc_user("u3", "u2", "Caveat: local command", isMeta=True)
    boundary = {"parentUuid": None, "logicalParentUuid": "u3", **ENV, "type": "system", "subtype": "compact_boundary",
                "uuid": "u4", "timestamp": "t"}
    data = dumps(snapshot, cc_user("u1", None, "hi"), cc_call("u2", "u1", "t1"), side, meta, boundary,
                 cc_user("u5", "u4", "summary", isCompactSummary=True)) + b"\n"
    out, report = repaired(data)
    assert out == data and not report.changed  # the boundary ended the turn: nothing before it is sent


@pytest.mark.parametrize("head", [False, True])
def test_orphans_before_an_inline_sidechain_repair_to_a_fixed_point(head: bool) -> None:
    # Claude Code 1.0: two orphan results, then an inline sidechain line hanging from the
    # second. The results were removed and the sidechain line left naming one of them; and,
    # first in the file then, the second repair took the sidechain for the thread and added
    # a stub. Now it hangs from what the removed line hung from, and a results-only line
    # before the thread is known does not decide it: one repair is a fixed point.
    v = "1.0.30"
    before = [cc_user("u1", None, "hi", v), cc_text("a1", "u1", "ok", v, "m1")] if head else []
    o1, o2 = cc_result("o1", "a1" if head else None, "gone1", v), cc_result("o2", "o1", "gone2", v)
    side = {**cc_call("s1", "o2", "ts1", v, "ms"), "isSidechain": True}
    data = dumps(*before, o1, o2, side)
    out, report = repaired(data)
    s1 = {**side, "parentUuid": "a1" if head else None}
    n = len(before)
    drops = [("drop_orphan_result", n + 1, None, orjson.dumps(o1).decode()), ("drop_orphan_result", n + 2, None, orjson.dumps(o2).decode()),
             ("repoint_parent", n + 3, n, {"parentUuid": "o2"})]
    if head:  # the sidechain is another thread: its call is not the thread's
        assert out == dumps(*before, s1)
        assert records(report) == drops
    else:  # the sidechain is the file's only thread, as a sub-agent file is
        stub = {**cc_stub("s1", "ts1", "2026-01-01T00:00:01.000Z", v), "isSidechain": True}
        assert out == dumps(s1, stub)
        assert records(report) == [*drops, ("stub_missing_result", 3, 1, None)]
    assert_resumable(out, data)


def test_trailing_calls_keep_and_orphan_results_error() -> None:
    data = dumps(cc_user("u1", None, "hi"), cc_call("u2", "u1", "t1"))
    assert repaired(data, trailing_calls="keep")[0] == data
    with pytest.raises(InvalidMessage) as exc:
        repaired(dumps(cc_user("u1", None, "hi"), cc_result("u2", "u1", "gone")), orphan_results="error")
    assert str(exc.value) == ("<input>:2: a result for gone, which no call of its turn awaits. "
                              "Drop such results with orphan_results='drop' (--orphan-results drop)")
    for bad in ({"trailing_calls": "drop"}, {"orphan_results": "keep_as_user"}, {"fmt": "chat"}):
        with pytest.raises(UsageError):
            SessionRepairer(**bad)


def test_a_line_that_is_not_json_is_refused_or_removed() -> None:
    data = dumps(cc_user("u1", None, "hi"), cc_call("u2", "u1", "t1")) + b'{"parentUuid": "u2", "type": "us\n'
    with pytest.raises(InvalidMessage, match=r"^<input>:3:33: not JSON: unexpected end of data"):
        repaired(data)
    out, report = repaired(data, on_invalid="skip")
    assert out == dumps(cc_user("u1", None, "hi"), cc_call("u2", "u1", "t1"), cc_stub("u2", "t1", "2026-01-01T00:00:02.000Z"))
    assert [(r.kind, r.line, r.dropped) for r in report.records][0] == ("skip_invalid", 3, '{"parentUuid": "u2", "type": "us')


@pytest.mark.parametrize("fmt", ["claude-code", "codex"])
def test_a_torn_last_line_is_left_out_as_the_tool_does_on_resume(fmt: str) -> None:
    # A writer killed mid-line leaves a last line with no newline that is not JSON: Codex
    # (and Claude Code) skip it on resume. It used to be an error (exit 1 on --in-place).
    if fmt == "codex":
        head, torn = dumps(META, USER, CALL, OUT), orjson.dumps(cx("response_item", {"type": "message", "role": "assistant"}))[:-30]
        expected = head
    else:
        head, torn = dumps(cc_user("u1", None, "hi"), cc_call("u2", "u1", "t1")), orjson.dumps(cc_result("u3", "u2", "t1"))[:-40]
        expected = head + dumps(cc_stub("u2", "t1", "2026-01-01T00:00:02.000Z"))
    repairer = SessionRepairer()
    out = repairer.feed(head + torn) + repairer.close()
    assert out == expected and out.endswith(b"\n")
    n = len(head.splitlines()) + 1
    assert repairer.torn == n
    assert records(repairer.report)[0] == ("drop_torn_line", n, None, torn.decode())
    assert repairer.report.records[0].detail.startswith(f"<input>:{n}:")
    assert repairer.report.records[0].detail.endswith(
        "(the last line, with no newline: torn, its writer stopped mid-line); removed, as the tool skips it on resume, and kept here whole")
    again, report = repaired(out)
    assert again == out and not report.changed
    # the reader skips it too (chatnorm check, repair --check, --to jsonl)
    stream = read_messages(io.BytesIO(head + torn))
    list(stream)
    assert stream.report.counts.get("drop_torn_line") == 1
    # anywhere else, or with its newline, or the file's only line, it is still an error
    for bad in (head + torn + b"\n", head + torn + b"\n" + head.splitlines(keepends=True)[-1], torn):
        with pytest.raises(InvalidMessage, match="not JSON"):
            repaired(bad)


def test_the_command_line_warns_of_a_torn_last_line_and_keeps_it_in_the_backup(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    src = tmp_path / "rollout.jsonl"
    original = (root / "examples" / "codex-rollout.jsonl").read_bytes()[:-100]  # head -c -100
    src.write_bytes(original)
    env = {**os.environ, "PYTHONPATH": str(root), "COLUMNS": "200"}
    result = subprocess.run([sys.executable, "-m", "normalizer", "repair", "--in-place", "--backup", src],
                            capture_output=True, timeout=60, env=env)
    err = result.stderr.decode().splitlines()
    assert result.returncode == 0, err
    assert err[0] == (f"warning: {src}:6: the last line is torn (no newline, not JSON: its writer stopped mid-line); left "
                      "out, as the tool skips it on resume, and kept whole in the report")
    assert err[1] == f"{src}: 6 in, 5 out; drop_torn_line 1"
    assert src.read_bytes() == original[: original.rindex(b"\n") + 1]  # ends on its last whole line
    assert Path(f"{src}.bak").read_bytes() == original
    check = subprocess.run([sys.executable, "-m", "normalizer", "repair", "--check", f"{src}.bak"], capture_output=True, timeout=60, env=env)
    assert check.returncode == 1 and b"would repair" in check.stdout + check.stderr


def test_a_last_line_without_a_newline_gets_one_when_a_line_follows_it() -> None:
    data = dumps(cc_user("u1", None, "hi"), cc_call("u2", "u1", "t1"))[:-1]
    out, _ = repaired(data)
    assert out == data + b"\n" + dumps(cc_stub("u2", "t1", "2026-01-01T00:00:02.000Z"))


def test_the_output_does_not_depend_on_how_the_input_is_chunked() -> None:
    data = dumps(cc_user("u1", None, "hi"), cc_call("u2", "u1", "t1"), cc_user("u3", "u2", "and?"),
                 cc_result("u4", "u3", "t1"), cc_text("u5", "u4", "ok"))
    whole, _ = repaired(data)
    repairer = SessionRepairer()
    pieces = b"".join(repairer.feed(data[i : i + 1]) for i in range(len(data))) + repairer.close()
    assert pieces == whole


def test_the_reports_line_counts_are_current_after_every_feed_and_add_to_what_it_held() -> None:
    # The repairer counts lines itself and writes the counts to the report once a chunk:
    # a caller reading them between feeds (the CLI's progress) sees every line so far.
    lines = [cc_user("u1", None, "hi"), cc_call("u2", "u1", "t1"), cc_result("u3", "u2", "t1"), cc_text("u4", "u3", "ok")]
    report = normalizer.Report()
    report.messages_in, report.messages_out = 10, 7  # a report that already counted a file
    repairer = SessionRepairer(report=report)
    seen = []
    for line in lines:
        repairer.feed(dumps(line))
        seen.append(report.messages_in)
    repairer.close()
    assert seen == [11, 12, 13, 14]
    assert (report.messages_in, report.messages_out) == (14, 11)


def test_the_reports_line_counts_include_the_lines_before_an_error() -> None:
    data = dumps(cc_user("u1", None, "hi"), cc_call("u2", "u1", "t1")) + b"{not json\n"
    repairer = SessionRepairer()
    with pytest.raises(InvalidMessage):
        repairer.feed(data)
    assert repairer.report.messages_in == 3


def test_a_wait_is_bounded_by_max_held_bytes() -> None:
    data = dumps(cc_user("u1", None, "hi"), cc_call("u2", "u1", "t1"), cc_user("u3", "u2", "x" * 500),
                 cc_result("u4", "u3", "t1"))
    call_line = len(orjson.dumps(cc_call("u2", "u1", "t1")))  # kept until the turn ends: part of the budget
    out, report = repaired(data, max_held_bytes=call_line + 100)
    # the wait ended at the long prompt: the call was answered there, and the late result is an orphan
    assert [r.kind for r in report.records] == ["stub_missing_result", "repoint_parent", "drop_orphan_result"]
    with pytest.raises(LimitExceeded):
        repaired(data, max_line_bytes=200)


def test_files_of_other_formats_are_refused() -> None:
    with pytest.raises(InputError) as exc:
        repaired(b'{"role": "user", "content": "hi"}\n')
    # placed where detection began (the first record), as the reader's own format errors are
    assert (exc.value.line, exc.value.column) == (1, 1)
    assert str(exc.value) == ("<input>:1:1: this is a chat file, not a session file (claude-code, codex, gemini-cli). Only those are "
                              "repaired in their own format; write it as chat JSONL (--to jsonl) or name its format with --from")
    with pytest.raises(InputError) as exc:
        repaired(dumps(cc_user("u1", None, "hi")), fmt="codex")
    assert str(exc.value) == ("<input>: no record of this file was recognised as codex; it looks like claude-code. "
                              "Read it with --from claude-code (in Python: format='claude-code')")
    assert repaired(b"") == (b"", normalizer.Report())


# -- a hand-made Codex rollout ---------------------------------------------------------------------


def cx(kind: str, payload: dict[str, Any], ts: str = "2025-11-13T01:00:00.000Z") -> dict[str, Any]:
    return {"timestamp": ts, "type": kind, "payload": payload}


META = cx("session_meta", {"id": "r-1", "cwd": "/repo", "cli_version": "0.57.0"})
USER = cx("response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]})
CALL = cx("response_item", {"type": "function_call", "name": "shell", "arguments": "{}", "call_id": "call_1"}, "2025-11-13T01:00:01.000Z")
PATCH = cx("response_item", {"type": "custom_tool_call", "name": "apply_patch", "input": "*** Begin", "call_id": "call_2",
                             "status": "completed"}, "2025-11-13T01:00:02.000Z")
OUT = cx("response_item", {"type": "function_call_output", "call_id": "call_1", "output": "ok"})


def cx_stub(call_id: str, ts: str, kind: str = "function_call_output") -> dict[str, Any]:
    return cx("response_item", {"type": kind, "call_id": call_id, "output": STUB}, ts)


def test_a_rollout_cut_after_its_calls_gets_their_outputs() -> None:
    data = dumps(META, USER, CALL, PATCH)
    out, report = repaired(data)
    assert out == data + dumps(cx_stub("call_1", "2025-11-13T01:00:02.000Z"),
                               cx_stub("call_2", "2025-11-13T01:00:02.000Z", "custom_tool_call_output"))
    assert report.format == "codex"
    assert [r.detail for r in report.records] == [
        "call call_1 (line 3) was not answered; a synthetic function_call_output line was added",
        "call call_2 (line 4) was not answered; a synthetic custom_tool_call_output line was added",
    ]


def test_a_rollout_s_late_output_moves_up_and_an_orphan_goes() -> None:
    event = cx("event_msg", {"type": "user_message", "message": "and?"})
    orphan = cx("response_item", {"type": "function_call_output", "call_id": "call_9", "output": "?"})
    data = dumps(META, USER, CALL, event, USER, OUT, orphan)
    out, report = repaired(data)
    assert out == dumps(META, USER, CALL, event, OUT, USER)
    assert records(report) == [("move_result", 6, 4, None), ("drop_orphan_result", 7, None, orjson.dumps(orphan).decode())]


def test_a_rollout_s_compaction_ends_the_turn() -> None:
    data = dumps(META, USER, CALL, cx("compacted", {"message": "summary"}), USER)
    assert repaired(data) == (data, normalizer.Report(format="codex", messages_in=5, messages_out=5))


# -- the real samples -------------------------------------------------------------------------------


@pytest.mark.parametrize("path", CLAUDE + CODEX, ids=lambda p: p.name[:40])
def test_every_sample_comes_back_byte_for_byte(path: Path) -> None:
    data = path.read_bytes()
    out, report = repaired(data)
    if path.name.startswith("spotter_v2.1.39_8463c716_lines714"):
        # The window ends on a Read call whose result is past the cut.
        (stub,) = out[len(data):].splitlines()
        assert out[: len(data)] == data
        assert [r.kind for r in report.records] == ["stub_missing_result"]
        assert orjson.loads(stub)["message"]["content"][0]["tool_use_id"] == "toolu_01FYLhVTXJUJeJ4EQmtvFTn2"
    else:
        assert out == data
        assert not report.changed


CUT_CASES = [(p, name) for p in CLAUDE + CODEX for name in cuts(p)]


@pytest.mark.parametrize("path, cut", CUT_CASES, ids=lambda x: x.name[:32] if isinstance(x, Path) else x)
def test_a_cut_sample_is_repaired_in_its_own_format(path: Path, cut: str) -> None:
    data = b"".join(path.read_bytes().splitlines(keepends=True)[: cuts(path)[cut]])
    out, report = repaired(data)
    # the same file, plus one synthetic line per unanswered call, nothing else
    assert out[: len(data)] == data
    added = lines_of(out[len(data):])
    before = lines_of(data)
    open_calls = [c for v in before for c in calls_of(v)]
    for v in before:
        for r in results_of(v):
            open_calls.remove(r)
    assert [r for v in added for r in results_of(v)] == open_calls and open_calls
    assert [r.kind for r in report.records] == ["stub_missing_result"] * len(open_calls)
    # in the tool's own shape
    by_call = {c: v for v in before for c in calls_of(v)}
    stamp = next(v["timestamp"] for v in reversed(before) if "timestamp" in v)
    for n, (line, call_id) in enumerate(zip(added, open_calls), 1):
        source = by_call[call_id]
        if report.format == "claude-code":
            assert line["timestamp"] == later(stamp, n)  # later than the line before (see cc_stub)
            assert [line[k] for k in ("sessionId", "cwd", "version", "isSidechain")] == [
                source[k] for k in ("sessionId", "cwd", "version", "isSidechain")]
            assert line["type"] == "user" and line["uuid"] not in {v.get("uuid") for v in before}
            assert line["message"] == {"role": "user", "content": [
                {"tool_use_id": call_id, "type": "tool_result", "content": STUB, "is_error": True}]}
            assert line["toolUseResult"] == f"Error: {STUB}"
        else:
            assert line["timestamp"] == stamp
            assert line["type"] == "response_item" and line["payload"]["output"] == STUB
    if report.format == "claude-code":
        assert_chain_whole(lines_of(out))
    # our reader reads it back as the same format, every call answered in the next user turn
    # (what the tool sends: the file's messages as they are, not repaired again)...
    stream = read_messages(io.BytesIO(out))
    sent = list(stream)
    assert stream.format == report.format
    request = io.BytesIO()
    normalizer.write_anthropic(sent, request)
    assert anthropic_violations(orjson.loads(request.getvalue())["messages"]) == []
    # ... and the core finds nothing to pair
    fixed = normalizer.repair(sent)
    list(fixed)
    assert not PAIRING & set(fixed.report.counts)


@needs_samples
def test_a_real_session_whose_user_went_on_after_an_interrupted_tool() -> None:
    """codemie 2.0.64 with the result of line 17 never written: Claude Code then hangs the
    next line from the tool_use line (18 -> 16). The repair puts a result between them."""
    (path,) = [p for p in CLAUDE if p.name.startswith("codemie_v2.0.64")]
    lines = path.read_bytes().splitlines(keepends=True)
    values = lines_of(path.read_bytes())
    nxt = {**values[17], "parentUuid": values[15]["uuid"]}
    data = b"".join(lines[:16]) + orjson.dumps(nxt) + b"\n" + b"".join(lines[18:])
    out, report = repaired(data)
    out_lines = out.splitlines(keepends=True)
    stub = orjson.loads(out_lines[16])
    assert out_lines[:16] == lines[:16] and out_lines[18:] == lines[18:]
    assert orjson.loads(out_lines[17]) == {**nxt, "parentUuid": stub["uuid"]}
    assert stub["parentUuid"] == values[15]["uuid"]
    assert records(report) == [("stub_missing_result", 16, 16, None), ("repoint_parent", 17, 17, {"parentUuid": values[15]["uuid"]})]
    assert_chain_whole(lines_of(out))


def test_repair_session_on_files(tmp_path: Path) -> None:
    src = tmp_path / "s.jsonl"
    src.write_bytes(dumps(cc_user("u1", None, "hi"), cc_call("u2", "u1", "t1")))
    report = repair_session(src, tmp_path / "fixed.jsonl")
    assert report.counts == {"stub_missing_result": 1}
    assert (tmp_path / "fixed.jsonl").read_bytes() == src.read_bytes() + dumps(cc_stub("u2", "t1", "2026-01-01T00:00:02.000Z"))


@pytest.mark.parametrize("path", CLAUDE + CODEX, ids=lambda p: p.name[:40])
def test_every_cut_of_every_sample_is_repaired(path: Path) -> None:
    """Cut after each line in turn: the prefix comes back whole, followed only by results,
    and what the tool would send has every call answered in the next user turn. (A cut right
    after a thinking line also leaves a turn that ends on thinking, which Anthropic refuses
    too; the repair in the session's own format adds results and nothing else.)"""
    lines = path.read_bytes().splitlines(keepends=True)
    for n in range(1, len(lines) + 1):
        data = b"".join(lines[:n])
        out, report = repaired(data)
        assert out.startswith(data), n
        added = lines_of(out[len(data):])
        assert all(results_of(v) and not calls_of(v) for v in added), n
        assert set(report.counts) <= {"stub_missing_result"}, n
        if report.format == "claude-code":
            assert_chain_whole(lines_of(out), lines_of(data))
            assert_messages_kept(lines_of(data), lines_of(out), [r.dropped for r in report.records])
        request = io.BytesIO()
        normalizer.write_anthropic(list(read_messages(io.BytesIO(out))), request)
        violations = anthropic_violations(orjson.loads(request.getvalue())["messages"])
        assert [v for v in violations if "tool_use" in v or "tool_result" in v] == [], n


@pytest.mark.parametrize("path", CLAUDE + CODEX, ids=lambda p: p.name[:40])
def test_damaged_samples_repair_to_a_fixed_point(path: Path) -> None:
    """Lines taken out at random (a result, a call, a prompt...): the repair leaves every call
    answered in the next user turn, keeps the chain whole, and repairing again changes nothing."""
    import random

    lines = path.read_bytes().splitlines(keepends=True)
    rng = random.Random(path.name)
    for _ in range(25):
        keep = sorted(rng.sample(range(len(lines)), k=max(1, len(lines) - rng.randint(1, 4))))
        data = b"".join(lines[i] for i in keep)
        out, report = repaired(data)
        again, second = repaired(out)
        assert again == out and not second.changed
        if report.format == "claude-code":
            assert_chain_whole(lines_of(out), lines_of(data))
            assert_messages_kept(lines_of(data), lines_of(out), [r.dropped for r in report.records])
        request = io.BytesIO()
        normalizer.write_anthropic(list(read_messages(io.BytesIO(out))), request)
        violations = anthropic_violations(orjson.loads(request.getvalue())["messages"])
        assert [v for v in violations if "tool_use" in v or "tool_result" in v] == []
