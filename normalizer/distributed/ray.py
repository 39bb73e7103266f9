"""Ray Data: repair files, or a dataset of lines, on a Ray cluster
(``pip install 'chat-normalizer[ray]'``).

* **Files** (sessions, or any files): :func:`repair_files` runs one Ray task per file (or
  per run of consecutive small files, as the Dask runner does) -- the command line's own pipe, streamed, written atomically, byte for byte what ``chatnorm
  repair`` writes -- and returns the results in the inputs' order (``report=`` merges them).
  A task whose worker dies is retried by Ray; the retry first removes the run's earlier
  temporary file for that output (they carry the run's tag), and a file that keeps
  failing comes back as a failed result.
* **Lines** (fine-tuning JSONL and the like, one conversation per line): :func:`repair_text`
  maps :func:`normalizer.distributed.repair_lines` over the batches of a dataset read with
  ``ray.data.read_text`` (column ``text``, one row per line) and returns a dataset of
  repaired lines (column ``text``), one per conversation. Rows keep their order when
  ``preserve_order=True`` (Ray's default is not to).

Pitfalls this module avoids, and you should too around it:

* ``ray.data.read_json`` is lossy for chat data: Arrow's schema unification adds every key
  any message has to every message, as ``null`` (``"tool_calls": null`` on a user
  message). Read with ``read_text`` (or ``read_binary_files``): the lines stay raw text
  until the normalizer parses them.
* ``read_text`` makes one row per *line*: a session file (one message per line) would be
  cut across batches. :func:`repair_text` refuses a batch that is not one conversation per
  line; give session files to :func:`repair_files`.
* An actor pool with one actor per CPU can starve the read and write tasks of a small
  cluster (it hung on 2 CPUs): these are plain function tasks.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterator, Sequence
from typing import Any

import orjson

from ..batch.dask_engine import CHUNK_BYTES, CHUNK_FILES, chunk_task, chunks, new_tag
from ..batch.order import InOrder
from ..batch.outputs import remove_run_temps
from ..batch.plan import Job
from ..batch.report import Totals
from ..batch.results import FileResult, Settings
from .._errors import UsageError
from ..profiles._profiles import Profile
from ._batch import by_keep_results, repair_lines, settings_for, stream_files

__all__ = ["repair_files", "repair_text"]


def _run_row(row: dict[str, Any], *, settings: Settings, tag: str) -> dict[str, Any]:
    """One task: a run of consecutive files (``chunks``), each through the CLI's pipe."""
    jobs = [Job(i, i, o, in_place=p) for i, o, p in orjson.loads(row["jobs"])]
    results = chunk_task(jobs, settings, tag)
    return {"first": row["first"], "results": orjson.dumps([dataclasses.asdict(r) for r in results if r is not None]).decode()}


@by_keep_results
def repair_files(
    srcs: Sequence[str | os.PathLike[str]],
    dsts: Sequence[str | os.PathLike[str]],
    *,
    report: str | os.PathLike[str] | None = None,
    keep_results: bool = True,
    profile: str | Profile = "default",
    fmt: str = "auto",
    to: str = "auto",
    on_invalid: str = "error",
    **options: Any,
) -> list[FileResult] | Totals:
    """Repair ``srcs[i]`` into ``dsts[i]``, one Ray task per file, on the Ray cluster this
    process is connected to (``ray.init()`` first; else Ray starts a local one). Arguments
    and results as :func:`normalizer.distributed.dask.repair_files` (``keep_results=False``:
    the totals only; the rows Ray is given are still the plan, a few hundred bytes a file)."""
    return stream_files(srcs, dsts, report, _run, keep_results,
                        dict(profile=profile, fmt=fmt, to=to, on_invalid=on_invalid, **options))


def _run(jobs: Sequence[Job], settings: Settings) -> Iterator[FileResult]:
    """The results in the jobs' order, each handed out as soon as it and the ones before
    it are done (``batch.order.InOrder``), not gathered into a list."""
    import ray.data

    tag = new_tag()
    runs = chunks(jobs, max_files=CHUNK_FILES, max_bytes=CHUNK_BYTES)
    rows = [{"first": run[0], "jobs": orjson.dumps([(jobs[i].input, jobs[i].output, jobs[i].in_place)
                                                    for i in run]).decode()} for run in runs]
    ds = ray.data.from_items(rows, override_num_blocks=max(1, len(rows)))
    order = InOrder()
    failure: Exception | None = None
    try:
        for row in ds.map(_run_row, fn_kwargs={"settings": settings, "tag": tag}).iter_rows():
            for k, data in enumerate(orjson.loads(row["results"])):
                order.put(row["first"] + k, FileResult(**data))
            yield from order.take()
    except Exception as exc:  # a task that kept failing fails the whole Dataset
        failure = exc
    for i in range(order.next, len(jobs)):
        if order.has(i):
            continue
        if failure is None:
            order.put(i, None)  # (no result came for it: as before, none is given)
            continue
        job = jobs[i]
        remove_run_temps(job.output, tag)
        order.put(i, FileResult(job.name, job.output, error=(
            f"{job.name}: the Ray run failed before this file was done ({type(failure).__name__}: "
            f"{str(failure).splitlines()[0] if str(failure) else ''}); its output was not written. "
            "Run again: the files that are done are whole")))
        yield from order.take()
    yield from order.take()


def _text_batch(batch: Any, *, settings: Settings) -> Any:
    import pyarrow as pa

    repaired = repair_lines(batch.column("text").to_pylist(), name="a batch of rows", settings=settings)
    lines, result = repaired.lines, repaired.result
    if result.format is not None and result.format not in ("finetune", "sharegpt"):
        raise UsageError(
            f"repair_text repairs one conversation per row, and these rows read as {result.format}, "
            "one conversation for the whole batch: a session file's lines must not be cut into rows. "
            "Repair session files with normalizer.distributed.ray.repair_files")
    return pa.table({"text": pa.array(lines, type=pa.string())})


def repair_text(
    ds: Any,
    *,
    profile: str | Profile = "default",
    fmt: str = "auto",
    to: str = "auto",
    on_invalid: str = "error",
    batch_size: int = 1024,
    preserve_order: bool = False,
    **options: Any,
) -> Any:
    """A dataset of JSON lines (column ``text``: ``ray.data.read_text``), one conversation
    per line, repaired batch by batch; returns a dataset with column ``text``, the repaired
    lines, one per conversation (what ``chatnorm repair`` writes for those lines).

    ``preserve_order=True`` keeps the rows in the input's order (Ray's
    ``execution_options.preserve_order``, on this dataset's context; slower). A batch
    holds ``batch_size`` lines in and out. An invalid line fails the run (its error names
    the line within its batch), unless ``on_invalid="skip"``.
    """
    settings = settings_for(profile=profile, fmt=fmt, to=to, on_invalid=on_invalid, **options)
    if settings.to not in ("auto", "finetune"):
        raise UsageError(f"repair_text writes one conversation per row: to must be auto or finetune, not {to!r}")
    out = ds.map_batches(_text_batch, batch_format="pyarrow", batch_size=batch_size,
                         fn_kwargs={"settings": settings}, zero_copy_batch=True)
    out.context.execution_options.preserve_order = preserve_order
    return out
