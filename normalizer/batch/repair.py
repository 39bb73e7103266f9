"""Repairing one file: :func:`repair_file` opens the input and the output, runs the pipe
(``pump``) between them and replaces the output atomically (many files at once: ``jobs``).

Bad input, unreadable files and unwritable outputs become the result's ``error`` (one
sentence: where, what, what to do); an error names where it happened (``pump.locate``).
With ``--in-place`` the input is watched while it is read (``streams.Input``) and replaced
only if it is still what was read.
"""

from __future__ import annotations

import io
import sys
import time
from typing import Any

from .._errors import InputError
from .outputs import keep_backup, keep_owner_and_mode, open_output
from .plan import Job
from .pump import SpoolError, pump
from .results import FileResult, Settings
from .streams import Changed, Input, Output, is_pipe
from .text import error_text
from .tracking import WRITTEN, Tracker

__all__ = ["repair_file"]


def repair_file(job: Job, settings: Settings, tracker: Tracker) -> FileResult:
    """Repair one input into its output. Bad input, unreadable files and unwritable outputs
    come back as ``FileResult.error`` (the output is then not created or not replaced);
    ``BrokenPipeError`` (stdout closed) and :class:`Interrupted` propagate."""
    result = FileResult(job.name, job.output)
    start = time.perf_counter()
    atomic: Any = None
    raw_in: Any = None
    try:
        if job.input == "-":
            raw_in = sys.stdin.buffer
        else:
            try:
                # Unbuffered: each read is one read of the file (what read1 of a buffered
                # file does with chunks this size), without a buffer object per file, nor
                # the isatty() call open() makes to choose one.
                raw_in = open(job.input, "rb", buffering=0)  # noqa: SIM115 - closed in finally
            except OSError as exc:
                result.error = f"{job.name}: cannot read: {exc.strerror}. Check the path and its permissions"
                return result
        if job.output == "-":
            out = Output(sys.stdout.buffer)
            pipe = is_pipe(sys.stdout)
        else:
            try:
                atomic = open_output(job.output, mode_from=job.input if job.in_place else None)
            except OSError as exc:
                result.error = _write_error(job, exc)
                return result
            out = Output(atomic)
            pipe = False
        watch = job.in_place and job.input != "-" and atomic is not None and isinstance(raw_in, io.FileIO)
        src = Input(raw_in, job.name, out.drain if pipe else None, watch=watch)
        try:
            pump(src, out, job, settings, tracker, result)
            out.drain()
            if atomic is not None:
                if watch:
                    atomic.commit(lambda: _before_replace(src, job, settings))
                    _after_replace(src, job, result)
                else:
                    if job.in_place and settings.backup is not None:
                        keep_backup(job.output, settings.backup)
                    atomic.commit()
                WRITTEN.files += 1
            elif job.output == "-":
                sys.stdout.buffer.flush()
        except Changed:
            result.error = (f"{job.name} changed while it was repaired; left untouched: run again when the tool "
                            "that writes it has stopped")
        except InputError as exc:
            if exc.source is None or exc.source in ("<input>", "<stream>"):
                exc.located(source=job.name)
            result.error = error_text(exc)
        except SpoolError as exc:
            kept = f"{job.input} is unchanged" if job.in_place else "its output was not written"
            if job.output == "-":
                kept = "its output on stdout is incomplete"
            result.error = f"{job.name}: {exc}; {kept}. Point TMPDIR at a folder with space, or drop --report"
        except BrokenPipeError:
            raise
        except OSError as exc:
            if job.output == "-" or atomic is None:
                raise
            result.error = _write_error(job, exc)
        return result
    finally:
        if atomic is not None:
            atomic.abort()  # a no-op after commit; else the half-written file goes away
        if raw_in is not None and job.input != "-":
            raw_in.close()
        result.seconds = time.perf_counter() - start
        tracker.file_done()


def _before_replace(src: Input, job: Job, settings: Settings) -> None:
    """A file repaired in place is replaced only if it is still what was read: the lines its
    tool appended after the repair's end was confirmed (``streams.Input``) would go with the old
    file. Checked before the backup is made and once more after it, the last thing before
    the rename (see :func:`_after_replace` for the instant between)."""
    src.unchanged(job.output)
    if settings.backup is not None:
        keep_backup(job.output, settings.backup)
        src.unchanged(job.output)


def _after_replace(src: Input, job: Job, result: FileResult) -> None:
    """The rename's own instant: a line appended between the last check and the rename went
    to the replaced file (held open here). Such bytes are never dropped: they are written
    next to the file, and the file is reported failed, saying what to do with them."""
    late = src.late()
    if not late:
        return
    keep = job.output + ".chatnorm-late"
    with open(keep, "ab") as f:  # (appended to: an earlier run's are kept too)
        f.write(late)
    if src.seen is not None:
        keep_owner_and_mode(keep, src.seen)  # the user's, as the file is
    result.error = (f"{job.name}: {len(late):,} bytes were appended to it while it was replaced; they are in {keep}. "
                    f"When the tool that writes it has stopped, append them (cat {keep} >> {job.output}; "
                    f"rm {keep}) and run again")


def _write_error(job: Job, exc: OSError) -> str:
    what = exc.strerror or str(exc)
    if exc.errno == 28:  # ENOSPC
        todo = "free some space (or write elsewhere with -o)"
    elif exc.errno in (13, 1, 30):  # EACCES, EPERM, EROFS
        todo = "check the folder's permissions (or write elsewhere with -o)"
    else:
        todo = "check the output path"
    kept = f"{job.input} is unchanged" if job.in_place else "nothing was written"
    return f"{job.output}: cannot write: {what}; {kept}. {todo[0].upper()}{todo[1:]}"

