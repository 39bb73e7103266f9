"""Session files repaired in their own format (sans-I/O): a Claude Code session or a Codex
rollout in, the same file out, with the fewest edits that let the tool resume it.

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

Theory of operation. Lines are read one at a time (:class:`~._records.LineSplitter`: the
same line limit as the readers); each is classified by the format's :class:`_Dialect` as
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

from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from .._errors import InputError, InvalidMessage, LimitExceeded, UsageError
from .._json import JSONDecodeError, dumps, loads
from .._options import DEFAULT_MAX_HELD_BYTES
from .._stub import DEFAULT_STUB_TEXT, STUB_KIND, claude_code_stub, codex_stub, stray_result_kind, stub_detail, stub_stamp
from .._report import Report, new_report
from . import _chain
from ._detect import DETECT_RECORDS, SESSION_FORMATS, detect_format, guess, nothing_recognised
from ._read import open_source
from ._depth import deeper_than
from ._records import (BOM, CHUNK_BYTES, DEFAULT_MAX_DEPTH, DEFAULT_MAX_LINE_BYTES, LineSplitter, column_of, line_error,
                       nesting_at, too_deep)
from ._writers import _open

__all__ = ["SESSION_FORMATS", "SessionRepairer", "repair_session", "MAX_REMOVED_LINES", "MAX_PARENTS_AHEAD"]

#: The most chain lines one session may have removed (results that answer no call), with the
#: results moved up off the line they hung from (see ``_chain.splice``): each is remembered
#: to the end of the file, its uuid and where its children go instead (about 120 bytes:
#: 1,000,000 of them are about 120 MB). No real session comes near it.
MAX_REMOVED_LINES: Final = 1_000_000

#: The most parents, named by Claude Code lines already written, that the repairer has not
#: seen written before them (a line written after its child, or a branch from further back
#: than the last ``_RECENT_LINES`` lines written; a result's own ``tool_use`` line is known
#: to be written). Each is remembered until a line of that uuid is written, so that it is not
#: removed (its child would be left hanging from nothing); one of a branch from far back is
#: remembered to the end (about 100 bytes each). Real sessions name a few.
MAX_PARENTS_AHEAD: Final = 1_000_000

#: How many of the last lines written the repairer remembers at least (their uuids; twice
#: as many at most), to tell a parent known to be written from one that may come later (see
#: MAX_PARENTS_AHEAD).
_RECENT_LINES: Final = 1024

#: The deepest ``max_depth`` a repair honours: a line it edits is written anew with orjson,
#: which writes 254 levels of arrays and objects at most.
MAX_WRITABLE_DEPTH: Final = 254

# What a line is to the pairing rules.
Kind = Literal["calls", "assistant", "results", "user", "reset", "other"]

@dataclass(slots=True)  # one per line kept while a turn waits: no __dict__ each
class _Info:
    """A line as the pairing rules see it."""

    kind: Kind = "other"
    key: Any = None  # Claude Code: the assistant turn's message.id
    calls: list[tuple[str, str]] = field(default_factory=list)  # (call id, call kind)
    results: list[str] = field(default_factory=list)  # call ids answered
    chain: bool = False  # Claude Code: a line of the thread's parentUuid chain
    uuid: str | None = None  # Claude Code: of any line with one (of the thread or not)
    parent: str | None = None


class _Line:
    """A line read: its bytes (terminator apart), its value (let go if the line is kept
    after it was read: see ``forget``), where it was, what it is."""

    __slots__ = ("body", "end", "value", "number", "info", "linear", "back", "synthetic", "record", "forgotten", "placed")

    def __init__(self, body: bytes, end: bytes, value: Any, number: int, info: _Info) -> None:
        self.body = body
        self.end = end
        self.value = value
        self.number = number
        self.info = info
        self.linear = False  # its parent was the chain line before it (re-pointed with it)
        self.back = False  # a result that hangs from the tool_use line of a call it answers (written before it)
        self.synthetic: _Call | None = None  # a synthetic result, for this call
        self.record: tuple[str, str] | None = None  # (kind, detail) to record when written
        self.forgotten = False  # its value was let go (see forget)
        self.placed = False  # a late result left in its place, its call answered: written as it is (see _resolve)

    def forget(self) -> None:
        """Let the parsed value go, for a line kept after it was read (a call waiting for its
        result, a held line, a result moving up): a value takes several times the line's
        bytes, and it is seldom needed again (see ``parsed``)."""
        if self.value is not None:
            self.value, self.forgotten = None, True

    def parsed(self) -> Any:
        """The line's value; parsed again if it was let go (not kept: it is needed once, to
        re-point the line or to copy a call's envelope into its synthetic result)."""
        if not self.forgotten:
            return self.value
        return loads(self.body[len(BOM):] if self.body.startswith(BOM) else self.body)


@dataclass(slots=True)
class _Call:
    id: str
    kind: str
    line: _Line


class _Turn:
    __slots__ = ("key", "calls", "answered", "accepting", "call_bytes")

    def __init__(self, key: Any) -> None:
        self.key = key
        self.calls: dict[str, _Call] = {}  # in call order
        self.call_bytes = 0  # the bytes of the lines its calls keep (see SessionRepairer._keep_calls)
        # Only ids of ``calls`` (every add checks it, and calls are never taken out): the
        # turn has open calls while it is the smaller of the two (see ``waits``).
        self.answered: set[str] = set()
        self.accepting = True  # Codex: assistant items still join this turn

    def waits(self) -> bool:
        """Some call is still unanswered. Asked for every line of a wait: constant time,
        where building ``unanswered()`` costs one step per call of the turn."""
        return len(self.answered) < len(self.calls)

    def unanswered(self) -> list[_Call]:
        """The open calls, in call order (once per turn, for their synthetic results)."""
        return [c for i, c in self.calls.items() if i not in self.answered]


# -- the formats ---------------------------------------------------------------------------------


class _Dialect:
    """What one format's lines mean, and how it writes a synthetic result."""

    name: str
    #: Its lines form a parentUuid chain, whose order (not the file's) is the conversation's:
    #: a turn's results may be written after the next turn's first lines.
    chained: bool = False

    def classify(self, value: Any) -> _Info:
        raise NotImplementedError

    def continues(self, turn: _Turn, info: _Info) -> bool:
        raise NotImplementedError

    def stub(self, call: _Call, text: str, timestamp: Any) -> dict[str, Any]:
        raise NotImplementedError

    def without_results(self, value: Any, ids: set[str]) -> Any:
        """The line's value without its results for ``ids``."""
        raise NotImplementedError


class _ClaudeCode(_Dialect):
    name = "claude-code"
    chained = True

    def __init__(self) -> None:
        self.side: bool | None = None  # isSidechain of the thread being repaired (its first line's)

    def classify(self, value: Any) -> _Info:
        info = _Info()
        if not isinstance(value, dict):
            return info
        kind = value.get("type")
        message = value.get("message")
        side = bool(value.get("isSidechain"))
        # A line of results only, before the thread is known, answers nothing (it is removed):
        # the thread is the next line's, the first of the file once it is gone (a fixed point).
        early = self.side is None and kind == "user" and isinstance(message, dict) and _results_only(message.get("content"))
        if self.side is None and kind in ("user", "assistant") and isinstance(message, dict) and not early:
            self.side = side  # a sub-agent file is all sidechain: its thread is the sidechain
        line_uuid = value.get("uuid")
        if isinstance(line_uuid, str):
            parent = value.get("parentUuid")
            info.uuid, info.parent = line_uuid, parent if isinstance(parent, str) else None
        if side != self.side and not early:
            return info  # another thread (an inline sidechain), or not known yet: untouched
        info.chain = info.uuid is not None
        if kind == "system" and value.get("subtype") == "compact_boundary":
            info.kind = "reset"
            return info
        if not isinstance(message, dict):
            return info
        content = message.get("content")
        if kind == "assistant":
            if message.get("model") == "<synthetic>" or value.get("isApiErrorMessage"):
                return info  # a harness error line: not a model turn
            info.key = message.get("id") or value.get("requestId") or line_uuid
            if isinstance(content, list):
                for block in content:
                    if isinstance(block, dict) and block.get("type") == "tool_use" and isinstance(block.get("id"), str):
                        info.calls.append((block["id"], "tool_use"))
            info.kind = "calls" if info.calls else "assistant"
        elif kind == "user" and not value.get("isMeta"):
            blocks = content if isinstance(content, list) else [content]
            other = False
            for block in blocks:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    if isinstance(block.get("tool_use_id"), str):
                        info.results.append(block["tool_use_id"])
                elif block is not None:
                    other = True
            info.kind = "user" if other or not info.results else "results"
        return info

    def continues(self, turn: _Turn, info: _Info) -> bool:
        return info.key is not None and info.key == turn.key

    def stub(self, call: _Call, text: str, timestamp: Any) -> dict[str, Any]:
        return claude_code_stub(call.line.parsed(), call.id, text, timestamp)

    def without_results(self, value: Any, ids: set[str]) -> Any:
        message = value["message"]
        content = [b for b in message["content"] if not (isinstance(b, dict) and b.get("type") == "tool_result" and _str_in(b.get("tool_use_id"), ids))]
        return {**value, "message": {**message, "content": content}}


def _results_only(content: Any) -> bool:
    return isinstance(content, list) and bool(content) and all(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)


def _str_in(value: Any, keys: Collection[str]) -> bool:
    """``value in keys`` for any JSON value: a list or a dict (unhashable) is in no set of ids."""
    return isinstance(value, str) and value in keys


_CODEX_CALLS = {"function_call": "function_call", "custom_tool_call": "custom_tool_call", "local_shell_call": "local_shell_call"}


class _Codex(_Dialect):
    name = "codex"

    def classify(self, value: Any) -> _Info:
        info = _Info()
        if not isinstance(value, dict):
            return info
        if value.get("type") == "compacted":
            info.kind = "reset"
            return info
        payload = value.get("payload")
        if value.get("type") != "response_item" or not isinstance(payload, dict):
            return info
        kind = payload.get("type")
        if isinstance(kind, str) and kind in _CODEX_CALLS:  # (any JSON value: a list is unhashable)
            call_id = payload.get("call_id") or payload.get("id")
            if isinstance(call_id, str):
                info.kind = "calls"
                info.calls.append((call_id, kind))
        elif kind == "reasoning" or (kind == "message" and payload.get("role") == "assistant"):
            info.kind = "assistant"
            info.key = _REPLY if kind == "message" else None
        elif kind == "message":
            info.kind = "user"
        elif isinstance(kind, str) and kind.endswith("_output") and isinstance(payload.get("call_id"), str):
            info.kind = "results"
            info.results.append(payload["call_id"])
        return info

    def continues(self, turn: _Turn, info: _Info) -> bool:
        return turn.accepting

    def stub(self, call: _Call, text: str, timestamp: Any) -> dict[str, Any]:
        return codex_stub(call.id, call.kind, text, timestamp)

    def without_results(self, value: Any, ids: set[str]) -> Any:
        raise AssertionError("a Codex output line holds one result")  # pragma: no cover


_DIALECTS: dict[str, Callable[[], _Dialect]] = {"claude-code": _ClaudeCode, "codex": _Codex}


# -- the repairer ------------------------------------------------------------------------------


#: Output held while no line is recognised as the session's format (see ``_take``); past it,
#: the lines go out and an error at the end comes after them.
_HOLD_UNRECOGNISED = 1 << 20

#: What ``_held_key`` is while the lines held came after a user message (not after the first
#: line of the next assistant turn, whose ``message.id`` it is then).
_AFTER_USER: Final = object()

#: Codex: what ``_held_key`` is while the lines held came after an assistant message written
#: between a call and its output (the output moves up to its call); and that message's key.
_AFTER_REPLY: Final = object()
_REPLY: Final = object()
#: ... and then after a user message: the next assistant item ends the wait.
_AFTER_REPLY_USER: Final = object()


class SessionRepairer:
    """A Claude Code session or a Codex rollout in (bytes, in chunks), the same session out,
    repaired in its own format (see the module docstring). Sans-I/O.

    Args:
        fmt: ``"auto"`` (detected from the first lines), ``"claude-code"`` or ``"codex"``.
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
        if fmt != "auto" and fmt not in SESSION_FORMATS:
            raise UsageError(f"a session is repaired in its own format: claude-code or codex, not {fmt!r}")
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
        self.report = report if report is not None else new_report()
        # The report's line counters, kept here and written to it once a chunk (_count): they
        # are fields of a pydantic model, whose validating __setattr__ costs more than the
        # rest of a plain line's bookkeeping.
        self._n_in = self.report.messages_in
        self._n_out = self.report.messages_out
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
        self._misses: list[tuple[str | None, bool]] = []
        self._dialect: _Dialect | None = None
        self._lines = LineSplitter(source=source, max_line_bytes=max_line_bytes)
        self._waiting: list[_Line] = []  # lines read before the format is known
        self._turn: _Turn | None = None
        self._held: list[_Line] | None = None  # lines after a user message that ended a turn with open calls
        self._held_bytes = 0
        self._held_stamp: Any = None  # the timestamp before the first held line
        # _AFTER_USER, or the message.id of the assistant turn whose first line began the hold
        self._held_key: Any = _AFTER_USER
        self._moved: list[_Line] = []  # late results, to be written before the held lines
        self._held_prev: str | None = None  # the chain line written last when the wait began
        # Lines not read yet that held lines hang from (a late result, most likely: Claude Code
        # can write a line before the line it hangs from); while there is one, the wait goes on
        # past the line that would end it (see _while_held)...
        self._awaited: set[str] = set()
        self._held_uuids: set[str] = set()  # (of the lines held or moved; both as bounded as those lines)
        # ... and the held lines from this one on (the line that would have ended it) are read
        # again by all the rules when the wait ends, as they would have been read then.
        self._split: int | None = None
        # A late result moved up off a held line -> (that line, the result's line number):
        # the lines after it that hang from it hang from that line instead (_chain.splice).
        self._spliced: dict[str, tuple[str | None, int]] = {}
        self._stamp: Any = None  # the timestamp of the last line read
        self._orig_prev: str | None = None  # the chain line before, as read
        self._out_prev: str | None = None  # the chain line before, as written
        # Removed chain line -> the line its children hang from instead: the first line up
        # its chain that was not removed when it was (None: none was). One entry per removed
        # line, kept to the end on purpose: a later line may name any of them as its parent
        # (a branch, a progress line, a result hanging from its call), not only the last of
        # a run, and a line whose entry was evicted would be left pointing at nothing. Small,
        # then, but kept: its uuid and a pointer (the value is shared by a run of removed
        # lines), about 120 bytes, less than the line removed; at most MAX_REMOVED_LINES.
        self._removed: dict[str, str | None] = {}
        # Parents named by chain lines written that are not known to be written before them
        # (see MAX_PARENTS_AHEAD): a result of one of these uuids is not removed. Each goes
        # when a line of its uuid is written; one of a branch from far back stays.
        self._named: set[str] = set()
        # The uuids of the last lines written, in two generations of _RECENT_LINES at most
        # (the older let go when the newer fills): from _RECENT_LINES to twice that many.
        # (each with its parentUuid as written)
        self._recent: dict[str, str | None] = {}
        self._older: dict[str, str | None] = {}
        self._out = bytearray()
        self._unterminated = False  # the last line written had no newline (the file's last)
        #: The number of the file's last line if it was torn (no newline, not JSON: removed).
        self.torn: int | None = None
        self._closed = False
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
            while self._held is not None:
                self._resolve()
            turn, self._turn = self._turn, None
            if turn is not None and self.trailing_calls == "stub":
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
        line = _Line(body, end, value, number, _Info())
        if self._dialect is None:
            self._waiting.append(line)
            self._detect(final=False, decisive=guess(value)[1])
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
                f"this is a {fmt} file, not a Claude Code session or a Codex rollout",
                source=self.source, line=first, column=None if first is None else 1,
                hint="Only those are repaired in their own format; write it as chat JSONL (--to jsonl) or name its format with --from",
            )
        self._choose(fmt)
        waiting, self._waiting = self._waiting, []
        for line in waiting:
            self._take_line(line)

    def _choose(self, fmt: str) -> None:
        self.format = self.report.format = fmt
        self._dialect = _DIALECTS[fmt]()

    def _take_line(self, line: _Line) -> None:
        dialect = self._dialect
        assert dialect is not None
        looks = guess(line.value)
        if looks[0] == dialect.name:
            self.recognised += 1
        elif len(self._misses) < DETECT_RECORDS:
            self._misses.append(looks)  # what it looks like instead, for the error
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

    def _dispatch(self, line: _Line) -> None:
        if self._held is not None:
            self._while_held(line)
        else:
            self._step(line)

    # -- the pairing rules ------------------------------------------------------------------------

    def _step(self, line: _Line) -> None:
        if line.placed:
            # Its calls answered already (see _resolve); a call of this id in a later turn (a
            # line written twice) it answers too, as it will when the output is read again.
            if self._turn is not None:
                self._turn.answered.update(r for r in line.info.results if r in self._turn.calls)
            self._emit(line)
            return
        info = line.info
        kind = info.kind
        turn = self._turn
        if kind in ("calls", "assistant"):
            assert self._dialect is not None
            if turn is None or not self._dialect.continues(turn, info):
                if turn is not None:
                    if turn.waits():
                        # The turn is over, but a line of the next one may have been written
                        # before the results it follows: hold the next turn's lines (Codex:
                        # all of them, until the user's next message).
                        self._hold(line, turn, info.key if self._dialect.chained else _AFTER_REPLY)
                        return
                    for stub in self._stubs(turn, self._stamp):
                        self._emit(stub)
                turn = self._turn = _Turn(info.key)
            elif info.key is _REPLY and turn.waits():
                # Codex: the assistant's message came between a call and its output (a rollout
                # is in its conversation's order): hold it, for the output to move up.
                self._hold(line, turn, _AFTER_REPLY)
                return
            before = len(turn.calls)
            for call_id, call_kind in info.calls:
                turn.calls.setdefault(call_id, _Call(call_id, call_kind, line))
            if len(turn.calls) > before:
                self._keep_calls(turn, line)
            self._emit(line)
            line.forget()  # kept with its calls until the turn ends
        elif kind == "results":
            if self._answer(line, turn):
                self._emit(line)
            if turn is not None:
                turn.accepting = False
        elif kind == "user":
            if info.results:
                self._answer(line, turn)  # a user line is never removed: it has other content
            if turn is not None and turn.waits():
                if (self._named and info.uuid in self._named) or (info.uuid is not None and self._known(info.uuid)):
                    # A line of the turn, written, hangs from it: it came before the turn on
                    # the chain (the file's order is not the chain's), and ends nothing; nor
                    # does a line written again (its uuid written already).
                    self._emit(line)
                    return
                # The turn is over, but its results may still come: hold what follows.
                self._hold(line, turn, _AFTER_USER)
                return
            self._turn = None
            self._emit(line)
        elif kind == "reset":
            self._turn = None  # what came before is no longer sent: nothing to add
            self._emit(line)
        else:
            self._emit(line)

    def _hold(self, line: _Line, turn: _Turn, key: Any) -> None:
        """Begin a wait for the late results of ``turn``, which ``line`` ended: a user
        message (``key`` is ``_AFTER_USER``), or the first line of the next assistant turn
        (``key`` is its message.id). One budget for the turn: its lines of calls, then what
        it holds while it waits."""
        self._held, self._held_bytes, self._held_stamp, self._held_key = [line], turn.call_bytes + len(line.body), self._stamp, key
        self._held_prev = self._out_prev
        self._split = None
        self._held_uuids.clear()
        self._awaited.clear()
        self._note_ahead(line)
        line.forget()
        turn.accepting = False
        if self._held_bytes > self.max_held_bytes:
            self._resolve()

    def _note_ahead(self, line: _Line) -> None:
        """Note a held line that hangs from a line not read yet (nor removed): a message, not
        a result (one written before its own call is no sign of a late result)."""
        info = line.info
        if not info.chain:
            return
        if (info.parent is not None and info.kind != "results" and info.parent not in self._held_uuids
                and not self._known(info.parent) and info.parent not in self._removed):
            self._awaited.add(info.parent)
        self._read_held(line)

    def _read_held(self, line: _Line) -> None:
        """Note a line held or moved: read, no longer awaited."""
        if line.info.uuid is not None:
            self._held_uuids.add(line.info.uuid)
            self._awaited.discard(line.info.uuid)

    def _while_held(self, line: _Line) -> None:
        assert self._held is not None and self._turn is not None
        info = line.info
        turn = self._turn
        if line.placed:
            self._held.append(line)  # (its calls answered already: see _resolve)
            self._held_bytes += len(line.body)
            return
        if self._split is not None:
            self._while_held_on(line, turn)
            return
        after_user = self._held_key is _AFTER_USER
        if info.kind == "user" and after_user:
            # Results on a line with user text are never split off it: they stay where they
            # are (see Limits), but they do answer their calls.
            turn.answered.update(r for r in info.results if r in turn.calls)
        elif info.kind == "results" and any(r in turn.calls and r not in turn.answered for r in info.results):
            if self._answer(line, turn):
                line.record = ("move_result", f"result(s) {', '.join(info.results)} moved up to their call, before line {self._held[0].number}")
                self._hold_moved(line)
                line.forget()
                self._moved.append(line)
            if not turn.waits():
                self._resolve()
            return
        if after_user and info.kind in ("calls", "assistant") and info.key is not None and info.key == turn.key:
            # A later line of the turn's own message (Claude Code writes a message's parallel
            # calls one line each, and a line the user typed while the first call ran may come
            # between them): the turn goes on. The line moves up, before the held lines, as a
            # late result does, and its calls join the turn.
            before = len(turn.calls)
            for call_id, call_kind in info.calls:
                turn.calls.setdefault(call_id, _Call(call_id, call_kind, line))
            if len(turn.calls) > before:
                self._keep_calls(turn, line)
            self._hold_moved(line)
            line.record = ("move_call", f"line {line.number}, of the turn of line {next(iter(turn.calls.values())).line.number} "
                           f"(message {info.key}), moved up to its turn, before line {self._held[0].number}")
            line.forget()
            self._moved.append(line)
            return
        if after_user:
            ends = info.kind in ("calls", "assistant", "reset")  # the next turn starts
        elif self._held_key is _AFTER_REPLY or self._held_key is _AFTER_REPLY_USER:
            # (the turn's lines are held: its outputs may follow, up to the next turn after
            # the user's next message, as they may after a user message)
            ends = info.kind == "reset" or (self._held_key is _AFTER_REPLY_USER and info.kind in ("calls", "assistant"))
            if info.kind == "user":
                self._held_key = _AFTER_REPLY_USER
        else:
            # The turn held ends: a line of another turn, a user message (read by the rules
            # after the held lines: results on it answer that turn's calls), a boundary.
            ends = info.kind in ("reset", "user") or (
                info.kind in ("calls", "assistant") and (info.key is None or info.key != self._held_key))
        if ends and self._awaited and info.kind != "reset" and turn.waits() and self._dialect is not None and self._dialect.chained:
            # A held line hangs from a line not read yet: in the chain's order (Claude Code's,
            # not the file's), what is held comes after that line, most likely the late result
            # (written after the next turn, or several). The wait goes on, until the open calls
            # are answered, a compaction boundary, or max_held_bytes; the lines from this one on
            # are then read again by all the rules, as they would have been now.
            self._split = len(self._held)
            ends = False
        if ends:
            self._resolve()
            self._dispatch(line)
            return
        self._note_ahead(line)
        line.forget()
        self._held.append(line)
        self._held_bytes += len(line.body)
        if self._held_bytes > self.max_held_bytes or not turn.waits():
            self._resolve()

    def _while_held_on(self, line: _Line, turn: _Turn) -> None:
        """A line read while a wait goes on past the line that would have ended it (see
        ``_split``): a result that answers only open calls of the turn answers them, and is
        held in its place (``placed``: it is not moved up); a boundary, or a result that
        would take the lines held past ``max_held_bytes``, ends the wait (as it would have
        ended before: no error); any other line is held."""
        assert self._held is not None
        info = line.info
        if info.kind == "results" and info.results and all(r in turn.calls and r not in turn.answered for r in info.results):
            if self._held_bytes + len(line.body) <= self.max_held_bytes:
                self._answer(line, turn)
                line.placed = True
                line.forget()
                self._held.append(line)
                self._held_bytes += len(line.body)
                if not turn.waits():
                    self._resolve()
                return
        elif info.kind != "reset":
            line.forget()
            self._held.append(line)
            self._held_bytes += len(line.body)
            if self._held_bytes > self.max_held_bytes:
                self._resolve()
            return
        self._resolve()
        self._dispatch(line)

    def _keep_calls(self, turn: _Turn, line: _Line) -> None:
        """Count a line that made calls against ``max_held_bytes``: each call keeps its line
        until the turn ends (a synthetic result copies its envelope), so a turn's lines of
        calls are held, as many as it makes. Refused past the limit, before it is kept."""
        size = turn.call_bytes + len(line.body)
        limit = self.max_held_bytes
        if size > limit:
            first = next(iter(turn.calls.values())).line.number
            since = "" if first == line.number else f" (from line {first} on)"
            raise LimitExceeded(
                f"the lines with the tool calls of one turn{since}, each kept until the turn ends, come to more than "
                f"max_held_bytes ({limit} bytes)",
                limit="max_held_bytes", value=limit, source=self.source, line=line.number,
                hint="Raise max_held_bytes (in Python: repair_session(..., max_held_bytes=N)) if one turn of this "
                     "session really makes calls that large",
            )
        turn.call_bytes = size

    def _hold_moved(self, line: _Line) -> None:
        """Count a result moving up against ``max_held_bytes``, with the turn's lines of calls
        and the held lines: it is held as long as they are. A held line past the limit ends
        the wait (a turn whose results have not come by then has most likely lost them); a
        result says the opposite: they are coming. Ending the wait there would answer with synthetic results
        calls whose real ones follow, then remove those as orphans; so it is an error,
        raised before the line is kept."""
        size = self._held_bytes + len(line.body)
        limit = self.max_held_bytes
        if size > limit:
            assert self._held is not None
            if self._held_key is _AFTER_USER:
                first, after = "the user's message they came after", "the user's next message"
            elif self._held_key is _AFTER_REPLY or self._held_key is _AFTER_REPLY_USER:
                first, after = "the assistant's item they came after", "the assistant's next item"
            else:
                first, after = "the first line of the next assistant turn, which they came after", "the next assistant turn began"
            raise LimitExceeded(
                f"the late results moving up to their calls, with the lines of the calls and the lines held from line "
                f"{self._held[0].number} on ({first}), come to more than max_held_bytes "
                f"({limit} bytes)",
                limit="max_held_bytes", value=limit, source=self.source, line=line.number,
                hint="Raise max_held_bytes (in Python: repair_session(..., max_held_bytes=N)) if this session "
                     f"really has that much tool output after {after}",
            )
        self._held_bytes = size
        self._read_held(line)

    def _resolve(self) -> None:
        """End a wait: the moved results, the synthetic ones, then the held lines: as they
        are after a user message; read again by the pairing rules after the first line of
        the next assistant turn (they are that turn's lines, and lines between them: no line
        of another turn, nor a user message, so they end no turn and begin no wait). When the
        wait went on past the line that would have ended it (``_split``), the held lines from
        that one on are read again by all the rules (a wait may begin), the results that came
        after it among them, in their place (``placed``)."""
        held, self._held = self._held, None
        if held is None:
            return
        split, self._split = self._split, None
        self._held_uuids.clear()
        self._awaited.clear()
        turn, self._turn = self._turn, None
        # (the results that came after the wait went on are held lines, in their place: after
        # lines that come after them on the chain, which is whole; the file is as it was
        # there, and Claude Code resumes it as it did: it walks from the last line, and a
        # result moved up from there would leave another line last, a branch it would walk)
        moved = self._moved
        spliced = _chain.splice(held, moved) if self._dialect is not None and self._dialect.chained else []
        later = held[split:] if split is not None else []
        if split is not None:
            held = held[:split]
        for line in moved:
            self._emit(line)
        written = bool(moved)
        self._moved = []
        if turn is not None:
            for stub in self._stubs(turn, self._held_stamp):
                self._emit(stub)
                written = True
        if self._held_key is _AFTER_USER:
            first = held[0].info
            if written and first.chain and turn is not None and (first.parent == self._held_prev or any(
                    first.parent == c.line.info.uuid for c in turn.calls.values())):
                held[0].linear = True  # the user's message hangs from the results put before it
            for line in held:
                self._step_held(line)
        else:
            self._held_key = _AFTER_USER
            step = self._step if self._dialect is not None and self._dialect.chained else self._dispatch  # (a wait may begin)
            for line in held:
                step(line)
        for line in later:
            self._dispatch(line)  # (as read when the wait would have ended: a wait may begin)
        self._splice(spliced)

    def _step_held(self, line: _Line) -> None:
        # A held line after the wait: results in it answer nothing any more.
        if line.info.kind == "results" and not line.placed:
            if self._answer(line, None):
                self._emit(line)
        else:
            self._emit(line)

    def _answer(self, line: _Line, turn: _Turn | None) -> bool:
        """Mark the line's results answered; remove (or edit) what answers nothing. Whether
        the line is still to be written."""
        bad: dict[str, str] = {}
        info = line.info
        for call_id in info.results:
            if turn is not None and call_id in turn.calls and call_id not in turn.answered:
                turn.answered.add(call_id)
                if info.parent is not None and info.parent == turn.calls[call_id].line.info.uuid:
                    line.back = True  # hangs from its tool_use line (2.1): written before it
            else:
                bad[call_id] = "drop_" + stray_result_kind(call_id, turn.answered if turn is not None else ())
        if not bad:
            return True
        whole = len(bad) == len(info.results) and info.kind == "results"
        if whole and info.chain and info.uuid in self._named:
            # A line already written hangs from it: removed, it would leave that line hanging
            # from nothing, and the chain Claude Code walks cut above it. In the chain's order
            # it most likely answers its call (the file's order is not the chain's): kept.
            return True
        if self.orphan_results == "error":
            raise InvalidMessage(
                f"a result for {', '.join(bad)}, which no call of its turn awaits",
                source=self.source, line=line.number,
                hint="Drop such results with orphan_results='drop' (--orphan-results drop)",
            )
        what = "answers a call already answered" if set(bad.values()) == {"drop_duplicate_result"} else "answers no call of its turn"
        if whole:
            kind = next(iter(bad.values()))
            self.report.add(kind, f"line {line.number} {what} ({', '.join(bad)}); removed, kept here whole",
                            line=line.number, dropped=line.body.decode("utf-8", "backslashreplace"))
            if line.info.chain and line.info.uuid is not None:
                self._remove(line.info.uuid, line.info.parent, line.number)
            return False
        assert self._dialect is not None
        old = line.parsed()
        value = self._dialect.without_results(old, set(bad))
        dropped = [b for b in old["message"]["content"] if isinstance(b, dict) and _str_in(b.get("tool_use_id"), bad)]
        self.report.add(next(iter(bad.values())), f"line {line.number}: tool_result block(s) for {', '.join(bad)} {what}; removed from the line, kept here",
                        line=line.number, dropped=dropped)
        line.value, line.forgotten = value, False
        line.body = dumps(value)
        line.info.results = [r for r in line.info.results if r not in bad]
        return True

    def _stubs(self, turn: _Turn, stamp: Any) -> list[_Line]:
        assert self._dialect is not None
        stubs = []
        for n, call in enumerate(turn.unanswered(), 1):
            value = self._dialect.stub(call, self.stub_text, stub_stamp(stamp, n) if self._dialect.chained else stamp)
            info = _Info(kind="results", results=[call.id])
            if self._dialect.name == "claude-code":
                info.chain, info.uuid, info.parent = True, value["uuid"], value["parentUuid"]
            line = _Line(dumps(value), b"\n", value, call.line.number, info)
            line.linear = info.chain and info.parent is None  # hangs from the line before it
            line.synthetic = call
            line.record = (STUB_KIND, stub_detail(call.id, call.line.number, call.kind))
            stubs.append(line)
            turn.answered.add(call.id)
        return stubs

    def _splice(self, spliced: list[tuple[str, str, int]]) -> None:
        """Note late results moved up off the held lines they hung from (see
        :func:`._chain.splice`), once the held lines are written; bounded with the removed
        lines, and kept to the end as they are."""
        for moved, above, number in spliced:
            self._bound(number)
            self._spliced[moved] = (self._surviving(above), number)

    def _bound(self, number: int, removed: str | None = None) -> None:
        if len(self._removed) + len(self._spliced) >= MAX_REMOVED_LINES and (removed is None or removed not in self._removed):
            raise LimitExceeded(
                f"more than {MAX_REMOVED_LINES} lines of this session's chain would be removed (tool results "
                "that answer no call), each remembered to the end of the file for the lines that hang from it",
                limit="MAX_REMOVED_LINES", value=MAX_REMOVED_LINES, source=self.source, line=number,
                hint="No real session has this many; check that the file is one session, not several joined",
            )

    def _remove(self, removed: str, parent: str | None, number: int) -> None:
        """Note a removed chain line: its children will hang from the line ``parent`` stands
        for. Stored resolved, so that a chain of removed lines (orphan results one after the
        other) costs one step per line, not one per line before it."""
        self._bound(number, removed)
        new = self._surviving(parent)
        # Its own chain leads back to it (a line that is its own parent, or a loop of removed
        # lines): nothing above it survives, and pointing at itself would be a loop to walk.
        self._removed[removed] = None if new == removed else new

    def _known(self, parent: str | None) -> bool:
        """``parent`` is one of the recent lines written (None: no line)."""
        return parent is None or parent in self._recent or parent in self._older

    def _name_ahead(self, parent: str, number: int) -> None:
        """Note a parent that a line written names, not known to be written before it (see
        ``_named``)."""
        named = self._named
        if parent in named:
            return
        if len(named) >= MAX_PARENTS_AHEAD:
            raise LimitExceeded(
                f"more than {MAX_PARENTS_AHEAD} lines of this session's chain hang from a line not known to be written "
                "before them (not the line before them, nor their own tool_use line: a line written after them, or a "
                "branch from far back), each remembered until that line is written so that it is not removed",
                limit="MAX_PARENTS_AHEAD", value=MAX_PARENTS_AHEAD, source=self.source, line=number,
                hint="No real session has this many; check that the file is one session, not several joined",
            )
        named.add(parent)

    def _surviving(self, parent: str | None) -> str | None:
        """``parent``, or, if that line was removed, the line its children hang from instead.

        An entry names a line that was not removed when it was stored, but that line may be
        removed since (a parentUuid that names a later line): then the walk goes on, and
        every entry it passed is pointed at the end of it (path compression), so a line
        walked once is one step from then on. No entry points at a removed line that leads
        back to it (see ``_remove``): the walk ends.
        """
        removed = self._removed
        if parent is None or parent not in removed:
            return parent
        new = removed[parent]
        if new is None or new not in removed:
            return new
        path = [parent]
        while new is not None and new in removed:
            path.append(new)
            new = removed[new]
        for passed in path:
            removed[passed] = new
        return new

    # -- writing --------------------------------------------------------------------------------

    def _repoint(self, line: _Line, new: str | None) -> None:
        info = line.info
        if line.synthetic is not None:
            line.value["parentUuid"] = new
            line.body = dumps(line.value)
        else:
            old = info.parent
            line.body = _chain.repointed(line.body, line.parsed(), new)
            self.report.add("repoint_parent", f"line {line.number}: parentUuid {old} -> {new}, so the chain from the last line stays whole",
                            line=line.number, output=self._n_out, dropped={"parentUuid": old})
        info.parent = new

    def _emit(self, line: _Line) -> None:
        info = line.info
        if info.chain:
            new = info.parent
            named = self._named
            moved = self._spliced.get(new) if self._spliced and new is not None else None
            if moved is not None and line.number > moved[1]:
                new = self._surviving(moved[0])  # it hung from a result that moved up: see _chain.splice
            elif line.linear and not (named and info.uuid in named and self._known(new)) and _chain.between(self._out_prev, new, self._recent, self._older):
                new = self._out_prev
            else:
                # (a line that a line already written hangs from keeps its parent, when that is
                # written: the line before it may be that child, or hang from it: a loop)
                new = self._surviving(new)
                if new is not None and line.synthetic is None and not (line.back and new == info.parent) and not self._known(new):
                    self._name_ahead(new, line.number)
            if new != info.parent:
                self._repoint(line, new)
            self._out_prev = info.uuid
        elif info.parent is not None and info.parent in self._removed:
            self._repoint(line, self._surviving(info.parent))  # (a line of another thread: it hung from a line removed)
        elif info.parent is not None and not self._known(info.parent):
            self._name_ahead(info.parent, line.number)  # (a line of no thread yet, or of another: untouched)
        if info.uuid is not None:
            # Written: no longer a parent named ahead; one of the recent lines.
            if self._named:
                self._named.discard(info.uuid)
            recent = self._recent
            recent[info.uuid] = info.parent
            if len(recent) >= _RECENT_LINES:
                self._older, self._recent = recent, {}
        if line.record is not None:
            kind, detail = line.record
            self.report.add(kind, detail, line=line.number, output=self._n_out)
        if self._unterminated:
            self._out += b"\n"  # a last line without a newline is no longer the last
        self._out += line.body + line.end
        self._unterminated = line.end == b""
        self._n_out += 1


def repair_session(source: Any, dest: Any, fmt: str = "auto", *, report: Report | None = None, **options: Any) -> Report:
    """Repair a Claude Code session or a Codex rollout in its own format (see
    :class:`SessionRepairer`, whose keyword options this takes): ``source`` a path or a
    binary file, ``dest`` a path or a binary file (not the source itself: for that, the
    command line's ``--in-place`` writes a temporary file and renames it). Returns the report.
    """
    f, name, owned = open_source(source)
    try:
        repairer = SessionRepairer(fmt, report=report, source=name, **options)
        out, owned_out = _open(dest)
        try:
            while chunk := f.read(CHUNK_BYTES):
                out.write(repairer.feed(chunk))
            out.write(repairer.close())
            out.flush()
        finally:
            if owned_out:
                out.close()
    finally:
        if owned:
            f.close()
    return repairer.report
