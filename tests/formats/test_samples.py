"""Every bundled sample converts, with counts taken independently from the raw file.

The expected numbers are computed here with plain loops over the raw JSON (not by the
converters), then compared with what the readers produce; after the core's repair the
history obeys the pairing rules.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import orjson
import pytest
from helpers import assert_pairing_rules

import normalizer
from normalizer import Report
from normalizer.formats import read_conversations, read_messages

from realdata import SAMPLES, needs_samples, sample_files

pytestmark = needs_samples
CODEX = sorted((SAMPLES / "codex_rollout").glob("*.jsonl"))
CLAUDE = sorted((SAMPLES / "claude_code").glob("*.jsonl"))
HERMES = sorted((SAMPLES / "hermes").glob("*.json"))
SHAREGPT = SAMPLES / "chat_training" / "llamafactory_glaive_toolcall_en_demo_first19.json"
LF_V1 = SAMPLES / "chat_training" / "llamafactory_reason_tool_use_demo_50_first21lines.jsonl"


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def roles(messages: list[dict[str, Any]]) -> Counter[str]:
    return Counter(m["role"] for m in messages)


def n_calls(messages: list[dict[str, Any]]) -> int:
    return sum(len(m.get("tool_calls") or []) for m in messages)


def haystack(messages: list[dict[str, Any]], report: Report) -> str:
    return orjson.dumps(messages).decode() + orjson.dumps([r.dropped for r in report.records]).decode()


def needle(text: str) -> str:
    return orjson.dumps(text).decode()[1:-1]


def repaired(messages: Any) -> list[dict[str, Any]]:
    out = list(normalizer.repair(messages))
    assert_pairing_rules(out)
    return out


# -- Codex ------------------------------------------------------------------------------------

ASSISTANT_SIDE = {"reasoning", "function_call", "custom_tool_call", "local_shell_call"}


def codex_expectations(path: Path) -> dict[str, Any]:
    users = calls = results = turns = skipped = 0
    in_turn = False
    texts: list[str] = []
    for rec in lines(path):
        kind, p = rec["type"], rec["payload"]
        if kind != "response_item":
            skipped += 1
            if kind == "event_msg" and p.get("type") == "turn_aborted":
                in_turn = False
            continue
        t = p["type"]
        assistant_side = t in ASSISTANT_SIDE or (t == "message" and p["role"] == "assistant")
        if assistant_side and not in_turn:
            turns += 1
        in_turn = assistant_side
        if t == "message":
            users += p["role"] == "user"
            texts += [c["text"] for c in p["content"] if c.get("text")]
        elif t in ("function_call", "custom_tool_call"):
            calls += 1
            texts.append(p["call_id"])
            texts.append(p["arguments"] if t == "function_call" else json.dumps({"input": p["input"]}, separators=(",", ":"), ensure_ascii=False))
        elif t.endswith("_output"):
            results += 1
            texts.append(p["output"])
        elif t == "reasoning":
            texts += [s["text"] for s in p["summary"]]
            texts.append(p["encrypted_content"])
    return {"users": users, "calls": calls, "results": results, "turns": turns, "skipped": skipped, "texts": texts}


@pytest.mark.parametrize("path", CODEX, ids=lambda p: p.name[:20])
def test_codex_sample(path: Path) -> None:
    want = codex_expectations(path)
    stream = read_messages(path)
    out = list(stream)
    assert stream.format == "codex"
    got = roles(out)
    assert got["user"] == want["users"]
    assert got["assistant"] == want["turns"]
    assert got["tool"] == want["results"]
    assert n_calls(out) == want["calls"]
    assert len(out) == want["users"] + want["turns"] + want["results"]
    counts = stream.report.counts
    skipped = sum(v for k, v in counts.items() if k.startswith("skip_"))
    assert skipped == want["skipped"]
    hay = haystack(out, stream.report)
    for text in want["texts"]:
        assert needle(text) in hay
    # Every call is answered right after its turn already; the core changes no pairing.
    assert len(repaired(out)) <= len(out)


def test_codex_sample_numbers_match_sources_md() -> None:
    # SOURCES.md: 20 tool calls (14 shell + 4 update_plan function_call, 2 custom), 22 reasoning.
    path = next(p for p in CODEX if p.name.startswith("moonmind"))
    stream = read_messages(path)
    stream.keep_source_fields()  # (a custom call's item type is kept aside, for the writer)
    out = list(stream)
    calls = [c for m in out for c in m.get("tool_calls") or []]
    assert len(calls) == 20
    assert Counter(c["function"]["name"] for c in calls) == {"shell": 14, "update_plan": 4, "apply_patch": 2}
    assert sum(len(m.get("reasoning_items") or []) for m in out) == 22
    patch = next(c for c in calls if c["function"]["name"] == "apply_patch")
    assert patch["source_fields"]["item_type"] == "custom_tool_call"
    assert json.loads(patch["function"]["arguments"])["input"].startswith("*** Begin Patch")


# -- Claude Code -----------------------------------------------------------------------------


def claude_expectations(path: Path) -> dict[str, Any]:
    turns: set[str] = set()
    calls = results = users = errors = 0
    skipped: Counter[str] = Counter()
    texts: list[str] = []
    for rec in lines(path):
        kind = rec["type"]
        if kind not in ("user", "assistant"):
            skipped[kind] += 1
            continue
        if rec.get("isSidechain"):
            skipped["sidechain"] += 1
            continue
        if rec.get("isMeta"):
            skipped["meta"] += 1
            continue
        content = rec["message"]["content"]
        if kind == "assistant":
            turns.add(rec["message"]["id"])
            for block in content:
                if block["type"] == "tool_use":
                    calls += 1
                    texts.append(block["id"])
                elif block["type"] == "text":
                    texts.append(block["text"])
                elif block["type"] == "thinking":
                    texts.append(block["thinking"])
                    texts.append(block["signature"])
            continue
        if isinstance(content, str):
            users += 1
            texts.append(content)
            continue
        has_text = False
        for block in content:
            if block["type"] == "tool_result":
                results += 1
                errors += bool(block.get("is_error"))
                inner = block["content"]
                texts += [inner] if isinstance(inner, str) else [b["text"] for b in inner]
            else:
                has_text = True
                texts.append(block["text"])
        users += has_text
    return {"turns": len(turns), "calls": calls, "results": results, "users": users, "errors": errors, "skipped": skipped, "texts": texts}


@pytest.mark.parametrize("path", CLAUDE, ids=lambda p: p.name[:12])
def test_claude_sample(path: Path) -> None:
    want = claude_expectations(path)
    stream = read_messages(path)
    stream.keep_source_fields()  # (a result's is_error is kept aside: asked for, to count the errors)
    out = list(stream)
    assert stream.format == "claude-code"
    got = roles(out)
    assert got["assistant"] == want["turns"]
    assert got["user"] == want["users"]
    assert got["tool"] == want["results"]
    assert n_calls(out) == want["calls"]
    assert sum(bool(m.get("source_fields", {}).get("is_error")) for m in out) == want["errors"]
    counts = stream.report.counts
    assert counts.get("drop_sidechain", 0) == want["skipped"].pop("sidechain", 0)
    assert counts.get("drop_meta", 0) == want["skipped"].pop("meta", 0)
    for kind, n in want["skipped"].items():
        assert counts[f"skip_{kind}"] == n
    hay = haystack(out, stream.report)
    for text in want["texts"]:
        assert needle(text) in hay
    # One assistant message per API response, each followed by all its results.
    for i, m in enumerate(out):
        if m.get("tool_calls"):
            ids = [c["id"] for c in m["tool_calls"]]
            assert [r["tool_call_id"] for r in out[i + 1 : i + 1 + len(ids)]] == ids
    repaired(out)


def test_claude_pai_numbers() -> None:
    # formats.md §2.2: lines 3-7 are one response (thinking, text, 3 tool_use) whose results
    # come back in reverse order on lines 8-10.
    path = next(p for p in CLAUDE if p.name.startswith("pai"))
    out = list(read_messages(path))
    first = out[1]
    assert first["role"] == "assistant"
    assert first["content"].startswith("Let me investigate")
    assert [c["function"]["name"] for c in first["tool_calls"]] == ["Glob", "Glob", "Read"]
    assert len(first["thinking_blocks"]) == 1 and first["thinking_blocks"][0]["signature"]
    assert first["reasoning_content"] == first["thinking_blocks"][0]["thinking"]
    assert [m["tool_call_id"] for m in out[2:5]] == [c["id"] for c in first["tool_calls"]]


def test_claude_keep_sidechains() -> None:
    path = next(p for p in CLAUDE if p.name.startswith("ccviewer"))
    sidechain_lines = [r for r in lines(path) if r.get("isSidechain")]
    roots = sum(1 for r in sidechain_lines if r["parentUuid"] is None)
    report = Report()
    convs = []
    for conv in read_conversations(path, report=report, keep_sidechains=True):
        convs.append((list(conv.messages), conv.extra))
    assert len(convs) == 1 + roots
    assert all(extra == {"sidechain": True} for _, extra in convs[1:])
    side_calls = sum(1 for r in sidechain_lines if r["type"] == "assistant" for b in r["message"]["content"] if b["type"] == "tool_use")
    assert sum(n_calls(msgs) for msgs, _ in convs[1:]) == side_calls
    assert "drop_sidechain" not in report.counts
    for msgs, _ in convs:
        repaired(msgs)


# -- hermes snapshots (chat) -----------------------------------------------------------------


@pytest.mark.parametrize("path", HERMES, ids=lambda p: p.name[:24])
def test_hermes_snapshot(path: Path) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    stream = read_messages(path)
    out = list(stream)
    assert stream.format == "chat"
    assert out[0] == {"role": "system", "content": data["system_prompt"]}
    assert out[1:] == data["messages"]
    assert n_calls(out) == sum(len(m.get("tool_calls") or []) for m in data["messages"])
    convs = [(list(c.messages), c.extra) for c in read_conversations(path)]
    assert len(convs) == 1
    assert convs[0][0] == out
    assert convs[0][1]["tools"] == data["tools"]
    assert convs[0][1]["session_id"] == data["session_id"]
    repaired(out)


# -- training data -----------------------------------------------------------------------------


def test_sharegpt_sample() -> None:
    data = json.loads(SHAREGPT.read_text(encoding="utf-8"))
    report = Report()
    convs = list(read_conversations(SHAREGPT, report=report))
    assert report.format == "sharegpt"
    assert not any(key.startswith("format") for key in report.counts)
    assert len(convs) == len(data)
    for record, conv in zip(data, convs):
        turns = Counter(t["from"] for t in record["conversations"])
        msgs = conv.messages
        assert isinstance(msgs, list)
        assert roles(msgs)["user"] == turns["human"]
        assert n_calls(msgs) == turns["function_call"]
        assert roles(msgs)["tool"] == turns["observation"]
        # A gpt turn directly before a function_call is the same model turn.
        merged = sum(1 for a, b in zip(record["conversations"], record["conversations"][1:]) if a["from"] == "gpt" and b["from"] == "function_call")
        assert roles(msgs)["assistant"] == turns["gpt"] + turns["function_call"] - merged
        assert conv.extra["tools"] == [{"type": "function", "function": t} for t in json.loads(record["tools"])]
        hay = orjson.dumps(msgs).decode()
        for t in record["conversations"]:
            if t["from"] == "function_call":
                call = json.loads(t["value"])
                assert needle(call["name"]) in hay
                assert json.dumps(call["arguments"], separators=(",", ":"), ensure_ascii=False) in [c["function"]["arguments"] for m in msgs for c in m.get("tool_calls") or []]
            else:
                assert needle(t["value"]) in hay
        repaired(msgs)
    ids = [c["id"] for conv in convs for m in conv.messages for c in m.get("tool_calls") or []]
    assert len(ids) == len(set(ids))
    # Deterministic: a second read gives the same ids.
    again = [c["id"] for conv in read_conversations(SHAREGPT) for m in conv.messages for c in m.get("tool_calls") or []]
    assert again == ids


def test_llamafactory_v1_sample() -> None:
    records = lines(LF_V1)
    report = Report()
    convs = list(read_conversations(LF_V1, report=report))
    assert report.format == "finetune"
    assert not any(key.startswith("format") for key in report.counts)
    assert len(convs) == len(records)
    for record, conv in zip(records, convs):
        msgs = conv.messages
        parts = Counter(p["type"] for m in record["messages"] for p in m["content"])
        assert n_calls(msgs) == parts["tool_call"]
        assert sum(1 for m in msgs if m.get("reasoning_content")) == parts["reasoning"]
        hay = orjson.dumps(msgs).decode()
        for m in record["messages"]:
            for p in m["content"]:
                if p["type"] != "tool_call" and m["role"] != "tool":
                    assert needle(p["value"]) in hay
        for tool in (m for m in record["messages"] if m["role"] == "tool"):
            value = tool["content"][0]["value"]
            results = json.loads(value)
            # Either kept whole, or split into one result per parallel call.
            if needle(value) not in hay:
                for r in results:
                    inner = r["content"] if isinstance(r["content"], str) else json.dumps(r["content"], separators=(",", ":"), ensure_ascii=False)
                    assert needle(inner) in hay
        assert conv.extra["tools"] == json.loads(record["tools"])
        repaired(msgs)


def test_every_sample_converts() -> None:
    files = [p for p in sample_files("", "**/*") if p.suffix in (".json", ".jsonl") and "real" not in p.relative_to(SAMPLES).parts]
    assert len(files) == 14  # 8, and the three wild Gemini CLI sessions and three opencode exports
    for path in files:
        total = sum(len(list(c.messages)) for c in read_conversations(path))
        assert total > 0, path
