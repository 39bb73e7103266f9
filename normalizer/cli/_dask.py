"""Files repaired as tasks on a Dask cluster: ``chatnorm repair --engine dask`` and
``normalizer.distributed.dask.repair_files``. Imports dask only when run.

One task per file, running the per-file pipe of one job (``_repair.repair_file``), so each
output is byte for byte what ``chatnorm repair`` writes; the results are gathered in the
jobs' order. The paths must mean the same on the workers as here (a shared file system).

What can go wrong, and what is left:

* **A worker dies mid-file** (killed, out of memory, its machine gone). Its output was a
  temporary file, never the destination. The scheduler runs the task again elsewhere (up to
  ``distributed.scheduler.allowed-failures`` times); the new attempt first removes the
  temporary files of the run's earlier attempts at that output (:func:`_files.remove_run_temps`:
  the run's files carry its tag, because a pid means nothing on another host). A file
  whose attempts all die comes back as a failed result (``KilledWorker``), and its
  temporary files are removed here: never silently missing.
* **^C or SIGTERM here.** No new file is sent; every worker is told to stop this run's
  tasks (``Client.run``), which stop at their next flush point and remove their temporary
  file; whatever is still unfinished after :data:`STOP_GRACE_SECONDS` is cancelled and its
  temporary files removed. Files already written stay whole.
* At most :data:`IN_FLIGHT_PER_WORKER` files per worker are submitted at a time, so the
  scheduler never holds the whole plan.
"""

from __future__ import annotations

import secrets
import threading
import time
from typing import Any

from ._files import Job, remove_run_temps, temp_owner
from ._progress import Tracker
from ._repair import STOP, FileResult, Interrupted, Settings, repair_file

__all__ = ["run_dask", "run_file_jobs", "new_tag", "IN_FLIGHT_PER_WORKER", "STOP_GRACE_SECONDS"]

#: Files submitted per worker thread at a time.
IN_FLIGHT_PER_WORKER = 4
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


# -- on the client ------------------------------------------------------------------------------


def run_dask(jobs: list[Job], settings: Settings, tracker: Tracker, n: int, scheduler: str | None) -> list[FileResult]:
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
        return run_file_jobs(client, jobs, settings, tracker=tracker)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def run_file_jobs(client: Any, jobs: list[Job], settings: Settings, *, tracker: Tracker | None = None,
                  stop: threading.Event = STOP, tag: str | None = None) -> list[FileResult]:
    """Every job as a task on ``client``'s cluster; the results in the jobs' order.

    Raises:
        Interrupted: ``stop`` was set (every task of the run has stopped or was cancelled,
            and nothing half-written is left).
    """
    from distributed import wait

    tag = tag or new_tag()
    tracker = tracker or Tracker(len(jobs))
    threads = sum(client.nthreads().values()) or 1
    window = IN_FLIGHT_PER_WORKER * threads
    results: list[FileResult | None] = [None] * len(jobs)
    pending: dict[Any, int] = {}
    queue = iter(range(len(jobs)))
    try:
        while True:
            while not stop.is_set() and len(pending) < window:
                i = next(queue, None)
                if i is None:
                    break
                # The settings go with each task (~1 KB): scattered once, they would be lost with
                # the workers holding them, and every task after with them.
                future = client.submit(file_task, jobs[i], settings, tag, key=f"chatnorm-{tag}-{i}", pure=False)
                pending[future] = i
            if not pending or stop.is_set():
                break
            try:
                wait(list(pending), timeout=POLL_SECONDS, return_when="FIRST_COMPLETED")
            except TimeoutError:
                continue
            for future in [f for f in pending if f.done()]:
                i = pending.pop(future)
                results[i] = _outcome(future, jobs[i], tag)
                result = results[i]
                if result is not None:
                    tracker.advance(result.messages_in, 0)
                tracker.file_done()
        if stop.is_set():
            _stop(client, pending, jobs, tag)
            raise Interrupted(0)
    except KeyboardInterrupt:  # ^C in a program of the caller's (the command sets ``stop``)
        _stop(client, pending, jobs, tag)
        raise
    finally:
        for future in pending:
            future.release()
    return [r for r in results if r is not None]


def _outcome(future: Any, job: Job, tag: str) -> FileResult | None:
    if future.status == "finished":
        result: FileResult | None = future.result()
        return result
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


def _stop(client: Any, pending: dict[Any, int], jobs: list[Job], tag: str) -> None:
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
        for future, i in pending.items():
            if not (future.status == "finished" and future.result() is not None) and jobs[i].output != "-":
                remove_run_temps(jobs[i].output, tag)
