"""What the reader (``_reader``) is given and gives out: its limits, the head of a file
already looked at, the conversations and events it gives, and a document's keys it reads.

The events, in the order they come (:data:`Event`):

====================  ==============================================================
``dict``              a chat message (the common case travels bare)
``int`` / DocPlace    the place of the record whose outputs follow
:class:`Conversation` a whole conversation (multi-conversation formats: one per record)
:class:`Meta`         one of a document's other keys, for the conversation's ``extra``
:class:`Sidechain`    a Claude Code sub-agent transcript, finished
====================  ==============================================================
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal, Union

from .._errors import UsageError
from ._claude import Sidechain
from ._records import (
    CONTAINER_PREFIXES,
    DEFAULT_MAX_DEPTH,
    DEFAULT_MAX_LINE_BYTES,
    DEFAULT_MAX_RECORD_BYTES,
    DocPlace,
    Meta,
)
from .._defaults import OnInvalid
from ._registry import CLAIMS, FORMATS, READER_OPTIONS, REGISTRY, SYSTEM_KEYS

__all__ = ["OnInvalid", "SYSTEM_KEYS", "own_key", "system_meta", "document_hint", "check_arguments", "Limits", "Conversation", "Head", "Event"]



def own_key(path: str) -> str | None:
    """The name of a document's own key (top level or a dump's request body), else None."""
    parent, _, name = path.rpartition(".")
    return name if (parent + "." if parent else "") in CONTAINER_PREFIXES else None


def system_meta(item: Any) -> bool:
    """A document's own system key (its value becomes the leading system message)."""
    return type(item) is Meta and own_key(item.key) in SYSTEM_KEYS


@dataclass(frozen=True)
class Limits:
    """The reader's limits (see :mod:`normalizer.formats._records` for what each bounds and why)."""

    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
    max_depth: int = DEFAULT_MAX_DEPTH
    max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES


@dataclass
class Conversation:
    """One conversation of a file.

    Attributes:
        messages: its chat messages: a list (multi-conversation files, where the record is
            already in memory) or a one-shot iterator (a whole-file session, streamed; consume
            it before asking for the next conversation).
        extra: the conversation's other keys (``tools``, ``parallel_tool_calls``, a
            document's top-level keys...), to be written back untouched. For a streamed
            document, keys that come after the messages are added once they are read.
        index: 0-based position of the conversation in the file.
        line: 1-based line of the record (JSONL), else None (the stream's ``position``
            also places a document's records).
    """

    messages: Union[list[dict[str, Any]], Iterator[dict[str, Any]]]
    extra: dict[str, Any] = field(default_factory=dict)
    index: int = 0
    line: int | None = None


@dataclass(frozen=True, slots=True)
class Head:
    """What a look at the head of a file already told, for a reader then fed the same file
    from its start: taken as told, not found again. (The command line looks first: whether
    the file is a session decides what repairs it; a file that is not goes to a reader.)

    Attributes:
        container: what :class:`~._records.Sniffer` said of the first bytes (``"jsonl"``,
            ``"document"`` or ``"empty"``), said as this reader's would (``fmt="auto"``, the
            same ``max_line_bytes``). The first chunk fed must hold the bytes it judged.
        format: the format of a JSONL file's first records, found from the records this
            reader detects it from, none of which it would refuse: choosing it before the
            first record then gives out what choosing it at the record that settles it does.
            None: the reader detects it (as it does a format told that waits for a plan).
    """

    container: str
    format: str | None = None


#: What :class:`Reader` gives out (see the module docstring).
Event = Union[dict[str, Any], int, DocPlace, Conversation, Meta, Sidechain]


def document_hint(keys: set[str | None], stream: str | None) -> str | None:
    """What a document's own keys and the path of its record array tell detection
    (``_detect.decide``'s hint): the one of them that claims the document for a format
    (``_registry.CLAIMS``), the narrowest claim first (an Anthropic ``system`` beside a
    Responses ``input``: Anthropic, if its records look like chat), else None."""
    named = [*keys, stream.rpartition(".")[2] if stream else None]
    claimed = [key for key in named if key in CLAIMS]
    if not claimed:
        return None
    return min(claimed, key=lambda key: (CLAIMS[key].document.claim, REGISTRY.index(CLAIMS[key])))


def check_arguments(fmt: str, head: Head | None, on_invalid: str, options: dict[str, Any]) -> None:
    """A reader's arguments, checked at its construction, before any byte is read.

    Raises:
        UsageError: an unknown format, ``on_invalid`` value or option, or a head told to a
            reader that does not detect.
    """
    if fmt != "auto" and fmt not in FORMATS:
        raise UsageError(f"unknown format {fmt!r}; expected auto or one of {', '.join(FORMATS)}")
    if head is not None and (fmt != "auto" or (head.format is not None and head.format not in FORMATS)):
        raise UsageError(f"a head is told to a reader that detects (fmt='auto'), of a known format: {head!r}")
    if on_invalid not in ("error", "skip"):
        raise UsageError(f"on_invalid must be 'error' or 'skip', not {on_invalid!r}")
    unknown = set(options) - set(READER_OPTIONS)
    if unknown:
        raise UsageError(f"unknown reader option(s): {', '.join(sorted(unknown))}")
