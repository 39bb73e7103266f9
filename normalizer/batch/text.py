"""Text for a person, made safe to print: the one place where data is escaped.

File names, call ids, provider texts and message contents come from the user's data. Printed
raw, an escape sequence in them is obeyed by the terminal (set the title, clear the screen,
fake a prompt), and a bidi override makes a line read differently from what it holds. So
every human-readable line goes through :func:`printable`, which shows such characters as
escapes (``\\x1b``, ``\\u202e``). JSON output (the repaired JSONL, ``--report``) is data and
is never passed through here. (The command line's own ``say`` is ``cli._text``.)
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable

from .._errors import InputError
from .tracking import clear as clear_progress

__all__ = ["printable", "error_text", "warn", "WARN"]

# C0 controls but tab and newline (a multi-line message keeps its lines; each line is still
# escaped), DEL, C1 controls, and the bidi embeddings, overrides and isolates.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def printable(text: str) -> str:
    """``text`` with every character a terminal would act on shown as an escape."""
    return _UNSAFE.sub(_escape, text)


def error_text(exc: BaseException) -> str:
    """An error as the command line says it. Bad input reads ``FILE:LINE:COL: message N:
    what. What to do`` (the parts known): the compilers' form, which editors and grep read,
    and the form of ``check``'s findings. (``InputError`` renders itself so, in Python too.)"""
    if isinstance(exc, InputError):
        return exc._render()  # current even if a field was set after it was raised
    return str(exc)


#: How :func:`warn` says a line, when someone says it for it: the command line puts its own
#: ``say`` here (``cli._text``), so its warnings go out as all its other lines do.
WARN: list[Callable[[str], None]] = []


def warn(text: str) -> None:
    """One line of human text on stderr, made :func:`printable`: through :data:`WARN` when
    it is set (the command line), else as the command line's ``say(text, err=True)`` writes
    it (one write of the line and its newline, then a flush), without click; the progress
    line, if one is shown, is erased first."""
    if WARN:
        WARN[0](text)
        return
    clear_progress()
    stream = sys.stderr
    stream.write(printable(text) + "\n")
    stream.flush()
