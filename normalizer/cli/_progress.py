"""The progress line: one line on stderr when stderr is a terminal, nothing otherwise.

Workers never draw. They bump plain counters on a :class:`Tracker` (``batch.tracking``) -- bytes
and messages each time the reader reads (``batch.streams.Input``), so the count moves whatever stdout is (a
file, a pipe, the terminal, /dev/null) -- and a drawing thread redraws the line eight times
a second from those counters. The per-message path pays nothing for the display.

What the line shows: bytes read of the run's total (known up front: the sizes of every
input file, summed before the first is opened), messages read and their rate, files done,
the time so far and, once the total is known and a little has been read, an estimate of
the time left::

    ━━━━━━━━━━━━━━━━───────── 52.5/58.4 MB  154,298 msgs  51,230/s  files 3/4  0:03 eta 0:01

Sharing the terminal: everything this process writes to the terminal (stderr through
:func:`~._text.say`, stdout when it is the terminal) first erases the line (:func:`clear`);
the next tick draws it again below. Another process cannot be told to: when stdout is a
pipe whose reader writes to this same terminal (``| head``, ``| less``, ``| grep x | head``),
that output is the progress, and the line is not shown (:func:`_pipe_ends_on`, Linux; elsewhere
the line is drawn with the cursor left at its start, so such output overwrites it rather than
being glued after it). The line is erased at the end, and appears only after
:data:`SHOW_AFTER` seconds, so short runs never flash it.
"""

from __future__ import annotations

import os
import stat
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any

from ..batch.tracking import LIVE as _LIVE
from ..batch.tracking import Tracker, clear

__all__ = ["Tracker", "make_tracker", "clear", "render_line", "SHOW_AFTER"]

#: Seconds before the line first appears.
SHOW_AFTER = 0.3
#: Seconds between two redraws.
REFRESH = 0.125

_CLEAR = "\r\x1b[K"


class _LineTracker(Tracker):
    """The same counters, drawn as one line by a thread of its own."""

    def __init__(self, files_total: int, bytes_total: int | None, stream: Any) -> None:
        super().__init__(files_total, bytes_total)
        self._stream = stream
        self._draw = threading.Lock()  # one writer of the terminal line at a time
        self._shown = False
        self._stop = threading.Event()
        self._start = time.perf_counter()
        self._unicode = (getattr(stream, "encoding", "") or "").lower().replace("-", "") in ("utf8", "utf_8")
        self._colour = not os.environ.get("NO_COLOR")

    def _width(self) -> int:
        try:
            columns = os.get_terminal_size(self._stream.fileno()).columns
        except (OSError, ValueError, AttributeError):
            columns = 0
        return (columns or 80) - 1  # never the last column: a full line would wrap

    def _tick(self) -> None:
        line = render_line(self, time.perf_counter() - self._start, self._width(), unicode=self._unicode,
                           colour=self._colour)
        with self._draw:
            if self._stop.is_set():
                return
            try:
                self._stream.write(f"\r{line}\x1b[K\r")
                self._stream.flush()
            except (OSError, ValueError):
                self._stop.set()  # the terminal went away: nothing more to draw on
                return
            self._shown = True

    def clear(self) -> None:
        with self._draw:
            if self._shown:
                self._shown = False
                try:
                    self._stream.write(_CLEAR)
                    self._stream.flush()
                except (OSError, ValueError):
                    pass

    def _run(self) -> None:
        if self._stop.wait(SHOW_AFTER):
            return
        # Decided now, not at start: the other processes of the pipeline are set up by then.
        if _pipe_ends_on(self._stream):
            return
        while not self._stop.is_set():
            self._tick()
            self._stop.wait(REFRESH)

    def __enter__(self) -> Tracker:
        _LIVE.append(self)
        self._thread = threading.Thread(target=self._run, name="normalizer-progress", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.clear()
        _LIVE.remove(self)


def _pipe_ends_on(terminal: Any, hops: int = 8) -> bool:
    """Whether stdout is a pipe whose reader -- or the reader of that reader's pipe, and so
    on down the pipeline -- writes to ``terminal``. Linux only (it reads /proc: the readers
    are the processes of our process group whose stdin is the pipe); False elsewhere, or
    when anything cannot be read."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        tty = os.fstat(terminal.fileno()).st_rdev
        pipe = os.fstat(sys.stdout.fileno())
        group, me = os.getpgrp(), os.getpid()
        members = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit() or int(entry) == me:
                continue
            try:
                with open(f"/proc/{entry}/stat", "rb") as f:
                    fields = f.read().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == group:  # after the name: state, ppid, pgrp
                members.append(entry)
    except (OSError, ValueError, AttributeError, IndexError):
        return False
    for _ in range(hops):
        if not stat.S_ISFIFO(pipe.st_mode):
            return False
        for pid in members:
            try:
                given = os.stat(f"/proc/{pid}/fd/0")
                if (given.st_dev, given.st_ino) != (pipe.st_dev, pipe.st_ino):
                    continue
                output = os.stat(f"/proc/{pid}/fd/1")  # not 2: every stderr is the terminal
            except OSError:
                continue
            if stat.S_ISCHR(output.st_mode) and output.st_rdev == tty:
                return True
            pipe = output
            break
        else:
            return False
    return False


@dataclass(frozen=True, slots=True)
class _Size:
    """A byte count in a unit of its size (:func:`_size`)."""

    value: float
    unit: str


def _size(n: float) -> _Size:
    for unit in ("bytes", "kB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return _Size(n, unit)
        n /= 1000
    return _Size(n, "TB")  # pragma: no cover - the loop returns at GB


def _amount(done: int, total: int | None) -> str:
    """``52.5/58.4 MB`` (both in the total's unit), or ``12.3 MB`` with no total."""
    if total is None:
        size = _size(done)
        return f"{done:,} bytes" if size.unit == "bytes" else f"{size.value:.1f} {size.unit}"
    size = _size(total)
    if size.unit == "bytes":
        return f"{done:,}/{total:,} bytes"
    factor = total / size.value
    return f"{done / factor:.1f}/{size.value:.1f} {size.unit}"


def _clock(seconds: float) -> str:
    seconds = int(seconds)
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


def render_line(tracker: Tracker, elapsed: float, width: int, *, unicode: bool = True, colour: bool = False) -> str:
    """The progress line for ``tracker``'s counters after ``elapsed`` seconds, at most
    ``width`` characters (colour codes not counted)."""
    total = tracker.bytes_total
    done = tracker.bytes_read if total is None else min(tracker.bytes_read, total)
    parts: list[tuple[str, str]] = []  # (text, ANSI style)
    if total:
        cells = 20
        filled = cells * done // total
        full, empty = ("━", "─") if unicode else ("#", "-")
        parts.append((full * filled, "36"))
        parts.append((empty * (cells - filled) + " ", "2"))
    parts.append((_amount(done, total), ""))
    rate = tracker.messages / elapsed if elapsed > 0 else 0.0
    parts.append((f"  {tracker.messages:,} msgs", "1"))
    parts.append((f"  {rate:,.0f}/s", ""))
    if tracker.files_total > 1:
        parts.append((f"  files {tracker.files_done:,}/{tracker.files_total:,}", ""))
    parts.append((f"  {_clock(elapsed)}", "2"))
    if total and 0 < done < total and elapsed >= 1:
        parts.append((f" eta {_clock(elapsed * (total - done) / done)}", "2"))
    out: list[str] = []
    room = width
    for text, style in parts:
        if room <= 0:
            break
        text = text[:room]
        room -= len(text)
        out.append(f"\x1b[{style}m{text}\x1b[0m" if colour and style and text else text)
    return "".join(out)


def _input_size(path: str) -> int | None:
    """Bytes in an input, or None when unknown (stdin from a pipe or a terminal)."""
    try:
        st = os.fstat(sys.stdin.fileno()) if path == "-" else os.stat(path)
    except (OSError, ValueError, AttributeError):
        return None
    return st.st_size if stat.S_ISREG(st.st_mode) else None


def make_tracker(jobs: list[Any], *, quiet: bool) -> Tracker:
    """A live line when stderr is a terminal and not ``--quiet``; else only counters.
    The run's byte total is summed here, before any file is opened."""
    sizes = [_input_size(job.input) for job in jobs]
    total = None if any(size is None for size in sizes) else sum(size or 0 for size in sizes)
    if quiet or not sys.stderr.isatty() or os.environ.get("TERM") == "dumb":
        return Tracker(len(jobs), total)
    return _LineTracker(len(jobs), total, sys.stderr)
