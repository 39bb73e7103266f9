# GENERATED from the table in _state.py by `python -m normalizer._dispatch`: do not edit.
# tests/test_state.py fails when this file and the table differ. How and why: _dispatch.py.
"""The state table, compiled: ``dispatch(normalizer, event, message)`` does what the
``transitions`` trigger ``event`` does in the normalizer's state (see ``_dispatch.py``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._core import Normalizer

__all__ = ["dispatch"]


def dispatch(self: Normalizer, event: str, message: Any) -> None:
    """What the trigger ``event`` does in the current state (the per-message path:
    ``Normalizer.feed``)."""
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
