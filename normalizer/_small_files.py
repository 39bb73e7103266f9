"""Small data files the command reads whole: profile files (``profiles._profiles``) and
configuration files (``cli._config``). One home for how such a file is read, whatever the
path names: a regular file only (a FIFO, a device such as ``/dev/zero`` or a directory is
refused without being read, so a FIFO never blocks), at most ``limit`` bytes (never more than
one byte past it is read, whatever ``stat`` said), UTF-8; and for :func:`nested_at`, nested at
most ``limit`` levels, checked on the text before a parser that recurses once a level sees it.

Every refusal is a :class:`UsageError` whose text names the file (and the line where it can),
spelled with the caller's ``what`` (``"a profile file"``) and ``limit_name``.
"""

from __future__ import annotations

import os
import re
import stat

from ._errors import UsageError

__all__ = ["read_small_text", "nested_at"]

_FILE_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
               (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def read_small_text(file: str | os.PathLike[str], *, what: str, limit: int, limit_name: str) -> str:
    """The file's text, if it is a regular file of at most ``limit`` bytes in UTF-8.

    ``what`` names the kind of file in the errors (``"a profile file"``), ``limit_name`` the
    constant that is ``limit`` (``"MAX_PROFILE_BYTES"``).
    """
    noun = what.split(" ", 1)[1]  # "a profile file" -> "profile file"
    try:
        # stat before open: opening a FIFO would block, opening a device may act on it.
        _regular(file, os.stat(file).st_mode, what)
        # O_NONBLOCK: should the path become a FIFO after the stat, opening it returns at
        # once, and the fstat below refuses it.
        fd = os.open(file, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except OSError as exc:
        raise UsageError(f"cannot read {noun} {file}: {exc.strerror or exc}") from None
    try:
        _regular(file, os.fstat(fd).st_mode, what)
        chunks: list[bytes] = []
        size = 0
        while size <= limit:  # never more than the cap + 1 byte, whatever stat said
            chunk = os.read(fd, limit + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        raise UsageError(f"cannot read {noun} {file}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    if size > limit:
        raise UsageError(f"{file}: {what} is at most {limit} bytes ({limit_name}); is this the right file?")
    raw = b"".join(chunks)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise UsageError(f"{file}:{line}: {what} must be UTF-8 text (byte {exc.start} is not)") from None


def _regular(file: str | os.PathLike[str], mode: int, what: str) -> None:
    if stat.S_ISREG(mode):
        return
    kind = next((name for test, name in _FILE_KINDS if test(mode)), "not a regular file")
    raise UsageError(f"{file}: {what} must be a regular file, this is {kind}")


# What can nest, strings and comments skipped (a bracket or a dot inside a string is text).
_JSON_NESTING = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.S)
_TOML_NESTING = re.compile(
    r'"""(?:[^\\]|\\.)*?"""|\'\'\'.*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\'|#[^\n]*|[\[\]{}.\n]', re.S
)


def nested_at(text: str, *, toml: bool, limit: int) -> tuple[int, int] | None:
    """Where (line, column) the text first nests deeper than ``limit``, or None.

    One regex pass, before any parser sees the text: json and tomllib recurse once per
    level (tomllib crashes with a RecursionError a few hundred levels down). TOML also nests
    with dotted keys (``a.b.c = 1``, ``[a.b.c]``), so a dot outside a string counts as a
    level until the end of its line; that over-counts a float (``1.5``), which is harmless
    at these caps: no real file has ``limit`` floats on a line.
    """
    depth = dots = 0
    for match in (_TOML_NESTING if toml else _JSON_NESTING).finditer(text):
        token = match.group()
        if token in ("[", "{"):
            depth += 1
        elif token in ("]", "}"):
            depth = max(depth - 1, 0)
        elif token == ".":
            dots += 1
        elif token == "\n":
            dots = 0
            continue
        else:
            continue  # a string or a comment
        if depth + dots > limit:
            at = match.start()
            return text.count("\n", 0, at) + 1, at - (text.rfind("\n", 0, at) + 1) + 1
    return None
