"""Parked reasoning, a part of the core (``_core.py``): a reasoning-only assistant message
of another speaker than the held turn's waits for its own speaker's next turn (see
``Normalizer.drop_empty``), merged there as reasoning before text, or dropped (kept whole in
the report) when anything else comes first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._content import REASONING_TEXT_KEYS, is_opaque
from ._held import Pending, message_size, too_many_fragments

if TYPE_CHECKING:
    from ._actions import TableActions

__all__ = ["park", "unpark", "drop_parked", "carries_parked"]

Message = dict[str, Any]


def park(n: TableActions, message: Message) -> None:
    """An empty assistant message that cannot merge into the held turn: dropped (recorded),
    or, if it has reasoning, parked for its speaker's next turn."""
    index = n._index
    if not any(message.get(k) for k in REASONING_TEXT_KEYS) and not message.get("reasoning_details"):
        calls = "no tool calls" if not message.get("tool_calls") else "no tool call with a function name"
        n._record(
            "drop_empty_assistant", f"dropped assistant message {index}: it has no text and {calls}",
            [index], message,
        )
        return
    parked = n._parked
    if parked and not n._same_speaker(_speaker_message(parked), message, "assistant"):
        drop_parked(n)  # a third speaker's reasoning: the parked one's speaker did not come
    parked = n._parked
    parked.append(Pending(message, index))
    limit = n.options.max_turn_fragments
    if len(parked) > limit:
        raise too_many_fragments(limit, index)
    n._hold_bytes(message_size(message))


def unpark(n: TableActions, message: Message) -> None:
    """The parked reasoning starts the turn (held by ``hold_turn``, now that nothing is
    parked), and ``message``, its speaker's, merges into it."""
    parked = n._parked
    n._parked = []
    index = n._index
    for position, pending in enumerate(parked):
        fragment = pending.message
        assert fragment is not None
        n._index = pending.index
        if position == 0:
            n.hold_turn(fragment)
        else:
            n.merge_turn(fragment)
    n._index = index
    n.merge_turn(message)


def drop_parked(n: TableActions) -> None:
    """No turn of the parked reasoning's speaker follows to carry it: dropped, kept whole."""
    for pending in n._parked:
        n._record(
            "drop_empty_assistant",
            f"dropped assistant message {pending.index}: it has only reasoning, and no turn of its speaker follows "
            "to carry it", [pending.index], pending.message,
        )
    n._parked = []


def carries_parked(n: TableActions, message: Message | None) -> bool:
    """The next turn is the parked reasoning's speaker's: ``hold_turn`` merges it in."""
    return (
        message is not None
        and message.get("role") == "assistant"
        and not (n._keeps_opaque and is_opaque(message))
        and n._same_speaker(message, _speaker_message(n._parked), "assistant")
    )


def _speaker_message(parked: list[Pending]) -> Message:
    # The first parked reasoning message: its speaker is the one the parked wait for.
    message = parked[0].message
    assert message is not None
    return message
