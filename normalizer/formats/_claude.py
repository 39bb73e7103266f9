"""The ``claude-code`` format: Claude Code session JSONL -> chat messages (formats.md §2).

Its content is Anthropic blocks, converted as ``_blocks`` says. Claude Code writes one line
per content block, so the lines of one API response share ``message.id`` and are merged into one assistant message (exact-duplicate blocks, which
streaming snapshots produce, are dropped and counted). The turn stays pending while its
results arrive -- in any order, across snapshot, system and sidechain lines -- and ends at the
next line that carries new content. What it holds, its blocks and those results, is bounded by
``max_record_bytes`` (in bytes of their JSON): the line that would take it past that is refused
with :class:`~normalizer.LimitExceeded`. So is what ``keep_sidechains`` holds of a Claude Code 1.0 sub-agent's transcript until it ends.

A file whose first conversation line is a sub-agent's (``isSidechain``: Claude Code 2.1 writes
each sub-agent to ``<session>/subagents/agent-*.jsonl``, every line sidechain) is that
sub-agent's conversation: its lines are read as the file's own (``subagent_transcript``).

A session is repaired in its own format by the session editor (``_sessions``, its
``_ClaudeCode`` dialect: ``--to claude-code``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .._errors import LimitExceeded
from .._report import Report
from ._blocks import EMPTY_TURN, THINKING_KEY, BlockConverter, message_size, result_size, value_size
from ._common import Turn, count, describe, invalid, note_extra
from ._format import Clue, Evidence, Format, Output
from ._records import DEFAULT_MAX_RECORD_BYTES

__all__ = ["ClaudeCodeConverter", "CLAUDE_LINE_TYPES", "Sidechain", "guess", "FORMAT"]

#: Line types Claude Code writes that carry no conversation (and some that do). Used by
#: format detection; unknown types are skipped and counted anyway.
CLAUDE_LINE_TYPES = frozenset({
    "user", "assistant", "system", "summary", "file-history-snapshot", "queue-operation",
    "last-prompt", "progress", "attachment", "permission-mode", "custom-title", "ai-title",
    "agent-name", "pr-link", "worktree-state",
})


@dataclass(frozen=True, slots=True)
class _Cut:
    """A sub-agent transcript cut at ``max_record_bytes``: the line it began on, and the one
    refused (either None: records in memory)."""

    began: int | None
    refused: int | None


@dataclass(frozen=True, slots=True)
class Sidechain:
    """A finished Claude Code sub-agent transcript (with ``keep_sidechains=True``): a reader
    event, given out after the main conversation by the conversation readers."""

    messages: list[dict[str, Any]]
    #: Its messages' size as ``max_record_bytes`` counts it (see ``keep_sidechains``): what
    #: holding it costs, for whoever holds it longer.
    size: int
    #: The line it began on (None: records in memory).
    line: int | None


class _TurnSize:
    """The :func:`message_size` of what a pending Claude Code turn will give out (its message,
    then its results), kept up to date as the turn grows: each text, call, block and result is
    measured once, when it joins the turn (measuring the turn again at each of its lines would
    make a turn of k lines cost k² steps). It follows what ``Turn.message()`` makes of a Claude
    Code turn, which keeps no other blocks than thinking ones, and has no refusal, ``extra``
    or source fields of its own (only an Anthropic message's fields go there).
    """

    __slots__ = ("turn", "size", "_texts", "_said", "_reasoning", "_thought", "_calls", "_blocks", "_results")

    def __init__(self, turn: Turn) -> None:
        self.turn = turn
        #: What the turn gives out, as of the last update.
        self.size = EMPTY_TURN
        # How many of the turn's texts, reasoning, calls, thinking blocks and results are taken
        # in, and how many of its texts and reasoning are not empty (a message joins those).
        self._texts = self._reasoning = self._calls = self._blocks = self._results = 0
        self._said = self._thought = 0

    def update(self) -> None:
        """Take in what joined the turn since the last update (each new item adds its length,
        and what joins it to the ones before: a blank line, a comma, or the key of the first)."""
        turn, size = self.turn, self.size
        if len(turn.texts) > self._texts:
            for text in turn.texts[self._texts:]:
                if text:
                    # The first is the content, instead of "" (or null, in a turn with calls).
                    size += len(text) + 2 if self._said else len(text) - (len(b"null") if self._calls else 0)
                    self._said += 1
            self._texts = len(turn.texts)
        if len(turn.calls) > self._calls:
            for call in turn.calls[self._calls:]:
                if self._calls:
                    size += value_size(call) + 1
                else:  # the first: the key, the brackets, and null content if there is no text
                    size += len("tool_calls") + 2 + value_size(call) + (0 if self._said else len(b"null"))
                self._calls += 1
        if len(turn.reasoning) > self._reasoning:
            for text in turn.reasoning[self._reasoning:]:
                if text:
                    size += len(text) + 2 if self._thought else len("reasoning_content") + len(text)
                    self._thought += 1
            self._reasoning = len(turn.reasoning)
        blocks = turn.preserved.get(THINKING_KEY)
        if blocks is not None and len(blocks) > self._blocks:
            for block in blocks[self._blocks:]:
                size += value_size(block) + (1 if self._blocks else len(THINKING_KEY) + 2)
                self._blocks += 1
        if len(turn.results) > self._results:
            size += sum(map(result_size, turn.results[self._results:]))
            self._results = len(turn.results)
        self.size = size




class ClaudeCodeConverter(BlockConverter):
    """Claude Code session lines in, chat messages out.

    Args:
        report: where skipped lines are counted and dropped content is recorded.
        keep_sidechains: convert sub-agent (``isSidechain``) lines into conversations of
            their own, collected by :meth:`take_sidechains`, instead of dropping them. A
            sub-agent's transcript is held until it ends (the next one's first line, or
            :meth:`close`), up to ``max_record_bytes`` in bytes of its messages' JSON (keys
            and strings by their length, other values as JSON), its pending turn counted as it
            will be given out: the line that would take it past this is refused with
            :class:`LimitExceeded` (``limit="max_record_bytes"``), saying the line the
            transcript began on. The transcript ends there: the messages it gave out before
            that line are its conversation (:meth:`take_sidechains`), its later lines are left
            out (``drop_sidechain``) until the next sub-agent's first line.
        keep_meta: keep ``isMeta`` user lines (harness-injected text) as user messages.
        max_record_bytes: the most the pending turn holds, in bytes of JSON: the content
            blocks of its assistant message (one ``message.id`` written over several lines;
            a duplicate block counts once) and the tool results held behind it until the
            turn ends. The line that would take it past this is refused with
            :class:`LimitExceeded` (``limit="max_record_bytes"``). The readers pass their own
            ``max_record_bytes``: the message is one record, built from several lines.
    """

    name = "claude-code"
    multi = False
    _limit_hint = (
        "Raise max_record_bytes if one turn of this session really is that large (Claude Code writes a turn as a "
        "few lines)"
    )

    def __init__(
        self, report: Report | None = None, *, keep_sidechains: bool = False, keep_meta: bool = False,
        max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES,
    ) -> None:
        super().__init__(report, max_record_bytes=max_record_bytes)
        self.keep_sidechains = keep_sidechains
        self.keep_meta = keep_meta
        self._side: ClaudeCodeConverter | None = None
        self._side_messages: list[dict[str, Any]] = []
        self._sidechains: list[Sidechain] = []
        # What the open sub-agent transcript holds (max_record_bytes): the size of the messages
        # it gave out, its pending turn's as it grows, and its first line (the error's).
        self._side_bytes = 0
        self._side_turn: _TurnSize | None = None
        self._side_began: int | None = None
        # A transcript cut at the limit: where it began and the line refused (its later lines
        # are left out until the next transcript begins); None: none is.
        self._side_cut: _Cut | None = None
        # None until the first conversation line: is the file a sub-agent's own transcript?
        self._subagent: bool | None = None
        #: Lines of no type Claude Code writes (the reader's "was anything recognised?").
        self.unrecognised = 0

    def feed(self, record: Any, *, line: int | None = None) -> list[dict[str, Any]]:
        if not isinstance(record, dict) or not isinstance(record.get("type"), str):
            raise invalid(
                f"expected a Claude Code session line with a 'type', got {describe(record)}",
                line=line,
                hint="Is this a Claude Code session file? Try another --from format",
            )
        kind = record["type"]
        if kind not in ("user", "assistant"):
            if kind not in CLAUDE_LINE_TYPES:
                self.unrecognised += 1
            count(self.report, f"skip_{kind}" if kind in CLAUDE_LINE_TYPES else "skip_unknown_line")
            return []
        message = record.get("message")
        if not isinstance(message, dict):
            raise invalid(f"{kind} line has message {describe(message)}, expected an object", line=line, field="message")
        if self._subagent is None:
            self._subagent = bool(record.get("isSidechain"))
            if self._subagent:
                note_extra(self.report, "subagent_transcript", "the first conversation line is a sub-agent's "
                           "(isSidechain): the file is that sub-agent's transcript, read as its own conversation",
                           line=line, dropped=None)
        if record.get("isSidechain") and not self._subagent:
            return self._sidechain(record, line)
        if kind == "assistant":
            if message.get("model") == "<synthetic>" or record.get("isApiErrorMessage"):
                # Harness-made error text ("API Error: 529 ...") is not a model turn (A6).
                note_extra(self.report, "drop_synthetic", "synthetic assistant line (harness error message) left out", line=line, dropped=record)
                return []
            key = message.get("id") or record.get("requestId") or record.get("uuid")
            return self._assistant(message.get("content"), key, line)
        if record.get("isMeta") and not self.keep_meta:
            note_extra(self.report, "drop_meta", "isMeta user line (harness-injected text) left out", line=line, dropped=record)
            return []
        if record.get("isCompactSummary"):
            count(self.report, "compact_summary")
        return self._user(message.get("content"), line)

    def close(self) -> list[dict[str, Any]]:
        out = self.flush()
        self._end_sidechain()
        return out

    def take_sidechains(self) -> list[Sidechain]:
        """Sub-agent conversations completed so far (with ``keep_sidechains``): ended, or cut
        where they went past ``max_record_bytes``."""
        done, self._sidechains = self._sidechains, []
        return done

    def _sidechain(self, record: dict[str, Any], line: int | None) -> list[dict[str, Any]]:
        if not self.keep_sidechains:
            # A4: a sub-agent's prompt between a Task call and its result is not a user turn.
            note_extra(self.report, "drop_sidechain", f"sub-agent ({record['type']}) line left out of the main conversation", line=line, dropped=record)
            return []
        if record.get("parentUuid") is None and record["type"] == "user":
            self._end_sidechain()  # a root line starts the next sub-agent transcript
        elif self._side_cut is not None:
            began, refused = self._side_cut.began, self._side_cut.refused
            past = "" if refused is None else f" on line {refused}"
            note_extra(self.report, "drop_sidechain", f"sub-agent ({record['type']}) line left out: its transcript"
                       f"{_begun(began)} went past max_record_bytes{past}", line=line, dropped=record)
            return []
        if self._side is None:
            self._side = ClaudeCodeConverter(self.report, keep_meta=self.keep_meta, max_record_bytes=self.max_record_bytes)
        self._hold_side(self._side, self._side.feed(dict(record, isSidechain=False), line=line), line)
        return []

    def _hold_side(self, side: ClaudeCodeConverter, out: list[dict[str, Any]], line: int | None) -> None:
        """Add what the transcript gave out for a line, and what its pending turn now holds, to
        what it holds; past ``max_record_bytes``, cut it there (see ``keep_sidechains``)."""
        held, sizes, new = self._side_bytes, self._side_turn, out
        if sizes is not None:
            sizes.update()
            if sizes.turn is not side._turn:
                # Given out by this line: its message and results lead, counted as they were held.
                held += sizes.size
                new = out[1 + len(sizes.turn.results):]
                sizes = None
        if new:
            held += sum(map(message_size, new))
        if sizes is None and side._turn is not None:
            sizes = _TurnSize(side._turn)
            sizes.update()
        # The pending turn counts now, not once given out: its transcript's last turn goes out
        # when the transcript ends, at the next one's first line or at close(), and refusing
        # there would refuse a line of another transcript, or lose the end of the main
        # conversation (the reader does not close a converter twice).
        if held + (sizes.size if sizes is not None else 0) > self.max_record_bytes:
            raise self._cut_sidechain(line)
        self._side_bytes, self._side_turn = held, sizes
        self._side_messages.extend(out)
        if self._side_began is None:
            self._side_began = line  # its first line held (one refused before it is not in it)

    def _cut_sidechain(self, line: int | None) -> LimitExceeded:
        """End the open transcript at the line that takes it past ``max_record_bytes``: the
        messages given out before it go out, the rest is let go; the error for that line."""
        began = line if self._side_began is None else self._side_began
        self._end_sidechain(last_turn=False)
        self._side_cut = _Cut(began, line)
        limit = self.max_record_bytes
        return LimitExceeded(
            f"the sub-agent (isSidechain) transcript{_begun(began) if began != line else ''} would hold more than "
            f"{limit} bytes of JSON in its messages",
            limit="max_record_bytes",
            value=limit,
            line=line,
            hint="Raise max_record_bytes if this sub-agent transcript really is that large, or read the session "
            "without keep_sidechains (its sub-agent lines are then left out)",
        )

    def _end_sidechain(self, *, last_turn: bool = True) -> None:
        """End the open transcript (``last_turn``: its pending turn given out with it)."""
        if self._side is not None:
            size = self._side_bytes
            if last_turn:
                self._side_messages.extend(self._side.close())  # its last turn: counted already
                size += self._side_turn.size if self._side_turn is not None else 0
            if self._side_messages:
                self._sidechains.append(Sidechain(self._side_messages, size, self._side_began))
            self._side, self._side_messages = None, []
        self._side_bytes, self._side_turn, self._side_began, self._side_cut = 0, None, None, None


def _begun(line: int | None) -> str:
    """Where a sub-agent transcript began, in the words of its errors and notes."""
    return "" if line is None else f" (begun on line {line})"


# -- the format -----------------------------------------------------------------------------------

# Keys only Claude Code's lines have (with a line type of its own: a session line).
_CLAUDE_KEYS = ("uuid", "parentUuid", "sessionId", "leafUuid", "messageId")


def guess(record: dict[str, Any]) -> Clue | None:
    """A line of a Claude Code type with one of its session keys."""
    kind = record.get("type")
    if isinstance(kind, str) and kind in CLAUDE_LINE_TYPES and any(k in record for k in _CLAUDE_KEYS):
        return Clue(Evidence.LINE_TYPE)
    return None


FORMAT: Format = Format(
    "claude-code", ClaudeCodeConverter, guess,
    outputs=(Output("claude-code", 60, dialect="_session_lines.ClaudeCode"),),
    options=("keep_sidechains", "keep_meta"), assembling=True,
)
