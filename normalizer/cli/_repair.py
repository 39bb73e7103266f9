"""Repairing files for the command line: one file per :func:`repair_file` (many at once:
``_jobs``).

The per-file pipe is ``read_conversations`` -> one ``Normalizer`` per conversation -> the
``--to`` format's encoder (``formats.ENCODERS``) -> a byte buffer written in blocks of
:data:`FLUSH_BYTES`; or, for a Claude Code session or a Codex rollout written in its own
format, the bytes -> a ``SessionRepairer`` -> the buffer (:func:`_pump_session`).

Which output a file gets (:func:`_session_format`, :func:`_own_format`): ``--to`` when it is
given; else a session in its own format (unless a ``--profile`` asks for a provider's chat
messages), with ``--in-place`` every file in its own format (a format that cannot be written
back as it was is refused, and the file left as it is), otherwise chat JSONL, or fine-tuning
JSONL for inputs of several conversations. With ``--from auto`` the first lines say whether
the input is a session (:func:`_peek`); they are then read again from the start, by a reader
told what they said (the container, and their format when it is the one the reader would
find: ``formats._reader.Head``), so a file's head is judged once and its format detected
once. Nothing in it grows with the input: the reader holds a chunk, the core
one turn, the buffer one block; report records go to a spool file (``--report``) or nowhere
(``max_records=0``), not to memory. The profile is resolved once per run (``Settings``),
never per file or conversation.

An error names where it happened: the reader's own errors know their place; a core error
about the message just fed gets the place the stream says that message came from
(``position``), in JSONL, JSON documents and stdin alike.

Latency in a pipe: the input is read with ``read1`` (whatever the pipe has, not a full
chunk) and, when the output is a pipe too, the pending output is written out before every
read, so a slow producer's messages come out as soon as their turn is complete.
"""

from __future__ import annotations

import io
import os
import stat
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import IO, Any, NamedTuple

import orjson

from ._files import Job, keep_backup, keep_owner_and_mode, open_output
from ._progress import Tracker
from ._stop import STOP, Interrupted
from ._progress import clear as clear_progress
from ._streams import WRITTEN
from ._text import error_text, say
from .._core import Normalizer
from .._errors import InputError, UsageError
from .._json import JSONDecodeError, dumps, loads
from ..profiles._profiles import PROFILES, Profile, get_profile
from .._report import Report, Repair, new_report
from ..formats import ENCODERS, FORMATS, SESSION_FORMATS, ConversationStream, Encoder
from ..formats._detect import DETECT_RECORDS, decide, guess
from ..formats._writing import FLUSH_BYTES
from ..formats._reader import Head, Reader
from ..formats._records import BOM, CHUNK_BYTES, DEFAULT_MAX_DEPTH, DEFAULT_MAX_LINE_BYTES, Sniffer, count_newlines

__all__ = ["Settings", "FileResult", "Interrupted", "repair_file", "FLUSH_BYTES", "STOP"]

_LINE = orjson.OPT_APPEND_NEWLINE

@dataclass(frozen=True)
class Settings:
    """What ``repair`` was asked to do, the same for every file."""

    fmt: str = "auto"
    to: str = "auto"  # auto: chat JSONL, or fine-tuning JSONL for multi-conversation inputs
    profile: Profile = field(default_factory=lambda: get_profile("default"))  # resolved once
    on_invalid: str = "error"
    options: dict[str, Any] = field(default_factory=dict)
    #: --report: every record is spooled to a file in this (private, temporary) folder.
    spool_dir: str | None = None
    #: --backup: with --in-place, the original is kept next to the file, under its name + this.
    backup: str | None = None

    # Asked of every file, decided once per run (in each worker: they are not fields).

    @cached_property
    def provider(self) -> bool:
        """A provider's profile, not the default (a session is then repaired as chat
        messages). Profiles compare field by field: about a microsecond, twice a session file."""
        return self.profile != PROFILES["default"]

    @cached_property
    def session_options(self) -> dict[str, Any]:
        """The options a session repaired in its own format takes."""
        return {k: v for k, v in self.options.items() if k in ("trailing_calls", "orphan_results", "stub_text")}


@dataclass(slots=True)
class FileResult:
    """What became of one input."""

    input: str
    output: str
    format: str | None = None
    messages_in: int = 0
    messages_out: int = 0
    conversations: int = 0
    counts: dict[str, int] = field(default_factory=dict)
    error: str | None = None
    seconds: float = 0.0
    #: The spooled records, one JSON value + b"\n" each (None: no record). Closed once the
    #: file is done, so --report holds no file open per input (1,000s of inputs, ulimit -n).
    spool: str | None = None

    def summary(self) -> str:
        kinds = ", ".join(f"{k} {v:,}" for k, v in sorted(self.counts.items()))
        return f"{self.messages_in:,} in, {self.messages_out:,} out; " + (kinds or "no repairs")


class Changed(Exception):
    """A file repaired in place changed while it was read (:meth:`_Input.unchanged`)."""


#: How much of the end of what was read is kept, to tell that a file that grew was appended
#: to (those bytes are still there) rather than rewritten.
_TAIL_BYTES = 4096


class _Input:
    """A binary input for the readers: ``read`` returns what is there (``read1``), counts
    bytes, and first writes out pending output when asked to (pipes).

    ``watch`` (``--in-place``: the file may still be written by its tool, Claude Code or
    Codex appending a line at a time): the end of the file is confirmed before it is given
    as the end. When a read finds none, ``fstat`` says whether the file grew meanwhile: if it
    did and the last :data:`_TAIL_BYTES` read are still where they were (an append), the new
    lines are read on, through the same reader and repairer state; if it shrank or those
    bytes changed, :class:`Changed`. What the file was at the end confirmed is kept
    (``seen``), for :meth:`unchanged` just before the rename."""

    def __init__(self, raw: Any, name: str, before_read: Callable[[], None] | None, *, watch: bool = False) -> None:
        self.raw = raw
        self.name = name
        self.bytes = 0
        self._before = before_read
        self._read1 = getattr(raw, "read1", raw.read)
        self._again = b""  # bytes read ahead (to tell the format) and given back
        #: Called after each read: the progress counters move as the input is read.
        self.after_read: Callable[[], None] | None = None
        self._watch = watch
        self._pos = 0  # the file's offset (what read and seek did, not what was given back)
        self._tail = b""  # the last bytes read, ending at _pos (watch only)
        #: The file as it was when its end was last confirmed (watch only).
        self.seen: os.stat_result | None = None

    def _watched(self, data: bytes, n: int) -> bytes:
        """``data`` just read from a watched file: its end confirmed, or the bytes appended
        since the end was reached."""
        while not data:
            st = os.fstat(self.raw.fileno())
            if st.st_size == self._pos:
                self.seen = st
                return data
            if st.st_size < self._pos or not self._still_there():
                raise Changed()
            data = self._read1(n if n > 0 else 1 << 20)  # appended: read on
        start = self._pos
        self._pos += len(data)
        if len(data) >= _TAIL_BYTES:
            self._tail = data[-_TAIL_BYTES:]
        else:
            self._tail = (self._tail + data)[-_TAIL_BYTES:] if start else data
        return data

    def _still_there(self) -> bool:
        """The last bytes read are where they were read (the file was appended to)."""
        if not self._tail:
            return True
        return os.pread(self.raw.fileno(), len(self._tail), self._pos - len(self._tail)) == self._tail

    def unchanged(self, path: str) -> None:
        """Raise :class:`Changed` unless ``path`` is still the file read, as it was when its
        end was confirmed: the same device and inode, size and modification time. Called
        as close to the rename as can be (the window left is documented in the README)."""
        seen = self.seen
        if seen is None:
            raise Changed()  # (its end was never reached: nothing to compare with)
        try:
            st = os.stat(path)
        except OSError:
            raise Changed() from None
        if (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns) != (seen.st_dev, seen.st_ino, seen.st_size,
                                                                   seen.st_mtime_ns):
            raise Changed()

    def late(self) -> bytes:
        """What was appended to the file read after :meth:`unchanged` last looked (the
        rename's own instant): read from the replaced file, still open here."""
        if self.seen is None:
            return b""
        fd = self.raw.fileno()
        size = os.fstat(fd).st_size
        if size <= self.seen.st_size:
            return b""
        return os.pread(fd, size - self.seen.st_size, self.seen.st_size)

    def read(self, n: int = -1) -> bytes:
        if self._again:
            again, self._again = self._again, b""
            self.bytes += len(again)
            return again
        if self._before is not None:
            if self.after_read is not None:
                self.after_read()  # the messages of the last read, before a write that may block
            self._before()
        data: bytes = self._read1(n if n > 0 else 1 << 20)
        if self._watch:
            data = self._watched(data, n)
        self.bytes += len(data)
        if self.after_read is not None:
            self.after_read()
        return data

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        try:
            return bool(self.raw.seekable())
        except (AttributeError, OSError, ValueError):
            return False

    def unread(self, data: bytes) -> None:
        """Give back bytes read ahead: the next read returns them first."""
        self._again = data + self._again
        self.bytes -= len(data)

    def tell(self) -> int:
        return int(self.raw.tell()) - len(self._again)

    def seek(self, pos: int, whence: int = 0) -> int:
        self._again = b""
        self._pos = int(self.raw.seek(pos, whence))
        self._tail = b""
        return self._pos

    def close(self) -> None:
        self.raw.close()


class _Output:
    """The pending output bytes and where they go."""

    def __init__(self, dest: Any) -> None:
        self.dest = dest
        self.buf = bytearray()
        self.stdout = dest is getattr(sys.stdout, "buffer", None)  # (a notebook's stdout has none)
        self.terminal = self.stdout and sys.stdout.isatty()  # shared with the progress line

    def drain(self) -> None:
        if self.buf:
            if self.terminal:
                clear_progress()
            self.dest.write(self.buf)
            if self.stdout:
                WRITTEN.stdout_lines += count_newlines(self.buf)  # (not buf.count: a tenth of the run)
            self.buf.clear()
            if self.stdout:
                self.dest.flush()


def _is_pipe(stream: Any) -> bool:
    """Anything but a regular file: a reader may be waiting for each line."""
    try:
        return not stat.S_ISREG(os.fstat(stream.fileno()).st_mode)
    except (OSError, ValueError, AttributeError):
        return True


def repair_file(job: Job, settings: Settings, tracker: Tracker) -> FileResult:
    """Repair one input into its output. Bad input, unreadable files and unwritable outputs
    come back as ``FileResult.error`` (the output is then not created or not replaced);
    ``BrokenPipeError`` (stdout closed) and :class:`Interrupted` propagate."""
    result = FileResult(job.name, job.output)
    start = time.perf_counter()
    atomic: Any = None
    raw_in: Any = None
    try:
        if job.input == "-":
            raw_in = sys.stdin.buffer
        else:
            try:
                # Unbuffered: each read is one read of the file (what read1 of a buffered
                # file does with chunks this size), without a buffer object per file, nor
                # the isatty() call open() makes to choose one.
                raw_in = open(job.input, "rb", buffering=0)  # noqa: SIM115 - closed in finally
            except OSError as exc:
                result.error = f"{job.name}: cannot read: {exc.strerror}. Check the path and its permissions"
                return result
        if job.output == "-":
            out = _Output(sys.stdout.buffer)
            pipe = _is_pipe(sys.stdout)
        else:
            try:
                atomic = open_output(job.output, mode_from=job.input if job.in_place else None)
            except OSError as exc:
                result.error = _write_error(job, exc)
                return result
            out = _Output(atomic)
            pipe = False
        watch = job.in_place and job.input != "-" and atomic is not None and isinstance(raw_in, io.FileIO)
        src = _Input(raw_in, job.name, out.drain if pipe else None, watch=watch)
        try:
            _pump(src, out, job, settings, tracker, result)
            out.drain()
            if atomic is not None:
                if watch:
                    atomic.commit(lambda: _before_replace(src, job, settings))
                    _after_replace(src, job, result)
                else:
                    if job.in_place and settings.backup is not None:
                        keep_backup(job.output, settings.backup)
                    atomic.commit()
                WRITTEN.files += 1
            elif job.output == "-":
                sys.stdout.buffer.flush()
        except Changed:
            result.error = (f"{job.name} changed while it was repaired; left untouched: run again when the tool "
                            "that writes it has stopped")
        except InputError as exc:
            if exc.source is None or exc.source in ("<input>", "<stream>"):
                exc.located(source=job.name)
            result.error = error_text(exc)
        except _SpoolError as exc:
            kept = f"{job.input} is unchanged" if job.in_place else "its output was not written"
            if job.output == "-":
                kept = "its output on stdout is incomplete"
            result.error = f"{job.name}: {exc}; {kept}. Point TMPDIR at a folder with space, or drop --report"
        except BrokenPipeError:
            raise
        except OSError as exc:
            if job.output == "-" or atomic is None:
                raise
            result.error = _write_error(job, exc)
        return result
    finally:
        if atomic is not None:
            atomic.abort()  # a no-op after commit; else the half-written file goes away
        if raw_in is not None and job.input != "-":
            raw_in.close()
        result.seconds = time.perf_counter() - start
        tracker.file_done()


def _before_replace(src: _Input, job: Job, settings: Settings) -> None:
    """A file repaired in place is replaced only if it is still what was read: the lines its
    tool appended after the repair's end was confirmed (``_Input``) would go with the old
    file. Checked before the backup is made and once more after it, the last thing before
    the rename (see :func:`_after_replace` for the instant between)."""
    src.unchanged(job.output)
    if settings.backup is not None:
        keep_backup(job.output, settings.backup)
        src.unchanged(job.output)


def _after_replace(src: _Input, job: Job, result: FileResult) -> None:
    """The rename's own instant: a line appended between the last check and the rename went
    to the replaced file (held open here). Such bytes are never dropped: they are written
    next to the file, and the file is reported failed, saying what to do with them."""
    late = src.late()
    if not late:
        return
    keep = job.output + ".chatnorm-late"
    with open(keep, "ab") as f:  # (appended to: an earlier run's are kept too)
        f.write(late)
    if src.seen is not None:
        keep_owner_and_mode(keep, src.seen)  # the user's, as the file is
    result.error = (f"{job.name}: {len(late):,} bytes were appended to it while it was replaced; they are in {keep}. "
                    f"When the tool that writes it has stopped, append them (cat {keep} >> {job.output}; "
                    f"rm {keep}) and run again")


def _write_error(job: Job, exc: OSError) -> str:
    what = exc.strerror or str(exc)
    if exc.errno == 28:  # ENOSPC
        todo = "free some space (or write elsewhere with -o)"
    elif exc.errno in (13, 1, 30):  # EACCES, EPERM, EROFS
        todo = "check the folder's permissions (or write elsewhere with -o)"
    else:
        todo = "check the output path"
    kept = f"{job.input} is unchanged" if job.in_place else "nothing was written"
    return f"{job.output}: cannot write: {what}; {kept}. {todo[0].upper()}{todo[1:]}"


def core_options(settings: Settings, multi: bool) -> dict[str, Any]:
    """The core's options for one input. Unless the user or the profile chose a trailing-calls
    policy, training data keeps calls open at the end of an example (a fine-tuning example
    may well end on the call the model should learn to make); a session stubs them."""
    options = dict(settings.options)
    if "trailing_calls" not in options and "trailing_calls" not in settings.profile.options:
        options["trailing_calls"] = "keep" if multi else "stub"
    return options


def _pump(src: _Input, out: _Output, job: Job, settings: Settings, tracker: Tracker, result: FileResult) -> None:
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
        session, head = _session_format(src, job, settings)
        if session is not None:
            _pump_session(src, out, job, settings, tracker, result, on_record, session)
        else:
            _pump_records(src, out, job, settings, tracker, result, on_record, conv_index, head)
    except BaseException:
        spool.close(quiet=True)  # the failure on the way out is the one to report
        raise
    spool.close()


class _SpoolError(Exception):
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
            raise _SpoolError(f"cannot keep the report's records in {self.folder}: {exc.strerror or exc}") from None

    def close(self, *, quiet: bool = False) -> None:
        if self.file is not None:
            file, self.file = self.file, None
            try:
                file.close()
            except OSError as exc:
                if quiet:
                    return
                raise _SpoolError(f"cannot keep the report's records in {self.folder}: "
                                  f"{exc.strerror or exc}") from None


def _pump_records(src: _Input, out: _Output, job: Job, settings: Settings, tracker: Tracker, result: FileResult,
                  on_record: Callable[[Repair], None] | None, conv_index: list[int | None], head: Head | None) -> None:
    reader_report = new_report(max_records=0, on_record=on_record)
    # read_conversations' reader, told what the peek found (head): the head is not judged
    # again, nor the format detected again from the same records.
    reader = Reader(settings.fmt, report=reader_report, on_invalid=settings.on_invalid, head=head)  # type: ignore[arg-type]
    conversations = ConversationStream(src, reader)
    buf = out.buf
    encoder: Encoder | None = None
    multi = False
    done = [0, 0]  # messages and bytes already counted by the tracker
    core: Normalizer | None = None

    def count() -> None:
        # After every read (src.after_read) and at flush points: the progress counters.
        n = result.messages_in + (core.report.messages_in if core is not None else 0)
        tracker.advance(n - done[0], src.bytes - done[1])
        done[0], done[1] = n, src.bytes

    def flush_point() -> None:
        # Every FLUSH_BYTES of output: write, update the counters, honour a stop request.
        out.drain()
        count()
        if STOP.is_set():
            raise Interrupted(0)

    src.after_read = count

    for conv in conversations:
        if encoder is None:
            encoder, multi = _encoder(settings, job, conversations, result)
            buf += encoder.start()
        elif not encoder.multi:
            position = conversations.position
            raise InputError(
                f"this file holds several conversations, and {_ONE_CONVERSATION[encoder.name]} holds one",
                source=job.name, line=position.line if position else conv.line,
                column=position.column if position else None,
                hint="Write one conversation per line with --to finetune",
            )
        result.conversations += 1
        conv_index[0] = conv.index if multi else None
        core = Normalizer(settings.profile, **core_options(settings, multi), max_records=0, on_record=on_record)
        feed = core.feed
        message, refused = encoder.message, encoder.refused
        try:
            buf += encoder.begin(conv.extra)
            # The hot path: nothing per message but feed, the encoder and a length check.
            for m in conv.messages:
                for repaired in feed(m):
                    try:
                        buf += message(repaired)
                    except orjson.JSONEncodeError as exc:
                        buf += refused(repaired, exc)  # an integer past 64 bits (see Encoder.again)
                if len(buf) >= FLUSH_BYTES:
                    flush_point()
            for repaired in core.close():
                try:
                    buf += message(repaired)
                except orjson.JSONEncodeError as exc:
                    buf += refused(repaired, exc)
            buf += encoder.end()
            if len(buf) >= FLUSH_BYTES:
                flush_point()
        except InputError as exc:
            _locate(exc, job, conversations, core, multi)
            raise
        finally:
            report = core.report
            core = None
            result.messages_in += report.messages_in
            result.messages_out += report.messages_out
            for key, value in report.counts.items():
                result.counts[key] = result.counts.get(key, 0) + value
    if encoder is None:  # an empty input: still a valid (empty) output
        encoder, multi = _encoder(settings, job, conversations, result)
        buf += encoder.start()
    buf += encoder.finish()
    for key, value in reader_report.counts.items():
        result.counts[key] = result.counts.get(key, 0) + value
    if job.in_place and result.messages_in == 0 and reader_report.counts:
        raise InputError(
            f"nothing in this file was recognised as {result.format or settings.fmt}; it was left as it is",
            source=job.name, hint="Is it in another format? Name it with --from",
        )
    tracker.advance(result.messages_in - done[0], src.bytes - done[1])


# How each single-conversation output is called in the error that refuses a second one.
_ONE_CONVERSATION = {
    "jsonl": "chat JSONL", "json": "a JSON array of chat messages",
    "responses": "a list of Responses items", "anthropic": "an Anthropic request",
}
# A document's container, as an output in the same format keeps it.
_CONTAINERS = {"jsonl": "lines", "array": "array", "object": "object"}


def _encoder(settings: Settings, job: Job, conversations: ConversationStream, result: FileResult) -> tuple[Encoder, bool]:
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
        return ENCODERS[kind](container=_CONTAINERS[conversations.container]), multi  # type: ignore[call-arg]
    return ENCODERS[kind](), multi


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


def _session_format(src: _Input, job: Job, settings: Settings) -> tuple[str | None, Head | None]:
    """The session format to repair the file in (``--to claude-code|codex``, or ``--to
    auto`` on a session), else None: the file goes through the chat pipe; and what the peek
    at its head told, for the chat pipe's reader (None: nothing was peeked at)."""
    if settings.to in SESSION_FORMATS:
        return (settings.to if settings.fmt == "auto" else settings.fmt), None
    if settings.to != "auto":
        return None, None
    fmt: str | None = settings.fmt
    head: Head | None = None
    if fmt == "auto":
        fmt, head = _peek(src)
    if fmt not in SESSION_FORMATS:
        return None, head
    if settings.provider and not job.in_place:
        return None, head  # a provider's profile asks for its chat messages
    return fmt, head


class _Peek(NamedTuple):
    """What the head of an input told (:func:`_peek`)."""

    #: The format its first records show (what chooses a session); None for a JSON document,
    #: an empty input, or lines that say nothing (the chat reader then decides, and says
    #: what is wrong).
    fmt: str | None
    #: What the chat pipe's reader takes as told: the container, and the format when the
    #: reader would find it from the same records (``Head``); None: it finds them itself.
    head: Head | None


def _peek(src: _Input) -> _Peek:
    """The format of a JSONL input, from its first records (read ahead, then given back to
    ``src``), and what the reader then takes rather than finding it again.

    The container is told as the reader tells it (``_records.Sniffer``); then each line is
    parsed once, as it completes, blank lines passed over, until :data:`DETECT_RECORDS`
    records (or one that settles it), the end, or ``max_line_bytes`` read. (The first
    records used to include blank lines and the head was joined and split again at every
    chunk: a JSONL file with a blank line after each record was read 64 MiB ahead, in
    quadratic time.)

    The reader is told the format only when it would find it from the same records, at the
    same one: not past ``max_line_bytes`` read (the reader may refuse a line there as too
    long, and the peek stopped short of where the reader reads on), nor when a record may
    nest past ``max_depth`` (the reader refuses it, and detects from the others). It then
    detects the format itself, as it did before it was told anything."""
    read: list[bytes] = []
    sniffer = Sniffer(DEFAULT_MAX_LINE_BYTES)
    first = _FirstRecords()
    kind = "auto"
    size = 0
    try:
        while True:
            chunk = src.read(CHUNK_BYTES)
            read.append(chunk)
            size += len(chunk)
            if kind == "auto":
                kind = sniffer.feed(chunk)
                if kind in ("document", "empty"):
                    return _Peek(None, _head(read, kind, None))
                if kind == "auto":
                    continue
                head = sniffer.head  # (the lines so far: parsed from here on, chunk by chunk)
                decided = first.feed(head[3:] if head.startswith(BOM) else head, final=not chunk)
            else:
                decided = first.feed(chunk, final=not chunk)
            if decided is not None:
                told = decided.fmt if decided.exact and size <= DEFAULT_MAX_LINE_BYTES else None
                return _Peek(decided.fmt, _head(read, kind, told))
            if size > DEFAULT_MAX_LINE_BYTES:
                return _Peek(first.verdict(), _head(read, kind, None))
    finally:
        src.unread(b"".join(read))


def _head(read: list[bytes], kind: str, fmt: str | None) -> Head | None:
    """What the reader is told, given back the bytes ``read`` at once: the container, unless
    the first read cut a byte order mark short. The Sniffer passes over a BOM only when the
    first chunk holds it whole: when a pipe gives its first byte alone, that byte is content
    and the head JSONL to the peek, while the reader, given the same bytes in one piece,
    passes over the BOM and judges what follows (a document, say), as it did before."""
    if len(read[0]) < len(BOM) and read[0] and BOM.startswith(read[0]):
        return None
    return Head(kind, fmt)


class _Verdict(NamedTuple):
    fmt: str | None
    #: Told from records the reader would detect from (see _FirstRecords): it may take it.
    exact: bool = False


class _FirstRecords:
    """The first records of a JSONL head, parsed as their lines complete (blank lines passed
    over; a line that goes on across chunks is joined once, when it ends), each guessed once."""

    def __init__(self) -> None:
        self.guesses: list[tuple[str | None, bool]] = []
        self._line: list[bytes] = []  # the pieces of the line not ended yet
        # A record the reader may refuse as nested past its max_depth (more brackets than
        # that; a cheap count, not the depth): it would detect from the others.
        self._deep = False

    def feed(self, data: bytes, *, final: bool) -> _Verdict | None:
        """The verdict, once the records read settle it (``final``: the end of the input)."""
        if not final and b"\n" not in data:
            self._line.append(data)
            return None
        text = b"".join([*self._line, data]) if self._line else data
        lines = text.split(b"\n")
        self._line = [] if final else [lines.pop()]
        for raw in lines:
            if not raw.strip():
                continue
            try:
                value = loads(raw)  # as the reader parses it (see .._json)
            except JSONDecodeError:
                return _Verdict(None)
            self._deep = self._deep or raw.count(b"[") + raw.count(b"{") > DEFAULT_MAX_DEPTH
            name, decisive = told = guess(value)
            if decisive:
                return _Verdict(name, not self._deep)
            self.guesses.append(told)
            if len(self.guesses) >= DETECT_RECORDS:
                return self._settled()
        return self._settled() if final else None

    def _settled(self) -> _Verdict:
        fmt = self.verdict()
        return _Verdict(fmt, fmt is not None and not self._deep)

    def verdict(self) -> str | None:
        """What the records read so far look like (None: nothing, or nothing it can tell)."""
        try:
            return decide(self.guesses) if self.guesses else None
        except InputError:
            return None


def _pump_session(src: _Input, out: _Output, job: Job, settings: Settings, tracker: Tracker, result: FileResult,
                  on_record: Callable[[Repair], None] | None, fmt: str) -> None:
    """A session repaired in its own format (``formats._sessions``): bytes in, bytes out."""
    if settings.provider:
        raise InputError(
            f"--profile {settings.profile.name} shapes chat messages for a provider; a session repaired in its own "
            "format keeps its own", source=job.name, hint="Give --to jsonl to write the provider's chat messages",
        )
    from ..formats._sessions import SessionRepairer  # only for session files: start-up of the rest

    report = new_report(max_records=0, on_record=on_record)
    try:
        repairer = SessionRepairer(fmt, report=report, on_invalid=settings.on_invalid, source=job.name,
                                   **settings.session_options)
    except UsageError as exc:
        raise InputError(f"{exc}", source=job.name, hint="Give --to jsonl to repair it as chat messages") from None
    buf = out.buf
    done = 0
    while True:
        chunk = src.read(CHUNK_BYTES)
        buf += repairer.feed(chunk) if chunk else repairer.close()
        if len(buf) >= FLUSH_BYTES or not chunk:
            out.drain()
            tracker.advance(report.messages_in - result.messages_in, src.bytes - done)
            result.messages_in, done = report.messages_in, src.bytes
            if STOP.is_set():
                raise Interrupted(0)
        if not chunk:
            break
    if repairer.torn is not None:
        say(f"warning: {job.name}:{repairer.torn}: the last line is torn (no newline, not JSON: its writer stopped "
            "mid-line); left out, as the tool skips it on resume, and kept whole in the report", err=True)
    result.format = repairer.format
    result.conversations = 1 if repairer.format is not None else 0
    result.messages_in, result.messages_out = report.messages_in, report.messages_out
    result.counts.update(report.counts)


def _locate(exc: InputError, job: Job, conversations: ConversationStream, core: Normalizer | None, multi: bool) -> None:
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
