"""Dask: repair a list of files, or a bag of lines, on a ``LocalCluster`` or an existing
cluster (``pip install 'chat-normalizer[dask]'``).

Two layouts, two functions:

* **Files** (sessions, one conversation per file; or any files): :func:`repair_files` runs
  one task per file -- the command line's own pipe, streamed, written atomically -- and
  returns the results in the inputs' order; ``report=`` merges them into one report. The
  same as ``chatnorm repair --engine dask [--scheduler ADDR] DIR -o OUT``. A worker that
  dies mid-file leaves no partial output; the file is tried again, and reported failed
  when every attempt dies (see ``normalizer.batch.dask_engine``).
* **Lines** (fine-tuning JSONL and the like, one conversation per line):
  :func:`repair_bag` maps :func:`normalizer.distributed.repair_lines` over each partition
  of a bag of lines (``dask.bag.read_text(paths, blocksize=None)``: one partition per file,
  lines in order) and returns the bag of repaired lines, partitions and order kept;
  ``to_textfiles(..., last_endline=True)`` writes what ``chatnorm repair`` writes. Each
  partition leaves its result in ``records_dir``, read back by :func:`bag_results`::

      lines = repair_bag(db.read_text(paths, blocksize=None), profile="mistral", records_dir=shared)
      lines.to_textfiles(outputs, last_endline=True)
      write_report("report.json", bag_results(shared))

  (Not a second delayed output per partition: Dask's bag optimiser would compute each
  partition once per output.) A partition is a list in memory (Dask's), and so is its
  output: split huge files with ``blocksize=`` -- only for one conversation per line, never
  for a session file, whose lines must stay in one partition.

Paths must mean the same on the workers as here (a shared file system), and the workers
need chat-normalizer installed (the tasks are its functions, by reference).
"""

from __future__ import annotations

import dataclasses
import os
import threading
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import orjson

from ..batch.dask_engine import iter_file_jobs
from ..batch.outputs import open_output
from ..batch.plan import Job
from ..batch.report import Totals
from ..batch.results import FileResult, Settings
from ..profiles._profiles import Profile
from ._batch import by_keep_results, repair_lines, settings_for, stream_files

__all__ = ["repair_files", "repair_bag", "bag_results", "repair_partition"]


@by_keep_results
def repair_files(
    srcs: Sequence[str | os.PathLike[str]],
    dsts: Sequence[str | os.PathLike[str]],
    *,
    client: Any = None,
    scheduler: str | None = None,
    n_workers: int = 2,
    report: str | os.PathLike[str] | None = None,
    keep_results: bool = True,
    profile: str | Profile = "default",
    fmt: str = "auto",
    to: str = "auto",
    on_invalid: str = "error",
    **options: Any,
) -> list[FileResult] | Totals:
    """Repair ``srcs[i]`` into ``dsts[i]``, one Dask task per file; the results in order.

    Args:
        client: a ``distributed.Client`` to run on; else ``scheduler`` (an address such as
            ``tcp://host:8786``); else a ``LocalCluster`` of ``n_workers`` single-threaded
            worker processes, started and closed here.
        report: write the merged report there (every file's counts and records, the totals;
            the records are spooled in a hidden folder beside it, which the workers must see),
            each file's part as its result comes.
        keep_results: return one :class:`FileResult` per input; False: return the
            :class:`Totals` only, so that what the client holds does not grow with the
            number of files (the report still has every file).
        profile, fmt, to, on_invalid, options: as for :func:`normalizer.distributed.repair_file`.

    Returns:
        One :class:`FileResult` per input; a failed file has ``error`` set (and no output).
        ``^C`` stops the run's tasks (nothing half-written is left) and re-raises.
    """
    return stream_files(srcs, dsts, report, lambda jobs, settings: _run(jobs, settings, client, scheduler, n_workers),
                        keep_results, dict(profile=profile, fmt=fmt, to=to, on_invalid=on_invalid, **options))


def _run(jobs: Sequence[Job], settings: Settings, client: Any, scheduler: str | None,
         n_workers: int) -> Iterator[FileResult]:
    """The results as they come, in the jobs' order (``iter_file_jobs``)."""
    if client is not None:
        yield from iter_file_jobs(client, jobs, settings, stop=threading.Event())
        return
    from distributed import Client, LocalCluster

    cluster: Any = None
    if scheduler is None:
        cluster = LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True, dashboard_address=":0")
    own = Client(cluster if cluster is not None else scheduler)
    try:
        yield from iter_file_jobs(own, jobs, settings, stop=threading.Event())
    finally:
        own.close()
        if cluster is not None:
            cluster.close()


def repair_partition(lines: Iterable[str | bytes], settings: Settings, name: str, index: int) -> list[str]:
    """One partition's lines repaired (the task :func:`repair_bag` maps). With a records
    folder, its result is left there as ``{name}-{index:06}.result.json`` (and its records
    as ``.records``), each written whole under a name of its own: a partition computed
    twice (a retry, a graph computed twice) leaves the same two files, not two results."""
    label = f"{name} {index}"
    repaired = repair_lines(lines, name=label, settings=settings)
    out, result = repaired.lines, repaired.result
    if settings.spool_dir is not None:
        base = os.path.join(settings.spool_dir, f"{name}-{index:06}")
        if result.spool is not None:
            os.replace(result.spool, base + ".records")
            result.spool = base + ".records"
        with open_output(base + ".result.json") as f:
            f.write(orjson.dumps(dataclasses.asdict(result)))
            f.commit()
    return out


def repair_bag(
    bag: Any,
    *,
    profile: str | Profile = "default",
    fmt: str = "auto",
    to: str = "auto",
    on_invalid: str = "error",
    records_dir: str | None = None,
    name: str = "partition",
    **options: Any,
) -> Any:
    """A bag of JSON lines (``str``) repaired partition by partition; returns the bag of
    repaired lines (without ``\n``: write it with ``to_textfiles(..., last_endline=True)``),
    partitions and order kept.

    ``records_dir``: a folder the workers can write; each partition leaves its result
    there (counts, and its report's records), which :func:`bag_results` reads back, in
    partition order, once the bag is computed. ``name`` and the partition's index name it
    in errors and in the report.
    """
    import dask
    import dask.bag

    settings = settings_for(profile=profile, fmt=fmt, to=to, on_invalid=on_invalid, records_dir=records_dir,
                            **options)
    if settings.to not in ("auto", "jsonl", "finetune"):
        repair_lines((), settings=settings)  # raises the UsageError that says why
    parts = bag.to_delayed()
    task = dask.delayed(repair_partition, pure=True)
    return dask.bag.from_delayed([task(part, settings, name, i) for i, part in enumerate(parts)])


def bag_results(records_dir: str | os.PathLike[str], name: str = "partition") -> list[FileResult]:
    """The results :func:`repair_bag` left in ``records_dir``, in partition order (give them
    to :func:`normalizer.distributed.write_report`)."""
    folder = os.fspath(records_dir)
    found = sorted(n for n in os.listdir(folder) if n.startswith(f"{name}-") and n.endswith(".result.json"))
    results = []
    for entry in found:
        with open(os.path.join(folder, entry), "rb") as f:
            results.append(FileResult(**orjson.loads(f.read())))
    return results
