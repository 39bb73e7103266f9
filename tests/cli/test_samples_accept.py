"""Acceptance: every file under ``../shared/samples/`` (``real/`` included) through the real
command line: the format detected as named here, the output valid for the default profile,
nothing lost, and a second pass changes nothing.

One ``chatnorm repair SAMPLES -o OUT --report R`` run repairs them all (and one more run
repairs the output again). What each file holds is counted here from the raw file, with plain
loops over its JSON that share nothing with the readers: its tool calls, its results, and
its texts (user and assistant words, reasoning, arguments, outputs). "Whole" then means:
every call and result of the file is in the output or kept whole in the report (a dropped
sidechain line, an orphan result...), every text is found there too, and the only results
added are the stubs the report counts.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from normalizer import check
from normalizer.formats import SESSION_FORMATS, read_conversations
from tests.cli.conftest import HAVE_SAMPLES, SAMPLES, SKIP_REASON, run

pytestmark = pytest.mark.skipif(not HAVE_SAMPLES, reason=SKIP_REASON)

Message = dict[str, Any]

#: Every sample file and the format it must be read as (a new file must be added here).
FORMATS = {
    "chat_training/llamafactory_glaive_toolcall_en_demo_first19.json": "sharegpt",
    "chat_training/llamafactory_reason_tool_use_demo_50_first21lines.jsonl": "finetune",
    "claude_code/ccviewer_v1.0.108_5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl": "claude-code",
    "claude_code/pai_v2.0.71_5eac5945-4cf4-4f5c-a46a-1f8dacb407aa.jsonl": "claude-code",
    "codex_rollout/coda_rollout-2025-10-04T22-31-15_first32lines.jsonl": "codex",
    "codex_rollout/moonmind_rollout-2025-11-12T17-48-11_first165lines.jsonl": "codex",
    "hermes/session_20260420_131817_5fb96e.json": "chat",
    "hermes/session_20260420_134110_b27c28.json": "chat",
    "real/claude_code/codemie_v2.0.64_4c2ddfdc-b619-4525-8d03-1950fb1b0257.jsonl": "claude-code",
    "real/claude_code/codemie_v2.0.76_session-196820da_first27lines.jsonl": "claude-code",
    "real/claude_code/codemie_v2.1.4_session-9eda1058.jsonl": "claude-code",
    "real/claude_code/codemie_v2.1.7_e9fb405b_turn-2.jsonl": "claude-code",
    "real/claude_code/codemie_v2.1.7_subagents_agent-a485154_first29lines.jsonl": "claude-code",
    "real/claude_code/spotter_v2.1.38_short.jsonl": "claude-code",
    "real/claude_code/spotter_v2.1.38_subagent_first34lines.jsonl": "claude-code",
    "real/claude_code/spotter_v2.1.38_tool_heavy.jsonl": "claude-code",
    "real/claude_code/spotter_v2.1.39_258c7280_first66lines.jsonl": "claude-code",
    "real/claude_code/spotter_v2.1.39_8463c716_lines714-884_after_compact_boundary.jsonl": "claude-code",
    "real/claude_code/spotter_v2.1.39_8463c716_subagents_agent-acompact-f46190.jsonl": "claude-code",
    "real/codex/codemie_rollout-2026-01-02T18-39-45_v0.77.0.jsonl": "codex",
    "real/codex/codemie_rollout-2026-05-11T11-26-55_v0.125.0_first79lines.jsonl": "codex",
    "real/codex/codemie_rollout-2026-05-11T13-28-45_v0.128.0-alpha.1_first38lines.jsonl": "codex",
}
#: Sample files read whole by their format's own tests (not in the one run below: counting
#: what a Gemini CLI file holds needs its replay, see tests/formats/test_gemini_cli.py and
#: tests/formats/test_opencode.py).
READ_ELSEWHERE = {
    "wild/gemini_cli/session-killed-during-tool.jsonl": "gemini-cli",
    "wild/gemini_cli/session-one-call-then-failed-resume.jsonl": "gemini-cli",
    "wild/gemini_cli/session-two-parallel-calls.jsonl": "gemini-cli",
    "wild/opencode/export-killed-during-bash.json": "opencode",
    "wild/opencode/export-one-call.json": "opencode",
    "wild/opencode/export-parallel-one-answered-one-running.json": "opencode",
}
MULTI = {"sharegpt", "finetune"}  # one conversation per record: trailing calls stay open (training data)


def _output(name: str) -> str:
    """Where the repair writes a file's output (-o DIR mirrors the tree, as .jsonl)."""
    return str(Path(name).with_suffix(".jsonl"))


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("samples")
    # A copy of the files FORMATS names (READ_ELSEWHERE's are judged by their own tests), so
    # that -o mirrors it as it mirrors the samples' own folder.
    root = tmp / "samples"
    for name in FORMATS:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes((SAMPLES / name).read_bytes())
    first = run("repair", root, "-o", tmp / "out", "--report", tmp / "first.json", timeout=300)
    second = run("repair", tmp / "out", "-o", tmp / "again", "--report", tmp / "second.json", timeout=300)
    return {"tmp": tmp, "root": root, "first": first, "second": second,
            "report": json.loads((tmp / "first.json").read_bytes()),
            "report2": json.loads((tmp / "second.json").read_bytes())}


def test_every_sample_file_is_named_here() -> None:
    found = {str(p.relative_to(SAMPLES)) for p in SAMPLES.rglob("*") if p.suffix in (".json", ".jsonl")}
    assert found == set(FORMATS) | set(READ_ELSEWHERE)


def test_one_run_repairs_them_all_and_a_second_changes_nothing(runs: dict[str, Any]) -> None:
    assert runs["first"].returncode == 0, runs["first"].stderr
    assert runs["second"].returncode == 0, runs["second"].stderr
    assert runs["report"]["failed"] == [] and len(runs["report"]["files"]) == len(FORMATS)
    for entry in runs["report2"]["files"]:
        assert (entry["counts"], entry["records"], entry["error"]) == ({}, [], None), entry["input"]
    for name in FORMATS:
        out = (runs["tmp"] / "out" / _output(name)).read_bytes()
        assert (runs["tmp"] / "again" / _output(name)).read_bytes() == out, name


def _entry(runs: dict[str, Any], name: str) -> dict[str, Any]:
    [entry] = [f for f in runs["report"]["files"] if f["input"] == str(runs["root"] / name)]
    return entry


@pytest.mark.parametrize("name", list(FORMATS))
def test_sample_format_valid_and_whole(runs: dict[str, Any], name: str) -> None:
    entry = _entry(runs, name)
    fmt = FORMATS[name]
    assert (entry["format"], entry["error"]) == (fmt, None)
    written = runs["tmp"] / "out" / _output(name)
    conversations = [list(c.messages) for c in read_conversations(written)]
    # Valid: the default profile finds nothing -- but for a training example that ends on the
    # calls the model is to learn (kept open: --trailing-calls keep is the default there).
    for messages in conversations:
        found = [(v.index, v.rule) for v in check(messages)]
        trailing = fmt in MULTI and messages and messages[-1].get("tool_calls")
        assert found == ([(len(messages) - 1, "OA-1")] if trailing else []), found
    # Whole.
    raw = list(_conversation_records(SAMPLES / name, fmt))
    dropped = [r["dropped"] for r in entry["records"] if r["dropped"] is not None]
    output = [m for messages in conversations for m in messages]
    assert output, "every sample holds a conversation (a sub-agent's transcript is one too)"
    if fmt in SESSION_FORMATS:
        # Written back in its own format (its sidechain and meta lines kept where they were):
        # counted the way the raw file is.
        output = list(_conversation_records(written, fmt))
    stubs = entry["counts"].get("stub_missing_result", 0)
    assert _calls(raw) == _calls(output) + _calls(dropped)
    assert _results(raw) + stubs == _results(output) + _results(dropped)
    haystack = _haystack(output, dropped)
    missing = [t for t in _texts(raw) if orjson.dumps(t).decode()[1:-1] not in haystack]
    assert missing == []


# -- what a raw file holds, counted without the readers --------------------------------------------


def _lines(path: Path) -> Iterator[Any]:
    for line in path.read_bytes().splitlines():
        if line.strip():
            yield orjson.loads(line)


def _conversation_records(path: Path, fmt: str) -> Iterator[Any]:
    """The parts of the raw file that carry the conversation."""
    if fmt == "codex":
        for rec in _lines(path):
            payload = rec["payload"]
            if rec["type"] == "response_item" or (rec["type"] == "event_msg" and payload["type"] == "user_message"):
                yield payload
            elif rec["type"] == "session_meta" and isinstance(payload.get("base_instructions"), dict):
                yield payload["base_instructions"]
    elif fmt == "claude-code":
        for rec in _lines(path):
            if rec["type"] in ("user", "assistant"):
                yield rec["message"]
    elif fmt == "chat":
        doc = orjson.loads(path.read_bytes())
        yield {"content": doc["system_prompt"]}
        yield from doc["messages"]
    elif fmt == "sharegpt":
        for rec in orjson.loads(path.read_bytes()):
            yield from rec["conversations"]
    else:  # finetune
        for rec in _lines(path):
            yield from rec["messages"]


_CALL_TYPES = {"tool_use", "server_tool_use", "function_call", "custom_tool_call", "local_shell_call"}


def _walk(value: Any) -> Iterator[dict[str, Any]]:
    if isinstance(value, dict):
        yield value
        for item in value.values():
            yield from _walk(item)
    elif isinstance(value, list):
        for item in value:
            yield from _walk(item)


def _packed(text: Any) -> list[Any]:
    """A ShareGPT / LLaMA-Factory call or result value: one JSON object, or a list of them."""
    try:
        value = orjson.loads(text) if isinstance(text, str) else text
    except orjson.JSONDecodeError:
        return [text]
    return value if isinstance(value, list) else [value]


def _calls(values: Any) -> int:
    """The calls found: each id once (a streaming snapshot repeats a block), and those that
    carry none."""
    ids: set[str] = set()
    anonymous = 0
    for d in _walk(values):
        kind = d.get("type")
        if kind in _CALL_TYPES:
            ids.add(d.get("call_id") or d.get("id"))
        elif isinstance(d.get("function"), dict) and "name" in d["function"]:  # a chat tool call
            ids.add(d["id"]) if d.get("id") else None
        elif d.get("from") == "function_call" or kind == "tool_call":  # ShareGPT, LLaMA-Factory
            anonymous += len(_packed(d.get("value")))
    return len(ids) + anonymous


def _results(values: Any) -> int:
    n = 0
    for d in _walk(values):
        kind = d.get("type")
        if kind == "tool_result" or (isinstance(kind, str) and kind.endswith("_output") and "call_id" in d):
            n += 1
        elif d.get("role") == "tool" or d.get("from") == "observation":
            content = d.get("content", d.get("value"))
            if isinstance(content, list) and all(isinstance(p, dict) and "value" in p for p in content):
                content = "".join(p["value"] for p in content)  # LLaMA-Factory "v1" parts
            # LLaMA-Factory packs parallel results into one message: a JSON list.
            packed = _packed(content) if isinstance(content, str) and content.startswith("[") else [content]
            n += len(packed) if all(isinstance(p, dict) and "name" in p for p in packed) else 1
    return n


_TEXT_KEYS = ("text", "thinking", "output", "message", "system_prompt", "arguments")


def _leaves(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _leaves(item)
    elif isinstance(value, list):
        for item in value:
            yield from _leaves(item)


def _texts(values: list[Any]) -> list[str]:
    """Every text of the conversation: words, reasoning, arguments, outputs. A call's
    arguments given as an object (Claude's ``input``, ShareGPT's and LLaMA-Factory's calls)
    are looked for value by value (see :func:`_haystack`)."""
    found: list[str] = []
    for d in _walk(values):
        for key in _TEXT_KEYS:
            if isinstance(d.get(key), str):
                found.append(d[key])
        if isinstance(d.get("content"), str):
            found.append(d["content"])
        kind = d.get("type")
        if kind == "custom_tool_call" and isinstance(d["input"], str):
            found.append(d["input"])  # free-form input (in chat, wrapped as {"input": ...}: decoded)
        elif kind == "tool_use":
            found += _leaves(d["input"])
        elif d.get("from") == "function_call" or kind == "tool_call":
            found += _leaves(_packed(d["value"]))
        elif isinstance(d.get("value"), str):  # a ShareGPT turn, a LLaMA-Factory text part
            packed = _packed(d["value"]) if d["value"].startswith("[") else []
            if packed and all(isinstance(p, dict) and "name" in p and "content" in p for p in packed):
                found += _leaves([p["content"] for p in packed])  # parallel results in one message
            else:
                found.append(d["value"])
    return [t for t in found if t.strip()]


def _haystack(output: list[Message], dropped: list[Any]) -> str:
    """Where every text must be: the output (its calls' arguments also decoded) and what the
    report kept whole."""
    decoded = []
    for m in output:
        texts = [c["function"]["arguments"] for c in m.get("tool_calls") or ()]
        if m.get("role") == "tool" and isinstance(m["content"], str) and m["content"].startswith("["):
            texts.append(m["content"])  # results packed in one message, when not split
        for text in texts:
            try:
                decoded.append(orjson.loads(text))
            except orjson.JSONDecodeError:
                pass
    return orjson.dumps([output, dropped, decoded]).decode()


def test_a_file_read_as_a_format_it_is_not_in_fails(tmp_path: Path) -> None:
    path = SAMPLES / "real/codex/codemie_rollout-2026-01-02T18-39-45_v0.77.0.jsonl"
    result = run("repair", "--from", "claude-code", path, "-o", tmp_path / "out.jsonl")
    assert result.returncode == 1
    assert result.stderr.decode().splitlines()[0] == (
        f"error: {path}: no record of this file was recognised as claude-code; it looks like codex. "
        "Read it with --from codex (in Python: format='codex')"
    )
    assert list(tmp_path.iterdir()) == []  # no output left behind
    checked = run("check", "--from", "responses", path)
    assert checked.returncode == 1
    assert "no record of this file was recognised as responses; it looks like codex" in checked.stderr.decode()
