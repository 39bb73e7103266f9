"""The standard streams, when they are missing or fail.

A command may be started with a standard stream closed (``>&-``, ``2>&-``, ``<&-``, a
daemon, a cron job): Python then sets ``sys.stdout`` (or ``stdin``, ``stderr``) to None, and
every ``isatty()`` or ``flush()`` would raise AttributeError. :func:`guard_std_streams`, run
first by ``main``, puts a stand-in there:

* closed **stdin** reads fail with EBADF (``stdin_closed()`` lets a command say so first);
* closed **stdout** writes fail with EBADF: output nobody can receive is an I/O failure
  (exit 1), never a silent success;
* closed **stderr** swallows human text (there is no one to tell), so ``-q -o FILE 2>&-``
  still does its work; its binary side fails like stdout (``--report -`` would be lost).

The file descriptors 0-2 themselves are pointed at /dev/null when closed, so that no file
opened later (an input, a temporary output) gets fd 1 or 2 and receives stray writes.

:func:`stdout_error` is the one sentence for a failed write to stdout (/dev/full, past
``ulimit -f``, closed).
"""

from __future__ import annotations

import errno
import io
import os
import sys

__all__ = ["guard_std_streams", "stdin_closed", "stdout_error"]

_NAMES = ("stdin", "stdout", "stderr")


def _closed_error(name: str) -> OSError:
    return OSError(errno.EBADF, f"{name} is closed")


class _ClosedBinary(io.RawIOBase):
    """The ``buffer`` of a closed standard stream: every read or write fails (EBADF)."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self._name = name

    def readable(self) -> bool:
        return True

    def writable(self) -> bool:
        return True

    def readinto(self, buffer: object) -> int:
        raise _closed_error(self._name)

    def write(self, data: object) -> int:
        raise _closed_error(self._name)

    def isatty(self) -> bool:
        return False


class _ClosedText:
    """A closed standard stream. Text written to it fails (stdout) or is dropped (stderr).
    (Not an ``io.TextIOBase``: its ``encoding`` is read-only there, and click asks for it.)"""

    encoding = "utf-8"
    errors = "strict"
    closed = False

    def __init__(self, name: str, *, drop_text: bool) -> None:
        self.name = name
        self._drop = drop_text
        self.buffer = _ClosedBinary(name)

    def readable(self) -> bool:
        return True

    def writable(self) -> bool:
        return True

    def read(self, size: int = -1) -> str:
        raise _closed_error(self.name)

    def readline(self, size: int = -1) -> str:
        raise _closed_error(self.name)

    def write(self, text: str) -> int:
        if self._drop:
            return len(text)
        raise _closed_error(self.name)

    def flush(self) -> None:
        pass  # nothing is ever pending

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        raise io.UnsupportedOperation(f"{self.name} is closed")


def _occupy(fd: int) -> None:
    try:
        os.fstat(fd)
        return  # open after all (the stream was None for another reason)
    except OSError:
        pass
    try:
        new = os.open(os.devnull, os.O_RDWR)
        if new != fd:
            os.dup2(new, fd)
            os.close(new)
    except OSError:
        pass  # then files may land on it; nothing writes there through sys.* anyway


def guard_std_streams() -> None:
    """Replace each missing standard stream by a stand-in (see the module docstring)."""
    for fd, name in enumerate(_NAMES):
        if getattr(sys, name) is None:
            _occupy(fd)
            setattr(sys, name, _ClosedText(name, drop_text=name == "stderr"))


def stdin_closed() -> bool:
    return isinstance(sys.stdin, _ClosedText)


def stdout_error(exc: OSError) -> str:
    """What to say when writing to stdout failed (not EPIPE: a reader that stopped is fine)."""
    what = exc.strerror or str(exc)
    if exc.errno == errno.EBADF:
        return "<stdout>: cannot write: stdout is closed. Redirect it, or write to a file with -o"
    if exc.errno == errno.ENOSPC:
        todo = "Free some space, or write elsewhere with -o"
    elif exc.errno == errno.EFBIG:
        todo = "The file size limit (ulimit -f) was reached: raise it, or write elsewhere with -o"
    else:
        todo = "Check where stdout goes, or write to a file with -o"
    return f"<stdout>: cannot write: {what}; the output is incomplete. {todo}"
