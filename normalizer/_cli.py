"""The command line: ``normalizer repair [FILE]``.

Only wiring: a reader from ``normalizer.formats`` feeds the core, repaired messages go to
stdout as JSONL, the report summary to stderr. Imported only by the console script and
``python -m normalizer`` -- never by ``import normalizer`` -- so click stays out of the
library's import path.
"""

from __future__ import annotations

import os
import sys
from typing import IO, Any

import click
import orjson

from . import __version__
from ._core import Normalizer
from ._errors import NormalizerError
from ._options import DEFAULT_STUB_TEXT
from .formats import FORMATS, read_messages

__all__ = ["main", "cli"]

FORMAT_NAMES = ["auto", *FORMATS]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="normalizer")
def cli() -> None:
    """Repair LLM chat histories so strict providers accept them.

    \b
    Examples:
      normalizer repair session.jsonl > fixed.jsonl
      cat export.json | normalizer repair --from chat -
    """


@cli.command()
@click.argument("input", default="-", type=click.Path(allow_dash=True, dir_okay=False))
@click.option("--from", "fmt", type=click.Choice(FORMAT_NAMES), default="auto", show_default=True,
              help="Format of INPUT.")
@click.option("--orphan-results", type=click.Choice(["drop", "keep_as_user", "error"]), default="drop",
              show_default=True, help="What to do with a tool result that answers no call.")
@click.option("--trailing-calls", type=click.Choice(["stub", "keep", "drop"]), default="stub",
              show_default=True, help="Calls still unanswered at the end of the input.")
@click.option("--stub-text", default=DEFAULT_STUB_TEXT, show_default=True,
              help="Content of the synthetic result of an unanswered call.")
@click.option("--on-invalid", type=click.Choice(["error", "skip"]), default="error", show_default=True,
              help="An invalid line or message stops the run, or is skipped and recorded.")
@click.option("--report", "report_path", type=click.Path(allow_dash=True, dir_okay=False),
              help="Write the full JSON report here ('-' for stderr).")
@click.option("-q", "--quiet", is_flag=True, help="No summary on stderr.")
def repair(input: str, fmt: str, orphan_results: str, trailing_calls: str, stub_text: str,
           on_invalid: str, report_path: str | None, quiet: bool) -> None:
    """Repair the chat history in INPUT (a file, or - for stdin) and write it as JSONL.

    \b
    Examples:
      normalizer repair examples/split-turns.jsonl
      normalizer repair --from codex rollout.jsonl --report report.json > chat.jsonl
    """
    core = Normalizer(
        orphan_results=orphan_results, trailing_calls=trailing_calls, stub_text=stub_text,
        on_invalid=on_invalid,
    )
    name = "<stdin>" if input == "-" else input
    stdout = sys.stdout.buffer
    try:
        messages = read_messages(input, fmt, on_invalid=on_invalid)  # type: ignore[arg-type]
        _write(stdout, core, messages)
    except NormalizerError as exc:
        located = getattr(exc, "located", None)
        if located is not None and getattr(exc, "source", None) is None:
            located(source=name)
        raise click.ClickException(str(exc)) from None
    except BrokenPipeError:
        # The reader of our output went away (`| head`): not an error of ours.
        _silence_stdout()
        return
    report = core.report
    if report_path:
        data = report.model_dump_json(indent=2)
        if report_path == "-":
            click.echo(data, err=True)
        else:
            with open(report_path, "w", encoding="utf-8") as f:
                f.write(data + "\n")
    if not quiet:
        click.echo(f"{name}: {report.summary()}", err=True)


def _write(out: IO[bytes], core: Normalizer, messages: Any) -> None:
    dumps = orjson.dumps
    newline = orjson.OPT_APPEND_NEWLINE
    write = out.write
    feed = core.feed
    for message in messages:
        for repaired in feed(message):
            write(dumps(repaired, option=newline))
    for repaired in core.close():
        write(dumps(repaired, option=newline))
    out.flush()


def _silence_stdout() -> None:
    # Python flushes stdout at exit; point it at devnull so that flush cannot fail again.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``normalizer`` console script; returns the exit status."""
    try:
        cli.main(args=argv, prog_name="normalizer", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        return 130
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code if exc.exit_code != 1 else (2 if isinstance(exc, click.UsageError) else 1)
    except click.exceptions.Exit as exc:
        return exc.exit_code
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
