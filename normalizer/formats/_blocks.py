"""Anthropic content blocks -> chat messages: what the Claude Code and Anthropic readers share.

Both formats store content as Anthropic blocks: ``text``, ``thinking``, ``tool_use`` in assistant
messages, ``tool_result`` in user messages. Conversion (§2.3):

* ``text`` -> ``content``; ``thinking`` -> ``reasoning_content``, and the block itself (with
  its ``signature``) is kept whole in ``thinking_blocks`` (LiteLLM's key) for replay to
  Anthropic; ``redacted_thinking`` is kept there too.
* ``tool_use`` -> ``tool_calls`` with ``arguments = json(input)``.
* ``tool_result`` -> one ``tool`` message each, in call order; its other fields
  (``is_error``...) are kept under ``source_fields``, as are a message's own (Cline's ``ts``,
  ``modelInfo``, ``metrics``) and a ``tool_use`` block's (``caller``).
* a server tool (``server_tool_use``, run by Anthropic, e.g. the advisor) and its result
  block (``advisor_tool_result``, ``web_search_tool_result``...: any ``*_tool_result`` with a
  ``tool_use_id``) -> a call (``item_type: "server_tool_use"``) and its tool message, whose
  content is the result's text (or its JSON); the result block's fields, its original
  content included, are kept under ``source_fields``.

"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

import orjson

from .._content import THINKING_BLOCKS_KEY
from .._errors import LimitExceeded
from .._report import Report
from ._common import (
    SOURCE_KEY,
    Turn,
    as_text,
    canonical,
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
from ._records import DEFAULT_MAX_RECORD_BYTES

__all__ = ["THINKING_KEY", "At", "BlockConverter", "EMPTY_TURN", "json_size", "message_size", "result_size", "value_size"]

THINKING_KEY: Final = THINKING_BLOCKS_KEY

@dataclass(slots=True)
class At:
    """Where a record is, kept for every turn and put into words only for the limit's error.
    (One per turn: slots, not frozen, as a frozen dataclass is built at twice a tuple's cost;
    never changed once made.)"""

    line: int | None  # None: not given
    fed: int  # records fed up to it (counted by a converter that can name a record with no line: _where)


def _server_text(raw: Any, line: int | None) -> str:
    """What a server tool's result says: its text (the advisor's advice), else its JSON."""
    if isinstance(raw, str):
        return raw
    if isinstance(raw, dict) and isinstance(raw.get("text"), str):
        return raw["text"]  # type: ignore[no-any-return]
    return dumps(raw, line=line, what="a server tool result's content")


# Cline's text results: "[read_file for 'a.py'] Result:" (then the result), or the text it
# gives a call it skipped, "Tool [write_to_file] was not executed because ...".

def _server_result(block: Any) -> bool:
    """A server tool's result block (``advisor_tool_result``, ``web_search_tool_result``...)."""
    kind = block.get("type") if isinstance(block, dict) else None
    return isinstance(kind, str) and kind.endswith("_tool_result") and kind != "tool_result" and "tool_use_id" in block


class BlockConverter:
    """The shared machinery: assistant blocks into a pending turn, user blocks out.

    The pending turn is one message assembled from several records (a Claude Code turn over
    the lines of one ``message.id``, an Anthropic assistant message), with the tool results
    held behind it until it ends. What it holds is bounded by ``max_record_bytes``, in bytes
    of JSON: each block by its duplicate-detection key (a repeated block counts once), each
    held result by :func:`json_size`. The record that would take it past that is refused
    with :class:`LimitExceeded` before it changes anything.
    """

    #: What the limit's error tells the user to do (each format says why a turn gets large).
    _limit_hint = "Raise max_record_bytes if one turn of this history really is that large"

    def __init__(self, report: Report | None, *, max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES) -> None:
        self.report = report
        self.max_record_bytes = max_record_bytes
        self._turn: Turn | None = None
        # What the pending turn holds, in bytes of JSON (its blocks and the results behind
        # it), and where its first block came from (for the limit's error).
        self._held = 0
        self._turn_at = At(None, 0)
        self._fed = 0  # records fed, by a converter that counts them (see _where)

    def flush(self) -> list[dict[str, Any]]:
        self._held = 0
        turn, self._turn = self._turn, None
        return turn.flush() if turn is not None else []

    def _where(self, at: At) -> str | None:
        """Where a record is, in the words of the limit's error ("on line 3"; None: not told)."""
        return None if at.line is None else f"on line {at.line}"

    def _too_big(self, key: Any, line: int | None, began: At) -> LimitExceeded:
        """The error for the record that would take the pending turn past ``max_record_bytes``
        (``began``: where the turn's first block came from, named when it is another record)."""
        limit = self.max_record_bytes
        name = f" {key[:80]!r}" if isinstance(key, str) else ""
        start = self._where(began)
        since = f" (begun {start})" if start is not None and start != self._where(At(line, self._fed)) else ""
        return LimitExceeded(
            f"assistant message{name}{since} and the tool results held behind it would hold more than {limit} "
            "bytes of JSON",
            limit="max_record_bytes",
            value=limit,
            line=line,
            hint=self._limit_hint,
        )

    def close(self) -> list[dict[str, Any]]:
        return self.flush()

    # Parsing is separate from applying so that an invalid record changes no state.

    def _assistant_ops(self, content: Any, line: int | None, kinds: list[str], ops: list[Any]) -> None:
        """What each block of an assistant message does to the turn, appended to ``kinds``
        (``"text"``, ``"call"``, ``"result"``, ``"thinking"``, ``"other"``) and, one for one,
        ``ops`` (the text, the call, the tool message, the block): two lists for the message,
        nothing built per block."""
        if isinstance(content, str):
            kinds.append("text")
            ops.append(content)
            return
        if content is None:
            return
        if not isinstance(content, list):
            raise invalid(f"assistant content is {describe(content)}, expected a list of blocks", line=line, field="content")
        for block in content:
            if not isinstance(block, dict):
                raise invalid(f"assistant content block is {describe(block)}", line=line, field="content")
            kind = block.get("type")
            if kind == "text":
                kinds.append("text")
                ops.append(block.get("text") if isinstance(block.get("text"), str) else "")
                extra = {k: v for k, v in block.items() if k not in ("type", "text")}
                if extra:  # e.g. citations: a Chat message's text has no room for them
                    note_extra(self.report, "drop_block_fields", f"text block fields {sorted(extra)} have no place in a Chat message; kept here", line=line, dropped=extra)
            elif kind == "tool_use" or kind == "server_tool_use":
                name = block.get("name")
                if not isinstance(name, str):
                    raise invalid(f"a {kind!r} block needs a string 'name', got {describe(name)}", line=line, field="content.name")
                call: dict[str, Any] = {
                    "id": string_id(block.get("id"), line=line, what=f"a {kind!r} block's 'id'", field="content.id"),
                    "type": "function",
                    "function": {"name": name, "arguments": dumps(block.get("input", {}), line=line, what=f"a {kind!r} block's 'input'")},
                }
                # Other keys (e.g. "caller" on newer lines) are kept under source_fields.
                fields = {k: v for k, v in block.items() if k not in ("type", "id", "name", "input")}
                if kind == "server_tool_use":
                    fields["item_type"] = kind  # run by Anthropic, not by the client (as Responses' custom calls)
                with_source(call, fields)
                kinds.append("call")
                ops.append(call)
            elif _server_result(block):
                kinds.append("result")
                ops.append(self._result(block, line))
            elif kind in ("thinking", "redacted_thinking"):
                kinds.append("thinking")
                ops.append(block)
            else:
                kinds.append("other")
                ops.append(block)

    def _apply(self, turn: Turn, kinds: list[str], ops: list[Any], keys: list[bytes], line: int | None) -> None:
        for op, value, key in zip(kinds, ops, keys):
            if key in turn.seen:
                count(self.report, "skip_duplicate_block")
                continue
            turn.seen.add(key)
            if op == "text":
                turn.texts.append(value)
            elif op == "call":
                turn.calls.append(value)
            elif op == "result":
                turn.results.append(value)
            elif op == "thinking":
                if isinstance(value.get("thinking"), str):
                    turn.reasoning.append(value["thinking"])
                turn.preserve(THINKING_KEY, value)
            else:
                # A block with no Chat equivalent (container_upload, a type this reader does not know).
                note_extra(self.report, "drop_block", f"{value.get('type')!r} block has no Chat equivalent; left out", line=line, dropped=value)

    def _user_parts(self, content: Any, line: int | None) -> tuple[list[dict[str, Any]], Any]:
        """Tool messages and the user content (None when there is none) of a user message."""
        if isinstance(content, str):
            return [], content
        if not isinstance(content, list):
            raise invalid(f"user content is {describe(content)}, expected a string or a list of blocks", line=line, field="content")
        results: list[dict[str, Any]] = []
        rest: list[Any] = []
        for block in content:
            if isinstance(block, dict) and (block.get("type") == "tool_result" or _server_result(block)):
                results.append(self._result(block, line))
            else:
                rest.append(block)
        user = as_text(text_parts(rest, line=line, where="user content")) if rest else None
        return results, user

    def _result(self, block: dict[str, Any], line: int | None) -> dict[str, Any]:
        kind = block.get("type")
        call_id = block.get("tool_use_id")
        if not isinstance(call_id, str):
            raise invalid(f"a {kind!r} block needs a string 'tool_use_id', got {describe(call_id)}", line=line, field="content.tool_use_id")
        raw = block.get("content")
        source = {k: v for k, v in block.items() if k not in ("type", "tool_use_id", "content")}
        if kind != "tool_result":  # a server tool's result: its type (and content) to restore it
            source = {"type": kind, **source}
            if not isinstance(raw, str):
                source["content"] = raw
            content: Any = _server_text(raw, line)
        elif raw is None:
            content = ""
        elif isinstance(raw, str):
            content = raw
        else:
            content = as_text(text_parts(raw if isinstance(raw, list) else [raw], line=line, where="tool_result content"))
        # is_error stays (under source_fields): an error result is still the call's answer.
        return with_source({"role": "tool", "tool_call_id": call_id, "content": content}, source)

    def _assistant(self, content: Any, key: Any, line: int | None, extra: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        # Everything is worked out before anything changes (a block too deep to encode, or a
        # turn past max_record_bytes, refuses the whole record): the ops, each block's
        # duplicate-detection key, and what the turn would hold -- only the blocks it does not
        # hold yet add to it (Claude Code's snapshot lines repeat them).
        kinds: list[str] = []
        ops: list[Any] = []
        self._assistant_ops(content, line, kinds, ops)  # one op a block (a string: one op, None: none)
        blocks = content if isinstance(content, list) else [content] if ops else []
        turn = self._turn
        if turn is not None and (key is None or turn.key != key):
            turn = None  # this record begins a turn
        # Each key is copied to its own size as it is made (``_own_copy``; copied afterwards,
        # the record's keys would all hold their buffer at once).
        keys = [_own_copy(canonical(block, line=line, what="an assistant content block")) for block in blocks]
        if turn is None:
            held = sum(map(len, set(keys)))
        else:
            held = self._held + sum(map(len, set(keys).difference(turn.seen)))
        if held > self.max_record_bytes:
            raise self._too_big(key, line, At(line, self._fed) if turn is None else self._turn_at)
        out: list[dict[str, Any]] = []
        if turn is None:
            out = self.flush()
            turn = self._turn = Turn(key)
            self._turn_at = At(line, self._fed)
        self._held = held
        if extra:
            merge_source(turn.source, extra, self.report, line=line)
        self._apply(turn, kinds, ops, keys, line)
        return out

    def _user(self, content: Any, line: int | None, extra: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        results, user = self._user_parts(content, line)
        if results and user is None and self._turn is not None:
            # Results with no user text wait behind the pending turn until it ends: counted in
            # what it holds once the record is known to be valid, before it changes anything.
            held = self._held + sum(map(result_size, results))
            if held > self.max_record_bytes:
                raise self._too_big(self._turn.key, line, self._turn_at)
            self._held = held
        out: list[dict[str, Any]] = []
        if self._turn is not None:
            self._turn.results.extend(results)
        else:
            out.extend(results)  # results with no turn before them: the core decides
        if user is not None:
            out.extend(self.flush())
            out.append(with_source({"role": "user", "content": user}, extra or {}))
        elif extra and results:  # the record's own fields go with its first message
            merge_source(results[0].setdefault(SOURCE_KEY, {}), extra, self.report, line=line)
        return out


def _own_copy(block: bytes) -> bytes:
    """A block's canonical JSON as the pending turn keeps it (to know its duplicates): copied
    to its own size. orjson's bytes keep the buffer they were written into, 4 KiB for a small
    block and some ten times the size of a big one (orjson 3.13: 8.3 MB for a 1 MB text), so
    a turn of k small blocks held 4 KiB a block (20,000 one-block lines of one ``message.id``:
    80 MB for 3.5 MB of text; one Anthropic assistant message of 20,000 blocks the same). The
    copy costs a tenth of a microsecond a block, a few percent of converting a body."""
    return memoryview(block).tobytes()  # (0.11 us for a small block; bytes(memoryview(block)): 0.17)


# The keys and the role of every tool message ``_result`` makes.
_TOOL_MESSAGE = len("role") + len("tool") + len("tool_call_id") + len("content")


def result_size(result: dict[str, Any]) -> int:
    """:func:`json_size` of a tool message ``_result`` made, its common form (text content,
    no other fields) counted without the loop: half the time, on what is most of a body's
    messages (an Anthropic user message of results only waits behind its turn)."""
    content = result["content"]
    if len(result) == 3 and type(content) is str:
        return _TOOL_MESSAGE + len(result["tool_call_id"]) + len(content)
    return json_size(result)


# Not _responses._json_size, which dumps the whole item: a held result's content is often a
# big tool output (a file read, a command's log), and this one counts it without copying it.
# They stay apart because one measure for both would move the boundaries one side's tests pin
# (Claude Code's here; the Responses items' exact JSON there), and this one is no cheaper on
# Responses items, whose size is mostly in nested parts (see the note at that one).
def json_size(value: dict[str, Any]) -> int:
    """About the size of a tool result's JSON, in bytes: its keys and string values by their
    length (no copy of a big tool output to count it), any other value as JSON (one that no
    JSON holds, in records given in memory, by its repr)."""
    size = 0
    for key, item in value.items():
        if type(key) is str:
            size += len(key)
        size += len(item) if type(item) is str else value_size(item)
    return size


def value_size(item: Any) -> int:
    """The size of a value that is not a string, as :func:`json_size` counts it: its JSON (one
    that no JSON holds, in records given in memory, by its repr)."""
    try:
        return len(orjson.dumps(item))
    except TypeError:  # an integer past 64 bits, or no JSON value at all
        try:
            return len(repr(item))
        except RecursionError:
            return 0


def message_size(message: dict[str, Any]) -> int:
    """What a message given out adds to the sub-agent transcript that holds it (its JSON's keys
    and strings by their length, as :func:`json_size` counts a held result)."""
    return result_size(message) if message.get("role") == "tool" else json_size(message)


# What Turn.message makes of a turn with nothing in it: {"role": "assistant", "content": ""}.
EMPTY_TURN = len("role") + len("assistant") + len("content")

