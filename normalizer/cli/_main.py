"""The command line: ``chatnorm repair | check | explain``.

Only wiring around the library: files are found and paired with outputs in
``_files.py``, repaired in ``_repair.py``, checked in ``_check.py``, explained in
``_explain.py``; the progress display is ``_progress.py``. This module parses the
arguments, turns every failure into one sentence on stderr and an exit status, and handles
signals. Imported only by the console script and ``python -m normalizer`` -- never by
``import normalizer`` -- so click and rich stay out of the library's import path.

Exit status: 0 done; 1 some input failed or ``check`` found violations; 2 usage error;
3 ``check`` found nothing but is incomplete (a limit was reached);
130 / 143 interrupted by SIGINT / SIGTERM (the output is then not written at all).
"""

from __future__ import annotations

import functools

import contextlib
import os
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import click
import orjson

from .. import __version__
from ..profiles._check import DEFAULT_MAX_SEEN_IDS
from ._text import error_text, printable, say
from .._errors import NormalizerError
from .._options import DEFAULT_STUB_TEXT

if TYPE_CHECKING:
    from ..profiles._profiles import Profile

__all__ = ["main", "cli"]

_FROM = ["auto", "chat", "responses", "codex", "claude-code", "anthropic", "sharegpt", "finetune"]
_TO = ["auto", "jsonl", "json", "finetune"]


def _profile_names() -> list[str]:
    from ..profiles._profiles import PROFILES

    return sorted(PROFILES)


class _Profile(click.ParamType["Profile", Any]):
    """A built-in profile name, or a path to a TOML/JSON profile file: resolved here, once
    per run (a file is read once), and passed down as the ``Profile`` itself."""

    name = "profile"

    def convert(self, value: Any, param: Any, ctx: Any) -> Profile:
        from ..profiles._profiles import get_profile

        try:
            return get_profile(value)  # a Profile is returned as it is (click converts defaults too)
        except NormalizerError as exc:
            self.fail(str(exc), param, ctx)


_CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


@click.group(context_settings=_CONTEXT)
@click.version_option(__version__, "-V", "--version", prog_name="chatnorm")
def cli() -> None:
    """Repair LLM chat histories so strict OpenAI-compatible providers accept them.

    Reads chat JSONL, JSON arrays, request bodies, OpenAI Responses items, Codex rollouts,
    Claude Code sessions, Anthropic messages, ShareGPT and fine-tuning JSONL; writes chat
    messages. Everything streams: a file of any size is repaired in constant memory.

    \b
    Examples:
      chatnorm repair session.jsonl > fixed.jsonl
      cat export.jsonl | chatnorm repair | head
      chatnorm repair sessions/ -o repaired/ --jobs 4 --report report.json
      chatnorm repair --in-place sessions/
      chatnorm check --profile mistral train.jsonl
      chatnorm explain session.jsonl

    Exit status: 0 done, 1 an input failed or check found violations, 2 usage error,
    3 check found nothing but is incomplete (see check --help), 130/143 interrupted
    (nothing half-written is left behind).
    """


def _model_option(f: Any) -> Any:
    """``--model NAME``: the profile for that model (``normalizer.profile_for_model``), unless
    ``--profile`` is given too (then ``--profile`` wins: it names the rules outright)."""

    @functools.wraps(f)
    def command(*args: Any, model: str | None, **kwargs: Any) -> Any:
        ctx = click.get_current_context()
        if model is not None and ctx.get_parameter_source("profile") is click.core.ParameterSource.DEFAULT:
            from ..profiles._models import profile_for_model

            kwargs["profile"] = profile_for_model(model)
        return f(*args, **kwargs)

    return click.option(
        "--model", default=None, metavar="NAME",
        help="The model the history is sent to (e.g. mistral-small-2506, Llama-3.1-8B-Instruct): "
             "picks its profile from the model table (README); --profile wins over it.",
    )(command)


# -- repair ---------------------------------------------------------------------------------------


def _core_options(f: Any) -> Any:
    for decorator in reversed([
        click.option("--profile", default="default", show_default=True, type=_Profile(),
                     help="Provider profile: which rules the output must meet "
                          f"({', '.join(_profile_names())}, or a TOML/JSON file)."),
        click.option("--orphan-results", type=click.Choice(["drop", "keep_as_user", "error"]), default="drop",
                     show_default=True, help="A tool result that answers no call: drop it (kept in the report), "
                                             "turn it into user text, or fail."),
        click.option("--trailing-calls", type=click.Choice(["stub", "keep", "drop"]), default=None,
                     help="Calls still unanswered at the end: answer with --stub-text, leave them open "
                          "(tools still running), or remove them. Default: stub for a session; keep for "
                          "training data (finetune, sharegpt), where an example may end on a call."),
        click.option("--stub-text", default=DEFAULT_STUB_TEXT, show_default=True,
                     help="Content of the synthetic result given to an unanswered call."),
    ]):
        f = decorator(f)
    return f


@cli.command(context_settings=_CONTEXT, short_help="Repair files, folders or stdin (to stdout, -o, or --in-place).")
@click.argument("inputs", nargs=-1, metavar="[INPUT]...")
@click.option("--from", "fmt", type=click.Choice(_FROM), default="auto", show_default=True,
              help="Input format (auto: detected from the first records).")
@click.option("--to", "to", type=click.Choice(_TO), default="auto", show_default=True,
              help="Output: jsonl (chat messages, one per line), json (one array), finetune "
                   "({\"messages\": [...]} per line). auto: jsonl, or finetune for inputs holding "
                   "several conversations.")
@click.option("-o", "--output", type=str, default=None, metavar="PATH",
              help="Output file, or a folder mirroring the inputs (several inputs or a folder). "
                   "Default: stdout.")
@click.option("--in-place", is_flag=True, help="Replace each input file with its repaired version "
                                               "(only once the new file is complete).")
@click.option("--report", "report_path", type=str, default=None, metavar="PATH",
              help="Write the JSON report (every repair, with what it removed) here; '-' for stderr.")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=1, show_default=True,
              help="Files repaired at the same time, each in a worker process (each file's output is "
                   "the same as with one).")
@click.option("--engine", type=click.Choice(["local", "dask"]), default="local", show_default=True,
              help="Where files are repaired: here (--jobs processes), or as Dask tasks: on a new "
                   "LocalCluster of --jobs workers, or on the cluster at --scheduler "
                   "(pip install 'chat-normalizer[dask]').")
@click.option("--scheduler", default=None, metavar="ADDR",
              help="With --engine dask: the address of a running Dask scheduler (tcp://host:8786). "
                   "Its workers must see the inputs and outputs at the same paths.")
@click.option("--on-invalid", type=click.Choice(["fail", "skip"]), default="fail", show_default=True,
              help="A line or message that is not valid: fail the file, or skip it (kept in the report).")
@_core_options
@click.option("-q", "--quiet", is_flag=True, help="No progress display and no summary (errors are still shown).")
@_model_option
def repair(inputs: tuple[str, ...], fmt: str, to: str, output: str | None, in_place: bool,
           report_path: str | None, jobs: int, engine: str, scheduler: str | None, on_invalid: str,
           profile: Profile, orphan_results: str, trailing_calls: str, stub_text: str, quiet: bool) -> None:
    """Repair chat histories: INPUT is a file, a folder (every .jsonl/.json/.ndjson file in it,
    recursively) or - for stdin (the default).

    The repaired messages go to stdout, to -o FILE, into -o DIR (mirroring the input tree),
    or over the inputs (--in-place). Files are written to a temporary file next to them and
    renamed when complete. A summary goes to stderr, and a progress display when stderr is
    a terminal.

    \b
    Examples:
      chatnorm repair examples/split-turns.jsonl
      chatnorm repair --from codex rollout.jsonl --report report.json > chat.jsonl
      cat session.jsonl | chatnorm repair - | head
      chatnorm repair sessions/ -o repaired/ --jobs 4
      chatnorm repair sessions/ -o repaired/ --engine dask --scheduler tcp://10.0.0.5:8786
      chatnorm repair --in-place --trailing-calls keep sessions/
      chatnorm repair --to finetune --on-invalid skip train.jsonl -o train.fixed.jsonl
    """
    from ._files import PlanError, check_paths, plan_jobs
    from ._repair import Settings

    items = list(inputs) or ["-"]
    _need_stdin(items, "no input: give a file or a folder, or pipe a session into it (chatnorm repair - < session.jsonl)")
    try:
        plan = plan_jobs(items, output=output, in_place=in_place, to=to)
        check_paths(plan, items, report_path)
    except PlanError as exc:
        raise click.UsageError(str(exc)) from None
    options = {"orphan_results": orphan_results, "trailing_calls": trailing_calls, "stub_text": stub_text,
               "on_invalid": "error" if on_invalid == "fail" else "skip"}
    if trailing_calls is None:
        del options["trailing_calls"]  # decided per input: see _repair.core_options
    _validate_core(profile, options)
    _validate_engine(plan, engine, scheduler)
    # A cluster's workers cannot see this machine's temporary folder: the report's records
    # are then spooled in a hidden folder beside the first output (a shared file system).
    spool_where = os.path.dirname(os.path.abspath(plan[0].output)) if scheduler is not None else None
    with _spool_folder(report_path is not None, spool_where) as spool_dir:
        settings = Settings(fmt=fmt, to=to, profile=profile, on_invalid=options["on_invalid"], options=options,
                            spool_dir=spool_dir)
        _repair(plan, settings, jobs=jobs, quiet=quiet, report_path=report_path, engine=engine, scheduler=scheduler)


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
    """For --report: a private temporary folder for the records of each input (streamed
    into the one report document at the end), removed whatever happens. In TMPDIR, or a
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
            engine: str = "local", scheduler: str | None = None) -> None:
    from ._jobs import run_jobs
    from ._progress import make_tracker

    start = time.perf_counter()
    tracker = make_tracker(len(plan), quiet=quiet)
    with tracker:
        _DEFER_SIGNALS[0] = engine == "dask" or (jobs > 1 and len(plan) > 1)
        try:
            results = run_jobs(plan, settings, tracker, jobs, engine=engine, scheduler=scheduler)
        except BrokenPipeError:
            raise _PipeClosed() from None
        finally:
            _DEFER_SIGNALS[0] = False
    elapsed = time.perf_counter() - start
    failed = [r for r in results if r.error]
    for r in failed:
        say(f"error: {r.error}", err=True)
    if not quiet:
        for r in results:
            if not r.error:
                say(f"{r.input}: {r.summary()}", err=True)
        if len(results) > 1:
            say(_total_line(results, elapsed), err=True)
        else:
            say(f"1 file{' (failed)' if failed else ''}, {elapsed:.2f} s", err=True)
    if report_path is not None:
        _write_report(report_path, results, elapsed)
    if failed:
        raise SystemExit(1)


def _need_stdin(items: list[str], no_input: str) -> None:
    """Refuse to read stdin when it is closed, or when it is the terminal and stdin is the
    only input (the user forgot the file: waiting for typed JSON would look like a hang)."""
    from ._streams import stdin_closed

    if "-" in items and stdin_closed():
        raise click.UsageError("stdin is closed: give a file or a folder, or pipe a session into it")
    if items == ["-"] and sys.stdin.isatty():
        raise click.UsageError(no_input)


def _validate_core(profile: Profile, options: dict[str, Any]) -> None:
    # Wrong options are usage errors (exit 2) before any file is touched.
    from .._core import Normalizer

    try:
        Normalizer(profile, **options)
    except NormalizerError as exc:
        raise click.UsageError(str(exc)) from None


def _total_line(results: list[Any], elapsed: float) -> str:
    counts: dict[str, int] = {}
    for r in results:
        for k, v in r.counts.items():
            counts[k] = counts.get(k, 0) + v
    n_in = sum(r.messages_in for r in results)
    n_out = sum(r.messages_out for r in results)
    failed = sum(1 for r in results if r.error)
    kinds = ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "no repairs"
    files = f"{len(results)} file{'s' if len(results) != 1 else ''}" + (f" ({failed} failed)" if failed else "")
    return f"total: {files}, {n_in} in, {n_out} out; {kinds}; {elapsed:.2f} s"


def _write_report(path: str, results: list[Any], elapsed: float) -> None:
    """The JSON report, streamed from each file's record spool (records are never all in
    memory). One document: per file its counts and records, then the totals
    (``_report.report_chunks``, the one merger every way of running uses)."""
    from ._files import open_output
    from ._report import report_chunks

    if path == "-":
        stream = sys.stderr.buffer if hasattr(sys.stderr, "buffer") else None
        try:
            for chunk in report_chunks(results, elapsed):
                if stream is not None:
                    stream.write(chunk)
                else:  # pragma: no cover - stderr replaced by a text-only object
                    sys.stderr.write(chunk.decode())
            if stream is not None:
                stream.flush()
        except OSError as exc:  # stderr closed, or a full disk behind it
            say(f"error: <stderr>: cannot write the report: {exc.strerror or exc}. "
                "Write it to a file with --report FILE", err=True)
            raise SystemExit(1) from None
        return
    try:
        with open_output(path) as f:
            for chunk in report_chunks(results, elapsed):
                f.write(chunk)
            f.commit()
    except OSError as exc:
        say(f"error: {path}: cannot write the report: {exc.strerror or exc}", err=True)
        raise SystemExit(1) from None


# -- check ----------------------------------------------------------------------------------------


@cli.command(context_settings=_CONTEXT, short_help="List what a provider would reject (exit 1 if anything).")
@click.argument("inputs", nargs=-1, metavar="[INPUT]...")
@click.option("--from", "fmt", type=click.Choice(_FROM), default="auto", show_default=True,
              help="Input format (auto: detected from the first records).")
@click.option("--profile", default="default", show_default=True, type=_Profile(),
              help=f"Whose rules to check against ({', '.join(_profile_names())}, or a TOML/JSON file).")
@click.option("--max-per-file", type=click.IntRange(min=0), default=1000, show_default=True,
              help="Violations listed per file (all are counted).")
@click.option("--max-seen-ids", type=click.IntRange(min=1), default=DEFAULT_MAX_SEEN_IDS, show_default=True,
              help="Distinct call ids remembered per conversation to find an id reused across turns "
                   "(~100 bytes each). Past it the check is incomplete (exit 3).")
@click.option("-q", "--quiet", is_flag=True, help="No summary line.")
@_model_option
def check(inputs: tuple[str, ...], fmt: str, profile: Profile, max_per_file: int, max_seen_ids: int,
          quiet: bool) -> None:
    """List what a provider would reject, changing nothing: for each violation the file,
    the line (JSONL) or message index, the rule and the provider's error text. Exit status
    1 when there is any: a CI gate for stored histories and training data.

    Exit status: 0 no violations; 1 violations, or an input could not be read; 2 usage
    error; 3 no violations found, but the check is incomplete (a conversation had more
    distinct call ids than --max-seen-ids: raise it to check every id for reuse).

    \b
    Examples:
      chatnorm check examples/split-turns.jsonl
      chatnorm check --profile mistral sessions/
      chatnorm repair session.jsonl | chatnorm check -
    """
    from ._check import run_check
    from ._files import PlanError, expand_inputs

    items = list(inputs) or ["-"]
    _need_stdin(items, "no input: give a file or a folder, or pipe a session into it")
    try:
        files = [path for path, _, _ in expand_inputs(items)]
    except PlanError as exc:
        raise click.UsageError(str(exc)) from None
    if not files:
        raise click.UsageError(f"no session files in {', '.join(items)}")
    try:
        status = run_check(files, fmt=fmt, profile=profile, max_per_file=max_per_file, quiet=quiet,
                           max_seen_ids=max_seen_ids)
    except BrokenPipeError:
        raise _PipeClosed() from None
    if status:
        raise SystemExit(status)


# -- explain --------------------------------------------------------------------------------------


@cli.command(context_settings=_CONTEXT, short_help="Show each repair: the messages before and after, side by side.")
@click.argument("input", default="-", metavar="INPUT")
@click.option("--from", "fmt", type=click.Choice(_FROM), default="auto", show_default=True,
              help="Input format (auto: detected from the first records).")
@_core_options
@click.option("--color/--no-color", default=None, help="Colour (default: when stdout is a terminal).")
@click.option("--width", type=click.IntRange(min=40), default=None,
              help="Columns of the side-by-side view (default: the terminal's, or 120).")
@click.option("--max-chars", type=click.IntRange(min=20), default=400, show_default=True,
              help="Longer strings are shortened in the view (the repair itself never shortens).")
@_model_option
def explain(input: str, fmt: str, profile: Profile, orphan_results: str, trailing_calls: str, stub_text: str,
            color: bool | None, width: int | None, max_chars: int) -> None:
    """Show what repair would change in INPUT, and why: per repair, the messages before
    and after side by side. Nothing is written. Meant for one session (it is held in memory).

    \b
    Examples:
      chatnorm explain examples/split-turns.jsonl
      chatnorm explain --profile mistral session.jsonl | less -R
    """
    from ._explain import run_explain

    _need_stdin([input], "no input: give a file, or pipe a session into it")
    if input != "-" and not os.path.isfile(input):
        raise click.UsageError(f"{input}: no such file")
    options = {"orphan_results": orphan_results, "trailing_calls": trailing_calls or "stub", "stub_text": stub_text}
    _validate_core(profile, options)
    try:
        status = run_explain(input, fmt=fmt, profile=profile, options=options, color=color, width=width,
                             max_chars=max_chars)
    except BrokenPipeError:
        raise _PipeClosed() from None
    if status:
        raise SystemExit(status)


# -- entry point ----------------------------------------------------------------------------------


class _PipeClosed(Exception):
    """stdout was closed by its reader (``| head``). Not an OSError: click turns an EPIPE
    OSError into exit status 1, and a reader that stopped early is not a failure of ours."""


# True while workers run (processes, or Dask tasks): a signal then only sets STOP, which the
# waiting loop sees; each worker stops at its next flush point and removes its temporary file.
_DEFER_SIGNALS = [False]
_SIGNAL = [0]


def _on_signal(signum: int, frame: Any) -> None:
    from ._repair import STOP, Interrupted

    _SIGNAL[0] = signum
    STOP.set()
    if not _DEFER_SIGNALS[0]:
        raise Interrupted(signum)


def _silence_stdout() -> None:
    # Python flushes stdout at exit; point it at devnull so that flush cannot fail again.
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def _escape_message(exc: click.ClickException) -> None:
    # click's messages quote what was typed (a file name, a value): escaped like all data.
    # (``message`` is Final in click's stubs only; it is a plain attribute.)
    setattr(exc, "message", printable(exc.message))  # noqa: B010


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``chatnorm`` console script (and of ``python -m normalizer``); returns the exit status."""
    from ._streams import guard_std_streams

    guard_std_streams()  # before anything asks a closed stream whether it is a terminal
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, _on_signal)
        signal.signal(signal.SIGTERM, _on_signal)
    status = _run(argv)
    try:
        sys.stdout.flush()  # what is still buffered is output too: its failure is one
    except BrokenPipeError:
        _silence_stdout()
    except OSError as exc:
        status = status or _stdout_failed(exc)
    except ValueError:
        pass  # stdout was closed by someone (a test harness): nothing is pending there
    return status


def _stdout_failed(exc: OSError) -> int:
    from ._streams import stdout_error

    say(f"error: {stdout_error(exc)}", err=True)
    _silence_stdout()  # else the interpreter's own flush at exit fails again, with a traceback
    return 1


def _run(argv: list[str] | None) -> int:
    from ._repair import Interrupted

    try:
        cli.main(args=argv, prog_name="chatnorm", standalone_mode=False)
    except (Interrupted, KeyboardInterrupt):
        from ._files import remove_live_temps

        remove_live_temps()  # what a signal caught between a temp's creation and its owner
        signum = _SIGNAL[0] or signal.SIGINT
        say(f"\ninterrupted ({signal.Signals(signum).name}): no output was left half-written", err=True)
        return 128 + signum
    except (BrokenPipeError, _PipeClosed):
        # The reader of our output went away (`| head`): it has what it wanted.
        _silence_stdout()
        return 0
    except click.exceptions.Abort:
        say("Aborted.", err=True)
        return 130
    except click.UsageError as exc:
        _escape_message(exc)
        exc.show()
        return 2
    except click.ClickException as exc:
        _escape_message(exc)
        exc.show()
        return 1
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 1
    except NormalizerError as exc:
        say(f"error: {error_text(exc)}", err=True)
        return 1
    except OSError as exc:
        # Every file we open or write reports its own failure (with its name) where it
        # happens; what reaches here is a write to stdout (/dev/full, ulimit -f, closed).
        return _stdout_failed(exc)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
