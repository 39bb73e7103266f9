"""Chat messages in, bytes out: the output formats, as encoders (sans-I/O).

Each output format is an :class:`Encoder` in the :data:`ENCODERS` table, keyed by its name
(the CLI's ``--to``): chat JSONL, a JSON array of chat messages, fine-tuning JSONL, OpenAI
Responses input items (:class:`ResponsesEncoder`) and Anthropic Messages
(:class:`AnthropicEncoder`). An encoder turns one run of output into bytes, and does no I/O: the
library's writers (``_writers``) and the command line (``cli._repair``) only gather what it
returns and write it in blocks of :data:`FLUSH_BYTES`. A run is::

    start()                                  once
      begin(extra)                           per conversation (its other keys)
        message(m)                           per message (b"" when the encoder holds it)
      end()                                  per conversation
    finish()                                 once

``message`` is an attribute, not a method, so that the chat JSONL encoder's is orjson's
own ``dumps`` (through ``functools.partial``): the per-message path of the CLI pays one C
call, no Python frame. orjson refuses an integer past 64 bits, which a message read from a
file may hold (``.._json``): the pumps then write that message with the encoder's ``again``.
The other encoders write through ``.._json.dumps`` (or try orjson first, per message),
which writes it as its digits. An encoder that holds ``multi`` is one conversation per record
(fine-tuning JSONL); the others hold one conversation, and a second is refused by whoever
pumps them.

orjson cannot write a lone surrogate or a value nested past 255 levels (the readers refuse
both in files, so only in-memory input gets here): pumps turn its error into an
:class:`InvalidMessage` naming the item with :func:`unwritable`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping
from typing import Any, ClassVar, Literal

import orjson

from .._errors import InputError, InvalidMessage, LimitExceeded, UsageError
from .._json import MAX_INT_DIGITS, JSONDecodeError, dumps, loads
from ..profiles import _stage  # MAX_LEADING_SYSTEMS: one limit, read where it is checked
from ._common import SOURCE_KEY

__all__ = [
    "FLUSH_BYTES",
    "ENCODERS",
    "Container",
    "Encoder",
    "JsonlEncoder",
    "JsonArrayEncoder",
    "FinetuneEncoder",
    "ResponsesEncoder",
    "AnthropicEncoder",
    "PLACEHOLDER_ITEM_ID",
    "encode_conversation",
    "unwritable",
]

#: Output bytes gathered before one write (one thread hop in async mode, one progress update
#: on the command line): large enough to amortise both, small enough not to matter for memory.
FLUSH_BYTES = 256 * 1024

_LINE = orjson.OPT_APPEND_NEWLINE

Message = Mapping[str, Any]


class Encoder:
    """One output format: messages in, bytes out, no I/O (see the module docstring)."""

    #: The name in :data:`ENCODERS` (and ``--to``).
    name: ClassVar[str]
    #: One conversation per record (fine-tuning JSONL): several conversations can be written.
    multi: ClassVar[bool] = False
    #: One message to bytes (``b""`` while the encoder holds it).
    message: Callable[[Message], bytes]
    #: ``message`` again, for a message whose integer past 64 bits made it raise orjson's
    #: error: set by an encoder whose ``message`` is orjson's own ``dumps``; None when
    #: ``message`` writes such integers itself (the error is then another, to report).
    again: Callable[[Message], bytes] | None = None

    def refused(self, message: Message, error: orjson.JSONEncodeError) -> bytes:
        """``message``, which :attr:`message` refused with ``error``, written with
        :attr:`again` (an integer past 64 bits); ``error`` raised when there is none."""
        if self.again is None:
            raise error
        return self.again(message)

    def start(self) -> bytes:
        return b""

    def begin(self, extra: Mapping[str, Any]) -> bytes:
        return b""

    def end(self) -> bytes:
        return b""

    def finish(self) -> bytes:
        return b""


class JsonlEncoder(Encoder):
    """Chat JSONL: one message per line."""

    name = "jsonl"

    def __init__(self) -> None:
        self.message = functools.partial(orjson.dumps, option=_LINE)
        self.again = functools.partial(dumps, option=_LINE)


# -- JSON documents ---------------------------------------------------------------------------------

#: How the records of a JSON output are laid out: a JSON array, the list under one key of a
#: JSON object that also holds the conversation's other keys (a request body: ``model``,
#: ``tools``...; a hermes session snapshot), or JSONL, one record per line.
Container = Literal["array", "object", "lines"]


class _Layout:
    """A list of JSON records written in a :data:`Container`: the array and the object one
    record per line (``[`` or ``{...,"KEY":[`` first, ``\\n]`` last), JSONL one per line.

    An object holds the conversation's other keys, in their order: those known when it opens
    go before the list, those that arrive while it is written (a streamed document's keys
    that follow its list) after it. ``values`` given to :meth:`open` are written in place of
    the key of that name (a hoisted system prompt, repaired), or first when there is none;
    ``skip`` keys are not written (a key whose value a record now holds). Keys a reader read
    from inside a nested object (``request.body.model``) cannot be put back where they
    were: an object refuses them.
    """

    def __init__(self, container: Container, key: str, skip: tuple[str, ...] = ()) -> None:
        if container not in ("array", "object", "lines"):
            raise UsageError(f"container must be 'array', 'object' or 'lines', not {container!r}")
        self.container = container
        self.key = key
        self.opened = False
        self._skip = frozenset((key, *skip))
        self._extra: Mapping[str, Any] = {}
        self._values: dict[str, Any] = {}
        self._placed: set[str] = set()  # values written in place of their key
        self._written: set[str] = set()
        self._separator = b"\n"  # before the first record; ",\n" before each of the others

    def open(self, values: dict[str, Any], extra: Mapping[str, Any]) -> bytes:
        self.opened = True
        if self.container == "lines":
            return b""
        if self.container == "array":
            return b"["
        self._extra, self._values = extra, values
        pairs = [_pair(k, v) for k, v in values.items() if k not in extra]
        self._placed.update(k for k in values if k not in extra)
        pairs += self._pairs()
        pairs.append(dumps(self.key) + b":[")
        return b"{" + b",".join(pairs)

    def record(self, value: Any) -> bytes:
        option = _LINE if self.container == "lines" else 0
        try:
            data = orjson.dumps(value, option=option)
        except orjson.JSONEncodeError:  # an integer past 64 bits (see .._json), or its error again
            data = dumps(value, option)
        if self.container == "lines":
            return data
        data = self._separator + data
        self._separator = b",\n"
        return data

    def empty(self) -> bytes:
        """The whole output of a run that had no conversation at all (an empty input)."""
        return b"" if self.opened else self.open({}, {}) + self.close()

    def close(self) -> bytes:
        if self.container == "lines":
            return b""
        if self.container == "array":
            return b"]\n" if self._separator == b"\n" else b"\n]\n"
        # An object's list always ends on a line of its own: an empty one on one line
        # ({"messages":[]}) would read back as a JSONL record.
        return b"\n]" + b"".join(b"," + pair for pair in self._pairs()) + b"}\n"

    def _pairs(self) -> list[bytes]:
        pairs = []
        for key, value in list(self._extra.items()):
            if key in self._values:
                if key not in self._placed:
                    self._placed.add(key)
                    pairs.append(_pair(key, self._values[key]))
                continue
            if key in self._skip or key in self._written:
                continue
            if "." in key:
                raise InputError(
                    f"the records of this document are nested (its key {key!r}); it cannot be written "
                    "back in its own shape",
                    hint="Write the records alone (a JSON array) or to chat JSONL",
                )
            self._written.add(key)
            pairs.append(_pair(key, value))
        return pairs


def _pair(key: str, value: Any) -> bytes:
    return dumps(key) + b":" + dumps(value)


class JsonArrayEncoder(Encoder):
    """One JSON array of chat messages, one per line: ``[``, then ``\\n`` + message and
    ``,\\n`` + message..., then ``\\n]`` (``[]`` when empty).

    ``container="object"`` writes the conversation's other keys around the array, as
    ``{..., "messages": [...], ...}``: a request body or a hermes session snapshot written
    back as it was. A snapshot's ``system_prompt``, which the reader made the first message,
    goes back to its key.
    """

    name = "json"

    def __init__(self, *, container: Container = "array") -> None:
        if container == "lines":
            raise UsageError("chat messages one per line are --to jsonl")
        self._layout = _Layout(container, "messages")
        self._extra: Mapping[str, Any] = {}
        self._values: dict[str, Any] = {}
        self.message = self._layout.record if container == "array" else self._message

    def begin(self, extra: Mapping[str, Any]) -> bytes:
        if self._layout.container == "array":
            return self._layout.open({}, extra)
        self._extra = extra  # the object opens at the first message (see _message)
        return b""

    def _message(self, message: Message) -> bytes:
        if self._layout.opened:
            return self._layout.record(message)
        prompt = self._extra.get("system_prompt")
        if message.get("role") == "system" and isinstance(prompt, str) and prompt and not self._values:
            # the snapshot's system_prompt, which the reader made the first message; the object
            # opens at the next one (the snapshot's keys before its messages are known then)
            self._values = {"system_prompt": message.get("content")}
            return b""
        return self._layout.open(self._values, self._extra) + self._layout.record(message)

    def end(self) -> bytes:
        opened = b"" if self._layout.opened else self._layout.open(self._values, self._extra)
        return opened + self._layout.close()

    def finish(self) -> bytes:
        return self._layout.empty()


class FinetuneEncoder(Encoder):
    """OpenAI fine-tuning JSONL: one conversation per line, ``{"messages": [...], **extra}``.

    Written as it comes, not held: ``begin`` opens the line, each message follows it, and
    ``end`` closes the list and writes the conversation's other keys (known at ``begin``)
    and the newline. The bytes are those of one ``orjson.dumps`` of the whole record
    (:func:`encode_conversation`), and what is held is one message: a conversation of any
    length converts in bounded memory (the line it makes is as long as it is)."""

    name = "finetune"
    multi = True

    def __init__(self) -> None:
        self._tail = b"}\n"
        self._separator = b""
        self.message = self._message

    def begin(self, extra: Mapping[str, Any]) -> bytes:
        # The other keys are written now (an unwritable one fails here, not at the end).
        self._tail = b"".join([b"," + _pair(k, v) for k, v in extra.items() if k != "messages"]) + b"}\n"
        self._separator = b""
        return b'{"messages":['

    def _message(self, message: Message) -> bytes:
        try:
            data = orjson.dumps(message)
        except orjson.JSONEncodeError:  # an integer past 64 bits (see .._json), or its error again
            data = dumps(message)
        data = self._separator + data
        self._separator = b","
        return data

    def end(self) -> bytes:
        return b"]" + self._tail


# -- Responses input items and Anthropic Messages ---------------------------------------------------

#: The id the OpenAI Agents SDK gives an item that has none (``FAKE_RESPONSES_ID`` in
#: ``agents.models.fake_id``; the SDK removes it before any request to OpenAI). An assistant
#: message item needs an id for the SDK to keep its text and its calls in one turn.
PLACEHOLDER_ITEM_ID = "__fake_id__"

# Chat-only keys of a message (vendor fields of Chat Completions and hermes): neither a
# Responses item nor an Anthropic message has a place for them, so neither writer writes them.
_CHAT_ONLY = frozenset({
    "name", "finish_reason", "reasoning", "reasoning_content", "reasoning_details", "function_call",
    "audio", "annotations", "prefix", "partial", "tool_call_id", "thinking_blocks",
})
# Keys the readers of one format put on a Chat message or call; the other format leaves them out.
_RESPONSES_ONLY = frozenset({
    "reasoning_items", "codex_reasoning_items", "codex_message_items", "content_parts", "refusal",
    "response_item_id", "item_type", "call_id", "status", "phase", "namespace", "id",
})
_ANTHROPIC_ONLY = frozenset({"is_error", "cache_control", "caller"})
# The call keys every writer reads itself.
_CALL_KEYS = frozenset({"id", "type", "function", "index"})
_TEXT_TYPES = frozenset({"text", "input_text", "output_text"})


def _source(record: Mapping[str, Any]) -> Mapping[str, Any]:
    """The fields a reader kept aside for the writer of its format (``source_fields``: a
    Responses item's ``id``, ``status``, ``phase``; a ``tool_result``'s ``is_error``...)."""
    source = record.get(SOURCE_KEY)
    return source if isinstance(source, Mapping) else {}


def _with_source(record: Mapping[str, Any]) -> Mapping[str, Any]:
    """``record`` with its ``source_fields`` spread back among its keys (its own keys win):
    what the writers read their extra keys from."""
    source = record.get(SOURCE_KEY)
    if SOURCE_KEY not in record:
        return record
    merged = {**source, **record} if isinstance(source, Mapping) else dict(record)
    del merged[SOURCE_KEY]
    return merged


def _text(part: Any) -> str | None:
    """The text of a Chat text part (any of the three spellings), else None."""
    if isinstance(part, str):
        return part
    if isinstance(part, Mapping) and part.get("type") in _TEXT_TYPES and isinstance(part.get("text"), str):
        return str(part["text"])
    return None


def _image_url(part: Any) -> tuple[str, Any] | None:
    """``(url, detail)`` of a Chat ``image_url`` part, else None."""
    if not isinstance(part, Mapping) or part.get("type") != "image_url":
        return None
    image = part.get("image_url")
    if isinstance(image, str):
        return image, None
    if isinstance(image, Mapping) and isinstance(image.get("url"), str):
        return image["url"], image.get("detail")
    return None


def _arguments(call: Mapping[str, Any]) -> tuple[Any, Any]:
    function = call.get("function")
    if not isinstance(function, Mapping):
        return None, None
    return function.get("name"), function.get("arguments")


class ResponsesEncoder(Encoder):
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

    def __init__(self, *, container: Container = "array") -> None:
        self._layout = _Layout(container, "input")
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
                self._kinds[call.get("id")] = call.get("item_type")
        return items

    def _output(self, message: Message) -> dict[str, Any]:
        call_id = message.get("tool_call_id")
        kind = "custom_tool_call_output" if self._kinds.get(call_id) == "custom_tool_call" else "function_call_output"
        item: dict[str, Any] = {"type": kind, "call_id": call_id, "output": _input_content(message.get("content"))}
        for key, value in _with_source(message).items():
            if key == "response_item_id":
                item["id"] = value
            elif key not in ("role", "content") and key not in _CHAT_ONLY and key not in _ANTHROPIC_ONLY:
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
        text = _text(part)
        image = _image_url(part)
        if text is not None:
            extra = {k: v for k, v in part.items() if k not in ("type", "text")} if isinstance(part, Mapping) else {}
            parts.append({"type": "input_text", "text": text, **extra})
        elif image is not None:
            url, detail = image
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
        if len(parts) == 1 and _plain_text(parts[0], "input_text"):
            return parts[0]["text"]
    return parts


def _plain_text(part: Any, kind: str) -> bool:
    """A text part of nothing but its type and text (what a reader collapses to a string)."""
    return type(part) is dict and len(part) == 2 and part.get("type") == kind and isinstance(part.get("text"), str)


def _input_message(message: Message) -> dict[str, Any]:
    extra = {k: v for k, v in _with_source(message).items() if k not in ("role", "content") and k not in _CHAT_ONLY and k not in _ANTHROPIC_ONLY}
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
        text = _text(part)
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
        k: v for k, v in _with_source(message).items()
        if k not in ("role", "content", "tool_calls", "refusal", "content_parts", "reasoning_items", "codex_reasoning_items", "codex_message_items")
        and k not in _CHAT_ONLY and k not in _ANTHROPIC_ONLY
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
    name, arguments = _arguments(call)
    if not isinstance(arguments, str):
        arguments = "{}" if arguments is None else dumps(arguments).decode()
    kind = call.get("item_type")
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
        elif key not in _CALL_KEYS and key != "item_type" and key != SOURCE_KEY and key not in _ANTHROPIC_ONLY:
            item.setdefault(key, value)
    for key, value in _source(call).items():
        if key == "id":
            item["id"] = value  # the item's own id (the call's id is its call_id)
        elif key not in _ANTHROPIC_ONLY:
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


class AnthropicEncoder(Encoder):
    """Anthropic Messages: a request ``{"system", ...the conversation's other keys,
    "messages": [...]}`` (:data:`Container` ``"object"``, the default), or the ``messages``
    list alone (``"array"``, ``"lines"``: a system message is then written in the list).

    * Leading system (and developer) messages become the top-level ``system``: one string,
      or text blocks when there are several or one has more than its text (one plain text
      block is its string, as the reader gives it back). They are held until
      the first other message, at most :data:`~normalizer.profiles._stage.MAX_LEADING_SYSTEMS`
      of them (the profile stage's limit): the one past it is refused, a
      :class:`~normalizer.LimitExceeded` naming its index. A later one stays a
      ``{"role": "system"}`` message where it was (newer Claude models accept one after a
      user turn; ``--profile anthropic`` turns it into user text for the others).
    * An assistant message is one message of blocks: its ``thinking_blocks`` whole and first
      (written byte for byte as read, signatures included; blocks the Agents SDK kept in a
      reasoning item's ``provider_data.thinking_blocks`` too), then the text, then one
      ``tool_use`` per call (``input`` is the decoded arguments). ``reasoning_content``
      without thinking blocks is not written: Anthropic takes only signed thinking.
    * Tool messages become ``tool_result`` blocks (``is_error`` kept) of the user message
      right after the ``tool_use``; a user message that follows them joins that message,
      after the results.
    * Consecutive messages of one role are one message (blocks in order; blank text is
      left out, as Anthropic refuses empty text blocks), except an assistant message with
      thinking blocks: thinking is never merged into another turn.

    Keys with no place in an Anthropic message (``name``, Responses item ids...) are not
    written. An assistant message with nothing to send is left out.
    """

    name = "anthropic"

    def __init__(self, *, container: Container = "object") -> None:
        self._layout = _Layout(container, "messages", skip=("system",))
        self._extra: Mapping[str, Any] = {}
        self._system: list[Any] = []  # leading system contents (object: hoisted when it opens)
        self._skipped = 0  # assistant messages left out (before it opens: for an error's index)
        self._pending: dict[str, Any] | None = None  # the message the next one may join
        self._thinking = False  # the pending message has thinking blocks
        self._server_calls: set[Any] = set()  # ids of the calls Anthropic ran (server tools)
        self.message = self._message

    def begin(self, extra: Mapping[str, Any]) -> bytes:
        self._extra = extra
        return b""

    def end(self) -> bytes:
        return self._flush() + self._open() + self._layout.close()

    def finish(self) -> bytes:
        return self._layout.empty()

    def _open(self) -> bytes:
        if self._layout.opened:
            return b""
        system = _system_value(self._system)
        self._system = []  # written: not held for the rest of the conversation
        return self._layout.open({"system": system} if system is not None else {}, self._extra)

    def _message(self, message: Message) -> bytes:
        role = message.get("role")
        if role in ("system", "developer"):
            content = _blocks_or_text(message.get("content"))
            if self._layout.container == "object" and not self._layout.opened and self._pending is None:
                held = self._system
                limit = _stage.MAX_LEADING_SYSTEMS
                if len(held) >= limit:
                    # Every message before it was held or left out: its index is theirs counted.
                    raise LimitExceeded(
                        f"more than {limit} leading system messages are held to write them as the "
                        "request's 'system'", limit="MAX_LEADING_SYSTEMS", value=limit,
                        index=len(held) + self._skipped,
                        hint="no real history has that many; is the input a history?",
                    )
                held.append(content)
                return b""
            return self._flush() + self._write({"role": "system", "content": content})
        if role == "assistant":
            thinking = _thinking_blocks(message)
            uses = _tool_uses(message)
            self._server_calls = {b["id"] for b in uses if b["type"] != "tool_use"}
            blocks = [*thinking, *_content_blocks(message.get("content")), *uses]
            if not blocks:
                self._skipped += 1
                return b""  # nothing to send
            return self._join("assistant", blocks, bool(thinking))
        if role == "tool" and message.get("tool_call_id") in self._server_calls:
            # A server tool's result (web_search_tool_result...) is the assistant's own block,
            # right after its server_tool_use, as the reader found it.
            source = _source(message)
            result = {"type": source.get("type"), "tool_use_id": message.get("tool_call_id"),
                      "content": source["content"] if "content" in source else message.get("content"),
                      **{k: v for k, v in source.items() if k not in ("type", "content")}}
            return self._join("assistant", [result], False)
        if role == "tool":
            block: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": message.get("tool_call_id"),
                "content": _blocks_or_text(message.get("content")),
            }
            source = _source(message)
            for key in ("is_error", "cache_control"):
                if key in message:
                    block[key] = message[key]
                elif key in source:
                    block[key] = source[key]
            return self._join("user", [block], False)
        return self._join("user", _blocks_or_text(message.get("content")), False)

    def _join(self, role: str, content: Any, thinking: bool) -> bytes:
        pending = self._pending
        if pending is not None and pending["role"] == role and not thinking:
            pending["content"] = _as_blocks(pending["content"]) + _as_blocks(content)
            return b""
        out = self._flush()
        self._pending, self._thinking = {"role": role, "content": content}, thinking
        return out

    def _flush(self) -> bytes:
        pending, self._pending = self._pending, None
        return self._write(pending) if pending is not None else b""

    def _write(self, message: dict[str, Any]) -> bytes:
        return self._open() + self._layout.record(message)


def _as_blocks(content: Any) -> list[Any]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content.strip() else []
    return list(content) if isinstance(content, list) else []


def _blocks_or_text(content: Any) -> Any:
    """A string as it is; parts as Anthropic blocks (blank text left out), and one plain text
    block as its string: the Anthropic reader collapses it so (``_common.as_text``), and the
    writer's output is a fixed point of its reader, repair and writer."""
    if isinstance(content, str):
        return content
    if content is None:
        return ""
    return _one_text(_content_blocks(content))


def _one_text(blocks: list[Any]) -> Any:
    return blocks[0]["text"] if len(blocks) == 1 and _plain_text(blocks[0], "text") else blocks


def _content_blocks(content: Any) -> list[Any]:
    """Chat content as Anthropic blocks: text blocks (blank ones left out), image blocks
    (a ``data:`` URL as base64), other parts as they are."""
    blocks: list[Any] = []
    for part in [content] if isinstance(content, str) else content if isinstance(content, list) else ():
        text = _text(part)
        image = _image_url(part)
        if text is not None:
            if text.strip():
                extra = {k: v for k, v in part.items() if k in ("cache_control", "citations")} if isinstance(part, Mapping) else {}
                blocks.append({"type": "text", "text": text, **extra})
        elif image is not None:
            blocks.append({"type": "image", "source": _image_source(image[0])})
        elif part is not None:
            blocks.append(part)
    return blocks


def _image_source(url: str) -> dict[str, Any]:
    if url.startswith("data:") and ";base64," in url:
        media_type, _, data = url[5:].partition(";base64,")
        return {"type": "base64", "media_type": media_type, "data": data}
    return {"type": "url", "url": url}


def _system_value(contents: list[Any]) -> Any:
    """The request's ``system``: a string, or blocks when there are several or one with more
    than its text (``cache_control``). One plain text block is its string, as the reader
    gives it back: written as a list, a second repair rewrote it (saying 'no repairs')."""
    if len(contents) == 1 and isinstance(contents[0], str):
        return contents[0] if contents[0] else None
    blocks = [block for content in contents for block in _as_blocks(content)]
    return _one_text(blocks) if blocks else None


def _thinking_blocks(message: Message) -> list[Any]:
    blocks = message.get("thinking_blocks")
    if isinstance(blocks, list) and blocks:
        return blocks
    found: list[Any] = []  # the Agents SDK keeps Anthropic blocks in a reasoning item's provider_data
    for item in message.get("reasoning_items") or ():
        provider = item.get("provider_data") if isinstance(item, Mapping) else None
        kept = provider.get("thinking_blocks") if isinstance(provider, Mapping) else None
        if isinstance(kept, list):
            found.extend(kept)
    return found


def _tool_uses(message: Message) -> list[dict[str, Any]]:
    blocks = []
    for call in message.get("tool_calls") or ():
        if not isinstance(call, Mapping):
            continue
        name, arguments = _arguments(call)
        if isinstance(arguments, str):
            try:
                value = loads(arguments) if arguments.strip() else {}  # (integers as they were)
            except JSONDecodeError:
                value = None
        else:
            value = {} if arguments is None else arguments
        if not isinstance(value, dict):
            raise InvalidMessage(
                f"call {call.get('id')!r}: its arguments are not a JSON object, and an Anthropic tool_use input must be one",
                hint="Repair the arguments, or write another format",
            )
        # A server tool (run by Anthropic, item_type from the reader) is written back as one.
        kind = "server_tool_use" if call.get("item_type") == "server_tool_use" else "tool_use"
        block: dict[str, Any] = {"type": kind, "id": call.get("id"), "name": name, "input": value}
        for key, extra in _with_source(call).items():
            if key not in _CALL_KEYS and key not in _RESPONSES_ONLY:
                block.setdefault(key, extra)
        blocks.append(block)
    return blocks


#: Output format name -> encoder class (a new encoder per output).
ENCODERS: dict[str, type[Encoder]] = {
    JsonlEncoder.name: JsonlEncoder,
    JsonArrayEncoder.name: JsonArrayEncoder,
    FinetuneEncoder.name: FinetuneEncoder,
    ResponsesEncoder.name: ResponsesEncoder,
    AnthropicEncoder.name: AnthropicEncoder,
}


def encode_conversation(messages: Iterable[Message], extra: Mapping[str, Any] | None = None) -> bytes:
    """One fine-tuning line: ``{"messages": [...], **extra}`` (other keys as they were)."""
    record: dict[str, Any] = {"messages": list(messages)}
    if extra:
        for key, value in extra.items():
            if key != "messages":
                record[key] = value
    return dumps(record, option=_LINE)


def unwritable(exc: Exception, index: int) -> InvalidMessage:
    """orjson's refusal of item ``index`` (a message, or a conversation) as an input error."""
    return InvalidMessage(
        f"cannot be written as JSON ({exc})", index=index,
        hint="a string holds a lone surrogate, a value is nested too deeply, or an integer has more than "
        f"{MAX_INT_DIGITS:,} digits; fix or drop it before writing",
    )
