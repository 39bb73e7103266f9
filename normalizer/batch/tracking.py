"""Progress *tracking*: the counters a run bumps (:class:`Tracker`), what it has written
(:data:`WRITTEN`), and the live displays to clear before anything else reaches the terminal.

Workers never draw. They bump plain counters on a :class:`Tracker` -- bytes and messages
each time the reader reads (``streams.Input``), so the count moves whatever stdout is (a
file, a pipe, the terminal, /dev/null). Drawing them is the command line's
(``cli._progress``): a display registers itself in :data:`LIVE` while it is shown, so that
whatever this process writes to the terminal can erase it first (:func:`clear`).
"""

from __future__ import annotations

import threading
from typing import Protocol

__all__ = ["Tracker", "WRITTEN", "LIVE", "clear"]


class Tracker:
    """Counters the workers bump; the null display (stderr not a terminal, ``--quiet``)."""

    def __init__(self, files_total: int, bytes_total: int | None = None) -> None:
        self.files_total = files_total
        self.files_done = 0
        self.messages = 0
        self.bytes_read = 0
        #: The run's input size, or None when part of it is unknown (a pipe on stdin).
        self.bytes_total = bytes_total
        self._lock = threading.Lock()

    def advance(self, messages: int, nbytes: int) -> None:
        """Called as the input is read, with the increments since the last call."""
        self.messages += messages
        self.bytes_read += nbytes

    def file_done(self) -> None:
        with self._lock:
            self.files_done += 1

    def __enter__(self) -> Tracker:
        return self

    def __exit__(self, *exc: object) -> None:
        pass


class Display(Protocol):
    """A live display of a tracker (the progress line)."""

    def clear(self) -> None: ...


# The live line, if one is shown (one at a time: the CLI runs one command).
LIVE: list[Display] = []


def clear() -> None:
    """Erase the progress line, if one is shown, before something else is written to the
    terminal; it is drawn again at the next tick. Safe to call from any thread."""
    for live in LIVE:
        live.clear()


class _Written:
    """What this run has written so far: what an interrupted run says it leaves behind."""

    def __init__(self) -> None:
        self.stdout_lines = 0  # lines written to stdout (the repaired output, a diff)
        self.files = 0  # output files completed (renamed into place)


WRITTEN = _Written()
