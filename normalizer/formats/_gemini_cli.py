"""Gemini CLI session files (``~/.gemini/tmp/<project>/chats/session-*.jsonl``) -> chat messages.

The replay is the one Gemini CLI 0.61.0 does on ``--resume`` (bundle
``packages/core/src/services/chatRecordingService.ts`` ``loadConversationRecord``, then
``packages/core/src/utils/sessionUtils.ts`` ``convertSessionToClientHistory``; research:
``../shared/research/agents-in-the-wild.md`` §1). Each line is one JSON record, tested in
this order:

1. ``{"$rewindTo": id}``: that message and every one after it go; an id not held clears all.
2. a record with a string ``id``: a message. The last record of an id wins, **in the place of
   the first** (a JavaScript ``Map.set``; a Python dict keeps that order too). The CLI writes
   a ``gemini`` record without its calls, then again with ``toolCalls`` (and again with
   ``tokens``).
3. ``{"$set": {...}}``: a metadata update; a ``$set.messages`` array **replaces** every
   message so far (the CLI writes one when it rewrites its history: on resume, compression).
4. a record with string ``sessionId`` and ``projectHash``: metadata (the first line; a
   resume appends another); its ``messages``, if any (an old single-object ``.json`` file
   read as one record), are added.

Anything else is skipped and counted, as the CLI ignores it. Messages are then converted as
the CLI converts them for the model (``convertSessionToClientHistory``):

* ``info`` / ``error`` / ``warning``: UI only, skipped (counted).
* ``user``: ``content`` (a string or Gemini parts); ``functionResponse`` parts become tool
  messages, the other parts one user message. A user text the CLI never sends (empty, a
  ``/`` command, a ``?`` help) is left out, recorded whole (``drop_command``). The CLI also
  leaves out ``<session_context>`` / ``<hook_context>`` texts on resume, because it makes a
  fresh context; they were sent when recorded and are kept here.
* ``gemini``: when its ``content`` parts hold a ``functionCall`` or ``thought`` part (records
  the CLI rewrote from its history), those parts are the turn; else ``thoughts[]`` become
  thought parts (``**subject** description``, as the CLI sends them: ``reasoning_content``,
  and ``thought_parts``), then ``content``, then one call per ``toolCalls[]``.
  A turn with no parts is not sent (the empty record written before a streamed answer).
  After the turn, every ``toolCalls[].result`` (a string: ``{"output": ...}``; parts; one
  part) becomes tool messages, as the CLI's synthetic ``<id>_response`` user turn.

**Why a healthy file gets its function responses twice.** The CLI records each tool round
twice: the results go into the ``gemini`` record's ``toolCalls[].result`` (``recordToolCalls``)
*and* the same ``functionResponse`` parts are recorded as the next ``user`` message (they
were the next request's user turn). ``convertSessionToClientHistory`` replays both: the
``<id>_response`` turn it makes from ``toolCalls[].result``, then the recorded user message.
``GeminiChat.makeApiCallAndProcessStream`` then merges consecutive same-role turns
(``coalesceConsecutiveRoles``), so the request holds ``model[call] -> user[response,
response]`` and Gemini answers 400 "Please ensure that the number of function response parts
is equal to the number of function call parts of the function call turn."
(google-gemini/gemini-cli#29365). ``setHistory`` on resume also writes the history back as a
``$set.messages`` line with the synthetic ``<id>_response`` user message beside the recorded
one, so the file stays broken for every later resume. What Gemini accepts: after a model turn
of N calls, one user turn of exactly N responses (matched by position and name, and id).
A call without ``result`` (killed mid-batch, or not recorded) is sent with no response at
all (the CLI's placeholder responses, ``hardenHistory``, run only with context management).
Here both responses come out as tool messages of the same call id, each with its
:class:`Origin`, and the core drops the second (``drop_duplicate_result``) and stubs the
missing one: an in-format repair edits the lines those origins name.

**Memory.** This format cannot be streamed in one pass: a later ``$set.messages`` replaces
everything, a ``$rewindTo`` removes messages back to any earlier one, and a later record of an
id replaces an earlier message in its place; so no message is final before the end of the
file. Read once (stdin), the replay holds the live messages (what the CLI itself holds: it
reads the whole file into a ``Map``), at most ``max_history_bytes`` of their JSON (the record
that would go past it is refused with :class:`~normalizer.LimitExceeded`), and the chat
messages come out at :meth:`GeminiCliConverter.close`. A file can be read twice: a first pass
(:class:`GeminiCliPlanner`, holding each live message's id, line and index, ~100 bytes a
message, not its record) finds where every live message is, and the second gives each out as
soon as the ones before it have -- message by message for the files the CLI writes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final

from .._errors import LimitExceeded
from .._json import JSONDecodeError, loads
from .._json import dumps as exact_dumps
from .._report import Report
from ._common import SOURCE_KEY, count, describe, invalid, note_extra
from ._format import Clue, Evidence, Format, Output
from ._gemini import Calls, model_message, tool_message, user_part
from ._records import DEFAULT_MAX_LINE_BYTES, LineSplitter

__all__ = [
    "GeminiCliConverter", "GeminiCliReplay", "GeminiCliPlan", "GeminiCliPlanner", "GeminiCliFilePlanner", "plan_gemini_cli", "Entry",
    "Origin", "entry_messages", "record_entries", "is_metadata",
    "DEFAULT_MAX_HISTORY_BYTES", "MESSAGE_TYPES", "guess", "FORMAT",
]

#: The most the live messages of one session hold, in bytes of their JSON. No real session
#: comes near it (the CLI compresses its history long before: Gemini's context is ~1M tokens).
DEFAULT_MAX_HISTORY_BYTES: Final = 512 * 1024 * 1024

#: Message types Gemini CLI writes (``chatRecordingTypes.ts``). Used by format detection.
MESSAGE_TYPES: Final = frozenset({"user", "gemini", "info", "error", "warning"})

# Message record keys the conversion consumes, or the CLI's bookkeeping, which the file keeps
# and an Origin points to (kept on the messages, a timestamp would make every merge of two
# user records a recorded conflict); any other key is kept under source_fields.
_CONSUMED = frozenset({"id", "timestamp", "type", "content", "displayContent", "thoughts", "tokens", "model", "toolCalls"})
_CALL_CONSUMED = frozenset({
    "id", "name", "args", "result", "status", "timestamp", "resultDisplay", "description", "displayName",
    "renderOutputAsMarkdown",
})


@dataclass(frozen=True, slots=True)
class Entry:
    """One live message record and where it is in the file."""

    record: dict[str, Any]
    line: int | None
    """The line of the record, or of the ``$set`` / metadata record holding it."""
    index: int | None
    """Its index in that line's ``messages`` array (None: the line is the message)."""


@dataclass(frozen=True, slots=True)
class Origin:
    """Where a chat message came from, for an in-format repair to edit the file."""

    line: int | None
    id: str
    """The message record's ``id``."""
    index: int | None
    """As :attr:`Entry.index`."""
    where: str
    """The part of the record: ``""`` (all of it), ``"content[2]"`` (one part),
    ``"content"`` (the parts that are not responses), ``"toolCalls[0].result[0]"``."""


def is_metadata(record: Any) -> bool:
    """A session's metadata record (``sessionId`` and ``projectHash`` strings)."""
    return isinstance(record, dict) and isinstance(record.get("sessionId"), str) and isinstance(record.get("projectHash"), str)


def record_entries(record: Any, line: int | None) -> list[Entry]:
    """The messages a record holds: a message line itself, each of a ``$set.messages`` or of
    a metadata record's ``messages`` (a record the replay does not hold messages of: none)."""
    if not isinstance(record, dict) or isinstance(record.get("$rewindTo"), str):
        return []
    if isinstance(record.get("id"), str):
        return [Entry(record, line, None)]
    if isinstance(record.get("$set"), dict):
        messages = record["$set"].get("messages")
    elif is_metadata(record):
        messages = record.get("messages")
    else:
        return []
    if not isinstance(messages, list):
        return []
    return [Entry(m, line, i) for i, m in enumerate(messages) if isinstance(m, dict) and isinstance(m.get("id"), str)]


def _recognised(record: Any) -> bool:
    """A record of a kind the CLI reads (the reader's "was anything recognised?")."""
    return isinstance(record, dict) and (
        isinstance(record.get("$rewindTo"), str) or isinstance(record.get("id"), str)
        or isinstance(record.get("$set"), dict) or is_metadata(record))


_SLOT: Final[dict[str, Any]] = {}  # what the planner holds of a record: nothing


class GeminiCliReplay:
    """Records in, the live messages out (sans-I/O): ``loadConversationRecord``'s replay.

    Args:
        max_history_bytes: the most the live messages hold, in bytes of their JSON.
        keep: hold the records (False: only where each live message is, for a
            :class:`GeminiCliPlan`: its id, line and index, ~100 bytes a message, unbounded).

    Raises:
        LimitExceeded: the record that would take the live messages past ``max_history_bytes``.
    """

    def __init__(self, *, max_history_bytes: int = DEFAULT_MAX_HISTORY_BYTES, keep: bool = True) -> None:
        self.max_history_bytes = max_history_bytes
        self.keep = keep
        self.messages: dict[str, Entry] = {}  # insertion-ordered, as the CLI's Map
        self._sizes: dict[str, int] = {}
        self._held = 0
        #: A metadata record was seen (the CLI refuses a file without one: legacy fallback).
        self.metadata = False
        #: Records of no kind the CLI reads (the reader's "was anything recognised?").
        self.unrecognised = 0

    def feed(self, record: Any, *, line: int | None = None) -> None:
        # The CLI's order of tests: a rewind, a message (a string id), an update, metadata.
        if not _recognised(record):
            self.unrecognised += 1
        elif isinstance(record.get("$rewindTo"), str):
            self._rewind(record["$rewindTo"])
        elif isinstance(record.get("id"), str):
            self._set(Entry(record, line, None), line)
        else:
            if isinstance(record.get("$set"), dict):
                if isinstance(record["$set"].get("messages"), list):
                    self.messages, self._sizes, self._held = {}, {}, 0  # replaces every message so far
            else:
                self.metadata = True  # its messages, if any, are added
            for entry in record_entries(record, line):
                self._set(entry, line)

    def _set(self, entry: Entry, line: int | None) -> None:
        key = entry.record["id"]
        if not self.keep:
            self.messages[key] = Entry(_SLOT, entry.line, entry.index)
            return
        size = _size(entry.record)
        held = self._held - self._sizes.get(key, 0) + size
        if held > self.max_history_bytes:
            raise LimitExceeded(
                f"the session's live messages would hold more than {self.max_history_bytes} bytes of JSON",
                limit="max_history_bytes", value=self.max_history_bytes, line=line,
                hint="A Gemini CLI session is replayed whole (a later line can change any message); raise "
                "max_history_bytes if this session really is that large, or read the file itself (two passes)",
            )
        self.messages[key] = entry  # an id held already keeps its place, as Map.set does
        self._sizes[key] = size
        self._held = held

    def _rewind(self, target: str) -> None:
        keys = list(self.messages)
        cut = keys.index(target) if target in self.messages else 0  # not found: all of it
        for key in keys[cut:]:
            del self.messages[key]
            self._held -= self._sizes.pop(key, 0)

    def entries(self) -> list[Entry]:
        return list(self.messages.values())


def _size(record: dict[str, Any]) -> int:
    try:
        return len(exact_dumps(record))
    except TypeError:  # nested past orjson's depth: counted roughly, never refused for it
        return len(repr(record))


def _parts(content: Any) -> list[Any]:
    """``ensurePartArray``: a string is one text part, a part a list of one."""
    if content is None or content == "":
        return []
    if isinstance(content, str):
        return [{"text": content}]
    if isinstance(content, list):
        return [{"text": p} if isinstance(p, str) else p for p in content]
    return [content]


def _verbose(part: Any) -> str:
    """``partToString(part, {verbose: true})``: what the CLI tests a user record's text with."""
    if isinstance(part, str):
        return part
    if not isinstance(part, dict):
        return ""
    for key, label in (("videoMetadata", "[Video Metadata]"), ("codeExecutionResult", "[Code Execution Result]"),
                       ("executableCode", "[Executable Code]"), ("fileData", "[File Data]")):
        if key in part and part[key] is not None:
            return label
    if part.get("thought") is not None:
        return f"[Thought: {part['thought']}]"
    for key, label in (("functionCall", "Function Call"), ("functionResponse", "Function Response")):
        if isinstance(part.get(key), dict):
            return f"[{label}: {part[key].get('name')}]"
    if part.get("inlineData") is not None:
        return "[Media]"
    text = part.get("text")
    return text if isinstance(text, str) else ""


def _ignored(content: Any) -> bool:
    """``isIgnoredUserContent`` less the context texts (see the module docstring)."""
    text = "".join(_verbose(p) for p in content) if isinstance(content, list) else _verbose(content) if content else ""
    text = text.strip()
    return not text or text.startswith(("/", "?"))


def _user(entry: Entry, calls: Calls, report: Report | None) -> list[tuple[dict[str, Any], Origin]]:
    record, line = entry.record, entry.line
    origin = Origin(line, record["id"], entry.index, "")
    if _ignored(record.get("content")):
        note_extra(report, "drop_command", "user text Gemini CLI never sends to the model (empty, a / command or "
                   "? help): left out", line=line, dropped=record)
        return []
    out: list[tuple[dict[str, Any], Origin]] = []
    rest: list[Any] = []
    for i, part in enumerate(_parts(record.get("content"))):
        if isinstance(part, dict) and "functionResponse" in part:
            out.append((tool_message(part, calls, report, line=line), _at(origin, f"content[{i}]")))
        else:
            rest.append(user_part(part, line))
    extra = {k: v for k, v in record.items() if k not in _CONSUMED}
    if rest:
        msg: dict[str, Any] = {"role": "user", "content": _text_or_parts(rest)}
        if extra:
            msg[SOURCE_KEY] = extra
        out.append((msg, _at(origin, "content" if out else "")))
    elif out and extra:
        out[0][0].setdefault(SOURCE_KEY, {}).update(extra)  # (record fields ride on its first response)
    return out


def _text_or_parts(parts: list[dict[str, Any]]) -> Any:
    if len(parts) == 1 and parts[0].get("type") == "text" and len(parts[0]) == 2:
        return parts[0]["text"]
    return parts


def _at(origin: Origin, where: str) -> Origin:
    return Origin(origin.line, origin.id, origin.index, where)


def _model_parts(record: dict[str, Any], line: int | None) -> list[Any]:
    """The model turn's parts, as ``convertSessionToClientHistory`` builds them."""
    content = _parts(record.get("content"))
    if any(isinstance(p, dict) and (p.get("functionCall") or p.get("thought")) for p in content):
        return content  # a record the CLI rewrote from its history: its parts are the turn
    parts: list[Any] = []
    for thought in record.get("thoughts") or ():
        if isinstance(thought, dict):
            subject, description = thought.get("subject"), thought.get("description")
            text = description if isinstance(description, str) else ""
            parts.append({"text": f"**{subject}** {text}" if subject else text, "thought": True})
    parts += content
    for call in _tool_calls(record, line):
        parts.append({"functionCall": {"id": call.get("id"), "name": call.get("name"), "args": call.get("args")}})
    return parts


def _tool_calls(record: dict[str, Any], line: int | None) -> list[dict[str, Any]]:
    calls = record.get("toolCalls") or []
    if not isinstance(calls, list) or not all(isinstance(c, dict) for c in calls):
        raise invalid(f"'toolCalls' is {describe(calls)}, expected a list of calls", line=line, field="toolCalls")
    return calls


def _gemini(entry: Entry, calls: Calls, report: Report | None) -> list[tuple[dict[str, Any], Origin]]:
    record, line = entry.record, entry.line
    origin = Origin(line, record["id"], entry.index, "")
    parts = _model_parts(record, line)
    if not parts:
        count(report, "skip_empty_gemini")  # the CLI sends no turn for it (nor its results)
        return []
    tool_calls = _tool_calls(record, line)
    extra = {k: v for k, v in record.items() if k not in _CONSUMED}
    msg = model_message(parts, calls, report, line=line, extra=extra)
    for call in msg.get("tool_calls") or ():  # each call's record fields, under its source_fields
        source = next((c for c in tool_calls if c.get("id") == call["id"]), None)
        fields = {k: v for k, v in (source or {}).items() if k not in _CALL_CONSUMED}
        if fields:
            call.setdefault(SOURCE_KEY, {}).update(fields)
    out = [(msg, origin)]
    rest: list[Any] = []
    for k, call in enumerate(tool_calls):
        for j, part in enumerate(_result_parts(call)):
            if isinstance(part, dict) and "functionResponse" in part:
                out.append((tool_message(part, calls, report, line=line), _at(origin, f"toolCalls[{k}].result[{j}]")))
            else:
                rest.append(user_part(part, line))
    if rest:  # media a tool gave (an image read_file read): the user turn after the responses
        out.append(({"role": "user", "content": _text_or_parts(rest)}, _at(origin, "toolCalls")))
    return out


def _result_parts(call: dict[str, Any]) -> list[Any]:
    """A tool call's ``result`` as the parts the CLI sends (none when it has no result)."""
    result = call.get("result")
    if not result:
        return []
    if isinstance(result, str):
        return [{"functionResponse": {"id": call.get("id"), "name": call.get("name"), "response": {"output": result}}}]
    return _parts(result)


def entry_messages(entry: Entry, calls: Calls, report: Report | None = None) -> list[tuple[dict[str, Any], Origin]]:
    """The chat messages of one live message record, each with where it came from
    (``calls``: the pairing state, one per session)."""
    kind = entry.record.get("type")
    if kind == "user":
        return _user(entry, calls, report)
    if kind == "gemini":
        return _gemini(entry, calls, report)
    count(report, f"skip_{kind}" if isinstance(kind, str) and kind in MESSAGE_TYPES else "skip_unknown_message")
    return []


@dataclass(frozen=True, slots=True)
class GeminiCliPlan:
    """Where each live message of a session file is, in the CLI's order: what a first pass
    over the file finds (:class:`GeminiCliPlanner`), so that the second streams."""

    order: tuple[tuple[int | None, int | None], ...]
    """``(line, index)`` of each live message (:class:`Entry`), in order."""

    @property
    def empty(self) -> bool:
        """No live message: one pass reads the file as well (``Reader.set_plan``)."""
        return not self.order


class GeminiCliPlanner:
    """The first pass: records in (with their line numbers), a :class:`GeminiCliPlan` out.
    Holds each live message's id, line and index, not its record."""

    def __init__(self) -> None:
        self._replay = GeminiCliReplay(keep=False)

    def feed(self, record: Any, *, line: int) -> None:
        self._replay.feed(record, line=line)

    def result(self) -> GeminiCliPlan:
        return GeminiCliPlan(tuple((e.line, e.index) for e in self._replay.entries()))


class GeminiCliFilePlanner:
    """The readers' first pass (``Reader.plan_scan``): a session file's raw bytes in, fed in
    chunks, a :class:`GeminiCliPlan` out. Lines are numbered as the main pass numbers them;
    a line that is no JSON is passed over (the main pass reports it, with its position)."""

    def __init__(self, *, source: str = "<input>", max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> None:
        self._lines = LineSplitter(source=source, max_line_bytes=max_line_bytes)
        self._planner = GeminiCliPlanner()

    def feed(self, chunk: bytes) -> None:
        line = self._lines.line
        for raw in self._lines.feed(chunk):
            line += 1
            self._line(line, raw)

    def close(self) -> GeminiCliPlan:
        line = self._lines.line
        for raw in self._lines.close():
            self._line(line + 1, raw)
        return self._planner.result()

    def _line(self, line: int, raw: bytes) -> None:
        if raw.strip():
            try:
                record = loads(raw)
            except JSONDecodeError:
                return
            self._planner.feed(record, line=line)


def plan_gemini_cli(records: Iterable[tuple[int, Any]]) -> GeminiCliPlan:
    """Plan a session file from its decoded records ``(line number, record)``."""
    planner = GeminiCliPlanner()
    for line, record in records:
        planner.feed(record, line=line)
    return planner.result()


class GeminiCliConverter:
    """Session records in, chat messages out. ``origins`` holds each message's
    :class:`Origin`, in the order the messages were given out.

    Without a plan (one pass: stdin), the whole file decides every message, so they all come
    out at :meth:`close`, the live messages held until then (``max_history_bytes``). With the
    :class:`GeminiCliPlan` of a first pass over the same file (the same line numbers), each
    message comes out as soon as the messages before it in the CLI's order have: only a
    message whose id a later line rewrote in an earlier place waits (CLI-written files have
    none: an id repeats while it is the last message), within ``max_history_bytes``.

    Args:
        report: where skips and notes are recorded.
        plan: the result of :func:`plan_gemini_cli` over the same file, or None.
        max_history_bytes: the most the messages held hold, in bytes of their JSON.
    """

    name = "gemini-cli"
    multi = False

    def __init__(self, report: Report | None = None, *, plan: GeminiCliPlan | None = None,
                 max_history_bytes: int = DEFAULT_MAX_HISTORY_BYTES) -> None:
        self.report = report
        self.replay = GeminiCliReplay(max_history_bytes=max_history_bytes)
        self.origins: list[Origin] = []
        self._calls = Calls()
        self.plan = plan
        self._next = 0  # the plan's next message to give out
        self._waiting: dict[int, Entry] = {}  # messages read before their turn, by place in the plan
        self._waiting_bytes = 0
        self._unrecognised = 0

    @property
    def plan(self) -> GeminiCliPlan | None:
        """The first pass's plan (None: one pass); given before the first record (the reader
        sets it from ``Reader.set_plan``)."""
        return self._plan

    @plan.setter
    def plan(self, plan: GeminiCliPlan | None) -> None:
        self._plan = plan
        self._slots = {slot: k for k, slot in enumerate(plan.order)} if plan is not None else {}

    @property
    def unrecognised(self) -> int:
        return self.replay.unrecognised + self._unrecognised

    def feed(self, record: Any, *, line: int | None = None) -> list[dict[str, Any]]:
        if self.plan is None:
            self.replay.feed(record, line=line)
            return []
        if not _recognised(record):
            self._unrecognised += 1
        for entry in record_entries(record, line):
            k = self._slots.get((line, entry.index))
            if k is not None:  # a live message (the others a later line removes or replaces)
                self._wait(k, entry, line)
        return self._release()

    def _wait(self, k: int, entry: Entry, line: int | None) -> None:
        self._waiting[k] = entry
        if k != self._next:
            self._waiting_bytes += _size(entry.record)
            if self._waiting_bytes > self.replay.max_history_bytes:
                raise LimitExceeded(
                    f"the messages waiting for their place would hold more than {self.replay.max_history_bytes} "
                    "bytes of JSON", limit="max_history_bytes", value=self.replay.max_history_bytes, line=line,
                    hint="A later line rewrote these messages' ids in earlier places; raise max_history_bytes")

    def _release(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        while self._next in self._waiting:
            entry = self._waiting.pop(self._next)
            self._next += 1
            out += self._convert(entry)
        if not self._waiting:
            self._waiting_bytes = 0
        return out

    def _convert(self, entry: Entry) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for msg, origin in entry_messages(entry, self._calls, self.report):
            out.append(msg)
            self.origins.append(origin)
        return out

    def close(self) -> list[dict[str, Any]]:
        # ($rewindTo and $set.messages are the format's own history control, applied as the
        # CLI applies them: not repairs, not counted.)
        if self.unrecognised:
            count(self.report, "skip_unknown_line")
        out: list[dict[str, Any]] = []
        if self.plan is None:
            for entry in self.replay.entries():
                out += self._convert(entry)
            self.replay.messages.clear()
            return out
        missing = len(self.plan.order) - self._next - len(self._waiting)
        if missing:  # the file is not the one planned (it changed in between): what was read
            note_extra(self.report, "plan_mismatch", f"{missing} message(s) of the first pass were not found on the "
                       "second (did the file change in between?)", line=None, dropped=None)
        for k in sorted(self._waiting):
            out += self._convert(self._waiting.pop(k))
        return out


# -- the format -----------------------------------------------------------------------------------


def guess(record: dict[str, Any]) -> Clue | None:
    """A session's metadata record, a ``$set`` / ``$rewindTo`` record, or a message record
    of a Gemini CLI type (a string ``id`` and ``timestamp``)."""
    if is_metadata(record) or isinstance(record.get("$set"), dict) or isinstance(record.get("$rewindTo"), str):
        return Clue(Evidence.LINE_TYPE)
    kind = record.get("type")
    if isinstance(kind, str) and kind in MESSAGE_TYPES and isinstance(record.get("id"), str) and "timestamp" in record:
        return Clue(Evidence.LINE_TYPE)
    return None


FORMAT: Format = Format("gemini-cli", GeminiCliConverter, guess, outputs=(Output("gemini-cli", 80, dialect="_session_gemini.GeminiCli"),),
                planner=GeminiCliFilePlanner)
