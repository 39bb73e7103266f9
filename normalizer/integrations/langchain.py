"""LangChain v1: repair the history an agent sends to its model, or any list of messages.

``pip install 'chat-normalizer[langchain]'``::

    from langchain.agents import create_agent
    from normalizer.integrations.langchain import NormalizerMiddleware

    agent = create_agent(model, tools, middleware=[NormalizerMiddleware()])

:class:`NormalizerMiddleware` repairs the messages of every model call (``wrap_model_call`` and
``awrap_model_call``): the agent's state, and its checkpointer's copy, keep the history as it
was stored, and only the model sees the repaired one. ``profile="auto"`` takes the call's
model name (``ChatOpenAI(model="gpt-4o")`` -> ``openai``).

:func:`repair_messages` is the same repair on a ``list[BaseMessage]`` (a history loaded from
a store, messages for ``model.invoke``): langchain_core's own converters turn the messages into
chat messages (``convert_to_openai_messages``, ids kept) and back (``convert_to_messages``).
A message the repair left as it was comes back as the same object (its ``response_metadata``,
``usage_metadata``, ``additional_kwargs`` untouched); a message it changed keeps the original's
id and metadata with the new content and tool calls; a message it added (the result of a call
never answered) is new.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import orjson
from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, ToolMessage
from langchain_core.messages.utils import convert_to_messages, convert_to_openai_messages
from typing_extensions import Unpack

from .._json import dumps
from .._types import ProfileArg, RepairOptions
from ._common import AUTO, LOGGER, AutoProfile, OnReport, log_report, repair_chat, resolve_profile

__all__ = ["NormalizerMiddleware", "repair_messages", "model_name"]

_LOG = LOGGER.getChild("langchain")

#: What a middleware's model call handler gives back (a ModelResponse, an AIMessage...).
_Result = Any


def repair_messages(
    messages: Sequence[BaseMessage],
    profile: ProfileArg = "default",
    *,
    on_report: OnReport | None = None,
    where: str = "langchain",
    **options: Unpack[RepairOptions],
) -> list[BaseMessage]:
    """``messages`` repaired for ``profile``, as LangChain messages (a new list; the messages
    given are never modified). A history that needed nothing comes back as the same objects.

    >>> from langchain_core.messages import AIMessage, HumanMessage
    >>> out = repair_messages([HumanMessage("hi", id="h1"), AIMessage("A", id="a1"), AIMessage("B", id="a2")])
    >>> [(type(m).__name__, m.content, m.id) for m in out]
    [('HumanMessage', 'hi', 'h1'), ('AIMessage', 'A\\nB', 'a2')]
    """
    chat = convert_to_openai_messages(list(messages), include_id=True)
    result = repair_chat(chat, profile, options, mapped_back=True)
    log_report(_LOG, where, result.report, profile, on_report)
    if not result.report.changed:
        return list(messages)
    return _back_to_langchain(result.messages, chat, messages)


class NormalizerMiddleware(AgentMiddleware):
    """LangChain v1 agent middleware: every model call gets a repaired history.

    Args:
        profile: a profile, or ``"auto"`` (the default): the profile of the call's model
            (:func:`model_name`, :func:`normalizer.profile_for_model`).
        on_report: called with the whole :class:`~normalizer.Report` of every repair.
        **options: the core's options (:class:`normalizer.RepairOptions`).
    """

    def __init__(self, profile: AutoProfile = AUTO, *, on_report: OnReport | None = None, **options: Unpack[RepairOptions]) -> None:
        super().__init__()
        self.profile = profile
        self.on_report = on_report
        self.options = options

    def wrap_model_call(self, request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], ModelResponse[Any]]) -> _Result:
        return handler(self._repaired(request))

    async def awrap_model_call(
        self, request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]]
    ) -> _Result:
        return await handler(self._repaired(request))

    def _repaired(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        """The request with its messages repaired (the system message is the request's own,
        apart from them, and left as it is)."""
        profile = resolve_profile(self.profile, model_name(request.model))
        messages = repair_messages(request.messages, profile, on_report=self.on_report, where="agent model call", **self.options)
        if all(a is b for a, b in zip(messages, request.messages)) and len(messages) == len(request.messages):
            return request
        return request.override(messages=_any_messages(messages))


def model_name(model: object) -> str | None:
    """A chat model's name, as its class keeps it (``model_name`` for ChatOpenAI, ``model``
    for most others, ``model_id`` for Bedrock); None when it has none."""
    for attribute in ("model_name", "model", "model_id"):
        name = getattr(model, attribute, None)
        if isinstance(name, str):
            return name
    return None


def _back_to_langchain(
    repaired: list[dict[str, Any]], chat: list[dict[str, Any]], originals: Sequence[BaseMessage]
) -> list[BaseMessage]:
    """The repaired chat messages as LangChain messages: an unchanged one is its original
    object, a changed one its original (same id) with the new content, a new one is built."""
    unchanged: defaultdict[bytes, deque[BaseMessage]] = defaultdict(deque)
    by_id: dict[str, BaseMessage] = {}
    for form, original in zip(chat, originals):
        unchanged[_key(form)].append(original)
        if original.id is not None:
            by_id.setdefault(original.id, original)
    out: list[BaseMessage] = []
    for message in repaired:
        same = unchanged.get(_key(message))
        if same:
            out.append(same.popleft())
            continue
        built = convert_to_messages([message])[0]
        source = by_id.get(message["id"]) if isinstance(message.get("id"), str) else None
        out.append(_carried_over(built, source) if source is not None else built)
    return out


def _carried_over(built: BaseMessage, original: BaseMessage) -> BaseMessage:
    """``original`` with what the repair changed taken from ``built`` (its content, tool calls
    and call id): metadata the chat form has no place for stays."""
    if type(built) is not type(original):
        return built
    update: dict[str, Any] = {"content": built.content}
    if isinstance(built, AIMessage):
        update["tool_calls"] = built.tool_calls
        update["invalid_tool_calls"] = built.invalid_tool_calls
        # ChatOpenAI's own wire form of the calls would shadow the repaired ones.
        update["additional_kwargs"] = {
            k: v for k, v in original.additional_kwargs.items() if k not in ("tool_calls", "function_call")
        }
    if isinstance(built, ToolMessage):
        update["tool_call_id"] = built.tool_call_id
    return original.model_copy(update=update)


def _key(message: dict[str, Any]) -> bytes:
    """A chat message's identity for "left as it was" (the repair copies, so not ``is``)."""
    return dumps(message, orjson.OPT_SORT_KEYS, repr)  # (integers past 64 bits too: see .._json)


def _any_messages(messages: list[BaseMessage]) -> list[AnyMessage]:
    """The request's type is ``list[AnyMessage]``: every message built here is one of its kinds."""
    return messages  # type: ignore[return-value]
