"""``chatnorm check`` and ``chatnorm explain`` through the real entry point."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.conftest import EXAMPLE, SAMPLES, needs_samples, run, write_jsonl


OA1 = ("An assistant message with 'tool_calls' must be followed by tool messages responding to each "
       "'tool_call_id'. The following tool_call_ids did not have response messages: ")
OA2 = "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'."


def test_check_lists_each_violation_under_its_root_cause():
    """The split turn (messages 2-4) is named once, with what it causes under it: call_ls
    unanswered when message 4 begins, and its result (message 7) answering nothing. The user
    message between call_cat and its result is the other root cause. Then two violations of
    their own: a result whose call is gone, a call never answered."""
    result = run("check", EXAMPLE)
    assert result.returncode == 1
    assert result.stdout.decode().splitlines() == [
        f"{EXAMPLE}:3:1: message 2: NZ-1 [turn.split] one model turn stored as 3 assistant messages (2-4); "
        "repair merges them into one",
        f"    {EXAMPLE}:4:1: message 3: OA-1 [tool.unanswered_call] {OA1}call_ls",
        f"    {EXAMPLE}:8:1: message 7: OA-2 [tool.orphan_result] {OA2}",
        f"{EXAMPLE}:5:1: message 4: NZ-2 [tool.late_results] user message 5 stands between the calls of message 4 "
        "and their result (message 6); repair moves it up to the calls",
        f"    {EXAMPLE}:5:1: message 4: OA-1 [tool.unanswered_call] {OA1}call_cat",
        f"    {EXAMPLE}:7:1: message 6: OA-2 [tool.orphan_result] {OA2}",
        f"{EXAMPLE}:9:1: message 8: OA-2 [tool.orphan_result] {OA2}",
        f"{EXAMPLE}:10:1: message 9: OA-1 [tool.unanswered_call] {OA1}call_lic",
    ]
    assert result.stderr.decode().splitlines() == [
        "6 violations (4 problems) in 1 of 1 file(s) [profile default]",
        "4 fixable with `chatnorm repair` (add --diff to see the changes first)",
    ]


def test_check_finds_nothing_after_repair(tmp_path: Path):
    fixed = tmp_path / "fixed.jsonl"
    assert run("repair", EXAMPLE, "-o", fixed).returncode == 0
    result = run("check", fixed)
    assert result.returncode == 0, result.stdout
    assert result.stdout == b""
    assert "no violations" in result.stderr.decode()


@needs_samples
def test_check_of_a_real_broken_session_and_of_its_repair(tmp_path: Path):
    """A real hermes session breaks Moonshot's rules; repaired for Moonshot it does not.
    (A JSON document's findings are placed where their message begins in it: message 0 is
    the snapshot's system_prompt, message 1 the user message at 1173:5.)"""
    sample = SAMPLES / "hermes" / "session_20260420_134110_b27c28.json"
    broken = run("check", "--profile", "moonshot", sample)
    assert broken.returncode == 1
    assert broken.stdout.decode().startswith(f"{sample}:1177:5: message 2: MS-3 [content.tool_only_assistant] ")
    fixed = tmp_path / "fixed.jsonl"
    assert run("repair", "--profile", "moonshot", sample, "-o", fixed).returncode == 0
    clean = run("check", "--profile", "moonshot", fixed)
    assert clean.returncode == 0, clean.stdout


def test_check_places_findings_in_a_document_and_on_stdin(tmp_path: Path):
    messages = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "user", "content": "well?"},
    ]
    text = '{"messages": [\n' + ",\n".join("   " + json.dumps(m) for m in messages) + "\n]}\n"
    path = tmp_path / "body.json"
    path.write_text(text)
    expected = "message 1: OA-1 [tool.unanswered_call] An assistant message with 'tool_calls' must be followed"
    result = run("check", path)
    assert result.returncode == 1
    assert result.stdout.decode().startswith(f"{path}:3:4: {expected}")
    piped = run("check", "-", input=text.encode())
    assert piped.stdout.decode().startswith(f"<stdin>:3:4: {expected}")


def test_check_a_folder_names_the_files(tmp_path: Path):
    (tmp_path / "good.jsonl").write_bytes(run("repair", "-q", EXAMPLE).stdout)
    (tmp_path / "bad.jsonl").write_bytes(EXAMPLE.read_bytes())
    result = run("check", tmp_path)
    assert result.returncode == 1
    out = result.stdout.decode()
    assert str(tmp_path / "bad.jsonl") in out and str(tmp_path / "good.jsonl") not in out
    assert "in 1 of 2 file(s)" in result.stderr.decode()


def test_check_of_unreadable_input_fails(tmp_path: Path):
    path = tmp_path / "bad.jsonl"
    path.write_bytes(b"{nope\n")
    result = run("check", path)
    assert result.returncode == 1
    assert f"{path}:1:2: not JSON" in result.stderr.decode()
    missing = run("check", tmp_path / "missing.jsonl")
    assert missing.returncode == 1
    assert missing.stderr.decode().splitlines() == [
        f"error: {tmp_path / 'missing.jsonl'}: no such file or folder. Check the path",
        "1 file(s) could not be read; no violations in the 0 other file(s), 0 messages [profile default]",
    ]


def test_check_with_a_profile_from_stdin():
    from normalizer.profiles._profiles import PROFILES

    for name in sorted(PROFILES):
        # what a profile's repair writes is clean under that profile's check, read from stdin
        result = run("check", "--profile", name, "-", input=run("repair", "-q", "--profile", name, EXAMPLE).stdout)
        assert (name, result.returncode, result.stdout) == (name, 0, b"")
        assert result.stderr.decode().startswith("no violations: 1 file(s), "), (name, result.stderr)


def test_explain_plain_text_off_a_terminal():
    result = run("explain", EXAMPLE)
    assert result.returncode == 0, result.stderr
    text = result.stdout.decode()
    assert "\x1b[" not in text
    assert "#1 merge_assistant  (messages 2-4 → output 2)" in text
    assert "drop_orphan_result  (message 8 → removed)" in text
    assert "| before" in text and "| after" in text
    assert "merged assistant messages 2-4: one model turn stored as 3 messages" in text
    assert text.rstrip().endswith("stub_missing_result 1")
    assert all(line == line.rstrip() for line in text.splitlines())


def test_explain_colour_when_asked():
    result = run("explain", "--color", EXAMPLE)
    assert result.returncode == 0
    assert "\x1b[" in result.stdout.decode()


def test_explain_of_a_clean_history_says_so():
    result = run("explain", "-", input=run("repair", "-q", EXAMPLE).stdout)
    assert result.returncode == 0
    assert "10 in, 10 out; no repairs" in result.stdout.decode()


@pytest.mark.parametrize("args", [["--width", "5", str(EXAMPLE)], [str(EXAMPLE.parent)]])
def test_explain_usage_errors(args: list[str]):
    assert run("explain", *args).returncode == 2


def test_explain_of_a_missing_file_fails_like_the_other_commands():
    result = run("explain", "missing.jsonl")
    assert (result.returncode, result.stderr) == (1, b"error: missing.jsonl: no such file or folder. Check the path\n")


def table_rows(text: str, title: str) -> list[str]:
    """The rows of the table under ``title`` (between its header rule and its bottom border)."""
    after = text.split(title + "\n", 1)[1].splitlines()
    assert after[0].startswith("+--") and after[1].startswith("| before") and after[2].startswith("|--")
    rows = []
    for line in after[3:]:
        if line.startswith("+--"):
            return rows
        rows.append(line)
    raise AssertionError(title)


def test_explain_marks_the_lines_that_changed():
    """Result 6 moved up before user message 5: the user message's lines are not in this
    output message (-), the result's are (unmarked)."""
    text = run("explain", "--width", "100", EXAMPLE).stdout.decode()
    assert table_rows(text, "#3 move_result  (messages 5, 6 → output 4)") == [
        '| [5]                                             | [4]                                            |',
        '| - {                                             |   {                                            |',
        '| -   "role": "user",                             |     "role": "tool",                            |',
        '| -   "content": "Also check the license,         |     "tool_call_id": "call_cat",                |',
        '| please."                                        |     "content": "# demo\\nA demo project."       |',
        '| - }                                             |   }                                            |',
        '| [6]                                             |                                                |',
        '|   {                                             |                                                |',
        '|     "role": "tool",                             |                                                |',
        '|     "tool_call_id": "call_cat",                 |                                                |',
        '|     "content": "# demo\\nA demo project."        |                                                |',
        '|   }                                             |                                                |',
    ]


def test_explain_shows_the_before_of_a_profile_change():
    """set_prefix is the Mistral profile's change after the core: no input message is its
    "before"; the core's own message is."""
    text = run("explain", "--profile", "mistral", "--width", "100", EXAMPLE).stdout.decode()
    assert table_rows(text, "#10 set_prefix  (no input message → output 12)") == [
        "| core output [9], before the mistral profile's   | [12]                                           |",
        '| changes                                         |   {                                            |',
        '|   {                                             |     "role": "assistant",                       |',
        '|     "role": "assistant",                        | +   "content": "The README says: a demo        |',
        '| -   "content": "The README says: a demo         | project.",                                     |',
        '| project."                                       | +   "prefix": true                             |',
        '|   }                                             |   }                                            |',
    ]
    added = run("explain", "--profile", "anthropic", "--width", "100", EXAMPLE).stdout.decode()
    assert table_rows(added, "#8 placeholder_continue  (no input message → output 10)")[0] == (
        "| (none: the repair added this message)           | [10]                                           |")


def test_explain_wraps_long_lines_in_colour_too(tmp_path: Path):
    long = "word " * 60
    path = write_jsonl(tmp_path / "s.jsonl", [{"role": "user", "content": "hi"},
                                              {"role": "assistant", "content": long},
                                              {"role": "assistant", "content": "more"}])
    out = run("explain", "--color", "--width", "80", path).stdout.decode()
    import re
    plain = re.sub(r"\x1b\[[0-9;]*m", "", out)
    assert plain.count("word") == 2 * 60  # before and after, none cut at the edge


def test_explain_bad_input_is_located(tmp_path: Path):
    path = tmp_path / "bad.jsonl"
    path.write_bytes(b'{"role": "user", "content": "hi"}\n{"role": "user",\n')
    result = run("explain", path)
    assert result.returncode == 1
    assert f"{path}:2:" in result.stderr.decode()


# -- a check that could not check everything ------------------------------------------------------


def many_ids_then_a_reuse(path: Path, distinct: int) -> Path:
    messages: list[dict[str, object]] = [{"role": "user", "content": "go"}]
    for i in range(distinct + 1):
        # The last call reuses an id first seen past the limit of 20: only a full check sees it.
        call_id = f"c{distinct - 5}" if i == distinct else f"c{i}"
        messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": "sh", "arguments": "{}"}}]})
        messages.append({"role": "tool", "tool_call_id": call_id, "content": "ok"})
    messages.append({"role": "assistant", "content": "done"})
    return write_jsonl(path, messages)


def test_check_past_max_seen_ids_says_it_is_incomplete(tmp_path: Path):
    path = many_ids_then_a_reuse(tmp_path / "s.jsonl", 30)
    result = run("check", "--profile", "zhipu", "--max-seen-ids", "20", path)
    assert result.returncode == 3
    assert result.stdout == b""
    assert result.stderr.decode().splitlines() == [
        f"{path}: check incomplete: more than 20 distinct call ids in one conversation, so ids past "
        "that were not checked for reuse (tool.duplicate_call_id). Raise --max-seen-ids to check them all",
        "no violations: 1 file(s), 64 messages [profile zhipu]; check incomplete for 1 file(s) (--max-seen-ids)",
    ]
    quiet = run("check", "-q", "--profile", "zhipu", "--max-seen-ids", "20", path)
    assert quiet.returncode == 3
    assert quiet.stderr.decode().startswith(f"{path}: check incomplete: more than 20 distinct call ids")


def test_check_with_a_high_enough_max_seen_ids_finds_the_reuse(tmp_path: Path):
    path = many_ids_then_a_reuse(tmp_path / "s.jsonl", 30)
    result = run("check", "--profile", "zhipu", "--max-seen-ids", "40", path)
    assert result.returncode == 1
    assert "[tool.duplicate_call_id]" in result.stdout.decode()
    assert "incomplete" not in result.stderr.decode()


def test_check_help_documents_exit_3():
    text = run("check", "--help").stdout.decode()
    assert "3 no violations found, but the check is incomplete" in " ".join(text.split())


def test_explain_pages_on_a_terminal_unless_told_not_to(tmp_path: Path):
    """On a terminal the view goes to $PAGER (as git: LESS=FRX unless LESS is set); with
    --no-pager, or off a terminal, it is printed."""
    import os
    import pty
    import subprocess
    import sys

    from tests.cli.conftest import ROOT, read_pty

    paged = tmp_path / "paged.txt"
    pager = f"sh -c 'echo \"LESS=$LESS\" > {paged}; cat >> {paged}'"
    for flag in ([], ["--no-pager"]):
        master, slave = pty.openpty()
        env = {**os.environ, "PYTHONPATH": str(ROOT), "PAGER": pager, "NO_COLOR": "1"}
        env.pop("LESS", None)
        proc = subprocess.Popen([sys.executable, "-m", "normalizer", "explain", *flag, "--width", "100", str(EXAMPLE)],
                                stdin=subprocess.DEVNULL, stdout=slave, stderr=subprocess.PIPE, env=env)
        os.close(slave)
        shown = read_pty(master)
        assert proc.wait(timeout=60) == 0
        proc.stderr.close()  # type: ignore[union-attr]
        if flag:
            assert not paged.exists()
            assert b"#1 merge_assistant  (messages 2-4 \xe2\x86\x92 output 2)" in shown
        else:
            text = paged.read_text().splitlines()
            assert text[0] == "LESS=FRX"
            assert text[1] == "#1 merge_assistant  (messages 2-4 → output 2)"
            assert text[-2].startswith(f"{EXAMPLE}: 12 in, 10 out; ")
            assert shown == b""
            paged.unlink()
