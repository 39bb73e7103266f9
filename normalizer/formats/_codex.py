"""Codex CLI rollout JSONL -> chat messages (formats.md §1).

Each line is ``{timestamp, type, payload}``. Only ``response_item`` payloads are model-visible
history (they are Responses items, converted by :class:`ResponsesConverter`). ``event_msg``
lines repeat the same user text, agent text and reasoning for the UI: converting them too
would duplicate turns (C3), so they are skipped and counted, except ``turn_aborted`` (a turn
boundary), ``thread_rolled_back`` (history control), and a ``user_message`` whose words no
``response_item`` user message since the last one carries: some files hold the user's words
only there (Codex Desktop 0.128 as committed in the wild), and they become the user message
(``user_from_event``). Unknown line types are skipped and counted (C9): Codex adds new ones
often.

History control (§1.3) cannot be applied by a one-pass stream, because it removes lines that
came *before* it. When the input can be read twice (a file), :class:`CodexPlanner` scans it
first (cheap: most lines are rejected by a substring test) and the converter then leaves out
what a ``compacted`` line or a ``thread_rolled_back`` event removes, as Codex does on resume:

* ``compacted`` with ``replacement_history``: the replacement is the whole history up to
  that point; every earlier ``response_item`` is left out (counted as ``skip_compacted``).
* ``compacted`` without it: earlier user messages are kept, everything else before it is
  left out, and the summary becomes an assistant message (Codex renders a ``CompactedItem``
  as an assistant ``output_text`` message).
* ``thread_rolled_back{num_turns: N}``: the last N user turns before it are left out.

Without a plan (stdin), these lines are recorded in the report (``compaction_not_applied``,
``rollback_not_applied``) and the history is kept as written.

The plan holds where each user turn still standing began and the line ranges rollbacks
left out (merged as they come), at most :data:`MAX_ROLLBACK_TURNS` of them together.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any, Final

from .._errors import LimitExceeded
from .._json import JSONDecodeError, loads
from .._report import Report
from ._common import count, describe, invalid, note_extra, with_source
from ._format import Clue, Evidence, Format, Output
from ._records import DEFAULT_MAX_LINE_BYTES, LineSplitter
from ._responses import ResponsesConverter

__all__ = ["CodexConverter", "CodexPlan", "CodexPlanner", "plan_codex", "CODEX_LINE_TYPES", "MAX_ROLLBACK_TURNS", "guess", "FORMAT"]

#: The most user turns and rolled-back line ranges the Codex planner remembers together:
#: where each user turn still standing began (8 bytes each, to know what a later
#: ``thread_rolled_back`` removes), and each range of lines a rollback left out that no
#: later range merged with (about 140 bytes each, held for the whole main pass). A rollback
#: turns the turns it removes into one range at most, so the count only grows with a
#: ``user_message`` event, and the event past it is refused at its line. No real rollout
#: comes near it (1,000,000 ranges are about 140 MB).
MAX_ROLLBACK_TURNS: Final = 1_000_000

#: Line types Codex has written (protocol.rs, history/lib.rs). Used by format detection.
CODEX_LINE_TYPES = frozenset({
    "session_meta", "response_item", "compacted", "turn_context", "event_msg",
    "inter_agent_communication", "inter_agent_communication_metadata", "world_state",
    "token_usage_record", "security_risk_score", "retained_context", "realtime_item",
})


@dataclass
class CodexPlan:
    """What history control removes, found by a first pass over the file."""

    compaction_line: int | None = None
    compaction_replaces: bool = False
    # Sorted, merged [start, end) line ranges left out by rollbacks (disjoint, so each
    # range starts after the previous one ends: :meth:`keeps` relies on it). A range may
    # reach over the ``thread_rolled_back`` line that ends the one before it (never asked
    # about: it is no item), so that rollback after rollback is one range.
    rolled_back: list[tuple[int, int]] = field(default_factory=list)

    def keeps(self, line: int | None, item: Any) -> bool:
        """Whether the item at ``line`` is left in the history (None: no line, kept)."""
        if line is None:
            return True
        if _in_ranges(self.rolled_back, line):
            return False
        if self.compaction_line is not None and line < self.compaction_line:
            if self.compaction_replaces:
                return False
            return isinstance(item, dict) and item.get("type") == "message" and item.get("role") == "user"
        return True

    @property
    def empty(self) -> bool:
        return self.compaction_line is None and not self.rolled_back


_range_start = itemgetter(0)


def _in_ranges(ranges: list[tuple[int, int]], line: int) -> bool:
    """Whether ``line`` is in one of ``ranges`` (sorted, disjoint ``[start, end)``).

    Only the last range starting at or before ``line`` can hold it, and a binary search
    finds that one: a scan of every range per item made a rollout with many rollbacks
    quadratic (R ranges times the items).
    """
    i = bisect_right(ranges, line, key=_range_start)
    return i > 0 and line < ranges[i - 1][1]


class CodexPlanner:
    """The raw bytes of a rollout file in, fed in chunks, a :class:`CodexPlan` out (sans-I/O).

    The readers' first pass: they read the file again from its start and feed it here,
    then give :meth:`close`'s plan to the reader (``Reader.set_plan``). Constant memory,
    except where each user turn still standing began (8 bytes each, needed to know what a
    rollback removes) and the ranges rollbacks left out (merged as they come: contained,
    overlapping or adjacent ones are one), at most :data:`MAX_ROLLBACK_TURNS` of them
    together.

    Raises:
        LimitExceeded: the ``user_message`` event that would take the turns and ranges
            remembered past :data:`MAX_ROLLBACK_TURNS`, at its line.
    """

    def __init__(self, *, source: str = "<input>", max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> None:
        # Lines keep their newline (a memchr a line): a substring test and the parser ignore it.
        self._lines = LineSplitter(source=source, max_line_bytes=max_line_bytes)
        self._source = source
        self._plan = CodexPlan()
        # Where each user turn still standing began (line numbers, increasing).
        self._turn_starts = array("q")
        self._last_user_item: int | None = None
        # The ranges left out so far: sorted, disjoint, merged on append (see _roll_back).
        self._ranges: list[tuple[int, int]] = []

    def feed(self, chunk: bytes) -> None:
        line = self._lines.line
        for raw in self._lines.feed(chunk):
            line += 1
            self.feed_line(line, raw)

    def close(self) -> CodexPlan:
        line = self._lines.line
        for raw in self._lines.close():
            self.feed_line(line + 1, raw)
        return self.result()

    def feed_line(self, line: int, raw: bytes) -> None:
        """One raw line (``line``: its 1-based number), with or without its newline."""
        # Most lines are rejected by a substring test, without decoding them.
        if b"compacted" not in raw and b"user" not in raw and b"thread_rolled_back" not in raw:
            return
        try:
            rec = loads(raw)  # (as the main pass parses it)
        except JSONDecodeError:
            return  # the main pass reports it, with its position
        if not isinstance(rec, dict) or not isinstance(rec.get("payload"), dict):
            return
        kind, payload = rec.get("type"), rec["payload"]
        if kind == "compacted":
            self._plan.compaction_line = line
            self._plan.compaction_replaces = isinstance(payload.get("replacement_history"), list)
        elif kind == "response_item" and payload.get("type") == "message" and payload.get("role") == "user":
            self._last_user_item = line
        elif kind == "event_msg" and payload.get("type") == "user_message":
            # Only this grows what is remembered: a rollback turns n turns into one range.
            if len(self._turn_starts) + len(self._ranges) >= MAX_ROLLBACK_TURNS:
                raise LimitExceeded(
                    f"more than {MAX_ROLLBACK_TURNS} user turns and rolled-back line ranges would be "
                    "remembered to apply this rollout's rollbacks (thread_rolled_back), each kept to "
                    "the end of the file", limit="MAX_ROLLBACK_TURNS", value=MAX_ROLLBACK_TURNS,
                    source=self._source, line=line,
                    hint="No real rollout has this many; check that the file is one rollout, not several joined",
                )
            # The response_item user message just before this event starts the turn.
            self._turn_starts.append(self._last_user_item if self._last_user_item is not None else line)
        elif kind == "event_msg" and payload.get("type") == "thread_rolled_back":
            n = payload.get("num_turns")
            if isinstance(n, int) and not isinstance(n, bool) and n > 0 and self._turn_starts:
                n = min(n, len(self._turn_starts))
                self._roll_back(self._turn_starts[-n], line)
                del self._turn_starts[-n:]

    def _roll_back(self, start: int, line: int) -> None:
        """Leave out ``[start, line)``, merged into the ranges so far (sorted and disjoint).

        Each range ends at its rollback's line, so every range so far ends before this one
        does: the ones starting at or after ``start`` are inside it (a rollback reaching
        further back than the one before), and only the last of the others may touch it.
        That one is merged into it when it overlaps it, or ends at ``start`` or the line
        before (that line is then the earlier ``thread_rolled_back`` itself, which no item
        is ever asked about): rollback after rollback, the usual way a turn is asked again,
        is one range, not one per rollback. The result is what sorting and merging every
        range at the end gave, less those one-line gaps.
        """
        ranges = self._ranges
        while ranges and ranges[-1][0] >= start:
            ranges.pop()
        if ranges and ranges[-1][1] + 1 >= start:
            start = ranges.pop()[0]
        ranges.append((start, line))

    def result(self) -> CodexPlan:
        plan = self._plan
        plan.rolled_back = list(self._ranges)  # sorted and disjoint already (_roll_back)
        return plan


def plan_codex(lines: Iterable[tuple[int, bytes]]) -> CodexPlan:
    """Scan raw rollout lines ``(line number, bytes)`` for ``compacted`` lines and rollbacks."""
    planner = CodexPlanner()
    for line, raw in lines:
        planner.feed_line(line, raw)
    return planner.result()


class CodexConverter:
    """Rollout lines in, chat messages out.

    Args:
        report: where skips and notes are recorded.
        plan: the result of :func:`plan_codex` over the same file, or None for a one-pass
            stream (history control is then recorded, not applied).
        base_instructions: emit ``session_meta.base_instructions.text`` as a system message.
    """

    name = "codex"
    multi = False

    def __init__(self, report: Report | None = None, *, plan: CodexPlan | None = None, base_instructions: bool = True) -> None:
        self.report = report
        self.plan = plan
        self.base_instructions = base_instructions
        self._items = ResponsesConverter(report)
        self._meta_seen = False
        # Texts of the consecutive response_item user messages just read: a user_message
        # event repeats one of them (skipped), or holds words found nowhere else (kept).
        self._user_texts: list[str] = []
        #: Lines of no type Codex writes (the reader's "was anything recognised?").
        self.unrecognised = 0

    def feed(self, record: Any, *, line: int | None = None) -> list[dict[str, Any]]:
        if not isinstance(record, dict) or not isinstance(record.get("type"), str):
            raise invalid(
                f"expected a rollout line {{timestamp, type, payload}}, got {describe(record)}",
                line=line,
                hint="Is this a Codex rollout file? Try another --from format",
            )
        kind = record["type"]
        payload = record.get("payload")
        if kind == "response_item":
            if self.plan is not None and not self.plan.keeps(line, payload):
                count(self.report, "skip_compacted" if self._before_compaction(line) else "skip_rolled_back")
                return []
            out = self._items.feed(payload, line=line)
            if isinstance(payload, dict) and payload.get("type") == "message" and payload.get("role") == "user":
                content = payload.get("content")
                parts = content if isinstance(content, list) else [{"text": content}]
                self._user_texts += [p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)]
            elif self._user_texts:
                self._user_texts = []  # the event follows its user items at once: these are not its
            return out
        if kind == "event_msg":
            return self._event(payload, line)
        if kind == "compacted":
            return self._compacted(payload, line)
        if kind == "session_meta":
            return self._session_meta(payload, line)
        if kind not in CODEX_LINE_TYPES:
            self.unrecognised += 1
        count(self.report, f"skip_{kind}" if kind in CODEX_LINE_TYPES else "skip_unknown_line")
        return []

    def close(self) -> list[dict[str, Any]]:
        return self._items.close()

    def _before_compaction(self, line: int | None) -> bool:
        plan = self.plan
        return plan is not None and plan.compaction_line is not None and line is not None and line < plan.compaction_line

    def _session_meta(self, payload: Any, line: int | None) -> list[dict[str, Any]]:
        count(self.report, "skip_session_meta")
        if self._meta_seen or not self.base_instructions or not isinstance(payload, dict):
            return []  # a forked file also carries its parent's meta: only the first counts
        self._meta_seen = True
        base = payload.get("base_instructions")
        text = base.get("text") if isinstance(base, dict) else None
        if isinstance(text, str) and text:
            return [{"role": "system", "content": text}]
        return []

    def _event(self, payload: Any, line: int | None) -> list[dict[str, Any]]:
        kind = payload.get("type") if isinstance(payload, dict) else None
        count(self.report, "skip_event_msg")
        if kind == "turn_aborted":
            # The aborted turn gets no closing message: whatever it held is complete as is.
            return self._items.flush()
        if kind == "thread_rolled_back" and self.plan is None:
            note_extra(self.report, "rollback_not_applied", "thread_rolled_back needs a second pass over the file (not possible on a stream); the rolled-back turns were kept", line=line, dropped=payload)
        if kind == "user_message":
            return self._user_event(payload, line)
        return []

    def _user_event(self, payload: dict[str, Any], line: int | None) -> list[dict[str, Any]]:
        """The user's words, when no response_item user message since the last event has them."""
        seen, self._user_texts = self._user_texts, []
        text = payload.get("message")
        if not isinstance(text, str) or not text.strip() or any(text.strip() in t for t in seen):
            return []
        parts: list[Any] = [{"type": "input_text", "text": text}]
        parts += [{"type": "input_image", "image_url": url} for url in payload.get("images") or () if isinstance(url, str)]
        item = {"type": "message", "role": "user", "content": parts}
        if self.plan is not None and not self.plan.keeps(line, item):
            return []  # removed by the history control, as its response_item would have been
        note_extra(self.report, "user_from_event", "the user's words are only in an event_msg user_message (no "
                   "response_item user message has them): kept as the user message", line=line, dropped=None)
        out = self._items.feed(item, line=line)
        rest = {k: v for k, v in payload.items() if k not in ("type", "message", "images") and v not in ([], None, "")}
        if rest:
            with_source(out[-1], {"type": "user_message", **rest})
        return out

    def _compacted(self, payload: Any, line: int | None) -> list[dict[str, Any]]:
        if not isinstance(payload, dict):
            raise invalid(f"compacted line has payload {describe(payload)}", line=line, field="payload")
        if self.plan is None or self.plan.compaction_line != line:
            if self.plan is None:
                note_extra(self.report, "compaction_not_applied", "a compacted line needs a second pass over the file (not possible on a stream); the history before it was kept as written", line=line, dropped=payload)
            else:
                count(self.report, "skip_compacted")  # an earlier compaction, superseded by the last
            return []
        out = self._items.flush()
        replacement = payload.get("replacement_history")
        if isinstance(replacement, list):
            for item in replacement:
                out.extend(self._items.feed(item, line=line))
            out.extend(self._items.flush())
            return out
        message = payload.get("message")
        if isinstance(message, str) and message:
            out.append({"role": "assistant", "content": message})
        return out


# -- the format -----------------------------------------------------------------------------------


def guess(record: dict[str, Any]) -> Clue | None:
    """A line of a Codex type with a ``payload``."""
    kind = record.get("type")
    if "payload" in record and isinstance(kind, str) and kind in CODEX_LINE_TYPES:
        return Clue(Evidence.LINE_TYPE)
    return None


FORMAT: Format = Format(
    "codex", CodexConverter, guess,
    outputs=(Output("codex", 70, dialect="_session_lines.Codex"),), options=("base_instructions",), planner=CodexPlanner,
)
