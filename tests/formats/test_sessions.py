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
from pathlib import Path
from typing import Any

import orjson
import pytest

import normalizer
from normalizer import InputError, InvalidMessage, LimitExceeded, UsageError
from normalizer.formats import read_messages
from normalizer.formats import _sessions
from normalizer.formats._sessions import SessionRepairer, repair_session

from realdata import needs_samples, sample_files
from session_checks import anthropic_violations, assert_chain_whole, calls_of, cuts, lines_of, results_of

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


def stub_uuid(call_id: str) -> str:
    return str(uuid.uuid5(uuid.UUID("6f3c3b2e-4a43-5c1b-9a2e-636861746e6f"), f"s-1/{call_id}"))


def cc_stub(parent: str | None, call_id: str, timestamp: str, version: str = "2.0.64", tree: bool = False) -> dict[str, Any]:
    line = {"parentUuid": parent, **ENV, "version": version, "type": "user", "message": {"role": "user", "content": [
        {"tool_use_id": call_id, "type": "tool_result", "content": STUB, "is_error": True}]},
        "uuid": stub_uuid(call_id), "timestamp": timestamp, "toolUseResult": f"Error: {STUB}"}
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
    monkeypatch.setattr(_sessions, "MAX_REMOVED_LINES", 2)
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


@pytest.mark.parametrize("orphan_results", ["drop", "error"])
def test_a_late_result_that_a_line_already_written_hangs_from_is_kept(orphan_results: str) -> None:
    # Written after the next turn is over: its call has a synthetic result by then, but a2,
    # written, hangs from it. Removed, it would leave a2 hanging from nothing (the history
    # above a2 cut off on resume): both stay, the synthetic one on a branch of its own.
    c = chain_lines("2.0.64")
    data = dumps(c["u1"], c["a1"], c["a2"], c["r2"], c["a3"], c["r1"])
    out, report = repaired(data, orphan_results=orphan_results)
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


def test_a_rollout_s_output_after_the_next_assistant_item_answers_nothing() -> None:
    # A Codex rollout is in its conversation's order (no chain): the next assistant item
    # after a result ends the turn, and an output after it is removed (the wait above is
    # Claude Code's).
    reply = cx("response_item", {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "ok"}]})
    late = cx("response_item", {"type": "custom_tool_call_output", "call_id": "call_2", "output": "done"})
    data = dumps(META, USER, CALL, PATCH, OUT, reply, late)
    out, report = repaired(data)
    assert out == dumps(META, USER, CALL, PATCH, OUT, cx_stub("call_2", "2025-11-13T01:00:00.000Z", "custom_tool_call_output"), reply)
    assert records(report) == [("stub_missing_result", 4, 5, None), ("drop_orphan_result", 7, None, orjson.dumps(late).decode())]


def test_the_parents_named_ahead_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    # Each parent a written line names that is not known to be written is remembered until
    # it is: at most MAX_PARENTS_AHEAD of them; the one past it is refused at its line.
    monkeypatch.setattr(_sessions, "MAX_PARENTS_AHEAD", 2)
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


def test_shuffled_sessions_never_lose_a_parent_and_repair_to_a_fixed_point() -> None:
    """Whatever the file's order: no line hangs from a line the repair removed, repairing
    again changes nothing, and every line removed is in the report, whole."""
    for seed in range(400):
        data = shuffled_session(seed)
        out, report = repaired(data)
        before, after = lines_of(data), lines_of(out)
        kept = {v["uuid"] for v in after}
        assert [v for v in after if v["parentUuid"] not in kept | {None} and v["parentUuid"] in {w["uuid"] for w in before}] == [], seed
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
    data = dumps(cc_user("u1", None, "hi"), cc_call("u2", "u1", "t1")) + b'{"parentUuid": "u2", "type": "us'
    with pytest.raises(InvalidMessage, match=r"^<input>:3:33: not JSON: unexpected end of data"):
        repaired(data)
    out, report = repaired(data, on_invalid="skip")
    assert out == dumps(cc_user("u1", None, "hi"), cc_call("u2", "u1", "t1"), cc_stub("u2", "t1", "2026-01-01T00:00:02.000Z"))
    assert [(r.kind, r.line, r.dropped) for r in report.records][0] == ("skip_invalid", 3, '{"parentUuid": "u2", "type": "us')


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
    assert str(exc.value) == ("<input>:1:1: this is a chat file, not a Claude Code session or a Codex rollout. Only those are "
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
    for line, call_id in zip(added, open_calls):
        source = by_call[call_id]
        assert line["timestamp"] == stamp
        if report.format == "claude-code":
            assert [line[k] for k in ("sessionId", "cwd", "version", "isSidechain")] == [
                source[k] for k in ("sessionId", "cwd", "version", "isSidechain")]
            assert line["type"] == "user" and line["uuid"] not in {v.get("uuid") for v in before}
            assert line["message"] == {"role": "user", "content": [
                {"tool_use_id": call_id, "type": "tool_result", "content": STUB, "is_error": True}]}
            assert line["toolUseResult"] == f"Error: {STUB}"
        else:
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
        request = io.BytesIO()
        normalizer.write_anthropic(list(read_messages(io.BytesIO(out))), request)
        violations = anthropic_violations(orjson.loads(request.getvalue())["messages"])
        assert [v for v in violations if "tool_use" in v or "tool_result" in v] == []
