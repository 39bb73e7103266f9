"""``chatnorm repair``, run: the plan of inputs and outputs, the usage errors of the
output options, the run (``batch.jobs``) and what is said of each file as it is done, the
``--report`` document written as the results come; ``--check`` and ``--diff`` (``_diff``)."""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import click

from ..batch.stop import DEFER
from ._choices import python_value
from ._common import _RUNNING, _missing_text, _need_stdin, _PipeClosed, _validate_core
from ._text import say

if TYPE_CHECKING:
    from ..batch.report import Totals
    from ..batch.results import FileResult
    from ..profiles._profiles import Profile

__all__ = ["run_repair"]


def run_repair(inputs: tuple[str, ...], *, fmt: str, to: str, output: str | None, in_place: bool, backup: str | None,
               report_path: str | None, jobs: int, engine: str, scheduler: str | None, on_invalid: str,
               profile: Profile, orphan_results: str, trailing_calls: str, stub_text: str,
               reader_options: dict[str, Any], check_only: bool, diff: bool, quiet: bool) -> None:
    """The ``repair`` command (``_main.repair`` declares its options)."""
    from ..batch.plan import PlanError, check_paths, plan_jobs
    from ..batch.results import Settings

    items = list(inputs) or ["-"]
    _need_stdin(items, "no input: give a file or a folder, or pipe a session into it (chatnorm repair - < session.jsonl)",
                implicit=not inputs)
    _check_output_options(fmt, to, in_place, backup, profile, python_value(orphan_results), trailing_calls)
    if check_only or diff:
        _repair_check(items, fmt=fmt, to=to, profile=profile, on_invalid=on_invalid, diff=diff, quiet=quiet,
                      options={"orphan_results": python_value(orphan_results), "trailing_calls": trailing_calls,
                               "stub_text": stub_text, "on_invalid": on_invalid},
                      reader_options=reader_options, writes=[flag for flag, given in (("-o", output is not None), ("--in-place", in_place), ("--backup", backup is not None),
                                                       ("--report", report_path is not None)) if given])
        return
    missing: list[str] = []
    try:
        plan = plan_jobs(items, output=output, in_place=in_place, to=to, missing=missing)
        check_paths(plan, items, report_path, backup if in_place else None)
    except PlanError as exc:
        raise click.UsageError(str(exc)) from None
    options = {"orphan_results": python_value(orphan_results), "trailing_calls": trailing_calls,
               "stub_text": stub_text, "on_invalid": on_invalid}
    if trailing_calls is None:
        del options["trailing_calls"]  # decided per input: see batch.results.core_options
    _validate_core(profile, options)
    _RUNNING.update(command="repair", output="in-place" if in_place else "files" if output not in (None, "-")
                    else "stdout")
    _validate_engine(plan, engine, scheduler)
    # A cluster's workers cannot see this machine's temporary folder: the report's records
    # are then spooled in a hidden folder beside the first output (a shared file system).
    spool_where = os.path.dirname(os.path.abspath(plan[0].output)) if scheduler is not None and plan else None
    with _spool_folder(report_path is not None, spool_where) as spool_dir:
        settings = Settings(fmt=fmt, to=to, profile=profile, on_invalid=options["on_invalid"], options=options,
                            reader_options=reader_options, spool_dir=spool_dir, backup=backup)
        _repair(plan, settings, jobs=jobs, quiet=quiet, report_path=report_path, missing=missing, engine=engine,
                scheduler=scheduler)



def _repair_check(items: list[str], *, fmt: str, to: str, profile: Profile, on_invalid: str, diff: bool,
                  quiet: bool, options: dict[str, Any], reader_options: dict[str, Any], writes: list[str]) -> None:
    """``repair --check`` / ``--diff``: nothing is written (``_diff``)."""
    from ._diff import run_compare
    from ..batch.plan import Job, PlanError, expand_inputs
    from ..batch.results import Settings

    flag = "--diff" if diff else "--check"
    if writes:
        raise click.UsageError(f"{flag} writes nothing: drop {' and '.join(writes)}")
    missing: list[str] = []
    try:
        found = [found.path for found in expand_inputs(items, missing=missing)]
    except PlanError as exc:
        raise click.UsageError(str(exc)) from None
    if options["trailing_calls"] is None:
        del options["trailing_calls"]  # decided per input: see batch.results.core_options
    _validate_core(profile, options)
    settings = Settings(fmt=fmt, to=to, profile=profile, on_invalid=on_invalid, options=options,
                        reader_options=reader_options)
    jobs = [Job(path, "<stdin>" if path == "-" else path, "-") for path in found]
    _RUNNING.update(command="repair-check")
    try:
        status = run_compare(jobs, settings, diff=diff, quiet=quiet, missing=missing)
    except BrokenPipeError:
        raise _PipeClosed() from None
    if status:
        raise SystemExit(status)


def _check_output_options(fmt: str, to: str, in_place: bool, backup: str | None, profile: Profile,
                          orphan_results: str, trailing_calls: str | None) -> None:
    """Usage errors of the output options, before any file is touched."""
    from ..formats import SESSION_FORMATS
    from ..profiles._profiles import PROFILES

    if backup is not None and not in_place:
        raise click.UsageError("--backup keeps the original of a file repaired --in-place; give --in-place too")
    if backup is not None and (not backup or "/" in backup or backup in (".", "..")):
        raise click.UsageError(f"--backup={backup!r}: give a suffix for the original's name, such as .bak")
    if to not in SESSION_FORMATS:
        return
    if fmt not in ("auto", to):
        raise click.UsageError(f"a {fmt} file cannot be written as a {to} session; give --to jsonl (or another format)")
    if profile != PROFILES["default"]:
        raise click.UsageError(f"--profile shapes chat messages for a provider; --to {to} repairs the session in its own "
                               "format. Give --to jsonl to write the provider's chat messages")
    if orphan_results == "keep_as_user":
        raise click.UsageError(f"--orphan-results keep-as-user would write a result as user text; --to {to} keeps the "
                               "session's own lines (drop or error)")
    if trailing_calls == "drop":
        raise click.UsageError(f"--trailing-calls drop would edit the calls' lines; --to {to} answers them (stub) "
                               "or leaves them open (keep)")


def _validate_engine(plan: list[Any], engine: str, scheduler: str | None) -> None:
    if scheduler is not None and engine != "dask":
        raise click.UsageError("--scheduler is the address of a Dask scheduler: give --engine dask too")
    if engine != "dask":
        return
    if any(job.input == "-" or job.output == "-" for job in plan):
        raise click.UsageError("--engine dask repairs files into files: give input files or folders, "
                               "and -o DIR (or --in-place)")
    import importlib.util

    if importlib.util.find_spec("distributed") is None:
        raise click.UsageError("--engine dask needs Dask: pip install 'chat-normalizer[dask]'")


@contextlib.contextmanager
def _spool_folder(wanted: bool, where: str | None = None) -> Iterator[str | None]:
    """For --report: a private temporary folder for the records of each input (copied into
    the report document as each input is done), removed whatever happens. In TMPDIR, or a
    hidden folder in ``where`` (a cluster's workers must see it)."""
    if not wanted:
        yield None
        return
    try:
        if where is not None:
            os.makedirs(where, exist_ok=True)
        folder = tempfile.TemporaryDirectory(prefix=".chatnorm-report-" if where else "chatnorm-report-", dir=where)
    except OSError as exc:
        say(f"error: cannot make a temporary folder for the report's records in {where or tempfile.gettempdir()}: "
            f"{exc.strerror or exc}. Point TMPDIR at a writable folder", err=True)
        raise SystemExit(1) from None
    with folder as path:
        yield path


def _repair(plan: list[Any], settings: Any, *, jobs: int, quiet: bool, report_path: str | None,
            missing: list[str], engine: str = "local", scheduler: str | None = None) -> None:
    """Run the plan and say what became of each file as it is done, in the plan's order:
    its error, or its summary line; the report gets its counts and records at the same
    time. A result is then forgotten: only the totals are kept, so a run of millions of
    files holds no more than a run of ten (``batch.order.REORDER_WINDOW``)."""
    from ..batch.jobs import run_jobs
    from ..batch.report import Totals
    from ..batch.results import FileResult
    from ._progress import make_tracker

    start = time.perf_counter()
    report = _open_report(report_path, settings.spool_dir) if report_path is not None else None
    totals = Totals()
    tracker = make_tracker(plan, quiet=quiet)
    try:
        with tracker:
            DEFER[0] = engine == "dask" or (jobs > 1 and len(plan) > 1)
            try:
                for r in [FileResult(path, "", error=_missing_text(path)) for path in missing]:
                    _done(r, totals, report, quiet)
                for r in run_jobs(plan, settings, tracker, jobs, engine=engine, scheduler=scheduler) if plan else ():
                    _done(r, totals, report, quiet)
            except BrokenPipeError:
                raise _PipeClosed() from None
            finally:
                DEFER[0] = False
        elapsed = time.perf_counter() - start
        if not quiet:
            if totals.files > 1:
                say(_total_line(totals, elapsed), err=True)
            else:
                say(f"1 file{' (failed)' if totals.failed else ''}, {elapsed:.2f} s", err=True)
        if report is not None:
            report.finish(totals, elapsed)
    finally:
        if report is not None:
            report.close()
    if totals.failed or (report is not None and report.error is not None):
        raise SystemExit(1)


def _done(r: FileResult, totals: Totals, report: _ReportOut | None, quiet: bool) -> None:
    """One file's result, as it comes: counted, reported, said, forgotten."""
    totals.add(r)
    if report is not None:
        report.add(r)
    if r.error:
        say(f"error: {r.error}", err=True)
        return
    if not r.messages_in:
        say(f"warning: {r.input}: no messages in it; its output is empty", err=True)
    if not quiet:
        say(f"{r.input}: {r.summary()}", err=True)


def _total_line(totals: Totals, elapsed: float) -> str:
    kinds = ", ".join(f"{k} {v:,}" for k, v in totals.sorted_counts().items()) or "no repairs"
    files = f"{totals.files:,} file{'s' if totals.files != 1 else ''}" + (
        f" ({totals.failed:,} failed)" if totals.failed else "")
    return f"total: {files}, {totals.messages_in:,} in, {totals.messages_out:,} out; {kinds}; {elapsed:.2f} s"


def _open_report(path: str, spool_dir: str | None) -> _ReportOut:
    try:
        return _ReportOut(path, spool_dir)
    except OSError as exc:
        say(f"error: {_report_name(path)}: cannot write the report: {exc.strerror or exc}; nothing was repaired. "
            "Check the --report path", err=True)
        raise SystemExit(1) from None


def _report_name(path: str) -> str:
    return "<stderr>" if path == "-" else path


class _ReportOut:
    """``--report``, written as the results come (``batch.report.ReportStream``): into the file
    (a temporary one renamed when complete), or for ``-`` into a file in the spool folder
    that is copied to stderr at the end (the summary lines share stderr meanwhile). A write
    error ends the report, not the run: it is said at the end, once every output is
    written, and the exit status is 1."""

    def __init__(self, path: str, spool_dir: str | None) -> None:
        from ..batch.outputs import open_output
        from ..batch.report import ReportStream

        assert spool_dir is not None  # made for --report (_spool_folder)
        self.path = path
        self.error: str | None = None
        self._spooled = os.path.join(spool_dir, "report.json") if path == "-" else None
        self._file = open_output(self._spooled or path)
        self._stream = ReportStream(self._file.write, os.path.join(spool_dir, "failed.names"))

    def add(self, r: FileResult) -> None:
        if self.error is None:
            try:
                self._stream.add(r)
                return
            except OSError as exc:
                self._fail(exc)
        if r.spool is not None:  # the report is gone: its records are not needed
            with contextlib.suppress(OSError):
                os.unlink(r.spool)

    def finish(self, totals: Totals, seconds: float) -> None:
        if self.error is None:
            try:
                self._stream.finish(totals, seconds)
                self._file.commit()
                if self._spooled is not None:
                    self._to_stderr(self._spooled)
            except OSError as exc:
                self._fail(exc)
        if self.error is not None:
            say(f"error: {_report_name(self.path)}: cannot write the report: {self.error}"
                + (". Write it to a file with --report FILE" if self.path == "-" else ""), err=True)

    def _to_stderr(self, spooled: str) -> None:
        stream = sys.stderr.buffer if hasattr(sys.stderr, "buffer") else None
        with open(spooled, "rb") as f:
            if stream is None:  # pragma: no cover - stderr replaced by a text-only object
                sys.stderr.write(f.read().decode())
                return
            shutil.copyfileobj(f, stream)
        stream.flush()

    def _fail(self, exc: OSError) -> None:
        self.error = str(exc.strerror or exc)
        self.close()

    def close(self) -> None:
        self._stream.discard()
        self._file.abort()

