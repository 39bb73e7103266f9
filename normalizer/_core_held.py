"""What the core holds, and what holding it costs (``_core.py``): the size of a held
message, counted against ``max_held_bytes``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

__all__ = ["message_size", "nested_size", "RESULT_FRAME"]

Message = dict[str, Any]


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
    return size + nested_size(nested) if nested else size


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
