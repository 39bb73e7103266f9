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
    """Print one line of human text (to stderr with ``err``), made :func:`printable`."""
    click.echo(printable(text), err=err)


def error_text(exc: BaseException) -> str:
    """An error as the command line says it. Bad input reads ``FILE:LINE:COL: message N:
    what. What to do`` (the parts known): the compilers' form, which editors and grep read,
    and the form of ``check``'s findings."""
    if not isinstance(exc, InputError):
        return str(exc)
    where = []
    if exc.source is not None:
        where.append(exc.source)
        if exc.line is not None:
            where[-1] += f":{exc.line}" + (f":{exc.column}" if exc.column is not None else "")
    if exc.index is not None:
        where.append(f"message {exc.index}")
    text = ": ".join([*(where or ["input"]), exc.what])
    return f"{text}. {exc.hint}" if exc.hint else text
