"""Chat messages in, bytes out: what every output format's writer shares (sans-I/O).

Each output format is a :class:`FormatWriter` that its format's module declares (chat JSONL
and a JSON array of chat messages in ``_chat``, fine-tuning JSONL in ``_finetune``, OpenAI
Responses input items in ``_responses_writer``, Anthropic Messages in ``_anthropic_writer``),
listed in the :data:`ENCODERS` table by the registry (``_registry``), keyed by its name (the
CLI's ``--to``). An encoder turns one run of output into bytes, and does no I/O: the
library's writers (``_writers``) and the command line (``cli._repair``) only gather what it
returns and write it in blocks of :data:`FLUSH_BYTES`. A run is::

    start()                                  once
      begin(extra)                           per conversation (its other keys)
        message(m)                           per message (b"" when the encoder holds it)
      end()                                  per conversation
    finish()                                 once

``message`` is an attribute, not a method, so that the chat JSONL encoder's is orjson's
own ``dumps`` (through ``functools.partial``): the per-message path of the CLI pays one C
call, no Python frame. orjson refuses an integer past 64 bits, which a message read from a
file may hold (``.._json``): the pumps then write that message with the encoder's ``again``.
The other encoders write through ``.._json.dumps`` (or try orjson first, per message),
which writes it as its digits. An encoder that holds ``multi`` is one conversation per record
(fine-tuning JSONL); the others hold one conversation, and a second is refused by whoever
pumps them.

orjson cannot write a lone surrogate or a value nested past 255 levels (the readers refuse
both in files, so only in-memory input gets here): pumps turn its error into an
:class:`InvalidMessage` naming the item with :func:`unwritable`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import orjson

from .._errors import InputError, InvalidMessage, UsageError
from .._json import MAX_INT_DIGITS, dumps
from ._common import SOURCE_KEY

__all__ = [
    "FLUSH_BYTES",
    "LINE",
    "Message",
    "FormatWriter",
    "Encoder",
    "Container",
    "Layout",
    "pair",
    "CHAT_ONLY",
    "RESPONSES_ONLY",
    "ANTHROPIC_ONLY",
    "CALL_KEYS",
    "ImageUrl",
    "ask_source_fields",
    "call_kind",
    "source_of",
    "with_source_fields",
    "text_of",
    "image_url_of",
    "function_of",
    "plain_text",
    "encode_conversation",
    "unwritable",
]

#: Output bytes gathered before one write (one thread hop in async mode, one progress update
#: on the command line): large enough to amortise both, small enough not to matter for memory.
FLUSH_BYTES = 256 * 1024

LINE = orjson.OPT_APPEND_NEWLINE

Message = Mapping[str, Any]


class FormatWriter:
    """One output format: messages in, bytes out, no I/O (see the module docstring)."""

    #: The name in :data:`ENCODERS` (and ``--to``).
    name: ClassVar[str]
    #: One conversation per record (fine-tuning JSONL): several conversations can be written.
    multi: ClassVar[bool] = False
    #: The reader formats whose kept-aside fields (``source_fields``: a Responses item's
    #: ``id``, a Gemini part's ``thoughtSignature``...) and conversation keys it writes back:
    #: its own format and the session formats made of its items or blocks. A writer asks a
    #: reader's stream for them (:func:`ask_source_fields`); another reader's (an opencode
    #: part's state, a session's ``info``) mean nothing in its format and are not written.
    #: Chat output never has them.
    restores_from: ClassVar[frozenset[str]] = frozenset()
    #: One message to bytes (``b""`` while the encoder holds it).
    message: Callable[[Message], bytes]
    #: ``message`` again, for a message whose integer past 64 bits made it raise orjson's
    #: error: set by an encoder whose ``message`` is orjson's own ``dumps``; None when
    #: ``message`` writes such integers itself (the error is then another, to report).
    again: Callable[[Message], bytes] | None = None

    def refused(self, message: Message, error: orjson.JSONEncodeError) -> bytes:
        """``message``, which :attr:`message` refused with ``error``, written with
        :attr:`again` (an integer past 64 bits); ``error`` raised when there is none."""
        if self.again is None:
            raise error
        return self.again(message)

    def start(self) -> bytes:
        return b""

    def begin(self, extra: Mapping[str, Any]) -> bytes:
        return b""

    def end(self) -> bytes:
        return b""

    def finish(self) -> bytes:
        return b""


#: The name :class:`FormatWriter` had, kept for the public API (``normalizer.formats.Encoder``):
#: the profiles' spelling class (``profiles._encode.Encoder``) is another thing altogether.
Encoder = FormatWriter



# -- JSON documents ---------------------------------------------------------------------------------

#: How the records of a JSON output are laid out: a JSON array, the list under one key of a
#: JSON object that also holds the conversation's other keys (a request body: ``model``,
#: ``tools``...; a hermes session snapshot), or JSONL, one record per line.
Container = Literal["array", "object", "lines"]


class Layout:
    """A list of JSON records written in a :data:`Container`: the array and the object one
    record per line (``[`` or ``{...,"KEY":[`` first, ``\\n]`` last), JSONL one per line.

    An object holds the conversation's other keys, in their order: those known when it opens
    go before the list, those that arrive while it is written (a streamed document's keys
    that follow its list) after it. ``values`` given to :meth:`open` are written in place of
    the key of that name (a hoisted system prompt, repaired), or first when there is none;
    ``skip`` keys are not written (a key whose value a record now holds). Keys a reader read
    from inside a nested object (``request.body.model``) cannot be put back where they
    were: an object refuses them.
    """

    def __init__(self, container: Container, key: str, skip: tuple[str, ...] = ()) -> None:
        if container not in ("array", "object", "lines"):
            raise UsageError(f"container must be 'array', 'object' or 'lines', not {container!r}")
        self.container = container
        self.key = key
        self.opened = False
        self._skip = frozenset((key, *skip))
        self._extra: Mapping[str, Any] = {}
        self._values: dict[str, Any] = {}
        self._placed: set[str] = set()  # values written in place of their key
        self._written: set[str] = set()
        self._separator = b"\n"  # before the first record; ",\n" before each of the others

    def open(self, values: dict[str, Any], extra: Mapping[str, Any]) -> bytes:
        self.opened = True
        if self.container == "lines":
            return b""
        if self.container == "array":
            return b"["
        self._extra, self._values = extra, values
        pairs = [pair(k, v) for k, v in values.items() if k not in extra]
        self._placed.update(k for k in values if k not in extra)
        pairs += self._pairs()
        pairs.append(dumps(self.key) + b":[")
        return b"{" + b",".join(pairs)

    def record(self, value: Any) -> bytes:
        option = LINE if self.container == "lines" else 0
        try:
            data = orjson.dumps(value, option=option)
        except orjson.JSONEncodeError:  # an integer past 64 bits (see .._json), or its error again
            data = dumps(value, option)
        if self.container == "lines":
            return data
        data = self._separator + data
        self._separator = b",\n"
        return data

    def empty(self) -> bytes:
        """The whole output of a run that had no conversation at all (an empty input)."""
        return b"" if self.opened else self.open({}, {}) + self.close()

    def close(self) -> bytes:
        if self.container == "lines":
            return b""
        if self.container == "array":
            return b"]\n" if self._separator == b"\n" else b"\n]\n"
        # An object's list always ends on a line of its own: an empty one on one line
        # ({"messages":[]}) would read back as a JSONL record.
        return b"\n]" + b"".join(b"," + pair for pair in self._pairs()) + b"}\n"

    def _pairs(self) -> list[bytes]:
        pairs = []
        for key, value in list(self._extra.items()):
            if key in self._values:
                if key not in self._placed:
                    self._placed.add(key)
                    pairs.append(pair(key, self._values[key]))
                continue
            if key in self._skip or key in self._written:
                continue
            if "." in key:
                raise InputError(
                    f"the records of this document are nested (its key {key!r}); it cannot be written "
                    "back in its own shape",
                    hint="Write the records alone (a JSON array) or to chat JSONL",
                )
            self._written.add(key)
            pairs.append(pair(key, value))
        return pairs


def pair(key: str, value: Any) -> bytes:
    return dumps(key) + b":" + dumps(value)




# Chat-only keys of a message (vendor fields of Chat Completions and hermes): neither a
# Responses item nor an Anthropic message has a place for them, so neither writer writes them.
CHAT_ONLY = frozenset({
    "name", "finish_reason", "reasoning", "reasoning_content", "reasoning_details", "function_call",
    "audio", "annotations", "prefix", "partial", "tool_call_id", "thinking_blocks",
})
# Keys the readers of one format put on a Chat message or call; the other format leaves them out.
RESPONSES_ONLY = frozenset({
    "reasoning_items", "codex_reasoning_items", "codex_message_items", "content_parts", "refusal",
    "response_item_id", "item_type", "call_id", "status", "phase", "namespace", "id",
})
ANTHROPIC_ONLY = frozenset({"is_error", "cache_control", "caller"})
# The call keys every writer reads itself.
CALL_KEYS = frozenset({"id", "type", "function", "index"})
TEXT_TYPES = frozenset({"text", "input_text", "output_text"})


def ask_source_fields(messages: Any, formats: frozenset[str]) -> None:
    """Ask ``messages``, when it is a reader's stream (or a repair of one), for the fields its
    reader kept aside (``keep_source_fields(formats)``: when it reads one of ``formats``),
    before a writer that restores them reads it; any other iterable (a list) is chat,
    written as it is."""
    keep = getattr(messages, "keep_source_fields", None)
    if keep is not None:
        keep(formats)


def call_kind(call: Mapping[str, Any]) -> Any:
    """What kind of item or block a call was read from, when not a plain function call
    (``custom_tool_call``, ``local_shell_call``, ``server_tool_use``): its reader kept it aside
    (``source_fields``); a call of a chat history may say it itself (``item_type``)."""
    kind = call.get("item_type")
    return kind if kind is not None else source_of(call).get("item_type")


def source_of(record: Mapping[str, Any]) -> Mapping[str, Any]:
    """The fields a reader kept aside for the writer of its format (``source_fields``: a
    Responses item's ``id``, ``status``, ``phase``; a ``tool_result``'s ``is_error``...)."""
    source = record.get(SOURCE_KEY)
    return source if isinstance(source, Mapping) else {}


def with_source_fields(record: Mapping[str, Any]) -> Mapping[str, Any]:
    """``record`` with its ``source_fields`` spread back among its keys (its own keys win):
    what the writers read their extra keys from."""
    source = record.get(SOURCE_KEY)
    if SOURCE_KEY not in record:
        return record
    merged = {**source, **record} if isinstance(source, Mapping) else dict(record)
    del merged[SOURCE_KEY]
    return merged


def text_of(part: Any) -> str | None:
    """The text of a Chat text part (any of the three spellings), else None."""
    if isinstance(part, str):
        return part
    if isinstance(part, Mapping) and part.get("type") in TEXT_TYPES and isinstance(part.get("text"), str):
        return str(part["text"])
    return None


@dataclass(frozen=True, slots=True)
class ImageUrl:
    """A Chat ``image_url`` part's URL, and its ``detail`` (None when it has none)."""

    url: str
    detail: Any = None


def image_url_of(part: Any) -> ImageUrl | None:
    """The image of a Chat ``image_url`` part, else None."""
    if not isinstance(part, Mapping) or part.get("type") != "image_url":
        return None
    image = part.get("image_url")
    if isinstance(image, str):
        return ImageUrl(image)
    if isinstance(image, Mapping) and isinstance(image.get("url"), str):
        return ImageUrl(image["url"], image.get("detail"))
    return None


_NO_FUNCTION: Mapping[str, Any] = {}


def function_of(call: Mapping[str, Any]) -> Mapping[str, Any]:
    """A Chat call's ``function`` (its ``name`` and ``arguments``), or an empty mapping when
    it has none: read in place, nothing built per call."""
    function = call.get("function")
    return function if isinstance(function, Mapping) else _NO_FUNCTION


def plain_text(part: Any, kind: str) -> bool:
    """A text part of nothing but its type and text (what a reader collapses to a string)."""
    return type(part) is dict and len(part) == 2 and part.get("type") == kind and isinstance(part.get("text"), str)



def encode_conversation(messages: Iterable[Message], extra: Mapping[str, Any] | None = None) -> bytes:
    """One fine-tuning line: ``{"messages": [...], **extra}`` (other keys as they were)."""
    record: dict[str, Any] = {"messages": list(messages)}
    if extra:
        for key, value in extra.items():
            if key != "messages":
                record[key] = value
    return dumps(record, option=LINE)


def unwritable(exc: Exception, index: int) -> InvalidMessage:
    """orjson's refusal of item ``index`` (a message, or a conversation) as an input error."""
    return InvalidMessage(
        f"cannot be written as JSON ({exc})", index=index,
        hint="a string holds a lone surrogate, a value is nested too deeply, or an integer has more than "
        f"{MAX_INT_DIGITS:,} digits; fix or drop it before writing",
    )
