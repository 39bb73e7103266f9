"""normalizer: repair LLM chat histories as a stream so strict providers accept them.

The core is :class:`Normalizer` (``feed(message) -> list``, ``close() -> list``, no I/O);
:func:`repair` and :func:`arepair` loop it over an iterable or async iterable;
:func:`repairing` wraps a history loader. Each exposes a :class:`Report` of every repair.
"""

# Imports are lazy (PEP 562): ``import normalizer`` loads this file only, and each name below
# loads its module on first use -- a command that prints its version, or a program that only
# reads files, never pays for pydantic, anyio or the profiles. Type checkers and IDEs see the
# names through the TYPE_CHECKING imports, which mirror _EXPORTS (tests/test_init.py checks).

from __future__ import annotations

import warnings

from ._lazy import export_names, load_export

# Not `from typing import TYPE_CHECKING`: importing typing (and re, which it imports) is a
# third of what `import normalizer` costs, and `chatnorm --version` pays nothing else; type
# checkers treat any TYPE_CHECKING name as true.
TYPE_CHECKING = False

__version__ = "0.1.0"

#: Public name -> the module that defines it.
_EXPORTS: dict[str, str] = {
    **dict.fromkeys(("AsyncRepaired", "arepair", "repairing"), "._aio"),
    "Normalizer": "._core",
    "compiled": "._compiled",
    **dict.fromkeys(("InputError", "InvalidMessage", "LimitExceeded", "NormalizerError", "OrphanResultError",
                     "UsageError"), "._errors"),
    **dict.fromkeys(("DEFAULT_STUB_TEXT", "Options"), "._options"),
    **dict.fromkeys(("Repair", "Report"), "._report"),
    **dict.fromkeys(("Repaired", "repair"), "._sync"),
    **dict.fromkeys(("ChatMessage", "ProfileArg", "ProfileName", "RepairOptions"), "._types"),
    **dict.fromkeys((
        "ENCODERS", "FORMATS", "WRITERS", "AsyncConversationStream", "AsyncMessageStream", "Conversation",
        "ConversationStream", "MessageStream", "Position", "aread_conversations", "aread_messages",
        "awrite_anthropic", "awrite_finetune", "awrite_json_array", "awrite_jsonl", "awrite_responses",
        "detect_format", "read_conversations", "read_messages", "repair_session", "write_anthropic",
        "write_finetune", "write_json_array", "write_jsonl", "write_responses",
    ), ".formats"),
    **dict.fromkeys((
        "PROFILES", "RULES", "Checker", "Profile", "Rule", "Violation", "acheck", "acheck_iter", "check",
        "check_iter", "get_profile", "load_profile", "profile_for_model",
    ), ".profiles"),
}

# The naming convention: a sync function has the plain name and its async twin an ``a``
# prefix (``repair``/``arepair``, ``read_messages``/``aread_messages``); a sync class has the
# plain name and its async twin an ``Async`` prefix (``Repaired``/``AsyncRepaired``). The
# names of 0.1 that broke it stay importable for one release, with a DeprecationWarning.
_DEPRECATED = {
    "normalize": "arepair",
    "normalize_sync": "repair",
    "Normalized": "Repaired",
    "ANormalized": "AsyncRepaired",
}


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return load_export(globals(), _EXPORTS, name)
    if name in _DEPRECATED:
        new = _DEPRECATED[name]
        warnings.warn(
            f"normalizer.{name} is deprecated and will be removed in 0.3; use normalizer.{new}",
            DeprecationWarning,
            stacklevel=2,
        )
        return __getattr__(new)
    raise AttributeError(f"module 'normalizer' has no attribute {name!r}")


def __dir__() -> list[str]:
    return export_names(globals(), _EXPORTS)


if TYPE_CHECKING:
    from typing import Any

    from ._aio import AsyncRepaired, arepair, repairing
    from ._compiled import compiled
    from ._core import Normalizer
    from ._errors import (
        InputError,
        InvalidMessage,
        LimitExceeded,
        NormalizerError,
        OrphanResultError,
        UsageError,
    )
    from ._options import DEFAULT_STUB_TEXT, Options
    from ._report import Repair, Report
    from ._sync import Repaired, repair
    from ._types import ChatMessage, ProfileArg, ProfileName, RepairOptions
    from .formats import (
        ENCODERS,
        FORMATS,
        WRITERS,
        AsyncConversationStream,
        AsyncMessageStream,
        Conversation,
        ConversationStream,
        MessageStream,
        Position,
        aread_conversations,
        aread_messages,
        awrite_anthropic,
        awrite_finetune,
        awrite_json_array,
        awrite_jsonl,
        awrite_responses,
        detect_format,
        read_conversations,
        read_messages,
        repair_session,
        write_anthropic,
        write_finetune,
        write_json_array,
        write_jsonl,
        write_responses,
    )
    from .profiles import (
        PROFILES,
        RULES,
        Checker,
        Profile,
        Rule,
        Violation,
        acheck,
        acheck_iter,
        check,
        check_iter,
        get_profile,
        load_profile,
        profile_for_model,
    )

# A literal list (what type checkers read as the re-exported names): __version__ and _EXPORTS.
__all__ = [
    "__version__",
    "acheck",
    "acheck_iter",
    "aread_conversations",
    "aread_messages",
    "arepair",
    "AsyncConversationStream",
    "AsyncMessageStream",
    "AsyncRepaired",
    "awrite_anthropic",
    "awrite_finetune",
    "awrite_json_array",
    "awrite_jsonl",
    "ChatMessage",
    "awrite_responses",
    "check",
    "check_iter",
    "Checker",
    "compiled",
    "Conversation",
    "ConversationStream",
    "DEFAULT_STUB_TEXT",
    "detect_format",
    "ENCODERS",
    "FORMATS",
    "get_profile",
    "InputError",
    "InvalidMessage",
    "LimitExceeded",
    "load_profile",
    "MessageStream",
    "Normalizer",
    "NormalizerError",
    "Options",
    "OrphanResultError",
    "Position",
    "Profile",
    "ProfileArg",
    "ProfileName",
    "profile_for_model",
    "PROFILES",
    "read_conversations",
    "read_messages",
    "Repair",
    "repair",
    "Repaired",
    "repairing",
    "RepairOptions",
    "repair_session",
    "Report",
    "Rule",
    "RULES",
    "UsageError",
    "Violation",
    "write_anthropic",
    "write_finetune",
    "write_json_array",
    "write_jsonl",
    "write_responses",
    "WRITERS",
]
