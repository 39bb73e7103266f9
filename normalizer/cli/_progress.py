"""The progress display: rich on stderr when stderr is a terminal, nothing otherwise.

Workers never touch rich. They bump plain counters on a :class:`Tracker` (ints, under the
GIL; a torn read only makes one refresh a little stale) at their flush points, every few
hundred messages; rich's own refresh thread redraws ten times a second from those counters.
So the per-message path pays nothing for the display, and rich is imported only when a
display is shown (it costs ~40 ms of start-up).
"""

from __future__ import annotations

import sys
import threading
import time
from typing import Any

__all__ = ["Tracker", "make_tracker"]


class Tracker:
    """Counters the workers bump; the null display (piped stderr, ``--quiet``)."""

    def __init__(self, files_total: int) -> None:
        self.files_total = files_total
        self.files_done = 0
        self.messages = 0
        self.bytes_read = 0
        self.bytes_total = 0
        self._lock = threading.Lock()

    def add_bytes_total(self, n: int) -> None:
        with self._lock:
            self.bytes_total += n

    def advance(self, messages: int, nbytes: int) -> None:
        """Called at flush points with the increments since the last call."""
        self.messages += messages
        self.bytes_read += nbytes

    def file_done(self) -> None:
        with self._lock:
            self.files_done += 1

    def __enter__(self) -> Tracker:
        return self

    def __exit__(self, *exc: object) -> None:
        pass


class _RichTracker(Tracker):
    """The same counters, drawn by rich's refresh thread."""

    def __init__(self, files_total: int) -> None:
        super().__init__(files_total)
        from rich.console import Console
        from rich.text import Text
        from rich.progress import BarColumn, DownloadColumn, Progress, ProgressColumn, TimeElapsedColumn

        tracker = self

        class _Rate(ProgressColumn):
            def render(self, task: Any) -> Any:
                elapsed = max(time.perf_counter() - tracker._start, 1e-9)
                return Text(f"{tracker.messages:,} msgs {tracker.messages / elapsed:,.0f}/s", style="cyan", no_wrap=True)

        class _Files(ProgressColumn):
            def render(self, task: Any) -> Any:
                return Text(f"files {tracker.files_done}/{tracker.files_total}")

        self._start = time.perf_counter()
        self._progress = Progress(
            BarColumn(bar_width=12),
            DownloadColumn(),
            _Rate(),
            _Files(),
            TimeElapsedColumn(),
            console=Console(file=sys.stderr),
            transient=True,  # the summary line replaces it at the end
            refresh_per_second=8,
            get_time=time.perf_counter,
        )
        self._task = self._progress.add_task("repair", total=None)

        # rich pulls values through the task; a getter thread pushes our counters into it.
        self._stop = threading.Event()

    def _pump(self) -> None:
        while not self._stop.wait(0.125):
            self._progress.update(self._task, completed=self.bytes_read, total=self.bytes_total or None)

    def __enter__(self) -> Tracker:
        self._progress.start()
        self._thread = threading.Thread(target=self._pump, name="normalizer-progress", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._progress.stop()


def make_tracker(files_total: int, *, quiet: bool) -> Tracker:
    """A live display when stderr is a terminal and not ``--quiet``; else only counters."""
    if quiet or not sys.stderr.isatty():
        return Tracker(files_total)
    return _RichTracker(files_total)
