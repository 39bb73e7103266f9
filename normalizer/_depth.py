"""The depth check of a parsed JSONL line: :func:`deeper_than`, which the reader
(``_reader``) runs; the rest of the reader's limits live in ``_records``.

A module of its own, with nothing else in it, so that the optional compiled build (mypyc)
compiles it: the reader runs it on every line that may nest too deep, which is most lines
of a history with tool calls, and interpreted it costs a fifth of what the reader adds to
parsing. (``_records`` itself does not compile.)
"""

from __future__ import annotations

from typing import Any, Final

__all__ = ["deeper_than"]


def deeper_than(value: Any, max_depth: int) -> bool:
    """Whether a parsed JSON value nests more than ``max_depth`` levels of arrays and objects.

    The reader's check of a JSONL line that may be too deep, run on the value orjson parsed
    rather than on its bytes: a walk costs a few thousand instructions for a chat message
    whatever its length, where counting brackets costs about a dozen per byte. Each level of
    the value is a bracket of the line, so a value found too deep always has bytes that
    ``_records.nesting_at`` places; the reverse fails only where a duplicate key's earlier value
    was deep, and the parser has already dropped that value.

    Never recursive, and each container is visited once.
    """
    if type(value) is not dict or max_depth < _UNROLLED + 1:
        return _walk(value, max_depth)
    # The levels a chat message has, as nested loops: the message (1), its content or calls
    # (2), a part or a call (3), a call's function or a part's image_url (4). The walk below
    # costs a list and a method a level, which for a chat message was most of the check:
    # this is 40% cheaper, and the walk only takes what lies deeper, with the levels left.
    for a in value.values():
        kind = type(a)
        if kind is dict or kind is list:
            for b in a.values() if kind is dict else a:
                kind = type(b)
                if kind is dict or kind is list:
                    for c in b.values() if kind is dict else b:
                        kind = type(c)
                        if kind is dict or kind is list:
                            for d in c.values() if kind is dict else c:
                                kind = type(d)
                                if (kind is dict or kind is list) and _walk(d, max_depth - _UNROLLED):
                                    return True
    return False


#: The levels deeper_than looks through as nested loops (it needs max_depth above them).
_UNROLLED: Final = 4


def _walk(value: Any, max_depth: int) -> bool:
    """deeper_than, level by level: each level's containers in a list, never recursive."""
    kind = type(value)
    if kind is not dict and kind is not list:
        return False
    level: list[Any] = [value]
    depth = 1
    while depth <= max_depth:
        inner: list[Any] = []
        add = inner.append
        for container in level:
            for item in container.values() if type(container) is dict else container:
                kind = type(item)
                if kind is dict or kind is list:
                    add(item)
        if not inner:
            return False
        level = inner
        depth += 1
    return True
