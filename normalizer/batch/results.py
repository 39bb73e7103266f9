"""What a batch run is asked (:class:`Settings`, the same for every file) and what becomes
of each input (:class:`FileResult`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from ..profiles._profiles import PROFILES, Profile, get_profile

__all__ = ["Settings", "FileResult", "core_options"]


@dataclass(frozen=True)
class Settings:
    """What ``repair`` was asked to do, the same for every file."""

    fmt: str = "auto"
    to: str = "auto"  # auto: chat JSONL, or fine-tuning JSONL for multi-conversation inputs
    profile: Profile = field(default_factory=lambda: get_profile("default"))  # resolved once
    on_invalid: str = "error"
    options: dict[str, Any] = field(default_factory=dict)
    #: The readers' options (``formats.READER_OPTIONS``: ``--session`` of an opencode.db).
    reader_options: dict[str, Any] = field(default_factory=dict)
    #: --report: every record is spooled to a file in this (private, temporary) folder.
    spool_dir: str | None = None
    #: --backup: with --in-place, the original is kept next to the file, under its name + this.
    backup: str | None = None

    # Asked of every file, decided once per run (in each worker: they are not fields).

    @cached_property
    def provider(self) -> bool:
        """A provider's profile, not the default (a session is then repaired as chat
        messages). Profiles compare field by field: about a microsecond, twice a session file."""
        return self.profile != PROFILES["default"]

    @cached_property
    def session_options(self) -> dict[str, Any]:
        """The options a session repaired in its own format takes."""
        return {k: v for k, v in self.options.items() if k in ("trailing_calls", "orphan_results", "stub_text")}


@dataclass(slots=True)
class FileResult:
    """What became of one input."""

    input: str
    output: str
    format: str | None = None
    messages_in: int = 0
    messages_out: int = 0
    conversations: int = 0
    counts: dict[str, int] = field(default_factory=dict)
    error: str | None = None
    seconds: float = 0.0
    #: The spooled records, one JSON value + b"\n" each (None: no record). Closed once the
    #: file is done, so --report holds no file open per input (1,000s of inputs, ulimit -n).
    spool: str | None = None

    def summary(self) -> str:
        kinds = ", ".join(f"{k} {v:,}" for k, v in sorted(self.counts.items()))
        return f"{self.messages_in:,} in, {self.messages_out:,} out; " + (kinds or "no repairs")


def core_options(settings: Settings, multi: bool) -> dict[str, Any]:
    """The core's options for one input. Unless the user or the profile chose a trailing-calls
    policy, training data keeps calls open at the end of an example (a fine-tuning example
    may well end on the call the model should learn to make); a session stubs them."""
    options = dict(settings.options)
    if "trailing_calls" not in options and "trailing_calls" not in settings.profile.options:
        options["trailing_calls"] = "keep" if multi else "stub"
    return options

