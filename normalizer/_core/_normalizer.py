"""The sans-I/O core: :class:`Normalizer` takes messages one at a time and returns the
messages that became final. It does no I/O, never awaits, and keeps no global state.

Where a message goes is decided by the table in ``_state.py``; ``_core/_actions.py``
implements the conditions and actions that table names (``Normalizer``'s base,
``TableActions``, which declares the state), and the parts beside it the repairs they make:
call hygiene (``_calls``), results and stubs (``_results``; the stub's words and
shape are ``_stub``'s), the turn's emission (``_emit``), parked reasoning
(``_parked``), what comes in (``_input``), what is held (``_held``) and the
records' sentences (``_notes``). This module is the surface: ``feed``, ``close``, the
report and the adapters' claim. Every repair is recorded in the report (``_report.py``) at
the moment its message is emitted, so the record knows the output index; anything removed
is recorded whole.

The per-message path dispatches through ``_table.dispatch``, generated in ``_table.py``
from the very ``transitions.Machine`` that declares the table (``_dispatch.py``; a trigger
costs ~8 us, the per-message budget ~2 us). ``tests/test_state.py`` checks the file is
current and drives it against the machine over random inputs.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from typing import Any

from typing_extensions import Unpack

from .._content import EVENT_OF_ROLE
from ._input import (IN_USE, TOO_DEEP_TO_DUMP, dump, invalid, refuse, too_deep, too_nested, unexpected_shape,
                          validated)
from ._notes import shape_error
from .._errors import InputError, InvalidMessage, LimitExceeded, OrphanResultError, UsageError
from .._messages import is_plain
from .._depth import deeper_than
from .._options import Options
from .._report import Repair, Report
from .._types import ProfileArg, RepairOptions
from .._table import dispatch
from .._state import CLOSED
from ._actions import TableActions

__all__ = ["Normalizer"]

Message = dict[str, Any]


class Normalizer(TableActions):
    """Repair a chat history one message at a time.

    >>> n = Normalizer()
    >>> n.feed({"role": "user", "content": "hi"})
    []
    >>> n.feed({"role": "assistant", "content": "Let me look."})
    []
    >>> n.feed({"role": "assistant", "content": "Found it."})
    []
    >>> n.close()
    [{'role': 'user', 'content': 'hi'}, {'role': 'assistant', 'content': 'Let me look.\\nFound it.'}]

    Args:
        profile: a built-in profile name, a path to a TOML/JSON profile, or a Profile.
        **options: see :class:`normalizer.Options` (``validate``, ``on_invalid``,
            ``orphan_results``, ``trailing_calls``, ``stub_text``, the ``max_*`` limits,
            ``max_records``, ``on_record``).

    ``feed()`` returns the messages that became final (possibly none: one turn may be held);
    ``close()`` flushes the rest. After ``close()`` the instance is spent. Any exception
    raised while a message is being placed leaves the instance unusable (``UsageError`` on
    the next call): its held turn may be half-built, so carrying on could lose data.
    """

    __slots__ = ()  # (the state's: TableActions')

    def __init__(self, profile: ProfileArg = "default", **options: Unpack[RepairOptions]) -> None:
        self._init_options(profile, dict(options))
        self._init_encoding(self.options)
        self._init_state()

    # ------------------------------------------------------------------ public surface

    @property
    def report(self) -> Report:
        """The report so far (counts and records). Complete after ``close()``."""
        self._report.messages_in = self._n_in
        self._report.messages_out = self._n_out + len(self._out)
        return self._report

    def feed(self, message: Any) -> list[Message]:
        """Take the next message; return the messages that became final, in order.

        Raises:
            InvalidMessage: the message is not a chat message (``on_invalid="error"``).
            OrphanResultError: a tool result answers nothing (``orphan_results="error"``).
            LimitExceeded: the pending turn outgrew a limit (see ``Options``).
            UsageError: called after ``close()`` or after an error.
        """
        if self._broken or self.state is CLOSED:
            refuse(self, "feed")
        index = self._n_in
        self._n_in = index + 1
        msg: Any  # a dict once placed; with validation off, whatever was given until checked
        # max_depth is checked where something would recurse into the message: before pydantic
        # validates one that is not plain (a plain one is strings where is_plain looked), before
        # an invalid one is described, and when a merge's comparison or a record recursed (the
        # RecursionError below). Not a walk of every message: that cost the core 21% more
        # instructions a message (bench 21,541 -> 26,097), for values it only passes along.
        if self._validate:
            if type(message) is dict and is_plain(message):
                msg = message  # the adapter would return an equal copy (see _messages.is_plain)
            else:
                msg = validated(self, message, index)
                if msg is None:
                    return []  # left out, recorded (on_invalid="skip")
            event = EVENT_OF_ROLE[msg["role"]]
        else:
            if type(message) is dict:
                msg = message
            else:
                msg = dump(message)
                if msg is TOO_DEEP_TO_DUMP:
                    return invalid(self, too_deep(self, index), message)
            role = msg.get("role") if isinstance(msg, Mapping) else None
            known = EVENT_OF_ROLE.get(role) if type(role) is str else None
            if known is None:
                if type(msg) is dict and deeper_than(msg, self._max_depth):  # before describing it
                    return invalid(self, too_deep(self, index), message)
                return invalid(self, shape_error(msg, index), message)
            event = known
            if type(msg) is not dict:
                msg = dict(msg)
        self._index = index
        self._broken = IN_USE
        try:
            dispatch(self, event, msg)
            if self._replay:
                self._run_replay()
        except InputError as exc:
            self._broken = True
            if exc.index is None:  # raised by the stage, which does not know the index
                exc.located(index=self._index)
            raise
        except RecursionError:
            self._broken = True
            raise too_nested(self, msg, index) from None
        except (TypeError, AttributeError, KeyError, ValueError) as exc:
            self._broken = True
            if self._validate:
                raise  # a bug in the normalizer: validated input must never get here
            raise unexpected_shape(exc, index) from exc
        except BaseException:
            self._broken = True
            raise
        self._broken = False
        out = self._out
        if not out:
            return []
        self._out = []
        self._n_out += len(out)
        return out


    def close(self) -> list[Message]:
        """End of input: flush the held turn (stubbing or dropping unanswered calls per
        ``trailing_calls``) and return the last messages. Idempotent once it succeeded."""
        if self._broken:
            refuse(self, "close")
        if self.state is CLOSED:
            return []
        self._broken = IN_USE
        try:
            dispatch(self, "eof", None)
            while self._replay or self.state is not CLOSED:
                # TOOLS on eof goes back to idle/user and replays what it deferred, eof last.
                if self._replay:
                    self._run_replay()
                else:  # pragma: no cover - the table always reaches CLOSED via replay
                    dispatch(self, "eof", None)
            self._stage_close()
        except BaseException:
            self._broken = True
            raise
        self._broken = False
        return self._drain()

    def _claim(self, owner: object) -> None:
        """An adapter (``arepair``, ``repair``) takes this normalizer for its
        history until it ends; another one meanwhile would interleave two histories."""
        current = self._owner() if self._owner is not None else None
        if current is not None and current is not owner:
            raise UsageError(
                "this Normalizer is already repairing a history for another arepair() or "
                "repair() that has not finished (another task?); a Normalizer holds the "
                "pending turn of one history: create one Normalizer per history"
            )
        self._owner = weakref.ref(owner)  # weak: an adapter dropped unfinished lets go

    def _release(self, owner: object) -> None:
        if self._owner is not None and self._owner() is owner:
            self._owner = None

    # ------------------------------------------------------------------ machinery

    def _run_replay(self) -> None:
        replay = self._replay
        while replay:
            pending = replay.popleft()
            self._index = pending.index
            message = pending.message
            if message is None:
                dispatch(self, "eof", None)
            else:
                dispatch(self, EVENT_OF_ROLE[message["role"]], message)

    def _drain(self) -> list[Message]:
        out = self._out
        if not out:
            return []
        self._out = []
        self._n_out += len(out)
        return out
