"""Gemini CLI session files (normalizer.formats._gemini_cli): the CLI's own replay
(``$set``, ``$rewindTo``, last record of an id wins in its first place), pinned on small
hand-written sessions, and every sample of ../shared/samples/wild/gemini_cli read whole."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import assert_pairing_rules

import normalizer
from normalizer import LimitExceeded
from normalizer._report import new_report
from normalizer.formats._gemini import GeminiWriter
from normalizer.formats._gemini_cli import GeminiCliConverter, Origin, plan_gemini_cli

from realdata import HAVE_SAMPLES, SAMPLES, SKIP_REASON

META = {"sessionId": "s1", "projectHash": "p1", "startTime": "t", "lastUpdated": "t", "kind": "main"}
CALL = {"id": "c1", "name": "read_file", "args": {"file_path": "a.txt"}, "status": "success",
        "displayName": "ReadFile", "resultDisplay": ""}
RESPONSE = {"functionResponse": {"id": "c1", "name": "read_file", "response": {"output": "hi\n"}}}
ASSISTANT_CALL = {"role": "assistant", "content": None, "tool_calls": [
    {"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": '{"file_path":"a.txt"}'}}]}
# (the response's name rides aside, for the Gemini writers: a chat tool message has no name)
TOOL = {"role": "tool", "tool_call_id": "c1", "content": "hi\n", "source_fields": {"name": "read_file"}}


def user(id: str, content: Any) -> dict[str, Any]:
    return {"id": id, "timestamp": "t", "type": "user", "content": content}


def gemini(id: str, content: Any = "", **fields: Any) -> dict[str, Any]:
    return {"id": id, "timestamp": "t", "type": "gemini", "content": content, "thoughts": [], "model": "m", **fields}


def read(records: list[Any], **kw: Any) -> tuple[list[dict[str, Any]], list[Origin], Any]:
    """Read in one pass (everything at close), and in two (planned): both must agree."""
    report = new_report()
    conv = GeminiCliConverter(report, **kw)
    for line, record in enumerate(records, 1):
        assert conv.feed(record, line=line) == []  # nothing is final before the end
    out = conv.close()
    planned, origins, report2 = read_planned(records, **kw)
    assert (planned, origins, report2.counts, report2.records) == (out, conv.origins, report.counts, report.records)
    return out, conv.origins, report


def read_planned(records: list[Any], **kw: Any) -> tuple[list[dict[str, Any]], list[Origin], Any]:
    report = new_report()
    conv = GeminiCliConverter(report, plan=plan_gemini_cli(enumerate(records, 1)), **kw)
    out = [m for line, record in enumerate(records, 1) for m in conv.feed(record, line=line)]
    return out + conv.close(), conv.origins, report


def healthy() -> list[Any]:
    """What Gemini CLI 0.61 writes for one tool round (cf. session-two-parallel-calls.jsonl)."""
    return [
        META,
        {"$set": {"messages": [user("ctx", [{"text": "<session_context>\nctx\n</session_context>"}])]}},
        user("u1", [{"text": "Read a.txt"}]),
        {"$set": {"lastUpdated": "t2"}},
        gemini("g1"),  # written before the calls...
        gemini("g1", toolCalls=[{**CALL, "result": [RESPONSE]}]),  # ...and again with them
        user("u2", [RESPONSE]),  # the same response, recorded as the next user message
        gemini("g2", "It says hi."),
    ]


def test_healthy_session_replays_the_response_twice_as_the_cli_does() -> None:
    out, origins, report = read(healthy())
    assert out == [
        {"role": "user", "content": "<session_context>\nctx\n</session_context>"},
        {"role": "user", "content": "Read a.txt"},
        ASSISTANT_CALL,
        TOOL,  # from toolCalls[0].result (the CLI's <id>_response turn)...
        TOOL,  # ...and from the user record: Gemini's 400 (count 2 != 1)
        {"role": "assistant", "content": "It says hi."},
    ]
    assert origins == [
        Origin(2, "ctx", 0, ""), Origin(3, "u1", None, ""), Origin(6, "g1", None, ""),
        Origin(6, "g1", None, "toolCalls[0].result[0]"), Origin(7, "u2", None, "content[0]"),
        Origin(8, "g2", None, ""),
    ]
    assert report.counts == {}
    repaired = normalizer.repair(out)
    history = list(repaired)
    assert_pairing_rules(history)
    assert repaired.report.counts == {"merge_user": 1, "drop_duplicate_result": 1}
    dropped = next(r for r in repaired.report.records if r.kind == "drop_duplicate_result")
    assert dropped.input == [4] and origins[4].line == 7  # the line an in-format repair edits


def test_missing_response_and_response_with_no_call() -> None:
    records = [
        META,
        user("u1", "Go"),
        gemini("g1", toolCalls=[CALL, {**CALL, "id": "c2", "result": "plain text result"}]),  # c1: no result
        user("u2", [{"functionResponse": {"id": "zz", "name": "grep", "response": {"output": "?"}}}]),
        gemini("g2", "Done."),
    ]
    out, origins, _ = read(records)
    assert [m["role"] for m in out] == ["user", "assistant", "tool", "tool", "assistant"]
    assert out[2] == {"role": "tool", "tool_call_id": "c2", "content": "plain text result", "source_fields": {"name": "read_file"}}
    assert out[3]["tool_call_id"] == "zz" and origins[3] == Origin(4, "u2", None, "content[0]")
    repaired = normalizer.repair(out)
    assert_pairing_rules(list(repaired))
    assert repaired.report.counts == {"stub_missing_result": 1, "drop_orphan_result": 1}


def test_set_messages_replaces_everything_before_it() -> None:
    records = [
        META,
        user("u1", "old"),
        gemini("g1", "old answer"),
        {"$set": {"messages": [user("u1", "kept"), gemini("g9", [{"functionCall": {"id": "c1", "name": "read_file",
                                                                                    "args": {"file_path": "a.txt"}}}])],
                  "lastUpdated": "t"}},
        user("u3", [RESPONSE]),
        {"$set": {"summary": "a metadata update without messages changes nothing"}},
    ]
    out, origins, _ = read(records)
    # The rewritten gemini record holds its call as a part (and no toolCalls): no <id>_response.
    assert out == [{"role": "user", "content": "kept"}, ASSISTANT_CALL, TOOL]
    assert [(o.line, o.index) for o in origins] == [(4, 0), (4, 1), (5, None)]


def test_rewind_to_truncates_and_an_unknown_id_clears_all() -> None:
    base = [META, user("u1", "a"), gemini("g1", "b"), user("u2", "c"), gemini("g2", "d")]
    out, _, _ = read([*base, {"$rewindTo": "u2"}, user("u3", "e")])
    assert [m["content"] for m in out] == ["a", "b", "e"]
    out, _, _ = read([*base, {"$rewindTo": "nowhere"}, user("u4", "f")])
    assert [m["content"] for m in out] == ["f"]


def test_last_record_of_an_id_wins_in_the_place_of_the_first() -> None:
    records = [META, user("u1", "a"), gemini("g1", "first"), user("u2", "c"), gemini("g1", "second")]
    out, origins, _ = read(records)
    assert [m["content"] for m in out] == ["a", "second", "c"]
    assert [o.line for o in origins] == [2, 5, 4]


def test_thoughts_as_the_cli_sends_them() -> None:
    thoughts = [{"subject": "Plan", "description": "read it", "timestamp": "t"}, {"description": "then answer"}]
    modern = [{"text": "Thinking", "thought": True, "thoughtSignature": "c2ln"}, {"text": "Hello"}]
    out, _, _ = read([META, user("u1", "hi"), gemini("g1", "Hi!", thoughts=thoughts), user("u2", "again"),
                      gemini("g2", modern)])
    assert out[1] == {"role": "assistant", "content": "Hi!", "reasoning_content": "**Plan** read it\n\nthen answer",
                      "thought_parts": [{"text": "**Plan** read it", "thought": True},
                                        {"text": "then answer", "thought": True}]}
    assert out[3] == {"role": "assistant", "content": "Hello", "reasoning_content": "Thinking",
                      "thought_parts": [modern[0]]}


def test_ui_records_commands_and_empty_turns_are_left_out() -> None:
    records = [
        META, user("u0", "/help"), {"id": "i1", "type": "info", "content": "Resumed"},
        {"id": "e1", "type": "error", "content": "boom"}, user("u1", "hi"), gemini("g1"), "not a record", {"odd": 1},
    ]
    out, _, report = read(records)
    assert out == [{"role": "user", "content": "hi"}]
    assert report.counts == {"drop_command": 1, "skip_info": 1, "skip_error": 1, "skip_empty_gemini": 1,
                             "skip_unknown_line": 1}
    assert report.records[0].dropped == records[1]


def test_tool_media_and_unknown_fields() -> None:
    image = {"inlineData": {"mimeType": "image/png", "data": "iVBO"}}
    call = {**CALL, "result": [RESPONSE, image], "extraField": 1}
    out, origins, _ = read([META, user("u1", "look"), gemini("g1", toolCalls=[call], custom="x")])
    assert out[1]["source_fields"] == {"custom": "x"}
    assert out[1]["tool_calls"][0]["source_fields"] == {"extraField": 1}
    assert out[3] == {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBO"}}]}
    assert origins[3].where == "toolCalls"


def test_planned_read_gives_each_message_out_at_its_line() -> None:
    records = healthy()
    conv = GeminiCliConverter(plan=plan_gemini_cli(enumerate(records, 1)))
    given = [len(conv.feed(record, line=line)) for line, record in enumerate(records, 1)]
    # The first gemini record (line 5) is replaced by line 6 in its place: nothing waits.
    assert given == [0, 1, 1, 0, 0, 2, 1, 1]
    assert conv.close() == [] and conv._waiting == {}


def test_planned_read_holds_a_message_rewritten_in_an_earlier_place() -> None:
    records = [META, user("u1", "a"), gemini("g1", "first"), user("u2", "c"), gemini("g1", "second")]
    conv = GeminiCliConverter(plan=plan_gemini_cli(enumerate(records, 1)))
    given = [[m["content"] for m in conv.feed(r, line=n)] for n, r in enumerate(records, 1)]
    assert given == [[], ["a"], [], [], ["second", "c"]]  # u2 waited for g1's last record
    with pytest.raises(LimitExceeded):
        conv = GeminiCliConverter(plan=plan_gemini_cli(enumerate(records, 1)), max_history_bytes=10)
        for n, r in enumerate(records, 1):
            conv.feed(r, line=n)


def test_planned_read_of_another_file_says_so() -> None:
    report = new_report()
    conv = GeminiCliConverter(report, plan=plan_gemini_cli(enumerate(healthy(), 1)))
    out = [m for n, r in enumerate(healthy()[:3], 1) for m in conv.feed(r, line=n)] + conv.close()
    assert len(out) == 2 and report.counts == {"plan_mismatch": 1}


def test_live_history_is_bounded() -> None:
    with pytest.raises(LimitExceeded):
        GeminiCliConverter(max_history_bytes=800).feed(user("u1", "x" * 900), line=2)
    with pytest.raises(LimitExceeded) as err:
        read([META, user("u1", "x" * 500), user("u2", "y" * 500)], max_history_bytes=800)
    assert err.value.limit == "max_history_bytes" and err.value.line == 3
    # A record replacing its id counts once; a rewind gives its room back.
    out, _, _ = read([META, user("u1", "x" * 500), user("u1", "z" * 500), {"$rewindTo": "u1"}, user("u2", "y" * 500)],
                     max_history_bytes=800)
    assert [m["content"][0] for m in out] == ["y"]


# --- the samples -------------------------------------------------------------------------

SAMPLE_DIR = SAMPLES / "wild" / "gemini_cli"
SAMPLE_FILES = sorted(SAMPLE_DIR.glob("*.jsonl")) if HAVE_SAMPLES else []


def naive_live(lines: list[Any]) -> list[dict[str, Any]]:
    """The live messages, by a list-based replay written apart from the reader."""
    live: list[dict[str, Any]] = []
    for rec in lines:
        if isinstance(rec.get("$rewindTo"), str):
            ids = [m["id"] for m in live]
            live = live[: ids.index(rec["$rewindTo"])] if rec["$rewindTo"] in ids else []
        elif isinstance(rec.get("id"), str):
            ids = [m["id"] for m in live]
            if rec["id"] in ids:
                live[ids.index(rec["id"])] = rec
            else:
                live.append(rec)
        elif isinstance(rec.get("$set"), dict) and isinstance(rec["$set"].get("messages"), list):
            live = list(rec["$set"]["messages"])
    return live


def expected_pieces(live: list[dict[str, Any]]) -> tuple[list[str], list[str], list[str]]:
    """Texts, call ids and response texts of the live messages that the CLI would send."""
    texts, calls, results = [], [], []
    for m in live:
        content = m.get("content")
        parts = [{"text": content}] if isinstance(content, str) else content or []
        if m["type"] == "gemini" and not parts and not m.get("toolCalls"):
            continue
        for p in parts:
            if "text" in p and p["text"]:
                texts.append(p["text"])
            if "functionCall" in p:
                calls.append(p["functionCall"]["id"])
            if "functionResponse" in p:
                results.append(p["functionResponse"]["response"]["output"])
        for c in m.get("toolCalls") or []:
            calls.append(c["id"])
            results += [r["functionResponse"]["response"]["output"] for r in c.get("result") or []]
    return texts, calls, results


@pytest.mark.skipif(not HAVE_SAMPLES, reason=SKIP_REASON)
def test_samples_exist() -> None:
    assert [p.name for p in SAMPLE_FILES] == [
        "session-killed-during-tool.jsonl", "session-one-call-then-failed-resume.jsonl", "session-two-parallel-calls.jsonl"]


@pytest.mark.parametrize("path", SAMPLE_FILES, ids=lambda p: p.name)
def test_every_sample_reads_whole(path: Path) -> None:
    lines = [json.loads(raw) for raw in path.read_text(encoding="utf-8").splitlines() if raw.strip()]
    out, origins, _ = read(lines)
    assert len(origins) == len(out)
    texts, calls, results = expected_pieces(naive_live(lines))
    got_texts = [m["content"] for m in out if m["role"] in ("user", "assistant") and isinstance(m["content"], str)]
    assert texts == got_texts
    assert calls == [c["id"] for m in out for c in m.get("tool_calls") or []]
    assert results == [m["content"] for m in out if m["role"] == "tool"]
    repaired = normalizer.repair(out)
    assert_pairing_rules(list(repaired))


def assert_gemini_rules(contents: list[dict[str, Any]]) -> None:
    """The pairing rules Gemini states: turns alternate, starting with the user; a function-call
    turn comes right after a user turn or a function-response turn; the turn after it holds as
    many response parts as it has call parts, for the same functions (and ids)."""
    assert contents and contents[0]["role"] == "user"
    for i, content in enumerate(contents):
        assert content["parts"], f"content {i} has no parts"
        if i:
            assert content["role"] != contents[i - 1]["role"], f"contents {i - 1} and {i} have one role"
        calls = [p["functionCall"] for p in content["parts"] if "functionCall" in p]
        responses = [p["functionResponse"] for p in content["parts"] if "functionResponse" in p]
        before = contents[i - 1]["parts"] if i else []
        if responses:
            earlier = [p["functionCall"] for p in before if "functionCall" in p]
            assert len(responses) == len(earlier), f"content {i}: {len(responses)} responses for {len(earlier)} calls"
            assert sorted(r["name"] for r in responses) == sorted(c["name"] for c in earlier)
            assert sorted(str(r.get("id")) for r in responses) == sorted(str(c.get("id")) for c in earlier)
        if calls and i + 1 < len(contents):
            after = contents[i + 1]["parts"]
            answered = sum("functionResponse" in p for p in after)
            assert answered == len(calls), f"content {i}: {answered} response parts after {len(calls)} call parts"


@pytest.mark.parametrize("path", SAMPLE_FILES, ids=lambda p: p.name)
def test_every_sample_repaired_with_the_gemini_profile_is_a_valid_gemini_request(path: Path) -> None:
    lines = [json.loads(raw) for raw in path.read_text(encoding="utf-8").splitlines() if raw.strip()]
    out, _, _ = read(lines)
    history = list(normalizer.repair(out, profile="gemini"))
    writer = GeminiWriter()
    contents = [c for m in history for c in writer.feed(m)] + writer.close()
    assert_gemini_rules(contents)


def test_hand_written_defects_repaired_with_the_gemini_profile_are_a_valid_gemini_request() -> None:
    records = [
        META, user("u1", "Go"),
        gemini("g1", toolCalls=[{**CALL, "result": [RESPONSE]}, {**CALL, "id": "c2"}]),  # c2 unanswered
        user("u2", [RESPONSE, {"functionResponse": {"id": "zz", "name": "grep", "response": {"output": "?"}}}]),
        gemini("g2", "Done."),
    ]
    out, _, _ = read(records)
    repaired = normalizer.repair(out, profile="gemini")
    writer = GeminiWriter()
    contents = [c for m in repaired for c in writer.feed(m)] + writer.close()
    assert_gemini_rules(contents)
    counts = repaired.report.counts
    assert counts["drop_duplicate_result"] == 1 and counts["stub_missing_result"] == 1
    assert counts["drop_orphan_result"] == 1


def test_unrepaired_replay_written_as_contents_is_the_request_the_cli_sends() -> None:
    """Written with same-role turns merged (the CLI's coalesceConsecutiveRoles), the replay of a
    healthy file is the request Gemini refuses: model[call] -> user[response, response]."""
    out, _, _ = read(healthy())
    writer = GeminiWriter()
    contents = [c for m in out for c in writer.feed(m)] + writer.close()
    assert [(c["role"], [next(iter(p)) for p in c["parts"]]) for c in contents] == [
        ("user", ["text", "text"]), ("model", ["functionCall"]),
        ("user", ["functionResponse", "functionResponse"]), ("model", ["text"])]
    with pytest.raises(AssertionError, match="content 1: 2 response parts after 1 call parts"):
        assert_gemini_rules(contents)


# -- wired as a format: detection, the command line, --in-place -----------------------------------


def _cli(*args: Any) -> Any:
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "normalizer", *map(str, args)], capture_output=True, timeout=60)


def test_its_records_are_guessed_as_gemini_cli_not_chat_or_claude_code() -> None:
    from normalizer.formats._detect import Guess, detect_format, guess

    meta = {"sessionId": "s", "projectHash": "h", "startTime": "t"}
    user = {"id": "u1", "timestamp": "t", "type": "user", "content": [{"text": "hi"}]}
    assert [guess(r) for r in (meta, user, {"$set": {"messages": []}}, {"$rewindTo": "u1"})] == [Guess("gemini-cli", True)] * 4
    assert detect_format([user]) == "gemini-cli"
    # A Claude Code line has a user type too, and its own keys: still Claude Code.
    assert guess({"type": "user", "uuid": "x", "sessionId": "s", "message": {}}).format == "claude-code"


@pytest.mark.skipif(not HAVE_SAMPLES, reason=SKIP_REASON)
@pytest.mark.parametrize("path", SAMPLE_FILES, ids=lambda p: p.name)
def test_every_sample_is_detected_and_read_whole_through_the_front_doors(path: Path) -> None:
    from normalizer.formats import read_conversations

    lines = [json.loads(raw) for raw in path.read_text(encoding="utf-8").splitlines() if raw.strip()]
    texts, calls, results = expected_pieces(naive_live(lines))
    stream = read_conversations(path)
    [messages] = [list(c.messages) for c in stream]
    assert stream.format == "gemini-cli"
    assert list(normalizer.formats.read_messages(path)) == messages
    for args in ([], ["--from", "gemini-cli"]):
        result = _cli("repair", "--to", "jsonl", *args, path)
        assert result.returncode == 0, result.stderr
        out = [json.loads(line) for line in result.stdout.splitlines()]
        haystack = result.stdout.decode()
        for text in texts + results:
            assert json.dumps(text, ensure_ascii=False)[1:-1] in haystack
        assert calls == [c["id"] for m in out for c in m.get("tool_calls") or []]
        assert_pairing_rules(out)


@pytest.mark.skipif(not HAVE_SAMPLES, reason=SKIP_REASON)
def test_check_names_the_duplicate_response_the_cli_writes() -> None:
    clean = _cli("check", SAMPLE_DIR / "session-killed-during-tool.jsonl")
    assert clean.returncode == 0, clean.stderr
    result = _cli("check", SAMPLE_DIR / "session-two-parallel-calls.jsonl")
    assert result.returncode == 1
    found = result.stdout.decode() + result.stderr.decode()
    assert found.count("[tool.duplicate_result]") == 2
    assert "2 fixable with `chatnorm repair`" in found


# (repair --in-place of a session in its own format: test_gemini_cli_session.py)


@pytest.mark.skipif(not HAVE_SAMPLES, reason=SKIP_REASON)
@pytest.mark.parametrize("path", SAMPLE_FILES, ids=lambda p: p.name)
def test_a_file_is_read_in_two_passes_a_stream_in_one_and_both_alike(monkeypatch: pytest.MonkeyPatch, path: Path) -> None:
    import io

    from normalizer._report import Report
    from normalizer.formats import _gemini_cli

    plans: list[Any] = []
    close = _gemini_cli.GeminiCliFilePlanner.close
    monkeypatch.setattr(_gemini_cli.GeminiCliFilePlanner, "close", lambda self: plans.append(close(self)) or plans[-1])
    two, one = Report(), Report()
    planned = list(normalizer.formats.read_messages(path, report=two))
    assert len(plans) == 1 and plans[0].order  # the file was read again by the Gemini CLI planner
    class Pipe(io.RawIOBase):  # a stream that cannot be read twice
        def __init__(self, data: bytes) -> None:
            self._data = io.BytesIO(data)

        def readable(self) -> bool:
            return True

        def readinto(self, buffer: Any) -> int:
            chunk = self._data.read(len(buffer))
            buffer[:len(chunk)] = chunk
            return len(chunk)

    assert planned == list(normalizer.formats.read_messages(Pipe(path.read_bytes()), report=one))
    assert len(plans) == 1  # a stream is read once
    assert two.counts == one.counts and "plan_mismatch" not in two.counts
