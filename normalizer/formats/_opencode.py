"""opencode sessions -> chat messages: an ``opencode export`` document, or the ``opencode.db``
itself, read-only (research: ``../shared/research/agents-in-the-wild.md`` §2, opencode 1.18.33).

opencode keeps a session in SQLite (``~/.local/share/opencode/opencode.db``): tables
``session``, ``message`` (``id, session_id, time_created, time_updated, data``) and ``part``
(``id, message_id, session_id, time_created, time_updated, data``), JSON in ``data``.
``opencode export <id>`` writes ``{"info": session, "messages": [{"info": message, "parts":
[...]}]}``, each message's and part's ``data`` with its ids beside it (``id``, ``sessionID``,
``messageID``); ``_opencode_db`` builds the same records from the rows, so both read alike.

Conversion, as opencode sends a history (``toModelMessages`` in
``packages/opencode/src/session/message-v2.ts``, anomalyco/opencode):

* a user message: its ``text`` parts (not those marked ``ignored``), ``file`` parts (an image
  as an ``image_url`` part, others kept as they are); a ``compaction`` part is the text
  ``"What did we do so far?"`` opencode puts in its place.
* an assistant message: one chat assistant message per step (a ``step-start`` part begins
  one, as the AI SDK cuts a message into steps), holding its ``text`` (joined by a blank
  line; ``""`` when it has none, beside calls too, as opencode sends it: the test with the
  real opencode compares with what it sent on the wire), ``reasoning`` (``reasoning_content``; a part's ``metadata``, which may carry a
  provider's signature, kept under ``source_fields``), and a call per ``tool`` part; then the
  step's tool messages, in part order.
* a tool part holds the call (``tool``, ``callID``, ``state.input``) **and** its result, by
  ``state.status``: ``completed`` -> ``state.output`` (``"[Old tool result content cleared]"``
  once opencode compacted it); ``error`` -> ``state.error``; ``pending`` / ``running`` (the
  process was killed during the call: the database keeps it so) -> ``"[Tool execution was
  interrupted]"``, the result opencode itself sends on resume, recorded
  (``interrupted_tool_result``) with the status kept under the tool message's
  ``source_fields``.
* ``step-finish``, ``snapshot``, ``patch``, ``retry``, ``agent`` parts are bookkeeping
  (markers within a message, not counted); any other part is left out, recorded whole.

Memory: one message (its parts) at a time, from the document or from the database.
"""

from __future__ import annotations

from typing import Any, Final

from .._report import Report
from ._common import SOURCE_KEY, as_text, count, describe, dumps, invalid, note_extra
from ._format import Clue, DocumentKeys, Evidence, Format

__all__ = [
    "OpencodeConverter", "message_messages", "read_export", "INTERRUPTED", "CLEARED", "COMPACTION_TEXT", "guess", "FORMAT",
]

INTERRUPTED: Final = "[Tool execution was interrupted]"
CLEARED: Final = "[Old tool result content cleared]"
COMPACTION_TEXT: Final = "What did we do so far?"

# Parts that carry no conversation (token counts, file snapshots, diffs, retries, sub-agent marks).
_BOOKKEEPING: Final = frozenset({"step-finish", "snapshot", "patch", "retry", "agent"})
# A part's or message's own ids: where it sits in the database, not what it says.
_IDS: Final = frozenset({"id", "sessionID", "messageID"})


def _state(part: dict[str, Any]) -> dict[str, Any]:
    state = part.get("state")
    return state if isinstance(state, dict) else {}


def _text_part(part: dict[str, Any]) -> dict[str, Any]:
    return {"type": "text", "text": part["text"]}


def _file_part(part: dict[str, Any]) -> dict[str, Any]:
    mime, url = part.get("mime"), part.get("url")
    if isinstance(mime, str) and mime.startswith("image/") and isinstance(url, str):
        return {"type": "image_url", "image_url": {"url": url}}
    return {k: v for k, v in part.items() if k not in _IDS}


def _user(parts: list[Any], report: Report | None, line: int | None) -> list[dict[str, Any]]:
    content: list[dict[str, Any]] = []
    for part in parts:
        kind = part.get("type")
        if kind == "text" and isinstance(part.get("text"), str):
            if part.get("ignored"):
                count(report, "skip_ignored_text")
                continue
            content.append(_text_part(part))
        elif kind == "file":
            content.append(_file_part(part))
        elif kind == "compaction":
            content.append({"type": "text", "text": COMPACTION_TEXT})
        else:
            _other(part, report, line)
    if not content:
        return []
    return [{"role": "user", "content": as_text(content)}]


def _other(part: dict[str, Any], report: Report | None, line: int | None) -> None:
    kind = part.get("type")
    if kind not in _BOOKKEEPING:  # (markers inside one message, not records: not counted)
        note_extra(report, "drop_part", f"opencode part of type {kind!r} has no chat equivalent; left out",
                   line=line, dropped=part)


def _result(part: dict[str, Any], report: Report | None, line: int | None) -> dict[str, Any]:
    """The tool message of a tool part, by its state's status."""
    state = _state(part)
    status = state.get("status")
    source: dict[str, Any] = {}
    if status == "completed":
        time = state.get("time")
        compacted = isinstance(time, dict) and time.get("compacted")
        output = state.get("output")
        text = CLEARED if compacted else output if isinstance(output, str) else dumps(output, line=line, what="a tool output")
    elif status == "error":
        error = state.get("error")
        text = error if isinstance(error, str) else dumps(error, line=line, what="a tool error")
        source = {"status": "error"}
    else:
        text = INTERRUPTED
        source = {"status": status}
        note_extra(report, "interrupted_tool_result", f"tool part {part.get('callID')!r} ({part.get('tool')}) was "
                   f"still {status!r}: given opencode's own result {INTERRUPTED!r}", line=line, dropped=None)
    msg: dict[str, Any] = {"role": "tool", "tool_call_id": part["callID"], "content": text}
    if source:
        msg[SOURCE_KEY] = source
    return msg


def _call(part: dict[str, Any], line: int | None) -> dict[str, Any]:
    if not isinstance(part.get("callID"), str) or not isinstance(part.get("tool"), str):
        raise invalid(f"a tool part needs string 'callID' and 'tool', got {describe(part)}", line=line, field="parts")
    state = _state(part)
    args = dumps(state.get("input") or {}, line=line, what="a tool part's 'state.input'")
    return {"id": part["callID"], "type": "function", "function": {"name": part["tool"], "arguments": args}}


class _Step:
    """One step of an assistant message: its text, reasoning, calls and their results."""

    __slots__ = ("texts", "reasoning", "metadata", "calls", "results")

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.reasoning: list[str] = []
        self.metadata: list[Any] = []
        self.calls: list[dict[str, Any]] = []
        self.results: list[dict[str, Any]] = []

    def empty(self) -> bool:
        return not (self.texts or self.reasoning or self.calls)

    def messages(self, extra: dict[str, Any]) -> list[dict[str, Any]]:
        if self.empty():
            return []
        # As opencode sends it: a step's text, "" when it has none -- beside calls too, which
        # is the defect of opencode's requests (``check --profile anthropic`` flags it, AN-7a;
        # ``repair`` makes it null), so it is given as sent, not mended here unseen.
        text = "\n\n".join(t for t in self.texts if t)
        msg: dict[str, Any] = {"role": "assistant", "content": text}
        if self.reasoning:
            msg["reasoning_content"] = "\n\n".join(self.reasoning)
        if self.calls:
            msg["tool_calls"] = self.calls
        source = dict(extra)
        if self.metadata:
            source["reasoning_metadata"] = self.metadata
        if source:
            msg[SOURCE_KEY] = source
        return [msg, *self.results]


def _assistant(parts: list[Any], info: dict[str, Any], report: Report | None, line: int | None) -> list[dict[str, Any]]:
    extra = {"error": info["error"]} if info.get("error") else {}
    out: list[dict[str, Any]] = []
    step = _Step()
    for part in parts:
        kind = part.get("type")
        if kind == "step-start":
            out += step.messages(extra)
            step = _Step()
        elif kind == "text" and isinstance(part.get("text"), str):
            if part.get("ignored"):
                count(report, "skip_ignored_text")
            else:
                step.texts.append(part["text"])
        elif kind == "reasoning" and isinstance(part.get("text"), str):
            if part["text"]:
                step.reasoning.append(part["text"])
            if part.get("metadata"):
                step.metadata.append(part["metadata"])
        elif kind == "tool":
            step.calls.append(_call(part, line))
            step.results.append(_result(part, report, line))
        else:
            _other(part, report, line)
    return out + step.messages(extra)


def message_messages(record: Any, report: Report | None = None, *, line: int | None = None) -> list[dict[str, Any]]:
    """The chat messages of one opencode message ``{"info", "parts"}``."""
    info = record.get("info") if isinstance(record, dict) else None
    parts = record.get("parts") if isinstance(record, dict) else None
    if not isinstance(info, dict) or info.get("role") not in ("user", "assistant") or not isinstance(parts, list):
        raise invalid(f"expected an opencode message {{info: {{role}}, parts}}, got {describe(record)}", line=line,
                      field="info.role", hint="Is this an `opencode export` file? Try another --from format")
    if not all(isinstance(p, dict) for p in parts):
        raise invalid("an opencode message's parts must be objects", line=line, field="parts")
    if info["role"] == "user":
        return _user(parts, report, line)
    return _assistant(parts, info, report, line)


class OpencodeConverter:
    """``opencode export`` messages in, chat messages out (the readers' converter protocol:
    the document's ``messages`` are the records, its ``info`` a meta value)."""

    name = "opencode"
    multi = False

    def __init__(self, report: Report | None = None, session: str | None = None) -> None:
        self.report = report
        self.session: Any = None
        # The ``session`` reader option: which session of a database to read (``_opencode_db``);
        # an export holds one, which must then be that one.
        self.wanted = session

    def meta(self, key: str, value: Any, *, line: int | None = None) -> list[dict[str, Any]]:
        if key == "info":
            self.session = value  # the session's own record: its title, model, directory
            found = value.get("id") if isinstance(value, dict) else None
            if self.wanted is not None and found != self.wanted:
                raise invalid(f"this opencode export holds session {found!r}, not {self.wanted!r}", line=line,
                              field="info.id", hint="Give the export of that session, or leave --session out")
        return []

    def feed(self, record: Any, *, line: int | None = None) -> list[dict[str, Any]]:
        return message_messages(record, self.report, line=line)

    def close(self) -> list[dict[str, Any]]:
        return []


def read_export(document: Any, report: Report | None = None) -> list[dict[str, Any]]:
    """The chat messages of a whole ``opencode export`` document (already parsed)."""
    if not isinstance(document, dict) or not isinstance(document.get("messages"), list):
        raise invalid(f"expected an opencode export {{info, messages}}, got {describe(document)}", line=None,
                      field="messages")
    conv = OpencodeConverter(report)
    conv.meta("info", document.get("info"))
    return [m for record in document["messages"] for m in conv.feed(record)]


# -- the format -----------------------------------------------------------------------------------


def guess(record: dict[str, Any]) -> Clue | None:
    """An opencode message: its ``info`` (with a ``role``) and its ``parts``."""
    info = record.get("info")
    if isinstance(info, dict) and info.get("role") in ("user", "assistant") and isinstance(record.get("parts"), list):
        return Clue(Evidence.LINE_TYPE)
    return None


# ``session``: one session of an ``opencode.db`` (all of them by default); see ``_opencode_db``.
FORMAT: Format = Format("opencode", OpencodeConverter, guess, options=("session",), per_file=True,
                # ``info``: the session's own record beside ``messages``, so that an export
                # written on one line (``json.dumps`` of it) is read as the document it is.
                document=DocumentKeys(arrays=("messages",), body_keys=("info",)))
