"""Standard streams that are closed or fail: stdout to /dev/full or past ``ulimit -f``, and
``>&-``, ``2>&-``, ``<&-``. One line on stderr (when there is a stderr), exit 1 for output
that could not be written, never a traceback; work that needs no closed stream still gets done."""

from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.conftest import EXAMPLE, ROOT, big_session, run

ENV = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
CMD = f"{sys.executable} -m normalizer"
FULL = ("error: <stdout>: cannot write: No space left on device; the output is incomplete. "
        "Free some space, or write elsewhere with -o\n")
CLOSED = "error: <stdout>: cannot write: stdout is closed. Redirect it, or write to a file with -o\n"
COMMANDS = [["repair"], ["check"], ["explain"]]


def shell(script: str, cwd: Path | None = None) -> subprocess.CompletedProcess[bytes]:
    """A bash script (for its redirections), stdout and stderr captured unless it closes them."""
    return subprocess.run(["bash", "-c", script], capture_output=True, env=ENV, cwd=cwd, timeout=60)


@pytest.mark.parametrize("command", COMMANDS)
def test_stdout_to_dev_full(command: list[str]):
    with open("/dev/full", "wb") as full:
        result = subprocess.run([sys.executable, "-m", "normalizer", *command, str(EXAMPLE)],
                                stdout=full, stderr=subprocess.PIPE, env=ENV, timeout=60)
    assert result.returncode == 1
    assert result.stderr.decode() == FULL


def test_stdout_past_the_file_size_limit(tmp_path: Path):
    src = big_session(tmp_path / "big.jsonl", 2_000)
    out = tmp_path / "out.jsonl"

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, 64 * 1024))

    with out.open("wb") as f:
        result = subprocess.run([sys.executable, "-m", "normalizer", "repair", "-q", str(src)],
                                stdout=f, stderr=subprocess.PIPE, env=ENV, preexec_fn=limit, timeout=60)
    assert result.returncode == 1
    assert result.stderr.decode() == (
        "error: <stdout>: cannot write: File too large; the output is incomplete. "
        "The file size limit (ulimit -f) was reached: raise it, or write elsewhere with -o\n"
    )
    assert out.stat().st_size <= 64 * 1024


@pytest.mark.parametrize("command", COMMANDS)
def test_closed_stdout(command: list[str]):
    result = shell(f"{CMD} {command[0]} {EXAMPLE} >&-")
    assert result.returncode == 1
    assert result.stderr.decode() == CLOSED


def test_closed_stdout_with_an_output_file_is_fine(tmp_path: Path):
    out = tmp_path / "out.jsonl"
    result = shell(f"{CMD} repair -q {EXAMPLE} -o {out} >&-")
    assert result.returncode == 0, result.stderr
    assert out.read_bytes() == run("repair", "-q", EXAMPLE).stdout


@pytest.mark.parametrize("command", COMMANDS)
def test_closed_stdin_as_the_input_is_a_usage_error(command: list[str]):
    result = shell(f"{CMD} {command[0]} <&-")
    assert result.returncode == 2
    assert result.stderr.decode().splitlines()[-1] == "Error: stdin is closed: give a file or a folder, or pipe a session into it"


def test_closed_stdin_is_not_needed_for_a_file():
    result = shell(f"{CMD} repair -q {EXAMPLE} <&-")
    assert result.returncode == 0, result.stderr
    assert result.stdout == run("repair", "-q", EXAMPLE).stdout


@pytest.mark.parametrize("quiet", [["-q"], []])
def test_closed_stderr_still_writes_the_output(tmp_path: Path, quiet: list[str]):
    out = tmp_path / "out.jsonl"
    result = shell(f"{CMD} repair {' '.join(quiet)} {EXAMPLE} -o {out} 2>&-")
    assert result.returncode == 0
    assert out.read_bytes() == run("repair", "-q", EXAMPLE).stdout


def test_closed_stderr_to_stdout():
    result = shell(f"{CMD} repair {EXAMPLE} 2>&-")
    assert result.returncode == 0
    assert result.stdout == run("repair", "-q", EXAMPLE).stdout


def test_closed_stderr_loses_no_report_silently(tmp_path: Path):
    result = shell(f"{CMD} repair -q {EXAMPLE} -o {tmp_path / 'out.jsonl'} --report - 2>&-")
    assert result.returncode == 1


def test_all_three_closed_with_an_output_file(tmp_path: Path):
    out = tmp_path / "out.jsonl"
    result = shell(f"{CMD} repair {EXAMPLE} -o {out} <&- >&- 2>&-")
    assert result.returncode == 0
    assert out.read_bytes() == run("repair", "-q", EXAMPLE).stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.jsonl"]


def test_check_with_closed_stderr_keeps_its_status():
    assert shell(f"{CMD} check {EXAMPLE} 2>&-").returncode == 1
    fixed = run("repair", "-q", EXAMPLE).stdout
    clean = subprocess.run(["bash", "-c", f"{CMD} check - 2>&-"], input=fixed, capture_output=True, env=ENV, timeout=60)
    assert clean.returncode == 0
