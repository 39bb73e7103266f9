"""Many files at once: ``--jobs N`` in a process pool, or ``--engine dask`` on a cluster.

Both run the very per-file pipe of one job (``repair.repair_file``) on each file, so each
output is byte for byte what ``--jobs 1`` writes, and gather the results in the inputs'
order (the summary and ``--report`` list files as the plan does).

The process pool (:func:`run_pool`):

* ``spawn`` workers, at most ``N``: fresh interpreters that import the pipe once
  (~0.4 s each, in parallel) and then take file after file.
* At most ``2 N`` files in flight (:data:`IN_FLIGHT_PER_WORKER`): the pool's queue never
  holds the whole plan.
* Results are handed out in the plan's order as they come (``order.InOrder``), so the
  command prints and reports each file and forgets it: a file finished before an earlier
  one waits, at most ``order.REORDER_WINDOW`` of them, and past that no new file starts until
  the earliest is done. What the run holds does not grow with the number of files.
* Stopping: ``^C`` or SIGTERM here sets a shared event; every worker sees it at its next
  flush point (every ``FLUSH_BYTES`` of output), stops, and removes its temporary output, as
  one job does. A ``^C`` typed at the terminal reaches the workers too (one process group):
  they ignore it (started with it blocked, so also while they import: no traceback), and
  the command stops them. Files not started are not started.
* A worker that dies (``kill -9``, the OOM killer) breaks the pool: the files it and the
  others had in flight are given to a new pool once more; a file in flight at a second
  breakage is reported failed (never silently missing), and the dead workers' temporary
  files are removed (their pids are gone).
"""

from __future__ import annotations

import os
import signal
from collections import deque
from collections.abc import Generator, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from .outputs import remove_stale_temps
from .plan import Job
from .order import InOrder
from .tracking import Tracker
from .repair import repair_file
from .results import FileResult, Settings
from .stop import STOP, Interrupted

if TYPE_CHECKING:
    from concurrent.futures import Future

__all__ = ["run_jobs", "run_pool", "IN_FLIGHT_PER_WORKER", "POLL_SECONDS"]

#: Files handed to the pool per worker at a time: enough to keep each busy, bounded.
IN_FLIGHT_PER_WORKER = 2
#: How often the waiting loop looks at the stop flag.
POLL_SECONDS = 0.2
#: A file in flight when this many pools broke is reported failed.
_MAX_BREAKS = 2

def run_jobs(jobs: list[Job], settings: Settings, tracker: Tracker, n: int, *, engine: str = "local",
             scheduler: str | None = None) -> Iterator[FileResult]:
    """Repair every job, ``n`` at a time; the results come in the jobs' order, each as soon
    as it and every one before it are done.

    ``engine="dask"``: as tasks on a Dask cluster (``dask_engine.run_dask``: a LocalCluster of
    ``n`` workers, or the one at ``scheduler``).

    One job, or ``n == 1``: a plain loop in this process (nothing to start, and a signal
    interrupts a blocked read of stdin at once). Otherwise a pool of ``n`` worker processes
    (:func:`run_pool`): the work is CPU-bound Python, which threads would run one at a time
    under the GIL; each file's output is exactly what one job writes (each file is repaired
    by its own pipe, start to end).
    """
    if engine == "dask":
        from .dask_engine import run_dask

        return run_dask(jobs, settings, tracker, n, scheduler)
    if n <= 1 or len(jobs) <= 1 or any(job.output == "-" for job in jobs):
        # stdout is one stream: files written to it go one after the other.
        return (repair_file(job, settings, tracker) for job in jobs)
    return run_pool(jobs, settings, tracker, n)


# -- in the worker ------------------------------------------------------------------------------

_STOP_EVENT: list[Any] = [None]


class _WorkerTracker(Tracker):
    """A worker's counters: nobody draws them; ``advance`` (at every flush point) turns the
    pool's stop event into this process's ``STOP``, which the pipe honours right after."""

    def advance(self, messages: int, nbytes: int) -> None:
        event = _STOP_EVENT[0]
        if event is not None and event.is_set():
            STOP.set()


def _note_signal(signum: int, frame: Any) -> None:
    STOP.set()


def _init_worker(event: Any) -> None:
    _STOP_EVENT[0] = event
    # SIGINT is ignored: a ^C typed at the terminal reaches every process of the group, and
    # the command, which gets it too, sets the pool's stop event (seen at the next flush
    # point, as a worker's own STOP). The worker was started with both signals blocked
    # (_submit): one that came while it started up (its imports take ~0.4 s) was held, and is
    # now dropped (SIGINT) or noted (SIGTERM), never a KeyboardInterrupt traceback.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _note_signal)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _HELD)


#: The signals a worker is started with blocked (see _submit and _init_worker).
_HELD = {signal.SIGINT, signal.SIGTERM}


def _work(job: Job, settings: Settings) -> FileResult | None:
    """One file in a worker; None when it was stopped (its temporary file is gone)."""
    if STOP.is_set() or (_STOP_EVENT[0] is not None and _STOP_EVENT[0].is_set()):
        return None
    try:
        return repair_file(job, settings, _WorkerTracker(1))
    except Interrupted:
        return None


# -- in the command -----------------------------------------------------------------------------


def _context() -> Any:
    # spawn: each worker is a fresh interpreter, a child of this process. Not fork (it would
    # copy this process's threads -- the progress display -- mid-lock), nor forkserver (the
    # server dies of a SIGTERM sent to the process group, and with it every worker's
    # sentinel: the pool would think them all dead while they still run).
    import multiprocessing  # here, not at the top: a run of one file starts no process (start-up)

    return multiprocessing.get_context("spawn")


def run_pool(jobs: Sequence[Job], settings: Settings, tracker: Tracker, n: int) -> Iterator[FileResult]:
    """Repair every job in up to ``n`` worker processes; the results in the jobs' order.

    Raises:
        Interrupted: a signal stopped the run (every worker has stopped and cleaned up).
    """
    ctx = _context()
    stop = ctx.Event()
    order = InOrder()
    fresh = _Fresh(len(jobs))
    breaks: dict[int, int] = {}  # pools broken under a file in flight
    again: list[int] = []
    while not STOP.is_set():
        again = yield from _one_pool(ctx, stop, jobs, again, fresh, settings, tracker, n, order, breaks)
        if not again and fresh.left() == 0:
            break
    if STOP.is_set():
        raise Interrupted(0)


class _Fresh:
    """The jobs not started yet, by index: a counter, not a list of the plan."""

    __slots__ = ("next", "end")

    def __init__(self, end: int) -> None:
        self.next = 0
        self.end = end

    def left(self) -> int:
        return self.end - self.next


def _one_pool(ctx: Any, stop: Any, jobs: Sequence[Job], retry: list[int], fresh: _Fresh, settings: Settings,
              tracker: Tracker, n: int, order: InOrder,
              breaks: dict[int, int]) -> Generator[FileResult, None, list[int]]:
    """Run ``retry`` (job indices, in order), then the fresh jobs, in one pool, yielding
    the results in order; returns the jobs to run again in a new pool (in flight, or not
    yet submitted, when the pool broke)."""
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
    from concurrent.futures.process import BrokenProcessPool

    todo = deque(retry)
    pending: dict[Future[FileResult | None], int] = {}
    again: list[int] = []
    hit: list[int] = []  # in flight when the pool broke
    broken = False
    pool = ProcessPoolExecutor(max_workers=min(n, len(todo) + fresh.left()), mp_context=ctx,
                               initializer=_init_worker, initargs=(stop,))
    try:
        while True:
            while not broken and not STOP.is_set() and len(pending) < IN_FLIGHT_PER_WORKER * n:
                i = todo[0] if todo else fresh.next if fresh.left() else None
                if i is None or not order.room(i):
                    break
                if todo:
                    todo.popleft()
                else:
                    fresh.next += 1
                try:
                    pending[_submit(pool, jobs[i], settings)] = i
                except BrokenProcessPool:
                    broken = True
                    again.append(i)
            if not pending:
                break
            if STOP.is_set():
                stop.set()  # the workers stop at their next flush point
            done, _ = wait(pending, timeout=POLL_SECONDS, return_when=FIRST_COMPLETED)
            for future in done:
                i = pending.pop(future)
                try:
                    result = future.result()
                except BrokenProcessPool:
                    broken = True
                    hit.append(i)
                    breaks[i] = breaks.get(i, 0) + 1
                    if breaks[i] >= _MAX_BREAKS:
                        del breaks[i]
                        order.put(i, _died(jobs[i]))
                        tracker.file_done()
                    else:
                        again.append(i)
                    continue
                breaks.pop(i, None)
                order.put(i, result)
                if result is not None:
                    tracker.advance(result.messages_in, 0)
                    tracker.file_done()
            if not STOP.is_set():
                yield from order.take()
    finally:
        if STOP.is_set():
            stop.set()
        pool.shutdown(wait=True, cancel_futures=True)
    if broken:
        # The dead workers' temporary files: their pids are gone now.
        for folder in sorted({os.path.dirname(jobs[i].output) or "." for i in hit}):
            remove_stale_temps(folder, again=True)
        return sorted(again + list(todo))
    return []


def _submit(pool: Any, job: Job, settings: Settings) -> Future[FileResult | None]:
    """``pool.submit(_work, ...)`` with SIGINT and SIGTERM blocked in this thread meanwhile:
    the pool starts its workers in ``submit`` (spawn: fork and exec in this thread), and a new
    process inherits the signal mask, so a worker starts with both blocked until
    ``_init_worker`` has its handlers. Here a signal is held for the length of the call at
    most, then handled (as it is delivered on unblocking, or at once by another thread)."""
    if not hasattr(signal, "pthread_sigmask"):  # pragma: no cover - Windows: no signal masks
        return pool.submit(_work, job, settings)  # type: ignore[no-any-return]
    before = signal.pthread_sigmask(signal.SIG_BLOCK, _HELD)
    try:
        return pool.submit(_work, job, settings)  # type: ignore[no-any-return]
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


def _died(job: Job) -> FileResult:
    kept = f"{job.input} is unchanged" if job.in_place else "its output was not written"
    return FileResult(job.name, job.output, error=(
        f"{job.name}: the worker process repairing it died (killed, or out of memory) twice; {kept}. "
        "Repair it alone (chatnorm repair FILE) to see why, or with fewer --jobs"))

