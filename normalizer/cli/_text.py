"""Text that reaches a terminal: the one place where data is made safe to print.

File names, call ids, provider texts and message contents come from the user's data. Printed
raw, an escape sequence in them is obeyed by the terminal (set the title, clear the screen,
fake a prompt), and a bidi override makes a line read differently from what it holds. So
every human-readable line the CLI prints goes through :func:`printable`, which shows such
characters as escapes (``\\x1b``, ``\\u202e``). JSON output (the repaired JSONL, ``--report``)
is data and is never passed through here.

Text is only ever given to rich as ``Text`` objects (never markup strings), so ``[bold]`` in
a file name stays those seven characters.
"""

from __future__ import annotations

import re

import click

from .._errors import InputError
from ._progress import clear as clear_progress

__all__ = ["printable", "say", "error_text"]

# C0 controls but tab and newline (a multi-line message keeps its lines; each line is still
# escaped), DEL, C1 controls, and the bidi embeddings, overrides and isolates.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def printable(text: str) -> str:
    """``text`` with every character a terminal would act on shown as an escape."""
    return _UNSAFE.sub(_escape, text)


def say(text: str, *, err: bool = False) -> None:
    """Print one line of human text (to stderr with ``err``), made :func:`printable`; the
    progress line, if one is shown, is erased first (it is drawn again below)."""
    clear_progress()
    click.echo(printable(text), err=err)


def error_text(exc: BaseException) -> str:
    """An error as the command line says it. Bad input reads ``FILE:LINE:COL: message N:
    what. What to do`` (the parts known): the compilers' form, which editors and grep read,
    and the form of ``check``'s findings. (``InputError`` renders itself so, in Python too.)"""
    if isinstance(exc, InputError):
        return exc._render()  # current even if a field was set after it was raised
    return str(exc)
