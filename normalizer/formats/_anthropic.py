"""The ``anthropic`` format: Anthropic Messages lists and requests -> chat messages (formats.md §2).

Its content is Anthropic blocks, converted as ``_blocks`` says. An assistant message is one
turn, the results of the user messages after it held behind it, bounded by
``max_record_bytes`` (in bytes of their JSON). The request's top-level ``system`` comes
through :meth:`AnthropicConverter.meta`. Written by ``_anthropic_writer``.

Cline stores Anthropic messages whose ``tool_use`` is answered by user text, not by a
``tool_result`` block: ``[read_file for 'X'] Result:`` then the result (in the same text
block or the next one), or ``Tool [x] was not executed because...``. :class:`AnthropicConverter`
pairs such a text with the open call of that name (``pair_text_result``): the text after the
header becomes the call's tool message, the header is kept in the record.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from .._report import Report
from ._blocks import At, BlockConverter
from ._common import Turn, as_text, describe, invalid, note_extra, text_parts, with_source
from ._format import Claim, Clue, DocumentKeys, Evidence, Format, Output
from ._records import DEFAULT_MAX_RECORD_BYTES
from ._anthropic_writer import AnthropicWriter

__all__ = ["AnthropicConverter", "guess", "FORMAT"]


_CLINE_HEADER = re.compile(r"\[(?P<name>[\w.:-]+)(?: for .*?)?\] Result:[ \t]*\n?", re.S)
_CLINE_SKIPPED = re.compile(r"Tool \[(?P<name>[\w.:-]+)\] was not executed because")


@dataclass(frozen=True, slots=True)
class _ClineResult:
    """A Cline text result: the tool's name, its header, and the result after the header
    (None: the result is the next block)."""

    name: str
    header: str
    rest: str | None


def _cline_result(text: str) -> _ClineResult | None:
    """The :class:`_ClineResult` a Cline text is, else None."""
    match = _CLINE_HEADER.match(text)
    if match is not None:
        rest = text[match.end():]
        return _ClineResult(match["name"], match.group().rstrip(), rest if rest.strip() else None)
    match = _CLINE_SKIPPED.match(text)
    if match is not None:
        return _ClineResult(match["name"], "", text)
    return None



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


class AnthropicConverter(BlockConverter):
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

    def _where(self, at: At) -> str | None:
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
            call = calls.first(found.name, ids, start) if found else None
            if found is None or call is None:
                out.append(block)
                continue
            name, header, rest = found.name, found.header, found.rest
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


# -- the format -----------------------------------------------------------------------------------

_ANTHROPIC_BLOCKS = {"tool_use", "tool_result", "thinking", "redacted_thinking"}


def guess(record: dict[str, Any]) -> Clue | None:
    """A message with a role whose content holds a block only Anthropic has (a call, a
    result, thinking, or an image with a ``source``)."""
    content = record.get("content")
    if not isinstance(record.get("role"), str) or not isinstance(content, list):
        return None
    for part in content:
        if isinstance(part, dict):
            kind = part.get("type")
            if (isinstance(kind, str) and kind in _ANTHROPIC_BLOCKS) or (kind == "image" and "source" in part):
                return Clue(Evidence.BLOCKS)
    return None


FORMAT: Format = Format(
    "anthropic", AnthropicConverter, guess,
    outputs=(Output("anthropic", 50, AnthropicWriter),), assembling=True, per_file=True,
    document=DocumentKeys(arrays=("messages",), system_keys=("system",), claim=Claim.WEAK_RECORDS, body_keys=("system",)),
)
