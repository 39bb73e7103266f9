"""Files repaired as tasks on a Dask cluster: ``chatnorm repair --engine dask`` and
``normalizer.distributed.dask.repair_files``. Imports dask only when run.

One task per file -- or per run of consecutive small files (:func:`chunks`: up to
:data:`CHUNK_FILES` files, about :data:`CHUNK_BYTES` of input), since a task costs the
scheduler a round trip or two -- running the per-file pipe of one job
(``repair.repair_file``) on each, so each output is byte for byte what ``chatnorm repair``
writes; the results are gathered in the jobs' order. The paths must mean the same on the workers as here (a shared file system).

What can go wrong, and what is left:

* **A worker dies mid-file** (killed, out of memory, its machine gone). (A task of several
  files that fails is split: each of its files goes again as a task of its own; a file whose
  task died beside others goes once more with nothing else in flight, since a worker's death
  fails every task assigned to it.) Its output was a
  temporary file, never the destination. The scheduler runs the task again elsewhere (up to
  ``distributed.scheduler.allowed-failures`` times); the new attempt first removes the
  temporary files of the run's earlier attempts at that output (:func:`outputs.remove_run_temps`:
  the run's files carry its tag, because a pid means nothing on another host). A file
  whose attempts all die comes back as a failed result (``KilledWorker``), and its
  temporary files are removed here: never silently missing.
* **This whole run killed** (``kill -9``, the machine gone): its temporary files carry their
  host and worker pid too (``outputs.temp_prefix``, the one naming of every run), so the next
  run's tasks on that host remove those whose worker is dead (``outputs.remove_stale_temps``),
  never a live run's, another host's, or a file not named like ours.
* **^C or SIGTERM here.** No new file is sent; every worker is told to stop this run's
  tasks (``Client.run``), which stop at their next flush point and remove their temporary
  file; whatever is still unfinished after :data:`STOP_GRACE_SECONDS` is cancelled and its
  temporary files removed. Files already written stay whole.
* At most :data:`IN_FLIGHT_PER_WORKER` files per worker are submitted at a time, so the
  scheduler never holds the whole plan; the results are handed out in the plan's order as
  they come, at most ``order.REORDER_WINDOW`` (and the rest of a run) of them waiting for
  an earlier one (``order.InOrder``), so nothing here grows with the number of files.
"""

from __future__ import annotations

import collections
import os
import secrets
import threading
import time
from collections.abc import Iterator, Sequence
from typing import Any

from .outputs import remove_run_temps, temp_owner
from .plan import Job
from .order import InOrder
from .tracking import Tracker
from .repair import repair_file
from .results import FileResult, Settings
from .stop import STOP, Interrupted

__all__ = ["run_dask", "run_file_jobs", "iter_file_jobs", "file_task", "chunk_task", "chunks", "new_tag", "IN_FLIGHT_PER_WORKER",
           "CHUNK_FILES", "CHUNK_BYTES", "STOP_GRACE_SECONDS"]

#: Tasks submitted per worker thread at a time: enough that the round trips to the
#: scheduler (and the gathering of results, in batches) overlap the work.
IN_FLIGHT_PER_WORKER = 4
#: A task takes consecutive files up to this many, and up to about this much input
#: (:func:`chunks`); a bigger file is a task of its own.
CHUNK_FILES = 64
CHUNK_BYTES = 16 << 20
#: How long a stopped run waits for its running tasks to stop before cancelling them.
STOP_GRACE_SECONDS = 30.0
POLL_SECONDS = 0.2


def new_tag() -> str:
    """A run's tag: names its temporary files and its stop request on the workers."""
    return "r" + secrets.token_hex(5)


# -- on the worker ------------------------------------------------------------------------------

#: Runs told to stop (in each worker process: ``Client.run`` adds and removes them).
_STOPPED: set[str] = set()


def stop_run(tag: str) -> None:
    _STOPPED.add(tag)


def forget_run(tag: str) -> None:
    _STOPPED.discard(tag)


class _RunTracker(Tracker):
    """At every flush point of the pipe: stop if this run was told to."""

    def __init__(self, tag: str) -> None:
        super().__init__(1)
        self.tag = tag

    def advance(self, messages: int, nbytes: int) -> None:
        if self.tag in _STOPPED:
            raise Interrupted(0)


def file_task(job: Job, settings: Settings, tag: str) -> FileResult | None:
    """One file, on a worker; None when the run was stopped (nothing of it is left)."""
    with temp_owner(tag):
        if job.output != "-":
            remove_run_temps(job.output, tag)  # an earlier attempt's, whose worker died
        if tag in _STOPPED:
            return None
        try:
            return repair_file(job, settings, _RunTracker(tag))
        except Interrupted:
            return None


def chunk_task(jobs: list[Job], settings: Settings, tag: str) -> list[FileResult | None]:
    """Several files, one after the other, on a worker (see :func:`chunks`)."""
    return [file_task(job, settings, tag) for job in jobs]


def chunks(jobs: Sequence[Job], *, max_files: int, max_bytes: int) -> Iterator[list[int]]:
    """The jobs' indices cut into runs of consecutive files of at most ``max_files`` files
    and about ``max_bytes`` of input (a bigger file is a run of its own): a task per small
    file would spend more on the scheduler's round trips than on the file. Made as they
    are taken (a ``stat`` a file), not for the whole plan up front."""
    run: list[int] = []
    size = 0
    for i, job in enumerate(jobs):
        try:
            n = os.stat(job.input).st_size
        except OSError:
            n = 0  # the task will say why it cannot be read
        if run and (len(run) >= max_files or size + n > max_bytes):
            yield run
            run, size = [], 0
        run.append(i)
        size += n
    if run:
        yield run


# -- on the client ------------------------------------------------------------------------------


def run_dask(jobs: list[Job], settings: Settings, tracker: Tracker, n: int, scheduler: str | None) -> Iterator[FileResult]:
    """The command's ``--engine dask``: on the cluster at ``scheduler``, or on a
    ``LocalCluster`` of ``n`` single-threaded worker processes started (and stopped) here."""
    from distributed import Client, LocalCluster

    cluster: Any = None
    if scheduler is None:
        cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=":0")
        client = Client(cluster)
    else:
        client = Client(scheduler, timeout="30s")
    try:
        yield from iter_file_jobs(client, jobs, settings, tracker=tracker)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def run_file_jobs(client: Any, jobs: Sequence[Job], settings: Settings, *, tracker: Tracker | None = None,
                  stop: threading.Event = STOP, tag: str | None = None) -> list[FileResult]:
    """Every job as a task on ``client``'s cluster; the results in the jobs' order (a list:
    :func:`iter_file_jobs` hands them out as they come)."""
    return list(iter_file_jobs(client, jobs, settings, tracker=tracker, stop=stop, tag=tag))


def iter_file_jobs(client: Any, jobs: Sequence[Job], settings: Settings, *, tracker: Tracker | None = None,
                   stop: threading.Event = STOP, tag: str | None = None) -> Iterator[FileResult]:
    """Every job as a task on ``client``'s cluster; the results in the jobs' order, each as
    soon as it and every one before it are done.

    Raises:
        Interrupted: ``stop`` was set (every task of the run has stopped or was cancelled,
            and nothing half-written is left).
    """
    run = _Run(client, jobs, settings, tracker or Tracker(len(jobs)), tag or new_tag())
    try:
        while True:
            run.submit_more(stop)
            if not run.pending or stop.is_set():
                break
            if not run.wait():
                continue
            run.collect()
            if not stop.is_set():
                yield from run.order.take()
        if stop.is_set():
            _stop(client, run.pending, jobs, run.tag)
            raise Interrupted(0)
    except (KeyboardInterrupt, GeneratorExit):  # ^C in a program of the caller's (the command
        # sets ``stop``), or the caller stopped taking the results
        _stop(client, run.pending, jobs, run.tag)
        raise
    finally:
        for future in run.pending:
            future.release()


class _Run:
    """The client's side of one run (:func:`iter_file_jobs`): the tasks in flight, the runs
    of files still to send, and the results waiting for an earlier one."""

    def __init__(self, client: Any, jobs: Sequence[Job], settings: Settings, tracker: Tracker, tag: str) -> None:
        self.client, self.jobs, self.settings, self.tracker, self.tag = client, jobs, settings, tracker, tag
        threads = sum(client.nthreads().values()) or 1
        self.window = IN_FLIGHT_PER_WORKER * threads
        self.fresh = chunks(jobs, max_files=CHUNK_FILES, max_bytes=CHUNK_BYTES)
        self.upcoming: list[int] | None = next(self.fresh, None)
        self.order = InOrder()
        self.pending: dict[Any, list[int]] = {}
        self.queue: collections.deque[list[int]] = collections.deque()  # split runs, before the fresh ones
        # A file whose workers died while other tasks ran beside it may only have shared a worker
        # with the file at fault (a worker's death fails every task assigned to it): it goes once
        # more with nothing else in flight, and only a file that dies alone is reported failed.
        self.alone: collections.deque[int] = collections.deque()
        self.solo: set[Any] = set()
        self.submitted = 0

    def submit(self, run: list[int]) -> Any:
        # The settings go with each task (~1 KB): scattered once, they would be lost with
        # the workers holding them, and every task after with them.
        self.submitted += 1  # a key is never reused: a split task's files get new ones
        future = self.client.submit(chunk_task, [self.jobs[i] for i in run], self.settings, self.tag,
                                    key=f"chatnorm-{self.tag}-{self.submitted}", pure=False)
        self.pending[future] = run
        return future

    def submit_more(self, stop: threading.Event) -> None:
        """Fill the window: the split runs first, then the fresh ones (within the reorder
        window), or a file to try alone once nothing else is in flight."""
        while not stop.is_set() and len(self.pending) < self.window and not self.solo:
            if self.queue:
                self.submit(self.queue.popleft())  # (earlier files than any fresh run: always room)
            elif self.upcoming is not None and self.order.room(self.upcoming[0]):  # (a run may reach past it)
                self.submit(self.upcoming)
                self.upcoming = next(self.fresh, None)
            else:
                break
        if not stop.is_set() and not self.pending and not self.queue and self.alone:
            # (before the fresh runs left, if any: the window stops them behind it)
            self.solo.add(self.submit([self.alone.popleft()]))

    def wait(self) -> bool:
        """Wait for a task to finish (False: none did in time)."""
        from distributed import wait

        try:
            wait(list(self.pending), timeout=POLL_SECONDS, return_when="FIRST_COMPLETED")
        except TimeoutError:
            return False
        return True

    def collect(self) -> None:
        """The finished tasks' results, put in order; a failed task of several files split."""
        pending, solo = self.pending, self.solo
        done = [f for f in pending if f.done()]
        # One round trip for all the finished ones: result() per future costs one each.
        finished = [f for f in done if f.status == "finished"]
        gathered = dict(zip(finished, self.client.gather(finished, errors="skip"))) if finished else {}
        for future in done:
            run = pending.pop(future)
            if future not in gathered and len(run) > 1:
                # Its workers died (or it failed) with several files in it: each file
                # again on its own, so only the one at fault is reported failed.
                self.queue.extendleft([i] for i in reversed(run))
                continue
            if future not in gathered and future not in solo and _killed(future):
                self.alone.append(run[0])
                continue
            solo.discard(future)
            outcomes = gathered.get(future) or [_outcome(future, self.jobs[i], self.tag) for i in run]
            for i, result in zip(run, outcomes):
                self.order.put(i, result)
                if result is not None:
                    self.tracker.advance(result.messages_in, 0)
                self.tracker.file_done()


def _killed(future: Any) -> bool:
    from distributed import KilledWorker

    return future.status == "error" and isinstance(future.exception(), KilledWorker)


def _outcome(future: Any, job: Job, tag: str) -> FileResult | None:
    """What became of a job whose task did not finish (or whose result could not be had)."""
    from distributed import KilledWorker

    exc = future.exception() if future.status == "error" else None
    if job.output != "-":
        remove_run_temps(job.output, tag)
    kept = f"{job.input} is unchanged" if job.in_place else "its output was not written"
    if isinstance(exc, KilledWorker):
        why = ("the Dask workers repairing it died each time it was tried (killed, or out of memory; "
               "see distributed.scheduler.allowed-failures)")
        todo = "Repair it alone (chatnorm repair FILE) to see why"
    else:
        why = f"its Dask task failed: {type(exc).__name__ if exc else future.status}: {exc}"
        todo = "Check that the workers run this version of chat-normalizer and see the same files"
    return FileResult(job.name, job.output, error=f"{job.name}: {why}; {kept}. {todo}")


def _stop(client: Any, pending: dict[Any, list[int]], jobs: Sequence[Job], tag: str) -> None:
    """Tell the workers to stop this run, give its tasks time to, cancel the rest, and
    remove what the unfinished ones may have left."""
    from distributed import wait

    try:
        client.run(stop_run, tag, on_error="ignore")
        if pending:
            try:
                wait(list(pending), timeout=STOP_GRACE_SECONDS)
            except TimeoutError:
                pass
        client.cancel([f for f in pending if not f.done()], force=True)
        deadline = time.monotonic() + 5
        while any(not f.done() for f in pending) and time.monotonic() < deadline:
            time.sleep(0.05)
        client.run(forget_run, tag, on_error="ignore")
    finally:
        for run in pending.values():
            for i in run:  # a file finished meanwhile is whole: its temp is gone, nothing matches
                if jobs[i].output != "-":
                    remove_run_temps(jobs[i].output, tag)
