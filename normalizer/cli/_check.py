"""``chatnorm check``: every violation of a profile's rules, with where it is.

Each file is read as a stream of conversations and each conversation goes through its own
streaming ``Checker`` (constant memory). A finding is placed as it is made, from the
positions the reader carries (``ConversationStream.position``: JSONL, JSON documents and
stdin alike), folded under its root cause when it has one (``_findings.Causes``), filtered
by ``--select``/``--ignore``, and written in the ``--output-format`` asked for
(``_report_formats``) once its file is done. Up to ``max_per_file`` problems are kept per
file, the rest only counted, so memory stays bounded on a broken dataset too.

A finding names the message it was found at, or, for a call found unanswered when its block
of results ends, the assistant message that made the call: those two positions are the
ones kept (:class:`_Places`). In a file of several conversations, a finding is placed at its
conversation's record.

The default ``text`` format is one line per finding, grep-friendly (the form of the CLI's
errors), a root cause's consequences indented under it::

    examples/split-turns.jsonl:10:1: message 9: OA-1 [tool.unanswered_call] <provider's text>

**Purpose.** A fine-tuning example ends on the assistant turn the model learns, or on the
call it learns to make: serving-only rules (``SERVING_ONLY_KEYS``: the history may not end
on the assistant) and calls left open at the end are not held against training data.
``purpose`` is ``"training"`` or ``"serving"``, or None: training for the fine-tuning
formats (finetune, sharegpt: several conversations per file), serving otherwise.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any

from ..profiles._check import DEFAULT_MAX_SEEN_IDS
from ..profiles._profiles import Profile
from ..profiles.rules import SERVING_ONLY_KEYS
from ._findings import CAUSES, Causes, Finding, Root, Selection, finding_of
from ._report_formats import Output, Summary
from ._text import error_text, say
from .._errors import InputError
from .._report import new_report
from ..formats import FORMATS, ConversationStream, Position, read_conversations

__all__ = ["run_check", "INCOMPLETE", "CheckSettings"]


#: Exit status of a check that found nothing but could not check everything (a limit was
#: reached): not 0, which would read as "clean", and not 1, which means violations.
INCOMPLETE = 3
#: The key of the warning ``Checker.close()`` ends with when it could not check everything.
_INCOMPLETE_KEY = "incomplete"


@dataclass
class CheckSettings:
    """What ``check`` was asked, the same for every file."""

    fmt: str = "auto"
    profile: Profile | None = None
    max_per_file: int = 1000
    max_seen_ids: int = DEFAULT_MAX_SEEN_IDS
    quiet: bool = False
    selection: Selection = field(default_factory=lambda: Selection([], []))
    purpose: str | None = None  # "serving", "training", or None: by the format read
    exit_zero: bool = False
    repair: str = "chatnorm repair"  # the command that fixes what is fixable (for the hint)
    reader_options: dict[str, Any] = field(default_factory=dict)  # --session (formats.READER_OPTIONS)


@dataclass(frozen=True, slots=True)
class _CallsAt:
    """An assistant message with calls: its index, and where it was read."""

    index: int
    position: Position | None


class _Places:
    """Where the findings of one conversation are (see the module docstring)."""

    def __init__(self, stream: ConversationStream, name: str, conversation: int | None, session: str | None) -> None:
        self.stream = stream
        self.name = name
        self.session = session
        # A file of several conversations: every finding is placed at the conversation's record.
        self.conversation = conversation
        self.record = stream.position if conversation is not None else None
        self.index = -1  # the message just fed to the checker
        self.calls: _CallsAt | None = None  # the last assistant message with calls

    def fed(self) -> None:
        self.index += 1

    def placed(self, violations: list[Any]) -> list[Finding]:
        return [finding_of(v, self.name, self.position(v.index), self.conversation, self.session) for v in violations]

    def after(self, message: Any) -> None:
        # Kept after placing: this message's findings may name the calls message before it.
        if self.conversation is None and isinstance(message, dict) and message.get("role") == "assistant" \
                and message.get("tool_calls"):
            self.calls = _CallsAt(self.index, self.stream.position)

    def position(self, index: int | None) -> Position | None:
        if self.conversation is not None:
            return self.record
        if index is not None and index == self.index:
            return self.stream.position
        if self.calls is not None and index == self.calls.index:
            return self.calls.position
        return None


class _FileFindings:
    """One file's problems: the first ``limit`` kept (in order), the rest counted."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.kept: list[Finding] = []
        self.omitted = 0
        self.violations = 0
        self.problems = 0
        self.fixable = 0
        self.errors = 0
        self.warnings = 0

    def take(self, violations: list[Finding], causes: Causes, selection: Selection, *, at_end: bool = False) -> None:
        """Fold one message's violations under their root causes, then keep what the
        selection shows: a violation selected itself or folded under a root cause that is
        (a root is made only when its own code is selected: ``_enabled``)."""
        top = causes.place(violations, at_end=at_end)
        self.count([v for v in violations if v.cause is not None or selection(v.code, v.key)])
        for replaced in causes.replaced:  # a finding placed earlier, now folded under a new root
            old, root = replaced.old, replaced.root
            if old in self.kept:
                self.kept[self.kept.index(old)] = root
            elif not selection(old.code, old.key):  # not shown until now: the root is a new problem
                self.count([old])
                top.append(root)
        causes.replaced.clear()
        self.add([f for f in top if isinstance(f, Root) or selection(f.code, f.key)])

    def add(self, top: list[Finding]) -> None:
        for finding in top:
            self.problems += 1
            self.fixable += finding.fixable
            if len(self.kept) < self.limit:
                self.kept.append(finding)
            else:
                self.omitted += 1

    def count(self, findings: list[Finding]) -> None:
        """Count violations (roots are not violations; each of their consequences is)."""
        for finding in findings:
            self.violations += 1
            if finding.severity == "error":
                self.errors += 1
            else:
                self.warnings += 1


def _filter(findings: list[Finding], settings: CheckSettings, training: bool, at_end: bool) -> list[Finding]:
    """The violations that may be shown: not ignored, and not a serving rule held against
    training data. One not selected still goes on to the root causes, which may fold it
    under a selected one (``_FileFindings.take`` drops it otherwise)."""
    kept = []
    for f in findings:
        if training and (f.key in SERVING_ONLY_KEYS or (at_end and f.key == "tool.unanswered_call")):
            continue  # a serving rule, or a call left open at the end of a training example
        if not settings.selection.ignored(f.code, f.key):
            kept.append(f)
    return kept


def check_file(path: str, settings: CheckSettings, output: Output, summary: Summary) -> bool:
    """Check one file and write its findings; returns whether an error-level violation was found."""
    from ..profiles._check import Checker

    assert settings.profile is not None
    name = "<stdin>" if path == "-" else path
    report = new_report(max_records=0)
    found = _FileFindings(settings.max_per_file)
    # A root cause is made only when selected: --select OA-1 shows the OA-1 violations on
    # their own, never under an NZ-1 line that was not asked for.
    enabled = {code: settings.selection(code, key) for code, (key, _) in CAUSES.items()}
    merges_text = bool(settings.profile.core_options().get("merge_text_then_calls", True))
    incomplete = False
    messages_before = summary.messages
    try:
        source: Any = sys.stdin.buffer if path == "-" else path
        stream = read_conversations(source, settings.fmt, report=report, **settings.reader_options)
        for conv in stream:
            multi = bool(getattr(FORMATS.get(stream.format or ""), "multi", False))
            training = settings.purpose == "training" or (settings.purpose is None and multi)
            summary.training = summary.training or training
            checker = Checker(settings.profile, max_seen_ids=settings.max_seen_ids)
            # An opencode.db: each session a conversation, its findings named by its id.
            session = conv.extra.get("session") if stream.container == "sqlite" else None
            places = _Places(stream, name, conv.index if multi or session is not None else None, session)
            causes = Causes(name, places.conversation, merges_text=merges_text, enabled=enabled, session=session)
            for message in conv.messages:
                summary.messages += 1
                places.fed()
                causes.message(message, places.position(places.index))
                findings = _filter(places.placed(checker.feed(message)), settings, training, False)
                found.take(findings, causes, settings.selection)
                places.after(message)
            closing = [v for v in checker.close() if v.key != _INCOMPLETE_KEY]
            findings = _filter(places.placed(closing), settings, training, True)
            found.take(findings, causes, settings.selection, at_end=True)
            incomplete = incomplete or checker.incomplete
    except InputError as exc:
        if exc.source is None or exc.source in ("<input>", "<stream>"):
            exc.located(source=name)
        say(f"error: {error_text(exc)}", err=True)
        summary.failed += 1
        output.unreadable(Finding(code="input", key="input.unreadable", message=error_text(exc), file=name,
                                  line=exc.line, column=exc.column if exc.line is not None else None,
                                  index=exc.index, provider="chat-normalizer"))
    else:
        if summary.messages == messages_before:
            say(f"warning: {name}: no messages in it", err=True)
    output.file(name, _ordered(found.kept), found.omitted)
    summary.violations += found.violations
    summary.problems += found.problems
    summary.fixable += found.fixable
    summary.warnings += found.warnings
    summary.bad_files += bool(found.violations)
    if incomplete:
        # Said even with --quiet: without it a clean-looking result would be a false one.
        summary.incomplete += 1
        say(f"{name}: check incomplete: more than {settings.max_seen_ids:,} distinct call ids in one "
            "conversation, so ids past that were not checked for reuse (tool.duplicate_call_id). "
            "Raise --max-seen-ids to check them all", err=True)
    return bool(found.errors or found.omitted)


def _ordered(findings: list[Finding]) -> list[Finding]:
    """Top-level findings in file order (a root takes the place of its first message)."""
    def key(item: tuple[int, Finding]) -> tuple[int, int, int, int]:
        i, f = item
        return (f.conversation or 0, f.index if f.index is not None else 1 << 62, 0 if isinstance(f, Root) else 1, i)

    return [f for _, f in sorted(enumerate(findings), key=key)]


def run_check(files: list[str], settings: CheckSettings, output: Output, *, missing: list[str] | None = None) -> int:
    """Check every file; the findings go to ``output`` (stdout), errors and the summary to
    stderr. Returns the exit status: 1 when a violation of severity ``error`` was found or a
    file could not be read (violations do not count with ``exit_zero``); else
    :data:`INCOMPLETE` when a conversation had more distinct call ids than ``max_seen_ids``
    (past it, reused ids go unseen); else 0."""
    assert settings.profile is not None
    missing = missing or []
    summary = Summary(files=len(files) + len(missing), profile=settings.profile.name, repair=settings.repair)
    output.begin(_rule_codes(settings))
    for path in missing:
        text = f"{path}: no such file or folder. Check the path"
        say(f"error: {text}", err=True)
        summary.failed += 1
        output.unreadable(Finding(code="input", key="input.unreadable", message=text, file=path,
                                  provider="chat-normalizer"))
    violations = False
    for path in files:
        violations = check_file(path, settings, output, summary) or violations
    output.end(summary, settings.quiet)
    if summary.failed or (violations and not settings.exit_zero):
        return 1
    return INCOMPLETE if summary.incomplete else 0


def _rule_codes(settings: CheckSettings) -> list[str]:
    """The codes a finding of this run can have: the profile's rules, the root causes, and
    the two of our own (SARIF lists them up front)."""
    assert settings.profile is not None
    return [*settings.profile.active_rules(), *CAUSES, "shape", "input"]
