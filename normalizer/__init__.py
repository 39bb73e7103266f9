"""normalizer: repair LLM chat histories as a stream so strict providers accept them.

The core is :class:`Normalizer` (``feed(message) -> list``, ``close() -> list``, no I/O);
:func:`normalize_sync` and :func:`normalize` loop it over an iterable or async iterable;
:func:`repairing` wraps a history loader. Each exposes a :class:`Report` of every repair.
"""

from __future__ import annotations

from ._aio import ANormalized, normalize, repairing
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
from ._profiles import PROFILES, Profile, get_profile
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
    "ANormalized",
    "Conversation",
    "FORMATS",
    "WRITERS",
    "aread_conversations",
    "aread_messages",
    "detect_format",
    "read_conversations",
    "read_messages",
    "write_finetune",
    "write_json_array",
    "write_jsonl",
    "DEFAULT_STUB_TEXT",
    "InputError",
    "InvalidMessage",
    "LimitExceeded",
    "Normalized",
    "Normalizer",
    "NormalizerError",
    "Options",
    "OrphanResultError",
    "PROFILES",
    "Profile",
    "Repair",
    "Report",
    "UsageError",
    "__version__",
    "get_profile",
    "normalize",
    "normalize_sync",
    "repairing",
]
