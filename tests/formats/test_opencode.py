"""opencode sessions (normalizer.formats._opencode): an ``opencode export`` document and,
read-only, an ``opencode.db``; pinned on small hand-written sessions, and every sample of
../shared/samples/wild/opencode read whole (and the same from a database made of it)."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from helpers import assert_pairing_rules

import normalizer
from normalizer import InvalidMessage
from normalizer._report import new_report
from normalizer.formats._common import without_source
from normalizer.formats._opencode import INTERRUPTED, message_messages, read_export
from normalizer.formats._opencode_db import connect_ro, read_db

from realdata import HAVE_SAMPLES, SAMPLES

SID = "ses_1"


def msg(id: str, role: str, *parts: dict[str, Any], **info: Any) -> dict[str, Any]:
    ids = {"sessionID": SID, "messageID": id}
    return {"info": {"role": role, "time": {"created": 1}, **info, "id": id, "sessionID": SID},
            "parts": [{**p, "id": f"prt_{id}_{i}", **ids} for i, p in enumerate(parts)]}


def tool(call_id: str, name: str, status: str, **state: Any) -> dict[str, Any]:
    return {"type": "tool", "tool": name, "callID": call_id,
            "state": {"status": status, "input": {"path": "a"}, "metadata": {}, **state}}


def export(*messages: dict[str, Any]) -> dict[str, Any]:
    return {"info": {"id": SID, "title": "t", "time": {"created": 1, "updated": 2}}, "messages": list(messages)}


STEP = {"type": "step-start", "snapshot": "abc"}
FINISH = {"type": "step-finish", "reason": "tool-calls", "tokens": {}, "cost": 0}


def test_each_status_and_steps_exact() -> None:
    doc = export(
        msg("msg_1", "user", {"type": "text", "text": "Go"}, {"type": "text", "text": "hidden", "ignored": True}),
        msg("msg_2", "assistant",
            STEP, {"type": "reasoning", "text": "plan", "metadata": {"anthropic": {"signature": "s"}}},
            {"type": "text", "text": "Reading."},
            tool("c1", "read", "completed", output="hi", title="a"),
            tool("c2", "read", "completed", output="old", time={"start": 1, "end": 2, "compacted": 3}),
            tool("c3", "bash", "error", error="exit 1"),
            FINISH,
            STEP, tool("c4", "bash", "running"), tool("c5", "bash", "pending"),
            finish="tool-calls"),
    )
    report = new_report()
    out = read_export(doc, report)
    call = lambda i, n: {"id": i, "type": "function", "function": {"name": n, "arguments": '{"path":"a"}'}}  # noqa: E731
    assert out == [
        {"role": "user", "content": "Go"},
        {"role": "assistant", "content": "Reading.", "reasoning_content": "plan",
         "tool_calls": [call("c1", "read"), call("c2", "read"), call("c3", "bash")],
         "source_fields": {"reasoning_metadata": [{"anthropic": {"signature": "s"}}]}},
        {"role": "tool", "tool_call_id": "c1", "content": "hi"},
        {"role": "tool", "tool_call_id": "c2", "content": "[Old tool result content cleared]"},
        {"role": "tool", "tool_call_id": "c3", "content": "exit 1", "source_fields": {"status": "error"}},
        {"role": "assistant", "content": "", "tool_calls": [call("c4", "bash"), call("c5", "bash")]},
        {"role": "tool", "tool_call_id": "c4", "content": INTERRUPTED, "source_fields": {"status": "running"}},
        {"role": "tool", "tool_call_id": "c5", "content": INTERRUPTED, "source_fields": {"status": "pending"}},
    ]
    assert report.counts == {"skip_ignored_text": 1, "interrupted_tool_result": 2}
    repaired = normalizer.repair(out)
    assert_pairing_rules(list(repaired))


def test_user_files_compaction_and_unknown_parts() -> None:
    image = {"type": "file", "mime": "image/png", "url": "data:image/png;base64,iVBO", "filename": "a.png"}
    pdf = {"type": "file", "mime": "application/pdf", "url": "file:///a.pdf", "filename": "a.pdf"}
    report = new_report()
    out = message_messages(msg("msg_1", "user", {"type": "text", "text": "See"}, image, pdf), report)
    assert out == [{"role": "user", "content": [
        {"type": "text", "text": "See"}, {"type": "image_url", "image_url": {"url": image["url"]}},
        {"type": "file", "mime": "application/pdf", "url": "file:///a.pdf", "filename": "a.pdf"}]}]
    assert message_messages(msg("msg_2", "user", {"type": "compaction", "auto": True})) == [
        {"role": "user", "content": "What did we do so far?"}]
    odd = {"type": "subtask", "prompt": "x"}
    assert message_messages(msg("msg_3", "assistant", STEP, odd, {"type": "text", "text": "ok"}), report) == [
        {"role": "assistant", "content": "ok"}]
    assert report.records[-1].kind == "drop_part" and report.records[-1].dropped["prompt"] == "x"


def test_errored_assistant_keeps_its_error() -> None:
    error = {"name": "MessageAbortedError", "data": {"message": "aborted"}}
    out = message_messages(msg("msg_1", "assistant", STEP, {"type": "text", "text": "part"}, error=error))
    assert out == [{"role": "assistant", "content": "part", "source_fields": {"error": error}}]


@pytest.mark.parametrize("bad", [{"info": {"role": "system"}, "parts": []}, {"parts": []},
                                 {"info": {"role": "assistant"}, "parts": [{"type": "tool", "tool": "x"}]}])
def test_refused_with_a_clear_error(bad: Any) -> None:
    with pytest.raises(InvalidMessage):
        message_messages(bad, line=4)


# --- the database ------------------------------------------------------------------------


def make_db(path: Path, *exports: dict[str, Any]) -> None:
    """An opencode.db holding these exports, in the tables opencode 1.18 writes (the columns
    that matter; JSON in ``data``, without the ids, which are columns)."""
    db = sqlite3.connect(path)
    db.executescript(
        "CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT, parent_id TEXT, slug TEXT, directory TEXT,"
        " title TEXT, version TEXT, time_created INTEGER, time_updated INTEGER);"
        "CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT, time_created INTEGER, time_updated INTEGER, data TEXT);"
        "CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT, session_id TEXT, time_created INTEGER,"
        " time_updated INTEGER, data TEXT);")
    for doc in exports:
        info = doc["info"]
        db.execute("INSERT INTO session (id, title, time_created, time_updated) VALUES (?, ?, ?, ?)",
                   (info["id"], info.get("title"), info["time"]["created"], info["time"]["updated"]))
        for m in reversed(doc["messages"]):  # rows in another order than ids: the reader orders them
            data = {k: v for k, v in m["info"].items() if k not in ("id", "sessionID")}
            db.execute("INSERT INTO message VALUES (?, ?, ?, ?, ?)",
                       (m["info"]["id"], info["id"], 0, 0, json.dumps(data)))
            for p in m["parts"]:
                pdata = {k: v for k, v in p.items() if k not in ("id", "sessionID", "messageID")}
                db.execute("INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)",
                           (p["id"], m["info"]["id"], info["id"], 0, 0, json.dumps(pdata)))
    db.commit()
    db.close()


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_database_reads_as_its_export_and_is_never_written(tmp_path: Path) -> None:
    first = export(msg("msg_1", "user", {"type": "text", "text": "Go"}),
                   msg("msg_2", "assistant", STEP, tool("c1", "read", "running")))
    second = {**export(msg("msg_9", "user", {"type": "text", "text": "Other"})),
              "info": {"id": "ses_0", "time": {"created": 5, "updated": 6}}}
    second["messages"][0]["info"]["sessionID"] = "ses_0"
    path = tmp_path / "opencode.db"
    make_db(path, first, second)
    before = digest(path)
    assert list(read_db(path, SID)) == [(SID, read_export(first))]
    assert [sid for sid, _ in read_db(path)] == [SID, "ses_0"]  # oldest first
    with pytest.raises(normalizer.InputError, match=r"no session 'ses_missing' in this opencode database \(its "
                       r"sessions: ses_1, ses_0\)"):
        list(read_db(path, "ses_missing"))
    with connect_ro(path) as db, pytest.raises(sqlite3.OperationalError, match="readonly"):
        db.execute("DELETE FROM part")
    assert digest(path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["opencode.db"]  # no journal left beside it


# --- the samples -------------------------------------------------------------------------

SAMPLE_FILES = sorted((SAMPLES / "wild" / "opencode").glob("*.json")) if HAVE_SAMPLES else []


def expected_pieces(doc: dict[str, Any]) -> tuple[list[str], list[str], list[str]]:
    """Texts, call ids and results of an export, by plain loops apart from the reader."""
    texts, calls, results = [], [], []
    for m in doc["messages"]:
        for p in m["parts"]:
            if p["type"] == "text":
                texts.append(p["text"])
            elif p["type"] == "tool":
                calls.append(p["callID"])
                state = p["state"]
                results.append(state["output"] if state["status"] == "completed" else state.get("error", INTERRUPTED))
    return texts, calls, results


@pytest.mark.parametrize("path", SAMPLE_FILES, ids=lambda p: p.name)
def test_every_sample_reads_whole_and_alike_from_a_database(path: Path, tmp_path: Path) -> None:
    doc = json.loads(path.read_text(encoding="utf-8"))
    out = read_export(doc)
    texts, calls, results = expected_pieces(doc)
    assert texts == [m["content"] for m in out if m["role"] in ("user", "assistant") and m["content"] != ""]
    assert calls == [c["id"] for m in out for c in m.get("tool_calls") or []]
    assert results == [m["content"] for m in out if m["role"] == "tool"]
    assert_pairing_rules(list(normalizer.repair(out)))
    make_db(tmp_path / "opencode.db", doc)
    assert list(read_db(tmp_path / "opencode.db")) == [(doc["info"]["id"], out)]


@pytest.mark.skipif(not HAVE_SAMPLES, reason="no ../shared/")
def test_samples_exist() -> None:
    assert len(SAMPLE_FILES) == 3


# -- wired as a format: detection, the command line ------------------------------------------------


def _cli(*args: Any) -> Any:
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "normalizer", *map(str, args)], capture_output=True, timeout=60)


def test_an_opencode_message_is_guessed_as_opencode() -> None:
    from normalizer.formats._detect import Guess, guess

    assert guess({"info": {"role": "user", "id": "m"}, "parts": []}) == Guess("opencode", True)
    assert guess({"role": "user", "parts": []}).format != "opencode"


@pytest.mark.skipif(not HAVE_SAMPLES, reason="no ../shared/")
@pytest.mark.parametrize("path", SAMPLE_FILES, ids=lambda p: p.name)
def test_every_export_is_detected_and_read_whole_through_the_front_doors(path: Path) -> None:
    from normalizer.formats import read_conversations

    doc = json.loads(path.read_bytes())
    texts, calls, results = expected_pieces(doc)
    stream = read_conversations(path)
    [messages] = [list(c.messages) for c in stream]
    assert stream.format == "opencode"
    assert messages == [without_source(m) for m in read_export(doc)]  # (its parts' states kept aside)
    assert list(normalizer.formats.read_messages(path)) == messages
    for args in ([], ["--from", "opencode"]):
        result = _cli("repair", "--to", "jsonl", *args, path)
        assert result.returncode == 0, result.stderr
        out = [json.loads(line) for line in result.stdout.splitlines()]
        haystack = result.stdout.decode()
        for text in texts + results:
            assert json.dumps(text, ensure_ascii=False)[1:-1] in haystack
        assert calls == [c["id"] for m in out for c in m.get("tool_calls") or []]
        assert_pairing_rules(out)


@pytest.mark.skipif(not HAVE_SAMPLES, reason="no ../shared/")
@pytest.mark.parametrize("path", SAMPLE_FILES, ids=lambda p: p.name)
def test_a_one_line_export_is_one_document_given_its_format_or_not(path: Path, tmp_path: Path) -> None:
    flat = tmp_path / "export.json"
    flat.write_bytes(json.dumps(json.loads(path.read_bytes())).encode())
    expected = list(normalizer.formats.read_messages(path))
    assert list(normalizer.formats.read_messages(flat, format="opencode")) == expected
    stream = normalizer.formats.read_messages(flat)  # detected, as the indented one is
    assert list(stream) == expected
    assert stream.format == "opencode"


@pytest.mark.skipif(not HAVE_SAMPLES, reason="no ../shared/")
def test_check_flags_the_empty_content_opencode_sends_beside_calls_and_repair_mends_it() -> None:
    # opencode sends ``"content": ""`` beside ``tool_calls`` (the AI SDK's openai-compatible
    # provider starts a message's text at ""): the reader gives it as sent, so the provider
    # whose rule it breaks flags it, and the repair makes it null, recorded.
    path = SAMPLES / "wild" / "opencode" / "export-one-call.json"
    result = _cli("check", "--profile", "anthropic", "--select", "AN-7a", path)
    assert result.returncode == 1
    assert result.stdout.decode().splitlines()[0] == (
        f"{path}:81:5: message 1: AN-7a [content.tool_only_assistant] messages: text content blocks must be non-empty")
    repaired = normalizer.repair(list(normalizer.formats.read_messages(path)))
    [call] = [m for m in repaired if m.get("tool_calls")]
    assert call["content"] is None
    assert repaired.report.counts == {"empty_content_to_null": 1}
