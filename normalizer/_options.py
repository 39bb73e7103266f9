"""Options of the core, and the documented limits of its buffers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from ._errors import UsageError
from ._report import DEFAULT_MAX_RECORDS, Repair

__all__ = [
    "Options",
    "DEFAULT_STUB_TEXT",
    "DEFAULT_MAX_TURN_FRAGMENTS",
    "DEFAULT_MAX_HELD_MESSAGES",
    "DEFAULT_MAX_HELD_BYTES",
    "make_options",
]

#: The synthetic result for a call that never got one. Worded as a fact about the record,
#: not as tool output: hermes' "see context summary above" made models invent results
#: (hermes.md G13).
DEFAULT_STUB_TEXT = "[no result: this tool call was not answered in the stored history]"

# Limits of the pending turn. Real agent sessions merge a handful of fragments per turn
# (Claude Code writes one line per content block: thinking, text, and one per tool_use --
# a few dozen at most) and run at most a few hundred parallel calls. The defaults are two
# orders of magnitude above that, so only hostile or corrupted input reaches them.

#: Assistant fragments merged into one turn (and user messages merged into one).
DEFAULT_MAX_TURN_FRAGMENTS = 10_000
#: Messages held at once: results of the pending turn plus messages deferred behind them.
DEFAULT_MAX_HELD_MESSAGES = 10_000
#: Held at once for one turn: characters of every string (content and its parts, arguments,
#: reasoning, other keys, keys too) plus one per list item or object entry; 256 MiB.
DEFAULT_MAX_HELD_BYTES = 256 * 1024 * 1024


class Options(BaseModel):
    """Everything that changes what the core does. Validated once, then read-only."""

    model_config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True)

    validate_messages: bool = True
    """Validate each message with pydantic (``validate=`` in the public API). Off: trust it."""
    on_invalid: Literal["error", "skip"] = "error"
    """An invalid message raises InvalidMessage, or is left out and recorded (``skip_invalid``)."""
    orphan_results: Literal["drop", "keep_as_user", "error"] = "drop"
    """A tool result answering no call of the turn before it (or answering one twice)."""
    trailing_calls: Literal["stub", "keep", "drop"] = "stub"
    """Calls still unanswered when the input ends: stub them, leave them, or remove them."""
    merge_text_then_calls: bool = True
    """Merge an assistant text message with the tool-call-only message right after it (one
    turn stored as two). Off for providers that want text and calls apart (Mistral's MI-5):
    the profile stage splits them, and merging them back would undo it on every pass."""
    stub_text: str = DEFAULT_STUB_TEXT
    """Content of the synthetic result given to an unanswered call."""
    max_turn_fragments: int = DEFAULT_MAX_TURN_FRAGMENTS
    max_held_messages: int = DEFAULT_MAX_HELD_MESSAGES
    max_held_bytes: int = DEFAULT_MAX_HELD_BYTES
    max_records: int = DEFAULT_MAX_RECORDS
    """Repair records kept in memory by the report (all still reach ``on_record``)."""
    on_record: Callable[[Repair], None] | None = None
    """Called with every repair record as it is made (e.g. to stream them to a file)."""


_FIELDS = set(Options.model_fields)


def make_options(defaults: dict[str, Any], overrides: dict[str, Any]) -> Options:
    """Build Options from a profile's defaults and the caller's keywords.

    ``validate`` is accepted as the public spelling of ``validate_messages`` (pydantic
    reserves ``validate`` on models).
    """
    merged = {**defaults, **overrides}
    if "validate" in merged:
        merged["validate_messages"] = merged.pop("validate")
    unknown = sorted(set(merged) - _FIELDS)
    if unknown:
        known = ", ".join(sorted((_FIELDS - {"validate_messages"}) | {"validate"}))
        raise UsageError(f"unknown option {unknown[0]!r}; the options are: {known}")
    try:
        return Options(**merged)
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        name = ".".join(str(p) for p in err["loc"]) or "options"
        if name == "validate_messages":
            name = "validate"
        raise UsageError(f"option {name}: {err['msg']} (got {err.get('input')!r})") from None
