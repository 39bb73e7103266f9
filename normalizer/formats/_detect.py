"""Format detection from the first records of a file."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .._errors import InputError
from ._format import Claim, Format
from ._registry import CLAIMS, INPUT_FORMATS, REGISTRY, SESSION_FORMATS

__all__ = ["Guess", "NO_GUESS", "detect_format", "decide", "guess", "nothing_recognised", "DETECT_RECORDS", "SESSION_FORMATS"]

#: Records looked at before settling on a weak guess (a plain ``{"role", "content"}`` could
#: be Chat, Anthropic or Responses; a later record with tool calls usually tells).
DETECT_RECORDS = 16

# The formats in the order detection asks them: every format is asked, and the most specific
# clue wins (Evidence), the registry's order breaking ties (see ``_format``).
_ASKED: tuple[Format, ...] = REGISTRY


@dataclass(frozen=True, slots=True)
class Guess:
    """What one record looks like (:func:`guess`).

    Attributes:
        format: the name of the format whose clue in it is the most specific; None: it
            looks like no format.
        decisive: that clue settles the format; False: a weak guess (a plain role message),
            which a later record or the document's own keys may override.
    """

    format: str | None
    decisive: bool = False


#: The guess of a record that looks like no format.
NO_GUESS = Guess(None)


def guess(record: Any) -> Guess:
    """What one record looks like; :data:`NO_GUESS` when it says nothing."""
    if not isinstance(record, dict):
        return NO_GUESS
    best = None
    name: str | None = None
    for fmt in _ASKED:
        clue = fmt.guess(record)
        if clue is not None and (best is None or clue.evidence < best.evidence):
            best, name = clue, fmt.name
    if best is None:
        return NO_GUESS
    return Guess(name, best.decisive)


def detect_format(first_records: Sequence[Any], *, hint: str | None = None) -> str:
    """The format name (a key of :data:`FORMATS`) the first records of a file are in.

    Args:
        first_records: decoded records from the start of the file (one is often enough;
            up to :data:`DETECT_RECORDS` are useful).
        hint: what the container said: one of its own keys, or the key of its record
            array, that claims it for a format (``_registry.CLAIMS``: ``"input"`` or
            ``"instructions"``, a Responses request; ``"system"``, an Anthropic request).
            Any other key tells nothing.

    Raises:
        InputError: nothing in the records looks like a known format.
    """
    return decide(map(guess, first_records), hint=hint)


def decide(guesses: Iterable[Guess], *, hint: str | None = None) -> str:
    """:func:`detect_format` from :func:`guess`'s verdicts on the first records, for a caller
    that guessed each record as it read it (so none is guessed twice). Taken lazily: none is
    asked for past a decisive one. With none decisive, the format the ``hint`` claims the
    document for (:class:`~._format.Claim`) comes before a weak guess."""
    weak: str | None = None
    records = False
    for told in guesses:
        if told.decisive:
            assert told.format is not None
            return told.format
        records = True
        weak = weak or told.format
    claimant = CLAIMS.get(hint) if hint is not None else None
    if claimant is not None:
        claim = claimant.document.claim
        if claim is Claim.DOCUMENT or (claim is Claim.WEAK_RECORDS and weak is not None):
            return claimant.name
    if weak is not None:
        return weak
    if not records:
        return "chat"  # an empty input is an empty chat history
    raise InputError(
        "cannot tell the format of this input",
        hint=f"Name it with --from ({', '.join(INPUT_FORMATS)})",
    )


def nothing_recognised(fmt: str, guesses: list[Guess], known: Iterable[str], source: str | None) -> InputError:
    """The error for a file in which no record was recognised as ``fmt``: the format its
    records look like (``guesses``: :func:`guess` of the first ones), when one does."""
    likely = next((told.format for told in guesses if told.decisive), None)
    likely = likely or next((told.format for told in guesses if told.format is not None), None)
    what = f"no record of this file was recognised as {fmt}"
    if likely is not None and likely != fmt:
        return InputError(f"{what}; it looks like {likely}", source=source,
                          hint=f"Read it with --from {likely} (in Python: format={likely!r})")
    return InputError(f"{what}, and it looks like none of the known formats", source=source,
                      hint=f"Name its format with --from (in Python: format=...): one of {', '.join(known)}")
