"""What the commands share at run time: the words of an interrupted run (``_RUNNING``), a
reader that went away (:class:`_PipeClosed`), stdin that cannot be read, a missing input,
and the core's options checked before any file is touched."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import click

from .._errors import NormalizerError
from ._text import say

if TYPE_CHECKING:
    from ..profiles._profiles import Profile

__all__: list[str] = []


class _PipeClosed(Exception):
    """stdout was closed by its reader (``| head``). Not an OSError: click turns an EPIPE
    OSError into exit status 1, and a reader that stopped early is not a failure of ours."""



#: repair where the output goes ("stdout", "files" or "in-place").
_RUNNING: dict[str, str] = {}



def _need_stdin(items: list[str], no_input: str, *, implicit: bool) -> None:
    """Refuse to read stdin when it is closed, or when it is the terminal and no input was
    given at all (the user forgot the file: waiting for typed JSON would look like a hang).
    An explicit ``-`` on a terminal is read (pasted or typed), with a word on how to end it."""
    from ._streams import stdin_closed

    if "-" in items and stdin_closed():
        raise click.UsageError("stdin is closed: give a file or a folder, or pipe a session into it")
    if "-" in items and sys.stdin.isatty():
        if implicit:
            raise click.UsageError(no_input)
        if sys.stderr.isatty():
            say("reading <stdin> from the terminal: paste or type the history, then press Ctrl-D", err=True)


def _missing_text(path: str) -> str:
    return f"{path}: no such file or folder. Check the path"


def _validate_core(profile: Profile, options: dict[str, Any]) -> None:
    # Wrong options are usage errors (exit 2) before any file is touched.
    from .._core import Normalizer

    try:
        Normalizer(profile, **options)
    except NormalizerError as exc:
        raise click.UsageError(str(exc)) from None

