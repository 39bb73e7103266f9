"""The fast path of message validation: :func:`is_plain` (re-exported by ``_messages``, the
home of what a message is).

A module of its own, with nothing else in it, so that the optional compiled build (mypyc)
compiles it: it runs for every message, and interpreted it costs as much as the rest of
the compiled core's dispatch. (``_messages`` itself loads the pydantic models on first use
through module-level tricks that are no business of a compiled module.)
"""

from __future__ import annotations

from typing import Any

__all__ = ["is_plain"]

# Validation with the adapter costs 0.5-1.5 us a message: about as much as everything else
# the core does. Most messages are plain -- every known field already of its exact type --
# and for those the adapter would only return an equal copy. `is_plain` recognises that
# case in a few dict lookups; anything else (a list content, an unexpected type, a bytes
# value pydantic would coerce) goes to the adapter, which stays the validator of record.
# tests/test_messages.py checks over generated messages that whatever `is_plain` accepts,
# the adapter returns unchanged.

def is_plain(message: dict[str, Any]) -> bool:
    """True when ``MESSAGE.validate_python(message)`` would return it unchanged (a sufficient
    test, not a necessary one: False only means "ask the adapter")."""
    # Spelled out per field, most common first: this runs for every message.
    content = message.get("content")
    if content is not None and type(content) is not str:
        return False
    name = message.get("name")
    if name is not None and type(name) is not str:
        return False
    role = message.get("role")
    if role == "tool":
        call_id = message.get("tool_call_id")
        return call_id is None or type(call_id) is str
    if role == "assistant":
        reasoning = message.get("reasoning_content")
        if reasoning is not None and type(reasoning) is not str:
            return False
        calls = message.get("tool_calls")
        if calls is None:
            return True
        if type(calls) is not list:
            return False
        for call in calls:
            if type(call) is not dict:
                return False
            function = call.get("function")
            if (
                type(function) is not dict
                or type(call.get("id")) is not str
                or type(function.get("name")) is not str
                or type(function.get("arguments")) is not str
            ):
                return False  # a call that hygiene will touch: let the adapter check it
            kind = call.get("type")
            if kind is not None and type(kind) is not str:
                return False
            alias = call.get("call_id")
            if alias is not None and type(alias) is not str:
                return False
        return True
    return role == "user" or role == "system" or role == "developer"
