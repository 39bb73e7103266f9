"""Call arguments cut off mid-way, closed, or written several times over, one copy kept
(``tool.arguments_valid_json``: the spelling's ``repair_arguments``). Only a history whose
arguments do not parse comes here."""

from __future__ import annotations

import json
import re
from typing import Any

from .._json import JSONDecodeError, loads

__all__ = ["close_json", "repeats_a_call"]

_DECODER = json.JSONDecoder()
_SPACE = re.compile(r"\s*")


def close_json(text: str) -> str | None:
    """JSON cut off mid-way (a model's output truncated at its token limit), closed: an open
    string is closed, a dangling ``,`` or ``:`` (with its key) removed, open arrays and objects
    closed in stack order. None when the result still does not parse as a JSON object. As
    hermes-agent repairs truncated arguments (research/hermes.md §4.9), without guessing values.
    One object written two or more times over (``{"a":1}{"a":1}``) is that object, once.
    """
    repeated = one_copy(text)
    if repeated is not None:
        return repeated
    stack: list[str] = []
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            stack.append("]" if ch == "[" else "}")
        elif ch in "]}":
            if not stack or stack[-1] != ch:
                return None  # not a truncation: a misplaced closer
            stack.pop()
    body = text
    if in_string:
        body = (body[:-1] if escaped else body) + '"'  # a dangling escape is cut with the rest
    candidates = [body]
    stripped = body.rstrip()
    if stripped.endswith((",", ":")):
        candidates.append(stripped[:-1])
    # A key with no value yet ('{"a": 1, "b"' or '{"a": 1, "b":'): drop the key.
    trimmed = stripped.rstrip(":").rstrip()
    if trimmed.endswith('"') and stack and stack[-1] == "}":
        start = _string_start(trimmed)
        if start is not None:
            head = trimmed[:start].rstrip()
            if head.endswith((",", "{")):
                candidates.append(head.rstrip(","))
    for candidate in candidates:
        closed = candidate + "".join(reversed(stack))
        try:
            value = loads(closed)
        except JSONDecodeError:
            continue
        if isinstance(value, dict):
            return closed
    return None


def _string_start(text: str) -> int | None:
    """Where the JSON string that ``text`` ends with opens (``text`` ends with ``"``)."""
    i = len(text) - 2
    while i >= 0:
        if text[i] == '"':
            backslashes = 0
            j = i - 1
            while j >= 0 and text[j] == "\\":
                backslashes += 1
                j -= 1
            if backslashes % 2 == 0:
                return i
        i -= 1
    return None


def one_copy(text: str) -> str | None:
    """The first of two or more copies of one JSON object, written one after the other
    (``{"a":1}{"a":1}``, whitespace between them allowed: a model that repeated its call's
    arguments, as hermes-agent collapses them, test_6841_repeated_tool_call_repair.py), else
    None (copies that differ are not one call's arguments: nothing is guessed)."""
    copies: list[object] = []
    first = ""
    at = _SPACE.match(text).end()  # type: ignore[union-attr]  # (\s* matches anywhere)
    while at < len(text):
        try:
            value, end = _DECODER.raw_decode(text, at)
        except ValueError:
            return None
        if not isinstance(value, dict) or (copies and value != copies[0]):
            return None
        if not copies:
            first = text[at:end]
        copies.append(value)
        at = _SPACE.match(text, end).end()  # type: ignore[union-attr]
    return first if len(copies) > 1 else None


def repeats_a_call(calls: list[Any]) -> bool:
    """Whether two of a turn's calls are alike: the same function with the same arguments (as
    values: key order and spacing aside; ``""`` as the ``{}`` repair makes of it). LiteLLM's
    Gemini converter sends such a call once, and both its results (GM-12)."""
    seen: set[tuple[Any, str]] = set()
    for call in calls:
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict):
            continue
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            try:
                arguments = loads(arguments.strip() or "{}")
            except JSONDecodeError:
                pass
        try:
            key = (function.get("name"), json.dumps(arguments, sort_keys=True))
        except (TypeError, ValueError):
            key = (function.get("name"), repr(arguments))
        if key in seen:
            return True
        seen.add(key)
    return False
