"""Session files repaired in their own format (sans-I/O): a Claude Code session, a Codex
rollout or a Gemini CLI session in, the same file out, with the fewest edits that let the tool
resume it. (A Gemini CLI file is a log replayed whole, not a chain: its dialect is
``replayed``, its lines are held to the end and edited by ``_session_gemini``, whose docstring
tells how; the reading of lines, detection, torn and invalid lines and the writing are this
module's, for all three. What follows is the Claude Code and Codex editor.)

``claude --resume`` fails for good on a session with a ``tool_use`` that no ``tool_result``
answers (a crash or an interrupt mid-tool: ``messages.N: tool_use ids were found without
tool_result blocks immediately after``); a Codex rollout cut after a ``function_call`` has
the same hole. Converting such a file to chat messages does not help its user: the tool
reads only its own format. :class:`SessionRepairer` repairs the file as it is:

* **Every line no repair touches is written byte for byte**, terminator included: nothing is
  re-encoded. Snapshots, summaries, progress, hook and meta lines, compaction boundaries,
  Claude Code sidechains (and Codex's ``event_msg`` / ``turn_context`` lines) pass through.
* **An unanswered call gets a synthetic result line in the tool's own shape**, where the turn
  ends (before the line that starts the next turn, or at the end of the file): for Claude
  Code a ``user`` line with a ``tool_result`` block (``is_error: true``, the stub text; the
  envelope -- ``sessionId``, ``cwd``, ``version``, ``gitBranch``... -- of the ``tool_use``
  line, a fresh ``uuid`` derived from the ``tool_use`` line's and the call's, the timestamp
  of the line before it plus 1 ms (the n-th stub of a turn n ms: see ``stub_stamp`` in ``.._stub``),
  ``toolUseResult``); for Codex a ``response_item``
  ``function_call_output`` (``custom_tool_call_output`` for a custom call). Results that
  come after the user's next message move up to their call **as whole lines**; so do
  results written after the first lines of the next assistant turn (Claude Code can write a
  line before the result it hangs from: the file's order is not the chain's), and a Codex
  output written after the assistant's next item (Codex does not move it). A result that
  answers no call of its turn, or answers one twice, is removed; the whole line is kept in
  the report. A user message written between the lines of one assistant message (Claude
  Code writes its parallel calls one line each; the user typed while the first ran) does
  not end its turn: the message's later lines move up to it, as whole lines, their results
  after them and the user's message after the results.
* **The ``parentUuid`` chain stays whole** (Claude Code rebuilds a conversation by walking
  it from the last line). A line whose parent was the line before it in the file keeps
  pointing at the line before it after an insertion, a move or a removal: those lines, and
  only those, are re-pointed (one record each, the old value kept); but for a line that a
  line already written hangs from, whose parent is written too: it keeps it (the line
  before it may be that child, and the chain a loop). A synthetic result
  hangs where Claude Code would have hung it: from its ``tool_use`` line (with
  ``sourceToolAssistantUUID``) from version 2.1 on, from the line before it before that.
  A result line that a line already written names as its parent is never removed (nor
  refused by ``orphan_results='error'``): it is on the chain Claude Code walks, whatever the
  file's order, and removing it would cut the history above it off. A result that moves up
  takes its place on the chain too (:func:`._chain.splice`): one that hung from the user's
  message it came after hangs from its call, the message from the result, and what hung
  from the result from the message, so the chain from the last line carries every message
  it carried (a line re-pointed at the line written before it only if that one descends
  from its old parent). A line of another thread (an inline sidechain) that hung from a
  removed line hangs from what that line hung from.
* **A torn last line** (no newline, not JSON: a writer killed mid-line) is removed, as the
  tools skip it on resume, and kept whole in the report (``drop_torn_line``; :attr:`torn`
  says which line). A line that is not JSON anywhere else is ``on_invalid``'s.
* **A line nested deeper than** ``max_depth`` is refused like a line that is not JSON
  (``on_invalid``), as the readers refuse it: the repair may have to write it anew.

Where it lives: this module reads the lines (``SessionRepairer``'s surface, detection);
``_session_lines`` says what a line is (per format: ``Dialect``), ``_session_pairing`` holds
the pairing rules, ``_session_write`` writes the lines and keeps the chain whole, and
``.._stub`` shapes and words the synthetic results (the core's stubs too).

Theory of operation. Lines are read one at a time (:class:`~._records.LineSplitter`: the
same line limit as the readers); each is classified by the format's :class:`Dialect` as
calls, other assistant content, results, a user message, a compaction boundary, or
something else, and the pairing rules of the core are applied to them: a turn's calls wait
for their results until the turn ends (Claude Code: the next assistant line of another
``message.id``; Codex: the next assistant item after a result or a user message). When a
user message ends a turn with calls still open, the lines from it on are held (up to
``max_held_bytes``) until the next turn starts, so that results written after it can move
up; then the held lines are written after the moved results and the synthetic ones. A
line of the turn's own ``message.id`` is not the next turn: it moves up with the results,
and its calls join the turn's. In a
Claude Code session the next assistant turn holds them too: its lines (those of its
``message.id``, and the lines between them) are held until a line of another one, a user
message or a compaction boundary, and are then read again by the same rules, after the
moved results and the synthetic ones. While a held line (not a result) hangs from a line not
read yet (most likely the late result: Claude Code can write a line before the line it
hangs from), the wait does not end at the line that would end it (a line of another turn, a user message):
it goes on until the open calls are answered, a compaction boundary, or
``max_held_bytes``. The results that come then stay in their place, after the held lines
(they come before them on the chain, which is whole; Claude Code resumes from the file's
last line, which a result moved up from there would change), and the held lines from the
one that would have ended the wait are read again by all the rules, as they would have
been then. A Codex rollout is in its conversation's order, but
an output may come after the assistant's next item: an assistant message while the turn's
calls are open, or the next turn's first item, holds the lines the same way, until the
outputs come, the user's next message or a compaction. A
compaction boundary (Claude Code ``compact_boundary``, Codex ``compacted``) ends a turn
with nothing added: what came before it is no longer sent. Memory holds one line, one
turn's lines of calls and, while the turn waits, its held lines and the results moving up
(all together bounded by ``max_held_bytes``; with the uuids of those lines): each as its bytes, the parsed value let go
(it is parsed again in the rare case it is needed); and the uuid of every removed Claude
Code line, with the one its children hang from instead (at most :data:`MAX_REMOVED_LINES`);
and of every result moved up off a line held, with the line its later children hang from
instead (with the removed lines, at most :data:`MAX_REMOVED_LINES`); the uuids of the last
lines written, with their parents (1,024 to 2,048 of them); and the parents named by lines
written that are not among those (nor a result's own ``tool_use`` line): a line written
later, or a branch from far back, each kept until a line of its uuid is written, so that it
is not removed (at most :data:`MAX_PARENTS_AHEAD`). The work per line does not depend on how
many calls a turn has open, nor on how many lines were removed before it.

Why not the core itself: its unit is a chat message, which in these files is assembled from
several lines (a Claude Code turn is one line per block); its other repairs (merging split
turns, encodings) are things these tools do themselves on load. The pairing decisions are
the core's, with its options (``stub_text``, ``trailing_calls``, ``orphan_results``) and its
record kinds; the tests read every repaired file back through the chat reader and the core,
which then finds nothing to pair.

Limits. A result line that also carries user text is never split: when it comes after the
turn's end it stays where it is. An inline sidechain of a Claude Code 1.0 file is passed
through unrepaired (its own calls are not paired). A ``summary`` or ``last-prompt`` line
that names a removed line as its leaf is not re-pointed. Codex lines with an ``ordinal``
keep theirs; a synthetic line has none. A Claude Code result written after the turn that
follows its call's is waited for only while a line held (not a result) hangs from it (then
it stays where it is, its call answered). When no held line does, or the wait ended before
it came (``max_held_bytes``, a compaction boundary), its call has a synthetic result by
then, and the result is removed, unless a line already written hangs from it (then both
stay, the synthetic one on a branch of its own).
"""

from __future__ import annotations

from typing import Any, Final

from .._errors import InputError, UsageError
from .._json import JSONDecodeError, loads
from .._options import DEFAULT_MAX_HELD_BYTES
from .._report import Report, new_report
from .._stub import DEFAULT_STUB_TEXT, trailing_policy
from ._detect import DETECT_RECORDS, SESSION_FORMATS, Guess, detect_format, guess, nothing_recognised
from ._read import open_source
from .._depth import deeper_than
from ._records import (BOM, CHUNK_BYTES, DEFAULT_MAX_DEPTH, DEFAULT_MAX_LINE_BYTES, LineSplitter, column_of, line_error,
                       nesting_at, too_deep)
from ._registry import BY_NAME
from ._session_gemini import ReplayedRepair
from ._session_lines import Info, Line
from ._session_pairing import Pairing
from ._session_write import MAX_PARENTS_AHEAD, MAX_REMOVED_LINES
from ._writers import open_dest

__all__ = ["SESSION_FORMATS", "SessionRepairer", "repair_session", "MAX_REMOVED_LINES", "MAX_PARENTS_AHEAD"]

#: The deepest ``max_depth`` a repair honours: a line it edits is written anew with orjson,
#: which writes 254 levels of arrays and objects at most.
MAX_WRITABLE_DEPTH: Final = 254

#: Output held while no line is recognised as the session's format (see ``_take``); past it,
#: the lines go out and an error at the end comes after them.
_HOLD_UNRECOGNISED = 1 << 20


class SessionRepairer(Pairing):
    """A Claude Code session, a Codex rollout or a Gemini CLI session in (bytes, in chunks),
    the same session out, repaired in its own format (see the module docstring). Sans-I/O.

    Args:
        fmt: ``"auto"`` (detected from the first lines), ``"claude-code"``, ``"codex"`` or
            ``"gemini-cli"``.
        report: where every change is recorded (a new one if None); ``report.format`` is set,
            ``messages_in`` / ``messages_out`` count lines.
        stub_text: the content of a synthetic result.
        trailing_calls: calls still unanswered at the end of the file: ``"stub"`` answers
            them, ``"keep"`` leaves them open (the tool may still be running them).
        orphan_results: a result for no call of its turn: ``"drop"`` removes it (the whole
            line is kept in the report), ``"error"`` raises.
        on_invalid: a line that is not JSON, or nested deeper than ``max_depth``: ``"error"``
            raises, ``"skip"`` removes it (kept in the report).
        max_line_bytes: the longest line accepted.
        max_depth: the deepest nesting of arrays and objects accepted in a line (as the
            readers' ``max_depth``), at most :data:`MAX_WRITABLE_DEPTH`.
        max_held_bytes: what one turn may hold: the lines of its calls (each kept until the
            turn ends: a synthetic result copies its envelope) and, while it waits for late
            results, the lines held and the results moving up, all together. A line of calls
            past it raises :class:`LimitExceeded`; a held line past it ends the wait (the
            turn's open calls are answered and the lines written); a result moving up past
            it raises :class:`LimitExceeded`.
        source: how errors name the file.

    Raises:
        UsageError: an option this repair cannot honour (at construction).
        InputError: bad input, a file of another format, or one in which nothing was
            recognised (at :meth:`close`).
        LimitExceeded: a line longer than ``max_line_bytes`` or nested deeper than
            ``max_depth`` (``on_invalid='error'``), or results moving up to their calls, or a
            turn's lines of calls, past ``max_held_bytes``; past :data:`MAX_REMOVED_LINES` or
            :data:`MAX_PARENTS_AHEAD`.
    """

    def __init__(
        self,
        fmt: str = "auto",
        *,
        report: Report | None = None,
        stub_text: str = DEFAULT_STUB_TEXT,
        trailing_calls: str = "stub",
        orphan_results: str = "drop",
        on_invalid: str = "error",
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
        max_depth: int = DEFAULT_MAX_DEPTH,
        max_held_bytes: int = DEFAULT_MAX_HELD_BYTES,
        source: str = "<input>",
    ) -> None:
        _check_options(fmt, trailing_calls, orphan_results, on_invalid, max_depth)
        self.report = report if report is not None else new_report()
        # The report's line counters, kept here and written to it once a chunk (_count): they
        # are fields of a pydantic model, whose validating __setattr__ costs more than the
        # rest of a plain line's bookkeeping.
        self._n_in = self.report.messages_in
        self._init_writer(self.report.messages_out)
        self._init_pairing()
        self.stub_text = stub_text
        self.trailing_calls = trailing_calls
        self.orphan_results = orphan_results
        self.on_invalid = on_invalid
        self.max_depth = max_depth
        self.max_held_bytes = max_held_bytes
        self.source = source
        #: The format repaired: given, or detected from the first lines (None until then).
        self.format: str | None = None
        #: Lines read that are lines of the format (what detection tells it by: a Claude Code
        #: line type with a uuid or a session id, a Codex line type with a payload).
        self.recognised = 0
        self._misses: list[Guess] = []
        self._lines = LineSplitter(source=source, max_line_bytes=max_line_bytes)
        self._waiting: list[Line] = []  # lines read before the format is known
        self._orig_prev: str | None = None  # the chain line before, as read
        #: The number of the file's last line if it was torn (no newline, not JSON: removed).
        self.torn: int | None = None
        self._closed = False
        self._replayed: ReplayedRepair | None = None  # the editor of a replayed log (Gemini CLI)
        if fmt != "auto":
            self._choose(fmt)

    # -- the surface ----------------------------------------------------------------------------

    def feed(self, chunk: bytes) -> bytes:
        """The output bytes a chunk of the file completes."""
        if self._closed:
            raise UsageError("SessionRepairer.feed() after close()")
        number = self._lines.line
        try:
            # feed() hands out whole lines, newline kept (cut with memchr: see LineSplitter).
            for line in self._lines.feed(chunk):
                number += 1
                self._read(line[:-1], b"\n", number)
        finally:
            self._count()
        return self._take()

    def close(self) -> bytes:
        """The end of the file: the rest of the output."""
        if self._closed:
            raise UsageError("SessionRepairer.close() called twice")
        self._closed = True
        try:
            number = self._lines.line
            for body in self._lines.close():
                self._read(body, b"", number + 1)
            if self._dialect is None:
                if not self._waiting:
                    return b""  # an empty file: nothing to repair, in any format
                self._detect(final=True)
            if self._replayed is not None:
                for line in self._replayed.finish():
                    self._emit(line)
            while self._held is not None:
                self._resolve()
            turn, self._turn = self._turn, None
            # (the waits resolved above: what is open now is trailing, nothing came after it)
            if turn is not None and trailing_policy(self.trailing_calls, moved_on=False) == "stub":
                for stub in self._stubs(turn, self._stamp):
                    self._emit(stub)
        finally:
            self._count()
        if self.recognised == 0 and self._n_in:
            assert self._dialect is not None
            raise nothing_recognised(self._dialect.name, self._misses, SESSION_FORMATS, self.source)
        return self._take()

    def _count(self) -> None:
        self.report.messages_in = self._n_in
        self.report.messages_out = self._n_out

    # -- reading --------------------------------------------------------------------------------

    def _take(self) -> bytes:
        if not self.recognised and not self._closed and len(self._out) < _HOLD_UNRECOGNISED:
            # Nothing recognised yet: held, so that a file in another format (an error at
            # close) writes nothing, on a stream too.
            return b""
        out = bytes(self._out)
        self._out.clear()
        return out

    def _read(self, body: bytes, end: bytes, number: int) -> None:
        self._n_in += 1
        text = body[3:] if number == 1 and body.startswith(BOM) else body
        try:
            value = loads(text)  # integers past 64 bits exact, as the line holds them (see .._json)
        except JSONDecodeError as exc:
            if not text.strip():
                value = None  # a blank line: carried through as it is
            else:
                error = line_error(text, exc, source=self.source, line=number, max_depth=self.max_depth)
                if not end and self._n_in > 1:
                    # The last line, with no newline, after others: torn (a killed writer leaves
                    # one). The tools skip it on resume: so does the repair, into the report.
                    self.torn = number
                    self.report.add("drop_torn_line", f"{error} (the last line, with no newline: torn, its writer stopped "
                                    "mid-line); removed, as the tool skips it on resume, and kept here whole",
                                    line=number, dropped=body.decode("utf-8", "backslashreplace"))
                    return
                if self.on_invalid != "skip":
                    raise error from None
                self.report.add("skip_invalid", str(error), line=number, dropped=body.decode("utf-8", "backslashreplace"))
                return
        max_depth = self.max_depth
        if (len(text) > 2 * max_depth and text.count(b"[") + text.count(b"{") > max_depth
                and deeper_than(value, max_depth)):
            # Each level is a bracket: a line with max_depth of them at most (a bracket in a
            # string only adds to the count) is not walked; a session line has a few dozen.
            at = nesting_at(text, max_depth)
            assert at is not None  # the bytes nest at least as deep as the value they parse to
            error = too_deep(max_depth, source=self.source, line=number, column=column_of(text, at))
            if self.on_invalid != "skip":
                raise error
            self.report.add("skip_invalid", str(error), line=number, dropped=body.decode("utf-8", "backslashreplace"))
            return
        line = Line(body, end, value, number, Info())
        if self._dialect is None:
            self._waiting.append(line)
            self._detect(final=False, decisive=guess(value).decisive)
            return
        self._take_line(line)

    def _detect(self, *, final: bool, decisive: bool = False) -> None:
        if not (decisive or final or len(self._waiting) >= DETECT_RECORDS):
            return
        values = [line.value for line in self._waiting if line.value is not None]
        # Placed where detection began, as the reader places its own: the first record read.
        first = next((line.number for line in self._waiting if line.value is not None), None)
        try:
            fmt = detect_format(values)
        except InputError as exc:
            if exc.line is None and first is not None:
                exc.located(line=first, column=1)
            raise exc.located(source=self.source) from None
        if fmt not in SESSION_FORMATS:
            raise InputError(
                f"this is a {fmt} file, not a session file ({', '.join(SESSION_FORMATS)})",
                source=self.source, line=first, column=None if first is None else 1,
                hint="Only those are repaired in their own format; write it as chat JSONL (--to jsonl) or name its format with --from",
            )
        self._choose(fmt)
        waiting, self._waiting = self._waiting, []
        for line in waiting:
            self._take_line(line)

    def _choose(self, fmt: str) -> None:
        self.format = self.report.format = fmt
        self._dialect = BY_NAME[fmt].session_dialect()()  # the registry names each format's dialect
        if self._dialect.replayed:  # a log replayed whole: every line held to the end (_session_gemini)
            self._replayed = ReplayedRepair(self.report, stub_text=self.stub_text, trailing_calls=self.trailing_calls,
                                            orphan_results=self.orphan_results, source=self.source)

    def _take_line(self, line: Line) -> None:
        dialect = self._dialect
        assert dialect is not None
        looks = guess(line.value)
        if looks.format == dialect.name:
            self.recognised += 1
        elif len(self._misses) < DETECT_RECORDS:
            self._misses.append(looks)  # what it looks like instead, for the error
        if self._replayed is not None:
            self._replayed.take(line)
            return
        info = line.info = dialect.classify(line.value)
        if info.chain:
            line.linear = info.parent is not None and info.parent == self._orig_prev
            self._orig_prev = info.uuid
        stamp = line.value.get("timestamp") if isinstance(line.value, dict) else None
        if self._held is not None:
            self._while_held(line)
        else:
            self._step(line)
        if stamp is not None:
            self._stamp = stamp


def _check_options(fmt: str, trailing_calls: str, orphan_results: str, on_invalid: str, max_depth: int) -> None:
    """Refuse an option this repair cannot honour (``UsageError``, at construction)."""
    if fmt != "auto" and fmt not in SESSION_FORMATS:
        raise UsageError(f"a session is repaired in its own format: {' or '.join(SESSION_FORMATS)}, not {fmt!r}")
    if trailing_calls not in ("stub", "keep"):
        raise UsageError(f"trailing_calls={trailing_calls!r} cannot be applied to a session in its own format; use 'stub' or 'keep'")
    if orphan_results not in ("drop", "error"):
        raise UsageError(f"orphan_results={orphan_results!r} cannot be applied to a session in its own format; use 'drop' or 'error'")
    if on_invalid not in ("error", "skip"):
        raise UsageError(f"on_invalid must be 'error' or 'skip', not {on_invalid!r}")
    if type(max_depth) is not int or not 0 <= max_depth <= MAX_WRITABLE_DEPTH:
        raise UsageError(f"max_depth must be an integer from 0 to {MAX_WRITABLE_DEPTH} for a session repaired in its own "
                         f"format (a line it edits is written anew, and orjson writes {MAX_WRITABLE_DEPTH} levels at most), "
                         f"not {max_depth!r}")


def repair_session(source: Any, dest: Any, fmt: str = "auto", *, report: Report | None = None, **options: Any) -> Report:
    """Repair a Claude Code session, a Codex rollout or a Gemini CLI session in its own format (see
    :class:`SessionRepairer`, whose keyword options this takes): ``source`` a path or a
    binary file, ``dest`` a path or a binary file (not the source itself: for that, the
    command line's ``--in-place`` writes a temporary file and renames it). Returns the report.
    """
    opened = open_source(source)
    f = opened.file
    try:
        repairer = SessionRepairer(fmt, report=report, source=opened.name, **options)
        sink = open_dest(dest)
        out = sink.file
        try:
            while chunk := f.read(CHUNK_BYTES):
                out.write(repairer.feed(chunk))
            out.write(repairer.close())
            out.flush()
        finally:
            if sink.owned:
                out.close()
    finally:
        if opened.owned:
            f.close()
    return repairer.report
