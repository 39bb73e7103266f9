"""``chatnorm repair --check`` and ``--diff``: ruff format's way to ask "would this change
anything?" in CI. Nothing is written; exit 1 when something would change."""

from __future__ import annotations

import re
from pathlib import Path

import orjson
import pytest

from tests.cli.conftest import EXAMPLE, ROOT, SAMPLES, big_session, needs_samples, run, write_jsonl

E = str(EXAMPLE)


def lines(data: bytes) -> list[str]:
    return data.decode().splitlines()


def test_check_exits_1_on_the_example_and_0_on_its_repair(tmp_path: Path):
    result = run("repair", "--check", EXAMPLE)
    assert result.returncode == 1
    assert lines(result.stdout) == [f"would repair: {E}"]
    assert lines(result.stderr) == ["1 file would be repaired, 0 files already clean [profile default]"]
    fixed = tmp_path / "fixed.jsonl"
    assert run("repair", EXAMPLE, "-o", fixed).returncode == 0
    clean = run("repair", "--check", fixed)
    assert (clean.returncode, clean.stdout) == (0, b"")
    assert lines(clean.stderr) == ["0 files would be repaired, 1 file already clean [profile default]"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fixed.jsonl"]  # nothing written


def test_diff_is_a_unified_diff_of_the_messages():
    result = run("repair", "--diff", EXAMPLE)
    assert result.returncode == 1
    source = [orjson.dumps(orjson.loads(line)).decode() for line in EXAMPLE.read_bytes().splitlines()]
    fixed = lines(run("repair", "-q", EXAMPLE).stdout)
    assert lines(result.stdout) == [
        f"--- {E}",
        f"+++ {E} (repaired)",
        "@@ -1,12 +1,10 @@",
        " " + source[0],
        " " + source[1],
        "-" + source[2],
        "-" + source[3],
        "-" + source[4],
        "+" + fixed[2],
        "+" + fixed[3],
        "+" + fixed[4],
        " " + source[5],
        "-" + source[6],
        "-" + source[7],
        "-" + source[8],
        "-" + source[9],
        "+" + fixed[6],
        "+" + fixed[7],
        " " + source[10],
        " " + source[11],
    ]
    assert fixed[2] == ('{"role":"assistant","content":"Let me look at the files first.","tool_calls":[{"id":"call_ls",'
                        '"type":"function","function":{"name":"shell","arguments":"{\\"cmd\\": \\"ls\\"}"}},'
                        '{"id":"call_cat","type":"function","function":{"name":"read_file","arguments":'
                        '"{\\"path\\": \\"README.md\\"}"}}]}')
    assert lines(result.stderr) == ["1 file would be repaired, 0 files already clean [profile default]"]


def test_diff_compares_data_not_spacing(tmp_path: Path):
    """The input is JSONL with spaces after colons; a clean history has no diff at all."""
    path = tmp_path / "spaced.jsonl"
    path.write_text('{"role": "user", "content": "hi"}\n{"role": "assistant",   "content": "hello"}\n')
    result = run("repair", "--diff", path)
    assert (result.returncode, result.stdout) == (0, b"")


def apply(diff: list[str], source: list[str]) -> list[str]:
    """Apply a unified diff (as printed) to ``source``: what ``patch`` does, checked as it goes."""
    out: list[str] = []
    at = 0
    i = 2
    assert diff[0].startswith("--- ") and diff[1].startswith("+++ ")
    while i < len(diff):
        m = re.fullmatch(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", diff[i])
        assert m, diff[i]
        start = int(m.group(1)) - (1 if m.group(2) != "0" else 0)
        out += source[at:start]
        at = start
        i += 1
        while i < len(diff) and not diff[i].startswith("@@"):
            tag, line = diff[i][0], diff[i][1:]
            if tag in " -":
                assert source[at] == line, (at, line)
                at += 1
            if tag in " +":
                out.append(line)
            i += 1
    return out + source[at:]


def test_a_long_diff_is_settled_window_by_window_and_still_exact(tmp_path: Path):
    """5,000 turns, each with a change: the diff is made in windows of a few hundred lines;
    applied to the input, it gives exactly the repaired output."""
    path = big_session(tmp_path / "big.jsonl", 5_000)
    result = run("repair", "--diff", "-q", path)
    assert result.returncode == 1
    diff = lines(result.stdout)
    assert len([line for line in diff if line.startswith("@@")]) > 10
    assert apply(diff, lines(path.read_bytes())) == lines(run("repair", "-q", path).stdout)


def test_several_files_a_missing_one_and_a_broken_one(tmp_path: Path):
    fixed = tmp_path / "fixed.jsonl"
    fixed.write_bytes(run("repair", "-q", EXAMPLE).stdout)
    broken = tmp_path / "broken.jsonl"
    broken.write_bytes(b'{"role": "user", "content": "hi"}\n{"role": "robot"}\n')
    result = run("repair", "--check", EXAMPLE, fixed, broken, tmp_path / "gone.jsonl")
    assert result.returncode == 1
    assert lines(result.stdout) == [f"would repair: {E}"]
    assert lines(result.stderr) == [
        f"error: {tmp_path / 'gone.jsonl'}: no such file or folder. Check the path",
        f"error: {broken}:2:1: message 1: unknown role 'robot'. Expected one of system, developer, user, assistant, tool",
        "1 file would be repaired, 1 file already clean, 2 could not be read [profile default]",
    ]


def test_check_follows_the_profile_and_options():
    result = run("repair", "--check", "--profile", "mistral", "-", input=run("repair", "-q", EXAMPLE).stdout)
    assert result.returncode == 1  # repaired for the default profile is not repaired for Mistral
    assert lines(result.stdout) == ["would repair: <stdin>"]
    again = run("repair", "-q", "--profile", "mistral", EXAMPLE).stdout
    assert run("repair", "--check", "--profile", "mistral", "-", input=again).returncode == 0


def test_a_skipped_line_is_a_change(tmp_path: Path):
    path = write_jsonl(tmp_path / "s.jsonl", [{"role": "user", "content": "hi"}, {"role": "robot"},
                                              {"role": "assistant", "content": "yo"}])
    assert run("repair", "--check", "--on-invalid", "skip", path).returncode == 1


def test_check_and_diff_write_nothing(tmp_path: Path):
    for flag in ("--check", "--diff"):
        for extra, named in ((["-o", str(tmp_path / "out.jsonl")], "-o"), (["--in-place"], "--in-place"),
                             (["--report", str(tmp_path / "r.json")], "--report")):
            result = run("repair", flag, *extra, EXAMPLE)
            assert result.returncode == 2
            assert lines(result.stderr)[-1] == f"Error: {flag} writes nothing: drop {named}"
    assert list(tmp_path.iterdir()) == []


@needs_samples
def test_the_hermes_session_check_passes_and_repair_check_does_not():
    """The default profile accepts "" next to calls (check: no violations); the repair still
    normalizes it to null (15 changes): --check says so, --diff shows each."""
    sample = SAMPLES / "hermes" / "session_20260420_134110_b27c28.json"
    assert run("check", sample).returncode == 0
    assert run("repair", "--check", sample).returncode == 1
    diff = lines(run("repair", "--diff", sample).stdout)
    assert len([line for line in diff if line.startswith("+")]) == 1 + 15
    assert all('"content":null' in line for line in diff if line.startswith("+{"))


def test_check_says_each_file_as_it_comes_and_keeps_no_result(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]):
    """Each input's verdict is said when it is compared, in order, and its result is then
    dropped: a check over millions of files holds counters, not a result a file."""
    import gc
    import weakref

    from normalizer.cli import _diff
    from normalizer.cli._main import main

    src = tmp_path / "in"
    src.mkdir()
    (src / "a.jsonl").write_bytes(EXAMPLE.read_bytes())
    (src / "b.jsonl").write_bytes(b'{"role": "robot"}\n')
    (src / "c.jsonl").write_bytes(run("repair", "-q", EXAMPLE).stdout)
    (src / "d.jsonl").write_bytes(EXAMPLE.read_bytes())
    kept: list[weakref.ref[_diff.CompareResult]] = []
    alive: list[int] = []
    real = _diff.compare_file

    def compare_file(*args: object, **kwargs: object) -> _diff.CompareResult:
        gc.collect()
        alive.append(sum(ref() is not None for ref in kept[:-1]))  # (the loop names the last one)
        result = real(*args, **kwargs)  # type: ignore[arg-type]
        kept.append(weakref.ref(result))
        return result

    monkeypatch.setattr(_diff, "compare_file", compare_file)
    assert main(["repair", "--check", str(src)]) == 1
    assert alive == [0, 0, 0, 0]
    out, err = capsys.readouterr()
    assert lines(out.encode()) == [f"would repair: {src / 'a.jsonl'}", f"would repair: {src / 'd.jsonl'}"]
    assert lines(err.encode()) == [
        f"error: {src / 'b.jsonl'}:1:1: message 0: unknown role 'robot'. Expected one of system, developer, user, "
        "assistant, tool",
        "2 files would be repaired, 1 file already clean, 1 could not be read [profile default]",
    ]


# -- a session is compared as repair writes it: in its own format ----------------------------------


def _session_samples() -> list[Path]:
    from realdata import sample_files

    return [*sample_files("", "**/claude_code/*.jsonl"), *sample_files("", "**/codex*/*.jsonl")]


@needs_samples
@pytest.mark.parametrize("path", _session_samples(), ids=lambda p: p.name[:40])
def test_check_and_diff_answer_for_what_repair_writes_on_every_session_sample(path: Path):
    """A Claude Code session or Codex rollout is written back in its own format by
    ``repair``: ``--check`` says "would repair" exactly when that output differs from the
    file, and ``--diff`` is empty exactly then (they compared chat encodings before, and
    called 8 of the 11 real files changed though repair wrote them byte for byte)."""
    written = run("repair", "-q", path)
    assert written.returncode == 0, written.stderr
    changes = written.stdout != path.read_bytes()
    check = run("repair", "--check", "-q", path)
    diff = run("repair", "--diff", "-q", path)
    assert (check.returncode, diff.returncode) == (int(changes), int(changes))
    assert (diff.stdout == b"") == (not changes)


def test_diff_of_a_session_is_its_own_lines_and_the_stub_repair_adds(tmp_path: Path):
    rollout = EXAMPLE.parent / "codex-rollout.jsonl"
    source = lines(rollout.read_bytes())
    repaired = lines(run("repair", "-q", rollout).stdout)
    assert repaired[:-1] == source  # repair adds one stub line at the end, nothing else
    result = run("repair", "--diff", rollout)
    assert result.returncode == 1
    name = str(rollout)
    assert lines(result.stdout) == [
        f"--- {name}", f"+++ {name} (repaired)", f"@@ -{len(source) - 2},3 +{len(source) - 2},4 @@",
        *(" " + line for line in source[-3:]), "+" + repaired[-1],
    ]


@pytest.mark.parametrize(("to", "example"), [("claude-code", "claude-session.jsonl"), ("codex", "codex-rollout.jsonl")])
def test_check_and_diff_take_a_session_format_as_to(to: str, example: str):
    """``--to claude-code`` / ``--to codex`` with ``--check`` and ``--diff`` (a KeyError
    traceback before): the same comparison as without, since repair writes the same file."""
    path = EXAMPLE.parent / example
    assert run("repair", "--to", to, "-q", path).stdout == run("repair", "-q", path).stdout
    check = run("repair", "--check", "--to", to, path)
    assert (check.returncode, lines(check.stdout)) == (1, [f"would repair: {path}"])
    assert b"Traceback" not in check.stderr
    diff = run("repair", "--diff", "--to", to, path)
    assert (diff.returncode, diff.stdout) == (1, run("repair", "--diff", path).stdout)
    wrong = run("repair", "--check", "--to", "codex" if to == "claude-code" else "claude-code", path)
    assert wrong.returncode == 1 and b"Traceback" not in wrong.stderr
    assert lines(wrong.stderr)[0].startswith(f"error: {path}: no record of this file was recognised as ")


@pytest.mark.parametrize("flag", ["--check", "--diff"])
def test_a_session_option_refused_is_said_as_repair_says_it(flag: str):
    """One session repairer for repair and --check/--diff (``batch.sessions.repair_session``):
    an option a session in its own format cannot take is refused with the same words,
    naming the file and saying what to do, and the file counts as one that could not be read."""
    session = ROOT / "examples" / "claude-session.jsonl"
    error = (f"error: {session}: orphan_results='keep_as_user' cannot be applied to a session in its own format; "
             "use 'drop' or 'error'. Give --to jsonl to repair it as chat messages")
    repaired = run("repair", "--orphan-results", "keep-as-user", session)
    assert (repaired.returncode, repaired.stdout) == (1, b"")
    assert lines(repaired.stderr)[0] == error
    compared = run("repair", flag, "--orphan-results", "keep-as-user", session)
    assert (compared.returncode, compared.stdout) == (1, b"")
    assert lines(compared.stderr) == [
        error, "0 files would be repaired, 0 files already clean, 1 could not be read [profile default]"]


RESPONSES_ITEMS = [
    {"type": "message", "role": "user", "content": "hi"},
    {"id": "msg_1", "type": "message", "role": "assistant", "status": "completed",
     "content": [{"type": "output_text", "text": "Let me check."}]},
    {"id": "fc_1", "type": "function_call", "call_id": "call_1", "name": "ls", "arguments": "{}", "status": "completed"},
    {"type": "function_call_output", "call_id": "call_1", "output": "a b"},
]


def test_diff_to_responses_previews_the_items_with_their_own_fields(tmp_path: Path):
    # Repaired to Responses items, the items keep their ids and statuses (kept beside the
    # chat messages for that writer): --diff previews the same items, so nothing differs;
    # a repair that changes something shows its change with the ids on both sides.
    path = tmp_path / "items.json"
    path.write_bytes(orjson.dumps(RESPONSES_ITEMS))
    written = run("repair", "-q", "--to", "responses", path).stdout
    assert b'"id":"msg_1"' in written and b'"id":"fc_1"' in written
    same = run("repair", "--diff", "--to", "responses", path)
    assert (same.returncode, same.stdout) == (0, b"")
    path.write_bytes(orjson.dumps(RESPONSES_ITEMS[:3]))  # the call unanswered: a stub result is added
    stubbed = run("repair", "--diff", "--to", "responses", path)
    assert stubbed.returncode == 1
    call = '{"type":"function_call","call_id":"call_1","name":"ls","arguments":"{}","id":"fc_1","status":"completed"}'
    changed = [line for line in lines(stubbed.stdout) if line[:1] in "+-" and line[:3] not in ("+++", "---")]
    assert changed == [f"-{call}", f"+{call},", '+{"type":"function_call_output","call_id":"call_1","output":'
                       '"[no result: this tool call was not answered in the stored history]"}']
