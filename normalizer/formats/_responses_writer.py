"""The ``responses`` format's writer: chat messages in, OpenAI Responses input items out
(sans-I/O).

One :class:`~._writing.FormatWriter` (``--to responses``, ``write_responses``); what every
writer shares is in ``_writing``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .._json import JSONDecodeError, dumps, loads
from ._common import SOURCE_KEY
from ._writing import (
    ANTHROPIC_ONLY,
    CALL_KEYS,
    CHAT_ONLY,
    Container,
    FormatWriter,
    Layout,
    Message,
    call_kind,
    function_of,
    image_url_of,
    plain_text,
    source_of,
    text_of,
    with_source_fields,
)

__all__ = ["ResponsesWriter", "PLACEHOLDER_ITEM_ID"]

#: The id the OpenAI Agents SDK gives an item that has none (``FAKE_RESPONSES_ID`` in
#: ``agents.models.fake_id``; the SDK removes it before any request to OpenAI). An assistant
#: message item needs an id for the SDK to keep its text and its calls in one turn.
PLACEHOLDER_ITEM_ID = "__fake_id__"


class ResponsesWriter(FormatWriter):
    """OpenAI Responses input items: what a Responses request's ``input`` and an OpenAI Agents
    SDK session hold. A Chat message becomes:

    * user, system, developer: ``{"role", "content": "text"}`` (the SDK's spelling) when the
      content is a string and the message has no other key; else ``{"type": "message",
      "role", "content": [...], ...}`` with ``input_text`` / ``input_image`` parts.
    * assistant: its reasoning items, then one ``message`` item, then one item per call.
      Reasoning items are ``reasoning_items`` (or hermes' ``codex_reasoning_items``) written
      back whole, ``encrypted_content`` and all; a message with only ``reasoning_content`` or
      ``thinking_blocks`` gets the one reasoning item the Agents SDK makes of such a Chat
      message (id :data:`PLACEHOLDER_ITEM_ID`, the text as its summary, Anthropic thinking
      blocks whole in ``provider_data.thinking_blocks``). The message item holds the text as
      ``output_text`` (with ``annotations``), the refusal and the other parts read with it; it
      keeps its ``id`` and ``status`` (an item that had none gets :data:`PLACEHOLDER_ITEM_ID`
      and ``"completed"``: the SDK keeps text and calls in one turn only for an item with an
      id), and is left out when there is nothing to put in it. hermes' ``codex_message_items``
      are written whole in its place. A call is a ``function_call`` (``call_id``, ``name``,
      ``arguments``; ``id`` from ``response_item_id``), or the ``custom_tool_call`` /
      ``local_shell_call`` it was read from.
    * tool: ``function_call_output`` (``custom_tool_call_output`` for a custom call) with
      ``call_id`` and ``output``.

    Other keys of a message or call, and the ``source_fields`` its reader kept aside (an
    item's ``id``, ``status``, ``phase``...), go onto its item, except Chat-only and
    Anthropic-only ones (``name``, ``finish_reason``, ``is_error``...), which have no place in
    an item.
    """

    name = "responses"
    restores_from = frozenset({"responses", "codex"})  # (a Codex rollout is Responses items)

    def __init__(self, *, container: Container = "array") -> None:
        self._layout = Layout(container, "input")
        self._kinds: dict[Any, Any] = {}  # call id -> item type, for the outputs that follow
        self.message = self._message

    def begin(self, extra: Mapping[str, Any]) -> bytes:
        return self._layout.open({}, extra)

    def end(self) -> bytes:
        return self._layout.close()

    def finish(self) -> bytes:
        return self._layout.empty()

    def _message(self, message: Message) -> bytes:
        role = message.get("role")
        if role == "assistant":
            items = self._assistant(message)
        elif role == "tool":
            items = [self._output(message)]
        else:
            items = [_input_message(message)]
        record = self._layout.record
        return b"".join(record(item) for item in items)

    def _assistant(self, message: Message) -> list[Any]:
        items: list[Any] = []
        reasoning = message.get("reasoning_items") or message.get("codex_reasoning_items")
        if isinstance(reasoning, list):
            items.extend(reasoning)
        else:
            made = _sdk_reasoning(message)
            if made is not None:
                items.append(made)
        written = message.get("codex_message_items")
        if isinstance(written, list) and written:
            items.extend(written)
        else:
            item = _assistant_item(message)
            if item is not None:
                items.append(item)
        self._kinds = {}
        for call in message.get("tool_calls") or ():
            if isinstance(call, Mapping):
                items.append(_call_item(call))
                self._kinds[call.get("id")] = call_kind(call)
        return items

    def _output(self, message: Message) -> dict[str, Any]:
        call_id = message.get("tool_call_id")
        kind = "custom_tool_call_output" if self._kinds.get(call_id) == "custom_tool_call" else "function_call_output"
        item: dict[str, Any] = {"type": kind, "call_id": call_id, "output": _input_content(message.get("content"))}
        for key, value in with_source_fields(message).items():
            if key == "response_item_id":
                item["id"] = value
            elif key not in ("role", "content") and key not in CHAT_ONLY and key not in ANTHROPIC_ONLY:
                item.setdefault(key, value)
        return item


def _input_parts(content: Any, empty: Any) -> Any:
    """Chat content as Responses input content: a string as it is, parts as ``input_text`` /
    ``input_image`` (other parts as they are)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return empty
    parts: list[Any] = []
    for part in content:
        text = text_of(part)
        image = image_url_of(part)
        if text is not None:
            extra = {k: v for k, v in part.items() if k not in ("type", "text")} if isinstance(part, Mapping) else {}
            parts.append({"type": "input_text", "text": text, **extra})
        elif image is not None:
            url, detail = image.url, image.detail
            parts.append({"type": "input_image", "image_url": url, **({"detail": detail} if detail is not None else {})})
        else:
            parts.append(part)
    return parts


def _input_content(content: Any) -> Any:
    """Chat content as the Responses reader gives it back (the writer's fixed point): no
    content (null, ``[]``) is ``""``, and one plain text part is its string, as the reader
    collapses it (``_common.as_text``); ``[]`` was written for a null user message, which a
    second repair rewrote (and which the API may refuse)."""
    parts = _input_parts(content, "")
    if isinstance(parts, list):
        if not parts:
            return ""
        if len(parts) == 1 and plain_text(parts[0], "input_text"):
            return parts[0]["text"]
    return parts


def _input_message(message: Message) -> dict[str, Any]:
    extra = {k: v for k, v in with_source_fields(message).items() if k not in ("role", "content") and k not in CHAT_ONLY and k not in ANTHROPIC_ONLY}
    content = _input_content(message.get("content"))
    if isinstance(content, str):
        if not extra:
            return {"role": message.get("role"), "content": content}
        content = [{"type": "input_text", "text": content}]
    return {"type": "message", "role": message.get("role"), "content": content, **extra}


def _assistant_item(message: Message) -> dict[str, Any] | None:
    content: list[Any] = []
    raw = message.get("content")
    for part in [raw] if isinstance(raw, str) else raw if isinstance(raw, list) else ():
        text = text_of(part)
        if text is not None:
            if text:
                extra = {k: v for k, v in part.items() if k not in ("type", "text")} if isinstance(part, Mapping) else {}
                content.append({"type": "output_text", "text": text, "annotations": [], **extra})
        else:
            content.append(part)
    refusal = message.get("refusal")
    if isinstance(refusal, str):
        content.append({"type": "refusal", "refusal": refusal})
    for parts in message.get("content_parts") or ():
        content.extend(parts if isinstance(parts, list) else [parts])
    extra = {
        k: v for k, v in with_source_fields(message).items()
        if k not in ("role", "content", "tool_calls", "refusal", "content_parts", "reasoning_items", "codex_reasoning_items", "codex_message_items")
        and k not in CHAT_ONLY and k not in ANTHROPIC_ONLY
    }
    if not content and not extra:
        return None  # nothing to say (a turn of calls only): no item, as the SDK writes it
    item_id = extra.pop("id", None)
    status = extra.pop("status", "completed")
    return {
        "type": "message", "role": "assistant",
        "id": item_id if isinstance(item_id, str) and item_id else PLACEHOLDER_ITEM_ID,
        "status": status, "content": content, **extra,
    }


def _call_item(call: Mapping[str, Any]) -> dict[str, Any]:
    function = function_of(call)
    name, arguments = function.get("name"), function.get("arguments")
    if not isinstance(arguments, str):
        arguments = "{}" if arguments is None else dumps(arguments).decode()
    kind = call_kind(call)
    item: dict[str, Any]
    if kind == "custom_tool_call":
        # The reader wrapped the free-form input as {"input": ...}; unwrap it.
        try:
            wrapped = loads(arguments)
        except JSONDecodeError:
            wrapped = None
        value = wrapped["input"] if isinstance(wrapped, dict) and set(wrapped) == {"input"} else arguments
        item = {"type": "custom_tool_call", "call_id": call.get("id"), "name": name, "input": value}
    elif kind == "local_shell_call":
        try:
            action = loads(arguments)  # (its integers as they were, as the arguments' text has them)
        except JSONDecodeError:
            action = arguments
        item = {"type": "local_shell_call", "call_id": call.get("id"), "action": action}
    else:
        item = {"type": "function_call", "call_id": call.get("id"), "name": name, "arguments": arguments}
    for key, value in call.items():
        if key == "response_item_id":
            item["id"] = value
        elif key not in CALL_KEYS and key != "item_type" and key != SOURCE_KEY and key not in ANTHROPIC_ONLY:
            item.setdefault(key, value)
    for key, value in source_of(call).items():
        if key == "id":
            item["id"] = value  # the item's own id (the call's id is its call_id)
        elif key != "item_type" and key not in ANTHROPIC_ONLY:
            item.setdefault(key, value)
    return item


def _sdk_reasoning(message: Message) -> dict[str, Any] | None:
    """The reasoning item the OpenAI Agents SDK makes of a Chat message with
    ``reasoning_content``, ``reasoning`` or ``thinking_blocks``
    (``Converter.message_to_output_items``), or None."""
    text = message.get("reasoning_content")
    raw = message.get("reasoning")
    blocks = message.get("thinking_blocks")
    text = text if isinstance(text, str) and text else None
    blocks = [b for b in blocks if isinstance(b, Mapping)] if isinstance(blocks, list) else []
    raw = raw if isinstance(raw, str) and raw and text is None and not blocks else None
    if text is None and raw is None and not blocks:
        return None
    item: dict[str, Any] = {
        "id": PLACEHOLDER_ITEM_ID, "type": "reasoning",
        "summary": [{"text": text, "type": "summary_text"}] if text is not None else [],
    }
    provider: dict[str, Any] = {}
    if raw is not None:
        item["content"] = [{"text": raw, "type": "reasoning_text"}]
        provider["_chat_completions_reasoning_field"] = "reasoning"
    if blocks:
        provider["thinking_blocks"] = blocks
        item["content"] = [{"text": b["thinking"], "type": "reasoning_text"} for b in blocks if isinstance(b.get("thinking"), str) and b["thinking"]]
        signatures = [b["signature"] for b in blocks if isinstance(b.get("signature"), str) and b["signature"]]
        if signatures:
            item["encrypted_content"] = "\n".join(signatures)
    if provider:
        item["provider_data"] = provider
    return item
