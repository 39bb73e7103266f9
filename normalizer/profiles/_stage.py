"""The profile stage: what needs a look across messages, applied to the core's output.

The core (``_core.py``) leaves a history that every provider's *tool pairing* rules accept
-- every call answered exactly once right after its turn, no orphans, no empty assistant,
no consecutive roles except different speakers (``name``) and opaque interims -- and it
writes each message in the provider's encoding as it emits it (``_encode.py``: content
shape, tool-only content, arguments, text and calls apart, ids). What is left is where
messages stand relative to one another, and differs per provider (providers.md §16):

1. system placement: leading systems pass (or merge into one, or fold into the first user
   message); a system message in mid-history becomes a user message (shaped as one);
2. boundaries: a leading user placeholder, a bridge assistant between a tool result and a
   user message (Mistral), merging same-role neighbours under strict alternation (a
   placeholder user between two assistants that must not merge), a trailing user
   placeholder (or ``prefix: true``) where a final assistant is forbidden, trailing
   whitespace off a final assistant, a user message when the history has none.

Nothing here undoes what the core did. Every change is a note on the message it concerns;
every synthetic message carries a note saying it is synthetic (its output index lands in
the report); anything removed is kept whole in the note's ``dropped``. Input dicts are
never mutated: copy on write.

Memory (bounded, documented):

* the leading system messages, merged into one, until the first non-system message
  (``single`` and ``fold`` modes; at most :data:`MAX_LEADING_SYSTEMS` of them);
* one held message (a user or a tool-less assistant) while the next one may merge into it
  or decide that it was final (at most :data:`MAX_MERGED` merged messages);
* a few flags.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from .._content import Conflict, Fold, has_text, is_opaque, join, merge, unfold
from .._errors import LimitExceeded
from .._note import Note
from .rules import plan_for

if TYPE_CHECKING:
    from ._encode import Spelling
    from ._profiles import Profile

__all__ = ["ProfileStage", "MAX_LEADING_SYSTEMS", "MAX_MERGED", "max_leading_systems"]

Message = dict[str, Any]

#: Leading system messages held (merged) until the first non-system message. Real
#: histories have one to three; this only stops a hostile stream of system messages.
MAX_LEADING_SYSTEMS = 10_000


def max_leading_systems() -> int:
    """The limit as it is now (read at each use: a test lowers it with monkeypatch)."""
    return MAX_LEADING_SYSTEMS


#: Messages merged into one held message under strict alternation (as the core's
#: ``max_turn_fragments``).
MAX_MERGED = 10_000


class ProfileStage:
    """Apply a profile's repairs to the core's output (see the module docstring).

    ``feed(message, notes)`` returns the messages to output with their notes;
    ``close()`` returns the last ones. ``idle`` is True when the profile asks for nothing
    (``make_stage`` then returns None and the core pays nothing).
    """

    # Slots, as the core's Normalizer: read on every message a profile shapes, and at 25 attributes
    # one more would pass the 30 keys an instance dict shares (CPython's slow path).
    __slots__ = ('_alternate', '_bridge', '_drop_text_before_calls', '_encoder', '_first_user',
        '_forbid', '_held', '_held_merge', '_held_notes', '_last', '_last_calls', '_leading', '_leading_count',
        '_leading_merge', '_leading_notes', '_merged', '_out', '_placed', '_prefix', '_prev_last', '_requires_user',
        '_rstrip', '_seen_user', '_started', '_system', 'idle', 'profile')

    def __init__(self, profile: Profile, encoder: Spelling, out: Callable[[Message | None, list[Note]], None]) -> None:
        p = self.profile = profile
        self._out = out  # where a final message goes (None: a message dropped, its notes say why)
        self._encoder = encoder  # to shape a system message that becomes a user message
        # What the profile's rules switch on (rules/: each rule's repair()), compiled once per
        # set of rules, with the profile's own placement settings.
        plan = plan_for(p.active_rules())
        self._alternate = p.alternate or plan.alternate
        self._first_user = p.first_user or plan.first_user
        self._requires_user = plan.requires_user
        self._bridge = plan.bridge
        self._prefix = p.trailing_assistant == "prefix"
        self._forbid = p.trailing_assistant == "forbid"
        self._rstrip = plan.rstrip_final and p.trailing_assistant == "allow"
        # mistral-common v3 merges an assistant's text with the calls right after it, then rejects both in
        # one message: that text cannot be sent (MI-12), and is dropped (kept whole in the report).
        self._drop_text_before_calls = plan.drop_text_before_calls
        self._system = p.system
        self.idle = not (
            self._alternate or self._first_user or self._requires_user or self._bridge or self._prefix
            or self._forbid or self._rstrip or self._system != "anywhere" or self._drop_text_before_calls
        )
        # state
        self._started = False  # a non-system message has been placed
        self._leading: Message | None = None  # the leading system message held ...
        self._leading_notes: list[Note] = []  # ... and its notes
        self._leading_merge: _Merging | None = None  # set while several leading systems merge
        self._leading_count = 0
        self._held: Message | None = None  # the message held ...
        self._held_notes: list[Note] = []  # ... and its notes
        self._held_merge: _Merging | None = None  # set while messages merge into the held one
        self._merged = 0
        self._last: str | None = None  # role of the last non-system message placed
        self._prev_last: str | None = None  # ... and the one before the held message
        self._last_calls = False  # ... and whether it was an assistant with calls
        self._seen_user = False
        self._placed = False

    # ------------------------------------------------------------------ interface

    def feed(self, message: Message, notes: list[Note] | None) -> None:
        """Place one message the core emitted (with its notes); what is final goes to
        the output at once. (A ``LimitExceeded`` raised here names no message: the core
        adds the index of the message it was placing.)"""
        role = message.get("role")
        if self._started:
            if role == "tool":
                # The most frequent message, and no rule places one: it ends what is held
                # (_put's path for a tool message, spelled out: two calls less a result).
                if self._held is not None:
                    self._flush()
                self._out(message, notes if notes is not None else [])
                self._placed = True
                self._last = "tool"
                self._last_calls = False
                return
            if role == "user" or role == "assistant":
                # Nothing here appends to the notes given: a list the core made, passed on.
                self._put(message, notes if notes is not None else [])
                return
        # (A note may be added below: to a list of our own.)
        notes = list(notes) if notes else []
        if role in ("system", "developer"):
            if not self._started:
                if self._system in ("single", "fold"):
                    self._hold_system(message, notes)
                else:
                    self._emit(message, notes)
                return
            if self._system == "anywhere":
                self._flush()
                self._emit(message, notes)
                return
            notes.append(Note(
                "system_to_user",
                f"a {role} message in mid-history became a user message: {self.profile.name} "
                "accepts system messages only at the start",
                [], {"role": role},
            ))
            message = {**message, "role": "user"}
            if self._encoder.shapes:
                message = self._encoder.shape(message, "user", [], notes)
        if self._started:
            self._put(message, notes)  # _place, once the first non-system message is placed
        else:
            self._place(message, notes)

    def close(self) -> None:
        """End of input: place what is still held."""
        lead = self._take_leading()
        if not self._started and lead is not None:
            notes = self._leading_notes
            if self._system == "fold":
                self._put(self._folded(lead, None), notes + [self._fold_note(lead)])
            else:
                self._emit(lead, notes)
        self._settle_held()
        msg = self._held
        if msg is not None and msg["role"] == "assistant":
            notes = self._held_notes
            if self._prefix and msg.get("prefix") is not True:
                msg = {**msg, "prefix": True}
                notes = notes + [Note("set_prefix", "set prefix: true on the final assistant message "
                                  "(a final assistant message must be a prefix)", [], None)]
            elif self._rstrip:
                notes = list(notes)  # (the held notes may be a list the core made: not ours to extend)
                msg = self._rstripped(msg, notes)
            self._held, self._held_notes = msg, notes
        self._flush(final=True)
        if self._forbid and self._last == "assistant" and not self._last_calls:
            self._put(
                {"role": "user", "content": self.profile.placeholder_continue},
                [Note("placeholder_continue", "added a user message after the final assistant message: "
                  f"{self.profile.name} does not accept a history that ends with the assistant", [], None)]
            )
        # Not after calls left open (trailing_calls="keep"): a user message after them would
        # make the next pass stub them (the history is not sendable until they are answered
        # anyway; once their results are in, the placeholder goes after them).
        if self._requires_user and self._placed and not self._seen_user and not (
            self._last == "assistant" and self._last_calls
        ):
            text = self.profile.placeholder_continue if self._last in ("assistant", "tool") else self.profile.placeholder_user
            self._put({"role": "user", "content": text},
                      [Note("placeholder_user", "added a user message: the history had none", [], None)])
        self._flush(final=True)

    # ------------------------------------------------------------------ per message

    def _hold_system(self, message: Message, notes: list[Note]) -> None:
        self._leading_count += 1
        if self._leading_count > MAX_LEADING_SYSTEMS:
            raise LimitExceeded(
                f"more than {MAX_LEADING_SYSTEMS} leading system messages", limit="MAX_LEADING_SYSTEMS",
                value=MAX_LEADING_SYSTEMS,
                hint="no real history has that many; is the input a history?",
            )
        if self._leading is None:
            self._leading, self._leading_notes = message, notes
            return
        merging = self._leading_merge
        if merging is None:
            merging = self._leading_merge = _Merging(self._leading, self._leading_notes)
            self._leading, self._leading_notes = merging.fields, merging.notes
        held = merging.fields
        # Every key is kept: content joined as the core joins it, a key only the later one
        # has added, a conflicting value replaced by the later one (the earlier one recorded).
        merging.add(message)  # leaves tool_calls alone:
        if "tool_calls" in message:  # not a system field, but nothing is lost silently
            if "tool_calls" in held and held["tool_calls"] != message["tool_calls"]:
                merging.conflicts.append(Conflict("tool_calls", held["tool_calls"], message["tool_calls"]))
            held["tool_calls"] = message["tool_calls"]
        dropped = {"role": message["role"]} if message["role"] != held["role"] else None
        merging.notes.extend(notes)
        merging.notes.append(Note(
            "merge_leading_systems", f"merged {self._leading_count} leading system messages into one: "
            f"{self.profile.name} accepts a single system message at the start"
            + (f" (a {message['role']} message became part of the {held['role']} message)" if dropped else ""),
            [], dropped,
        ))
        merging.notes.extend(
            Note("merge_conflict",
                 f"merging leading system messages: '{c.key}' was {c.old!r}, the later {c.new!r} kept",
                 [], {c.key: c.old})
            for c in merging.take_conflicts()
        )

    def _take_leading(self) -> Message | None:
        """The leading system message (its notes: ``_leading_notes``), its merged content
        joined (once), and no longer held."""
        if self._leading_merge is not None:
            self._leading_merge.settle()
            self._leading_merge = None
        lead, self._leading = self._leading, None
        return lead

    def _folded(self, lead: Message, user: Message | None) -> Message:
        content = lead.get("content")
        if user is None:
            return {"role": "user", "content": content if has_text(content) else self.profile.placeholder_user}
        return {**user, "content": join(content, user.get("content"))}

    def _fold_note(self, lead: Message) -> Note:
        return Note("fold_system_into_user", f"the system message was folded into the first user message: "
                f"{self.profile.name} has no system role", [], lead)

    def _place(self, m: Message, notes: list[Note]) -> None:
        role = m["role"]
        if role in ("system", "developer"):
            self._flush()
            self._emit(m, notes)
            return
        if not self._started:
            self._started = True
            lead = self._take_leading()
            if lead is not None:
                lead_msg, lead_notes = lead, self._leading_notes
                if self._system == "fold":
                    if role == "user":
                        m, notes = self._folded(lead_msg, m), lead_notes + notes + [self._fold_note(lead_msg)]
                    else:
                        self._put(self._folded(lead_msg, None), lead_notes + [self._fold_note(lead_msg)])
                else:
                    self._emit(lead_msg, lead_notes)
            if self._first_user and role != "user" and self._last is None:
                self._put({"role": "user", "content": self.profile.placeholder_user},
                          [Note("placeholder_user", f"added a user message before the first {role} message: "
                            f"{self.profile.name} requires the conversation to start with a user message", [], None)])
        self._put(m, notes)

    def _put(self, m: Message, notes: list[Note]) -> None:
        role = m["role"]
        if self._bridge and self._last == "tool" and role == "user":
            self._flush()
            self._emit({"role": "assistant", "content": self.profile.placeholder_bridge},
                       [Note("bridge_assistant", "added an assistant message between a tool result and a user "
                         f"message: {self.profile.name} does not accept a user message right after a tool", [], None)])
        if (
            self._drop_text_before_calls and role == "assistant" and m.get("tool_calls")
            and self._held is not None and self._held["role"] == "assistant"
        ):
            self._drop_held_text()
        if self._last == role and role in ("user", "assistant"):
            held = self._held
            # The core never emits two same-speaker users, or two same-speaker assistant
            # fragments, side by side: if they meet here, the stage removed or converted
            # what stood between them, and they merge as the core would have merged them.
            # (Speakers are told apart by the names the output carries: Spelling.speaker.)
            # The text half of a Mistral split merges into a text-only assistant before it
            # too (the core keeps text and calls apart for Mistral, so "text" then "text +
            # calls" reaches the stage as two messages); the calls half never merges.
            if (
                held is not None
                and held["role"] == role
                and _mergeable(held, m)
                and (self._alternate or (
                    held.get("name") == m.get("name")
                    and (role == "user" or not m.get("tool_calls"))
                ))
            ):
                self._merge_held(m, notes)
                return
            if self._alternate:
                self._flush()
                if role == "assistant":
                    self._put({"role": "user", "content": self.profile.placeholder_user},
                              [Note("placeholder_user", "added a user message between two assistant messages that "
                                "cannot be merged (opaque state)", [], None)])
        if self._held is not None:
            self._flush()
        # Hold what the next message may merge into, or may reveal as the final message.
        if role == "user" or (role == "assistant" and not m.get("tool_calls")):
            self._held, self._held_notes = m, notes
            self._merged = 1
            self._prev_last = self._last
            self._last, self._last_calls = role, False
            if role == "user":
                self._seen_user = True
            self._placed = True
            return
        self._emit(m, notes)

    def _drop_held_text(self) -> None:
        self._settle_held()
        text = self._held
        assert text is not None
        self._held = None
        self._out(None, self._held_notes + [Note(
            "drop_text_before_calls",
            f"dropped the assistant text before its tool calls: {self.profile.name} merges it with the calls "
            "and then rejects text and calls in one message, so it cannot be sent (kept here)", [], text,
        )])
        self._last = self._prev_last

    def _merge_held(self, m: Message, notes: list[Note]) -> None:
        self._merged += 1
        if self._merged > MAX_MERGED:
            raise LimitExceeded(f"more than {MAX_MERGED} messages merge into one", limit="MAX_MERGED",
                                value=MAX_MERGED,
                                hint="no real history has that many consecutive turns")
        merging = self._held_merge
        if merging is None:
            assert self._held is not None  # _put merges only into a held message
            merging = self._held_merge = _Merging(self._held, self._held_notes)
            self._held, self._held_notes = merging.fields, merging.notes
        a = merging.fields
        dropped: dict[str, Any] = {}
        if a.get("name") != m.get("name"):
            dropped = {"name": [a.get("name"), m.get("name")]}
            a.pop("name", None)
            m = {k: v for k, v in m.items() if k != "name"}
        merging.add(m)
        if m.get("tool_calls"):
            a["tool_calls"] = m["tool_calls"]
        a.pop("prefix", None)  # only the final assistant may be a prefix; close() decides
        role = m["role"]
        why = (f"{self.profile.name} requires user and assistant to alternate" if self._alternate
               else "what stood between them was removed or became a user message")
        merging.notes.extend(notes)
        merging.notes.append(Note(
            f"merge_{role}_alternate" if self._alternate else f"merge_{role}",
            f"merged two consecutive {role} messages: {why}"
            + (" (their different names were dropped)" if dropped else ""),
            [], dropped or None,
        ))
        merging.notes.extend(
            Note("merge_conflict", f"merging: '{c.key}' was {c.old!r}, the later {c.new!r} kept", [], {c.key: c.old})
            for c in merging.take_conflicts()
        )
        if a.get("tool_calls"):
            self._settle_held()
            held = self._held
            self._held = None
            assert held is not None
            self._emit(held, self._held_notes)

    def _settle_held(self) -> None:
        """Join the held message's merged content (once): before it is read or sent."""
        if self._held_merge is not None:
            self._held_merge.settle()
            self._held_merge = None

    def _flush(self, final: bool = False) -> None:
        held = self._held
        if held is None:
            return
        if self._held_merge is not None:  # (_settle_held's test: most held messages merged nothing)
            self._settle_held()
        self._held = None
        m, notes = held, self._held_notes
        if self._prefix and not final and m.get("prefix") is True and m["role"] == "assistant":
            m = {k: v for k, v in m.items() if k != "prefix"}
            notes = notes + [Note("clear_prefix", "removed prefix: true from an assistant message that is not "
                              "the last one", [], {"prefix": True})]
        self._out(m, notes)

    def _emit(self, m: Message, notes: list[Note]) -> None:
        self._out(m, notes)
        self._placed = True
        role = m["role"]
        if role in ("system", "developer"):
            return
        self._last = role
        self._last_calls = role == "assistant" and bool(m.get("tool_calls"))
        if role == "user":
            self._seen_user = True

    def _rstripped(self, m: Message, notes: list[Note]) -> Message:
        content = m.get("content")
        if isinstance(content, str) and content != content.rstrip():
            notes.append(Note("rstrip_final_assistant", "removed trailing whitespace from the final assistant message",
                          [], {"content": content}))
            return {**m, "content": content.rstrip()}
        if isinstance(content, list) and content and isinstance(content[-1], Mapping):
            text = content[-1].get("text")
            if isinstance(text, str) and text != text.rstrip():
                notes.append(Note("rstrip_final_assistant", "removed trailing whitespace from the final assistant "
                              "message", [], {"content": content}))
                return {**m, "content": [*content[:-1], {**content[-1], "text": text.rstrip()}]}
        return m


class _Merging:
    """A held message that later ones merge into (``_content.merge``: linear in what is
    merged, text keys folded and joined once). ``fields`` is the message; while merging,
    its text keys are stale until :meth:`settle` (only ``_settle_held``/``_take_leading``
    read them)."""

    __slots__ = ("fields", "notes", "folds", "owned", "conflicts")

    def __init__(self, message: Message, notes: list[Note]) -> None:
        self.fields: Message = dict(message)
        self.notes: list[Note] = list(notes)
        self.folds: dict[str, Fold] = {}
        self.owned: set[str] = set()  # keys whose list value is ours to extend
        self.conflicts: list[Conflict] = []

    def add(self, new: Message) -> None:
        """Merge ``new`` into ``fields`` (conflicts kept for take_conflicts)."""
        self.conflicts.extend(merge(self.fields, new, self.folds, self.owned))

    def take_conflicts(self) -> list[Conflict]:
        conflicts, self.conflicts = self.conflicts, []
        return conflicts

    def settle(self) -> Message:
        """Write the joined text keys into ``fields`` (in place: their order is kept)."""
        return unfold(self.fields, self.folds)


def _mergeable(a: Message, b: Message) -> bool:
    if a["role"] == "user":
        return True
    return not a.get("tool_calls") and not is_opaque(a) and not is_opaque(b)
