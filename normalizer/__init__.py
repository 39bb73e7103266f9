"""normalizer: repair LLM chat histories as a stream so strict providers accept them.

The core is :class:`Normalizer` (``feed(message) -> list``, ``close() -> list``, no I/O);
:func:`normalize_sync` and :func:`normalize` loop it over an iterable or async iterable;
:func:`repairing` wraps a history loader. Each exposes a :class:`Report` of every repair.
"""

from __future__ import annotations

from ._aio import ANormalized, normalize, repairing
from ._check import RULES, Checker, Rule, Violation, acheck_iter, check, check_iter
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
from ._profiles import PROFILES, Profile, get_profile, load_profile
from ._report import Repair, Report
from ._sync import Normalized, normalize_sync
from ._writers import WRITERS, write_finetune, write_json_array, write_jsonl
from .formats import (
    FORMATS,
    Conversation,
    aread_conversations,
    aread_messages,
    detect_format,
    read_conversations,
    read_messages,
)

__version__ = "0.1.0"

__all__ = [
    "acheck_iter",
    "ANormalized",
    "aread_conversations",
    "aread_messages",
    "check",
    "check_iter",
    "Checker",
    "Conversation",
    "DEFAULT_STUB_TEXT",
    "detect_format",
    "FORMATS",
    "get_profile",
    "InputError",
    "InvalidMessage",
    "LimitExceeded",
    "load_profile",
    "normalize",
    "normalize_sync",
    "Normalized",
    "Normalizer",
    "NormalizerError",
    "Options",
    "OrphanResultError",
    "Profile",
    "PROFILES",
    "read_conversations",
    "read_messages",
    "Repair",
    "repairing",
    "Report",
    "Rule",
    "RULES",
    "UsageError",
    "Violation",
    "write_finetune",
    "write_json_array",
    "write_jsonl",
    "WRITERS",
    "__version__",
]
