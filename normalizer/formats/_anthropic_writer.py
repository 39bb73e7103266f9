"""The ``anthropic`` format's writer: chat messages in, Anthropic Messages out (sans-I/O).

One :class:`~._writing.FormatWriter` (``--to anthropic``, ``write_anthropic``); what every
writer shares is in ``_writing``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .._errors import InvalidMessage, LimitExceeded
from .._json import JSONDecodeError, loads
from ._writing import (
    CALL_KEYS,
    RESPONSES_ONLY,
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

__all__ = ["AnthropicWriter"]


def _max_leading_systems() -> int:
    """The profile stage's limit, read where it is checked: imported when a leading system
    message is held (the profiles are not loaded to read a file)."""
    from ..profiles._stage import max_leading_systems

    return max_leading_systems()


class AnthropicWriter(FormatWriter):
    """Anthropic Messages: a request ``{"system", ...the conversation's other keys,
    "messages": [...]}`` (:data:`Container` ``"object"``, the default), or the ``messages``
    list alone (``"array"``, ``"lines"``: a system message is then written in the list).

    * Leading system (and developer) messages become the top-level ``system``: one string,
      or text blocks when there are several or one has more than its text (one plain text
      block is its string, as the reader gives it back). They are held until
      the first other message, at most :data:`~normalizer.profiles._max_leading_systems()`
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
    restores_from = frozenset({"anthropic", "claude-code"})  # (a Claude Code session is Messages blocks)

    def __init__(self, *, container: Container = "object") -> None:
        self._layout = Layout(container, "messages", skip=("system",))
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
                limit = _max_leading_systems()
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
            source = source_of(message)
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
            source = source_of(message)
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
    return blocks[0]["text"] if len(blocks) == 1 and plain_text(blocks[0], "text") else blocks


def _content_blocks(content: Any) -> list[Any]:
    """Chat content as Anthropic blocks: text blocks (blank ones left out), image blocks
    (a ``data:`` URL as base64), other parts as they are."""
    blocks: list[Any] = []
    for part in [content] if isinstance(content, str) else content if isinstance(content, list) else ():
        text = text_of(part)
        image = image_url_of(part)
        if text is not None:
            if text.strip():
                extra = {k: v for k, v in part.items() if k in ("cache_control", "citations")} if isinstance(part, Mapping) else {}
                blocks.append({"type": "text", "text": text, **extra})
        elif image is not None:
            blocks.append({"type": "image", "source": _image_source(image.url)})
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
        function = function_of(call)
        name, arguments = function.get("name"), function.get("arguments")
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
        kind = "server_tool_use" if call_kind(call) == "server_tool_use" else "tool_use"
        block: dict[str, Any] = {"type": kind, "id": call.get("id"), "name": name, "input": value}
        for key, extra in with_source_fields(call).items():
            if key not in CALL_KEYS and key not in RESPONSES_ONLY:
                block.setdefault(key, extra)
        blocks.append(block)
    return blocks
