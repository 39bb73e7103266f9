# GENERATED from the table in _state.py by `python -m normalizer._dispatch`: do not edit.
# tests/test_state.py fails when this file and the table differ. How and why: _dispatch.py.
"""The state table, compiled: ``TABLE[state][event](normalizer, message)`` does what the
``transitions`` trigger ``event`` does in ``state``, and ``dispatch(normalizer, event,
message)`` does the same with every body inlined (see ``_dispatch.py``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from ._core import Normalizer

__all__ = ["TABLE", "dispatch"]


def idle__system(self: Normalizer, message: Any) -> None:
    self.state = 'idle'
    self.emit(message)


def user__system(self: Normalizer, message: Any) -> None:
    self.state = 'idle'
    self.release_user(message)
    self.emit(message)


def turn__system(self: Normalizer, message: Any) -> None:
    if self.turn_has_calls(message):
        self.state = 'tools'
        self.defer(message)
        return
    self.state = 'idle'
    self.end_turn(message)
    self.release_user(message)
    self.emit(message)


def tools__system(self: Normalizer, message: Any) -> None:
    self.state = 'tools'
    self.defer(message)


def idle__user(self: Normalizer, message: Any) -> None:
    self.state = 'user'
    self.hold_user(message)


def user__user(self: Normalizer, message: Any) -> None:
    if self.continues_user(message):
        self.state = 'user'
        self.merge_user(message)
        return
    self.state = 'user'
    self.release_user(message)
    self.hold_user(message)


def turn__user(self: Normalizer, message: Any) -> None:
    if self.turn_has_calls(message):
        self.state = 'tools'
        self.defer(message)
        return
    self.state = 'user'
    self.end_turn(message)
    self.hold_user(message)


def tools__user(self: Normalizer, message: Any) -> None:
    self.state = 'tools'
    self.defer(message)


def idle__assistant(self: Normalizer, message: Any) -> None:
    self.state = 'turn'
    self.hold_turn(message)


def user__assistant(self: Normalizer, message: Any) -> None:
    self.state = 'turn'
    self.hold_turn(message)


def turn__assistant(self: Normalizer, message: Any) -> None:
    if self.continues_turn(message):
        self.state = 'turn'
        self.merge_turn(message)
        return
    if self.is_empty_fragment(message):
        self.state = 'turn'
        self.drop_empty(message)
        return
    self.state = 'turn'
    self.end_turn(message)
    self.hold_turn(message)


def tools__assistant(self: Normalizer, message: Any) -> None:
    self.state = 'idle'
    self.end_turn(message)
    self.replay(message)


def idle__tool(self: Normalizer, message: Any) -> None:
    self.state = 'idle'
    self.orphan_result(message)


def user__tool(self: Normalizer, message: Any) -> None:
    self.state = 'user'
    self.orphan_result(message)


def turn__tool(self: Normalizer, message: Any) -> None:
    if self.completes_turn(message):
        self.state = 'idle'
        self.take_result(message)
        self.end_turn(message)
        return
    if self.answers_turn(message):
        self.state = 'tools'
        self.take_result(message)
        return
    self.state = 'turn'
    self.orphan_result(message)


def tools__tool(self: Normalizer, message: Any) -> None:
    if self.completes_turn(message):
        self.state = 'idle'
        self.take_result(message)
        self.end_turn(message)
        return
    if self.answers_turn(message):
        self.state = 'tools'
        self.take_result(message)
        return
    self.state = 'tools'
    self.orphan_result(message)


def idle__eof(self: Normalizer, message: Any) -> None:
    self.state = 'closed'


def user__eof(self: Normalizer, message: Any) -> None:
    self.state = 'closed'
    self.release_user(message)


def turn__eof(self: Normalizer, message: Any) -> None:
    self.state = 'closed'
    self.end_turn_at_eof(message)
    self.release_user(message)


def tools__eof(self: Normalizer, message: Any) -> None:
    self.state = 'idle'
    self.end_turn_at_eof(message)
    self.replay(message)


TABLE: Final[dict[str, dict[str, Callable[[Normalizer, Any], None]]]] = {
    'idle': {'system': idle__system, 'user': idle__user, 'assistant': idle__assistant, 'tool': idle__tool, 'eof': idle__eof},
    'user': {'system': user__system, 'user': user__user, 'assistant': user__assistant, 'tool': user__tool, 'eof': user__eof},
    'turn': {'system': turn__system, 'user': turn__user, 'assistant': turn__assistant, 'tool': turn__tool, 'eof': turn__eof},
    'tools': {'system': tools__system, 'user': tools__user, 'assistant': tools__assistant, 'tool': tools__tool, 'eof': tools__eof},
    'closed': {},
}


def dispatch(self: Normalizer, event: str, message: Any) -> None:
    """What the trigger ``event`` does in the current state: ``TABLE[self.state][event]``
    with every function's body inlined (the per-message path: ``Normalizer.feed``)."""
    state = self.state
    if state == 'turn':
        if event == 'tool':
            if self.completes_turn(message):
                self.state = 'idle'
                self.take_result(message)
                self.end_turn(message)
                return
            if self.answers_turn(message):
                self.state = 'tools'
                self.take_result(message)
                return
            self.state = 'turn'
            self.orphan_result(message)
        elif event == 'user':
            if self.turn_has_calls(message):
                self.state = 'tools'
                self.defer(message)
                return
            self.state = 'user'
            self.end_turn(message)
            self.hold_user(message)
        elif event == 'assistant':
            if self.continues_turn(message):
                self.state = 'turn'
                self.merge_turn(message)
                return
            if self.is_empty_fragment(message):
                self.state = 'turn'
                self.drop_empty(message)
                return
            self.state = 'turn'
            self.end_turn(message)
            self.hold_turn(message)
        elif event == 'system':
            if self.turn_has_calls(message):
                self.state = 'tools'
                self.defer(message)
                return
            self.state = 'idle'
            self.end_turn(message)
            self.release_user(message)
            self.emit(message)
        elif event == 'eof':
            self.state = 'closed'
            self.end_turn_at_eof(message)
            self.release_user(message)
        else:
            raise KeyError(event)
    elif state == 'idle':
        if event == 'assistant':
            self.state = 'turn'
            self.hold_turn(message)
        elif event == 'user':
            self.state = 'user'
            self.hold_user(message)
        elif event == 'system':
            self.state = 'idle'
            self.emit(message)
        elif event == 'tool':
            self.state = 'idle'
            self.orphan_result(message)
        elif event == 'eof':
            self.state = 'closed'
        else:
            raise KeyError(event)
    elif state == 'user':
        if event == 'assistant':
            self.state = 'turn'
            self.hold_turn(message)
        elif event == 'user':
            if self.continues_user(message):
                self.state = 'user'
                self.merge_user(message)
                return
            self.state = 'user'
            self.release_user(message)
            self.hold_user(message)
        elif event == 'system':
            self.state = 'idle'
            self.release_user(message)
            self.emit(message)
        elif event == 'tool':
            self.state = 'user'
            self.orphan_result(message)
        elif event == 'eof':
            self.state = 'closed'
            self.release_user(message)
        else:
            raise KeyError(event)
    elif state == 'tools':
        if event == 'tool':
            if self.completes_turn(message):
                self.state = 'idle'
                self.take_result(message)
                self.end_turn(message)
                return
            if self.answers_turn(message):
                self.state = 'tools'
                self.take_result(message)
                return
            self.state = 'tools'
            self.orphan_result(message)
        elif event == 'assistant':
            self.state = 'idle'
            self.end_turn(message)
            self.replay(message)
        elif event == 'system':
            self.state = 'tools'
            self.defer(message)
        elif event == 'user':
            self.state = 'tools'
            self.defer(message)
        elif event == 'eof':
            self.state = 'idle'
            self.end_turn_at_eof(message)
            self.replay(message)
        else:
            raise KeyError(event)
    else:
        raise KeyError(state)  # closed: Normalizer.feed refuses first
