"""What the core holds, and what holding it costs (``_core.py``): a held message that later
ones may merge into (:class:`Held`: the user message, the assistant turn), a message waiting
to be placed (:class:`Pending`), and the size of a held message, counted against
``max_held_bytes``.

The held turn's tool block (its calls, the results that answer them with their input
indices and repairs, where each call came from) is a set of named maps on the
``Normalizer`` itself: read on every result, they are one attribute away, not two, and a
result held costs dict stores, not an object made (a Python ``__init__`` frame, ~1,500
instructions interpreted).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from .._errors import LimitExceeded

if TYPE_CHECKING:
    from .._content import Fold
    from .._note import Note

__all__ = ["Held", "Pending", "message_size", "nested_size", "plain_calls_size", "RESULT_FRAME", "too_many_fragments", "too_many_bytes",
           "too_many_messages"]

Message = dict[str, Any]


class Held:
    """A message held while later ones may still merge into it: the user message, or the
    assistant turn. A ``Normalizer`` has one of each for its life, taken and let go in
    place (``message`` None: nothing held): a new object a turn would cost the per-message
    path an allocation and a constructor call, the fields stores it makes anyway."""

    __slots__ = ("message", "inputs", "notes", "folds", "owned", "opaque", "size")

    def __init__(self) -> None:
        self.message: Message | None = None
        #: Input indices of the messages merged into it, the one held first.
        self.inputs: list[int] = []
        #: Its repairs, filed with its output index when it is emitted.
        self.notes: list[Note] = []
        #: Text keys being merged, joined once when it is emitted (``_content.Fold``).
        self.folds: dict[str, Fold] = {}
        #: Keys of the merged copy whose list value is ours to extend.
        self.owned: set[str] = set()
        #: The turn carries opaque continuation state (replayed exactly as stored).
        self.opaque = False
        #: What its merges added to the pending turn's held bytes (the user's: let go with it).
        self.size = 0


class Pending:
    """A message waiting to be placed, with its input index: deferred behind a tool block,
    parked reasoning, or scheduled for replay (``None``: the end of input). A value: its
    fields are Final (read-only to the type checker; a frozen dataclass would pay
    ``object.__setattr__`` per field on every one made)."""

    __slots__ = ("message", "index")

    def __init__(self, message: Message | None, index: int) -> None:
        self.message: Final = message
        self.index: Final = index


def message_size(message: Message) -> int:
    """What holding ``message`` costs, in characters: the length of every string in it at
    any depth (content parts, call arguments, reasoning, any extra key; keys included),
    plus one per dict entry or list item. A plain str costs one len(): only containers
    are walked, so the cost follows the message's structure, not its bytes."""
    size = len(message)
    nested: list[Any] = []
    for key, value in message.items():
        if type(key) is str:
            size += len(key)
        else:
            nested.append(key)
        if type(value) is str:
            size += len(value)
        elif value is not None:
            nested.append(value)
    if not nested:
        return size
    if len(nested) == 1 and type(nested[0]) is list:
        # One list, nothing else nested: the tool calls of an assistant message, most often.
        calls = plain_calls_size(nested[0])
        if calls is not None:
            return size + calls
    return size + nested_size(nested)


def plain_calls_size(calls: list[Any]) -> int | None:
    """What :func:`nested_size` gives for a list of plain calls -- dicts of strings with at
    most dicts of strings in them (``function``) -- in one pass without its stack; None for
    any other list (a scalar, a deeper value, a key that is no str, a container met twice),
    which the caller then walks the general way. The merges of split turns size a calls
    message each: the general walk cost them ~350 bytecodes a message, most of the merge."""
    size = len(calls)
    seen = [id(calls)]
    for call in calls:
        if type(call) is not dict:
            return None
        entries: dict[Any, Any] = call
        seen.append(id(entries))
        size += len(entries)
        for key, value in entries.items():
            if type(key) is not str:
                return None
            size += len(key)
            if type(value) is str:
                size += len(value)
                continue
            if type(value) is not dict:
                return None
            inner: dict[Any, Any] = value
            seen.append(id(inner))
            size += len(inner)
            for name, item in inner.items():
                if type(name) is not str or type(item) is not str:
                    return None
                size += len(name) + len(item)
    # A container met twice (one call twice in the list, a function shared) is counted once
    # by the general walk: leave that to it.
    return size if len(set(seen)) == len(seen) else None


# size of a result with empty strings: what a plain result costs besides its content and id.
RESULT_FRAME: Final = message_size({"role": "tool", "tool_call_id": "", "content": ""})


def nested_size(todo: list[Any]) -> int:
    # size of values inside a message. Iterative (no depth limit to hit) and each
    # container counted once (validate=False input may share or even contain itself).
    # Exact type checks first: JSON gives str/dict/list/int/float/bool/None, and an ABC
    # isinstance costs several times a type() comparison. A dict's or list's strings are
    # counted as it is opened, without a trip through the stack (most leaves are strings:
    # a tool call is a dict of strings and a dict of strings). The list's own methods,
    # called on it (not bound to locals), and the containers named with their types: the
    # compiled build then makes them native list and dict operations, not Python calls.
    size = 0
    seen: set[int] = set()
    while todo:
        value = todo.pop()
        kind = type(value)
        if kind is dict:
            mapping: dict[Any, Any] = value
            key = id(mapping)
            if key in seen:
                continue
            seen.add(key)
            size += len(mapping)
            for name, item in mapping.items():
                if type(name) is str:
                    size += len(name)
                else:
                    todo.append(name)
                if type(item) is str:
                    size += len(item)
                elif type(item) not in _SCALARS:
                    todo.append(item)
        elif kind is list:
            items: list[Any] = value
            key = id(items)
            if key in seen:
                continue
            seen.add(key)
            size += len(items)
            for item in items:
                if type(item) is str:
                    size += len(item)
                elif type(item) not in _SCALARS:
                    todo.append(item)
        elif kind is str:
            size += len(value)
        elif kind in _SCALARS:
            continue  # the entry or item holding it counted one
        elif isinstance(value, str):
            size += len(value)
        elif isinstance(value, (list, tuple)) or isinstance(value, Mapping):
            key = id(value)
            if key in seen:
                continue
            seen.add(key)
            size += len(value)
            if isinstance(value, (list, tuple)):
                todo.extend(value)
            else:
                todo.extend(value.keys())
                todo.extend(value.values())
        elif isinstance(value, (bytes, bytearray)):
            size += len(value)
    return size


_SCALARS: Final = frozenset({int, float, bool, type(None)})


# -- the limits of what is held (``Options``): the errors, raised by the core


def too_many_fragments(limit: int, index: int) -> LimitExceeded:
    return LimitExceeded(
        f"more than {limit} consecutive fragments merge into one turn",
        limit="max_turn_fragments", value=limit, index=index,
        hint="a real history never gets near this; if it does, raise max_turn_fragments",
    )


def too_many_bytes(limit: int, index: int) -> LimitExceeded:
    return LimitExceeded(
        f"the pending turn holds more than {limit} characters of text",
        limit="max_held_bytes", value=limit, index=index,
        hint="raise max_held_bytes if one turn of this history really is that large",
    )


def too_many_messages(limit: int, index: int) -> LimitExceeded:
    return LimitExceeded(
        f"more than {limit} messages are held waiting for one turn's tool results",
        limit="max_held_messages", value=limit, index=index,
        hint="raise max_held_messages if one turn of this history really has that many",
    )
