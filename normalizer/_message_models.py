"""The validator of record for one chat message: the pydantic models behind ``_messages``.

One module-level :data:`MESSAGE` ``TypeAdapter`` over a union tagged on ``role``. The
members are ``TypedDict``s with ``extra="allow"``: validation returns a *new* plain dict
(so the caller's object is never the one we change), unknown keys survive untouched, and
it is ~1.5x cheaper than the same union of ``BaseModel``s (aesthetics.md §9).

The models are deliberately lenient where the core can repair (``content: ""`` next to
calls, ``tool_calls: []``, arguments given as an object, a call with only ``call_id``, a
result without ``tool_call_id``) and strict where it cannot guess (a number where text
belongs, an unknown role).

Imported on first use only (``_messages.validated``, or ``_messages.MESSAGE``): most
messages take ``_messages.is_plain``'s fast path and never reach it, and defining these
models is start-up that a repair of plain messages need not pay.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import ConfigDict, Field, TypeAdapter, with_config
from typing_extensions import NotRequired, TypedDict

__all__ = ["MESSAGE"]

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

# Built on first use (defer_build): even once this module is loaded (a first message off the
# fast path, or a caller asking for MESSAGE), the schema is built by the first validation.
MESSAGE: TypeAdapter[dict[str, Any]] = TypeAdapter(Message, config=ConfigDict(defer_build=True))  # type: ignore[arg-type]
"""Validates one message; returns a new plain dict (extras kept)."""
