"""pydantic-ai: repair the message history before every model request (a history processor).

``pip install 'chat-normalizer[pydantic-ai]'``::

    from pydantic_ai import Agent
    from normalizer.integrations.pydantic_ai import repair_capability

    agent = Agent("openai:gpt-4o", capabilities=[repair_capability()])

pydantic-ai 2 spells a history processor as a capability, ``ProcessHistory(processor)``
(:func:`repair_capability` builds it); pydantic-ai 1 as ``Agent(history_processors=[...])``,
which takes :class:`HistoryRepair` or :func:`repair_history` as they are.
:class:`HistoryRepair` takes the run's model name for ``profile="auto"`` (it receives the
``RunContext``); :func:`repair_history` is the same repair as a plain function over
``list[ModelMessage]`` (the ``default`` profile unless given one). pydantic-ai keeps what a
processor returns as the run's history, so the repaired history is also what
``result.all_messages()`` gives.

pydantic-ai itself closes a call left unanswered before the last request and drops a result
whose call is gone before any processor runs; the split turn, the ``""`` next to calls and what
a stricter profile asks for are the processor's.

How the parts map (each chat message carries the parts it came from, so the way back reuses
them):

* ``ModelRequest``: ``SystemPromptPart`` -> system, ``UserPromptPart`` -> user,
  ``ToolReturnPart`` (a retried call's too) and a ``RetryPromptPart`` for a tool -> tool
  (paired by ``tool_call_id``), any other ``RetryPromptPart`` -> user (``RetryPromptPart`` is
  deprecated in pydantic-ai 2.68, still read in histories stored before).
* ``ModelResponse``: its ``TextPart``\\ s and ``ToolCallPart``\\ s -> one assistant message.
* Everything else (``ThinkingPart``, a native tool's parts, files, instruction parts,
  ``RetryFeedbackPart``, which each model words at request time...) has no
  chat form: it is kept as it is, in the message it came from (or, when the repair dropped or
  merged that message, in the one it went into).

A part the repair left as it was comes back as the same object, and a message whose parts
all did as the same message; a changed one keeps the original's fields (``timestamp``,
``model_name``, ``usage``, ``provider_details``...) with the new parts.
"""

from __future__ import annotations

import dataclasses
import os  # noqa: F401  # ProfileArg names "os.PathLike[str]": pydantic-ai resolves the processors' annotations at run time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Union

from pydantic_ai import RunContext
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelRequestPart,
    ModelResponse,
    ModelResponsePart,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from typing_extensions import Unpack

from .._types import ProfileArg, RepairOptions
from ..profiles import Profile  # noqa: F401  # ProfileArg names "Profile" (see ``import os``)
from ._common import AUTO, LOGGER, AutoProfile, OnReport, log_report, repair_chat, resolve_profile

__all__ = ["HistoryRepair", "repair_history", "repair_capability", "to_chat", "from_chat", "ChatHistory", "ORIGIN"]

if TYPE_CHECKING:
    from pydantic_ai.capabilities import ProcessHistory

_LOG = LOGGER.getChild("pydantic_ai")

#: The key on each chat message that lists the parts it came from ("3" for response 3,
#: "2.1" for part 1 of request 2): a list, so the core's merge concatenates it.
ORIGIN = "x_pydantic_ai_origin"

_ChatPart = Union[SystemPromptPart, UserPromptPart, ToolReturnPart, RetryPromptPart]


def repair_history(
    messages: list[ModelMessage],
    profile: ProfileArg = "default",
    *,
    on_report: OnReport | None = None,
    **options: Unpack[RepairOptions],
) -> list[ModelMessage]:
    """A pydantic-ai message history repaired for ``profile`` (a new list; the messages given
    are never modified). A history that needed nothing comes back as the same objects.

    >>> from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, UserPromptPart
    >>> history = [ModelRequest(parts=[UserPromptPart("hi")]),
    ...            ModelResponse(parts=[TextPart("A")]), ModelResponse(parts=[TextPart("B")])]
    >>> [[p.content for p in m.parts] for m in repair_history(history)]  # one turn, its parts kept
    [['hi'], ['A', 'B']]
    """
    chat = to_chat(messages)
    result = repair_chat(chat.messages, profile, options, mapped_back=True)
    log_report(_LOG, "history processor", result.report, profile, on_report)
    if not result.report.changed:
        return list(messages)
    return from_chat(result.messages, chat)


@dataclass
class HistoryRepair:
    """A history processor (``Agent(history_processors=[HistoryRepair()])``).

    Args:
        profile: a profile, or ``"auto"`` (the default): the profile of the run's model
            (``ctx.model.model_name``; :func:`normalizer.profile_for_model`).
        on_report: called with the whole :class:`~normalizer.Report` of every repair.
        options: the core's options (:class:`normalizer.RepairOptions`).
    """

    profile: AutoProfile = AUTO
    on_report: OnReport | None = None
    options: RepairOptions = field(default_factory=lambda: RepairOptions())

    def __call__(self, ctx: RunContext[Any], messages: list[ModelMessage]) -> list[ModelMessage]:
        profile = resolve_profile(self.profile, ctx.model.model_name)
        return repair_history(messages, profile, on_report=self.on_report, **self.options)


def repair_capability(profile: AutoProfile = AUTO, *, on_report: OnReport | None = None, **options: Unpack[RepairOptions]) -> ProcessHistory[Any]:
    """``Agent(capabilities=[repair_capability()])``: a :class:`HistoryRepair` in pydantic-ai
    2's ``ProcessHistory`` capability (imported here: pydantic-ai 1 has none)."""
    from pydantic_ai.capabilities import ProcessHistory

    return ProcessHistory(HistoryRepair(profile=profile, on_report=on_report, options=options))


@dataclass(frozen=True)
class ChatHistory:
    """A pydantic-ai history as chat messages, with what the way back needs: the original
    messages and the chat form each part was given (by its origin)."""

    messages: list[dict[str, Any]]
    originals: Sequence[ModelMessage]
    forms: dict[str, dict[str, Any]]


def to_chat(messages: Sequence[ModelMessage]) -> ChatHistory:
    """Chat messages for a pydantic-ai history, each marked with the parts it came from."""
    out: list[dict[str, Any]] = []
    forms: dict[str, dict[str, Any]] = {}
    for index, message in enumerate(messages):
        if isinstance(message, ModelResponse):
            form = _response_form(message, str(index))
            forms[str(index)] = form
            out.append(form)
            continue
        for number, part in enumerate(message.parts):
            origin = f"{index}.{number}"
            request_form = _request_form(part, origin)
            if request_form is not None:
                forms[origin] = request_form
                out.append(request_form)
    return ChatHistory(messages=out, originals=messages, forms={k: dict(v) for k, v in forms.items()})


def from_chat(repaired: list[dict[str, Any]], history: ChatHistory) -> list[ModelMessage]:
    """The repaired chat messages as a pydantic-ai history: assistant messages become
    responses, each run of the others one request (pydantic-ai alternates the two)."""
    builder = _Builder(history)
    for message in repaired:
        if message["role"] == "assistant":
            builder.response(message)
        else:
            builder.request_part(message)
    return builder.finish()


# -- to chat ---------------------------------------------------------------------------------


def _response_form(message: ModelResponse, origin: str) -> dict[str, Any]:
    texts = [part.content for part in message.parts if isinstance(part, TextPart)]
    calls = [_call_form(part) for part in message.parts if isinstance(part, ToolCallPart)]
    form: dict[str, Any] = {"role": "assistant", "content": "\n".join(texts) if texts else None}
    if calls:
        form["tool_calls"] = calls
    form[ORIGIN] = [origin]
    return form


def _call_form(part: ToolCallPart) -> dict[str, Any]:
    return {"id": part.tool_call_id, "type": "function", "function": {"name": part.tool_name, "arguments": part.args_as_json_str()}}


def _request_form(part: ModelRequestPart, origin: str) -> dict[str, Any] | None:
    """A request part's chat message; None for a part with no chat form."""
    if isinstance(part, SystemPromptPart):
        return {"role": "system", "content": part.content, ORIGIN: [origin]}
    if isinstance(part, UserPromptPart):
        return {"role": "user", "content": _user_content(part.content), ORIGIN: [origin]}
    if isinstance(part, ToolReturnPart):
        return {"role": "tool", "tool_call_id": part.tool_call_id, "name": part.tool_name,
                "content": part.model_response_str(), ORIGIN: [origin]}
    if isinstance(part, RetryPromptPart):
        if part.tool_name is None:
            return {"role": "user", "content": part.model_response(), ORIGIN: [origin]}
        return {"role": "tool", "tool_call_id": part.tool_call_id, "name": part.tool_name,
                "content": part.model_response(), ORIGIN: [origin]}
    return None


def _user_content(content: str | Sequence[Any]) -> Any:
    """A user prompt's chat content: its text; a non-text item (an image, a document...) as a
    placeholder part, so the repair sees the message is not empty. The way back uses the
    original part, never the placeholder."""
    if isinstance(content, str):
        return content
    return [
        {"type": "text", "text": item} if isinstance(item, str)
        else {"type": "file", "file": {"file_id": f"pydantic-ai:{type(item).__name__}"}}
        for item in content
    ]


# -- back to pydantic-ai ---------------------------------------------------------------------


class _Builder:
    """Rebuilds the history one repaired chat message at a time."""

    def __init__(self, history: ChatHistory) -> None:
        self.history = history
        self.out: list[ModelMessage] = []
        self.parts: list[ModelRequestPart] = []  # the request being built
        self.request_origins: list[int] = []  # the original requests its parts came from
        self.placed: set[int] = set()  # original messages whose parts with no chat form are placed
        self.cursor: dict[type, int] = {}  # per kind: every original before it is placed
        self.calls: dict[str, str] = {}  # tool_call_id -> tool name, for a result the repair made

    # A request part, or several (a merge of user messages gives back each original part).
    def request_part(self, message: dict[str, Any]) -> None:
        origins = _origins(message)
        self.request_origins.extend(map(_message_index, origins))
        self.parts.extend(self._request_parts(message, origins))

    def response(self, message: dict[str, Any]) -> None:
        self._end_request()
        origins = [_message_index(origin) for origin in _origins(message)]
        originals = [self.history.originals[i] for i in origins]
        for call in message.get("tool_calls") or ():
            self.calls[call["id"]] = call["function"]["name"]
        if len(origins) == 1 and _same(message, self.history.forms.get(str(origins[0]))):
            self.placed.add(origins[0])
            self.out.append(originals[0])
            return
        parts = [*self._unplaced(origins, ModelResponse), *_texts(message, originals), *_calls(message, originals)]
        last = originals[-1] if originals else None
        if isinstance(last, ModelResponse):
            self.out.append(dataclasses.replace(last, parts=parts))
        else:
            self.out.append(ModelResponse(parts=parts))

    def finish(self) -> list[ModelMessage]:
        self._end_request()
        leftover = self._unplaced(range(len(self.history.originals)), ModelRequest)
        if leftover:  # parts with no chat form from messages the repair dropped whole
            last = self.out[-1] if self.out else None
            if isinstance(last, ModelRequest):
                self.out[-1] = dataclasses.replace(last, parts=[*last.parts, *leftover])
            else:
                self.out.append(ModelRequest(parts=leftover))
        return self.out

    def _request_parts(self, message: dict[str, Any], origins: list[str]) -> list[ModelRequestPart]:
        originals = [self._part(origin) for origin in origins]
        if len(origins) == 1 and _same(message, self.history.forms.get(origins[0])):
            return [originals[0]]
        role = message["role"]
        if role == "tool":
            return [self._tool_part(message, originals[0] if originals else None)]
        if originals and all(isinstance(p, (UserPromptPart, SystemPromptPart)) and _role(p) == role for p in originals):
            return originals  # merged text turns: each original part, as it was
        if role == "system":
            return [SystemPromptPart(_text(message["content"]))]
        return [UserPromptPart(_text(message["content"]))]

    def _tool_part(self, message: dict[str, Any], original: ModelRequestPart | None) -> ModelRequestPart:
        call_id: str = message["tool_call_id"]
        name = message.get("name") or self.calls.get(call_id) or getattr(original, "tool_name", None) or "unknown"
        if isinstance(original, (ToolReturnPart, RetryPromptPart)):
            form = self.history.forms[_origins(message)[0]]
            if message["content"] == form["content"]:
                # The output as it was (an object, a retry): only the pairing can have changed.
                changes: dict[str, Any] = {"tool_call_id": call_id}
                if name != original.tool_name:
                    changes["tool_name"] = name
                return dataclasses.replace(original, **changes)
        return ToolReturnPart(tool_name=name, content=_text(message["content"]), tool_call_id=call_id)

    def _end_request(self) -> None:
        if not self.parts and not self.request_origins:
            return
        origins = sorted(set(self.request_origins))
        parts: list[ModelRequestPart] = [*self._unplaced(origins, ModelRequest), *self.parts]
        originals = [self.history.originals[i] for i in origins]
        if len(originals) == 1 and _holds_exactly(parts, originals[0].parts):
            self.out.append(originals[0])
        elif originals and isinstance(originals[-1], ModelRequest):
            self.out.append(dataclasses.replace(originals[-1], parts=parts))
        else:
            self.out.append(ModelRequest(parts=parts))
        self.parts = []
        self.request_origins = []

    def _unplaced(self, origins: Iterable[int], kind: type[ModelRequest] | type[ModelResponse]) -> list[Any]:
        """The parts with no chat form of these original messages of ``kind`` and of every one
        before them not placed yet (one the repair dropped), in order; then marked placed.
        A cursor per kind: each original is looked at once (the history can be long)."""
        last = max(origins, default=-1)
        start = self.cursor.get(kind, 0)
        found: list[Any] = []
        for index in range(start, last + 1):
            original = self.history.originals[index]
            if index in self.placed or not isinstance(original, kind):
                continue
            self.placed.add(index)
            found.extend(part for part in original.parts if not _has_chat_form(part))
        self.cursor[kind] = max(start, last + 1)
        return found

    def _part(self, origin: str) -> ModelRequestPart:
        message, _, part = origin.partition(".")
        return self.history.originals[int(message)].parts[int(part)]  # type: ignore[return-value]


def _origins(message: dict[str, Any]) -> list[str]:
    """The parts a chat message came from: ``"3"`` (response 3), ``"2.1"`` (request 2, part 1)."""
    origins: list[str] = message.get(ORIGIN) or []
    return origins


def _message_index(origin: str) -> int:
    return int(origin.partition(".")[0])


def _holds_exactly(parts: Sequence[object], original: Sequence[object]) -> bool:
    """Whether ``parts`` are the original's own part objects, all of them, in its order."""
    return len(parts) == len(original) and all(a is b for a, b in zip(parts, original))


def _same(message: dict[str, Any], form: dict[str, Any] | None) -> bool:
    return form is not None and message == form


def _has_chat_form(part: ModelRequestPart | ModelResponsePart) -> bool:
    return isinstance(part, (TextPart, ToolCallPart, SystemPromptPart, UserPromptPart, ToolReturnPart, RetryPromptPart))


def _role(part: ModelRequestPart) -> str:
    return "system" if isinstance(part, SystemPromptPart) else "user"


def _texts(message: dict[str, Any], originals: Sequence[ModelMessage]) -> list[TextPart]:
    """The response's text: the original TextParts when the repair kept their text (a merge
    joins them), else one TextPart with the repaired text."""
    content = message.get("content")
    text = _text(content) if content is not None else ""
    kept = [p for m in originals for p in m.parts if isinstance(p, TextPart) and p.content.strip()]
    if "\n".join(p.content for p in kept) == text:
        return kept
    return [TextPart(text)] if text else []


def _calls(message: dict[str, Any], originals: Sequence[ModelMessage]) -> list[ToolCallPart]:
    """The response's calls: each original ToolCallPart the repair left as it was, else one
    built from the repaired call (a new id, a repaired name or arguments)."""
    parts = [p for m in originals for p in m.parts if isinstance(p, ToolCallPart)]
    by_id = {p.tool_call_id: p for p in parts}
    calls = message.get("tool_calls") or []
    out: list[ToolCallPart] = []
    for position, call in enumerate(calls):
        original = by_id.get(call["id"])
        if original is None and len(calls) == len(parts):
            original = parts[position]  # the repair gave the calls new ids, in their order
        if original is not None and _call_form(original) == call:
            out.append(original)
        elif original is not None:
            out.append(dataclasses.replace(original, tool_call_id=call["id"], tool_name=call["function"]["name"],
                                           args=call["function"]["arguments"]))
        else:
            out.append(ToolCallPart(call["function"]["name"], call["function"]["arguments"], tool_call_id=call["id"]))
    return out


def _text(content: Any) -> str:
    """Chat content as text (a list of parts: its text parts joined)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p["text"] for p in content if isinstance(p, dict) and p.get("type") == "text")
    return ""
