"""What a file is, told once: whether it is repaired as a session in its own format
(:func:`session_format`), and what its head told (:func:`peek`).

With ``--from auto`` the first lines say whether the input is a session (:func:`peek`);
they are then read again from the start, by a reader told what they said (the container,
and their format when it is the one the reader would find: ``formats._reader.Head``), so a
file's head is judged once and its format detected once.
"""

from __future__ import annotations

from dataclasses import dataclass

from .._errors import InputError
from .._json import JSONDecodeError, loads
from ..formats import SESSION_FORMATS
from ..formats._detect import DETECT_RECORDS, Guess, decide, guess
from ..formats._reader import Head
from ..formats._records import BOM, CHUNK_BYTES, DEFAULT_MAX_DEPTH, DEFAULT_MAX_LINE_BYTES, Sniffer
from ..formats._registry import body_keys
from .plan import Job
from .results import Settings
from .streams import Input

__all__ = ["session_format", "Route", "peek", "Peek", "FirstRecords"]


@dataclass(frozen=True, slots=True)
class Route:
    """Which pipe a file goes through (:func:`session_format`)."""

    #: The session format to repair it in, its own; None: the chat pipe.
    session: str | None
    #: What the peek at its head told, for the chat pipe's reader (None: nothing was peeked
    #: at, or the reader finds it itself).
    head: Head | None


def session_format(src: Input, job: Job, settings: Settings) -> Route:
    """The session format to repair the file in (``--to claude-code|codex``, or ``--to
    auto`` on a session), else None: the file goes through the chat pipe; and what the peek
    at its head told, for the chat pipe's reader (None: nothing was peeked at)."""
    if settings.to in SESSION_FORMATS:
        return Route(settings.to if settings.fmt == "auto" else settings.fmt, None)
    if settings.to != "auto":
        return Route(None, None)
    fmt: str | None = settings.fmt
    head: Head | None = None
    if fmt == "auto":
        peeked = peek(src)
        fmt, head = peeked.fmt, peeked.head
    if fmt not in SESSION_FORMATS:
        return Route(None, head)
    if settings.provider and not job.in_place:
        return Route(None, head)  # a provider's profile asks for its chat messages
    return Route(fmt, head)


@dataclass(frozen=True, slots=True)
class Peek:
    """What the head of an input told (:func:`peek`)."""

    #: The format its first records show (what chooses a session); None for a JSON document,
    #: an empty input, or lines that say nothing (the chat reader then decides, and says
    #: what is wrong).
    fmt: str | None
    #: What the chat pipe's reader takes as told: the container, and the format when the
    #: reader would find it from the same records (``Head``); None: it finds them itself.
    head: Head | None


def peek(src: Input) -> Peek:
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
    sniffer = Sniffer(DEFAULT_MAX_LINE_BYTES, body_keys=body_keys(None))  # (as a reader that detects)
    first = FirstRecords()
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
                    return Peek(None, _head(read, kind, None))
                if kind == "auto":
                    continue
                head = sniffer.head  # (the lines so far: parsed from here on, chunk by chunk)
                decided = first.feed(head[3:] if head.startswith(BOM) else head, final=not chunk)
            else:
                decided = first.feed(chunk, final=not chunk)
            if decided is not None:
                told = decided.fmt if decided.exact and size <= DEFAULT_MAX_LINE_BYTES else None
                return Peek(decided.fmt, _head(read, kind, told))
            if size > DEFAULT_MAX_LINE_BYTES:
                return Peek(first.verdict(), _head(read, kind, None))
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


@dataclass(frozen=True, slots=True)
class _Verdict:
    """What the first records settle (:class:`FirstRecords`)."""

    fmt: str | None
    #: Told from records the reader would detect from (see FirstRecords): it may take it.
    exact: bool = False


class FirstRecords:
    """The first records of a JSONL head, parsed as their lines complete (blank lines passed
    over; a line that goes on across chunks is joined once, when it ends), each guessed once."""

    def __init__(self) -> None:
        self.guesses: list[Guess] = []
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
            told = guess(value)
            if told.decisive:
                return _Verdict(told.format, not self._deep)
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

