"""Options of the core (their defaults and the limits of its buffers live in ``_defaults``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, get_args, get_origin

from pydantic import BaseModel, ConfigDict, ValidationError

from ._defaults import (
    DEFAULT_MAX_DEPTH,
    DEFAULT_MAX_HELD_BYTES,
    DEFAULT_MAX_HELD_MESSAGES,
    DEFAULT_MAX_TURN_FRAGMENTS,
    DEFAULT_STUB_TEXT,
    OnInvalid,
    OrphanResults,
    TrailingCalls,
)
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



class Options(BaseModel):
    """Everything that changes what the core does. Validated once, then read-only."""

    # defer_build: the schema is built when pydantic first validates options that are not
    # plain (make_options), not at import: start-up need not pay for it.
    model_config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True, defer_build=True)

    validate_messages: bool = True
    """Validate each message with pydantic (``validate=`` in the public API). Off: trust it."""
    on_invalid: OnInvalid = "error"
    """An invalid message raises InvalidMessage, or is left out and recorded (``skip_invalid``)."""
    orphan_results: OrphanResults = "drop"
    """A tool result answering no call of the turn before it (or answering one twice)."""
    trailing_calls: TrailingCalls = "stub"
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
    max_depth: int = DEFAULT_MAX_DEPTH
    """Deepest nesting of a message, in levels of dicts and lists (the message is 1): the
    readers' limit, applied to messages given in memory where the core would recurse into
    one (validating a message that is not plain, describing an invalid one, comparing two
    values in a merge): a LimitExceeded naming its index, never a RecursionError."""
    on_record: Callable[[Repair], None] | None = None
    """Called with every repair record as it is made (e.g. to stream them to a file)."""


_FIELDS = set(Options.model_fields)
# The defaults as they are (all immutable: nothing to copy per instance).
_DEFAULTS: dict[str, Any] = {name: info.default for name, info in Options.model_fields.items()}


def _plain_check(annotation: Any) -> Callable[[Any], bool] | None:
    """For a field's annotation, a test of the values pydantic takes exactly as they are
    (None: no such test, pydantic decides every value)."""
    if annotation is bool or annotation is int or annotation is str:
        return lambda value: type(value) is annotation
    if get_origin(annotation) is Literal and all(type(choice) is str for choice in get_args(annotation)):
        choices = frozenset(get_args(annotation))
        return lambda value: type(value) is str and value in choices
    options = get_args(annotation)
    if len(options) == 2 and type(None) in options and any(get_origin(o) is Callable for o in options):
        return lambda value: value is None or callable(value)  # a callback, or none
    return None


# As is_plain for messages: options whose every value has exactly the type its field
# declares are built without pydantic; anything else goes to pydantic, the validator of
# record (tests/test_options.py checks that whatever these checks accept, it returns
# unchanged). The first schema pydantic builds loads its plugins and schema machinery:
# with the report, the rules and the built-in profiles also made without one, a repair
# builds none, and start-up costs 14% fewer instructions (10% for the CLI).
_PLAIN_CHECKS: dict[str, Callable[[Any], bool]] = {
    name: check for name, info in Options.model_fields.items() if (check := _plain_check(info.annotation)) is not None
}


# Plain options already made, by their values (each value of its field's exact type, so
# equal keys are equal options: True never stands in for 1). At most _MAX_MADE of them.
_MADE: dict[frozenset[tuple[str, Any]], Options] = {}
_MAX_MADE = 64


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
    checks = _PLAIN_CHECKS
    if all(name in checks and checks[name](value) for name, value in merged.items()):
        # The same plain options again (the CLI makes a Normalizer per file, and per
        # conversation of a fine-tuning file): the options made last time, which are frozen.
        # Not with a callback, which a cache would keep alive (the CLI's holds a file).
        key = frozenset(merged.items()) if merged.get("on_record") is None else None
        made = _MADE.get(key) if key is not None else None
        if made is None:
            # Every field given (the defaults filled here): a missing one would go through
            # pydantic's default machinery, about half the cost of a Normalizer. The fields
            # set are the ones given, as Options(**merged) sets them.
            made = Options.model_construct(set(merged), **{**_DEFAULTS, **merged})
            if key is not None:
                if len(_MADE) >= _MAX_MADE:
                    _MADE.clear()
                _MADE[key] = made
        return made
    try:
        return Options(**merged)
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        name = ".".join(str(p) for p in err["loc"]) or "options"
        if name == "validate_messages":
            name = "validate"
        raise UsageError(f"option {name}: {err['msg']} (got {err.get('input')!r})") from None
