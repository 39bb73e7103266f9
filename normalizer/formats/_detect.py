"""Format detection from the first records of a file."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from .._errors import InputError
from ._format import Format
from ._registry import INPUT_FORMATS, REGISTRY, SESSION_FORMATS

__all__ = ["detect_format", "decide", "guess", "nothing_recognised", "DETECT_RECORDS", "SESSION_FORMATS"]

#: Records looked at before settling on a weak guess (a plain ``{"role", "content"}`` could
#: be Chat, Anthropic or Responses; a later record with tool calls usually tells).
DETECT_RECORDS = 16

# The formats in the order detection asks them: every format is asked, and the most specific
# clue wins (Evidence), the registry's order breaking ties (see ``_format``).
_ASKED: tuple[Format, ...] = REGISTRY


def guess(record: Any) -> tuple[str | None, bool]:
    """``(format, decisive)`` for one record; ``(None, False)`` when it says nothing."""
    if not isinstance(record, dict):
        return None, False
    best = None
    name: str | None = None
    for fmt in _ASKED:
        clue = fmt.guess(record)
        if clue is not None and (best is None or clue.evidence < best.evidence):
            best, name = clue, fmt.name
    if best is None:
        return None, False
    return name, best.decisive


def detect_format(first_records: Sequence[Any], *, hint: str | None = None) -> str:
    """The format name (a key of :data:`FORMATS`) the first records of a file are in.

    Args:
        first_records: decoded records from the start of the file (one is often enough;
            up to :data:`DETECT_RECORDS` are useful).
        hint: what the container said: ``"input"`` for a document's ``input`` array
            (a Responses request), ``"system"`` when a document has a top-level ``system``
            (an Anthropic request).

    Raises:
        InputError: nothing in the records looks like a known format.
    """
    return decide(map(guess, first_records), hint=hint)


def decide(guesses: Iterable[tuple[str | None, bool]], *, hint: str | None = None) -> str:
    """:func:`detect_format` from :func:`guess`'s verdicts on the first records, for a caller
    that guessed each record as it read it (so none is guessed twice). Taken lazily: none is
    asked for past a decisive one."""
    weak: str | None = None
    records = False
    for name, decisive in guesses:
        if decisive:
            assert name is not None
            return name
        records = True
        weak = weak or name
    if hint == "input":
        return "responses"
    if hint == "system" and weak == "chat":
        return "anthropic"
    if weak is not None:
        return weak
    if not records:
        return "chat"  # an empty input is an empty chat history
    raise InputError(
        "cannot tell the format of this input",
        hint=f"Name it with --from ({', '.join(INPUT_FORMATS)})",
    )


def nothing_recognised(fmt: str, guesses: list[tuple[str | None, bool]], known: Iterable[str],
                       source: str | None) -> InputError:
    """The error for a file in which no record was recognised as ``fmt``: the format its
    records look like (``guesses``: :func:`guess` of the first ones), when one does."""
    likely = next((name for name, decisive in guesses if decisive), None)
    likely = likely or next((name for name, _ in guesses if name is not None), None)
    what = f"no record of this file was recognised as {fmt}"
    if likely is not None and likely != fmt:
        return InputError(f"{what}; it looks like {likely}", source=source,
                          hint=f"Read it with --from {likely} (in Python: format={likely!r})")
    return InputError(f"{what}, and it looks like none of the known formats", source=source,
                      hint=f"Name its format with --from (in Python: format=...): one of {', '.join(known)}")
