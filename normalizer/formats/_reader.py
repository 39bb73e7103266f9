"""The reader: a file's bytes in, chat messages and a few events out (sans-I/O).

:class:`Reader` is every decision a read makes, written once; the sync and async readers
(``_read``) only fetch bytes and pump them through it, as httpx's ``sync_auth_flow`` and
``async_auth_flow`` pump one ``auth_flow``. Its whole surface:

* ``feed(chunk) -> list[Event]``; ``close() -> list[Event]`` at the end of the file.
* ``feed_value(value) -> list[Event]``: a record already in memory (a Responses item, an
  OpenAI SDK object...) instead of bytes; the same decisions follow.
* ``wants_plan``: the reader needs a first pass over the file. The Codex converter does
  (history control removes lines that came before it, see ``_codex``), and so does a JSON
  document whose record array begins before its ``system`` / ``instructions`` /
  ``system_prompt`` key might (see "A system prompt after the messages" below). The driver
  reads the file again from its start into :meth:`Reader.plan_scan`'s planner, the same way
  in both drivers, and hands the plan over with :meth:`Reader.set_plan` (None when the
  input cannot be read twice). Records wait in the reader meanwhile.
* ``done``: ``close()`` (and a plan it waited for) has given everything.

Theory of operation. The first bytes say the container (``_records.sniff``): JSONL or a
JSON document. The first records say the format (``_detect``), unless it was given; until
then they wait, as they do for a Codex plan. (A caller that has looked at the head already
tells the reader what it found, :class:`Head`: the command line, which must know whether a
file is a session before it chooses what repairs it.) Then each record goes to the format's
converter, and what it returns goes out, **preceded by the record's place** (a JSONL line
number, or a document's :class:`~._records.DocPlace`), so the consumer knows where the
messages that follow came from without a wrapper object per message.

The events, in the order they come, are :data:`~._events.Event`'s kinds (see ``_events``).

A system prompt after the messages (Claude Code writes ``{"model", "messages", "system"}``)
is given before them: by a first pass over the file, or by holding the records (see ``_keys``).

Nothing recognised. A file of records none of which the format's converter knows (Codex
lines read as Claude Code, a Claude session read as Responses items...) is an
:class:`InputError` at the end, naming the format tried and the one the records look like;
an empty file is an empty history. A converter says it did not know a record by raising (the
record is refused) or by counting it in its ``unrecognised`` attribute (unknown line types
and items, which it leaves out).

The hot path is a chat JSONL line once the format is known: jiter's parse (not orjson's,
which turns integers past 64 bits into floats: see ``.._json``), two C-speed counts that
clear it of deep nesting, one shape test and two appends, all inside the loop over a
chunk's lines (:meth:`Reader._jsonl`). The shape test is the one
:class:`~._chat.ChatConverter` makes, whose ``feed`` returns such a record unchanged;
anything else goes to the converter itself, which says what is wrong with it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, Literal

import orjson

from .._errors import InputError, UsageError
from .._json import JSONDecodeError, from_json, refused
from .._messages import as_message
from .._report import Report
from ._claude import Sidechain
from .._depth import deeper_than
from ._detect import DETECT_RECORDS, SESSION_FORMATS, Guess, decide, guess, nothing_recognised
from ._document import DocReader
from ._events import SYSTEM_KEYS, Conversation, Event, Head, Limits, OnInvalid, check_arguments, document_hint
from ._events import own_key, system_meta
from ._keys import KeysScanner
from ._records import (
    BOM,
    DocPlace,
    LineSplitter,
    Meta,
    Place,
    Record,
    Sniffer,
    column_of,
    keys_held_too_long,
    nesting_at,
    not_json,
    position_of,
    too_deep,
)
from ._registry import BY_NAME, FORMATS, READER_OPTIONS, body_keys

__all__ = ["FORMATS", "Limits", "Head", "Reader", "Conversation", "Sidechain", "Event", "OnInvalid"]

_NO_PLACE: Final = None  # an in-memory record's place: nowhere in a file
_REFUSED: Final = object()  # what _unparsed gives for a line it refused (and skipped)


class Reader:
    """Bytes in, chat messages and events out, for one file (see the module docstring).

    Args:
        fmt: ``"auto"`` or a key of :data:`FORMATS`.
        report: where skips, conversion notes and the format (``report.format``) go.
        on_invalid: ``"error"`` raises on a bad line or record; ``"skip"`` leaves it out
            and records it (``skip_invalid``).
        limits: the reader's limits.
        options: converter options (``keep_sidechains``, ``keep_meta``,
            ``base_instructions``).
        source: how errors name the file (the drivers set it once the file is open).
        head: with ``fmt="auto"``, what a look at the file's head already told (see
            :class:`Head`).

    Raises:
        UsageError: an unknown format, ``on_invalid`` value or option (at construction,
            before any byte is read).
    """

    def __init__(
        self,
        fmt: str = "auto",
        *,
        report: Report,
        on_invalid: OnInvalid = "error",
        limits: Limits = Limits(),
        options: dict[str, Any] | None = None,
        source: str = "<input>",
        head: Head | None = None,
    ) -> None:
        options = options or {}
        check_arguments(fmt, head, on_invalid, options)
        self.source = source
        self.report = report
        self.on_invalid = on_invalid
        self.limits = limits
        self.options = options
        #: The format read: given, or detected from the first records (None until then).
        self.format: str | None = None
        #: How the file holds its records, once its first bytes are read: ``"jsonl"``, or a
        #: JSON document that is an ``"array"`` or an ``"object"`` (None until then).
        self.container: str | None = None
        #: The driver must hand over a plan (:meth:`plan_scan`, :meth:`set_plan`).
        self.wants_plan = False
        self._plan_kind: Literal["codex", "keys"] | None = None
        self._holding = False  # a stream's records held until its document's keys are known
        self._hold_start = 0
        self._early: set[str] = set()  # keys the first pass gave: skipped when the main pass meets them
        self._system_given = False  # a system key was converted (it came before the records)
        #: Everything was given out: nothing is fed any more.
        self.done = False
        self._closing = False
        self._sniffer: Sniffer | None = None
        self._told: str | None = None  # the container told (head): the first chunk opens it
        if head is None:
            told = BY_NAME.get(fmt)
            self._sniffer = Sniffer(limits.max_line_bytes, body_keys=body_keys(told))
        else:
            self._told = head.container
        self._lines: LineSplitter | None = None
        self._doc: DocReader | None = None
        self._pending: list[Record | Meta] = []  # records waiting for the format or a plan
        # The Records among them, kept as they come: detection looks at these, and a
        # document's keys (Meta) do not make it look again (one look per record, not per key).
        self._waiting: list[Record] = []
        self._guesses: dict[int, Guess] = {}  # guess() of waiting records, by number
        # JSONL records given to a converter, for a conversation's index (the chat fast path
        # skips the count: a chat file is one conversation); a document's walker counts its own.
        self._index = 0
        self._converter: Any = None
        # Looked up once the converter is chosen, not per record (see _choose).
        self._plain_chat = False
        self._multi = False
        self._feed: Callable[..., list[dict[str, Any]]] | None = None
        self._meta: Callable[..., list[dict[str, Any]]] | None = None
        self._take_sidechains: Callable[[], list[Sidechain]] | None = None
        # Was any record recognised? Until one is, what the others looked like (the error).
        self._seen = False
        self._recognised = False
        self._misses: list[Guess] = []
        if fmt != "auto":
            self._choose(fmt)
        elif head is not None and head.format is not None and not BY_NAME[head.format].planned:
            # Chosen before the first record, which then goes straight to the converter. Not
            # one with a plan: detected, it asks for the plan once the first chunk is read
            # (that chunk's bad lines refused first); chosen here, before any (its records
            # then refused or converted in their order): another first error. Detected, then.
            self._choose(head.format)

    # -- the surface ------------------------------------------------------------------------

    def feed(self, chunk: bytes) -> list[Event]:
        """The events a chunk of the file completes (``b""`` is not the end: use :meth:`close`)."""
        if self._closing:
            raise UsageError("Reader.feed() after close()")
        if self._lines is not None:  # the common case first
            line = self._lines.line
            return self._jsonl(self._lines.feed(chunk), line)
        if self._doc is not None:
            return self._document(self._doc.feed(chunk))
        if self._told is not None:
            return self._open(self._told, chunk)
        assert self._sniffer is not None
        kind = self._sniffer.feed(chunk)
        return [] if kind == "auto" else self._open(kind, self._sniffer.head)

    def close(self) -> list[Event]:
        """The end of the file: the events still held (all of them, unless :attr:`wants_plan`)."""
        if self._closing:
            raise UsageError("Reader.close() called twice")
        out: list[Event] = []
        if self._sniffer is not None:  # the container is still unknown: it is now
            out = self._open(self._sniffer.feed(b""), self._sniffer.head)
        elif self._told is not None:  # told, and no byte came: an empty file
            out = self._open(self._told, b"")
        if self._lines is not None:
            line = self._lines.line
            out += self._jsonl(self._lines.close(), line)
        elif self._doc is not None:
            out += self._document(self._doc.close())
        self._closing = True
        if self._holding:
            self._release()  # the document ended: its keys are known
        return out + self._go_on()

    def feed_value(self, value: Any) -> list[Event]:
        """The events a record given in memory completes (a dict, or an object with
        ``model_dump``, such as the OpenAI SDK's Responses items); :meth:`close` at the end."""
        if self._closing:
            raise UsageError("Reader.feed_value() after close()")
        self._sniffer = self._told = None  # no bytes: no container to sniff
        if type(value) is not dict:
            value = as_message(value)
        out: list[Event] = []
        if self._converter is not None and not self.wants_plan:
            self._convert(value, _NO_PLACE, self._index, out)
        else:
            self._record(Record(value, _NO_PLACE, self._index), out)
        self._index += 1
        return out

    def plan_scan(self) -> Any:
        """A planner to feed the whole file again, from its start (see ``wants_plan``): the
        document's keys, or the format's own first pass (its ``planner``)."""
        if self._plan_kind == "keys":
            return KeysScanner(SYSTEM_KEYS, max_depth=self.limits.max_depth)
        assert self.format is not None
        planner = BY_NAME[self.format].planner
        assert planner is not None
        return planner(source=self.source, max_line_bytes=self.limits.max_line_bytes)

    def set_plan(self, plan: Any) -> list[Event]:
        """The plan :meth:`plan_scan`'s planner made (None: the input could not be read twice);
        gives the records that waited for it. A Codex plan without a second pass: history
        control is recorded, not applied. A document's keys without one: its records are
        held until the keys are known."""
        if not self.wants_plan:
            raise UsageError("Reader.set_plan() without wants_plan")
        self.wants_plan = False
        kind, self._plan_kind = self._plan_kind, None
        if kind == "keys":
            if plan is None:
                self._holding = True
                self._hold_start = self._doc.consumed if self._doc is not None else 0
                if self._closing:
                    self._release()  # the document has ended: its keys are known
            else:
                self._take_keys(plan)
        elif plan is not None and not plan.empty:
            self._converter.plan = plan
        return self._go_on()

    def _go_on(self) -> list[Event]:
        """After the end of the file or a plan: whatever can now be given out."""
        out: list[Event] = []
        if self.wants_plan or self._holding:
            return out
        if self._converter is None:
            self._detect(final=self._closing)
            if self.wants_plan:
                return out  # detection chose Codex: its plan first
        if self._converter is not None:
            self._replay(out)
        if self._closing:
            out += self._finish()
        return out

    # -- containers -------------------------------------------------------------------------

    def _open(self, kind: str, head: bytes) -> list[Event]:
        """Read on in the container the first bytes (``head``) say."""
        self._sniffer = self._told = None
        if head.startswith(BOM):
            head = head[3:]
        self.container = "jsonl" if kind != "document" else "array" if head.lstrip()[:1] == b"[" else "object"
        if kind == "document":
            self._doc = DocReader(self.source, max_depth=self.limits.max_depth, max_record_bytes=self.limits.max_record_bytes)
            return self._document(self._doc.feed(head))
        # JSONL, or an empty file (an empty JSONL file)
        self._lines = LineSplitter(source=self.source, max_line_bytes=self.limits.max_line_bytes)
        return self._jsonl(self._lines.feed(head), 0)

    def _jsonl(self, pieces: list[bytes], line: int) -> list[Event]:
        """The events of JSONL lines; ``line``: the number of the line before the first."""
        out: list[Event] = []
        append = out.append
        loads = from_json  # jiter: integers past 64 bits exact, which orjson makes floats (see _json)
        max_depth = self.limits.max_depth
        gate = 2 * max_depth  # a line shorter than this cannot hold max_depth + 1 brackets
        chat = self._plain_chat
        direct = self._converter is not None and not self.wants_plan
        count_first = self._multi  # (see the depth check below)
        for raw in pieces:
            line += 1
            try:
                value = loads(raw, allow_inf_nan=False)  # the line keeps its newline: whitespace to it
            except ValueError:
                if not raw or raw.isspace():  # a blank line carries nothing (isspace: no copy)
                    continue
                value = self._unparsed(raw, line)
                if value is _REFUSED:
                    continue
            # Nesting costs a bracket a level. A line too short to hold max_depth + 1 of them,
            # or holding one at most (two memchr scans: no "[", no "{" past the first byte;
            # the bytes as ints, since ``b"[" in raw`` first tries its operand as an int and
            # raises and clears a TypeError, ~100 ns a line), is cleared as it is; the rest
            # have their parsed value walked. A chat message has few containers, and walking
            # it costs what counting its brackets does (less on a long one). A line of a
            # multi-conversation format is a whole conversation, dozens
            # of containers (7 us to walk 2 KB, 3 us to count its brackets): it is cleared by
            # its count when that is max_depth or less (a bracket in a string only adds to
            # it), and walked only past that. Only a line found too deep is tokenized, for
            # the column.
            if (
                len(raw) > gate and (0x5B in raw or raw.find(0x7B, 1) != -1 or max_depth < 1)
                and not (count_first and raw.count(b"[") + raw.count(b"{") <= max_depth)
                and deeper_than(value, max_depth)
            ):
                at = nesting_at(raw, max_depth)
                assert at is not None  # the bytes nest at least as deep as the value they parse to
                self._refuse_line(too_deep(max_depth, source=self.source, line=line, column=column_of(raw, at)), raw, line)
                continue
            if chat and type(value) is dict and type(value.get("role")) is str:
                append(line)
                append(value)
                continue
            if direct:
                self._convert(value, line, self._index, out)
            else:
                self._record(Record(value, line, self._index), out)
                chat = self._plain_chat  # the format may have just been detected
                direct = self._converter is not None and not self.wants_plan
            self._index += 1
        if chat and out:
            self._recognised = True  # chat records came out (once per chunk, not per line)
        return out

    def _document(self, records: list[Record | Meta]) -> list[Event]:
        out: list[Event] = []
        direct = self._converter is not None and not self.wants_plan and not self._holding
        for rec in records:
            if type(rec) is Record:
                if rec.number == 0 and self._late_keys_possible():
                    self.wants_plan = True  # its system key may come after it: a first pass
                    self._plan_kind = "keys"
                    direct = False
                if direct:
                    self._convert(rec.value, rec.place, rec.number, out)
                    continue
            if self._holding and system_meta(rec):
                self._pending.append(rec)
                self._release()
                out += self._go_on()
            else:
                self._record(rec, out)
            direct = self._converter is not None and not self.wants_plan and not self._holding
        if self._holding and self._doc is not None and self._doc.consumed - self._hold_start > self.limits.max_record_bytes:
            self._release()  # held long enough: the records go out, a later system key cannot go first
            out += self._go_on()
        elif (
            self._converter is None and self._pending and not self.wants_plan and not self._holding
            and self._doc is not None and self._doc.open_bytes > self.limits.max_record_bytes
        ):
            self._undecided(out)
        return out

    def _undecided(self, out: list[Event]) -> None:
        """A document read past ``max_record_bytes`` (from its first byte, while it is still
        open) with its format still unknown: what waits for it (its keys, a few records) is
        held no longer. Decided from the records read, if any; refused if none came (the keys
        alone, held until one does, would be unbounded). Once the document has ended, all is
        known and decided at the close (an object with no stream array is one record, bounded
        as one by the DocReader)."""
        if not self._waiting:
            assert self._doc is not None
            raise keys_held_too_long(self.limits.max_record_bytes, source=self.source, **self._doc.here())
        self._detect(final=True)
        if self._converter is not None and not self.wants_plan:
            self._replay(out)

    def _late_keys_possible(self) -> bool:
        """At a document's first record: a system key could still come after the records (an
        object's array, none of the keys so far, a format that reads them)."""
        assert self._doc is not None
        path = self._doc.walker.stream_path
        if not path or self._system_given or any(system_meta(r) for r in self._pending) or self._early:
            return False
        return self._converter is None or self._meta is not None

    def _take_keys(self, found: dict[str, Any]) -> None:
        """The first pass's system keys: given first (their Meta events lead), and passed
        over when the main pass meets them."""
        early = [Meta(key, value, _NO_PLACE) for key, value in found.items() if own_key(key) in SYSTEM_KEYS]
        self._early = {m.key for m in early}
        self._pending[0:0] = early

    def _release(self) -> None:
        """Stop holding: a system key that came after the records goes before them."""
        self._holding = False
        late = [r for r in self._pending if system_meta(r)]
        if late:
            self._pending = late + [r for r in self._pending if not system_meta(r)]

    # -- records ----------------------------------------------------------------------------

    def _record(self, rec: Record | Meta, out: list[Event]) -> None:
        waiting = self.wants_plan or self._holding
        if self._converter is not None and not waiting:
            self._take(rec, out)
            return
        self._pending.append(rec)
        if type(rec) is Record:
            self._waiting.append(rec)
            if self._converter is None and not waiting:  # only a record can settle the format
                self._detect(final=False, decisive=self._guess(rec).decisive)
        if self._converter is not None and not self.wants_plan and not self._holding:
            self._replay(out)

    def _guess(self, rec: Record) -> Guess:
        """:func:`guess` of a waiting record, made once: each record is asked whether it settles
        the format as it comes, and the verdict goes over them all again."""
        told = self._guesses.get(rec.number)
        if told is None:
            told = self._guesses[rec.number] = guess(rec.value)
        return told

    def _detect(self, *, final: bool, decisive: bool = False) -> None:
        records = self._waiting
        if not (decisive or final or len(records) >= DETECT_RECORDS):
            return
        keys = {own_key(r.key) for r in self._pending if type(r) is Meta}
        hint = document_hint(keys, self._doc.walker.stream_path if self._doc is not None else None)
        try:
            fmt = decide(map(self._guess, records), hint=hint)  # (detect_format, from the guesses made)
        except InputError as exc:
            self._locate(exc, records[0].place if records else None)
            raise exc from None
        self._guesses.clear()
        self._choose(fmt)

    def _choose(self, fmt: str) -> None:
        told = BY_NAME[fmt]  # its traits, looked up once: none is asked per record
        self.format = self.report.format = fmt
        kwargs = {k: v for k, v in self.options.items() if READER_OPTIONS[k] == fmt}
        if told.assembling:
            kwargs["max_record_bytes"] = self.limits.max_record_bytes
        converter = self._converter = told.converter(self.report, **kwargs)
        # Looked up once, not per record.
        self._plain_chat = told.plain_records
        self._multi = bool(converter.multi)
        self._feed = converter.feed
        self._meta = getattr(converter, "meta", None)
        self._take_sidechains = getattr(converter, "take_sidechains", None)
        # Codex history control, a Gemini CLI replay need a first pass; the driver provides it (or None).
        self.wants_plan = told.planned

    def _replay(self, out: list[Event]) -> None:
        pending, self._pending = self._pending, []
        self._waiting = []
        for rec in pending:
            self._take(rec, out)

    def _take(self, rec: Record | Meta, out: list[Event]) -> None:
        if isinstance(rec, Meta):
            if rec.key in self._early and rec.place is not _NO_PLACE:
                return  # given first already, by the first pass
            self._convert_meta(rec, out)
        else:
            self._convert(rec.value, rec.place, rec.number, out)

    def _convert(self, value: Any, place: Place | None, index: int, out: list[Event]) -> None:
        line = place if type(place) is int else None  # converters note JSONL lines
        tracking = not self._recognised  # until a record is recognised: is this one?
        if tracking:
            self._seen = True
            before = getattr(self._converter, "unrecognised", 0)
        if self._multi:
            try:
                split = self._converter.split(value, line=line)
            except InputError as exc:
                self._refuse_record(exc, value, place, index)
                return
            if place is not None:
                out.append(place)
            out.append(Conversation(split.messages, split.extra, index, line))
        else:
            assert self._feed is not None
            try:
                messages = self._feed(value, line=line)
            except InputError as exc:
                self._refuse_record(exc, value, place, index)
                return
            if messages:
                if place is not None:
                    out.append(place)
                out.extend(messages)
            if self._take_sidechains is not None:
                out.extend(self._take_sidechains())
        if tracking:
            if getattr(self._converter, "unrecognised", 0) == before:
                self._recognised = True
            else:
                self._missed(value)

    def _convert_meta(self, meta: Meta, out: list[Event]) -> None:
        out.append(meta)
        name = own_key(meta.key)
        if name in SYSTEM_KEYS:
            self._system_given = True  # before the records: no first pass will look for it
        if self._meta is None or name is None:
            return
        try:
            messages = self._meta(name, meta.value, line=None)
        except InputError as exc:
            self._refuse_record(exc, (meta.key, meta.value), meta.place, None)
            return
        if messages:
            if meta.place is not None:
                out.append(meta.place)
            out.extend(messages)

    def _finish(self) -> list[Event]:
        out: list[Event] = []
        try:
            out.extend(self._converter.close())  # a held turn: its records' place is given already
        except InputError as exc:
            self._refuse_record(exc, None, None, None)
        if self._take_sidechains is not None:
            out.extend(self._take_sidechains())
        if self._seen and not self._recognised:
            raise self._nothing_recognised()
        self.done = True
        return out

    def _missed(self, value: Any) -> None:
        """A record the converter did not know: what it looks like, for the error."""
        if len(self._misses) < DETECT_RECORDS:
            self._misses.append(guess(value))

    def _nothing_recognised(self) -> InputError:
        assert self.format is not None
        return nothing_recognised(self.format, self._misses, FORMATS, self.source)

    # -- bad input --------------------------------------------------------------------------

    def _locate(self, exc: InputError, place: Place | None) -> None:
        position = position_of(place)
        if position is None:
            exc.located(source=self.source)
        else:
            exc.located(source=self.source, line=position.line, column=position.column)

    def _unparsed(self, raw: bytes, line: int) -> Any:
        """A JSONL line jiter refused: refused (raised, or skipped: :data:`_REFUSED`) with
        orjson's reason, or its value when orjson reads it (see ``_json.refused``)."""
        try:
            return refused(raw)
        except JSONDecodeError:
            exc = not_json(raw, source=self.source, line=line, max_depth=self.limits.max_depth)
            if not raw.endswith(b"\n") and self.format in SESSION_FORMATS:
                # A session's last line, torn (its writer killed mid-line): the tool skips it
                # on resume, and so does the reader (recorded, whole; see formats._sessions).
                self.report.add("drop_torn_line", f"{exc} (the last line, with no newline: torn); removed, as the tool "
                                "skips it on resume, and kept here whole", line=line, dropped=raw.decode("utf-8", "backslashreplace"))
                return _REFUSED
            self._refuse_line(exc, raw, line)
            return _REFUSED

    def _refuse_line(self, exc: InputError, raw: bytes, line: int) -> None:
        """A JSONL line that is not a record (``exc`` says where): raise, or skip and record it."""
        if self.on_invalid != "skip":
            raise exc
        self._seen = True
        self.report.add("skip_invalid", str(exc), line=line, dropped=raw.removesuffix(b"\n").decode("utf-8", "backslashreplace"))

    def _refuse_record(self, exc: InputError, value: Any, place: Place | None, index: int | None) -> None:
        """A record its converter refused: say where it began, then raise, or skip and record it."""
        if index is not None and not self._recognised:
            self._seen = True
            self._missed(value)
        self._locate(exc, place)
        if exc.line is None and exc.index is None and index is not None:
            exc.index = index  # no position to give: say which record
            exc.located()
        if self.on_invalid != "skip":
            raise exc
        self.report.add("skip_invalid", str(exc), line=exc.line, dropped=value)
