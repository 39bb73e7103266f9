"""The per-file pipe: ``read_conversations`` -> one ``Normalizer`` per conversation -> the
``--to`` format's encoder (``formats.ENCODERS``) -> a byte buffer written in blocks of
``FLUSH_BYTES``; or, for a session (Claude Code, Codex, Gemini CLI) written in its own
format, the bytes -> a ``SessionRepairer`` -> the buffer (``sessions``).

Which output a file gets (:func:`_encoder`, :func:`_own_format`, ``detect.session_format``):
``--to`` when it is given; else a session in its own format (unless a ``--profile`` asks for
a provider's chat messages), with ``--in-place`` every file in its own format (a format that
cannot be written back as it was is refused, and the file left as it is), otherwise chat
JSONL, or fine-tuning JSONL for inputs of several conversations. Nothing in it grows with
the input: the reader holds a chunk, the core one turn, the buffer one block; report
records go to a spool file (``--report``) or nowhere (``max_records=0``), not to memory.
The profile is resolved once per run (``Settings``), never per file or conversation.

An error names where it happened: the reader's own errors know their place; a core error
about the message just fed gets the place the stream says that message came from
(``position``), in JSONL, JSON documents and stdin alike.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import IO, Any

import orjson

from .._core import Normalizer
from .._errors import InputError
from .._json import dumps
from .._report import Repair, Report, new_report
from ..formats import ENCODERS, FORMATS, Conversation, ConversationStream
from ..formats._writing import FormatWriter
from ..formats._writing import FLUSH_BYTES
from ..formats._database_head import SQLITE_MAGIC
from ..formats._records import CHUNK_BYTES
from ..formats._reader import Head, Reader
from .detect import session_format
from .plan import Job
from .results import FileResult, Settings, core_options
from .sessions import pump_session
from .stop import STOP, Interrupted
from .streams import Input, Output
from .tracking import Tracker

__all__ = ["pump", "SpoolError", "ONE_CONVERSATION", "locate", "restores_source", "FLUSH_BYTES"]

_LINE = orjson.OPT_APPEND_NEWLINE


def pump(src: Input, out: Output, job: Job, settings: Settings, tracker: Tracker, result: FileResult) -> None:
    conv_index: list[int | None] = [None]  # which conversation records belong to (multi-conversation inputs)

    def spool_record(record: Repair) -> None:
        data = record.model_dump(mode="json")
        if conv_index[0] is not None:
            data["conversation"] = conv_index[0]
        spool.write(dumps(data, _LINE, str))  # (a dropped value's integers past 64 bits too)

    # Without --report the records go nowhere: no listener, so the core only counts its
    # repairs and never builds a record (or its sentence) to throw away.
    on_record = spool_record if settings.spool_dir is not None else None
    spool = _Spool(settings.spool_dir, result)
    try:
        if _database(src, job):  # read by SQLite from its path (the reader knows it by its header)
            _RecordsPump(src, out, job, settings, tracker, result, on_record, conv_index, None, job.input).run()
        else:
            route = session_format(src, job, settings)
            if route.session is not None:
                pump_session(src, out, job, settings, tracker, result, on_record, route.session)
            else:
                _pump_records(src, out, job, settings, tracker, result, on_record, conv_index, route.head)
    except BaseException:
        spool.close(quiet=True)  # the failure on the way out is the one to report
        raise
    spool.close()


class SpoolError(Exception):
    """The report's records could not be spooled (TMPDIR full): not the output's failure,
    so not an OSError, which would be reported as one."""


class _Spool:
    """One input's report records: a file in the spool folder, opened at the first record
    (most files have few or none) and closed when the input is done."""

    def __init__(self, folder: str | None, result: FileResult) -> None:
        self.folder = folder
        self.result = result
        self.file: IO[bytes] | None = None

    def write(self, data: bytes) -> None:
        try:
            if self.file is None:
                assert self.folder is not None
                fd, self.result.spool = tempfile.mkstemp(dir=self.folder, suffix=".records")
                self.file = os.fdopen(fd, "wb")
            self.file.write(data)
        except OSError as exc:
            raise SpoolError(f"cannot keep the report's records in {self.folder}: {exc.strerror or exc}") from None

    def close(self, *, quiet: bool = False) -> None:
        if self.file is not None:
            file, self.file = self.file, None
            try:
                file.close()
            except OSError as exc:
                if quiet:
                    return
                raise SpoolError(f"cannot keep the report's records in {self.folder}: "
                                  f"{exc.strerror or exc}") from None


def _database(src: Input, job: Job) -> bool:
    """The input is a SQLite database (an ``opencode.db``): read-only, so never ``--in-place``,
    and from its path, so never stdin."""
    # A whole first chunk, given back as it was read: the readers then get the chunks they
    # got before this look (a 16-byte read would make the first of them 16 bytes).
    head = src.read(CHUNK_BYTES)
    src.unread(head)
    if not head.startswith(SQLITE_MAGIC):
        return False
    if job.input == "-":
        raise InputError("this is a SQLite database (an opencode.db?): SQLite reads it from a file, not from stdin",
                         source=job.name, hint="Give its path: chatnorm repair --to jsonl opencode.db")
    if job.in_place:
        raise InputError(
            "this is a SQLite database (an opencode.db): it is only ever read, so --in-place is refused and it is "
            "left as it is", source=job.name,
            hint="Write its sessions' chat messages to another file: --to finetune -o FILE (every session, one per "
            "line), or --session ID --to jsonl -o FILE (one session)")
    return True


def _pump_records(src: Input, out: Output, job: Job, settings: Settings, tracker: Tracker, result: FileResult,
                  on_record: Callable[[Repair], None] | None, conv_index: list[int | None], head: Head | None) -> None:
    _RecordsPump(src, out, job, settings, tracker, result, on_record, conv_index, head).run()


class _RecordsPump:
    """The chat pipe of one file: the reader's conversations, a core for each, the
    ``--to`` encoder, and the progress counters kept in step as it goes."""

    def __init__(self, src: Input, out: Output, job: Job, settings: Settings, tracker: Tracker, result: FileResult,
                 on_record: Callable[[Repair], None] | None, conv_index: list[int | None], head: Head | None,
                 path: str | None = None) -> None:
        self.src, self.out, self.job, self.settings, self.tracker, self.result = src, out, job, settings, tracker, result
        self.on_record = on_record
        self.conv_index = conv_index
        self.reader_report = new_report(max_records=0, on_record=on_record)
        # read_conversations' reader, told what the peek found (head): the head is not judged
        # again, nor the format detected again from the same records.
        reader = Reader(settings.fmt, report=self.reader_report, on_invalid=settings.on_invalid,  # type: ignore[arg-type]
                        options=settings.reader_options, head=head)
        # A database is read from its path (``path``), not from the bytes of ``src``.
        self.conversations = ConversationStream(src if path is None else path, reader)
        if kept := restores_source(settings, job):
            # Written in a format whose reader keeps fields aside (a Responses item's id...):
            # the messages of such a file carry them through the core to its writer. Chat
            # output goes without, and so does another reader's (an opencode part's state).
            self.conversations.keep_source_fields(kept)
        self.encoder: FormatWriter | None = None
        self.foreign_keys_to: str | None = None  # the output a conversation's keys are not written to
        self.multi = False
        self.done_messages = self.done_bytes = 0  # already counted by the tracker
        self.core: Normalizer | None = None  # the conversation's, while it is repaired

    def count(self) -> None:
        # After every read (src.after_read) and at flush points: the progress counters.
        core = self.core
        n = self.result.messages_in + (core.report.messages_in if core is not None else 0)
        self.tracker.advance(n - self.done_messages, self.src.bytes - self.done_bytes)
        self.done_messages, self.done_bytes = n, self.src.bytes

    def flush_point(self) -> None:
        # Every FLUSH_BYTES of output: write, update the counters, honour a stop request.
        self.out.drain()
        self.count()
        if STOP.is_set():
            raise Interrupted(0)

    def run(self) -> None:
        src, result, job = self.src, self.result, self.job
        src.after_read = self.count
        for conv in self.conversations:
            if self.encoder is None:
                self._start()
            elif not self.encoder.multi:
                position = self.conversations.position
                raise InputError(
                    f"this file holds several conversations, and {ONE_CONVERSATION[self.encoder.name]} holds one",
                    source=job.name, line=position.line if position else conv.line,
                    column=position.column if position else None,
                    hint="Write one conversation per line with --to finetune" + (
                        ", or one session of this database with --session ID" if self.conversations.container == "sqlite"
                        else ""),
                )
            assert self.encoder is not None
            self._conversation(conv, self.encoder)
        encoder = self.encoder if self.encoder is not None else self._start()  # an empty input: still a valid (empty) output
        self.out.buf += encoder.finish()
        for key, value in self.reader_report.counts.items():
            result.counts[key] = result.counts.get(key, 0) + value
        if job.in_place and result.messages_in == 0 and self.reader_report.counts:
            raise InputError(
                f"nothing in this file was recognised as {result.format or self.settings.fmt}; it was left as it is",
                source=job.name, hint="Is it in another format? Name it with --from",
            )
        self.tracker.advance(result.messages_in - self.done_messages, src.bytes - self.done_bytes)

    def _start(self) -> FormatWriter:
        chosen = _encoder(self.settings, self.job, self.conversations, self.result)
        self.encoder, self.multi = chosen.encoder, chosen.multi
        # A conversation's own keys (a request's model and tools, a session's info) are
        # written back by a writer of the format they were read from, never into another
        # format's document, which does not define them (kept in the report instead).
        restores = chosen.encoder.restores_from
        self.foreign_keys_to = chosen.kind if restores and self.result.format not in restores else None
        self.out.buf += chosen.encoder.start()
        return chosen.encoder

    def _extra(self, conv: Conversation) -> Mapping[str, Any]:
        """The conversation's own keys, as its writer is given them."""
        if conv.extra and self.foreign_keys_to is not None:
            _unwritten_keys(self.reader_report, conv, self.result.format, self.foreign_keys_to)
            return {}
        return conv.extra

    def _conversation(self, conv: Conversation, encoder: FormatWriter) -> None:
        result, settings, multi = self.result, self.settings, self.multi
        result.conversations += 1
        self.conv_index[0] = conv.index if multi else None
        core = self.core = Normalizer(settings.profile, **core_options(settings, multi), max_records=0,
                                      on_record=self.on_record)
        feed = core.feed
        message, refused = encoder.message, encoder.refused
        buf = self.out.buf
        try:
            buf += encoder.begin(self._extra(conv))
            # The hot path: nothing per message but feed, the encoder and a length check.
            for m in conv.messages:
                for repaired in feed(m):
                    try:
                        buf += message(repaired)
                    except orjson.JSONEncodeError as exc:
                        buf += refused(repaired, exc)  # an integer past 64 bits (see FormatWriter.again)
                if len(buf) >= FLUSH_BYTES:
                    self.flush_point()
            for repaired in core.close():
                try:
                    buf += message(repaired)
                except orjson.JSONEncodeError as exc:
                    buf += refused(repaired, exc)
            buf += encoder.end()
            if len(buf) >= FLUSH_BYTES:
                self.flush_point()
        except InputError as exc:
            locate(exc, self.job, self.conversations, core, multi)
            raise
        finally:
            report = core.report
            self.core = None
            result.messages_in += report.messages_in
            result.messages_out += report.messages_out
            for key, value in report.counts.items():
                result.counts[key] = result.counts.get(key, 0) + value


def _unwritten_keys(report: Report, conv: Conversation, fmt: str | None, to: str) -> None:
    report.add("drop_conversation_keys",
               f"{fmt} conversation {conv.index}: {'its key' if len(conv.extra) == 1 else 'its keys'} "
               f"{', '.join(map(repr, conv.extra))} not written to {to}, which does not define them",
               dropped=dict(conv.extra))


# How each single-conversation output is called in the error that refuses a second one.
ONE_CONVERSATION = {
    "jsonl": "chat JSONL", "json": "a JSON array of chat messages",
    "responses": "a list of Responses items", "anthropic": "an Anthropic request",
}
# A document's container, as an output in the same format keeps it.
_CONTAINERS = {"jsonl": "lines", "array": "array", "object": "object"}


@dataclass(frozen=True, slots=True)
class _Chosen:
    """The output's encoder, and whether the format read holds several conversations."""

    encoder: FormatWriter
    multi: bool
    kind: str
    """The output format's name (``--to``'s choice, ``auto`` resolved)."""


def _encoder(settings: Settings, job: Job, conversations: ConversationStream, result: FileResult) -> _Chosen:
    """The output's encoder, once the format read is known; and whether that format holds
    several conversations (``--to auto`` then writes fine-tuning JSONL)."""
    fmt = result.format = conversations.format
    multi = bool(getattr(FORMATS.get(fmt or ""), "multi", False))
    kind = settings.to
    own = False
    if kind == "auto":
        own = job.in_place
        kind = _own_format(fmt, conversations.container, job) if own else ("finetune" if multi else "jsonl")
    if (own or kind == fmt) and kind in ("json", "responses", "anthropic") and conversations.container in _CONTAINERS:
        # Written back in its own format: in its own container too.
        return _Chosen(ENCODERS[kind](container=_CONTAINERS[conversations.container]), multi, kind)  # type: ignore[call-arg]
    return _Chosen(ENCODERS[kind](), multi, kind)


def restores_source(settings: Settings, job: Job) -> frozenset[str]:
    """The reader formats whose kept-aside fields the output writes back (known before the
    format read is; empty: none, chat output): an explicit ``--to``'s writer's
    (``restores_from``), or any, for a file written back in its own format (``--in-place``:
    only the formats that keep none, and Responses and Anthropic, which restore theirs, are
    written back)."""
    if settings.to == "auto":
        return frozenset(FORMATS) if job.in_place else frozenset()
    writer = ENCODERS.get(settings.to)
    return writer.restores_from if writer is not None else frozenset()


def _own_format(fmt: str | None, container: str | None, job: Job) -> str:
    """The output format that writes a file back as it was (``--in-place`` without ``--to``)."""
    if fmt in ("responses", "anthropic", "finetune"):
        return fmt
    if fmt == "chat" or fmt is None:
        return "jsonl" if container in ("jsonl", None) else "json"
    raise InputError(
        f"a {fmt} file cannot be written back in its own format",
        source=job.name, hint="Give --to finetune (or another --to) to convert it in place",
    )

def locate(exc: InputError, job: Job, conversations: ConversationStream, core: Normalizer | None, multi: bool) -> None:
    """Give a core error (which knows a message index) the file, line and column it came
    from: the place of the message just fed, when the error is about that message (or, in a
    file of several conversations, about its conversation's record)."""
    if exc.source is None or exc.source in ("<input>", "<stream>"):
        exc.located(source=job.name)
    if exc.line is not None or exc.index is None or core is None:
        return  # the reader's own error: it knows its place (a core error names its message)
    if multi or exc.index == core.report.messages_in - 1:
        position = conversations.position
        if position is not None:
            exc.located(line=position.line, column=position.column)
