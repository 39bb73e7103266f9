"""A Gemini CLI session repaired in its own format: the session editor's third dialect.

Claude Code and Codex files are chains or rollouts, read line by line (``_session_pairing``);
a Gemini CLI file is a **log replayed whole** (``_gemini_cli``: a later ``$set.messages``
replaces every message, a ``$rewindTo`` cuts back to any earlier one, the last record of an
id wins in the place of the first), so no line's meaning is known before the end of the file.
:class:`GeminiCli` is the dialect :class:`~._sessions.SessionRepairer` asks; since it is
``replayed``, the repairer holds every line (its bytes) and hands them to a
:class:`ReplayedRepair` at the end, which replays them as Gemini CLI 0.61.0 does on
``--resume`` (the reader's :class:`~._gemini_cli.GeminiCliReplay` and
:func:`~._gemini_cli.entry_messages`: one home for what the CLI sends), pairs what it would
send by the core's rules, and edits only the records that break them:

* **A response that answers a call already answered** (``drop_duplicate_result``) **or no
  call of its turn** (``drop_orphan_result``; :func:`.._stub.stray_result_kind` tells
  which) is removed from the record that holds it, and kept in the report. The CLI replays
  each tool round twice (the ``gemini`` record's ``toolCalls[].result``, as its synthetic
  ``<id>_response`` turn, *and* the ``user`` record it wrote with the same
  ``functionResponse`` parts: google-gemini/gemini-cli#29365); the first is the call's
  answer, the recorded ``user`` record the duplicate. That record holds nothing else, so it
  goes whole (its line, or its element of a ``$set.messages`` array). (A ``$rewindTo`` that
  names it is not changed by that: the record removed is the live one, the last of its id,
  and a rewind after it would have removed it; one before it found an earlier record, which
  stays.)
* **A call that no response answers** gets the stub (:func:`.._stub.gemini_stub`, the core's
  text): as its ``toolCalls[k].result``, where the CLI itself writes a tool's output (so its
  ``<id>_response`` turn holds it, in call order); for a record the CLI rewrote (calls as
  ``content`` parts: its ``$set.messages`` after a resume) as a ``user`` record right after
  it (:func:`.._stub.gemini_cli_stub_record`). Calls still open at the end follow
  ``trailing_calls`` (``.._stub.trailing_policy``).
* **The records a failed resume appended** stay: the CLI writes the same ones on every
  resume (a metadata record, ``$set.messages`` with its rewritten history, ``$set.sessionId``,
  then the prompt, which it rolls back with another ``$set.messages`` when the request fails).
  Only the last ``$set.messages`` is live; the duplicate in it is removed as above, and the
  earlier copies, which the replay never reads, are left as they are (fewest edits).

Every line no edit touches is written byte for byte; an edited line is written anew (orjson,
compact, as the CLI's ``JSON.stringify``). A second repair finds nothing to change. Memory:
the file's bytes (a replay needs all of it: so does the CLI), bounded by ``max_bytes``, and
the parsed values of the lines that hold live messages.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

from .._errors import InvalidMessage, LimitExceeded
from .._json import dumps
from .._report import Report
from .._stub import STUB_KIND, gemini_cli_stub_record, gemini_stub, stray_result_kind, stub_detail, trailing_policy
from ._gemini import Calls
from ._gemini_cli import DEFAULT_MAX_HISTORY_BYTES, Entry, GeminiCliPlanner, Origin, entry_messages, record_entries
from ._session_lines import Dialect, Info, Line

__all__ = ["GeminiCli", "ReplayedRepair", "DEFAULT_MAX_BYTES"]

#: The most of a Gemini CLI session file held for its repair (it is replayed whole).
DEFAULT_MAX_BYTES: Final = DEFAULT_MAX_HISTORY_BYTES


class GeminiCli(Dialect):
    """Gemini CLI's lines: a replayed log, repaired whole by :class:`ReplayedRepair`."""

    name = "gemini-cli"
    replayed = True

    def classify(self, value: Any) -> Info:
        return Info()  # no line is a turn of its own: the replay decides (ReplayedRepair)


@dataclass(slots=True)
class _Open:
    """A model turn's calls waiting for their responses."""

    entry: Entry
    message: dict[str, Any]
    answered: set[str] = field(default_factory=set)
    moved_on: bool = False  # a user message came after the calls


@dataclass(frozen=True, slots=True)
class _Removal:
    """A response part to remove: the record that holds it, and where in it."""

    call_id: str
    kind: str  # drop_duplicate_result / drop_orphan_result
    entry: Entry
    where: str  # the Origin's: content[i] or toolCalls[k].result[j]


class ReplayedRepair:
    """The lines of one Gemini CLI session in (:meth:`take`), the repaired lines out
    (:meth:`finish`), every change recorded in ``report``."""

    def __init__(self, report: Report, *, stub_text: str, trailing_calls: str, orphan_results: str, source: str,
                 max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.report = report
        self.stub_text = stub_text
        self.trailing_calls = trailing_calls
        self.orphan_results = orphan_results
        self.source = source
        self.max_bytes = max_bytes
        self._lines: list[Line] = []
        self._held = 0

    def take(self, line: Line) -> None:
        """Hold a line (its bytes: the value is parsed again at the end if it is needed)."""
        self._held += len(line.body)
        if self._held > self.max_bytes:
            raise LimitExceeded(
                f"a Gemini CLI session is repaired whole, and this one holds more than {self.max_bytes} bytes",
                limit="max_bytes", value=self.max_bytes, source=self.source, line=line.number,
                hint="No real session is this large (the CLI compresses its history long before)")
        line.forget()
        self._lines.append(line)

    def finish(self) -> list[Line]:
        """The lines to write, in order, the edited ones written anew."""
        planner = GeminiCliPlanner()
        for line in self._lines:
            value = line.parsed()
            if value is not None:
                planner.feed(value, line=line.number)
        order = planner.result().order
        by_number = {line.number: line for line in self._lines}
        values = {number: by_number[number].parsed() for number in {n for n, _ in order if n is not None}}
        entries = [_entry(values[number], number, index) for number, index in order if number is not None]
        edit = _Edit()
        self._pair(entries, edit)
        return edit.apply(self._lines, values, self.report)

    # -- the pairing rules (the core's, on what the CLI sends) --------------------------------------

    def _pair(self, entries: list[Entry], edit: _Edit) -> None:
        calls = Calls()
        turn: _Open | None = None
        answered: set[str] = set()  # every call answered so far (a later response to one is a duplicate)
        for entry in entries:
            for message, origin in entry_messages(entry, calls):
                role = message.get("role")
                if role == "assistant":
                    if turn is not None:
                        self._close(turn, edit, moved_on=True)
                    turn = _Open(entry, message) if message.get("tool_calls") else None
                elif role == "tool":
                    call_id = message.get("tool_call_id")
                    open_ids = {c["id"] for c in turn.message["tool_calls"]} if turn is not None else set()
                    if turn is not None and isinstance(call_id, str) and call_id in open_ids and call_id not in turn.answered:
                        turn.answered.add(call_id)
                        answered.add(call_id)
                    else:
                        kind = "drop_" + stray_result_kind(call_id, turn.answered if turn is not None else (), answered)
                        self._stray(call_id, kind, entry, origin, edit)
                elif turn is not None:
                    turn.moved_on = True
        if turn is not None:
            self._close(turn, edit, moved_on=turn.moved_on)

    def _stray(self, call_id: Any, kind: str, entry: Entry, origin: Origin, edit: _Edit) -> None:
        if self.orphan_results == "error":
            raise InvalidMessage(f"a functionResponse for {call_id}, which no call of its turn awaits",
                                 source=self.source, line=origin.line,
                                 hint="Drop such responses with orphan_results='drop' (--orphan-results drop)")
        edit.removals.append(_Removal(str(call_id), kind, entry, origin.where))

    def _close(self, turn: _Open, edit: _Edit, *, moved_on: bool) -> None:
        made = turn.message["tool_calls"]  # the calls as the reader made them, in the CLI's order
        if len(turn.answered) == len(made) or trailing_policy(self.trailing_calls, moved_on) != "stub":
            return
        record = turn.entry.record
        tool_calls = record.get("toolCalls")
        in_content = [p["functionCall"] for p in _as_list(record.get("content")) if isinstance(p, dict) and p.get("functionCall")]
        stubs = []
        for at, call in enumerate(made):
            if call["id"] in turn.answered:
                continue
            name = call["function"]["name"]
            if not in_content and isinstance(tool_calls, list) and len(tool_calls) == len(made):
                edit.results.append(_Result(turn.entry, at, gemini_stub(tool_calls[at].get("id"), name, self.stub_text)))
            else:
                # the file's own id (none: none, as the call; the reader's made-up id stays out of the file)
                own = in_content[at].get("id") if len(in_content) == len(made) else call["id"]
                stubs.append(gemini_stub(own, name, self.stub_text))
        if stubs:
            edit.inserts.append(_Insert(turn.entry, gemini_cli_stub_record(record, stubs)))


def _as_list(content: Any) -> list[Any]:
    return content if isinstance(content, list) else [content] if content else []


def _entry(value: Any, number: int, index: int | None) -> Entry:
    for entry in record_entries(value, number):
        if entry.index == index:
            return entry
    raise AssertionError(f"line {number}: no message at {index}")  # pragma: no cover (the plan found it there)


@dataclass(frozen=True, slots=True)
class _Result:
    """A stub to set as the result of call ``at`` of a ``gemini`` record's ``toolCalls``."""

    entry: Entry
    at: int
    part: dict[str, Any]


@dataclass(frozen=True, slots=True)
class _Insert:
    """A stub ``user`` record to place right after a model record."""

    after: Entry
    record: dict[str, Any]


class _Edit:
    """The edits the pairing decided, applied to the lines at the end."""

    def __init__(self) -> None:
        self.removals: list[_Removal] = []
        self.results: list[_Result] = []
        self.inserts: list[_Insert] = []
        self._changed: set[int] = set()  # line numbers written anew
        self._gone: set[int] = set()  # id() of the records removed whole (an element, or a line's own)
        self._after: dict[int, list[dict[str, Any]]] = {}  # id() of a record -> the records inserted after it
        self._notes: list[_Note] = []

    def apply(self, lines: list[Line], values: dict[int, Any], report: Report) -> list[Line]:
        grouped: dict[int, list[_Removal]] = {}
        for removal in self.removals:
            grouped.setdefault(id(removal.entry.record), []).append(removal)
        for group in grouped.values():
            self._remove_from(group)
        for result in self.results:
            call = result.entry.record["toolCalls"][result.at]
            call["result"] = [*_as_list(call.get("result")), result.part]  # (media a tool gave, if any, stays)
            number = _number(result.entry)
            self._changed.add(number)
            self._notes.append(_Note(number, STUB_KIND, stub_detail(str(call.get("id")), number, "functionCall")))
        for insert in self.inserts:
            self._after.setdefault(id(insert.after.record), []).append(insert.record)
            number = _number(insert.after)
            self._changed.add(number)
            for part in insert.record["content"]:
                call_id = str(part["functionResponse"].get("id"))
                self._notes.append(_Note(number, STUB_KIND, stub_detail(call_id, number, "functionCall")))
        return self._write(lines, values, report)

    def _remove_from(self, group: list[_Removal]) -> None:
        """Remove the response parts of one record; the record itself when nothing is left."""
        entry = group[0].entry
        record, number = entry.record, _number(entry)
        kinds = {r.kind for r in group}
        what = "answer(s) a call already answered" if kinds == {"drop_duplicate_result"} else "answer(s) no call of its turn"
        ids = ", ".join(r.call_id for r in group)
        content = _as_list(record.get("content"))
        in_content = {int(r.where[len("content["):-1]) for r in group if r.where.startswith("content[")}
        rest = [p for i, p in enumerate(content) if i not in in_content]
        results_only = len(in_content) == len(group)
        if results_only and not rest:
            self._gone.add(id(record))
            self._changed.add(number)
            self._notes.append(_Note(number, group[0].kind, f"line {number}: the {record.get('type')} record "
                                     f"{record.get('id')} {what} ({ids}); removed, kept here whole", dict(record)))
            return
        dropped = [p for i, p in enumerate(content) if i in in_content]
        if in_content:
            record["content"] = rest
        in_results = sorted((_result_at(r.where) for r in group if r.where.startswith("toolCalls[")), reverse=True)
        for at in in_results:  # the last first: each leaves the places of those before it
            dropped.append(_drop_result(record, *at))
        self._changed.add(number)
        self._notes.append(_Note(number, group[0].kind, f"line {number}: functionResponse part(s) of the "
                                 f"{record.get('type')} record {record.get('id')} {what} ({ids}); removed from it, "
                                 "kept here", dropped))

    def _write(self, lines: list[Line], values: dict[int, Any], report: Report) -> list[Line]:
        out: list[Line] = []
        for line in lines:
            if line.number not in self._changed:
                out.append(line)
                continue
            value = values[line.number]
            if isinstance(value, dict) and isinstance(value.get("id"), str):  # the line is one record
                if id(value) in self._gone:
                    continue  # (recorded whole)
                line.body = dumps(value)
                out.append(line)
                for record in self._after.get(id(value), ()):
                    out.append(Line(dumps(record), b"\n", record, line.number, Info()))
                continue
            holder = value["$set"] if isinstance(value.get("$set"), dict) else value
            messages: list[Any] = []
            for record in holder["messages"]:
                if id(record) not in self._gone:
                    messages.append(record)
                messages += self._after.get(id(record), ())
            holder["messages"] = messages
            line.body = dumps(value)
            out.append(line)
        for note in self._notes:
            report.add(note.kind, note.detail, line=note.line, dropped=note.dropped)
        return out


@dataclass(frozen=True, slots=True)
class _Note:
    """A change, to record once the lines are written."""

    line: int
    kind: str
    detail: str
    dropped: Any = None


def _result_at(where: str) -> tuple[int, int]:
    """``toolCalls[k].result[j]`` -> ``(k, j)``."""
    k_text, _, j_text = where[len("toolCalls["):].partition("].result[")
    return int(k_text), int(j_text[:-1])


def _drop_result(record: dict[str, Any], k: int, j: int) -> Any:
    """Take part ``j`` of ``toolCalls[k].result`` out of a record (a result that is one part
    or a string: the whole ``result``); what was taken."""
    call = record["toolCalls"][k]
    result = call["result"]
    if not isinstance(result, list):
        return call.pop("result")
    part = result[j]
    call["result"] = result[:j] + result[j + 1:]
    if not call["result"]:
        del call["result"]
    return part


def _number(entry: Entry) -> int:
    assert entry.line is not None
    return entry.line
