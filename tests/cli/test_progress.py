"""The progress line, as a person at a terminal sees it: under a pseudo-terminal, with stdout
piped to another process, it counts messages while the run goes on; it is never drawn
where another process writes our output to the same terminal (``| head``); totals are known
up front; the line itself is pinned character for character."""

from __future__ import annotations

import fcntl
import os
import re
import struct
import subprocess
import sys
import termios
import threading
import time
from pathlib import Path

import orjson
import pytest

from normalizer.batch.plan import Job
from normalizer.batch.tracking import Tracker
from normalizer.cli._progress import make_tracker, render_line
from tests.cli.conftest import ROOT

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pseudo-terminals as on Linux")

COUNT = re.compile(rb"([\d,]+) msgs")


def turn(t: int) -> bytes:
    lines = [
        {"role": "user", "content": f"question {t}"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": f"c{t}", "type": "function", "function": {"name": "sh", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": f"c{t}", "content": "ok"},
        {"role": "assistant", "content": f"answer {t}"},
    ]
    return b"".join(orjson.dumps(m) + b"\n" for m in lines)


class Terminal:
    """A pseudo-terminal of 100x30 whose slave side is the command's stderr; a thread reads
    everything written to it (a terminal nobody reads would block its writers)."""

    def __init__(self) -> None:
        self.master, self.slave = os.openpty()
        fcntl.ioctl(self.slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
        self.chunks: list[bytes] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                data = os.read(self.master, 65536)
            except OSError:  # closed
                return
            if not data:
                return
            self.chunks.append(data)

    @property
    def seen(self) -> bytes:
        return b"".join(self.chunks)

    def read_until(self, pattern: re.Pattern[bytes], want: bytes, timeout: float) -> bool:
        """Wait until ``pattern``'s group 1 is ``want`` on the terminal; False if it never is."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(match.group(1) == want for match in pattern.finditer(self.seen)):
                return True
            time.sleep(0.05)
        return False

    def drain(self) -> bytes:
        """Everything written, once the writers are done."""
        time.sleep(0.3)
        return self.seen

    def close(self) -> None:
        for fd in (self.slave, self.master):
            try:
                os.close(fd)
            except OSError:
                pass


def start(terminal: Terminal, consumer: list[str], consumer_stdout: int) -> tuple[subprocess.Popen[bytes], subprocess.Popen[bytes]]:
    """``chatnorm repair -`` with stdin from us (800 messages written, stdin left open),
    stdout piped into ``consumer``, stderr the terminal."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TERM": "xterm"}
    env.pop("NO_COLOR", None)
    reader = subprocess.Popen(consumer, stdin=subprocess.PIPE, stdout=consumer_stdout)
    assert reader.stdin is not None
    proc = subprocess.Popen([sys.executable, "-m", "normalizer", "repair", "-"], stdin=subprocess.PIPE,
                            stdout=reader.stdin, stderr=terminal.slave, env=env)
    reader.stdin.close()  # the command holds the pipe's write end now
    assert proc.stdin is not None
    proc.stdin.write(b"".join(turn(t) for t in range(200)))  # 800 messages; stdin stays open
    proc.stdin.flush()
    return proc, reader


def test_progress_counts_messages_while_stdout_is_piped_to_another_process():
    terminal = Terminal()
    try:
        proc, reader = start(terminal, ["cat"], subprocess.DEVNULL)
        assert proc.stdin is not None
        # The run is not over (stdin is still open): the line must already count messages.
        assert terminal.read_until(COUNT, b"800", timeout=30), terminal.seen
        assert proc.poll() is None
        proc.stdin.write(turn(200))
        proc.stdin.close()
        assert proc.wait(timeout=60) == 0
        assert reader.wait(timeout=60) == 0
        text = terminal.drain()
        # The line is erased before the summary: the summary starts a clean line.
        tail = text[text.rindex(b"msgs"):]
        assert b"\r\x1b[K<stdin>: 804 in, 804 out; empty_content_to_null 201\r\n" in tail, tail
    finally:
        terminal.close()


def test_no_progress_line_where_the_pipe_writes_to_the_same_terminal():
    """``chatnorm repair | head`` on a terminal: head's lines are the progress; a line drawn
    beside them would be glued to them."""
    terminal = Terminal()
    try:
        proc, reader = start(terminal, ["cat"], terminal.slave)
        assert proc.stdin is not None
        time.sleep(1.5)  # well past the moment the line would appear (0.3 s)
        assert proc.poll() is None
        proc.stdin.close()
        assert proc.wait(timeout=60) == 0
        reader.wait(timeout=60)
        text = terminal.drain()
        assert b"msgs" not in text and b"\x1b[" not in text
        assert text.count(b'"role":"tool"') == 200
    finally:
        terminal.close()


def test_the_byte_total_is_known_before_the_first_file_is_opened(tmp_path: Path):
    sizes = [1_000, 25_000, 300]
    jobs = []
    for i, size in enumerate(sizes):
        path = tmp_path / f"{i}.jsonl"
        path.write_bytes(b"x" * size)
        jobs.append(Job(str(path), str(path), "-"))
    tracker = make_tracker(jobs, quiet=True)
    assert (tracker.files_total, tracker.bytes_total, tracker.bytes_read) == (3, 26_300, 0)


def counters(messages: int, read: int, total: int | None, files: tuple[int, int] = (0, 1)) -> Tracker:
    tracker = Tracker(files[1], total)
    tracker.files_done = files[0]
    tracker.advance(messages, read)
    return tracker


@pytest.mark.parametrize("tracker, elapsed, width, line", [
    (counters(154_298, 52_500_000, 58_400_000, (1, 4)), 3.2, 99,
     "━━━━━━━━━━━━━━━━━─── 52.5/58.4 MB  154,298 msgs  48,218/s  files 1/4  0:03 eta 0:00"),
    (counters(200_000, 12_300_000, None), 65.0, 99, "12.3 MB  200,000 msgs  3,077/s  1:05"),
    (counters(10, 900, 2_000), 2.0, 99, "━━━━━━━━━─────────── 0.9/2.0 kB  10 msgs  5/s  0:02 eta 0:02"),
    (counters(3, 900, 990), 2.0, 99, "━━━━━━━━━━━━━━━━━━── 900/990 bytes  3 msgs  2/s  0:02 eta 0:00"),
    (counters(0, 0, 5_000_000_000), 0.0, 99, "──────────────────── 0.0/5.0 GB  0 msgs  0/s  0:00"),
    (counters(7, 1_000, None), 3700.0, 99, "1.0 kB  7 msgs  0/s  1:01:40"),
    (counters(154_298, 52_500_000, 58_400_000, (1, 4)), 3.2, 40, "━━━━━━━━━━━━━━━━━─── 52.5/58.4 MB  154,2"),
])
def test_the_progress_line(tracker: Tracker, elapsed: float, width: int, line: str):
    assert render_line(tracker, elapsed, width) == line


def test_the_progress_line_in_ascii_and_colour():
    tracker = counters(5, 500, 1_000)
    assert render_line(tracker, 1.0, 99, unicode=False) == "##########---------- 0.5/1.0 kB  5 msgs  5/s  0:01 eta 0:01"
    assert render_line(tracker, 1.0, 99, colour=True) == (
        "\x1b[36m━━━━━━━━━━\x1b[0m\x1b[2m────────── \x1b[0m0.5/1.0 kB\x1b[1m  5 msgs\x1b[0m  5/s"
        "\x1b[2m  0:01\x1b[0m\x1b[2m eta 0:01\x1b[0m"
    )
