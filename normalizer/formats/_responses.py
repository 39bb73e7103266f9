"""OpenAI Responses API input items -> chat messages (formats.md §4.1).

A model turn is stored as several items (``reasoning``, an assistant ``message``, one
``function_call`` per call) with nothing linking them but position. Every assistant-side
item between two non-assistant items belongs to one assistant message -- also when the
message item's text is empty, which must not become a second assistant message. Such a
turn, like a run of bare input parts (below), holds at most ``max_record_bytes`` of its
items' JSON: the item that would take it past that is refused with
:class:`~normalizer.LimitExceeded`.

Reasoning: the summary text (or, with none, the reasoning text itself, parts or a plain
string) becomes ``reasoning_content``; the whole item (with its ``encrypted_content``) is
kept in ``reasoning_items``, so it can be replayed to the Responses API and is never dropped.
(Not hermes' ``codex_reasoning_items``: the core treats that key as the mark of an opaque
interim turn, never merged or edited, and a converted turn is not one.)

An item's fields that have no Chat equivalent (its ``id``, ``status``, ``phase``,
``provider_data``, ``namespace``...) are kept verbatim under ``source_fields`` on the message
or call made from it (``_common.SOURCE_KEY``).

Shapes seen in the wild, and what becomes of them:

* a request body's top-level ``instructions``: the leading system message (:meth:`meta`);
* bare ``input_text`` / ``input_image`` items (content parts given as items): consecutive
  ones are one user message (``group_input_parts``);
* a ``function_call`` part inside an assistant message's content: one of the turn's calls
  (``lift_call_part``);
* a ``function_call`` / ``function_call_output`` without ``call_id``: the call without an
  id and the output without a ``tool_call_id``, which the core pairs by position and
  records (``assign_call_id``, ``assign_result_id``), as for chat input;
* a ``function_call`` without ``arguments`` (Codex: ``encrypted_function_args``): ``"{}"``,
  recorded (``missing_arguments``);
* Codex's ``agent_message`` (another agent's message to this one): a user message
  (``agent_message_as_user``); with no readable text (encrypted), left out, recorded whole.
"""

from __future__ import annotations

from typing import Any, Callable, Final

import orjson

from .._content import REASONING_ITEMS_KEY
from .._errors import LimitExceeded
from .._report import Report
from ._common import (
    SOURCE_KEY,
    Turn,
    as_text,
    count,
    describe,
    dumps,
    invalid,
    merge_source,
    note_extra,
    string_id,
    text_parts,
    with_source,
)
from ._format import Claim, Clue, DocumentKeys, Evidence, Format, Output
from ._records import DEFAULT_MAX_RECORD_BYTES
from ._responses_writer import ResponsesWriter

__all__ = ["ResponsesConverter", "REASONING_KEY", "guess", "FORMAT"]

#: Where the converter keeps whole reasoning items on the assistant message.
REASONING_KEY: Final = REASONING_ITEMS_KEY

_ROLES = {"user", "assistant", "system", "developer"}

# Items that run on the provider's side (or are harness-only) and have no Chat equivalent.
# They are recorded whole in the report and left out.
_HOSTED = {
    "web_search_call", "image_generation_call", "file_search_call", "computer_call",
    "computer_call_output", "code_interpreter_call", "tool_search_call", "tool_search_output",
    "mcp_call", "mcp_list_tools", "mcp_approval_request", "mcp_approval_response",
    "ghost_snapshot", "compaction", "compaction_summary", "item_reference",
    # Codex's newer items: an opaque server-side compaction, tools added mid-conversation,
    # reasoning settings and compaction requests (controls, not history).
    "context_compaction", "additional_tools", "configuration_update", "compaction_trigger",
}

# Content parts given as items of their own (some clients send a user's words this way).
_BARE_PARTS = {"input_text", "input_image", "input_file", "input_audio"}

# The fields of a message item the conversion consumes, or that have a Chat meaning and stay
# on the message (``name``); any other is a source field.
_MESSAGE_FIELDS = frozenset({"type", "role", "content", "name"})
_OUTPUT_FIELDS = frozenset({"type", "call_id", "output", "name"})

# Fields of a call item the conversion consumes (``id`` too, when it became the call's id).
_CALL_FIELDS = frozenset({"type", "call_id", "name", "arguments", "input", "action"})
_CALL_FIELDS_AND_ID = _CALL_FIELDS | {"id"}


class ResponsesConverter:
    """Responses items in, chat messages out. One pending assistant turn at most (or one
    pending group of bare input parts).

    Args:
        report: where left-out items and conversion notes are recorded.
        max_record_bytes: the most a message assembled from several items holds, in bytes
            of those items' JSON: the pending assistant turn (its reasoning, message and
            call items), or a run of bare input parts. The item that would take either past this is refused with
            :class:`LimitExceeded` (``limit="max_record_bytes"``). The readers pass their
            own ``max_record_bytes``: the message is one record, built from several items.
    """

    name = "responses"
    multi = False

    def __init__(self, report: Report | None = None, *, max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES) -> None:
        self.report = report
        self.max_record_bytes = max_record_bytes
        self._turn: Turn | None = None
        self._turn_bytes = 0  # what the pending turn holds (max_record_bytes)
        self._turn_line: int | None = None
        # Bare input parts waiting to be one user message: converted as they come (the items
        # themselves let go), their item types (for the record), what they hold.
        self._bare: list[Any] = []
        self._bare_kinds: set[str] = set()
        self._bare_bytes = 0
        self._bare_line: int | None = None
        self._started = False  # an item was read (a later 'instructions' cannot go first)
        #: Items of no type this converter knows (the reader's "was anything recognised?").
        self.unrecognised = 0

    # -- public surface -------------------------------------------------------------------

    def meta(self, key: str, value: Any, *, line: int | None = None) -> list[dict[str, Any]]:
        """A request body's other keys: ``instructions`` is the leading system message."""
        if key != "instructions" or value is None or value == "":
            return []
        if self._started:
            note_extra(self.report, "drop_late_system", "top-level 'instructions' came after the input items already "
                       "read (from a stream, the items are held only up to max_record_bytes: read the file itself to "
                       "place it first)", line=line, dropped=value)
            return []
        if isinstance(value, str):
            return [{"role": "system", "content": value}]
        if isinstance(value, list):  # instructions given as input items (a developer message...)
            out: list[dict[str, Any]] = []
            for item in value:
                out += self.feed(item, line=line)
            out += self.flush()
            self._started = False
            return out
        raise invalid(f"'instructions' is {describe(value)}, expected a string or a list of items", line=line,
                      field="instructions")

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
        self._started = True
        handler = _HANDLERS.get(kind)
        if handler is None:
            if kind in _BARE_PARTS:
                held = self._bare_bytes + _json_size(record)
                if held > self.max_record_bytes:
                    raise self._too_big("the user message made of bare input part items", line,
                                        self._bare_line if self._bare else line)
                out = self._end_turn()
                if not self._bare:
                    self._bare_line = line
                # One part, converted alone: text_parts converts each part on its own (and
                # never refuses a dict), so the message is the one the whole run would make.
                self._bare += text_parts([record], line=line, where="input part")
                self._bare_kinds.add(kind)
                self._bare_bytes = held
                return out
            if kind not in _HOSTED and kind.endswith("_output") and "call_id" in record:
                handler = ResponsesConverter._output
        if handler is not None:
            out = handler(self, record, line)  # raises before any change when the item is bad
        else:
            out = self._leave_out(kind, record, line)
        if self._bare:  # the bare parts before this item are one user message, first
            out.insert(0, self._bare_message())
        return out

    def close(self) -> list[dict[str, Any]]:
        return self.flush()

    def flush(self) -> list[dict[str, Any]]:
        """End the pending assistant turn (a turn boundary the caller knows about)."""
        out = [self._bare_message()] if self._bare else []
        return out + self._end_turn()

    # -- items ----------------------------------------------------------------------------

    def _end_turn(self) -> list[dict[str, Any]]:
        turn, self._turn = self._turn, None
        self._turn_bytes = 0
        return turn.flush() if turn is not None else []

    def _pending(self, item: dict[str, Any], line: int | None) -> Turn:
        """The pending turn, ``item`` counted in what it holds (called once the item is known
        to be valid, before it changes anything: past ``max_record_bytes`` it is refused)."""
        held = self._turn_bytes + _json_size(item)
        if held > self.max_record_bytes:
            raise self._too_big("the assistant turn made of reasoning, message and call items", line,
                                line if self._turn is None else self._turn_line)
        if self._turn is None:
            self._turn = Turn()
            self._turn_line = line
        self._turn_bytes = held
        return self._turn

    def _too_big(self, what: str, line: int | None, start: int | None) -> LimitExceeded:
        limit = self.max_record_bytes
        began = f" (begun on line {start})" if start is not None and start != line else ""
        return LimitExceeded(
            f"{what}{began} would hold more than {limit} bytes of JSON",
            limit="max_record_bytes",
            value=limit,
            line=line,
            hint="Raise max_record_bytes if one message of this history really is that large",
        )

    def _leave_out(self, kind: str, record: dict[str, Any], line: int | None) -> list[dict[str, Any]]:
        if kind in _HOSTED:
            note_extra(self.report, f"drop_{kind}", f"{kind} item has no Chat equivalent; left out", line=line,
                       dropped=record)
        else:
            self.unrecognised += 1
            note_extra(self.report, "drop_unknown_item", f"unknown Responses item type {kind!r}; left out", line=line,
                       dropped=record)
        return []

    def _bare_message(self) -> dict[str, Any]:
        parts, self._bare = self._bare, []
        kinds, self._bare_kinds = self._bare_kinds, set()
        self._bare_bytes = 0
        if self.report is not None:
            self.report.add("group_input_parts", f"{len(parts)} bare input part item(s) ({', '.join(sorted(kinds))}) "
                            "became one user message", line=self._bare_line)
        return {"role": "user", "content": as_text(parts)}

    def _message(self, item: dict[str, Any], line: int | None) -> list[dict[str, Any]]:
        role = item.get("role")
        if not isinstance(role, str) or role not in _ROLES:
            raise invalid(f"a Responses 'message' item has role {describe(role)}", line=line, field="role", hint=f"Expected one of {', '.join(sorted(_ROLES))}")
        content = item.get("content")
        source = {} if _MESSAGE_FIELDS.issuperset(item) else {k: v for k, v in item.items() if k not in _MESSAGE_FIELDS}
        if role == "assistant":
            texts: list[str] = []
            call_parts: list[dict[str, Any]] = []
            other: list[Any] = []
            refusal = _assistant_content(content, line, texts, call_parts, other)
            calls = [self._part_call(part, line) for part in call_parts]  # checked before any change
            turn = self._pending(item, line)
            turn.texts.extend(texts)
            if refusal is not None:
                turn.refusal = refusal if turn.refusal is None else turn.refusal + "\n\n" + refusal
            for call in calls:
                turn.calls.append(call)
                note_extra(self.report, "lift_call_part", f"a function_call part of an assistant message's content "
                           f"became its tool call {call.get('id')!r}", line=line, dropped=None)
            if other:
                turn.preserve("content_parts", other)
            if "name" in item:
                turn.extra.setdefault("name", item["name"])
            if source:
                merge_source(turn.source, source, self.report, line=line)
            return []
        if content is None or isinstance(content, str):
            msg: dict[str, Any] = {"role": role, "content": content if content is not None else ""}
        else:
            msg = {"role": role, "content": as_text(text_parts(content, line=line, where=f"{role} message content"))}
        if "name" in item:
            msg["name"] = item["name"]
        with_source(msg, source)
        # Flush only once the item is known to be valid: a rejected item changes nothing.
        out = self._end_turn()
        out.append(msg)
        return out

    def _agent_message(self, item: dict[str, Any], line: int | None) -> list[dict[str, Any]]:
        # Codex: another agent's message to this one (author -> recipient), the model's input.
        content = item.get("content")
        if not isinstance(content, list):
            raise invalid(f"an 'agent_message' item has content {describe(content)}, expected a list", line=line,
                          field="content")
        texts = [p["text"] for p in content if isinstance(p, dict) and p.get("type") == "input_text"
                 and isinstance(p.get("text"), str)]
        if not any(t.strip() for t in texts):
            note_extra(self.report, "drop_agent_message", "agent_message item has no readable text (encrypted "
                       "content); left out", line=line, dropped=item)
            return []
        source = {k: v for k, v in item.items() if k != "content"}
        if len(texts) < len(content):  # encrypted parts beside the text: kept whole
            source["content"] = content
        count(self.report, "agent_message_as_user")
        out = self._end_turn()
        out.append(with_source({"role": "user", "content": "\n".join(texts)}, source))
        return out

    def _reasoning(self, item: dict[str, Any], line: int | None) -> list[dict[str, Any]]:
        turn = self._pending(item, line)
        turn.reasoning.append(_reasoning_text(item))
        turn.preserve(REASONING_KEY, item)
        return []

    def _function_call(self, item: dict[str, Any], line: int | None) -> list[dict[str, Any]]:
        call = self._part_call(item, line)  # before _pending(): a rejected item changes nothing
        self._pending(item, line).calls.append(call)
        return []

    def _part_call(self, item: dict[str, Any], line: int | None) -> dict[str, Any]:
        """The chat call of a ``function_call`` item (or content part)."""
        name = item.get("name")
        if not isinstance(name, str):
            raise invalid(f"a Responses 'function_call' item needs a string 'name', got {describe(name)}", line=line, field="name", hint="A function_call needs its function name")
        if "arguments" in item:
            args = item["arguments"]
            if not isinstance(args, str):
                args = dumps(args, line=line, what="function_call 'arguments'")
        else:
            args = "{}"
            why = " (they are encrypted: see its encrypted_function_args)" if item.get("encrypted_function_args") else ""
            note_extra(self.report, "missing_arguments", f"function_call {item.get('call_id')!r} has no "
                       f"'arguments'{why}; they became '{{}}'", line=line, dropped=None)
        return _call(item, name, args, line)

    def _custom_call(self, item: dict[str, Any], line: int | None) -> list[dict[str, Any]]:
        name = item.get("name")
        if not isinstance(name, str):
            raise invalid(f"a Responses 'custom_tool_call' item needs a string 'name', got {describe(name)}", line=line, field="name")
        # Free-form input (e.g. a raw "*** Begin Patch") is not JSON; wrap it so arguments
        # stay a JSON object string for every consumer (formats.md C8 / §1.4 step 4).
        call = _call(item, name, dumps({"input": item.get("input", "")}, line=line, what="custom_tool_call 'input'"), line)
        call.setdefault(SOURCE_KEY, {})["item_type"] = "custom_tool_call"  # (for its writer: chat has no such call)
        self._pending(item, line).calls.append(call)
        return []

    def _shell_call(self, item: dict[str, Any], line: int | None) -> list[dict[str, Any]]:
        call = _call(item, "local_shell", dumps(item.get("action", {}), line=line, what="local_shell_call 'action'"), line)
        call.setdefault(SOURCE_KEY, {})["item_type"] = "local_shell_call"
        self._pending(item, line).calls.append(call)
        return []

    def _output(self, item: dict[str, Any], line: int | None) -> list[dict[str, Any]]:
        call_id = string_id(item.get("call_id"), line=line, what=f"a Responses {item.get('type')!r} item's 'call_id'", field="call_id")
        msg: dict[str, Any] = {"role": "tool"}
        if call_id:
            msg["tool_call_id"] = call_id  # none: the core pairs it with the next unanswered call
        msg["content"] = _output_content(item.get("output"), line)
        if "name" in item:
            msg["name"] = item["name"]
        if not _OUTPUT_FIELDS.issuperset(item):
            with_source(msg, {k: v for k, v in item.items() if k not in _OUTPUT_FIELDS})
        out = self._end_turn()
        out.append(msg)
        return out


# Not _claude._json_size, which counts a held tool result's strings by their length so as
# not to copy a big tool output: the items held here are exactly their JSON's size, as the
# docstrings, the README and the tests' boundaries say, and one dump is the cheaper measure
# for them (their size is mostly in nested parts, which that one dumps too; 0.2-0.3 us an
# item against 0.4-0.6, a 55 MB file of turns read 4% faster). One measure for both would
# move the boundaries one side's tests pin; the copy is one item's, let go at once.
def _json_size(item: dict[str, Any]) -> int:
    """The size of an item's JSON, in bytes (an item given in memory that orjson cannot
    write, with a 65-bit integer or a value no JSON holds: the size of its repr)."""
    try:
        return len(orjson.dumps(item))
    except TypeError:  # orjson.JSONEncodeError
        pass
    try:
        return len(repr(item))
    except RecursionError:
        return 0


def _call(item: dict[str, Any], name: str, arguments: str, line: int | None) -> dict[str, Any]:
    kind = item.get("type")
    call_id = item.get("call_id")
    used = _CALL_FIELDS
    if type(call_id) is not str or not call_id:
        call_id = string_id(call_id, line=line, what=f"a Responses {kind!r} item's 'call_id'", field="call_id")
        if not call_id:
            # Older local shell calls carry only their item id; with neither, the call has no
            # id and the core gives it one (assign_call_id).
            call_id = string_id(item.get("id"), line=line, what=f"a Responses {kind!r} item's 'id'", field="id")
            used = _CALL_FIELDS_AND_ID
    call: dict[str, Any] = {"id": call_id} if call_id else {}
    call["type"] = "function"
    call["function"] = {"name": name, "arguments": arguments}
    if not used.issuperset(item):  # fields beyond those consumed: kept
        with_source(call, {k: v for k, v in item.items() if k not in used})
    return call


def _assistant_content(content: Any, line: int | None, texts: list[str], calls: list[dict[str, Any]],
                       other: list[Any]) -> str | None:
    """An assistant message item's content, sorted into ``texts``, ``calls`` (its
    ``function_call`` parts) and ``other`` parts, given to fill (one item each, nothing
    built for the sorting itself); its refusal, or None."""
    if content is None:
        return None
    if isinstance(content, str):
        texts.append(content)
        return None
    refusal: str | None = None
    for part in text_parts(content, line=line, where="assistant message content"):
        kind = part.get("type")
        if kind == "text":
            texts.append(part["text"])
        elif kind == "refusal" and isinstance(part.get("refusal"), str):
            refusal = part["refusal"]
        elif kind == "function_call":
            calls.append(part)
        else:
            other.append(part)
    return refusal


def _reasoning_text(item: dict[str, Any]) -> str:
    summary = item.get("summary")
    texts = []
    if isinstance(summary, list):
        texts = [p.get("text", "") for p in summary if isinstance(p, dict) and isinstance(p.get("text"), str)]
    content = item.get("content")
    if not texts and isinstance(content, list):
        # No summary: fall back to the raw reasoning text parts (open-weight models).
        texts = [p.get("text", "") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)]
    elif not texts and isinstance(content, str):
        texts = [content]  # the reasoning text as a plain string (some servers write it so)
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
    "agent_message": ResponsesConverter._agent_message,
    "reasoning": ResponsesConverter._reasoning,
    "function_call": ResponsesConverter._function_call,
    "custom_tool_call": ResponsesConverter._custom_call,
    "local_shell_call": ResponsesConverter._shell_call,
    "function_call_output": ResponsesConverter._output,
    "custom_tool_call_output": ResponsesConverter._output,
    "local_shell_call_output": ResponsesConverter._output,
}


# -- the format -----------------------------------------------------------------------------------

_RESPONSES_ITEMS = {
    "message", "reasoning", "function_call", "function_call_output", "custom_tool_call",
    "custom_tool_call_output", "local_shell_call", "local_shell_call_output", "web_search_call",
    "item_reference", "compaction",
}
_RESPONSES_PARTS = {"input_text", "output_text", "input_image", "input_file", "refusal"}


def guess(record: dict[str, Any]) -> Clue | None:
    """An item of a Responses type; else a message with a role whose content holds a part
    only Responses has (less specific: Anthropic's blocks win over it, see :class:`Evidence`)."""
    kind = record.get("type")
    if isinstance(kind, str) and kind in _RESPONSES_ITEMS:
        return Clue(Evidence.ITEM_TYPE)
    content = record.get("content")
    if isinstance(record.get("role"), str) and isinstance(content, list):
        for part in content:
            if isinstance(part, dict):
                kind = part.get("type")
                if isinstance(kind, str) and kind in _RESPONSES_PARTS:
                    return Clue(Evidence.PARTS)
    return None


FORMAT: Format = Format(
    "responses", ResponsesConverter, guess,
    outputs=(Output("responses", 40, ResponsesWriter),), assembling=True, per_file=True,
    document=DocumentKeys(arrays=("input",), dumped=True, system_keys=("instructions",), claim=Claim.DOCUMENT,
                          body_keys=("input",)),
)
