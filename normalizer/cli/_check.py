"""``chatnorm check``: every violation of a profile's rules, with where it is.

Each file is read as a stream of conversations and each conversation goes through its own
streaming ``Checker`` (constant memory). Violations are listed once a file is read, because
their lines come from a second read (``_lines``): up to ``max_per_file`` are kept per
file, the rest only counted, so memory stays bounded on a broken dataset too.

One line per violation, grep-friendly::

    examples/split-turns.jsonl:4: message 3: OA-3 [content.null] <provider's text>
"""

from __future__ import annotations

import sys
from typing import Any

from ._lines import lines_of
from ..profiles._check import DEFAULT_MAX_SEEN_IDS
from ._text import say
from .._errors import InputError
from .._report import Report
from ..formats import FORMATS, read_conversations

__all__ = ["run_check", "INCOMPLETE"]


#: Exit status of a check that found nothing but could not check everything (a limit was
#: reached): not 0, which would read as "clean", and not 1, which means violations.
INCOMPLETE = 3
#: The key of the warning ``Checker.close()`` ends with when it could not check everything.
_INCOMPLETE_KEY = "incomplete"


def run_check(files: list[str], *, fmt: str, profile: str, max_per_file: int, quiet: bool,
              max_seen_ids: int = DEFAULT_MAX_SEEN_IDS) -> int:
    """Check every file; print violations to stdout, errors and the summary to stderr.
    Returns the exit status: 1 when a violation of severity ``error`` was found or a file
    could not be read; else :data:`INCOMPLETE` when a conversation had more distinct call ids
    than ``max_seen_ids`` (past it, reused ids go unseen); else 0."""
    from ..profiles._check import Checker

    total = 0
    errors = 0
    warnings = 0
    bad_files = 0
    failed = 0
    messages = 0
    incomplete = 0
    echo = say
    for path in files:
        name = "<stdin>" if path == "-" else path
        report = Report(max_records=0)
        found: list[tuple[int, int | None, Any]] = []  # (conversation, conversation line, violation)
        count = 0
        multi = False
        file_incomplete = False
        try:
            source: Any = sys.stdin.buffer if path == "-" else path
            for conv in read_conversations(source, fmt, report=report):
                detected = fmt if fmt != "auto" else next(
                    (k[7:] for k in report.counts if k.startswith("format:")), None)
                multi = bool(getattr(FORMATS.get(detected or "", None), "multi", False))
                checker = Checker(profile, max_seen_ids=max_seen_ids)
                for message in conv.messages:
                    messages += 1
                    for v in checker.feed(message):
                        count += 1
                        if len(found) < max_per_file:
                            found.append((conv.index, conv.line, v))
                for v in checker.close():
                    if v.key == _INCOMPLETE_KEY:
                        continue  # not a violation: said below, with the option to raise
                    count += 1
                    if len(found) < max_per_file:
                        found.append((conv.index, conv.line, v))
                file_incomplete = file_incomplete or checker.incomplete
        except InputError as exc:
            if exc.source is None or exc.source in ("<input>", "<stream>"):
                exc.located(source=name)
            say(f"error: {exc}", err=True)
            failed += 1
        detected = fmt if fmt != "auto" else next((k[7:] for k in report.counts if k.startswith("format:")), None)
        lines: dict[int, int] = {}
        if found and not multi:
            lines = lines_of(path, detected, [v.index for _, _, v in found if v.index is not None])
        for conv_index, conv_line, v in found:
            if v.severity == "error":
                errors += 1
            else:
                warnings += 1
            echo(_format(name, conv_index, conv_line, multi, v, lines))
        if count > len(found):
            echo(f"{name}: ... and {count - len(found)} more violation(s) (--max-per-file)")
            errors += count - len(found)  # not listed, but still a failure
        if file_incomplete:
            # Said even with --quiet: without it a clean-looking result would be a false one.
            incomplete += 1
            echo(f"{name}: check incomplete: more than {max_seen_ids:,} distinct call ids in one "
                 "conversation, so ids past that were not checked for reuse (tool.duplicate_call_id). "
                 "Raise --max-seen-ids to check them all", err=True)
        total += count
        bad_files += bool(count)
    if not quiet:
        if total:
            summary = f"{total} violation{'s' if total != 1 else ''} in {bad_files} of {len(files)} file(s)"
            if warnings:
                summary += f" ({warnings} warning{'s' if warnings != 1 else ''})"
        else:
            summary = f"no violations: {len(files)} file(s), {messages} messages"
        summary += f" [profile {profile}]"
        if failed:
            summary += f"; {failed} file(s) could not be read"
        if incomplete:
            summary += f"; check incomplete for {incomplete} file(s) (--max-seen-ids)"
        echo(summary, err=True)
    if errors or failed:
        return 1
    return INCOMPLETE if incomplete else 0


def _format(name: str, conv_index: int, conv_line: int | None, multi: bool, v: Any, lines: dict[int, int]) -> str:
    where = name
    if multi:
        if conv_line is not None:
            where += f":{conv_line}"
        where += f": conversation {conv_index}"
        if v.index is not None:
            where += f" message {v.index}"
    elif v.index is not None:
        line = lines.get(v.index)
        where += f":{line}: message {v.index}" if line is not None else f": message {v.index}"
    else:
        where += ": the history"
    severity = "" if v.severity == "error" else " (warning)"
    return f"{where}: {v.rule}{severity} [{v.key}] {v.message}"
