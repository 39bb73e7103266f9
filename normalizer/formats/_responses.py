"""OpenAI Responses API input items -> chat messages (formats.md §4.1).

A model turn is stored as several items (``reasoning``, an assistant ``message``, one
``function_call`` per call) with nothing linking them but position. Every assistant-side
item between two non-assistant items belongs to one assistant message -- also when the
message item's text is empty, which must not become a second assistant message.

Reasoning: the summary text becomes ``reasoning_content``; the whole item (with its
``encrypted_content``) is kept in ``reasoning_items``, so it can be replayed to the Responses
API and is never dropped. (Not hermes' ``codex_reasoning_items``: the core treats that key as
the mark of an opaque interim turn, never merged or edited, and a converted turn is not one.)
"""

from __future__ import annotations

from typing import Any, Callable

from .._report import Report
from ._common import Turn, as_text, describe, dumps, invalid, merge_extra, note_extra, same, string_id, text_parts

__all__ = ["ResponsesConverter", "REASONING_KEY"]

#: Where the converter keeps whole reasoning items on the assistant message.
REASONING_KEY = "reasoning_items"

_ROLES = {"user", "assistant", "system", "developer"}

# Items that run on the provider's side (or are harness-only) and have no Chat equivalent.
# They are recorded whole in the report and left out.
_HOSTED = {
    "web_search_call", "image_generation_call", "file_search_call", "computer_call",
    "computer_call_output", "code_interpreter_call", "tool_search_call", "tool_search_output",
    "mcp_call", "mcp_list_tools", "mcp_approval_request", "mcp_approval_response",
    "ghost_snapshot", "compaction", "compaction_summary", "item_reference",
}

_CALL_KEYS = {"type", "call_id", "name", "arguments", "input", "id", "action"}


class ResponsesConverter:
    """Responses items in, chat messages out. One pending assistant turn at most."""

    name = "responses"
    multi = False

    def __init__(self, report: Report | None = None) -> None:
        self.report = report
        self._turn: Turn | None = None

    # -- public surface -------------------------------------------------------------------

    def feed(self, record: Any, *, line: int | None = None) -> list[dict[str, Any]]:
        if not isinstance(record, dict):
            raise invalid(f"expected a Responses item object, got {describe(record)}", line=line)
        kind = record.get("type")
        if kind is None and "role" in record:
            kind = "message"  # the "easy" input message form: {"role", "content"}
        if not isinstance(kind, str):
            raise invalid(
                "Responses item has no 'type'",
                line=line,
                field="type",
                hint="Expected message, reasoning, function_call, function_call_output, ...",
            )
        handler = _HANDLERS.get(kind)
        if handler is not None:
            return handler(self, record, line)
        if kind not in _HOSTED and kind.endswith("_output") and "call_id" in record:
            return self._output(record, line)
        detail = (
            f"{kind} item has no Chat equivalent; left out"
            if kind in _HOSTED
            else f"unknown Responses item type {kind!r}; left out"
        )
        note_extra(self.report, f"drop_{kind}" if kind in _HOSTED else "drop_unknown_item", detail, line=line, dropped=record)
        return []

    def close(self) -> list[dict[str, Any]]:
        return self.flush()

    def flush(self) -> list[dict[str, Any]]:
        """End the pending assistant turn (a turn boundary the caller knows about)."""
        turn, self._turn = self._turn, None
        return turn.flush() if turn is not None else []

    # -- items ----------------------------------------------------------------------------

    def _pending(self) -> Turn:
        if self._turn is None:
            self._turn = Turn()
        return self._turn

    def _message(self, item: dict[str, Any], line: int | None) -> list[dict[str, Any]]:
        role = item.get("role")
        if not isinstance(role, str) or role not in _ROLES:
            raise invalid(f"a Responses 'message' item has role {describe(role)}", line=line, field="role", hint=f"Expected one of {', '.join(sorted(_ROLES))}")
        content = item.get("content")
        extra = {k: v for k, v in item.items() if k not in ("type", "role", "content")}
        if role == "assistant":
            texts, refusal, other = _assistant_content(content, line)
            turn = self._pending()
            turn.texts.extend(texts)
            if refusal is not None:
                turn.refusal = refusal if turn.refusal is None else turn.refusal + "\n\n" + refusal
            if other:
                turn.preserve("content_parts", other)
            self._merge_extra(turn, extra, line)
            return []
        if content is None or isinstance(content, str):
            msg: dict[str, Any] = {"role": role, "content": content if content is not None else ""}
        else:
            msg = {"role": role, "content": as_text(text_parts(content, line=line, where=f"{role} message content"))}
        msg.update(extra)
        # Flush only once the item is known to be valid: a rejected item changes nothing.
        out = self.flush()
        out.append(msg)
        return out

    def _merge_extra(self, turn: Turn, extra: dict[str, Any], line: int | None) -> None:
        for key, value in extra.items():
            if key in turn.extra and not same(turn.extra[key], value):
                # Two items of one turn disagree on a field (e.g. two message ids): keep the
                # first on the message, the other in the report.
                note_extra(self.report, "drop_conflicting_field", f"turn already has {key!r}; kept the first value", line=line, dropped={key: value})
            else:
                turn.extra[key] = value

    def _reasoning(self, item: dict[str, Any], line: int | None) -> list[dict[str, Any]]:
        turn = self._pending()
        turn.reasoning.append(_reasoning_text(item, line))
        turn.preserve(REASONING_KEY, item)
        return []

    def _function_call(self, item: dict[str, Any], line: int | None) -> list[dict[str, Any]]:
        name = item.get("name")
        if not isinstance(name, str):
            raise invalid(f"a Responses 'function_call' item needs a string 'name', got {describe(name)}", line=line, field="name", hint="A function_call needs its function name")
        args = item.get("arguments", "{}")
        if not isinstance(args, str):
            args = dumps(args, line=line, what="function_call 'arguments'")
        call = _call(item, name, args, line, self.report)  # before _pending(): a rejected item changes nothing
        self._pending().calls.append(call)
        return []

    def _custom_call(self, item: dict[str, Any], line: int | None) -> list[dict[str, Any]]:
        name = item.get("name")
        if not isinstance(name, str):
            raise invalid(f"a Responses 'custom_tool_call' item needs a string 'name', got {describe(name)}", line=line, field="name")
        # Free-form input (e.g. a raw "*** Begin Patch") is not JSON; wrap it so arguments
        # stay a JSON object string for every consumer (formats.md C8 / §1.4 step 4).
        call = _call(item, name, dumps({"input": item.get("input", "")}, line=line, what="custom_tool_call 'input'"), line, self.report)
        call["item_type"] = "custom_tool_call"
        self._pending().calls.append(call)
        return []

    def _shell_call(self, item: dict[str, Any], line: int | None) -> list[dict[str, Any]]:
        call = _call(item, "local_shell", dumps(item.get("action", {}), line=line, what="local_shell_call 'action'"), line, self.report)
        call["item_type"] = "local_shell_call"
        self._pending().calls.append(call)
        return []

    def _output(self, item: dict[str, Any], line: int | None) -> list[dict[str, Any]]:
        call_id = item.get("call_id", item.get("id"))
        if not isinstance(call_id, str):
            raise invalid(f"a Responses {item.get('type')!r} item needs a string 'call_id', got {describe(call_id)}", line=line, field="call_id", hint="An output must name the call it answers")
        msg: dict[str, Any] = {"role": "tool", "tool_call_id": call_id, "content": _output_content(item.get("output"), line)}
        merge_extra(msg, {("response_item_id" if key == "id" else key): value for key, value in item.items() if key not in ("type", "call_id", "output")}, self.report, line=line)
        out = self.flush()
        out.append(msg)
        return out


def _call(item: dict[str, Any], name: str, arguments: str, line: int | None, report: Report | None) -> dict[str, Any]:
    kind = item.get("type")
    call_id = string_id(item.get("call_id"), line=line, what=f"a Responses {kind!r} item's 'call_id'", field="call_id")
    if not call_id:
        call_id = string_id(item.get("id"), line=line, what=f"a Responses {kind!r} item's 'id'", field="id")
    call: dict[str, Any] = {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
    if "id" in item and item.get("call_id"):
        call["response_item_id"] = item["id"]  # the fc_... item id, as hermes keeps it
    return merge_extra(call, {k: v for k, v in item.items() if k not in _CALL_KEYS}, report, line=line)


def _assistant_content(content: Any, line: int | None) -> tuple[list[str], str | None, list[Any]]:
    """Texts, refusal and non-text parts of an assistant message item's content."""
    if content is None:
        return [], None, []
    if isinstance(content, str):
        return [content], None, []
    texts: list[str] = []
    refusal: str | None = None
    other: list[Any] = []
    for part in text_parts(content, line=line, where="assistant message content"):
        if part.get("type") == "text":
            texts.append(part["text"])
        elif part.get("type") == "refusal" and isinstance(part.get("refusal"), str):
            refusal = part["refusal"]
        else:
            other.append(part)
    return texts, refusal, other


def _reasoning_text(item: dict[str, Any], line: int | None) -> str:
    summary = item.get("summary")
    texts = []
    if isinstance(summary, list):
        texts = [p.get("text", "") for p in summary if isinstance(p, dict) and isinstance(p.get("text"), str)]
    if not texts and isinstance(item.get("content"), list):
        # No summary: fall back to the raw reasoning text parts (open-weight models).
        texts = [p.get("text", "") for p in item["content"] if isinstance(p, dict) and isinstance(p.get("text"), str)]
    return "\n\n".join(t for t in texts if t)


def _output_content(output: Any, line: int | None) -> Any:
    if isinstance(output, str):
        return output
    if output is None:
        return ""
    if isinstance(output, list):
        return as_text(text_parts(output, line=line, where="tool output"))
    return dumps(output, line=line, what="tool output")  # an object: keep it as JSON text, the only thing a tool message holds


_HANDLERS: dict[str, Callable[[ResponsesConverter, dict[str, Any], int | None], list[dict[str, Any]]]] = {
    "message": ResponsesConverter._message,
    "reasoning": ResponsesConverter._reasoning,
    "function_call": ResponsesConverter._function_call,
    "custom_tool_call": ResponsesConverter._custom_call,
    "local_shell_call": ResponsesConverter._shell_call,
    "function_call_output": ResponsesConverter._output,
    "custom_tool_call_output": ResponsesConverter._output,
    "local_shell_call_output": ResponsesConverter._output,
}
