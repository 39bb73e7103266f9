"""What the adapters share: the profile for a model, the report's summary, logging.

No repair logic lives here: every adapter calls :func:`normalizer.repair` on chat messages.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Final, Literal, Union

from typing_extensions import TypeIs

from .._report import Report
from .._sync import repair
from .._types import ProfileArg, RepairOptions
from ..profiles import RULES, Profile, get_profile, profile_for_model

__all__ = ["AUTO", "LOGGER", "AutoProfile", "OnReport", "is_auto", "profile_name", "resolve_profile", "ChatRepair", "repair_chat", "lost_in_reading", "summary", "log_report"]

#: The logger every adapter reports to (``normalizer.integrations.<framework>`` below it):
#: a repair is logged at INFO, a history that needed none at DEBUG. Nothing goes to stdout.
LOGGER = logging.getLogger("normalizer.integrations")

AUTO: Final = "auto"
#: ``profile=`` of an adapter: a profile, or ``"auto"``: the model's (:func:`normalizer.profile_for_model`).
AutoProfile = Union[ProfileArg, Literal["auto"]]
#: Called with the whole report of every repair an adapter makes (records, dropped content).
OnReport = Callable[[Report], None]


def is_auto(profile: AutoProfile) -> TypeIs[Literal["auto"]]:
    """Whether ``profile`` asks for the model's profile (a Profile or a path never does)."""
    return isinstance(profile, str) and profile == AUTO


def resolve_profile(profile: AutoProfile, model: str | None) -> ProfileArg:
    """``profile`` itself, or for ``"auto"`` the profile of ``model`` (``default`` without one)."""
    if not is_auto(profile):
        return profile
    return profile_for_model(model or "")


def profile_name(profile: ProfileArg) -> str:
    return profile.name if isinstance(profile, Profile) else str(profile)


@dataclass(frozen=True)
class ChatRepair:
    """One history through the core: the repaired chat messages (plain dicts) and the report."""

    messages: list[dict[str, Any]]
    report: Report


def repair_chat(messages: Iterable[Any], profile: ProfileArg, options: RepairOptions, *,
                mapped_back: bool = False) -> ChatRepair:
    """The core over a whole history (the adapters hold a list, not a stream).

    ``mapped_back``: the repaired messages become a framework's own objects again (pydantic-ai
    parts, LangChain messages, Responses items, Anthropic blocks), and the framework writes
    the request. Which fields go on the wire is then its business, so the profile's
    ``fields.unknown`` rules are left out: they would remove the keys the way back needs
    (an adapter's part origins, a reader's ``source_fields``)."""
    if mapped_back:
        profile = _without_field_rules(profile)
    stream = repair(messages, profile=profile, **options)
    out: list[dict[str, Any]] = list(stream)  # type: ignore[arg-type]  # plain dicts at run time (_types.py)
    return ChatRepair(messages=out, report=stream.report)


def _without_field_rules(profile: ProfileArg) -> ProfileArg:
    # Derived per call (~30 µs, against milliseconds for the history itself): a cache keyed
    # by a profile would need one to be hashable, and a profile file may change.
    resolved = get_profile(profile)
    unknown = [rule for rule in resolved.active_rules() if "fields.unknown" in RULES[rule].keys]
    return resolved.derive(resolved.name, remove_rules=unknown) if unknown else profile


#: What a converter may leave out of a history that loses nothing the model needs: the id or
#: status of the second item of a merged turn (the turn keeps the first).
_HARMLESS = frozenset({"drop_conflicting_field"})


def lost_in_reading(reading: Report) -> list[str]:
    """The kinds of content reading a framework's history into chat messages left out (a
    hosted tool's item, a block with no chat form...). An adapter then sends the history as it
    is: writing the repaired chat back would lose that content for good."""
    return sorted(kind for kind in reading.counts if kind.startswith("drop_") and kind not in _HARMLESS)


def summary(report: Report, profile: ProfileArg) -> dict[str, Any]:
    """What a framework's metadata gets: small and JSON-ready (the records, with whatever was
    dropped, go to ``on_report``)."""
    return {
        "profile": profile_name(profile),
        "changed": report.changed,
        "messages_in": report.messages_in,
        "messages_out": report.messages_out,
        "counts": dict(report.counts),
    }


def log_report(logger: logging.Logger, where: str, report: Report, profile: ProfileArg, on_report: OnReport | None) -> None:
    if report.changed:
        logger.info("%s: repaired the history [profile %s]: %s", where, profile_name(profile), report.summary())
    elif logger.isEnabledFor(logging.DEBUG):
        logger.debug("%s: history needed no repair [profile %s]: %s", where, profile_name(profile), report.summary())
    if on_report is not None:
        on_report(report)
