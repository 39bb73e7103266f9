"""The byte streams of one file's repair: :class:`Input` (what the readers read: counted,
given back after a peek, watched for appends with ``--in-place``) and :class:`Output` (the
pending output bytes and where they go).

Latency in a pipe: the input is read with ``read1`` (whatever the pipe has, not a full
chunk) and, when the output is a pipe too, the pending output is written out before every
read, so a slow producer's messages come out as soon as their turn is complete.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Callable
from typing import Any

from ..formats._records import count_newlines
from .tracking import WRITTEN
from .tracking import clear as clear_progress

__all__ = ["Changed", "Input", "Output", "is_pipe"]


class Changed(Exception):
    """A file repaired in place changed while it was read (:meth:`Input.unchanged`)."""


#: How much of the end of what was read is kept, to tell that a file that grew was appended
#: to (those bytes are still there) rather than rewritten.
_TAIL_BYTES = 4096


class Input:
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


class Output:
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


def is_pipe(stream: Any) -> bool:
    """Anything but a regular file: a reader may be waiting for each line."""
    try:
        return not stat.S_ISREG(os.fstat(stream.fileno()).st_mode)
    except (OSError, ValueError, AttributeError):
        return True

