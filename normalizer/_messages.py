"""What a chat message is: OpenAI Chat Completions messages, validated once at the edge.

The validator of record is :data:`MESSAGE`, a pydantic ``TypeAdapter`` over a union of
lenient ``TypedDict``s tagged on ``role`` (``_message_models``, which says what it accepts).
This module is what the rest of the package calls: :func:`is_plain` (``_plain``), the fast
path that recognises a message the adapter would return unchanged; :func:`validate_python`, which
runs the adapter, and :func:`validate_message`, which also turns its errors into
:class:`InvalidMessage` (``invalid_message``); :func:`as_message` for pydantic objects given as
messages.

The models are loaded on first use (``validate_python``, or ``MESSAGE`` asked of this module):
a history of plain messages never needs them, and defining them is start-up time that
the command line and ``import normalizer`` need not pay. pydantic_core is imported here:
whatever imports this module also builds pydantic models (``Report``), so it is loaded anyway.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from pydantic_core import PydanticSerializationError, ValidationError

from ._errors import InvalidMessage
from ._plain import is_plain
from ._lazy import export_names, load_export

if TYPE_CHECKING:
    from ._message_models import MESSAGE

__all__ = ["MESSAGE", "ROLES", "as_message", "invalid_message", "is_plain", "validate_message", "validate_plain",
           "validate_python"]

#: Names loaded on first use (PEP 562, ``_lazy``) -> the module that defines them.
_EXPORTS = {"MESSAGE": "._message_models"}


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return load_export(globals(), _EXPORTS, name)


def __dir__() -> list[str]:
    return export_names(globals(), _EXPORTS)


ROLES = ("system", "developer", "user", "assistant", "tool")


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


def _first_validation(raw: Any) -> dict[str, Any]:
    # validate_python until the first message off the fast path: load the models, then
    # let the adapter's own method take its place (no extra call per message after that).
    global validate_python
    validate_python = load_export(globals(), _EXPORTS, "MESSAGE").validate_python
    return validate_python(raw)


#: ``MESSAGE.validate_python``: a message validated into a new plain dict, or pydantic's
#: ``ValidationError`` (``invalid_message`` words it for people). The models are loaded by the first
#: call, which rebinds this name: read it as ``_messages.validate_python``, as the core does
#: (a ``from``-import would keep the loader, which would look the models up again each call).
validate_python: Callable[[Any], dict[str, Any]] = _first_validation


def validate_plain(raw: Any) -> dict[str, Any]:
    """``validate_python`` as it is bound now (the first call rebinds it to the models'
    own validator): for a caller in another folder, which cannot hold the module."""
    return validate_python(raw)


def validate_message(raw: Any, index: int) -> dict[str, Any]:
    """Validate one message, or raise :class:`InvalidMessage` naming index and field."""
    try:
        return validate_python(as_message(raw))
    except ValidationError as exc:
        raise invalid_message(exc, raw, index) from None


def invalid_message(exc: ValidationError, raw: Any, index: int) -> InvalidMessage:
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
