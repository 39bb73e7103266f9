"""A Gemini CLI session repaired in its own format (``formats/_session_gemini.py``, through
:class:`~normalizer.formats._sessions.SessionRepairer` and ``chatnorm repair``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from normalizer import InvalidMessage
from normalizer._report import Report, new_report
from normalizer._stub import DEFAULT_STUB_TEXT
from normalizer.formats._gemini import Calls
from normalizer.formats._gemini_cli import GeminiCliReplay, entry_messages
from normalizer.formats._sessions import SessionRepairer

from realdata import HAVE_SAMPLES, SAMPLES, SKIP_REASON

SAMPLE_FILES = sorted((SAMPLES / "wild" / "gemini_cli").glob("*.jsonl")) if HAVE_SAMPLES else []

META = {"sessionId": "s1", "projectHash": "p1", "startTime": "t", "lastUpdated": "t", "kind": "main"}
CALL = {"id": "c1", "name": "read_file", "args": {"file_path": "a.txt"}, "status": "success"}
CALL2 = {"id": "c2", "name": "list_directory", "args": {"dir_path": "."}, "status": "success"}
RESPONSE = {"functionResponse": {"id": "c1", "name": "read_file", "response": {"output": "hi\n"}}}
RESPONSE2 = {"functionResponse": {"id": "c2", "name": "list_directory", "response": {"output": "a.txt"}}}


def stub_part(call_id: str, name: str) -> dict[str, Any]:
    return {"functionResponse": {"id": call_id, "name": name, "response": {"output": DEFAULT_STUB_TEXT}}}


def user(id: str, content: Any) -> dict[str, Any]:
    return {"id": id, "timestamp": "t", "type": "user", "content": content}


def gemini(id: str, content: Any = "", **fields: Any) -> dict[str, Any]:
    return {"id": id, "timestamp": "t", "type": "gemini", "content": content, "thoughts": [], "model": "m", **fields}


def encode(records: list[Any]) -> bytes:
    """Lines as Gemini CLI writes them (``JSON.stringify``, compact)."""
    return b"".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")).encode() + b"\n" for r in records)


def repair(data: bytes, **options: Any) -> tuple[bytes, Report]:
    report = new_report()
    repairer = SessionRepairer(report=report, **options)
    out = repairer.feed(data) + repairer.close()
    assert repairer.format == "gemini-cli"
    return out, report


def repaired(records: list[Any], **options: Any) -> tuple[list[Any], Report]:
    """Repair, check the fixed point (a second repair changes nothing), give the lines back."""
    out, report = repair(encode(records), **options)
    again, second = repair(out, **options)
    assert (again, second.counts) == (out, {})
    return [json.loads(line) for line in out.splitlines()], report


def sent(records: list[Any]) -> list[tuple[str, list[str]]]:
    """What the CLI's replay sends: each chat message's role and the call ids it makes or answers."""
    replay = GeminiCliReplay()
    for n, record in enumerate(records, 1):
        replay.feed(record, line=n)
    calls = Calls()
    out = []
    for entry in replay.entries():
        for message, _ in entry_messages(entry, calls):
            ids = [c["id"] for c in message.get("tool_calls") or ()] or ([message["tool_call_id"]] if message["role"] == "tool" else [])
            out.append((message["role"], ids))
    return out


def healthy() -> list[Any]:
    """What Gemini CLI 0.61 writes for one tool round (cf. session-two-parallel-calls.jsonl)."""
    return [
        META,
        {"$set": {"messages": [user("ctx", [{"text": "<session_context>\nctx\n</session_context>"}])]}},
        user("u1", [{"text": "Read a.txt"}]),
        {"$set": {"lastUpdated": "t2"}},
        gemini("g1"),
        gemini("g1", toolCalls=[{**CALL, "result": [RESPONSE]}]),
        user("u2", [RESPONSE]),  # the duplicate: the CLI replays the result and this record
        gemini("g2", "It says hi."),
    ]


def test_the_recorded_duplicate_of_a_result_is_removed_whole_and_nothing_else_changes() -> None:
    records = healthy()
    data = encode(records)
    out, report = repair(data)
    assert out.splitlines(keepends=True) == [l for n, l in enumerate(data.splitlines(keepends=True), 1) if n != 7]
    assert report.counts == {"drop_duplicate_result": 1}
    (record,) = report.records
    assert (record.line, record.dropped) == (7, user("u2", [RESPONSE]))
    assert record.detail == "line 7: the user record u2 answer(s) a call already answered (c1); removed, kept here whole"
    assert sent([json.loads(l) for l in out.splitlines()]) == [
        ("user", []), ("user", []), ("assistant", ["c1"]), ("tool", ["c1"]), ("assistant", [])]
    assert repair(out)[0] == out


def test_a_duplicate_in_a_set_messages_line_is_taken_out_of_its_array() -> None:
    # What a resume writes back (the records rewritten: calls as content parts, <id>_response).
    history = [user("u1", [{"text": "Read a.txt"}]), gemini("g1", [{"functionCall": {**{k: CALL[k] for k in ("id", "name", "args")}}}]),
               user("g1_response", [RESPONSE]), user("u2", [RESPONSE]), gemini("g2", [{"text": "It says hi."}])]
    lines, report = repaired([META, {"$set": {"messages": history, "lastUpdated": "t3"}}])
    assert lines == [META, {"$set": {"messages": history[:3] + history[4:], "lastUpdated": "t3"}}]
    assert report.counts == {"drop_duplicate_result": 1}
    assert (report.records[0].line, report.records[0].dropped) == (2, history[3])


def test_a_response_beside_other_parts_is_removed_alone() -> None:
    records = healthy()
    records[6] = user("u2", [RESPONSE, {"text": "and then?"}])
    lines, report = repaired(records)
    assert lines[6] == user("u2", [{"text": "and then?"}])
    assert lines[:6] == records[:6] and lines[7:] == records[7:]
    assert (report.records[0].kind, report.records[0].dropped) == ("drop_duplicate_result", [RESPONSE])


def test_a_call_with_no_result_gets_the_stub_as_its_result() -> None:
    records = [META, user("u1", [{"text": "go"}]),
               gemini("g1", toolCalls=[{**CALL2, "result": [RESPONSE2]}, CALL]),  # read_file never ran
               user("u2", [RESPONSE2]), gemini("g2", "done")]
    lines, report = repaired(records)
    # (u2 repeats c2's result: the duplicate goes)
    assert lines == [META, records[1], gemini("g1", toolCalls=[
        {**CALL2, "result": [RESPONSE2]}, {**CALL, "result": [stub_part("c1", "read_file")]}]), records[4]]
    assert report.counts == {"drop_duplicate_result": 1, "stub_missing_result": 1}
    stub = next(r for r in report.records if r.kind == "stub_missing_result")
    assert (stub.line, stub.detail) == (3, "call c1 (line 3) was not answered; a synthetic functionResponse was added")
    assert sent(lines) == [("user", []), ("assistant", ["c2", "c1"]), ("tool", ["c2"]), ("tool", ["c1"]), ("assistant", [])]


def test_a_rewritten_call_with_no_response_gets_a_user_record_after_it() -> None:
    call = {"functionCall": {"id": "c1", "name": "read_file", "args": {}}}
    history = [user("u1", [{"text": "go"}]), gemini("g1", [call]), user("u3", [{"text": "well?"}])]
    lines, report = repaired([META, {"$set": {"messages": history}}])
    messages = lines[1]["$set"]["messages"]
    assert messages[:2] == history[:2] and messages[3] == history[2]
    assert {k: v for k, v in messages[2].items() if k != "id"} == {
        "timestamp": "t", "type": "user", "content": [stub_part("c1", "read_file")]}
    assert report.counts == {"stub_missing_result": 1}
    assert sent(lines) == [("user", []), ("assistant", ["c1"]), ("tool", ["c1"]), ("user", [])]


def test_a_result_of_media_only_keeps_it_and_gets_the_stub_after_it() -> None:
    media = {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}}
    records = [META, user("u1", [{"text": "look"}]), gemini("g1", toolCalls=[{**CALL, "result": [media]}])]
    lines, report = repaired(records)
    assert lines[2]["toolCalls"][0]["result"] == [media, stub_part("c1", "read_file")]
    assert report.counts == {"stub_missing_result": 1}


def test_a_stub_for_a_call_with_no_id_has_none_either() -> None:
    # (the CLI pairs an id-less call and response by name: ensureStableToolIds)
    call = {"functionCall": {"name": "read_file", "args": {}}}
    lines, _ = repaired([META, {"$set": {"messages": [user("u1", [{"text": "go"}]), gemini("g1", [call])]}}])
    assert lines[1]["$set"]["messages"][2]["content"] == [
        {"functionResponse": {"name": "read_file", "response": {"output": DEFAULT_STUB_TEXT}}}]


def test_a_response_that_answers_no_call_is_removed_or_refused() -> None:
    stray = {"functionResponse": {"id": "zz", "name": "read_file", "response": {"output": "?"}}}
    records = [META, user("u1", [{"text": "hi"}]), gemini("g1", "hello"), user("u2", [stray]), gemini("g2", "ok")]
    lines, report = repaired(records)
    assert lines == records[:3] + records[4:]
    assert (report.records[0].kind, report.records[0].dropped) == ("drop_orphan_result", user("u2", [stray]))
    with pytest.raises(InvalidMessage, match="a functionResponse for zz, which no call of its turn awaits"):
        repair(encode(records), orphan_results="error")


def test_a_rewind_before_the_duplicate_still_finds_its_record() -> None:
    # u2 written, rewound to, written again: the live u2 (the last) is the one removed; the
    # rewind read the first, which stays, so the replay before the removed line is unchanged.
    records = healthy()[:7] + [{"$rewindTo": "u2"}, user("u2", [RESPONSE]), gemini("g2", "It says hi.")]
    lines, report = repaired(records)
    assert lines == records[:8] + records[9:]
    assert report.counts == {"drop_duplicate_result": 1}


def test_trailing_calls_keep_leaves_the_last_turn_open() -> None:
    records = [META, user("u1", [{"text": "go"}]), gemini("g1", toolCalls=[CALL])]
    assert repair(encode(records), trailing_calls="keep")[0] == encode(records)
    lines, report = repaired(records)
    assert lines[2] == gemini("g1", toolCalls=[{**CALL, "result": [stub_part("c1", "read_file")]}])


def test_a_healthy_file_is_written_byte_for_byte() -> None:
    records = healthy()
    del records[6]
    data = encode(records).replace(b"\n", b"\n\n", 1)  # a blank line passes too
    assert repair(data) == (data, repair(data)[1])
    assert repair(data)[1].counts == {}


# -- the samples Gemini CLI 0.61.0 wrote ------------------------------------------------------------


@pytest.mark.skipif(not HAVE_SAMPLES or not SAMPLE_FILES, reason=SKIP_REASON)
@pytest.mark.parametrize("path", SAMPLE_FILES, ids=lambda p: p.name)
def test_every_sample_is_repaired_to_one_response_per_call_with_the_fewest_edits(path: Path) -> None:
    data = path.read_bytes()
    out, report = repair(data)
    assert repair(out)[0] == out
    before, after = data.splitlines(keepends=True), out.splitlines(keepends=True)
    # Which lines stay byte for byte, and what is recorded:
    kept, counts = {
        # The killed turn was never written (calls are recorded when the batch ends): nothing to do.
        "session-killed-during-tool.jsonl": (before, {}),
        # The user record after the tool round: its line goes.
        "session-two-parallel-calls.jsonl": (before[:7] + before[8:], {"drop_duplicate_result": 1}),
        # The last $set.messages (the failed resume's, the only one the replay keeps) loses its
        # copy of the recorded user record: line 18 is written anew, the others as they were.
        "session-one-call-then-failed-resume.jsonl": (before[:17], {"drop_duplicate_result": 1}),
    }[path.name]
    assert (after[: len(kept)], report.counts) == (kept, counts)
    assert len(after) == len(before) - (path.name == "session-two-parallel-calls.jsonl")
    lines = [json.loads(l) for l in out.splitlines()]
    answered = [ids[0] for role, ids in sent(lines) if role == "tool"]
    assert len(answered) == len(set(answered))


@pytest.mark.skipif(not HAVE_SAMPLES or not SAMPLE_FILES, reason=SKIP_REASON)
def test_repair_in_place_and_check_through_the_command_line(tmp_path: Path) -> None:
    source = next(p for p in SAMPLE_FILES if p.name == "session-two-parallel-calls.jsonl")
    copy = tmp_path / source.name
    copy.write_bytes(source.read_bytes())

    def cli(*args: Any) -> Any:
        return subprocess.run([sys.executable, "-m", "normalizer", *map(str, args)], capture_output=True, timeout=60)

    check = cli("repair", "--check", copy)
    assert check.returncode == 1
    diff = cli("repair", "--diff", copy)
    changed = [l for l in diff.stdout.decode().splitlines() if l[:1] in "+-" and l[:3] not in ("---", "+++")]
    assert (diff.returncode, changed) == (1, ["-" + source.read_bytes().splitlines()[7].decode()])
    printed = cli("repair", copy)
    assert printed.returncode == 0
    assert cli("repair", "--in-place", copy).returncode == 0
    assert copy.read_bytes() == printed.stdout == repair(source.read_bytes())[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == [source.name]
    assert cli("repair", "--check", copy).returncode == 0
