"""The pairing rules of the in-format session repair (``_sessions.py``; the module docstring
there tells the whole theory): a turn's calls wait for their results until the turn ends;
late results move up to their calls, as whole lines, while the lines after the turn's end
are held; what stays unanswered gets a synthetic result (``.._stub``); a result that answers
no open call is removed (``.._stub.stray_result_kind`` names it, as the core does).
"""

from __future__ import annotations

from typing import Any, Final

from .._errors import InvalidMessage, LimitExceeded
from .._json import dumps
from .._stub import STUB_KIND, stray_result_kind, stub_detail, stub_stamp
from . import _chain
from ._session_lines import REPLY, Call, Dialect, Info, Line, LineRecord, Turn, str_in
from ._session_write import ChainWriter

__all__ = ["Pairing"]

#: What ``_held_key`` is while the lines held came after a user message (not after the first
#: line of the next assistant turn, whose ``message.id`` it is then).
_AFTER_USER: Final = object()

#: Codex: what ``_held_key`` is while the lines held came after an assistant message written
#: between a call and its output (the output moves up to its call) (that message's key: REPLY).
_AFTER_REPLY: Final = object()
#: ... and then after a user message: the next assistant item ends the wait.
_AFTER_REPLY_USER: Final = object()


class Pairing(ChainWriter):
    """The pairing rules (a base of ``SessionRepairer``, which reads the lines)."""

    stub_text: str
    orphan_results: str
    max_held_bytes: int

    def _init_pairing(self) -> None:
        self._dialect: Dialect | None = None
        self._stamp: Any = None  # the timestamp of the last line read
        self._turn: Turn | None = None
        self._held: list[Line] | None = None  # lines after a user message that ended a turn with open calls
        self._held_bytes = 0
        self._held_stamp: Any = None  # the timestamp before the first held line
        # _AFTER_USER, or the message.id of the assistant turn whose first line began the hold
        self._held_key: Any = _AFTER_USER
        self._moved: list[Line] = []  # late results, to be written before the held lines
        self._held_prev: str | None = None  # the chain line written last when the wait began
        # Lines not read yet that held lines hang from (a late result, most likely: Claude Code
        # can write a line before the line it hangs from); while there is one, the wait goes on
        # past the line that would end it (see _while_held)...
        self._awaited: set[str] = set()
        self._held_uuids: set[str] = set()  # (of the lines held or moved; both as bounded as those lines)
        # ... and the held lines from this one on (the line that would have ended it) are read
        # again by all the rules when the wait ends, as they would have been read then.
        self._split: int | None = None

    # -- the pairing rules ------------------------------------------------------------------------

    def _dispatch(self, line: Line) -> None:
        if self._held is not None:
            self._while_held(line)
        else:
            self._step(line)

    def _step(self, line: Line) -> None:
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
                turn = self._turn = Turn(info.key)
            elif info.key is REPLY and turn.waits():
                # Codex: the assistant's message came between a call and its output (a rollout
                # is in its conversation's order): hold it, for the output to move up.
                self._hold(line, turn, _AFTER_REPLY)
                return
            before = len(turn.calls)
            for call_id, call_kind in info.calls.items():
                turn.calls.setdefault(call_id, Call(call_id, call_kind, line))
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

    def _hold(self, line: Line, turn: Turn, key: Any) -> None:
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

    def _note_ahead(self, line: Line) -> None:
        """Note a held line that hangs from a line not read yet (nor removed): a message, not
        a result (one written before its own call is no sign of a late result)."""
        info = line.info
        if not info.chain:
            return
        if (info.parent is not None and info.kind != "results" and info.parent not in self._held_uuids
                and not self._known(info.parent) and info.parent not in self._removed):
            self._awaited.add(info.parent)
        self._read_held(line)

    def _read_held(self, line: Line) -> None:
        """Note a line held or moved: read, no longer awaited."""
        if line.info.uuid is not None:
            self._held_uuids.add(line.info.uuid)
            self._awaited.discard(line.info.uuid)

    def _while_held(self, line: Line) -> None:
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
                line.record = LineRecord("move_result", f"result(s) {', '.join(info.results)} moved up to their call, before line {self._held[0].number}")
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
            for call_id, call_kind in info.calls.items():
                turn.calls.setdefault(call_id, Call(call_id, call_kind, line))
            if len(turn.calls) > before:
                self._keep_calls(turn, line)
            self._hold_moved(line)
            line.record = LineRecord("move_call", f"line {line.number}, of the turn of line {next(iter(turn.calls.values())).line.number} "
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

    def _while_held_on(self, line: Line, turn: Turn) -> None:
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

    def _keep_calls(self, turn: Turn, line: Line) -> None:
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

    def _hold_moved(self, line: Line) -> None:
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

    def _step_held(self, line: Line) -> None:
        # A held line after the wait: results in it answer nothing any more.
        if line.info.kind == "results" and not line.placed:
            if self._answer(line, None):
                self._emit(line)
        else:
            self._emit(line)

    def _answer(self, line: Line, turn: Turn | None) -> bool:
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
        dropped = [b for b in old["message"]["content"] if isinstance(b, dict) and str_in(b.get("tool_use_id"), bad)]
        self.report.add(next(iter(bad.values())), f"line {line.number}: tool_result block(s) for {', '.join(bad)} {what}; removed from the line, kept here",
                        line=line.number, dropped=dropped)
        line.value, line.forgotten = value, False
        line.body = dumps(value)
        line.info.results = [r for r in line.info.results if r not in bad]
        return True

    def _stubs(self, turn: Turn, stamp: Any) -> list[Line]:
        assert self._dialect is not None
        stubs = []
        for n, call in enumerate(turn.unanswered(), 1):
            value = self._dialect.stub(call, self.stub_text, stub_stamp(stamp, n) if self._dialect.chained else stamp)
            info = Info(kind="results", results=[call.id])
            if self._dialect.name == "claude-code":
                info.chain, info.uuid, info.parent = True, value["uuid"], value["parentUuid"]
            line = Line(dumps(value), b"\n", value, call.line.number, info)
            line.linear = info.chain and info.parent is None  # hangs from the line before it
            line.synthetic = call
            line.record = LineRecord(STUB_KIND, stub_detail(call.id, call.line.number, call.kind))
            stubs.append(line)
            turn.answered.add(call.id)
        return stubs
