"""The core's sentences (``_core.py`` and its parts): the records' details, made only when
a record is kept (``Note.detail``), and the errors' words for what is not a message.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

from .._content import Conflict
from .._defaults import DEFAULT_MAX_DEPTH
from .._errors import InvalidMessage
from .._json import dumps as json_dumps
from .._note import Note
from .._depth import deeper_than

__all__ = ["renamed_detail", "merged_user_detail", "merged_turn_detail", "conflict_notes", "shown", "span",
           "as_user_text", "shape_error", "jsonable"]

Message = dict[str, Any]


def renamed_detail(style: str, renamed: dict[str, Any]) -> str:
    """rewrite_call_id's sentence (made only for a record: Note.detail); ``renamed``: old id -> new."""
    return f"call ids rewritten to the {style} style: " + ", ".join([f"{repr(a)} -> {repr(b)}" for a, b in renamed.items()])


def merged_user_detail(inputs: list[int]) -> str:
    """merge_user's sentence (made only for a record: Note.detail)."""
    return f"merged consecutive user messages {span(inputs)} into one"


def merged_turn_detail(inputs: list[int]) -> str:
    """merge_assistant's sentence (made only for a record: Note.detail)."""
    return f"merged assistant messages {span(inputs)}: one model turn stored as {len(inputs)} messages"


def conflict_notes(conflicts: list[Conflict], inputs: list[int]) -> list[Note]:
    # The message held (inputs[0]) and the one merging into it (inputs[-1]): two indices a
    # note, not the whole run so far -- a turn of thousands of fragments that each conflict
    # would otherwise record (and spell) every index before it, again and again (quadratic).
    pair = [inputs[0], inputs[-1]]
    return [
        Note("merge_conflict", partial(_conflict_detail, pair, c.key, c.old, c.new), pair, {c.key: c.old})
        for c in conflicts
    ]


def _conflict_detail(pair: list[int], key: str, old: Any, new: Any) -> str:
    """merge_conflict's sentence (made only for a record: Note.detail)."""
    return f"message {pair[1]} merged into message {pair[0]}: '{key}' was {shown(old)}, the later message's {shown(new)} kept"


def shown(value: Any) -> str:
    """repr, unless the value nests too deep to show (repr recurses: a RecursionError at close)."""
    if (type(value) is dict or type(value) is list) and deeper_than(value, DEFAULT_MAX_DEPTH):
        return f"<{type(value).__name__} nested deeper than {DEFAULT_MAX_DEPTH} levels>"
    return repr(value)


def span(indices: list[int]) -> str:
    # "4", "4-6" (consecutive), or "4, 7, 9". A loop, not a comparison with a range's list:
    # compiled, that is a generic call and a list, ~5,000 instructions per merge record.
    first = indices[0]
    for offset, index in enumerate(indices):
        if index != first + offset:
            return ", ".join([str(i) for i in indices])
    return f"{first}-{indices[-1]}" if len(indices) > 1 else str(first)


def as_user_text(result: Message) -> Any:
    label = f"[tool result for call {result.get('tool_call_id')!r}]"
    content = result.get("content")
    if isinstance(content, list):
        return [{"type": "text", "text": label}, *content]
    if isinstance(content, str) and content:
        return f"{label}\n{content}"
    return label


def shape_error(message: Any, index: int) -> InvalidMessage:
    if not isinstance(message, Mapping):
        return InvalidMessage(f"expected a message object, got {type(message).__name__}", index=index)
    role = message.get("role")
    if role is None:
        return InvalidMessage("message has no 'role'", field="role", index=index)
    return InvalidMessage(
        f"unknown role {role!r}", field="role", index=index,
        hint="expected one of system, developer, user, assistant, tool",
    )


def jsonable(value: Any) -> Any:
    # What the report keeps of something that is not JSON (it must still serialise).
    try:
        json_dumps(value)  # (an integer past 64 bits is JSON: see _json)
        return value
    except (TypeError, RecursionError):
        try:
            text = repr(value)
        except RecursionError:
            return f"<{type(value).__name__} nested too deeply to show>"
        return text if len(text) <= 100_000 else text[:100_000] + "..."
