"""Text that reaches a terminal: the one place where data is made safe to print.

File names, call ids, provider texts and message contents come from the user's data. Printed
raw, an escape sequence in them is obeyed by the terminal (set the title, clear the screen,
fake a prompt), and a bidi override makes a line read differently from what it holds. So
every human-readable line the CLI prints goes through :func:`printable` (``batch.text``), which shows such
characters as escapes (``\\x1b``, ``\\u202e``). JSON output (the repaired JSONL, ``--report``)
is data and is never passed through here.

Text is only ever given to rich as ``Text`` objects (never markup strings), so ``[bold]`` in
a file name stays those seven characters.
"""

from __future__ import annotations

import click

from ..batch.text import WARN, error_text, printable
from ..batch.tracking import clear as clear_progress

__all__ = ["printable", "say", "error_text"]


def say(text: str, *, err: bool = False) -> None:
    """Print one line of human text (to stderr with ``err``), made :func:`printable`; the
    progress line, if one is shown, is erased first (it is drawn again below)."""
    clear_progress()
    click.echo(printable(text), err=err)


# The batch engine's warnings (a torn last line) are said as every other line of the command.
WARN[:] = [lambda text: say(text, err=True)]
