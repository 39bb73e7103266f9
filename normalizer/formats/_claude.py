"""Claude Code session JSONL and Anthropic Messages lists -> chat messages (formats.md §2).

Both store content as Anthropic blocks: ``text``, ``thinking``, ``tool_use`` in assistant
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

Claude Code writes one line per content block, so the lines of one API response share
``message.id`` and are merged into one assistant message (exact-duplicate blocks, which
streaming snapshots produce, are dropped and counted). The turn stays pending while its
results arrive -- in any order, across snapshot, system and sidechain lines -- and ends at the
next line that carries new content. What it holds, its blocks and those results, is bounded by
``max_record_bytes`` (in bytes of their JSON): the line that would take it past that is refused
with :class:`~normalizer.LimitExceeded`. An Anthropic assistant message is such a turn too, the
results of the user messages after it held behind it, under the same bound. So is what
``keep_sidechains`` holds of a Claude Code 1.0 sub-agent's transcript until it ends.

A file whose first conversation line is a sub-agent's (``isSidechain``: Claude Code 2.1 writes
each sub-agent to ``<session>/subagents/agent-*.jsonl``, every line sidechain) is that
sub-agent's conversation: its lines are read as the file's own (``subagent_transcript``).

Cline stores Anthropic messages whose ``tool_use`` is answered by user text, not by a
``tool_result`` block: ``[read_file for 'X'] Result:`` then the result (in the same text
block or the next one), or ``Tool [x] was not executed because...``. :class:`AnthropicConverter`
pairs such a text with the open call of that name (``pair_text_result``): the text after the
header becomes the call's tool message, the header is kept in the record.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

import orjson

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

__all__ = ["ClaudeCodeConverter", "AnthropicConverter", "CLAUDE_LINE_TYPES"]

#: Line types Claude Code writes that carry no conversation (and some that do). Used by
#: format detection; unknown types are skipped and counted anyway.
CLAUDE_LINE_TYPES = frozenset({
    "user", "assistant", "system", "summary", "file-history-snapshot", "queue-operation",
    "last-prompt", "progress", "attachment", "permission-mode", "custom-title", "ai-title",
    "agent-name", "pr-link", "worktree-state",
})

THINKING_KEY = "thinking_blocks"

_Op = tuple[str, Any]


class _At(NamedTuple):
    """Where a record is, kept for every turn and put into words only for the limit's error."""

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
_CLINE_HEADER = re.compile(r"\[(?P<name>[\w.:-]+)(?: for .*?)?\] Result:[ \t]*\n?", re.S)
_CLINE_SKIPPED = re.compile(r"Tool \[(?P<name>[\w.:-]+)\] was not executed because")


def _cline_result(text: str) -> tuple[str, str, str | None] | None:
    """``(tool name, header, the result after it or None)`` of a Cline text result, else None."""
    match = _CLINE_HEADER.match(text)
    if match is not None:
        rest = text[match.end():]
        return match["name"], match.group().rstrip(), rest if rest.strip() else None
    match = _CLINE_SKIPPED.match(text)
    if match is not None:
        return match["name"], "", text
    return None


def _server_result(block: Any) -> bool:
    """A server tool's result block (``advisor_tool_result``, ``web_search_tool_result``...)."""
    kind = block.get("type") if isinstance(block, dict) else None
    return isinstance(kind, str) and kind.endswith("_tool_result") and kind != "tool_result" and "tool_use_id" in block


class _BlockConverter:
    """The shared machinery: assistant blocks into a pending turn, user blocks out.

    The pending turn is one message assembled from several records (a Claude Code turn over
    the lines of one ``message.id``, an Anthropic assistant message), with the tool results
    held behind it until it ends. What it holds is bounded by ``max_record_bytes``, in bytes
    of JSON: each block by its duplicate-detection key (a repeated block counts once), each
    held result by :func:`_json_size`. The record that would take it past that is refused
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
        self._turn_at = _At(None, 0)
        self._fed = 0  # records fed, by a converter that counts them (see _where)

    def flush(self) -> list[dict[str, Any]]:
        self._held = 0
        turn, self._turn = self._turn, None
        return turn.flush() if turn is not None else []

    def _where(self, at: _At) -> str | None:
        """Where a record is, in the words of the limit's error ("on line 3"; None: not told)."""
        return None if at.line is None else f"on line {at.line}"

    def _too_big(self, key: Any, line: int | None, began: _At) -> LimitExceeded:
        """The error for the record that would take the pending turn past ``max_record_bytes``
        (``began``: where the turn's first block came from, named when it is another record)."""
        limit = self.max_record_bytes
        name = f" {key[:80]!r}" if isinstance(key, str) else ""
        start = self._where(began)
        since = f" (begun {start})" if start is not None and start != self._where(_At(line, self._fed)) else ""
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

    def _assistant_ops(self, content: Any, line: int | None) -> list[_Op]:
        if isinstance(content, str):
            return [("text", content)]
        if content is None:
            return []
        if not isinstance(content, list):
            raise invalid(f"assistant content is {describe(content)}, expected a list of blocks", line=line, field="content")
        ops: list[_Op] = []
        for block in content:
            if not isinstance(block, dict):
                raise invalid(f"assistant content block is {describe(block)}", line=line, field="content")
            kind = block.get("type")
            if kind == "text":
                ops.append(("text", block.get("text") if isinstance(block.get("text"), str) else ""))
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
                if kind == "server_tool_use":
                    call["item_type"] = kind  # run by Anthropic, not by the client (as Responses' custom calls)
                # Other keys (e.g. "caller" on newer lines) are kept under source_fields.
                with_source(call, {k: v for k, v in block.items() if k not in ("type", "id", "name", "input")})
                ops.append(("call", call))
            elif _server_result(block):
                ops.append(("result", self._result(block, line)))
            elif kind in ("thinking", "redacted_thinking"):
                ops.append(("thinking", block))
            else:
                ops.append(("other", block))
        return ops

    def _apply(self, turn: Turn, ops: list[_Op], keys: list[bytes], line: int | None) -> None:
        for (op, value), key in zip(ops, keys):
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
        ops = self._assistant_ops(content, line)  # one op a block (a string: one op, None: none)
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
            raise self._too_big(key, line, _At(line, self._fed) if turn is None else self._turn_at)
        out: list[dict[str, Any]] = []
        if turn is None:
            out = self.flush()
            turn = self._turn = Turn(key)
            self._turn_at = _At(line, self._fed)
        self._held = held
        if extra:
            merge_source(turn.source, extra, self.report, line=line)
        self._apply(turn, ops, keys, line)
        return out

    def _user(self, content: Any, line: int | None, extra: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        results, user = self._user_parts(content, line)
        if results and user is None and self._turn is not None:
            # Results with no user text wait behind the pending turn until it ends: counted in
            # what it holds once the record is known to be valid, before it changes anything.
            held = self._held + sum(map(_result_size, results))
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


def _result_size(result: dict[str, Any]) -> int:
    """:func:`_json_size` of a tool message ``_result`` made, its common form (text content,
    no other fields) counted without the loop: half the time, on what is most of a body's
    messages (an Anthropic user message of results only waits behind its turn)."""
    content = result["content"]
    if len(result) == 3 and type(content) is str:
        return _TOOL_MESSAGE + len(result["tool_call_id"]) + len(content)
    return _json_size(result)


# Not _responses._json_size, which dumps the whole item: a held result's content is often a
# big tool output (a file read, a command's log), and this one counts it without copying it.
# They stay apart because one measure for both would move the boundaries one side's tests pin
# (Claude Code's here; the Responses items' exact JSON there), and this one is no cheaper on
# Responses items, whose size is mostly in nested parts (see the note at that one).
def _json_size(value: dict[str, Any]) -> int:
    """About the size of a tool result's JSON, in bytes: its keys and string values by their
    length (no copy of a big tool output to count it), any other value as JSON (one that no
    JSON holds, in records given in memory, by its repr)."""
    size = 0
    for key, item in value.items():
        if type(key) is str:
            size += len(key)
        size += len(item) if type(item) is str else _value_size(item)
    return size


def _value_size(item: Any) -> int:
    """The size of a value that is not a string, as :func:`_json_size` counts it: its JSON (one
    that no JSON holds, in records given in memory, by its repr)."""
    try:
        return len(orjson.dumps(item))
    except TypeError:  # an integer past 64 bits, or no JSON value at all
        try:
            return len(repr(item))
        except RecursionError:
            return 0


def _message_size(message: dict[str, Any]) -> int:
    """What a message given out adds to the sub-agent transcript that holds it (its JSON's keys
    and strings by their length, as :func:`_json_size` counts a held result)."""
    return _result_size(message) if message.get("role") == "tool" else _json_size(message)


# What Turn.message makes of a turn with nothing in it: {"role": "assistant", "content": ""}.
_EMPTY_TURN = len("role") + len("assistant") + len("content")


class Sidechain(NamedTuple):
    """A finished Claude Code sub-agent transcript (with ``keep_sidechains=True``): a reader
    event, given out after the main conversation by the conversation readers."""

    messages: list[dict[str, Any]]
    #: Its messages' size as ``max_record_bytes`` counts it (see ``keep_sidechains``): what
    #: holding it costs, for whoever holds it longer.
    size: int
    #: The line it began on (None: records in memory).
    line: int | None


class _TurnSize:
    """The :func:`_message_size` of what a pending Claude Code turn will give out (its message,
    then its results), kept up to date as the turn grows: each text, call, block and result is
    measured once, when it joins the turn (measuring the turn again at each of its lines would
    make a turn of k lines cost k² steps). It follows what ``Turn.message()`` makes of a Claude
    Code turn, which keeps no other blocks than thinking ones, and has no refusal, ``extra``
    or source fields of its own (only an Anthropic message's fields go there).
    """

    __slots__ = ("turn", "size", "_texts", "_said", "_reasoning", "_thought", "_calls", "_blocks", "_results")

    def __init__(self, turn: Turn) -> None:
        self.turn = turn
        #: What the turn gives out, as of the last update.
        self.size = _EMPTY_TURN
        # How many of the turn's texts, reasoning, calls, thinking blocks and results are taken
        # in, and how many of its texts and reasoning are not empty (a message joins those).
        self._texts = self._reasoning = self._calls = self._blocks = self._results = 0
        self._said = self._thought = 0

    def update(self) -> None:
        """Take in what joined the turn since the last update (each new item adds its length,
        and what joins it to the ones before: a blank line, a comma, or the key of the first)."""
        turn, size = self.turn, self.size
        if len(turn.texts) > self._texts:
            for text in turn.texts[self._texts:]:
                if text:
                    # The first is the content, instead of "" (or null, in a turn with calls).
                    size += len(text) + 2 if self._said else len(text) - (len(b"null") if self._calls else 0)
                    self._said += 1
            self._texts = len(turn.texts)
        if len(turn.calls) > self._calls:
            for call in turn.calls[self._calls:]:
                if self._calls:
                    size += _value_size(call) + 1
                else:  # the first: the key, the brackets, and null content if there is no text
                    size += len("tool_calls") + 2 + _value_size(call) + (0 if self._said else len(b"null"))
                self._calls += 1
        if len(turn.reasoning) > self._reasoning:
            for text in turn.reasoning[self._reasoning:]:
                if text:
                    size += len(text) + 2 if self._thought else len("reasoning_content") + len(text)
                    self._thought += 1
            self._reasoning = len(turn.reasoning)
        blocks = turn.preserved.get(THINKING_KEY)
        if blocks is not None and len(blocks) > self._blocks:
            for block in blocks[self._blocks:]:
                size += _value_size(block) + (1 if self._blocks else len(THINKING_KEY) + 2)
                self._blocks += 1
        if len(turn.results) > self._results:
            size += sum(map(_result_size, turn.results[self._results:]))
            self._results = len(turn.results)
        self.size = size


class ClaudeCodeConverter(_BlockConverter):
    """Claude Code session lines in, chat messages out.

    Args:
        report: where skipped lines are counted and dropped content is recorded.
        keep_sidechains: convert sub-agent (``isSidechain``) lines into conversations of
            their own, collected by :meth:`take_sidechains`, instead of dropping them. A
            sub-agent's transcript is held until it ends (the next one's first line, or
            :meth:`close`), up to ``max_record_bytes`` in bytes of its messages' JSON (keys
            and strings by their length, other values as JSON), its pending turn counted as it
            will be given out: the line that would take it past this is refused with
            :class:`LimitExceeded` (``limit="max_record_bytes"``), saying the line the
            transcript began on. The transcript ends there: the messages it gave out before
            that line are its conversation (:meth:`take_sidechains`), its later lines are left
            out (``drop_sidechain``) until the next sub-agent's first line.
        keep_meta: keep ``isMeta`` user lines (harness-injected text) as user messages.
        max_record_bytes: the most the pending turn holds, in bytes of JSON: the content
            blocks of its assistant message (one ``message.id`` written over several lines;
            a duplicate block counts once) and the tool results held behind it until the
            turn ends. The line that would take it past this is refused with
            :class:`LimitExceeded` (``limit="max_record_bytes"``). The readers pass their own
            ``max_record_bytes``: the message is one record, built from several lines.
    """

    name = "claude-code"
    multi = False
    _limit_hint = (
        "Raise max_record_bytes if one turn of this session really is that large (Claude Code writes a turn as a "
        "few lines)"
    )

    def __init__(
        self, report: Report | None = None, *, keep_sidechains: bool = False, keep_meta: bool = False,
        max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES,
    ) -> None:
        super().__init__(report, max_record_bytes=max_record_bytes)
        self.keep_sidechains = keep_sidechains
        self.keep_meta = keep_meta
        self._side: ClaudeCodeConverter | None = None
        self._side_messages: list[dict[str, Any]] = []
        self._sidechains: list[Sidechain] = []
        # What the open sub-agent transcript holds (max_record_bytes): the size of the messages
        # it gave out, its pending turn's as it grows, and its first line (the error's).
        self._side_bytes = 0
        self._side_turn: _TurnSize | None = None
        self._side_began: int | None = None
        # A transcript cut at the limit: where it began and the line refused (its later lines
        # are left out until the next transcript begins); None: none is.
        self._side_cut: tuple[int | None, int | None] | None = None
        # None until the first conversation line: is the file a sub-agent's own transcript?
        self._subagent: bool | None = None
        #: Lines of no type Claude Code writes (the reader's "was anything recognised?").
        self.unrecognised = 0

    def feed(self, record: Any, *, line: int | None = None) -> list[dict[str, Any]]:
        if not isinstance(record, dict) or not isinstance(record.get("type"), str):
            raise invalid(
                f"expected a Claude Code session line with a 'type', got {describe(record)}",
                line=line,
                hint="Is this a Claude Code session file? Try another --from format",
            )
        kind = record["type"]
        if kind not in ("user", "assistant"):
            if kind not in CLAUDE_LINE_TYPES:
                self.unrecognised += 1
            count(self.report, f"skip_{kind}" if kind in CLAUDE_LINE_TYPES else "skip_unknown_line")
            return []
        message = record.get("message")
        if not isinstance(message, dict):
            raise invalid(f"{kind} line has message {describe(message)}, expected an object", line=line, field="message")
        if self._subagent is None:
            self._subagent = bool(record.get("isSidechain"))
            if self._subagent:
                note_extra(self.report, "subagent_transcript", "the first conversation line is a sub-agent's "
                           "(isSidechain): the file is that sub-agent's transcript, read as its own conversation",
                           line=line, dropped=None)
        if record.get("isSidechain") and not self._subagent:
            return self._sidechain(record, line)
        if kind == "assistant":
            if message.get("model") == "<synthetic>" or record.get("isApiErrorMessage"):
                # Harness-made error text ("API Error: 529 ...") is not a model turn (A6).
                note_extra(self.report, "drop_synthetic", "synthetic assistant line (harness error message) left out", line=line, dropped=record)
                return []
            key = message.get("id") or record.get("requestId") or record.get("uuid")
            return self._assistant(message.get("content"), key, line)
        if record.get("isMeta") and not self.keep_meta:
            note_extra(self.report, "drop_meta", "isMeta user line (harness-injected text) left out", line=line, dropped=record)
            return []
        if record.get("isCompactSummary"):
            count(self.report, "compact_summary")
        return self._user(message.get("content"), line)

    def close(self) -> list[dict[str, Any]]:
        out = self.flush()
        self._end_sidechain()
        return out

    def take_sidechains(self) -> list[Sidechain]:
        """Sub-agent conversations completed so far (with ``keep_sidechains``): ended, or cut
        where they went past ``max_record_bytes``."""
        done, self._sidechains = self._sidechains, []
        return done

    def _sidechain(self, record: dict[str, Any], line: int | None) -> list[dict[str, Any]]:
        if not self.keep_sidechains:
            # A4: a sub-agent's prompt between a Task call and its result is not a user turn.
            note_extra(self.report, "drop_sidechain", f"sub-agent ({record['type']}) line left out of the main conversation", line=line, dropped=record)
            return []
        if record.get("parentUuid") is None and record["type"] == "user":
            self._end_sidechain()  # a root line starts the next sub-agent transcript
        elif self._side_cut is not None:
            began, refused = self._side_cut
            past = "" if refused is None else f" on line {refused}"
            note_extra(self.report, "drop_sidechain", f"sub-agent ({record['type']}) line left out: its transcript"
                       f"{_begun(began)} went past max_record_bytes{past}", line=line, dropped=record)
            return []
        if self._side is None:
            self._side = ClaudeCodeConverter(self.report, keep_meta=self.keep_meta, max_record_bytes=self.max_record_bytes)
        self._hold_side(self._side, self._side.feed(dict(record, isSidechain=False), line=line), line)
        return []

    def _hold_side(self, side: ClaudeCodeConverter, out: list[dict[str, Any]], line: int | None) -> None:
        """Add what the transcript gave out for a line, and what its pending turn now holds, to
        what it holds; past ``max_record_bytes``, cut it there (see ``keep_sidechains``)."""
        held, sizes, new = self._side_bytes, self._side_turn, out
        if sizes is not None:
            sizes.update()
            if sizes.turn is not side._turn:
                # Given out by this line: its message and results lead, counted as they were held.
                held += sizes.size
                new = out[1 + len(sizes.turn.results):]
                sizes = None
        if new:
            held += sum(map(_message_size, new))
        if sizes is None and side._turn is not None:
            sizes = _TurnSize(side._turn)
            sizes.update()
        # The pending turn counts now, not once given out: its transcript's last turn goes out
        # when the transcript ends, at the next one's first line or at close(), and refusing
        # there would refuse a line of another transcript, or lose the end of the main
        # conversation (the reader does not close a converter twice).
        if held + (sizes.size if sizes is not None else 0) > self.max_record_bytes:
            raise self._cut_sidechain(line)
        self._side_bytes, self._side_turn = held, sizes
        self._side_messages.extend(out)
        if self._side_began is None:
            self._side_began = line  # its first line held (one refused before it is not in it)

    def _cut_sidechain(self, line: int | None) -> LimitExceeded:
        """End the open transcript at the line that takes it past ``max_record_bytes``: the
        messages given out before it go out, the rest is let go; the error for that line."""
        began = line if self._side_began is None else self._side_began
        self._end_sidechain(last_turn=False)
        self._side_cut = (began, line)
        limit = self.max_record_bytes
        return LimitExceeded(
            f"the sub-agent (isSidechain) transcript{_begun(began) if began != line else ''} would hold more than "
            f"{limit} bytes of JSON in its messages",
            limit="max_record_bytes",
            value=limit,
            line=line,
            hint="Raise max_record_bytes if this sub-agent transcript really is that large, or read the session "
            "without keep_sidechains (its sub-agent lines are then left out)",
        )

    def _end_sidechain(self, *, last_turn: bool = True) -> None:
        """End the open transcript (``last_turn``: its pending turn given out with it)."""
        if self._side is not None:
            size = self._side_bytes
            if last_turn:
                self._side_messages.extend(self._side.close())  # its last turn: counted already
                size += self._side_turn.size if self._side_turn is not None else 0
            if self._side_messages:
                self._sidechains.append(Sidechain(self._side_messages, size, self._side_began))
            self._side, self._side_messages = None, []
        self._side_bytes, self._side_turn, self._side_began, self._side_cut = 0, None, None, None


def _begun(line: int | None) -> str:
    """Where a sub-agent transcript began, in the words of its errors and notes."""
    return "" if line is None else f" (begun on line {line})"


def _result_ids(content: list[Any]) -> set[str | None]:
    """The ids the ``tool_result`` blocks of a user message answer.

    Call ids are strings or None (``string_id``), so no other id can answer one; and an
    unhashable one (a list) must not end the run here: ``_user_parts`` reports it.
    """
    ids: set[str | None] = set()
    for block in content:
        if isinstance(block, dict) and block.get("type") == "tool_result":
            call_id = block.get("tool_use_id")
            if call_id is None or isinstance(call_id, str):
                ids.add(call_id)
    return ids


class _OpenCalls:
    """The calls of one turn that no result answers yet, kept up to date as the turn grows.

    Cline answers each call in a user message of its own: working out the open calls again
    for every message (a scan of all the turn's calls and results) made k answers cost k²
    steps. Here each call and each result is taken in once, when it first appears in the turn.
    """

    def __init__(self, turn: Turn) -> None:
        self.turn = turn
        self._calls_seen = 0  # how many of turn.calls and turn.results are taken in
        self._results_seen = 0
        self._answered: set[Any] = set()  # the ids of the turn's results
        # Calls per id: ids can repeat, and a result for an id answers every call of that id.
        self._per_id: dict[Any, int] = {}
        self._by_name: dict[str, list[dict[str, Any]]] = {}  # each name's calls, in call order
        self._first: dict[str, int] = {}  # per name: every call before this index is answered
        #: Calls whose id no result of the turn has.
        self.open = 0

    def update(self) -> None:
        """Take in the calls and results added to the turn since the last update."""
        turn = self.turn
        for result in turn.results[self._results_seen:]:
            call_id = result.get("tool_call_id")
            if call_id not in self._answered:
                self._answered.add(call_id)
                self.open -= self._per_id.get(call_id, 0)
        self._results_seen = len(turn.results)
        for call in turn.calls[self._calls_seen:]:
            call_id = call.get("id")
            self._per_id[call_id] = self._per_id.get(call_id, 0) + 1
            if call_id not in self._answered:  # answered already: closed for good (results only grow)
                self.open += 1
                name = call["function"]["name"]
                self._by_name.setdefault(name, []).append(call)
                self._first.setdefault(name, 0)
        self._calls_seen = len(turn.calls)

    def open_besides(self, ids: set[str | None]) -> int:
        """How many calls are open once ``ids`` are answered too."""
        return self.open - sum(self._per_id.get(i, 0) for i in ids if i not in self._answered)

    def first(self, name: str, ids: set[str | None], start: dict[str, int]) -> dict[str, Any] | None:
        """The first call named ``name`` open besides ``ids``, looked for from ``start[name]``
        (one message's place per name, moved past the call returned: a message pairs each
        call once, and ``ids`` does not change within it)."""
        calls = self._by_name.get(name)
        if calls is None:
            return None
        i = start.get(name, self._first[name])
        while i < len(calls):
            call_id = calls[i].get("id")
            if call_id in self._answered:
                if i == self._first[name]:
                    self._first[name] = i + 1  # answered for good: no later message looks at it again
            elif call_id not in ids:
                start[name] = i + 1
                return calls[i]
            i += 1
        start[name] = i
        return None


class AnthropicConverter(_BlockConverter):
    """Anthropic Messages (``{"role", "content": blocks}``) in, chat messages out.

    The request's top-level ``system`` is given through :meth:`meta`.

    Args:
        report: where dropped content and conversion notes are recorded.
        max_record_bytes: the most the pending turn holds, in bytes of JSON: the content
            blocks of an assistant message (a duplicate block counts once) and the tool
            results of the user messages after it that hold nothing else (Cline's text
            results are results), which wait behind it until the turn ends (a user or
            system text, the next assistant message). The message that would take it past
            this is refused with :class:`LimitExceeded` (``limit="max_record_bytes"``),
            saying where the turn began: its line, or, for a message with none (a request
            body's, or one given in memory), its 0-based index among the messages fed, as
            errors name a message. The readers pass their own ``max_record_bytes``.
    """

    name = "anthropic"
    multi = False
    _limit_hint = (
        "Raise max_record_bytes if one turn of this conversation really is that large (an assistant message and "
        "the tool results that answer it)"
    )

    def __init__(self, report: Report | None = None, *, max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES) -> None:
        super().__init__(report, max_record_bytes=max_record_bytes)
        self._started = False
        self._open: _OpenCalls | None = None  # the pending turn's open calls, once a user message asks

    def _where(self, at: _At) -> str | None:
        # A request body's messages are one JSON document: the reader gives no line to its
        # records (only the error is placed, at file:line:column), so a turn that began at
        # another message says which, by the index the reader counts too (``feed``).
        return f"on line {at.line}" if at.line is not None else f"at message {at.fed - 1}"

    def flush(self) -> list[dict[str, Any]]:
        self._open = None  # the turn ends: let its calls and results go
        return super().flush()

    def meta(self, key: str, value: Any, *, line: int | None = None) -> list[dict[str, Any]]:
        if key != "system":
            return []
        if self._started:
            note_extra(self.report, "drop_late_system", "top-level 'system' came after the messages already read (from "
                       "a stream, the messages are held only up to max_record_bytes: read the file itself to place "
                       "it first)", line=line, dropped=value)
            return []
        if isinstance(value, str):
            return [{"role": "system", "content": value}] if value else []
        if isinstance(value, list):
            return [{"role": "system", "content": as_text(text_parts(value, line=line, where="system"))}]
        raise invalid(f"'system' is {describe(value)}, expected a string or a list of text blocks", line=line, field="system")

    def feed(self, record: Any, *, line: int | None = None) -> list[dict[str, Any]]:
        self._fed += 1  # first: a refused message is one of the reader's too (on_invalid="skip")
        if not isinstance(record, dict) or record.get("role") not in ("user", "assistant", "system"):
            raise invalid(f"expected an Anthropic message {{role: user|assistant, content}}, got {describe(record)}", line=line, field="role")
        self._started = True
        extra = {k: v for k, v in record.items() if k not in ("role", "content")}
        if record["role"] == "assistant":
            return self._assistant(record.get("content"), None, line, extra)
        if record["role"] == "system":
            content = record.get("content")
            parts = content if isinstance(content, str) else as_text(text_parts(content, line=line, where="system"))
            return [*self.flush(), with_source({"role": "system", "content": parts}, extra)]
        content = record.get("content")
        if isinstance(content, list) and self._turn is not None and self._turn.calls:
            content = self._pair_text_results(self._turn, content, line)
        return self._user(content, line, extra)

    def _pair_text_results(self, turn: Turn, content: list[Any], line: int | None) -> list[Any]:
        """Cline's text results (module docstring) as ``tool_result`` blocks of the turn's open
        calls; the content unchanged when there are none."""
        if self._open is None or self._open.turn is not turn:
            self._open = _OpenCalls(turn)
        calls = self._open
        calls.update()
        ids = _result_ids(content)  # the message's own tool_result blocks answer calls too
        if not calls.open_besides(ids):
            return content
        start: dict[str, int] = {}  # where this message looks for each name's next open call
        out: list[Any] = []
        i = 0
        while i < len(content):
            block = content[i]
            i += 1
            text = block.get("text") if isinstance(block, dict) and block.get("type") == "text" else None
            found = _cline_result(text) if isinstance(text, str) else None
            call = calls.first(found[0], ids, start) if found else None
            if found is None or call is None:
                out.append(block)
                continue
            name, header, rest = found
            if rest is None:  # the header alone: the result is the next block (text or image)
                after = content[i] if i < len(content) else None
                taken = isinstance(after, dict) and after.get("type") in ("text", "image") and not (
                    after.get("type") == "text" and isinstance(after.get("text"), str) and _cline_result(after["text"]))
                result: Any = [after] if taken else ""
                i += taken
            else:
                result = rest
            out.append({"type": "tool_result", "tool_use_id": call["id"], "content": result})
            note_extra(self.report, "pair_text_result", f"user text {header!r} answers call {call['id']!r} "
                       f"({name}, Cline's text result): it became that call's tool message", line=line,
                       dropped={"text": header} if header else None)
        return out
