"""The engine-neutral entry points: a batch of JSON lines, or one file, repaired by the very
pipe the command line runs (``cli._repair``: reader -> one core per conversation -> the
``--to`` encoder), so every engine writes what ``chatnorm repair`` writes, byte for byte.

Everything here is sync and plain data in and out (strings, paths, :class:`FileResult`):
it pickles, it needs no event loop, and it runs the same in a thread, a process pool, a Dask
task or a Ray task. Nothing here imports an engine.

Memory: :func:`repair_file` streams (the pipe's buffers: one read chunk, one conversation,
one output block of ``FLUSH_BYTES``); :func:`repair_lines` returns its batch's output as a
list, so it holds one batch in and one batch out -- give it a partition or a Ray batch, not a
corpus. Report records never stay in memory: they go to a file in ``records_dir`` (one per
call, made at the first record) or nowhere, and :func:`write_report` streams them into one
report, one file at a time.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from ..cli._files import Job, open_output
from ..cli._progress import Tracker
from ..cli._report import report_chunks, total_counts
from ..cli._repair import FileResult, Settings, _Input, _Output, _pump
from ..cli._repair import repair_file as _repair_job
from .._errors import InputError, UsageError
from ..formats._encode import FLUSH_BYTES
from ..profiles._profiles import Profile, get_profile

__all__ = ["FileResult", "repair_lines", "repair_file", "run_files", "settings_for", "total_counts", "report_chunks",
           "write_report"]

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
) -> tuple[list[str], FileResult]:
    """Repair a batch of JSON lines; returns the output lines (without ``\\n``) and what
    was done.

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
        ``(lines, result)``: ``result.counts``, ``messages_in``/``messages_out``,
        ``conversations`` and ``format`` as for a file.

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
    out = _Output(sink)
    try:
        _pump(_Input(_Lines(lines), name, None), out, Job(name, name, ""), settings, Tracker(1), result)
        out.drain()
    except InputError as exc:
        if exc.source is None or exc.source in ("<input>", "<stream>"):
            exc.located(source=name)
        raise
    finally:
        result.seconds = time.perf_counter() - start
    text = b"".join(sink.blocks).decode()
    return (text.split("\n")[:-1] if text else []), result


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


def run_files(
    srcs: Sequence[str | os.PathLike[str]],
    dsts: Sequence[str | os.PathLike[str]],
    report: str | os.PathLike[str] | None,
    run: Callable[[list[Job], Settings], list[FileResult]],
    **settings: Any,
) -> list[FileResult]:
    """What every engine's ``repair_files`` shares: one job per ``(src, dst)`` (``dst`` the
    same file as ``src``: in place), the settings checked once, ``run`` (the engine) on them,
    and the merged report written to ``report``. The records are spooled in a hidden folder
    beside the report (the workers must see it), removed at the end whatever happens."""
    if len(srcs) != len(dsts):
        raise ValueError(f"{len(srcs)} inputs and {len(dsts)} outputs: give one output per input")
    spool = None
    if report is not None:
        spool = tempfile.mkdtemp(prefix=".chatnorm-report-", dir=os.path.dirname(os.path.abspath(os.fspath(report))))
    try:
        checked = settings_for(records_dir=spool, **settings)
        jobs = []
        for s, d in zip(srcs, dsts):
            src, dst = os.fspath(s), os.fspath(d)
            same = os.path.exists(dst) and os.path.samefile(src, dst)
            jobs.append(Job(src, src, os.path.realpath(dst) if same else dst, in_place=same))
        start = time.perf_counter()
        results = run(jobs, checked)
        if report is not None:
            write_report(report, results, time.perf_counter() - start)
        return results
    finally:
        if spool is not None:
            shutil.rmtree(spool, ignore_errors=True)


# -- reports ------------------------------------------------------------------------------------


def write_report(path: str | os.PathLike[str], results: list[FileResult], seconds: float = 0.0) -> None:
    """Write the merged report of ``results`` to ``path`` (atomically: a temporary file
    renamed when complete). Raises OSError when it cannot be written."""
    with open_output(os.fspath(path)) as f:
        for chunk in report_chunks(results, seconds):
            f.write(chunk)
        f.commit()
