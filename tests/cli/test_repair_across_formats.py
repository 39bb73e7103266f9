"""Converting a session to another provider's format (``repair --to anthropic|responses``):
what a reader kept aside for a writer of its own format (a conversation's keys, a part's
fields) is written back only by that writer, never into another format's document, which
does not define it. The same fields still come back in the formats they belong to."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson

from tests.cli.conftest import run

SID = "ses_1"


def _opencode_export() -> dict[str, Any]:
    """A one-round opencode export: a user text, a call whose tool was still running when the
    session stopped, and a call that finished."""
    def part(message: str, n: int, body: dict[str, Any]) -> dict[str, Any]:
        return {**body, "id": f"prt_{message}_{n}", "sessionID": SID, "messageID": message}

    def tool(call_id: str, status: str, **state: Any) -> dict[str, Any]:
        return {"type": "tool", "tool": "bash", "callID": call_id,
                "state": {"status": status, "input": {"command": "ls"}, "metadata": {}, **state}}

    return {
        "info": {"id": SID, "title": "t", "time": {"created": 1, "updated": 2}},
        "messages": [
            {"info": {"id": "msg_1", "sessionID": SID, "role": "user", "time": {"created": 1}},
             "parts": [part("msg_1", 0, {"type": "text", "text": "List it"})]},
            {"info": {"id": "msg_2", "sessionID": SID, "role": "assistant", "time": {"created": 2}},
             "parts": [part("msg_2", 0, tool("c1", "completed", output="a b", title="ls")),
                       part("msg_2", 1, tool("c2", "running"))]},
        ],
    }


def _repair(tmp_path: Path, source: Path, to: str) -> tuple[Any, dict[str, Any]]:
    out, report = tmp_path / f"out.{to}.json", tmp_path / f"report.{to}.json"
    result = run("repair", "-q", "--to", to, source, "-o", out, "--report", report)
    assert result.returncode == 0, result.stderr
    [entry] = json.loads(report.read_bytes())["files"]
    return orjson.loads(out.read_bytes()), entry


def test_an_opencode_session_as_an_anthropic_request_has_no_opencode_keys(tmp_path: Path) -> None:
    source = tmp_path / "export.json"
    source.write_text(json.dumps(_opencode_export()))
    request, entry = _repair(tmp_path, source, "anthropic")
    assert sorted(request) == ["messages"]  # not the session's "info"
    [dropped] = [r for r in entry["records"] if r["kind"] == "drop_conversation_keys"]
    assert dropped["dropped"] == {"info": _opencode_export()["info"]}
    assert dropped["detail"] == ("opencode conversation 0: its key 'info' not written to anthropic, "
                                 "which does not define them")
    assert entry["counts"]["drop_conversation_keys"] == 1


def test_an_opencode_session_as_responses_items_has_no_opencode_part_state(tmp_path: Path) -> None:
    source = tmp_path / "export.json"
    source.write_text(json.dumps(_opencode_export()))
    items, entry = _repair(tmp_path, source, "responses")
    calls = [item for item in items if item.get("type") == "function_call"]
    assert [sorted(call) for call in calls] == [["arguments", "call_id", "name", "type"]] * 2  # no "status": "running"
    assert all(sorted(item) in (["content", "role"], ["arguments", "call_id", "name", "type"],
                                ["call_id", "output", "type"]) for item in items), items


def test_a_codex_rollout_as_responses_items_keeps_the_items_ids(tmp_path: Path) -> None:
    # A Codex rollout is Responses items: the Responses writer writes back what its reader
    # kept aside (an item's id and status), as for a Responses file.
    lines = [
        {"type": "session_meta", "payload": {"id": "s1", "cwd": "/w", "cli_version": "0.77.0"}},
        {"type": "response_item", "payload": {"type": "message", "role": "user",
                                              "content": [{"type": "input_text", "text": "hi"}]}},
        {"type": "response_item", "payload": {"type": "function_call", "id": "fc_1", "status": "completed",
                                              "call_id": "call_1", "name": "ls", "arguments": "{}"}},
        {"type": "response_item", "payload": {"type": "function_call_output", "call_id": "call_1", "output": "a b"}},
    ]
    source = tmp_path / "rollout.jsonl"
    source.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    items, _ = _repair(tmp_path, source, "responses")
    [call] = [item for item in items if item.get("type") == "function_call"]
    assert (call["id"], call["status"]) == ("fc_1", "completed")
