"""``chatnorm repair`` gives files back in their own format: sessions repaired in place so the
tool resumes them, Responses and Anthropic out, and a safe ``--in-place`` (the input's
format kept, a wrong ``--from`` or an unrecognised file left untouched, ``--backup``,
symlinks followed)."""

from __future__ import annotations

import io
import os
from pathlib import Path

import orjson
import pytest

import normalizer
from normalizer.formats import read_conversations, read_messages
from tests.cli.conftest import EXAMPLE, SAMPLES, jsonl, needs_samples, run, write_jsonl

STUB = normalizer.DEFAULT_STUB_TEXT


def format_read(path: Path) -> str | None:
    """The format our reader reads the file as."""
    stream = read_conversations(path)
    for conversation in stream:
        list(conversation.messages)
    return stream.format


def claude_cut(tmp_path: Path, lines: int = 5) -> tuple[Path, bytes]:
    """A real Claude Code 2.1.38 session cut right after its first tool_use line (line 5)."""
    data = b"".join((SAMPLES / "real/claude_code/spotter_v2.1.38_tool_heavy.jsonl").read_bytes().splitlines(keepends=True)[:lines])
    path = tmp_path / "3f2a.jsonl"
    path.write_bytes(data)
    return path, data


def codex_cut(tmp_path: Path) -> tuple[Path, bytes]:
    """A real Codex 0.44 rollout cut right after its first function_call (line 10)."""
    data = b"".join((SAMPLES / "codex_rollout/coda_rollout-2025-10-04T22-31-15_first32lines.jsonl").read_bytes().splitlines(keepends=True)[:10])
    path = tmp_path / "rollout.jsonl"
    path.write_bytes(data)
    return path, data


@needs_samples
def test_a_cut_claude_code_session_repaired_in_place_stays_a_session(tmp_path: Path):
    path, before = claude_cut(tmp_path)
    result = run("repair", "--in-place", path)
    assert result.returncode == 0, result.stderr
    assert result.stderr.decode().splitlines()[0] == f"{path}: 5 in, 6 out; stub_missing_result 1"
    after = path.read_bytes()
    assert after.startswith(before)  # every line as it was
    stub = orjson.loads(after[len(before):])
    call = orjson.loads(before.splitlines()[-1])
    assert stub["parentUuid"] == stub["sourceToolAssistantUUID"] == call["uuid"]
    assert stub["message"]["content"] == [
        {"tool_use_id": call["message"]["content"][0]["id"], "type": "tool_result", "content": STUB, "is_error": True}]
    assert format_read(path) == "claude-code"
    assert run("repair", "--in-place", path).stderr.decode().startswith(f"{path}: 6 in, 6 out; no repairs")


@needs_samples
def test_a_cut_codex_rollout_repaired_in_place_stays_a_rollout(tmp_path: Path):
    path, before = codex_cut(tmp_path)
    assert run("repair", "-q", "--in-place", path).returncode == 0
    after = path.read_bytes()
    assert after.startswith(before)
    line = orjson.loads(after[len(before):])
    assert line == {"timestamp": orjson.loads(before.splitlines()[-1])["timestamp"], "type": "response_item", "payload": {
        "type": "function_call_output", "call_id": "call_TD0ntH2uPd6z98H9A3fPzBxJ", "output": STUB}}
    assert format_read(path) == "codex"


@needs_samples
@pytest.mark.parametrize("wrong", ["codex", "chat", "responses", "anthropic", "sharegpt", "finetune"])
def test_a_wrong_from_leaves_the_file_untouched_and_fails(tmp_path: Path, wrong: str):
    path, before = claude_cut(tmp_path)
    stamp = path.stat().st_mtime_ns
    result = run("repair", "--in-place", "--from", wrong, path)
    assert result.returncode == 1, result.stderr
    assert path.read_bytes() == before and path.stat().st_mtime_ns == stamp
    assert [p.name for p in tmp_path.iterdir()] == [path.name]
    assert result.stderr.decode().startswith("error: ")


def test_a_file_in_which_nothing_was_recognised_is_left_as_it_is(tmp_path: Path):
    path = write_jsonl(tmp_path / "s.jsonl", [{"type": "queue-operation", "uuid": "x", "sessionId": "s"}])
    before = path.read_bytes()
    result = run("repair", "--in-place", "--from", "claude-code", "--to", "jsonl", path)
    assert result.returncode == 1
    assert path.read_bytes() == before
    assert result.stderr.decode().splitlines()[0] == (
        f"error: {path}: nothing in this file was recognised as claude-code; it was left as it is. "
        "Is it in another format? Name it with --from")


@needs_samples
def test_backup_keeps_the_original_and_symlinks_are_followed(tmp_path: Path):
    path, before = claude_cut(tmp_path)
    link = tmp_path / "link.jsonl"
    link.symlink_to(path.name)
    assert run("repair", "-q", "--in-place", "--backup", link).returncode == 0
    assert link.is_symlink() and path.read_bytes().startswith(before) and path.read_bytes() != before
    assert (tmp_path / "3f2a.jsonl.bak").read_bytes() == before  # next to the real file
    assert not (tmp_path / "link.jsonl.bak").exists()
    assert run("repair", "-q", "--in-place", "--backup=.orig", path).returncode == 0
    assert (tmp_path / "3f2a.jsonl.orig").read_bytes() == path.read_bytes()
    refused = run("repair", "--backup", path)
    assert refused.returncode == 2
    assert "--backup keeps the original of a file repaired --in-place" in refused.stderr.decode()
    clash = run("repair", "--in-place", "--backup=.orig", path, tmp_path / "3f2a.jsonl.orig")
    assert clash.returncode == 2
    assert f"the backup of {path} ({path}.orig) is the input {path}.orig" in clash.stderr.decode()


@needs_samples
def test_to_auto_writes_a_session_in_its_own_format_unless_a_profile_wants_chat(tmp_path: Path):
    path, before = claude_cut(tmp_path)
    own = run("repair", "-q", path)
    assert own.stdout.startswith(before) and len(own.stdout.splitlines()) == 6
    assert run("repair", "-q", "-", input=before).stdout == own.stdout  # stdin too
    chat = run("repair", "-q", "--profile", "openai", path)
    assert [m["role"] for m in jsonl(chat.stdout)] == ["user", "assistant", "tool"]
    assert jsonl(run("repair", "-q", "--to", "jsonl", path).stdout)[2] == {
        "role": "tool", "tool_call_id": "toolu_018GZVh9ymkrdx1TnR8reg5Y", "content": STUB}


@needs_samples
def test_session_output_options_that_cannot_apply_are_usage_errors(tmp_path: Path):
    path, _ = claude_cut(tmp_path)
    for args, words in [
        (["--to", "codex", "--from", "claude-code"], "a claude-code file cannot be written as a codex session"),
        (["--to", "claude-code", "--profile", "mistral"], "--profile shapes chat messages"),
        (["--to", "claude-code", "--trailing-calls", "drop"], "--trailing-calls drop would edit"),
        (["--to", "claude-code", "--orphan-results", "keep_as_user"], "--orphan-results keep_as_user"),
    ]:
        result = run("repair", *args, path)
        assert result.returncode == 2 and words in result.stderr.decode(), (args, result.stderr)
    wrong = run("repair", "--to", "codex", path)
    assert wrong.returncode == 1
    assert "no record of this file was recognised as codex; it looks like claude-code" in wrong.stderr.decode()
    kept = run("repair", "-q", "--in-place", "--profile", "mistral", path)
    assert kept.returncode == 1 and "--profile mistral shapes chat messages" in kept.stderr.decode()


@needs_samples
def test_trailing_calls_keep_and_the_report_of_a_session(tmp_path: Path):
    path, before = claude_cut(tmp_path)
    assert run("repair", "-q", "--trailing-calls", "keep", path).stdout == before
    report = tmp_path / "r.json"
    assert run("repair", "-q", path, "--report", report).returncode == 0
    (entry,) = orjson.loads(report.read_bytes())["files"]
    assert (entry["format"], entry["messages_in"], entry["messages_out"], entry["counts"]) == (
        "claude-code", 5, 6, {"stub_missing_result": 1})
    assert [(r["kind"], r["line"], r["output"]) for r in entry["records"]] == [("stub_missing_result", 5, 5)]


def test_to_responses_and_anthropic_are_the_library_writers(tmp_path: Path):
    messages = list(normalizer.repair(jsonl(EXAMPLE.read_bytes())))
    for to, write in (("responses", normalizer.write_responses), ("anthropic", normalizer.write_anthropic)):
        expected = io.BytesIO()
        write(messages, expected)
        result = run("repair", "-q", "--to", to, EXAMPLE)
        assert result.returncode == 0, result.stderr
        assert result.stdout == expected.getvalue()


def test_in_place_keeps_each_format_and_container(tmp_path: Path):
    history = list(normalizer.repair(jsonl(EXAMPLE.read_bytes())))
    cases = {}
    for name, to, container in [("items.jsonl", "responses", "lines"), ("items.json", "responses", "array"),
                                ("request.json", "anthropic", "object"), ("messages.json", "anthropic", "array"),
                                ("chat.json", "json", None)]:
        out = io.BytesIO()
        writer = normalizer.WRITERS[to]
        writer(history, out, **({"container": container} if container else {}))
        (tmp_path / name).write_bytes(out.getvalue())
        cases[name] = out.getvalue()
    # a request body with other keys, before and after its messages
    body = {"model": "claude-sonnet-4-5", "system": "Be brief.", "messages": [
        {"role": "user", "content": "hi"}, {"role": "assistant", "content": [{"type": "text", "text": "yo"}]}], "max_tokens": 64}
    (tmp_path / "body.json").write_bytes(orjson.dumps(body))
    result = run("repair", "--in-place", tmp_path)
    assert result.returncode == 0, result.stderr
    for name, data in cases.items():
        assert (tmp_path / name).read_bytes() == data, name  # repaired already: unchanged, in its own shape
    assert orjson.loads((tmp_path / "body.json").read_bytes()) == body


@needs_samples
def test_a_format_with_no_writer_is_refused_in_place(tmp_path: Path):
    path = tmp_path / "data.json"
    path.write_bytes((SAMPLES / "chat_training" / "llamafactory_glaive_toolcall_en_demo_first19.json").read_bytes())
    before = path.read_bytes()
    result = run("repair", "--in-place", path)
    assert result.returncode == 1 and path.read_bytes() == before
    assert "a sharegpt file cannot be written back in its own format. Give --to finetune" in result.stderr.decode()
    assert run("repair", "-q", "--in-place", "--to", "finetune", path).returncode == 0  # confirmed with --to
    assert [set(line) for line in jsonl(path.read_bytes())][0] >= {"messages"}


def test_a_chat_document_in_place_keeps_its_keys(tmp_path: Path):
    snapshot = {"session_id": "x", "system_prompt": "Be brief.", "tools": [], "messages": [
        {"role": "user", "content": "hi"}, {"role": "assistant", "content": "", "tool_calls": [
            {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}], "message_count": 2}
    path = tmp_path / "session_x.json"
    path.write_bytes(orjson.dumps(snapshot))
    assert run("repair", "-q", "--in-place", path).returncode == 0
    assert orjson.loads(path.read_bytes()) == {**snapshot, "messages": [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": snapshot["messages"][1]["tool_calls"]},
        {"role": "tool", "tool_call_id": "c", "content": STUB}]}
    nested = tmp_path / "dump.json"
    nested.write_bytes(orjson.dumps({"request": {"body": {"model": "m", "messages": [{"role": "user", "content": "hi"}]}}}))
    before = nested.read_bytes()
    result = run("repair", "--in-place", nested)
    assert result.returncode == 1 and nested.read_bytes() == before
    assert "nested" in result.stderr.decode()


def test_stdout_file_modes_are_untouched_by_in_place(tmp_path: Path):
    path = tmp_path / "s.jsonl"
    path.write_bytes(EXAMPLE.read_bytes())
    os.chmod(path, 0o600)
    assert run("repair", "-q", "--in-place", "--backup", path).returncode == 0
    assert path.stat().st_mode & 0o777 == 0o600
    assert (tmp_path / "s.jsonl.bak").read_bytes() == EXAMPLE.read_bytes()


# -- acceptance on the real samples ---------------------------------------------------------------

CUT_SAMPLES = [
    ("real/claude_code/codemie_v2.0.76_session-196820da_first27lines.jsonl", "after a call"),
    ("real/claude_code/codemie_v2.0.76_session-196820da_first27lines.jsonl", "mid-batch"),
    ("real/claude_code/codemie_v2.1.7_e9fb405b_turn-2.jsonl", "after a call"),
    ("real/claude_code/codemie_v2.1.7_e9fb405b_turn-2.jsonl", "mid-batch"),
    ("real/codex/codemie_rollout-2026-05-11T13-28-45_v0.128.0-alpha.1_first38lines.jsonl", "after a call"),
    ("real/codex/codemie_rollout-2026-05-11T13-28-45_v0.128.0-alpha.1_first38lines.jsonl", "mid-batch"),
]


@needs_samples
@pytest.mark.parametrize("sample, cut", CUT_SAMPLES, ids=lambda x: x.rsplit("/", 1)[-1][:24])
def test_a_cut_real_session_repaired_in_place(tmp_path: Path, sample: str, cut: str):
    from session_checks import anthropic_violations, assert_chain_whole, cuts, lines_of

    source = SAMPLES / sample
    data = b"".join(source.read_bytes().splitlines(keepends=True)[: cuts(source)[cut]])
    path = tmp_path / source.name
    path.write_bytes(data)
    result = run("repair", "--in-place", path)
    assert result.returncode == 0, result.stderr
    after = path.read_bytes()
    assert after.startswith(data) and after != data  # untouched lines byte for byte, results added
    fmt = "codex" if "/codex/" in sample else "claude-code"
    assert format_read(path) == fmt
    if fmt == "claude-code":
        assert_chain_whole(lines_of(after))
    request = io.BytesIO()
    normalizer.write_anthropic(list(read_messages(path)), request)  # what the tool sends, as is
    assert anthropic_violations(orjson.loads(request.getvalue())["messages"]) == []


def _samples() -> list[Path]:
    from realdata import sample_files

    return [p for p in sample_files("", "**/*.json*") if p.suffix in (".json", ".jsonl")]


@needs_samples
@pytest.mark.parametrize("source", _samples(), ids=lambda p: p.name[:36])
def test_every_sample_in_place_keeps_its_format_and_then_stays_as_it_is(tmp_path: Path, source: Path):
    path = tmp_path / source.name
    path.write_bytes(source.read_bytes())
    fmt = format_read(path) if "glaive" not in source.name else "sharegpt"
    first = run("repair", "-q", "--in-place", path)
    if fmt in ("sharegpt", "opencode"):  # no writer for ShareGPT or opencode: refused, untouched
        assert first.returncode == 1 and path.read_bytes() == source.read_bytes()
        return
    assert first.returncode == 0, first.stderr
    if fmt in ("claude-code", "codex") and "lines714-884" not in source.name:
        assert path.read_bytes() == source.read_bytes()  # a clean session comes back byte for byte
    assert format_read(path) == fmt
    once = path.read_bytes()
    again = run("repair", "--in-place", path)
    assert path.read_bytes() == once
    assert again.stderr.decode().splitlines()[0].endswith("; no repairs")


def test_a_stream_in_another_format_writes_nothing() -> None:
    # Read as a Claude Code session, a Codex line is not recognised: the lines are held, so
    # the error is all there is (on a file, the atomic output already leaves nothing).
    codex = b'{"timestamp": "t", "type": "session_meta", "payload": {}}\n'
    result = run("repair", "--from", "claude-code", input=codex)
    assert (result.returncode, result.stdout) == (1, b"")
    assert result.stderr.decode().splitlines()[0] == (
        "error: <stdin>: no record of this file was recognised as claude-code; it looks like codex. "
        "Read it with --from codex (in Python: format='codex')")
