"""The OpenAI SDK's own description of a Chat Completions message, with no extra key allowed.

``openai.types.chat.ChatCompletionMessageParam`` is a union of TypedDicts; pydantic's
``TypeAdapter`` on a TypedDict ignores keys it does not declare, and OpenAI's API refuses
them (400 "Additional properties are not allowed"; vLLM: ``extra_forbidden``). So this walks
a message against the TypedDicts' annotations itself: every key of the message, of each
call (and its ``function``), of each content part (and its nested objects: ``image_url``,
``input_audio``, ``file``) must be one the matching TypedDict declares. :func:`extra_keys`
names the ones that are not, as paths (``"tool_calls.0.source_fields"``).

It is a key walk, not a type check: a value's type is the profile's business (a template
profile sends ``arguments`` as an object, on purpose), a key no provider knows never is.
"""

from __future__ import annotations

import collections.abc
import types
from collections.abc import Container, Mapping
from functools import cache
from typing import Any, NotRequired, Required, Union, get_args, get_origin, get_type_hints

from openai.types.chat import ChatCompletionMessageParam
from typing_extensions import is_typeddict

__all__ = ["MESSAGE_TYPES", "extra_keys"]


@cache
def _fields(td: Any) -> dict[str, Any]:
    """A TypedDict's fields and their types (``Required``/``NotRequired`` unwrapped)."""
    fields: dict[str, Any] = {}
    for key, hint in get_type_hints(td, include_extras=True).items():
        fields[key] = get_args(hint)[0] if get_origin(hint) in (Required, NotRequired) else hint
    return fields


#: role -> the TypedDict of a message of that role.
MESSAGE_TYPES: dict[str, Any] = {get_args(_fields(td)["role"])[0]: td for td in get_args(ChatCompletionMessageParam)}


def _typeddicts(hint: Any) -> list[Any]:
    """The TypedDicts a value of type ``hint`` may be, or be a list of (its union's members,
    an ``Iterable[...]``'s items)."""
    if is_typeddict(hint):
        return [hint]
    origin = get_origin(hint)
    if origin in (Union, types.UnionType) or origin in (collections.abc.Iterable, list, collections.abc.Sequence):
        return [td for arg in get_args(hint) for td in _typeddicts(arg)]
    return []


def _walk(value: Any, hint: Any, path: str) -> list[str]:
    """The keys of ``value`` (and of what it holds) that the TypedDicts of ``hint`` do not declare."""
    candidates = _typeddicts(hint)
    if not candidates:
        return []
    if isinstance(value, list):
        return [extra for n, element in enumerate(value) for extra in _walk(element, hint, f"{path}.{n}")]
    if not isinstance(value, Mapping):
        return []
    # A union of TypedDicts is told apart by ``type``: the member whose ``type`` names the
    # value's is the one it must be. A ``type`` none of them names (an image part in a tool
    # message, which takes text parts only) is a question of which parts a role may hold,
    # the profile's (``openai`` sends a tool message's text only), not of keys: not walked.
    if "type" in value and any("type" in _fields(td) for td in candidates):
        named = [td for td in candidates if value["type"] in get_args(_fields(td).get("type"))]
        return _walk_typeddict(value, named[0], path) if named else []
    return min((_walk_typeddict(value, td, path) for td in candidates), key=len)


def _walk_typeddict(value: Mapping[str, Any], td: Any, path: str, allowed: Container[str] = ()) -> list[str]:
    fields = _fields(td)
    where = f"{path}." if path else ""
    extras = [f"{where}{key}" for key in value if key not in fields and key not in allowed]
    for key, element in value.items():
        if key in fields:
            extras += _walk(element, fields[key], f"{where}{key}")
    return extras


def extra_keys(message: Mapping[str, Any], allowed: Container[str] = ()) -> list[str]:
    """The keys of ``message`` outside ``ChatCompletionMessageParam`` (paths, in order); a key
    in ``allowed`` (the reasoning keys a profile sends) may be on the message itself. A role
    the union does not know is reported as ``"role"``."""
    td = MESSAGE_TYPES.get(message.get("role"))  # type: ignore[arg-type]
    if td is None:
        return ["role"]
    return _walk_typeddict(message, td, "", allowed)
