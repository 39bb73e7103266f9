"""``chatnorm check``: every violation of a profile's rules, with where it is.

Each file is read as a stream of conversations and each conversation goes through its own
streaming ``Checker`` (constant memory). A finding is placed as it is made, from the
positions the reader carries (``ConversationStream.position``: JSONL, JSON documents and
stdin alike): up to ``max_per_file`` are kept per file, the rest only counted, so memory
stays bounded on a broken dataset too.

A finding names the message it was found at, or, for a call found unanswered when its block
of results ends, the assistant message that made the call: those two positions are the
ones kept (:class:`_Places`). In a file of several conversations, a finding is placed at its
conversation's record.

One line per violation, grep-friendly (the form of the CLI's errors)::

    examples/split-turns.jsonl:4:1: message 3: OA-3 [content.null] <provider's text>
"""

from __future__ import annotations

import sys
from typing import Any

from ..profiles._check import DEFAULT_MAX_SEEN_IDS
from ..profiles._profiles import Profile
from ._text import error_text, say
from .._errors import InputError
from .._report import Report
from ..formats import FORMATS, ConversationStream, Position, read_conversations

__all__ = ["run_check", "INCOMPLETE"]


#: Exit status of a check that found nothing but could not check everything (a limit was
#: reached): not 0, which would read as "clean", and not 1, which means violations.
INCOMPLETE = 3
#: The key of the warning ``Checker.close()`` ends with when it could not check everything.
_INCOMPLETE_KEY = "incomplete"


class _Places:
    """Where the findings of one conversation are (see the module docstring)."""

    def __init__(self, stream: ConversationStream, name: str, conversation: int | None) -> None:
        self.stream = stream
        self.name = name
        # A file of several conversations: every finding is placed at the conversation's record.
        self.conversation = conversation
        self.record = stream.position if conversation is not None else None
        self.index = -1  # the message just fed to the checker
        self.calls: tuple[int, Position | None] | None = None  # the last assistant message with calls

    def check(self, checker: Any, message: Any) -> list[tuple[str, Any]]:
        """``checker.feed(message)``'s findings, each with where it is."""
        self.index += 1
        found = [(self.where(v.index), v) for v in checker.feed(message)]
        # Kept after placing them: this message's findings may name the calls message before it.
        if self.conversation is None and isinstance(message, dict) and message.get("role") == "assistant" \
                and message.get("tool_calls"):
            self.calls = (self.index, self.stream.position)
        return found

    def close(self, checker: Any) -> list[tuple[str, Any]]:
        """``checker.close()``'s findings, each with where it is ("incomplete" is not one:
        it is said apart, with the option to raise)."""
        return [(self.where(v.index), v) for v in checker.close() if v.key != _INCOMPLETE_KEY]

    def where(self, index: int | None) -> str:
        """``FILE:LINE:COL: [conversation C ]message N`` (the parts known), or ``FILE: the history``."""
        position = self._position(index)
        where = self.name if position is None else f"{self.name}:{position.line}:{position.column}"
        what = [] if self.conversation is None else [f"conversation {self.conversation}"]
        if index is not None:
            what.append(f"message {index}")
        elif self.conversation is None:
            what.append("the history")
        return f"{where}: {' '.join(what)}"

    def _position(self, index: int | None) -> Position | None:
        if self.conversation is not None:
            return self.record
        if index is not None and index == self.index:
            return self.stream.position
        if self.calls is not None and index == self.calls[0]:
            return self.calls[1]
        return None


def _keep(placed: list[tuple[str, Any]], found: list[tuple[str, Any]], count: int, limit: int) -> int:
    """Count the findings, keep the file's first ``limit``; returns the count."""
    found.extend(placed[: max(limit - len(found), 0)])
    return count + len(placed)


def run_check(files: list[str], *, fmt: str, profile: Profile, max_per_file: int, quiet: bool,
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
        found: list[tuple[str, Any]] = []  # (where, violation)
        count = 0
        file_incomplete = False
        try:
            source: Any = sys.stdin.buffer if path == "-" else path
            stream = read_conversations(source, fmt, report=report)
            for conv in stream:
                multi = bool(getattr(FORMATS.get(stream.format or ""), "multi", False))
                checker = Checker(profile, max_seen_ids=max_seen_ids)
                places = _Places(stream, name, conv.index if multi else None)
                for message in conv.messages:
                    messages += 1
                    count = _keep(places.check(checker, message), found, count, max_per_file)
                count = _keep(places.close(checker), found, count, max_per_file)
                file_incomplete = file_incomplete or checker.incomplete
        except InputError as exc:
            if exc.source is None or exc.source in ("<input>", "<stream>"):
                exc.located(source=name)
            say(f"error: {error_text(exc)}", err=True)
            failed += 1
        for where, v in found:
            if v.severity == "error":
                errors += 1
            else:
                warnings += 1
            severity = "" if v.severity == "error" else " (warning)"
            echo(f"{where}: {v.rule}{severity} [{v.key}] {v.message}")
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
        summary += f" [profile {profile.name}]"
        if failed:
            summary += f"; {failed} file(s) could not be read"
        if incomplete:
            summary += f"; check incomplete for {incomplete} file(s) (--max-seen-ids)"
        echo(summary, err=True)
    if errors or failed:
        return 1
    return INCOMPLETE if incomplete else 0
