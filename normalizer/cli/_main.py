"""The command line: ``chatnorm repair | check | explain``.

Only wiring around the library: files are found, paired with outputs and repaired by the
batch engine (``normalizer.batch``), run for ``repair`` by ``_commands_repair.py``; checked
in ``_check.py`` (run by ``_commands_check.py``), explained in ``_explain.py``; the progress
display is ``_progress.py``. This module declares the commands and their options (the shared
ones are ``_options.py``), turns every failure into one sentence on stderr and an exit
status, and handles signals. Imported only by the console script and ``python -m normalizer`` -- never by
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

import os
import signal
import sys
from typing import TYPE_CHECKING

import click

from .._defaults import DEFAULT_MAX_SEEN_IDS, OnInvalid
from .._errors import NormalizerError
from ..batch.stop import SIGNAL, Interrupted, interrupted_line, settle
from ..batch.stop import install as install_signals
from ._choices import Choice, command_line_values, python_value
from ._common import _RUNNING, _missing_text, _need_stdin, _PipeClosed, _validate_core
from ._options import _CONTEXT, _core_options, _given, _model_option, _Profile, _profile_names, _reader_options
from ._text import error_text, printable, say
from ._version import VERSION_FLAGS, version_line

if TYPE_CHECKING:
    from ..profiles._profiles import Profile

__all__ = ["main", "cli"]

# The format names as the registry (formats._registry) lists them, written out: importing the
# registry loads every converter, which `chatnorm --help` need not pay for.
# tests/cli/test_declared_once.py holds them to it.
_FROM = ["auto", "chat", "responses", "codex", "claude-code", "gemini-cli", "opencode", "anthropic", "gemini", "sharegpt", "finetune"]
_TO = ["auto", "jsonl", "json", "finetune", "responses", "anthropic", "gemini", "claude-code", "codex", "gemini-cli"]




def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if value and not ctx.resilient_parsing:
        click.echo(version_line())
        ctx.exit()


@click.group(context_settings=_CONTEXT)
@click.option(*VERSION_FLAGS, is_flag=True, expose_value=False, is_eager=True, callback=_print_version,
              help="Show the version, and which build runs (compiled or pure Python), and exit.")
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



# -- repair ---------------------------------------------------------------------------------------


@cli.command(context_settings=_CONTEXT, short_help="Repair files, folders or stdin (to stdout, -o, or --in-place).")
@click.argument("inputs", nargs=-1, metavar="[INPUT]...")
@click.option("--from", "fmt", type=click.Choice(_FROM), default="auto", show_default=True,
              help="Input format (auto: detected from the first records).")
@click.option("--to", "to", type=click.Choice(_TO), default="auto", show_default=True,
              help="Output: jsonl (chat messages, one per line), json (one array), finetune "
                   "({\"messages\": [...]} per line), responses (OpenAI Responses input items), anthropic "
                   "(an Anthropic Messages request), claude-code / codex / gemini-cli (the session repaired in "
                   "its own format, with the fewest edits). auto: a Claude Code, Codex or Gemini CLI session in its "
                   "own format "
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
@click.option("--on-invalid", type=Choice(command_line_values(OnInvalid), deprecated={"fail": "error"}), default="error",
              show_default=True, help="A line or message that is not valid: fail the file with an error, or skip "
                                      "it (kept in the report); on_invalid in Python.")
@_core_options
@_reader_options
@click.option("--check", "check_only", is_flag=True,
              help="Write nothing; exit 1 if the repair would change anything (lists those files).")
@click.option("--diff", "diff", is_flag=True,
              help="Write nothing; print a unified diff of what the repair would change (exit 1 if anything).")
@click.option("-q", "--quiet", is_flag=True, help="No progress display and no summary (errors are still shown).")
@_model_option
def repair(inputs: tuple[str, ...], fmt: str, to: str, output: str | None, in_place: bool, backup: str | None,
           report_path: str | None, jobs: int, engine: str, scheduler: str | None, on_invalid: str, profile: Profile,
           orphan_results: str, trailing_calls: str, stub_text: str, session: str | None, check_only: bool, diff: bool,
           quiet: bool) -> None:
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
    from ._commands_repair import run_repair

    run_repair(inputs, fmt=fmt, to=to, output=output, in_place=in_place, backup=backup, report_path=report_path,
               jobs=jobs, engine=engine, scheduler=scheduler, on_invalid=on_invalid, profile=profile,
               orphan_results=orphan_results, trailing_calls=trailing_calls, stub_text=stub_text,
               reader_options=_given(session=session), check_only=check_only, diff=diff, quiet=quiet)



# -- check ----------------------------------------------------------------------------------------



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
@_reader_options
@_model_option
def check(inputs: tuple[str, ...], fmt: str, profile: Profile, output_format: str, select: tuple[str, ...],
          ignore: tuple[str, ...], purpose: str | None, statistics: bool, exit_zero: bool, color: bool | None,
          max_per_file: int, max_seen_ids: int, quiet: bool, session: str | None) -> None:
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
    from ._commands_check import run_check_command

    run_check_command(inputs, fmt=fmt, profile=profile, output_format=output_format, select=select, ignore=ignore,
                      purpose=purpose, statistics=statistics, exit_zero=exit_zero, color=color,
                      max_per_file=max_per_file, max_seen_ids=max_seen_ids, quiet=quiet,
                      reader_options=_given(session=session))


# -- explain --------------------------------------------------------------------------------------


@cli.command(context_settings=_CONTEXT, short_help="Show each repair: the messages before and after, side by side.")
@click.argument("input", default="-", metavar="INPUT")
@click.option("--from", "fmt", type=click.Choice(_FROM), default="auto", show_default=True,
              help="Input format (auto: detected from the first records).")
@_core_options
@_reader_options
@click.option("--color/--no-color", default=None, help="Colour (default: when stdout is a terminal).")
@click.option("--width", type=click.IntRange(min=40), default=None,
              help="Columns of the side-by-side view (default: the terminal's, or 120).")
@click.option("--max-chars", type=click.IntRange(min=20), default=400, show_default=True,
              help="Longer strings are shortened in the view (the repair itself never shortens).")
@click.option("--pager/--no-pager", default=True, show_default=True,
              help="On a terminal, show the view in a pager ($PAGER, else less).")
@_model_option
def explain(input: str, fmt: str, profile: Profile, orphan_results: str, trailing_calls: str, stub_text: str,
            session: str | None, color: bool | None, width: int | None, max_chars: int, pager: bool) -> None:
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
                             max_chars=max_chars, pager=pager, reader_options=_given(session=session))
    except BrokenPipeError:
        raise _PipeClosed() from None
    if status:
        raise SystemExit(status)


# -- entry point ----------------------------------------------------------------------------------



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
