"""Real samples cut the way real life cuts them, with exact expected outputs.

Expected messages are written out field by field from the raw lines of the sample.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import normalizer
from normalizer import DEFAULT_STUB_TEXT, Report
from normalizer.formats import read_messages

from realdata import SAMPLES, needs_samples

pytestmark = needs_samples
MOONMIND = SAMPLES / "codex_rollout" / "moonmind_rollout-2025-11-12T17-48-11_first165lines.jsonl"
PAI = SAMPLES / "claude_code" / "pai_v2.0.71_5eac5945-4cf4-4f5c-a46a-1f8dacb407aa.jsonl"
CCVIEWER = SAMPLES / "claude_code" / "ccviewer_v1.0.108_5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl"


def raw_lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def cut(tmp_path: Path, path: Path, numbers: list[int]) -> tuple[Path, list[dict[str, Any]]]:
    """A file holding the given 1-based lines of ``path``, and those lines decoded."""
    lines = raw_lines(path)
    out = tmp_path / path.name
    out.write_bytes(b"".join(lines[n - 1] for n in numbers))
    return out, [json.loads(lines[n - 1]) for n in numbers]


def repair(path: Path) -> tuple[list[dict[str, Any]], Report]:
    stream = normalizer.repair(read_messages(path))
    return list(stream), stream.report


def user_text(rec: dict[str, Any]) -> str:
    return rec["payload"]["content"][0]["text"]


def test_codex_session_ends_mid_tool_call(tmp_path: Path) -> None:
    # Lines 1-11: three user items, then reasoning and a shell call; its output (line 12) is lost.
    path, recs = cut(tmp_path, MOONMIND, list(range(1, 12)))
    reasoning, call = recs[9]["payload"], recs[10]["payload"]
    converted = list(read_messages(path))
    assistant = {
        "role": "assistant",
        "content": None,
        "reasoning_content": "**Searching for note in repo**",
        "tool_calls": [{"id": call["call_id"], "type": "function", "function": {"name": "shell", "arguments": call["arguments"]}}],
        "reasoning_items": [reasoning],
    }
    assert converted == [
        {"role": "user", "content": user_text(recs[1])},
        {"role": "user", "content": user_text(recs[2])},
        {"role": "user", "content": user_text(recs[3])},
        assistant,
    ]
    out, report = repair(path)
    assert out[-2:] == [assistant, {"role": "tool", "tool_call_id": call["call_id"], "content": DEFAULT_STUB_TEXT}]
    assert report.counts.get("stub_missing_result") == 1


def claude_assistant(recs: list[dict[str, Any]]) -> dict[str, Any]:
    """The merged assistant message of consecutive split lines, written out by hand."""
    blocks = [b for r in recs for b in r["message"]["content"]]
    msg: dict[str, Any] = {"role": "assistant"}
    texts = [b["text"] for b in blocks if b["type"] == "text"]
    calls = [b for b in blocks if b["type"] == "tool_use"]
    thinking = [b for b in blocks if b["type"] == "thinking"]
    msg["content"] = "\n\n".join(texts) if texts else None
    if thinking:
        msg["reasoning_content"] = "\n\n".join(b["thinking"] for b in thinking)
    msg["tool_calls"] = [{"id": b["id"], "type": "function", "function": {"name": b["name"], "arguments": json.dumps(b["input"], separators=(",", ":"), ensure_ascii=False)}} for b in calls]
    if thinking:
        msg["thinking_blocks"] = thinking
    return msg


def claude_result(rec: dict[str, Any]) -> dict[str, Any]:
    block = rec["message"]["content"][0]
    msg = {"role": "tool", "tool_call_id": block["tool_use_id"], "content": block["content"] if isinstance(block["content"], str) else [{"type": "text", "text": b["text"]} for b in block["content"]][0]["text"]}
    return msg  # (its is_error is kept aside, for the Claude Code writer: no chat key)


def test_claude_parallel_results_in_reverse_order(tmp_path: Path) -> None:
    # pai lines 1-10: snapshot, prompt, one response split over 5 lines (thinking, text and
    # three tool_use), then the three results in reverse order.
    path, recs = cut(tmp_path, PAI, list(range(1, 11)))
    assistant = claude_assistant(recs[2:7])
    results = {r["tool_call_id"]: r for r in map(claude_result, recs[7:10])}
    expected = [
        {"role": "user", "content": recs[1]["message"]["content"]},
        assistant,
        *(results[c["id"]] for c in assistant["tool_calls"]),
    ]
    stream = read_messages(path)
    assert list(stream) == expected
    assert stream.report.counts == {"skip_file-history-snapshot": 1}
    assert (stream.format, stream.report.format) == ("claude-code", "claude-code")
    out, report = repair(path)
    assert out == expected
    assert report.counts == {}  # the converter already put the results in call order


def test_claude_session_ends_mid_parallel_calls(tmp_path: Path) -> None:
    # pai lines 1-8: only the last call's result (line 8) was written before the end.
    path, recs = cut(tmp_path, PAI, list(range(1, 9)))
    assistant = claude_assistant(recs[2:7])
    first, second, third = (c["id"] for c in assistant["tool_calls"])
    assert list(read_messages(path))[1:] == [assistant, claude_result(recs[7])]
    out, report = repair(path)
    assert out[1:] == [
        assistant,
        {"role": "tool", "tool_call_id": first, "content": DEFAULT_STUB_TEXT},
        {"role": "tool", "tool_call_id": second, "content": DEFAULT_STUB_TEXT},
        claude_result(recs[7]),
    ]
    assert report.counts.get("stub_missing_result") == 2


def test_claude_subagent_lines_between_call_and_result(tmp_path: Path) -> None:
    # ccviewer lines 12-24: a response with three calls (two Task, one TodoWrite), the first
    # Task's error result, the second Task's sub-agent transcript (lines 16-22, sidechain),
    # then the remaining two results.
    path, recs = cut(tmp_path, CCVIEWER, list(range(12, 25)))
    assistant = claude_assistant(recs[0:3])
    report = Report()
    converted = list(read_messages(path, report=report))
    assert converted == [assistant, claude_result(recs[3]), claude_result(recs[11]), claude_result(recs[12])]
    kept = read_messages(path)
    kept.keep_source_fields()  # what a writer of the format asks for
    assert list(kept)[1]["source_fields"] == {"is_error": True}
    assert report.counts["drop_sidechain"] == 7
    assert [r.line for r in report.records] == list(range(5, 12))
    assert [r.dropped for r in report.records] == recs[4:11]
    out, _ = repair(path)
    assert out == converted
