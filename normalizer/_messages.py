"""What a chat message is: OpenAI Chat Completions messages, validated once at the edge.

One module-level :data:`MESSAGE` ``TypeAdapter`` over a union tagged on ``role``. The
members are ``TypedDict``s with ``extra="allow"``: validation returns a *new* plain dict
(so the caller's object is never the one we change), unknown keys survive untouched, and
it is ~1.5x cheaper than the same union of ``BaseModel``s (aesthetics.md §9).

The models are deliberately lenient where the core can repair (``content: ""`` next to
calls, ``tool_calls: []``, arguments given as an object, a call with only ``call_id``, a
result without ``tool_call_id``) and strict where it cannot guess (a number where text
belongs, an unknown role).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal, Union

from pydantic import ConfigDict, Field, TypeAdapter, ValidationError, with_config
from pydantic_core import PydanticSerializationError
from typing_extensions import NotRequired, TypedDict

from ._errors import InvalidMessage

__all__ = ["MESSAGE", "ROLES", "as_message", "is_plain", "validate_message"]

_LENIENT = ConfigDict(extra="allow")

Content = Union[str, list[Any], None]


@with_config(_LENIENT)
class FunctionCall(TypedDict, total=False):
    name: str | None
    arguments: str | dict[str, Any] | list[Any] | None


@with_config(_LENIENT)
class ToolCall(TypedDict, total=False):
    id: str | None
    call_id: str | None
    type: str | None
    function: FunctionCall | None


@with_config(_LENIENT)
class SystemMessage(TypedDict):
    role: Literal["system", "developer"]
    content: NotRequired[Content]
    name: NotRequired[str | None]


@with_config(_LENIENT)
class UserMessage(TypedDict):
    role: Literal["user"]
    content: NotRequired[Content]
    name: NotRequired[str | None]


@with_config(_LENIENT)
class AssistantMessage(TypedDict):
    role: Literal["assistant"]
    content: NotRequired[Content]
    tool_calls: NotRequired[list[ToolCall] | None]
    reasoning_content: NotRequired[str | None]
    name: NotRequired[str | None]


@with_config(_LENIENT)
class ToolMessage(TypedDict):
    role: Literal["tool"]
    tool_call_id: NotRequired[str | None]
    content: NotRequired[Content]
    name: NotRequired[str | None]


Message = Annotated[
    Union[SystemMessage, UserMessage, AssistantMessage, ToolMessage],
    Field(discriminator="role"),
]

# Built on first use (defer_build): most messages take the fast path below and never need
# it, and building it costs ~80 ms that `import normalizer` need not pay.
MESSAGE: TypeAdapter[dict[str, Any]] = TypeAdapter(Message, config=ConfigDict(defer_build=True))  # type: ignore[arg-type]
"""Validates one message; returns a new plain dict (extras kept)."""

ROLES = ("system", "developer", "user", "assistant", "tool")


# -- the fast path ----------------------------------------------------------------------
#
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


def as_message(raw: Any) -> Any:
    """Turn a pydantic model (e.g. the OpenAI SDK's ``ChatCompletionMessage``) into a dict.

    Only the fields the producer actually set are kept (``exclude_unset``), so a parsed API
    response round-trips to the JSON it came from.
    """
    dump = getattr(raw, "model_dump", None)
    if dump is not None and not isinstance(raw, Mapping):
        try:
            return dump(mode="json", exclude_unset=True)
        except (UnicodeEncodeError, PydanticSerializationError):
            # A lone surrogate cannot be encoded (the policy: normalizer.formats._records's docstring).
            # Raised as validation fails, so the caller names the message and skips or stops
            # as for any invalid message; anything else the dump refuses propagates as it was.
            found = _first_surrogate(raw, [])  # not from a dump: pydantic refuses them all
            if found is None:
                raise
            path, text = found
            raise ValidationError.from_exception_data(
                "Message", [{"type": "string_unicode", "loc": ("model", *path), "input": text}]
            ) from None
    return raw


def _first_surrogate(value: Any, path: list[str | int]) -> tuple[list[str | int], str] | None:
    """Path and text of the first string (key or value) holding a lone surrogate, in plain
    values and in pydantic models (their fields and extras)."""
    if hasattr(value, "model_dump") and not isinstance(value, Mapping):
        value = {**vars(value), **(getattr(value, "__pydantic_extra__", None) or {})}
    if isinstance(value, str):
        return None if _encodable(value) else (path, value)
    if isinstance(value, Mapping):
        for key, item in value.items():
            if isinstance(key, str) and not _encodable(key):
                return path, key
            found = _first_surrogate(item, [*path, str(key)])
            if found is not None:
                return found
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            found = _first_surrogate(item, [*path, i])
            if found is not None:
                return found
    return None


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _shown(text: str) -> str:
    """A string for an error message: a lone surrogate escaped (it would break the terminal)."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def validate_message(raw: Any, index: int) -> dict[str, Any]:
    """Validate one message, or raise :class:`InvalidMessage` naming index and field."""
    try:
        return MESSAGE.validate_python(as_message(raw))
    except ValidationError as exc:
        raise _invalid(exc, raw, index) from None


def _invalid(exc: ValidationError, raw: Any, index: int) -> InvalidMessage:
    errors = exc.errors(include_url=False)
    first = errors[0]
    kind = first["type"]
    if kind == "string_unicode":  # pydantic's word for a lone surrogate (in a key, or ours)
        path = _shown(".".join(str(p) for p in first["loc"][1:]))
        return InvalidMessage(
            f"{path + ': ' if path else ''}lone surrogate in '{_shown(str(first['input']))}' "
            "(half of a UTF-16 pair: not a character)",
            field=path or None,
            index=index,
            hint="Text must be valid Unicode; replace or drop the surrogate before normalizing",
        )
    if kind != "union_tag_invalid" and (kind == "union_tag_not_found" or len(first["loc"]) == 0):
        if not isinstance(raw, Mapping):
            return InvalidMessage(
                f"expected a message object, got {type(raw).__name__}",
                index=index,
                hint="Each message must be a JSON object with a 'role'",
            )
        return InvalidMessage(
            "message has no 'role'",
            field="role",
            index=index,
            hint=f"Give it one of {', '.join(ROLES)}",
        )
    if kind == "union_tag_invalid":
        role = raw.get("role") if isinstance(raw, Mapping) else None
        return InvalidMessage(
            f"unknown role {role!r}",
            field="role",
            index=index,
            hint=f"Expected one of {', '.join(ROLES)}",
        )
    # The first path element is the union tag (the role); drop it from the field path.
    loc = [str(p) for p in first["loc"][1:]]
    # Union members add their type name to the path ("content.str"); keep the user's path.
    loc = [p for p in loc if p not in _TYPE_NAMES]
    field = ".".join(loc) or None
    expected = sorted({_expected(e) for e in errors if _same_field(e, first)})
    if len(expected) > 1:
        expected = [", ".join(expected[:-1]) + " or " + expected[-1]]
    what = f"{field or 'message'}: expected {expected[0]}"
    if field is not None:
        what += f", got {_describe(_dig(raw, loc))}"
    return InvalidMessage(what, field=field, index=index, hint=_HINTS.get(loc[0] if loc else "", None))


_TYPE_NAMES = {"str", "list[any]", "none", "dict[str,any]", "list[Any]", "dict[str,Any]"}
_TYPE_NAMES |= {"ToolCall", "FunctionCall", "function-after[...]"}

_HINTS = {
    "content": "Content must be a string, a list of content parts, or null",
    "tool_calls": "tool_calls must be a list of {\"id\", \"type\": \"function\", \"function\": {\"name\", \"arguments\"}}",
    "tool_call_id": "The tool_call_id must be the string id of the call it answers",
    "name": "The name must be a string",
    "reasoning_content": "The reasoning_content must be a string or null",
}


def _same_field(error: Any, first: Any) -> bool:
    def strip(loc: Any) -> list[Any]:
        return [p for p in loc if str(p) not in _TYPE_NAMES]

    return strip(error["loc"]) == strip(first["loc"])


def _expected(error: Any) -> str:
    expected: str = {
        "string_type": "a string",
        "list_type": "a list",
        "none_required": "null",
        "dict_type": "an object",
        "model_type": "an object",
        "model_attributes_type": "an object",
        "missing": "a value (it is required)",
    }.get(error["type"], error["msg"].lower())
    return expected


def _dig(raw: Any, path: list[str]) -> Any:
    node = raw
    for step in path:
        try:
            node = node[int(step)] if isinstance(node, list) else node[step]
        except (KeyError, IndexError, ValueError, TypeError):
            return None
    return node


def _describe(value: Any) -> str:
    kind = type(value).__name__
    text = repr(value)
    if len(text) > 40:
        text = text[:37] + "..."
    return f"{kind} {text}"
