"""What the consumer of a reader's events keeps (:class:`StreamState`), written once for the
sync and the async streams of ``_read``: where the last message came from, a conversation's
extra keys and side transcripts (bounded), and whether messages go out without the fields
their reader kept aside for a writer of the source format."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from typing import Any

from .._errors import InputError, LimitExceeded
from ._blocks import value_size as _value_size
from ._common import without_source
from ._reader import Conversation, Sidechain
from ._records import DEFAULT_MAX_RECORD_BYTES, Meta, Place, Position, position_of
from ._registry import BY_NAME

__all__ = ["StreamState", "held_size"]


# -- the consumer's side, written once ----------------------------------------------------------


class StreamState:
    """What the consumer of a reader's events keeps, and what it does with the rare ones."""

    __slots__ = (
        "at", "source", "expand", "twin", "several", "extra", "extra_bytes", "sides", "side_bytes", "max_record_bytes",
        "conversations", "keep_from", "strip",
    )

    def __init__(self, *, expand: bool, twin: str, max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES) -> None:
        self.at: Place | None = None  # the place of the last message handed out
        self.source = "<input>"
        self.expand = expand  # a conversation event gives its messages (the message readers)
        self.twin = twin  # the function to read a multi-conversation file with
        self.several = ""  # what else that error's hint offers (one session of a database)
        # A document's other keys, for its conversation (the conversation readers; the message
        # readers hand no conversation out, and keep none): held until the document ends, all
        # of them, so together bounded by max_record_bytes, by their keys and strings' length
        # (held_size).
        self.extra: dict[str, Any] = {}
        self.extra_bytes = 0
        self.sides: deque[list[dict[str, Any]]] = deque()
        # The finished sub-agent transcripts wait for the main conversation to end, all of
        # them: together bounded by the limit each one has (max_record_bytes), by their size
        # as it counted them.
        self.side_bytes = 0
        self.max_record_bytes = max_record_bytes
        self.conversations = 0
        # The fields a reader kept aside for a writer of the source format (SOURCE_KEY) are
        # taken off every message handed out, unless that writer asked for them
        # (keep_source_fields()): chat output holds chat keys only. Decided once a batch
        # (strip_source): a message then costs one test of a local.
        self.keep_from: frozenset[str] | None = frozenset()  # the formats kept for (None: any)
        self.strip = False

    def strip_source(self, fmt: str | None) -> bool:
        """Whether the messages of a reader of ``fmt`` go out without their source fields."""
        told = BY_NAME.get(fmt) if fmt is not None else None
        kept = self.keep_from is None or (fmt is not None and fmt in self.keep_from)
        self.strip = not kept and (told is None or told.source_fields)
        return self.strip

    @property
    def position(self) -> Position | None:
        return position_of(self.at)

    def other(self, event: Any) -> Iterable[Any]:
        """What an event that is neither a message nor a place gives the consumer."""
        if isinstance(event, Conversation):
            if not self.expand:
                return (self._conversation_chat(event),)
            self.conversations += 1
            if self.conversations > 1:
                position = self.position
                raise InputError(
                    "this file holds several conversations",
                    source=self.source,
                    line=position.line if position else event.line,
                    column=position.column if position else None,
                    hint=f"Read it with {self.twin} (on the command line: --to finetune){self.several}",
                )
            return self._conversation_chat(event).messages
        if isinstance(event, Meta):
            if not self.expand:
                self.extra_bytes += len(event.key) + held_size(event.value)
                if self.extra_bytes > self.max_record_bytes:
                    raise self._too_many_keys(event)
                self.extra[event.key] = event.value
            return ()
        if isinstance(event, Sidechain):
            # Given out after the main conversation, by the conversation readers; the message
            # readers give out one conversation's messages, so they let it go at once (they
            # held every transcript of the file to the end, for nobody).
            if not self.expand:
                self.side_bytes += event.size
                if self.side_bytes > self.max_record_bytes:
                    raise self._too_many_sides(event)
                self.sides.append(self._chat(event.messages))
            return ()
        raise AssertionError(f"not a reader event: {event!r}")  # pragma: no cover

    def _chat(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """A conversation's messages (a list the reader made) as they go out."""
        return [without_source(m) for m in messages] if self.strip else messages

    def _conversation_chat(self, event: Conversation) -> Conversation:
        """A conversation the reader made (a multi-conversation file's, a database's) as it goes out."""
        if not self.strip:
            return event
        messages = event.messages
        chat = self._chat(messages) if isinstance(messages, list) else map(without_source, messages)
        return Conversation(chat, event.extra, event.index, event.line)

    def _too_many_sides(self, event: Sidechain) -> LimitExceeded:
        # Placed at the line the transcript began on: where the reader was when it finished
        # depends on how the file was cut into chunks.
        limit = self.max_record_bytes
        return LimitExceeded(
            f"with this sub-agent (isSidechain) transcript, the ones held until the main conversation ends "
            f"would hold more than {limit} bytes of JSON in their messages together",
            limit="max_record_bytes", value=limit, source=self.source, line=event.line,
            hint="A session's sub-agent transcripts are given out after its main conversation, so they are all "
            "held until it ends: raise max_record_bytes if they really are that large, or read the session "
            "without keep_sidechains (its sub-agent lines are then left out)",
        )

    def _too_many_keys(self, event: Meta) -> LimitExceeded:
        # Placed where the key's value began.
        limit = self.max_record_bytes
        position = position_of(event.place)
        return LimitExceeded(
            f"with the value of {event.key!r}, the JSON document's other keys, held for its conversation's "
            f"extra, would hold more than {limit} bytes together",
            limit="max_record_bytes", value=limit, source=self.source,
            line=position.line if position else None, column=position.column if position else None,
            hint="A document's keys beside its messages are held until it ends, for the conversation: raise "
            "max_record_bytes if they really are that large, or read its messages alone (read_messages)",
        )

    def main(self, messages: Any) -> Conversation:
        """The conversation of a whole-file session (its ``extra`` fills as keys are read)."""
        return Conversation(messages, self.extra, 0, None)

    def sidechains(self) -> list[Conversation]:
        return [Conversation(side, {"sidechain": True}, i + 1, None) for i, side in enumerate(self.sides)]


def held_size(value: Any) -> int:
    """What a key's value adds to a conversation's ``extra``: its keys and strings by their
    length, any other value as its JSON (as a held tool result counts, ``_blocks``), not
    copied to be measured. (Nesting is bounded by max_depth where it is read.)"""
    kind = type(value)
    if kind is str:
        return len(value)
    if kind is dict:
        return sum(len(k) if type(k) is str else 0 for k in value) + sum(map(held_size, value.values()))
    if kind is list:
        return sum(map(held_size, value))
    return _value_size(value)
