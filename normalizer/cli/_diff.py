"""``chatnorm repair --check`` and ``--diff``: would the repair change anything, and what.

The question ``ruff format --check`` answers, for chat histories. Each input is read and
repaired as ``repair`` would, nothing is written, and two streams of lines are compared.
A session (Claude Code, Codex, Gemini CLI) that ``repair`` writes in its own format (the same
decision, ``batch.detect.session_format``: ``--to auto`` or ``--to claude-code|codex|gemini-cli``) is
compared as the file's own bytes against the bytes the session repair writes: ``--check``
says "would repair" exactly when ``repair`` would write something else. Any other input is
compared as the messages read and the messages the repair writes, both encoded by the
output format's encoder (chat JSONL: a message per line; fine-tuning JSONL: a conversation
per line). So a difference is a change of the data, never of its spacing. A line left out
by ``--on-invalid skip`` counts as a change (the reader drops it before either side).

``--diff`` prints a unified diff (``--- FILE`` / ``+++ FILE (repaired)``, hunks with three
lines of context, the line numbers those of the encoded lines). It streams: equal lines are
let go as soon as they are compared, and the lines in between two changes are compared in
windows (:class:`_Differ`), so memory stays about a window's worth of lines, whatever the
input's size. ``--check`` stops reading a file at its first difference.

One compared line is at most :data:`MAX_LINE_BYTES` (the readers' ``max_line_bytes``, 64 MiB)
as it is built (:class:`_Lines`); a fine-tuning line is a whole conversation, and so can be
longer than any line read. A longer line is not compared: the file is an error (``error:
FILE: encoded line N (repaired) is longer than ... bytes (max_line_bytes), too long to
compare``, exit 1, counted with the files that could not be read), what was said of it
before that line stands, and the next file is compared. ``--to jsonl`` compares such a file
a message a line.
"""

from __future__ import annotations

import difflib
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..batch.detect import Route, session_format
from ..batch.plan import Job
from ..batch.pump import ONE_CONVERSATION, locate, restores_source
from ..batch.results import Settings, core_options
from ..batch.sessions import repair_session
from ..batch.streams import Input
from ..batch.tracking import WRITTEN
from ._text import error_text, printable, say
from .._core import Normalizer
from .._errors import InputError, LimitExceeded
from .._report import new_report
from ..formats import ENCODERS, FORMATS, ConversationStream
from ..formats._database_head import is_database
from ..formats._reader import Reader
from ..formats._records import DEFAULT_MAX_LINE_BYTES

__all__ = ["CompareResult", "compare_file", "run_compare"]

#: Lines of context around a change (as diff -u).
CONTEXT = 3
#: Lines held (both sides together) before the ones compared are settled; tried again
#: every WINDOW more lines while no cut is found.
WINDOW = 256
#: Past this, a window is settled even in the middle of a change (a file that differs
#: everywhere); a hunk may then be split in two, never lost.
HARD_WINDOW = 1024
#: Longest compared line, in bytes, newline not counted: the readers' ``max_line_bytes``. A
#: line is held whole to be compared (and printed), so this, not the window, bounds it; one
#: longer makes the file an error (see the module docstring). Read when a file is compared.
MAX_LINE_BYTES = DEFAULT_MAX_LINE_BYTES


class _Changed(Exception):
    """--check: the first difference is enough."""


class _TooLong(Exception):
    """A compared line outgrew :data:`MAX_LINE_BYTES` (``side``: as read or repaired;
    ``line``: its number in that side's encoded lines, from 1)."""

    def __init__(self, side: str, line: int, limit: int) -> None:
        super().__init__(side, line, limit)
        self.side = side
        self.line = line
        self.limit = limit


class _Lines:
    """Encoded bytes in, complete lines out; a line longer than ``limit`` raises
    :class:`_TooLong` as soon as it is that long.

    The unfinished line is held as the pieces it came in, not as one ``bytes``: fine-tuning
    JSONL writes a conversation as one line, a message at a time, and re-joining and
    re-splitting the whole line at every message made a conversation cost the square of its
    length. Each piece is searched for a newline once; a line is joined once, when it ends.
    """

    def __init__(self, side: str) -> None:
        self.side = side
        self.limit = MAX_LINE_BYTES  # (read here, not at import: a test may lower it)
        self.pending: list[bytes] = []  # the unfinished line, in pieces
        self.pending_bytes = 0
        self.count = 0  # complete lines handed out so far (this side's line numbers)
        self.lines: list[bytes] = []

    def add(self, data: bytes) -> None:
        if b"\n" not in data:  # (a message of a fine-tuning line: the common case there)
            self._hold(data)
            return
        complete = data.split(b"\n")
        rest = complete.pop()
        if self.pending:
            if self.pending_bytes + len(complete[0]) > self.limit:
                raise _TooLong(self.side, self.count + 1, self.limit)
            self.pending.append(complete[0])
            complete[0] = b"".join(self.pending)
            self.pending, self.pending_bytes = [], 0
        if max(map(len, complete)) > self.limit:  # one C-speed pass; the loop is rare
            for n, line in enumerate(complete):
                if len(line) > self.limit:
                    raise _TooLong(self.side, self.count + n + 1, self.limit)
        self.count += len(complete)
        self.lines.extend(complete)
        self._hold(rest)

    def close(self) -> None:
        if self.pending:
            self.lines.append(b"".join(self.pending))
            self.count += 1
            self.pending, self.pending_bytes = [], 0

    def _hold(self, piece: bytes) -> None:
        if not piece:
            return
        # Refused before it is held: the line never takes more than the limit.
        if self.pending_bytes + len(piece) > self.limit:
            raise _TooLong(self.side, self.count + 1, self.limit)
        self.pending.append(piece)
        self.pending_bytes += len(piece)


def _range(start: int, length: int) -> str:
    # diff -u's ranges (difflib._format_range_unified): 1-based start, length omitted when 1.
    begin = start + 1
    if length == 1:
        return f"{begin}"
    if not length:
        begin -= 1
    return f"{begin},{length}"


class _Differ:
    """A unified diff of two line streams, settled window by window (see the module docstring)."""

    def __init__(self, name: str, write: Callable[[str], None] | None) -> None:
        self.name = name
        self.write = write  # None: --check (stop at the first difference)
        self.a = _Lines("as read")
        self.b = _Lines("repaired")
        self.a0 = 0  # global line number of a.lines[0]
        self.b0 = 0
        self._same = 0  # a.lines[:_same] == b.lines[:_same], known from an earlier _trim
        self.changed = False
        self._header = False
        self._next = WINDOW  # held lines at which to try to settle next

    def step(self) -> None:
        self._trim()
        held = len(self.a.lines) + len(self.b.lines)
        if held > self._next:
            self._settle(final=False)
            held = len(self.a.lines) + len(self.b.lines)
            self._next = held + WINDOW

    def close(self) -> None:
        self.a.close()
        self.b.close()
        self._trim()
        self._settle(final=True)

    def _trim(self) -> None:
        # Equal lines at the head are done with, but for the context a later change needs.
        # Lines are compared once: the context kept is known equal, and comparing it again at
        # every message would cost a conversation's length per message when a line is a
        # conversation (fine-tuning JSONL).
        a, b = self.a.lines, self.b.lines
        n = min(len(a), len(b))
        same = self._same
        while same < n and a[same] == b[same]:
            same += 1
        drop = same - CONTEXT
        if drop > 0:
            del a[:drop], b[:drop]
            self.a0 += drop
            self.b0 += drop
            same -= drop
        self._same = same

    def _settle(self, *, final: bool) -> None:
        a, b = self.a.lines, self.b.lines
        if final:
            cut_a, cut_b = len(a), len(b)
        else:
            cut = None
            for tag, i1, i2, j1, _ in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
                if tag == "equal" and i2 - i1 > 2 * CONTEXT:
                    cut = (i1 + CONTEXT, j1 + CONTEXT)  # no hunk reaches across an equal run this long
            if cut is None:
                if len(a) + len(b) <= HARD_WINDOW:
                    return  # wait for the change to end
                cut = (len(a), len(b))
            cut_a, cut_b = cut
        left = [line.decode("utf-8", "replace") for line in a[:cut_a]]
        right = [line.decode("utf-8", "replace") for line in b[:cut_b]]
        for group in difflib.SequenceMatcher(None, left, right, autojunk=False).get_grouped_opcodes(CONTEXT):
            self.changed = True
            if self.write is None:
                raise _Changed()
            self._hunk(group, left, right)
        del a[:cut_a], b[:cut_b]
        self.a0 += cut_a
        self.b0 += cut_b
        self._same = 0  # (the heads left may no longer face each other)

    def _hunk(self, group: list[tuple[str, int, int, int, int]], left: list[str], right: list[str]) -> None:
        assert self.write is not None
        out: list[str] = []
        if not self._header:
            out += [f"--- {self.name}", f"+++ {self.name} (repaired)"]
            self._header = True
        first, last = group[0], group[-1]
        out.append(f"@@ -{_range(self.a0 + first[1], last[2] - first[1])} "
                   f"+{_range(self.b0 + first[3], last[4] - first[3])} @@")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out += [" " + line for line in left[i1:i2]]
                continue
            out += ["-" + line for line in left[i1:i2]]
            out += ["+" + line for line in right[j1:j2]]
        self.write("\n".join(out) + "\n")


@dataclass
class CompareResult:
    name: str
    changed: bool = False
    error: str | None = None


def compare_file(job: Job, settings: Settings, write: Callable[[str], None] | None) -> CompareResult:
    """Repair one input in memory-bounded passes and compare (see the module docstring)."""
    result = CompareResult(job.name)
    differ = _Differ(job.name, write)
    reader_report = new_report(max_records=0)
    kind = settings.to
    raw: Any = None
    try:
        raw = sys.stdin.buffer if job.input == "-" else open(job.input, "rb")  # noqa: SIM115 - closed below
        source = Input(raw, job.name, None)
        database = is_database(job.input)  # an opencode.db: SQLite reads it from its path
        route = Route(None, None) if database else session_format(source, job, settings)
        if route.session is not None:
            kind = route.session
            _compare_session(source, job, settings, route.session, differ)
            differ.close()
            result.changed = differ.changed
            return result
        # The reader told what the peek found (head), as repair's is.
        reader = Reader(settings.fmt, report=reader_report, on_invalid=settings.on_invalid,  # type: ignore[arg-type]
                        options=settings.reader_options, head=route.head)
        conversations = ConversationStream(job.input if database else source, reader)
        if kept := restores_source(settings, job):
            conversations.keep_source_fields(kept)  # (as repair's pipe: its writer restores them)
        before = after = None
        multi = False
        core: Normalizer | None = None
        for conv in conversations:
            if after is None:
                multi = bool(getattr(FORMATS.get(conversations.format or ""), "multi", False))
                # --to auto: chat JSONL, or fine-tuning JSONL for several conversations (a
                # session format never comes here: it is compared in its own format, above).
                kind = settings.to if settings.to in ENCODERS else ("finetune" if multi else "jsonl")
                after, before = ENCODERS[kind](), ENCODERS[kind]()
                differ.a.add(before.start())
                differ.b.add(after.start())
            elif not after.multi:
                raise InputError(
                    f"this file holds several conversations, and {ONE_CONVERSATION[after.name]} holds one",
                    source=job.name, line=conv.line, hint="Compare one conversation per line with --to finetune",
                )
            assert before is not None
            core = Normalizer(settings.profile, **core_options(settings, multi), max_records=0)
            differ.a.add(before.begin(conv.extra))
            differ.b.add(after.begin(conv.extra))
            try:
                for m in conv.messages:
                    differ.a.add(before.message(m))
                    for repaired in core.feed(m):
                        differ.b.add(after.message(repaired))
                    differ.step()
                for repaired in core.close():
                    differ.b.add(after.message(repaired))
            except InputError as exc:
                locate(exc, job, conversations, core, multi)
                raise
            differ.a.add(before.end())
            differ.b.add(after.end())
        if after is not None and before is not None:
            differ.a.add(before.finish())
            differ.b.add(after.finish())
        differ.close()
        result.changed = differ.changed or bool(reader_report.counts.get("skip_invalid") or reader_report.counts.get("drop_torn_line"))
    except _Changed:
        result.changed = True
    except _TooLong as exc:
        result.error = error_text(_too_long(exc, job.name, kind))
    except InputError as exc:
        if exc.source is None or exc.source in ("<input>", "<stream>"):
            exc.located(source=job.name)
        result.error = error_text(exc)
    except OSError as exc:
        if isinstance(exc, BrokenPipeError):
            raise
        result.error = f"{job.name}: cannot read: {exc.strerror or exc}. Check the path and its permissions"
    finally:
        if raw is not None and job.input != "-":
            raw.close()
    return result


def _compare_session(source: Input, job: Job, settings: Settings, fmt: str, differ: _Differ) -> None:
    """The file's own bytes against what the session repair writes for it (``repair``'s
    own ``batch.sessions.repair_session``, with the same options and the same refusals): a
    line at a time on both sides, so the comparison streams as the repair does."""

    def output(data: bytes, end: bool) -> None:
        differ.b.add(data)
        differ.step()

    repair_session(source, job, settings, fmt, new_report(max_records=0), read=differ.a.add, output=output)


def _too_long(exc: _TooLong, name: str, kind: str) -> LimitExceeded:
    """The error a line too long to compare makes of its file. Its line number is the
    diff's (an encoded line), not the file's, so it is said in words, not as FILE:LINE."""
    return LimitExceeded(
        f"encoded line {exc.line} ({exc.side}) is longer than {exc.limit} bytes (max_line_bytes), "
        "too long to compare",
        limit="max_line_bytes", value=exc.limit, source=name,
        hint=("A fine-tuning line is a whole conversation: compare this file with --to jsonl (a message "
              "a line)" if kind == "finetune" else None),
    )


_COLOURS = {"---": "1", "+++": "1", "@@": "36", "-": "31", "+": "32"}


def _coloured(line: str, colour: bool) -> str:
    """A diff line for a terminal: escaped (``printable``), in git's colours."""
    shown = printable(line)
    for mark, code in _COLOURS.items():
        if colour and line.startswith(mark):
            return f"\x1b[{code}m{shown}\x1b[0m\n"
    return shown + "\n"


def run_compare(jobs: list[Job], settings: Settings, *, diff: bool, quiet: bool, missing: list[str]) -> int:
    """``repair --check`` / ``--diff`` over every input; the exit status (1: something would
    change, or an input failed)."""

    terminal = sys.stdout.isatty()  # a person reads it: data escaped, colour unless NO_COLOR
    colour = terminal and not os.environ.get("NO_COLOR")

    def write(text: str) -> None:
        if terminal:
            text = "".join(_coloured(line, colour) for line in text.splitlines())
        sys.stdout.write(text)
        sys.stdout.flush()
        WRITTEN.stdout_lines += text.count("\n")

    # Each result is said as it comes and only counted (a run over millions of files holds
    # three counters, not a result a file).
    changed = clean = failed = 0
    for path in missing:
        say(f"error: {path}: no such file or folder. Check the path", err=True)
        failed += 1
    for job in jobs:
        result = compare_file(job, settings, write if diff else None)
        if result.changed:  # (an input can change, then fail further on: both are said)
            changed += 1
            if not diff:
                say(f"would repair: {job.name}")
        if result.error:
            say(f"error: {result.error}", err=True)
            failed += 1
        elif not result.changed:
            clean += 1
    if not quiet:
        text = (f"{changed:,} file{'s' if changed != 1 else ''} would be repaired, "
                f"{clean:,} file{'s' if clean != 1 else ''} already clean")
        if failed:
            text += f", {failed:,} could not be read"
        say(text + f" [profile {settings.profile.name}]", err=True)
    return 1 if changed or failed else 0
