"""What comes into the core, checked (``_core.py``): a message that is not a plain dict
validated, the errors for one nested too deep or of an unexpected shape, an invalid one
left out (``on_invalid``), and a call the instance must refuse.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final, NoReturn

from pydantic import ValidationError

from ._notes import jsonable
from .._errors import InputError, InvalidMessage, LimitExceeded, UsageError
from .._messages import as_message, invalid_message, validate_plain
from .._depth import deeper_than

if TYPE_CHECKING:
    from ._actions import TableActions

__all__ = ["IN_USE", "TOO_DEEP_TO_DUMP", "validated", "too_nested", "unexpected_shape", "refuse", "dump", "too_deep",
           "invalid"]

Message = dict[str, Any]

#: Normalizer._broken while a message is being placed (a re-entrant call is refused).
IN_USE: Final = "in use"
#: What ``dump`` returns for a model nested past pydantic's own serialization limit (not
#: None: ``None`` given as a message dumps to itself, and is invalid, not too deep).
TOO_DEEP_TO_DUMP: Final = object()


def validated(n: TableActions, message: Any, index: int) -> Message | None:
    """A message that is not a plain dict, validated (pydantic); None when it is invalid
    and left out (recorded: ``on_invalid="skip"``; ``"error"`` raises)."""
    try:
        raw = message if type(message) is dict else dump(message)
        if raw is TOO_DEEP_TO_DUMP or (type(raw) is dict and deeper_than(raw, n._max_depth)):
            invalid(n, too_deep(n, index), message)
            return None
        # (validate_plain: loads the models on first use; see _messages)
        validated: Message = validate_plain(raw)
        return validated
    except ValidationError as exc:
        invalid(n, invalid_message(exc, message, index), message)
        return None


def too_nested(n: TableActions, message: Any, index: int) -> InputError:
    # A merge compared two deep values of a message's own keys (which validation
    # passes as they are), or a record described one: said as the limit it passed.
    if deeper_than(message, n._max_depth):
        return too_deep(n, index)
    return InvalidMessage(
        "message is nested too deeply to process", index=index,
        hint="a chat message is a few levels deep; this looks like corrupted or hostile data",
    )


def unexpected_shape(exc: Exception, index: int) -> InvalidMessage:
    # With validation off, a message whose shape the core's actions tripped on.
    return InvalidMessage(
        f"message has an unexpected shape ({type(exc).__name__}: {exc})",
        index=index,
        hint="validation is off (validate=False); turn it on to get a precise error",
    )


def refuse(n: TableActions, what: str) -> NoReturn:
    if n._broken is IN_USE:
        raise UsageError(
            f"{what}() called while this Normalizer is still placing a message (from an "
            "on_record callback, or another task or thread sharing it); a Normalizer holds "
            "the pending turn of one history: create one Normalizer per history"
        )
    if n._broken:
        raise UsageError(
            f"{what}() called on a normalizer that raised an error; its pending turn may be "
            "incomplete. Start a new Normalizer (and fix or skip the offending message)."
        )
    raise UsageError(f"{what}() called after close(); start a new Normalizer for a new history")


def dump(message: Any) -> Any:
    """as_message; :data:`TOO_DEEP_TO_DUMP` when pydantic refuses to dump a model nested
    too deep (its own serialization limit, 255 levels: a ValueError, this limit's business)."""
    try:
        return as_message(message)
    except ValueError as exc:
        # pydantic-core's words for its depth limit: "... serialization depth ..." (2.14.4
        # on), "Circular reference detected (depth exceeded)" (2.14.0, the floor).
        if type(exc) is ValueError and ("serialization depth" in str(exc) or "depth exceeded" in str(exc)):
            return TOO_DEEP_TO_DUMP
        raise


def too_deep(n: TableActions, index: int) -> LimitExceeded:
    limit = n._max_depth
    return LimitExceeded(
        f"message nests deeper than {limit} levels of objects and lists (max_depth)",
        limit="max_depth", value=limit, index=index,
        hint="a chat message is about 10 levels deep; this looks like corrupted or hostile data "
             "(raise max_depth if it is not)",
    )


def invalid(n: TableActions, error: InputError, original: Any) -> list[Message]:
    if n.options.on_invalid == "error":
        raise error
    # Nothing was placed: whatever on_record does, the instance stays usable.
    n._broken = IN_USE
    try:
        n._report.add(
            "skip_invalid", f"left out an invalid message: {error.what}", input=[error.index or 0],
            dropped=jsonable(original),
        )
        return []
    finally:
        n._broken = False

# -- emission
