"""The command line: ``chatnorm repair | check | explain``.

Only wiring around the library: files are found and paired with outputs in
``_files.py``, repaired in ``_repair.py``, checked in ``_check.py``, explained in
``_explain.py``; the progress display is ``_progress.py``. This module parses the
arguments, turns every failure into one sentence on stderr and an exit status, and handles
signals. Imported only by the console script and ``python -m normalizer`` -- never by
``import normalizer`` -- so click and rich stay out of the library's import path.

Exit status: 0 done; 1 some input failed, ``check`` found violations, or ``repair
--check``/``--diff`` found something to change; 2 usage error; 3 ``check`` found nothing but
is incomplete (a limit was reached); 130 / 143 interrupted by SIGINT / SIGTERM (output files
are then not written at all; what reached stdout is said).

Settings not given on the command line come from ``[tool.chatnorm]`` in the nearest
``pyproject.toml`` (``_config``); check's output formats are ``_report_formats``, its root
causes ``_findings``, ``repair --check``/``--diff`` is ``_diff``.
"""

from __future__ import annotations

import functools

import contextlib
import os
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, TypeAlias

import click
import orjson

from .. import __version__
from .._defaults import DEFAULT_MAX_SEEN_IDS, DEFAULT_STUB_TEXT
from ._choices import Choice, python_value
from ..batch.stop import DEFER, SIGNAL, Interrupted, interrupted_line, settle
from ..batch.stop import install as install_signals
from ._text import error_text, printable, say
from .._errors import NormalizerError

if TYPE_CHECKING:
    from ..profiles._profiles import Profile
    from ..batch.report import Totals
    from ..batch.results import FileResult

__all__ = ["main", "cli"]

_FROM = ["auto", "chat", "responses", "codex", "claude-code", "anthropic", "sharegpt", "finetune"]
_TO = ["auto", "jsonl", "json", "finetune", "responses", "anthropic", "claude-code", "codex"]


def _profile_names() -> list[str]:
    # From the ProfileName literal (kept in step with PROFILES by tests/test_types.py), not
    # from PROFILES: declaring the options must not load the profiles (start-up time).
    import typing

    from .._types import ProfileName

    return sorted(n for n in typing.get_args(ProfileName) if ":" not in n)


if TYPE_CHECKING:
    # click 8.5 made ParamType generic (value and return types); subscripting it at run time
    # fails on every earlier click that the floor in pyproject.toml admits.
    _ParamType: TypeAlias = click.ParamType["Profile", Any]
else:
    _ParamType = click.ParamType


class _Profile(_ParamType):
    """A built-in profile name, or a path to a TOML/JSON profile file: resolved here, once
    per run (a file is read once), and passed down as the ``Profile`` itself."""

    name = "profile"

    def convert(self, value: Any, param: Any, ctx: Any) -> Profile:
        from ..profiles._profiles import get_profile

        if isinstance(value, str) and ctx is not None:
            ctx.meta["profile_text"] = value  # as typed, for hints that repeat the command
        try:
            return get_profile(value)  # a Profile is returned as it is (click converts defaults too)
        except NormalizerError as exc:
            self.fail(str(exc), param, ctx)


# "--help" first: click before 8.4 names the first one in "Try ... for help" (8.4 names
# "--help" whatever the order); the help lists them shortest first either way.
_CONTEXT = {"help_option_names": ["--help", "-h"], "max_content_width": 100}


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
      chatnorm repair --diff session.jsonl
      chatnorm check --profile mistral train.jsonl
      chatnorm check --output-format github sessions/
      chatnorm explain session.jsonl

    Settings a project always uses can live in pyproject.toml, under [tool.chatnorm].

    Exit status: 0 done, 1 an input failed, check found violations or repair --check found
    changes, 2 usage error, 3 check found nothing but is incomplete (see check --help),
    130/143 interrupted (nothing half-written is left behind).
    """


def _model_option(f: Any) -> Any:
    """``--model NAME``, ``--config FILE`` and ``--isolated``, and what they decide before
    the command runs: the profile (``--profile``, else the profile of ``--model``
    (``normalizer.profile_for_model``), else ``[tool.chatnorm]``'s ``profile`` or ``model``,
    else the default) and every option not given on the command line that the
    configuration sets (``_config``). ``ctx.meta["repair"]`` is the repair command that
    uses the same profile (check's hint)."""

    @functools.wraps(f)
    def command(*args: Any, model: str | None, config: str | None, isolated: bool, **kwargs: Any) -> Any:
        from ._config import ConfigError, find_config

        ctx = click.get_current_context()

        def unset(name: str) -> bool:
            return ctx.get_parameter_source(name) is click.core.ParameterSource.DEFAULT

        items = list(kwargs["inputs"]) if "inputs" in kwargs else [kwargs.get("input", "-")]
        try:
            cfg = find_config(items or ["-"], config=config, isolated=isolated)
        except ConfigError as exc:
            raise click.UsageError(str(exc)) from None
        hint = "chatnorm repair"
        if not unset("profile"):
            hint += f" --profile {ctx.meta.get('profile_text') or kwargs['profile'].name}"
        elif model is not None:
            from ..profiles._models import profile_for_model  # only with --model: start-up of the rest

            kwargs["profile"] = profile_for_model(model)
            hint += f" --model {model}"
        elif cfg.profile is not None or cfg.model is not None:
            kwargs["profile"] = _configured_profile(cfg)
        ctx.meta["repair"] = hint
        for name in ("trailing_calls", "orphan_results", "on_invalid", "stub_text"):
            value = cfg.options.get(name.replace("_", "-"))
            if name in kwargs and value is not None and unset(name):
                kwargs[name] = _configured_option(ctx, name, value, cfg.path)
        for name in ("select", "ignore"):
            if name in kwargs and unset(name):
                kwargs[name] = tuple(getattr(cfg, name))
        if "purpose" in kwargs and unset("purpose") and cfg.purpose is not None:
            kwargs["purpose"] = cfg.purpose
        return f(*args, **kwargs)

    for decorator in reversed([  # click lists options in the order they are applied, last first
        click.option("--model", default=None, metavar="NAME",
                     help="The model the history is sent to (e.g. mistral-small-2506, Llama-3.1-8B-Instruct): "
                          "picks its profile from the model table (README); --profile wins over it."),
        click.option("--config", default=None, metavar="FILE", type=click.Path(dir_okay=False),
                     help="Settings from this TOML file's [tool.chatnorm] table (default: the nearest "
                          "pyproject.toml with one, from the inputs' folder upwards)."),
        click.option("--isolated", is_flag=True, help="Ignore every configuration file."),
    ]):
        command = decorator(command)
    return command


def _configured_profile(cfg: Any) -> Profile:
    from ..profiles._models import profile_for_model
    from ..profiles._profiles import get_profile

    try:
        return get_profile(cfg.profile) if cfg.profile is not None else profile_for_model(cfg.model)
    except NormalizerError as exc:
        raise click.UsageError(f"{cfg.path}: [tool.chatnorm] profile: {exc}") from None


def _configured_option(ctx: click.Context, name: str, value: str, path: str | None) -> Any:
    param = next(p for p in ctx.command.params if p.name == name)
    try:
        return param.type.convert(value, param, ctx)
    except click.BadParameter as exc:
        raise click.UsageError(f"{path}: [tool.chatnorm.options] {name.replace('_', '-')}: {exc.message}") from None


# -- repair ---------------------------------------------------------------------------------------


def _core_options(f: Any) -> Any:
    for decorator in reversed([
        click.option("--profile", default="default", show_default=True, type=_Profile(),
                     help="Provider profile: which rules the output must meet "
                          f"({', '.join(_profile_names())}, or a TOML/JSON file)."),
        click.option("--orphan-results", type=Choice(["drop", "keep-as-user", "error"],
                                                     deprecated={"keep_as_user": "keep-as-user"}),
                     default="drop", show_default=True,
                     help="A tool result that answers no call: drop it (kept in the report), turn it into user "
                          "text, or fail (orphan_results in Python)."),
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
                   "({\"messages\": [...]} per line), responses (OpenAI Responses input items), anthropic "
                   "(an Anthropic Messages request), claude-code / codex (the session repaired in its own "
                   "format, with the fewest edits). auto: a Claude Code or Codex session in its own format "
                   "(unless --profile asks for a provider's chat messages); with --in-place every file in its "
                   "own format; else jsonl, or finetune for inputs holding several conversations.")
@click.option("-o", "--output", type=str, default=None, metavar="PATH",
              help="Output file, or a folder mirroring the inputs (several inputs or a folder). "
                   "Default: stdout.")
@click.option("--in-place", is_flag=True, help="Replace each input file with its repaired version, in its own "
                                               "format unless --to says otherwise (only once the new file is "
                                               "complete; a file in which nothing was recognised is left as it is).")
@click.option("--backup", "backup", default=None, metavar="[=SUFFIX]",
              help="With --in-place: keep each original next to it, as FILE.bak (--backup=SUFFIX: FILE + SUFFIX).")
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
@click.option("--on-invalid", type=Choice(["error", "skip"], deprecated={"fail": "error"}), default="error",
              show_default=True, help="A line or message that is not valid: fail the file with an error, or skip "
                                      "it (kept in the report); on_invalid in Python.")
@_core_options
@click.option("--check", "check_only", is_flag=True,
              help="Write nothing; exit 1 if the repair would change anything (lists those files).")
@click.option("--diff", "diff", is_flag=True,
              help="Write nothing; print a unified diff of what the repair would change (exit 1 if anything).")
@click.option("-q", "--quiet", is_flag=True, help="No progress display and no summary (errors are still shown).")
@_model_option
def repair(inputs: tuple[str, ...], fmt: str, to: str, output: str | None, in_place: bool, backup: str | None,
           report_path: str | None, jobs: int, engine: str, scheduler: str | None, on_invalid: str, profile: Profile,
           orphan_results: str, trailing_calls: str, stub_text: str, check_only: bool, diff: bool, quiet: bool) -> None:
    """Repair chat histories: INPUT is a file, a folder (every .jsonl/.json/.ndjson file in it,
    recursively) or - for stdin (the default).

    The repaired messages go to stdout, to -o FILE, into -o DIR (mirroring the input tree),
    or over the inputs (--in-place). Files are written to a temporary file next to them and
    renamed when complete. A summary goes to stderr, and a progress display when stderr is
    a terminal.

    \b
    Examples:
      chatnorm repair examples/split-turns.jsonl
      chatnorm repair --in-place ~/.claude/projects/<project>/<session>.jsonl
      chatnorm repair --from codex --to jsonl rollout.jsonl --report report.json > chat.jsonl
      chatnorm repair --to anthropic history.json -o request.json
      cat session.jsonl | chatnorm repair - | head
      chatnorm repair sessions/ -o repaired/ --jobs 4
      chatnorm repair sessions/ -o repaired/ --engine dask --scheduler tcp://10.0.0.5:8786
      chatnorm repair --in-place --trailing-calls keep sessions/
      chatnorm repair --to finetune --on-invalid skip train.jsonl -o train.fixed.jsonl
      chatnorm repair --check sessions/            # exit 1 if anything would change
      chatnorm repair --diff session.jsonl | less  # what would change
    """
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
                      writes=[flag for flag, given in (("-o", output is not None), ("--in-place", in_place), ("--backup", backup is not None),
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
                            spool_dir=spool_dir, backup=backup)
        _repair(plan, settings, jobs=jobs, quiet=quiet, report_path=report_path, missing=missing, engine=engine,
                scheduler=scheduler)


def _repair_check(items: list[str], *, fmt: str, to: str, profile: Profile, on_invalid: str, diff: bool,
                  quiet: bool, options: dict[str, Any], writes: list[str]) -> None:
    """``repair --check`` / ``--diff``: nothing is written (``_diff``)."""
    from ._diff import run_compare
    from ..batch.plan import Job, PlanError, expand_inputs
    from ..batch.results import Settings

    flag = "--diff" if diff else "--check"
    if writes:
        raise click.UsageError(f"{flag} writes nothing: drop {' and '.join(writes)}")
    missing: list[str] = []
    try:
        found = [path for path, _, _ in expand_inputs(items, missing=missing)]
    except PlanError as exc:
        raise click.UsageError(str(exc)) from None
    if options["trailing_calls"] is None:
        del options["trailing_calls"]  # decided per input: see batch.results.core_options
    _validate_core(profile, options)
    settings = Settings(fmt=fmt, to=to, profile=profile, on_invalid=on_invalid, options=options)
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


def _need_stdin(items: list[str], no_input: str, *, implicit: bool) -> None:
    """Refuse to read stdin when it is closed, or when it is the terminal and no input was
    given at all (the user forgot the file: waiting for typed JSON would look like a hang).
    An explicit ``-`` on a terminal is read (pasted or typed), with a word on how to end it."""
    from ._streams import stdin_closed

    if "-" in items and stdin_closed():
        raise click.UsageError("stdin is closed: give a file or a folder, or pipe a session into it")
    if "-" in items and sys.stdin.isatty():
        if implicit:
            raise click.UsageError(no_input)
        if sys.stderr.isatty():
            say("reading <stdin> from the terminal: paste or type the history, then press Ctrl-D", err=True)


def _missing_text(path: str) -> str:
    return f"{path}: no such file or folder. Check the path"


def _validate_core(profile: Profile, options: dict[str, Any]) -> None:
    # Wrong options are usage errors (exit 2) before any file is touched.
    from .._core import Normalizer

    try:
        Normalizer(profile, **options)
    except NormalizerError as exc:
        raise click.UsageError(str(exc)) from None


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


# -- check ----------------------------------------------------------------------------------------


def _codes(values: tuple[str, ...]) -> list[str]:
    """``--select OA-1,MI --select tool`` -> ``["OA-1", "MI", "tool"]``."""
    return [code.strip() for value in values for code in value.split(",") if code.strip()]


@cli.command(context_settings=_CONTEXT, short_help="List what a provider would reject (exit 1 if anything).")
@click.argument("inputs", nargs=-1, metavar="[INPUT]...")
@click.option("--from", "fmt", type=click.Choice(_FROM), default="auto", show_default=True,
              help="Input format (auto: detected from the first records).")
@click.option("--profile", default="default", show_default=True, type=_Profile(),
              help=f"Whose rules to check against ({', '.join(_profile_names())}, or a TOML/JSON file).")
@click.option("--output-format", type=click.Choice(["text", "concise", "json", "github", "sarif"]), default="text",
              show_default=True, help="text: a line per finding, root causes with their consequences under them; "
                                      "concise: a line per problem; json: a list of findings; github: GitHub "
                                      "Actions annotations; sarif: a SARIF 2.1.0 log.")
@click.option("--select", multiple=True, metavar="CODES",
              help="Report only these rule codes (comma-separated, repeatable): a rule (OA-1), a provider's "
                   "rules (OA), a key (tool.unanswered_call) or a category (tool). Default: all.")
@click.option("--ignore", multiple=True, metavar="CODES", help="Do not report these codes (same forms as --select).")
@click.option("--purpose", type=click.Choice(["serving", "training"]), default=None,
              help="training: fine-tuning data, which may end on the assistant (serving-only rules and calls "
                   "left open at the end are not reported). Default: training for the fine-tuning formats "
                   "(finetune, sharegpt), serving otherwise.")
@click.option("--statistics", is_flag=True, help="Print how many findings each code has, instead of the findings.")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when violations are found (an unreadable input is "
                                                "still exit 1).")
@click.option("--color/--no-color", default=None, help="Colour (default: when stdout is a terminal and NO_COLOR "
                                                       "is not set).")
@click.option("--max-per-file", type=click.IntRange(min=0), default=1000, show_default=True,
              help="Problems listed per file (all are counted).")
@click.option("--max-seen-ids", type=click.IntRange(min=1), default=DEFAULT_MAX_SEEN_IDS, show_default=True,
              help="Distinct call ids remembered per conversation to find an id reused across turns "
                   "(~100 bytes each). Past it the check is incomplete (exit 3).")
@click.option("-q", "--quiet", is_flag=True, help="No summary line.")
@_model_option
def check(inputs: tuple[str, ...], fmt: str, profile: Profile, output_format: str, select: tuple[str, ...],
          ignore: tuple[str, ...], purpose: str | None, statistics: bool, exit_zero: bool, color: bool | None,
          max_per_file: int, max_seen_ids: int, quiet: bool) -> None:
    """List what a provider would reject, changing nothing: for each violation the file,
    line and column, the message, the rule code and the provider's error text; a violation
    that follows from another (a turn stored in pieces, a message between calls and their
    results) is listed under its root cause. Exit status 1 when there is any: a CI gate for
    stored histories and training data.

    check lists what a provider rejects. repair may still change more (it also normalizes
    what no provider requires, such as "" next to calls): `chatnorm repair --check` says
    whether it would change anything, `--diff` shows it.

    Settings can live in pyproject.toml ([tool.chatnorm]: profile, select, ignore, purpose).

    Exit status: 0 no violations (or --exit-zero); 1 violations, or an input could not be
    read; 2 usage error; 3 no violations found, but the check is incomplete (a conversation
    had more distinct call ids than --max-seen-ids: raise it to check every id for reuse).

    \b
    Examples:
      chatnorm check examples/split-turns.jsonl
      chatnorm check --profile mistral --purpose training train.jsonl
      chatnorm check --output-format github --select OA,tool sessions/
      chatnorm check --statistics sessions/
      chatnorm repair session.jsonl | chatnorm check -
    """
    from ._check import CheckSettings, run_check
    from ..batch.plan import PlanError, expand_inputs
    from ._findings import Selection, SelectorError
    from ._report_formats import make_output

    if statistics and output_format == "sarif":
        raise click.UsageError("--statistics has no SARIF form: use --output-format text or json with it")
    try:
        selection = Selection(_codes(select), _codes(ignore))
    except SelectorError as exc:
        raise click.UsageError(str(exc)) from None
    items = list(inputs) or ["-"]
    _need_stdin(items, "no input: give a file or a folder, or pipe a session into it", implicit=not inputs)
    missing: list[str] = []
    try:
        files = [path for path, _, _ in expand_inputs(items, missing=missing)]
    except PlanError as exc:
        raise click.UsageError(str(exc)) from None
    if not files and not missing:
        raise click.UsageError(f"no session files in {', '.join(items)}")
    colour = color if color is not None else (sys.stdout.isatty() and not os.environ.get("NO_COLOR"))
    settings = CheckSettings(fmt=fmt, profile=profile, max_per_file=max_per_file, max_seen_ids=max_seen_ids,
                             quiet=quiet, selection=selection, purpose=purpose, exit_zero=exit_zero,
                             repair=click.get_current_context().meta.get("repair", "chatnorm repair"))
    _RUNNING.update(command="check")
    try:
        status = run_check(files, settings, make_output(output_format, statistics=statistics, colour=colour),
                           missing=missing)
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
@click.option("--pager/--no-pager", default=True, show_default=True,
              help="On a terminal, show the view in a pager ($PAGER, else less).")
@_model_option
def explain(input: str, fmt: str, profile: Profile, orphan_results: str, trailing_calls: str, stub_text: str,
            color: bool | None, width: int | None, max_chars: int, pager: bool) -> None:
    """Show what repair would change in INPUT, and why: per repair, the messages before
    and after side by side, the lines that differ marked - and + (red and green on a
    terminal). Nothing is written. Meant for one session (it is held in memory). On a
    terminal the view goes through a pager ($PAGER, else less; --no-pager prints it).

    \b
    Examples:
      chatnorm explain examples/split-turns.jsonl
      chatnorm explain --profile mistral session.jsonl | less -R
    """
    from ._explain import run_explain

    implicit = click.get_current_context().get_parameter_source("input") is click.core.ParameterSource.DEFAULT
    _need_stdin([input], "no input: give a file, or pipe a session into it", implicit=implicit)
    if input != "-" and not os.path.exists(input):
        say(f"error: {_missing_text(input)}", err=True)
        raise SystemExit(1)
    if input != "-" and not os.path.isfile(input):
        raise click.UsageError(f"{input}: is a folder; explain shows one session file")
    options = {"orphan_results": python_value(orphan_results), "trailing_calls": trailing_calls or "stub",
               "stub_text": stub_text}
    _validate_core(profile, options)
    try:
        status = run_explain(input, fmt=fmt, profile=profile, options=options, color=color, width=width,
                             max_chars=max_chars, pager=pager)
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

    install_signals()  # (already, by normalizer.cli.main, before this module was imported)
    guard_std_streams()  # before anything asks a closed stream whether it is a terminal
    status = _run(_bare_backup(sys.argv[1:] if argv is None else argv))
    try:
        sys.stdout.flush()  # what is still buffered is output too: its failure is one
    except BrokenPipeError:
        _silence_stdout()
    except OSError as exc:
        status = status or _stdout_failed(exc)
    except ValueError:
        pass  # stdout was closed by someone (a test harness): nothing is pending there
    return status


def _bare_backup(argv: list[str]) -> list[str]:
    """``--backup`` alone means ``--backup=.bak``: its value is optional, and only ever given
    with ``=`` (``--backup FILE`` must not take the file as a suffix, as click would)."""
    if "repair" not in argv:
        return argv
    end = argv.index("--") if "--" in argv else len(argv)
    return [("--backup=.bak" if arg == "--backup" and i < end else arg) for i, arg in enumerate(argv)]


def _stdout_failed(exc: OSError) -> int:
    from ._streams import stdout_error

    say(f"error: {stdout_error(exc)}", err=True)
    _silence_stdout()  # else the interpreter's own flush at exit fails again, with a traceback
    return 1


#: What the running command writes, for the words of an interrupted run: its name, and for
#: repair where the output goes ("stdout", "files" or "in-place").
_RUNNING: dict[str, str] = {}


def _left_behind() -> str:
    """What an interrupted run leaves behind, as it is: stdout may hold part of the output
    (counted), output files are complete or absent (never half-written)."""
    from ..batch.tracking import WRITTEN

    command = _RUNNING.get("command")
    if command == "check":
        return "the check did not finish; the findings above are those of the files checked so far"
    if command != "repair":
        return "stopped"
    lines, files = WRITTEN.stdout_lines, WRITTEN.files
    if _RUNNING.get("output") == "stdout":
        if not lines:
            return "nothing was written to stdout"
        return f"the output on stdout is incomplete ({lines:,} line{'s' if lines != 1 else ''} had been written)"
    done = f"{files:,} file{'s' if files != 1 else ''}"
    if _RUNNING.get("output") == "in-place":
        if not files:
            return "no input was changed (none was left half-written)"
        return f"{done} had been replaced by their repair; the others are unchanged (none was left half-written)"
    if not files:
        return "no output file was written (none was left half-written)"
    return f"{done} had been written; no output was left half-written"


def _run(argv: list[str] | None) -> int:
    try:
        cli.main(args=argv, prog_name="chatnorm", standalone_mode=False)
    except (Interrupted, KeyboardInterrupt):
        settle()  # from here on a signal only notes itself: the line below is said once
        from ..batch.outputs import remove_live_temps

        remove_live_temps()  # what a signal caught between a temp's creation and its owner
        signum = SIGNAL[0] or signal.SIGINT
        say(interrupted_line(signum, _left_behind()), err=True)
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
