"""The small things a new user trips over (issue 19's "other" list), each pinned: one name per
option in Python and on the command line, accurate interrupt messages, one missing file in a
batch, an empty file, a truncated JSON document, -o FILE with several inputs, ``repair -``
on a terminal, thousands separators."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest

from normalizer._errors import InputError
from tests.cli.conftest import EXAMPLE, ROOT, jsonl, run, write_jsonl

SUMMARY = ("12 in, 10 out; drop_orphan_result 1, empty_content_to_null 1, merge_assistant 1, move_result 2, "
           "reorder_results 1, stub_missing_result 1")


def lines(data: bytes) -> list[str]:
    return data.decode().splitlines()


# -- one name for each option ---------------------------------------------------------------------


def test_on_invalid_is_spelled_as_in_python(tmp_path: Path):
    path = write_jsonl(tmp_path / "s.jsonl", [{"role": "user", "content": "hi"}, {"role": "robot"}])
    error = run("repair", "--on-invalid", "error", path)
    assert error.returncode == 1
    assert lines(error.stderr)[0] == (
        f"error: {path}:2:1: message 1: unknown role 'robot'. Expected one of system, developer, user, assistant, tool")
    old = run("repair", "--on-invalid", "fail", path)  # the old spelling, for one release
    assert old.returncode == 1
    assert lines(old.stderr)[:2] == [
        "warning: --on-invalid fail is deprecated and will be removed in the next release; use --on-invalid error",
        lines(error.stderr)[0],
    ]
    assert "--on-invalid [error|skip]" in " ".join(run("repair", "--help").stdout.decode().split())


def test_orphan_results_keep_as_user_in_kebab_case(tmp_path: Path):
    new = run("repair", "--orphan-results", "keep-as-user", EXAMPLE)
    old = run("repair", "--orphan-results", "keep_as_user", EXAMPLE)
    assert new.returncode == old.returncode == 0
    assert new.stdout == old.stdout
    assert lines(old.stderr)[0] == ("warning: --orphan-results keep_as_user is deprecated and will be removed in the "
                                    "next release; use --orphan-results keep-as-user")
    assert lines(new.stderr)[0] == (f"{EXAMPLE}: 12 in, 10 out; empty_content_to_null 1, merge_assistant 1, "
                                    "merge_user 1, move_result 2, orphan_result_to_user 1, reorder_results 1, "
                                    "stub_missing_result 1")
    assert "[drop|keep-as-user|error]" in run("repair", "--help").stdout.decode()


# -- interrupted ----------------------------------------------------------------------------------


def turns(n: int, start: int = 0) -> bytes:
    out = []
    for t in range(start, start + n):
        out.append({"role": "user", "content": f"q{t} " + "x" * 300})
        out.append({"role": "assistant", "content": f"a{t}"})
    return b"".join(orjson.dumps(m) + b"\n" for m in out)


def test_ctrl_c_with_stdout_redirected_counts_what_reached_it(tmp_path: Path):
    """stdout is a file: what reached it stays there, and the message says how much."""
    out = tmp_path / "out.jsonl"
    with out.open("wb") as f:
        proc = subprocess.Popen([sys.executable, "-m", "normalizer", "repair", "-"], stdin=subprocess.PIPE,
                                stdout=f, stderr=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert proc.stdin is not None and proc.stderr is not None
        proc.stdin.write(turns(2_000))  # ~640 kB: past one block of output (256 kB)
        proc.stdin.flush()
        deadline = time.monotonic() + 30
        while out.stat().st_size == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.3)  # blocked reading stdin now
        proc.send_signal(signal.SIGINT)
        err = proc.stderr.read().decode()
        proc.stderr.close()
        assert proc.wait(timeout=30) == 130
        proc.stdin.close()
    written = len(out.read_bytes().splitlines())
    assert written > 0
    assert err == f"\ninterrupted (SIGINT): the output on stdout is incomplete ({written:,} lines had been written)\n"


def test_ctrl_c_before_anything_reached_stdout(tmp_path: Path):
    proc = subprocess.Popen([sys.executable, "-m", "normalizer", "repair", "-"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(ROOT)})
    time.sleep(1.0)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130
    assert (out, err.decode()) == (b"", "\ninterrupted (SIGINT): nothing was written to stdout\n")


# -- inputs ---------------------------------------------------------------------------------------


def test_one_missing_file_does_not_abort_the_batch(tmp_path: Path):
    a = tmp_path / "a.jsonl"
    a.write_bytes(EXAMPLE.read_bytes())
    out = tmp_path / "out"
    result = run("repair", a, tmp_path / "missing.jsonl", "-o", out)
    assert result.returncode == 1
    assert lines(result.stderr)[:3] == [
        f"error: {tmp_path / 'missing.jsonl'}: no such file or folder. Check the path",
        f"{a}: {SUMMARY}",
        "total: 2 files (1 failed), 12 in, 10 out; drop_orphan_result 1, empty_content_to_null 1, merge_assistant 1, "
        "move_result 2, reorder_results 1, stub_missing_result 1; " + lines(result.stderr)[2].rsplit("; ", 1)[1],
    ]
    assert (out / "a.jsonl").read_bytes() == run("repair", "-q", EXAMPLE).stdout
    alone = run("repair", tmp_path / "missing.jsonl")
    assert alone.returncode == 1
    assert lines(alone.stderr) == [
        f"error: {tmp_path / 'missing.jsonl'}: no such file or folder. Check the path",
        "1 file (failed), " + lines(alone.stderr)[1].split(", ")[1],
    ]


@pytest.mark.parametrize("content", [b"", b"\n\n", b"[]"])
def test_an_empty_file_is_said_to_be_empty(tmp_path: Path, content: bytes):
    path = tmp_path / ("empty.json" if content == b"[]" else "empty.jsonl")
    path.write_bytes(content)
    result = run("repair", path)
    assert result.returncode == 0
    assert lines(result.stderr)[:2] == [f"warning: {path}: no messages in it; its output is empty",
                                        f"{path}: 0 in, 0 out; no repairs"]
    checked = run("check", path)
    assert checked.returncode == 0
    assert lines(checked.stderr) == [f"warning: {path}: no messages in it",
                                     "no violations: 1 file(s), 0 messages [profile default]"]


def test_a_truncated_json_document_says_so_in_its_own_words(tmp_path: Path):
    path = tmp_path / "cut.json"
    path.write_bytes(b'[{"role": "user", "content": "hi"}, {"role": "assist')
    result = run("repair", path)
    assert result.returncode == 1
    assert lines(result.stderr) == [
        f"error: {path}:1:53: the JSON document ends too early (after record 1). The file looks truncated; "
        "repair or re-export it, or convert it to JSONL",
        "1 file (failed), " + lines(result.stderr)[1].split(", ")[1],
    ]


def test_an_error_reads_the_same_in_python_and_on_the_command_line(tmp_path: Path):
    # FILE:LINE:COL: message N: what -- a colon after each part, in str(exc) too
    exc = InputError("unknown role 'robot'", source="badrole.jsonl", line=2, column=1, index=1)
    assert str(exc) == "badrole.jsonl:2:1: message 1: unknown role 'robot'"
    assert str(InputError("bad", source="x.jsonl", line=2, index=1)) == "x.jsonl:2: message 1: bad"


def test_o_with_a_file_name_for_several_inputs_is_refused(tmp_path: Path):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_bytes(EXAMPLE.read_bytes())
    b.write_bytes(EXAMPLE.read_bytes())
    result = run("repair", a, b, "-o", tmp_path / "out1.jsonl")
    assert result.returncode == 2
    assert lines(result.stderr)[-1] == (
        f"Error: -o {tmp_path / 'out1.jsonl'}: 2 input files are written into a folder, and "
        f"{tmp_path / 'out1.jsonl'} names a file. Give a folder (-o {tmp_path / 'out1'}/), or one input per run")
    assert not (tmp_path / "out1.jsonl").exists()
    assert run("repair", a, b, "-o", tmp_path / "out1").returncode == 0  # a folder name is fine


def test_repair_dash_reads_a_terminal(tmp_path: Path):
    """An explicit ``-`` on a terminal is read (pasted, ended with Ctrl-D); with no input at
    all, a terminal on stdin is still refused (a forgotten file would look like a hang)."""
    import pty

    master, slave = pty.openpty()
    try:
        proc = subprocess.Popen([sys.executable, "-m", "normalizer", "repair", "-"], stdin=slave,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env={**os.environ, "PYTHONPATH": str(ROOT)})
        os.write(master, b'{"role": "user", "content": "hi"}\n{"role": "assistant", "content": "", "tool_calls": '
                         b'[{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}\n\x04')
        out, err = proc.communicate(timeout=30)
        assert proc.returncode == 0, err
        assert jsonl(out)[1]["content"] is None and jsonl(out)[2]["role"] == "tool"
        assert lines(err)[0] == "<stdin>: 2 in, 3 out; empty_content_to_null 1, stub_missing_result 1"
        refused = subprocess.run([sys.executable, "-m", "normalizer", "repair"], stdin=slave, capture_output=True,
                                 env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=30)
        assert refused.returncode == 2
        assert lines(refused.stderr)[-1] == ("Error: no input: give a file or a folder, or pipe a session into it "
                                             "(chatnorm repair - < session.jsonl)")
    finally:
        os.close(master)
        os.close(slave)


def test_summaries_have_thousands_separators(tmp_path: Path):
    path = tmp_path / "s.jsonl"
    path.write_bytes(turns(600) + b'{"role": "assistant", "content": "more"}\n')
    result = run("repair", path)
    assert lines(result.stderr)[0] == f"{path}: 1,201 in, 1,200 out; merge_assistant 1"
    (tmp_path / "t.jsonl").write_bytes(path.read_bytes())
    both = run("repair", path, tmp_path / "t.jsonl", "-o", tmp_path / "out")
    assert lines(both.stderr)[-1].startswith("total: 2 files, 2,402 in, 2,400 out; merge_assistant 2; ")
