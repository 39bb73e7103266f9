"""Repairing files for the command line: one file per :func:`repair_file` (many at once:
``_jobs``).

The per-file pipe is ``read_conversations`` -> one ``Normalizer`` per conversation -> the
``--to`` format's encoder (``formats.ENCODERS``) -> a byte buffer written in blocks of
:data:`FLUSH_BYTES`. Nothing in it grows with the input: the reader holds a chunk, the core
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

import os
import stat
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import IO, Any

import orjson

from ._files import Job, open_output
from ._progress import Tracker
from ._text import error_text
from .._core import Normalizer
from .._errors import InputError
from ..profiles._profiles import Profile, get_profile
from .._report import Report, Repair
from ..formats import ENCODERS, FORMATS, ConversationStream, Encoder, read_conversations
from ..formats._encode import FLUSH_BYTES

__all__ = ["Settings", "FileResult", "Interrupted", "repair_file", "FLUSH_BYTES", "STOP"]

_LINE = orjson.OPT_APPEND_NEWLINE

#: Set by the signal handler; workers check it at every flush point.
STOP = threading.Event()


class Interrupted(BaseException):
    """^C or SIGTERM reached a worker (a BaseException, like KeyboardInterrupt, so no
    ``except Exception`` on the way swallows it)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


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


@dataclass
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
        kinds = ", ".join(f"{k} {v}" for k, v in sorted(self.counts.items()))
        return f"{self.messages_in} in, {self.messages_out} out; " + (kinds or "no repairs")


class _Input:
    """A binary input for the readers: ``read`` returns what is there (``read1``), counts
    bytes, and first writes out pending output when asked to (pipes)."""

    def __init__(self, raw: Any, name: str, before_read: Callable[[], None] | None) -> None:
        self.raw = raw
        self.name = name
        self.bytes = 0
        self._before = before_read
        self._read1 = getattr(raw, "read1", raw.read)

    def read(self, n: int = -1) -> bytes:
        if self._before is not None:
            self._before()
        data: bytes = self._read1(n if n > 0 else 1 << 20)
        self.bytes += len(data)
        return data

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        try:
            return bool(self.raw.seekable())
        except (AttributeError, OSError, ValueError):
            return False

    def tell(self) -> int:
        return int(self.raw.tell())

    def seek(self, pos: int, whence: int = 0) -> int:
        return int(self.raw.seek(pos, whence))

    def close(self) -> None:
        self.raw.close()


class _Output:
    """The pending output bytes and where they go."""

    def __init__(self, dest: Any) -> None:
        self.dest = dest
        self.buf = bytearray()

    def drain(self) -> None:
        if self.buf:
            self.dest.write(self.buf)
            self.buf.clear()
            stdout = getattr(sys.stdout, "buffer", None)  # (a notebook's stdout has none)
            if stdout is not None and self.dest is stdout:
                stdout.flush()


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
                raw_in = open(job.input, "rb")  # noqa: SIM115 - closed in finally
                tracker.add_bytes_total(os.fstat(raw_in.fileno()).st_size)
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
        src = _Input(raw_in, job.name, out.drain if pipe else None)
        try:
            _pump(src, out, job, settings, tracker, result)
            out.drain()
            if atomic is not None:
                atomic.commit()
            elif job.output == "-":
                sys.stdout.buffer.flush()
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

    def on_record(record: Repair) -> None:
        if settings.spool_dir is not None:
            data = record.model_dump(mode="json")
            if conv_index[0] is not None:
                data["conversation"] = conv_index[0]
            spool.write(orjson.dumps(data, default=str, option=_LINE))

    spool = _Spool(settings.spool_dir, result)
    try:
        _pump_records(src, out, job, settings, tracker, result, on_record, conv_index)
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
                  on_record: Callable[[Repair], None], conv_index: list[int | None]) -> None:
    reader_report = Report(max_records=0, on_record=on_record)
    conversations = read_conversations(
        src, settings.fmt, report=reader_report, on_invalid=settings.on_invalid  # type: ignore[arg-type]
    )
    buf = out.buf
    encoder: Encoder | None = None
    multi = False
    done = [0, 0]  # messages and bytes already counted by the tracker
    core: Normalizer | None = None

    def flush_point() -> None:
        # Every FLUSH_BYTES of output: write, update the counters, honour a stop request.
        out.drain()
        n = result.messages_in + (core.report.messages_in if core is not None else 0)
        tracker.advance(n - done[0], src.bytes - done[1])
        done[0], done[1] = n, src.bytes
        if STOP.is_set():
            raise Interrupted(0)

    for conv in conversations:
        if encoder is None:
            encoder, multi = _encoder(settings, conversations, result)
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
        message = encoder.message
        try:
            buf += encoder.begin(conv.extra)
            # The hot path: nothing per message but feed, the encoder and a length check.
            for m in conv.messages:
                for repaired in feed(m):
                    buf += message(repaired)
                if len(buf) >= FLUSH_BYTES:
                    flush_point()
            for repaired in core.close():
                buf += message(repaired)
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
        encoder, multi = _encoder(settings, conversations, result)
        buf += encoder.start()
    buf += encoder.finish()
    for key, value in reader_report.counts.items():
        result.counts[key] = result.counts.get(key, 0) + value
    tracker.advance(result.messages_in - done[0], src.bytes - done[1])


# How each single-conversation output is called in the error that refuses a second one.
_ONE_CONVERSATION = {"jsonl": "chat JSONL", "json": "a JSON array of chat messages"}


def _encoder(settings: Settings, conversations: ConversationStream, result: FileResult) -> tuple[Encoder, bool]:
    """The output's encoder, once the format read is known; and whether that format holds
    several conversations (``--to auto`` then writes fine-tuning JSONL)."""
    result.format = conversations.format
    multi = bool(getattr(FORMATS.get(result.format or ""), "multi", False))
    kind = settings.to if settings.to != "auto" else ("finetune" if multi else "jsonl")
    return ENCODERS[kind](), multi


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
