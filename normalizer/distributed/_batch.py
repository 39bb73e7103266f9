"""The engine-neutral entry points: a batch of JSON lines, or one file, repaired by the very
pipe the command line runs (``batch.pump``: reader -> one core per conversation -> the
``--to`` encoder), so every engine writes what ``chatnorm repair`` writes, byte for byte.

Everything here is sync and plain data in and out (strings, paths, :class:`FileResult`):
it pickles, it needs no event loop, and it runs the same in a thread, a process pool, a Dask
task or a Ray task. Nothing here imports an engine.

Memory: :func:`repair_file` streams (the pipe's buffers: one read chunk, one conversation,
one output block of ``FLUSH_BYTES``); :func:`repair_lines` returns its batch's output as a
list, so it holds one batch in and one batch out -- give it a partition or a Ray batch, not a
corpus. Report records never stay in memory: they go to a file in ``records_dir`` (one per
call, made at the first record) or nowhere, and :func:`write_report` streams them into one
report, one file at a time. Many files (:func:`stream_files`, which :func:`repair_files` and
the Dask and Ray adapters share): each result is counted and written into the report as it
comes, and with ``keep_results=False`` not kept, so the driver holds nothing per file but the
caller's lists of paths (:class:`Plan` makes each job when it is asked for).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from dataclasses import dataclass
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Literal, Protocol, cast, overload

from ..batch.outputs import open_output
from ..batch.plan import Job
from ..batch.pump import pump
from ..batch.repair import repair_file as _repair_job
from ..batch.report import ReportStream, Totals, report_chunks, total_counts
from ..batch.results import FileResult, Settings
from ..batch.streams import Input, Output
from ..batch.tracking import Tracker
from .._errors import InputError, UsageError
from ..formats._writing import FLUSH_BYTES
from ..profiles._profiles import Profile, get_profile

__all__ = ["FileResult", "RepairedLines", "Totals", "Plan", "RepairFiles", "by_keep_results", "repair_lines", "repair_file", "repair_files", "stream_files", "settings_for",
           "total_counts", "report_chunks", "write_report"]

_LINE_OUTPUTS = ("auto", "jsonl", "finetune")


def settings_for(
    *,
    profile: str | Profile = "default",
    fmt: str = "auto",
    to: str = "auto",
    on_invalid: str = "error",
    records_dir: str | None = None,
    **options: Any,
) -> Settings:
    """What one run asks, checked once (a wrong option fails here, before any work): the
    profile resolved, the core's options validated by building one core with them."""
    from .. import Normalizer  # the top package is already imported: no new import edge

    if on_invalid not in ("error", "skip"):
        raise UsageError(f"on_invalid must be 'error' or 'skip', not {on_invalid!r}")
    resolved = get_profile(profile)
    Normalizer(resolved, **{**options, "on_invalid": on_invalid})
    return Settings(fmt=fmt, to=to, profile=resolved, on_invalid=on_invalid,
                    options={**options, "on_invalid": on_invalid}, spool_dir=records_dir)


class _Lines:
    """Lines (``str`` or ``bytes``, with or without their ``\\n``) as a binary stream for the
    readers: ``read(n)`` joins whole lines up to about ``n`` bytes. Not seekable (a Codex
    rollout read this way gets no first pass: give such files to :func:`repair_file`)."""

    def __init__(self, lines: Iterable[str | bytes]) -> None:
        self._lines: Iterator[str | bytes] = iter(lines)

    def read(self, n: int = -1) -> bytes:
        limit = n if n > 0 else FLUSH_BYTES
        parts: list[bytes] = []
        size = 0
        for line in self._lines:
            data = line.encode() if isinstance(line, str) else bytes(line)
            if not data.endswith(b"\n"):
                data += b"\n"
            parts.append(data)
            size += len(data)
            if size >= limit:
                break
        return b"".join(parts)

    def seekable(self) -> bool:
        return False

    def close(self) -> None:
        pass


class _Collect:
    """Where the pipe's output blocks go: kept, to be cut into lines at the end."""

    def __init__(self) -> None:
        self.blocks: list[bytes] = []

    def write(self, data: bytes | bytearray) -> int:
        self.blocks.append(bytes(data))
        return len(data)


@dataclass(frozen=True, slots=True)
class RepairedLines:
    """What :func:`repair_lines` returns: its batch's output lines and what was done."""

    lines: list[str]
    """The output lines, without ``\\n``: what ``chatnorm repair`` writes, cut into lines."""
    result: FileResult
    """What was done: ``counts``, ``messages_in``/``messages_out``, ``conversations`` and
    ``format``, as for a file."""


def repair_lines(
    lines: Iterable[str | bytes],
    *,
    profile: str | Profile = "default",
    fmt: str = "auto",
    to: str = "auto",
    on_invalid: str = "error",
    name: str = "<lines>",
    records_dir: str | None = None,
    settings: Settings | None = None,
    **options: Any,
) -> RepairedLines:
    """Repair a batch of JSON lines; returns the output lines (without ``\\n``) and what
    was done, as a :class:`RepairedLines` (``.lines``, ``.result``).

    ``lines`` is JSONL text, one record per item: a fine-tuning or ShareGPT file's lines
    (one conversation each), or the lines of one session file. The output is what
    ``chatnorm repair`` writes for the same bytes, cut into lines: for one conversation per
    line, one line per conversation, in order. ``to`` is ``"auto"``, ``"jsonl"`` or
    ``"finetune"`` (a JSON array is not lines).

    Args:
        profile, fmt, to, on_invalid, options: as for ``chatnorm repair`` (``fmt`` is
            ``--from``; ``on_invalid`` is ``"error"`` or ``"skip"``).
        name: how errors and the report name this batch (a file, a partition).
        records_dir: a folder for the report's records (a file in it, named in the result's
            ``spool``); None: records are counted, not kept.
        settings: a :class:`Settings` from :func:`settings_for`, made once per run (then the
            other arguments but ``name`` are ignored).

    Returns:
        :class:`RepairedLines`: ``lines``, and ``result`` (``result.counts``,
        ``messages_in``/``messages_out``, ``conversations`` and ``format`` as for a file).

    Raises:
        InputError: a bad line (with ``on_invalid="error"``), naming ``name``, the line
            (counted from 1 in this batch) and the column.
        UsageError: a wrong option.
    """
    if settings is None:
        settings = settings_for(profile=profile, fmt=fmt, to=to, on_invalid=on_invalid,
                                records_dir=records_dir, **options)
    if settings.to not in _LINE_OUTPUTS:
        raise UsageError(f"repair_lines writes lines: to must be one of {', '.join(_LINE_OUTPUTS)}, "
                         f"not {settings.to!r} (write a JSON array with repair_file)")
    result = FileResult(name, "")
    start = time.perf_counter()
    sink = _Collect()
    out = Output(sink)
    try:
        pump(Input(_Lines(lines), name, None), out, Job(name, name, ""), settings, Tracker(1), result)
        out.drain()
    except InputError as exc:
        if exc.source is None or exc.source in ("<input>", "<stream>"):
            exc.located(source=name)
        raise
    finally:
        result.seconds = time.perf_counter() - start
    text = b"".join(sink.blocks).decode()
    return RepairedLines(lines=text.split("\n")[:-1] if text else [], result=result)


def repair_file(
    src: str | os.PathLike[str],
    dst: str | os.PathLike[str],
    *,
    profile: str | Profile = "default",
    fmt: str = "auto",
    to: str = "auto",
    on_invalid: str = "error",
    records_dir: str | None = None,
    settings: Settings | None = None,
    **options: Any,
) -> FileResult:
    """Repair the file ``src`` into ``dst``, exactly as ``chatnorm repair SRC -o DST``.

    The output streams (constant memory) to a temporary file beside ``dst``, renamed over it
    only when complete: whatever happens, ``dst`` is either the whole repaired file or
    untouched. A bad input, an unreadable file or an unwritable output is not raised: it is
    the result's ``error`` (one sentence: where, what, what to do), so one bad file never
    stops a million-file run -- look at ``error`` (and list the failures).

    Arguments as :func:`repair_lines`. ``^C`` (KeyboardInterrupt) propagates, after the
    temporary file is removed.
    """
    if settings is None:
        settings = settings_for(profile=profile, fmt=fmt, to=to, on_invalid=on_invalid,
                                records_dir=records_dir, **options)
    source, target = os.fspath(src), os.fspath(dst)
    if source == "-" or target == "-":
        raise UsageError("repair_file reads and writes files; for streams use repair_lines or normalizer.repair")
    return _repair_job(Job(source, source, target), settings, Tracker(1))


class Plan(Sequence[Job]):
    """The jobs of ``(srcs[i], dsts[i])``, each made when asked for (``dst`` the same file as
    ``src``: in place), not held: a run of millions of files keeps the caller's two lists
    and nothing per file besides."""

    __slots__ = ("_srcs", "_dsts")

    def __init__(self, srcs: Sequence[str | os.PathLike[str]], dsts: Sequence[str | os.PathLike[str]]) -> None:
        self._srcs, self._dsts = srcs, dsts

    def __len__(self) -> int:
        return len(self._srcs)

    @overload
    def __getitem__(self, i: int) -> Job: ...
    @overload
    def __getitem__(self, i: slice) -> list[Job]: ...
    def __getitem__(self, i: int | slice) -> Job | list[Job]:
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        src, dst = os.fspath(self._srcs[i]), os.fspath(self._dsts[i])
        try:
            d = os.stat(dst)
            s = os.stat(src)
        except OSError:
            return Job(src, src, dst)
        if (d.st_dev, d.st_ino) != (s.st_dev, s.st_ino):
            return Job(src, src, dst)
        return Job(src, src, os.path.realpath(dst), in_place=True)


#: What an engine runs: the jobs, the settings -> the results, in the jobs' order, as they come.
Engine = Callable[[Sequence[Job], Settings], Iterable[FileResult]]


def stream_files(srcs: Sequence[str | os.PathLike[str]], dsts: Sequence[str | os.PathLike[str]],
                 report: str | os.PathLike[str] | None, run: Engine, keep_results: bool,
                 settings: dict[str, Any]) -> list[FileResult] | Totals:
    """What every engine's ``repair_files`` shares: one job per ``(src, dst)`` (:class:`Plan`),
    the settings checked once, ``run`` (the engine) on them, and each result, as it comes in
    the jobs' order, counted (:class:`Totals`) and written into the report at once (its
    records copied from its spool file, which is then removed): the report is complete when
    the run is, and nothing here grows with the number of files but the list returned --
    which ``keep_results=False`` does not keep (the totals are returned instead: for
    millions of files). The records are spooled in a hidden folder beside the report (the
    workers must see it), removed at the end whatever happens; a run that fails part way
    leaves no report (it is written to a temporary file, renamed when complete)."""
    if len(srcs) != len(dsts):
        raise ValueError(f"{len(srcs)} inputs and {len(dsts)} outputs: give one output per input")
    spool = None
    out: Any = None
    stream: ReportStream | None = None
    if report is not None:
        spool = tempfile.mkdtemp(prefix=".chatnorm-report-", dir=os.path.dirname(os.path.abspath(os.fspath(report))))
    try:
        checked = settings_for(records_dir=spool, **settings)
        totals = Totals()
        kept: list[FileResult] = []
        start = time.perf_counter()
        if report is not None:
            assert spool is not None
            out = open_output(os.fspath(report))
            stream = ReportStream(out.write, os.path.join(spool, "failed.names"))
        for result in run(Plan(srcs, dsts), checked):
            totals.add(result)
            if stream is not None:
                stream.add(result)
            if keep_results:
                kept.append(result)
        if stream is not None:
            stream.finish(totals, time.perf_counter() - start)
            out.commit()
        return kept if keep_results else totals
    finally:
        if stream is not None:
            stream.discard()
        if out is not None:
            out.abort()  # (a no-op once committed)
        if spool is not None:
            shutil.rmtree(spool, ignore_errors=True)


class RepairFiles(Protocol):
    """Every engine's ``repair_files`` (this module's, ``dask``'s, ``ray``'s), as type checkers
    see it: one :class:`FileResult` per input, or with ``keep_results=False`` the
    :class:`Totals` only. The one home of these overloads (:func:`by_keep_results`); each
    engine's own arguments pass through ``**kwargs``."""

    @overload
    def __call__(self, srcs: Sequence[str | os.PathLike[str]], dsts: Sequence[str | os.PathLike[str]], *,
                 keep_results: Literal[True] = ..., **kwargs: Any) -> list[FileResult]: ...
    @overload
    def __call__(self, srcs: Sequence[str | os.PathLike[str]], dsts: Sequence[str | os.PathLike[str]], *,
                 keep_results: Literal[False], **kwargs: Any) -> Totals: ...


def by_keep_results(f: Callable[..., list[FileResult] | Totals]) -> RepairFiles:
    """An engine's ``repair_files``, typed as :class:`RepairFiles` (what it returns follows
    ``keep_results``). At run time the function itself, unchanged."""
    return cast(RepairFiles, f)


@by_keep_results
def repair_files(
    srcs: Sequence[str | os.PathLike[str]],
    dsts: Sequence[str | os.PathLike[str]],
    *,
    jobs: int = 1,
    report: str | os.PathLike[str] | None = None,
    keep_results: bool = True,
    profile: str | Profile = "default",
    fmt: str = "auto",
    to: str = "auto",
    on_invalid: str = "error",
    **options: Any,
) -> list[FileResult] | Totals:
    """Repair ``srcs[i]`` into ``dsts[i]`` on this machine: in this process (``jobs=1``), or
    in ``jobs`` worker processes (the command's ``--jobs``); the engine the Dask and Ray
    adapters stand in for, with the same arguments and results.

    Args:
        report: write the merged report there, each file's part as it comes.
        keep_results: return one :class:`FileResult` per input, in order (a failed file has
            ``error`` set); False: return the :class:`Totals` only, so that what this holds
            does not grow with the number of files (the report still has every file).
        profile, fmt, to, on_invalid, options: as for :func:`repair_file`.
    """
    def run(plan: Sequence[Job], settings: Settings) -> Iterable[FileResult]:
        if jobs <= 1 or len(plan) <= 1:
            return (_repair_job(job, settings, Tracker(1)) for job in plan)
        from ..batch.jobs import run_pool

        return run_pool(plan, settings, Tracker(len(plan)), jobs)

    return stream_files(srcs, dsts, report, run, keep_results,
                        dict(profile=profile, fmt=fmt, to=to, on_invalid=on_invalid, **options))


# -- reports ------------------------------------------------------------------------------------


def write_report(path: str | os.PathLike[str], results: Iterable[FileResult], seconds: float = 0.0) -> None:
    """Write the merged report of ``results`` to ``path`` (atomically: a temporary file
    renamed when complete), each result taken as it comes (a generator is never held
    whole). Raises OSError when it cannot be written."""
    with open_output(os.fspath(path)) as f:
        for chunk in report_chunks(results, seconds):
            f.write(chunk)
        f.commit()
