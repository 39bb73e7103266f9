"""The state table's conditions and actions (``_state.py`` names them; ``_table.dispatch``
calls them), on what one history's repair holds: :class:`TableActions`, the base of
:class:`~._core.Normalizer`, whose own module is the sans-I/O surface (``feed``, ``close``).

The state is declared here (``_init_state``): the held user message and the held turn
(``Held``), the turn's tool block (its calls, the results that answer them, in named maps),
the messages deferred, parked or scheduled for replay (``Pending``), and the counts. The
repairs the actions make live in the core's parts, functions of this state: call hygiene
(``_calls``), results and stubs (``_results``), the turn's emission
(``_emit``), parked reasoning (``_parked``), what comes in (``_input``).
"""

from __future__ import annotations

import weakref
from collections import deque
from functools import partial
from itertools import islice
from collections.abc import Callable
from typing import Any, Final

from .._content import OPAQUE_KEYS, SUBSTANCE_KEYS, has_text, is_blank, is_opaque, merge, unfold
from ._calls import call_id_of, call_name, clean_calls, next_alias
from ._emit import (drop_empty_turn, drop_unanswered, emit_apart, emit_rounds, encode_tool_only, end_opaque,
                         finish_merged, renamed_calls, rewrite_ids)
from ._held import RESULT_FRAME, Held, Pending, message_size, too_many_bytes, too_many_fragments, too_many_messages
from ._notes import conflict_notes, merged_user_detail
from ._parked import carries_parked, drop_parked, park, unpark
from ._results import emit_results, stray_result
from .._options import Options, make_options
from .._note import Note, file_notes
from .._report import Repair, new_report
from .._stub import trailing_policy
from .._types import ProfileArg
from .._state import IDLE
from ..profiles._encode import Spelling
from ..profiles._profiles import get_profile, make_stage

__all__ = ["TableActions"]

Message = dict[str, Any]

# The keys is_opaque reads: a message with none of them is not opaque. Asked first (one C
# call over the message's few keys) on the per-assistant-message path, where is_opaque
# itself would cost a Python call for the rare message that is.
OPAQUE_TRIGGERS: Final = frozenset((*OPAQUE_KEYS, "finish_reason"))


class TableActions:
    """The conditions and actions of the state table, and the state they work on (a base
    class: ``Normalizer`` adds the surface; one instance per history)."""

    # Slots: 44 attributes are more than an instance dict shares its keys for (30), and
    # without them every attribute read and method lookup takes CPython's slow path.
    __slots__ = (
        '_aliases', '_answered', '_apart', '_broken', '_call_origin', '_calls', '_deferred', '_direct', '_emit',
        '_encode_results', '_encoder', '_held_bytes', '_index', '_keeps_opaque', '_max_depth', '_max_fragments',
        '_max_held_bytes', '_max_held_messages', '_n_calls', '_n_in', '_n_out', '_next_suffix', '_object_arguments',
        '_out', '_owner', '_parked', '_plain_results', '_repair_arguments', '_replay', '_report', '_report_fields',
        '_result_index', '_result_notes', '_results', '_rewrites_ids', '_rounds_for', '_shapes', '_single_call',
        '_speaker',
        '_split', '_stage_close', '_tool_only_null', '_turn', '_unanswered', '_user', '_validate', 'options',
        'profile', 'state',
    )

    state: str

    def _init_options(self, profile: ProfileArg, options: dict[str, Any]) -> None:
        # The profile, the options and the report, and the limits read on the per-message path.
        self.profile = get_profile(profile)
        self.options: Options = make_options(self.profile.core_options(), options)
        opts = self.options
        self._validate = opts.validate_messages
        self._max_held_bytes = opts.max_held_bytes  # read per result: plain attributes
        self._max_depth = opts.max_depth  # read per message
        self._max_held_messages = opts.max_held_messages
        self._max_fragments = opts.max_turn_fragments  # read per merge
        self._report = new_report(opts.max_records, opts.on_record)
        # Report.add_notes without the method: a method looked up on a pydantic model costs
        # ~0.1 us, per repaired message (and the function is compiled in the compiled build).
        self._report_fields = self._report.__dict__

    def _init_encoding(self, opts: Options) -> None:
        # The provider's encoding, applied by this class as it emits (one pass), and the
        # profile's stage for what needs a look across messages (alternation, system
        # placement), or None. Where the output goes is decided here, once (_emit, below).
        encoder = self._encoder = Spelling(self.profile)
        spelling = encoder.core  # what the core needs of it, derived there (CoreSpelling)
        self._shapes = spelling.shapes
        self._rewrites_ids = spelling.rewrites_ids
        # Arguments the encoding turns into objects take the slow path; arguments that must
        # parse (repair_arguments not None) take it only when they do not.
        self._object_arguments = spelling.object_arguments
        self._repair_arguments = spelling.repair_arguments
        self._split = spelling.apart
        self._single_call = spelling.single_call
        self._rounds_for = spelling.rounds_for
        self._speaker = spelling.speaker
        self._tool_only_null = spelling.tool_only_null
        # Text then calls stay two turns: the profile wants them apart (MI-5), or the caller.
        self._apart = spelling.apart or not opts.merge_text_then_calls
        # (A flag, not a function chosen here: compiled, a call through an attribute is a
        # generic Python call, ~400 instructions; is_opaque itself is a native one.)
        self._keeps_opaque = spelling.keeps_opaque
        stage = make_stage(self.profile, encoder, self._append)
        # _emit is the sink itself (an attribute, not a method that calls it: one call less
        # per message): the output list, or the stage in front of it, which sends what is
        # final on to the output list.
        self._emit: Callable[[Message, list[Note] | None], None] = self._append if stage is None else stage.feed
        self._stage_close: Callable[[], None] = _nothing if stage is None else stage.close
        # A stored result is sent as it is when there is no shape, id or name to write on it
        # (_encode_result would return it unchanged), straight into the output list when
        # there is no stage either.
        self._encode_results = spelling.encodes_results
        self._plain_results = stage is None and not self._encode_results
        self._direct = stage is None  # a message with no notes goes straight into the output list

    def _init_state(self) -> None:
        # What a history's repair holds and counts as it goes (the table's state first).
        self._n_calls = 0  # calls emitted so far: id styles number them across the conversation
        self.state = IDLE
        # False, True once an error left the pending turn half-built, or IN_USE while a
        # message is being placed (a call from inside that one -- an on_record callback
        # feeding it -- would place one history's message in the middle of another's).
        self._broken: object = False
        self._owner: weakref.ref[object] | None = None  # the adapter running it (_claim)
        self._n_in = 0  # messages fed
        self._n_out = 0  # messages returned before the current call
        self._index = -1  # input index of the message being placed
        self._out: list[Message] = []
        self._replay: deque[Pending] = deque()
        self._user = Held()  # the held user message
        self._turn = Held()  # the held assistant turn; its tool block:
        self._calls: dict[str, Any] = {}  # final call id -> call, in call order
        # final call id -> the input index of the fragment that made it, for the calls of a
        # merged turn that its first message did not make (the others: the turn's first input)
        self._call_origin: dict[str, int] = {}
        self._unanswered: dict[str, None] = {}  # ordered set, call order
        self._aliases: dict[str, deque[str]] = {}  # original id -> renamed duplicates, in order
        self._next_suffix: dict[str, int] = {}  # base id -> first suffix fresh_id may still find free
        # The results: call id -> the result (its tool_call_id already the call's), in the
        # order they arrived; its input index; its repairs (only a result that has some).
        # Three maps, not a value object a result: making one cost ~1,500 instructions a
        # result (a Python __init__ frame), the stores ~100.
        self._results: dict[str, Message] = {}
        self._result_index: dict[str, int] = {}
        self._result_notes: dict[str, list[Note]] = {}
        self._deferred: list[Pending] = []  # user/system messages behind the tool block
        # Reasoning-only messages of another speaker, waiting for that speaker's turn (drop_empty).
        self._parked: list[Pending] = []
        self._held_bytes = 0  # text held by the pending user message, turn and tool block
        self._answered: dict[str, Any] = {}  # call ids of the turn just emitted (duplicates)

    def _append(self, message: Message | None, notes: list[Note] | None) -> None:
        # The end of the line: record the notes with the output index (None: the stage
        # dropped the message, its notes say why) and hand the message out.
        if message is None:
            if notes:
                self._note(notes, None)
            return
        if notes:
            file_notes(self._report_fields, notes, self._n_out + len(self._out), Repair)
        self._out.append(message)

    def _note(self, notes: list[Note], output: int | None) -> None:
        file_notes(self._report_fields, notes, output, Repair)

    def _record(self, kind: str, detail: str, inputs: list[int], dropped: Any = None) -> None:
        # A repair with no message to point at (something dropped). As a note: a report
        # that keeps no more records and has no listener only counts it.
        file_notes(self._report_fields, [Note(kind, detail, inputs, dropped)], None, Repair)

    def _grow(self, held: Held, message: Message) -> Message:
        # One more message merges into a held one: count it against the limits (the held
        # message's own size is counted once, when the first merge makes it grow); the
        # first merge copies it (from then on the held message is ours to update).
        inputs = held.inputs
        inputs.append(self._index)
        limit = self._max_fragments
        if len(inputs) > limit:
            raise too_many_fragments(limit, self._index)
        first = held.message
        assert first is not None
        size = message_size(message) + (message_size(first) if len(inputs) == 2 else 0)
        if held is self._user:
            held.size += size
        self._hold_bytes(size)
        if len(inputs) == 2:
            first = held.message = dict(first)
            held.owned = set()
        return first

    def _hold_bytes(self, size: int) -> None:
        self._held_bytes += size
        limit = self._max_held_bytes
        if self._held_bytes > limit:
            raise too_many_bytes(limit, self._index)

    def _check_held(self) -> None:
        limit = self._max_held_messages
        if len(self._results) + len(self._deferred) > limit:
            raise too_many_messages(limit, self._index)

    # ------------------------------------------------------------------ conditions

    def continues_user(self, message: Message) -> bool:
        """The held user message and this one are the same speaker."""
        user = self._user.message
        return user is not None and self._same_speaker(user, message, "user")

    def turn_has_calls(self, message: Message | None) -> bool:
        """The held turn has tool calls, so what follows waits for their results."""
        return bool(self._calls)

    def continues_turn(self, message: Message) -> bool:
        """This assistant message is another fragment of the held turn."""
        held = self._turn
        turn = held.message
        if (
            turn is None
            or held.opaque
            or (self._keeps_opaque and not OPAQUE_TRIGGERS.isdisjoint(message) and is_opaque(message))
            or not self._same_speaker(turn, message, "assistant")
        ):
            return False
        if self._apart and not self._calls and message.get("tool_calls"):
            # text, then calls: kept as two turns (the encoding wants them apart, and
            # end_turn splits any turn that holds both, so this is already its final form)
            fold = held.folds.get("content")
            text = fold.has_text() if fold is not None else has_text(turn.get("content"))
            return not (text and not has_text(message.get("content")))
        return True

    def answers_turn(self, message: Message) -> bool:
        """This tool message answers a still-unanswered call of the held turn."""
        unanswered = self._unanswered
        if not unanswered:
            return False
        call_id = message.get("tool_call_id")
        if type(call_id) is str and call_id in unanswered:
            return True  # the common case first: no blank check (a copy of the id) per result
        if not call_id or not call_id.strip():
            return True  # no id: it answers the next call by position
        if call_id in unanswered:
            return True
        return next_alias(self, call_id) is not None

    def is_empty_fragment(self, message: Message) -> bool:
        """An assistant message with nothing to send: no text, no call that can be sent (one
        without a function name is dropped) and no substance (it may have reasoning --
        reached only when it does not continue the held turn). Told apart here, before the
        held turn ends: held as a turn of its own, it would end the held one and then vanish."""
        calls = message.get("tool_calls")
        return not (
            (calls and any(call_name(call) is not None for call in calls))
            or has_text(message.get("content"))
            or (self._keeps_opaque and not OPAQUE_TRIGGERS.isdisjoint(message) and is_opaque(message))
            or any(message.get(k) for k in SUBSTANCE_KEYS)
        )

    def completes_turn(self, message: Message) -> bool:
        """This tool message answers the last unanswered call of the held turn."""
        unanswered = self._unanswered
        if len(unanswered) != 1:
            return False
        call_id = message.get("tool_call_id")
        # The common case, an exact id, without a second call; answers_turn decides the rest.
        return (type(call_id) is str and call_id in unanswered) or self.answers_turn(message)

    # ------------------------------------------------------------------ actions: messages

    def emit(self, message: Message) -> None:
        """Pass a system message on (in the provider's shape)."""
        if self._shapes:
            notes: list[Note] = []
            message = self._encoder.shape(message, "system", [self._index], notes)
            self._emit(message, notes)
        else:
            self._emit(message, None)

    def defer(self, message: Message) -> None:
        """Hold a user/system message until the held turn's tool block is complete."""
        self._deferred.append(Pending(message, self._index))
        self._hold_bytes(message_size(message))
        self._check_held()

    def replay(self, message: Message | None) -> None:
        """Schedule this message (None: end of input) to be placed again after the
        current transition, behind whatever end_turn scheduled."""
        self._replay.append(Pending(message, self._index))

    # ------------------------------------------------------------------ actions: user

    def hold_user(self, message: Message) -> None:
        """Hold a user message (merging it into a held one from the same speaker)."""
        held = self._user
        if held.message is not None:
            if self.continues_user(message):
                self.merge_user(message)
                return
            self.release_user(message)
        held.message = message
        held.inputs = [self._index]
        held.notes = []

    def merge_user(self, message: Message) -> None:
        """Merge a user message into the held one (text joined with a newline)."""
        held = self._user
        conflicts = merge(self._grow(held, message), message, held.folds, held.owned)
        if conflicts:
            held.notes.extend(conflict_notes(conflicts, held.inputs))

    def release_user(self, message: Message | None = None) -> None:
        """Emit the held user message, if any."""
        held = self._user
        user = held.message
        if user is not None:
            held.message = None
            if held.folds:
                unfold(user, held.folds)
            self._held_bytes -= held.size
            held.size = 0
            notes = held.notes
            inputs = held.inputs
            if len(inputs) > 1:
                notes.insert(0, Note("merge_user", partial(merged_user_detail, inputs), inputs, None))
            if self._shapes:
                user = self._encoder.shape(user, "user", inputs, notes)
            if notes or not self._direct:
                self._emit(user, notes)
            else:
                self._out.append(user)  # _emit, inlined for the common case

    # ------------------------------------------------------------------ actions: turn

    def hold_turn(self, message: Message) -> None:
        """Hold an assistant message as the start of a turn (after the reasoning parked for
        its speaker, if any: see drop_empty)."""
        if self._parked:
            unpark(self, message)
            return
        # Starting a turn, inline: this runs for every assistant message that is not merged.
        index = self._index
        held = self._turn
        held.inputs = [index]
        held.notes = []
        if self._answered:
            self._answered = {}
        # (the tool-block state was reset by _end_block when the previous turn ended)
        if self._keeps_opaque and not OPAQUE_TRIGGERS.isdisjoint(message) and is_opaque(message):
            held.opaque = True
            if "tool_calls" in message and not message["tool_calls"]:
                # An empty call list is no continuation state (OpenAI: "[] is too short";
                # Llama templates: "only supports single tool-calls"): the one edit an
                # opaque turn gets.
                message = clean_calls(self, message, index)
            for call in message.get("tool_calls") or ():
                call_id = call_id_of(call)
                if call_id:
                    # An id used twice: one result answers it; it names the last call's
                    # function (as the checker reads the turn: later calls win).
                    self._calls[call_id] = call
                    self._unanswered[call_id] = None
            held.message = message
        else:
            held.opaque = False
            held.message = clean_calls(self, message, index) if "tool_calls" in message else message

    def merge_turn(self, message: Message) -> None:
        """Merge another fragment of the same model turn into the held one."""
        if self._parked:
            drop_parked(self)  # the held turn goes on: the parked reasoning's speaker did not come
        turn = self._turn
        held = self._grow(turn, message)
        before = len(self._calls)
        fragment = clean_calls(self, message, self._index)
        conflicts = merge(held, fragment, turn.folds, turn.owned)
        added = len(self._calls) - before
        if added:
            if "tool_calls" not in held:
                # end_turn writes the turn's calls from the registry, once; the key goes
                # where the calls first came in (key order is output order)
                held["tool_calls"] = None
            # Where they came from, for the records about one call (a stub, a call dropped):
            # the one message that made it, not every fragment of the turn (quadratic).
            origin = self._call_origin
            for call_id in islice(reversed(self._calls), added):
                origin[call_id] = self._index
        if conflicts:
            turn.notes.extend(conflict_notes(conflicts, turn.inputs))

    def take_result(self, message: Message) -> None:
        """Keep a tool result for the held turn's call it answers."""
        index = self._index
        call_id = message.get("tool_call_id")
        unanswered = self._unanswered
        notes: list[Note] | None = None  # most results need none: no list per result
        if call_id in unanswered:
            target = call_id
        elif call_id and call_id.strip():  # a second result for an id the turn used twice
            target = next_alias(self, call_id)
            assert target is not None  # answers_turn said so
            notes = [Note(
                "rename_result_id",
                f"result {index} answers the second call with id {call_id!r}, renamed {target!r}",
                [index], None,
            )]
        else:
            target = next(iter(unanswered))
            notes = [Note(
                "assign_result_id",
                f"result {index} had no tool_call_id; it answers the next unanswered call, {target!r}",
                [index], None,
            )]
        if target != call_id:
            message = {**message, "tool_call_id": target}
        if self._deferred:
            notes = (notes or []) + [Note(
                "move_result",
                f"moved result {index} up to its call, before {len(self._deferred)} message(s) "
                "that arrived while it was outstanding",
                [index, self._deferred[0].index], None,  # (the first it now precedes: two indices, not all)
            )]
        del unanswered[target]
        results = self._results
        results[target] = message
        self._result_index[target] = index
        if notes is not None:
            self._result_notes[target] = notes
        content = message.get("content")
        if type(content) is str and len(message) == 3 and type(target) is str:
            # {role, tool_call_id, content} (it always has the first two here), all strings:
            # size without its loop -- this runs for every result.
            held = self._held_bytes + RESULT_FRAME + len(content) + len(target)
        else:
            held = self._held_bytes + message_size(message)
        self._held_bytes = held
        if held > self._max_held_bytes:
            self._hold_bytes(0)  # raises LimitExceeded
        if len(results) + len(self._deferred) > self._max_held_messages:
            self._check_held()  # raises LimitExceeded

    def orphan_result(self, message: Message) -> None:
        """A tool result that answers no unanswered call of the turn before it: dropped,
        kept as user text or refused, per ``orphan_results`` (``_results.stray_result``)."""
        stray_result(self, message)

    def drop_empty(self, message: Message) -> None:
        """Drop an empty assistant message that cannot merge into the held turn. Held as a
        turn of its own it would end the held one and then vanish, leaving two turns of one
        speaker side by side that only a second pass would merge.

        A reasoning-only one (another speaker's: the same speaker's merged already) is parked
        instead, the held turn staying open. Decision: its ``name`` says whose reasoning it
        is, so it is never merged into another speaker's turn (that would misattribute it);
        it waits for its own speaker's next turn and is merged there, as reasoning before
        text. If anything else comes first (the held turn continues, another speaker, a
        user, results, the end), no turn of its speaker follows to carry it: it is dropped,
        kept whole in the report -- and the held turn was never ended by it, so the first
        pass is a fixed point. (``_parked``.)
        """
        park(self, message)

    def end_turn(self, message: Message | None = None, policy: str = "stub") -> None:
        """The held turn is over: emit it with its results (stubs for missing ones, or
        per ``policy``: end_turn_at_eof), or drop it when it carries nothing; then schedule
        the deferred messages for replay."""
        if self._parked and not carries_parked(self, message):
            drop_parked(self)
        held = self._turn
        turn = held.message
        assert turn is not None
        held.message = None
        inputs = held.inputs
        notes = held.notes
        calls = self._calls
        if len(inputs) > 1:
            finish_merged(self, held, turn)
        if self._unanswered and policy == "drop" and not held.opaque:
            turn = drop_unanswered(self, turn, inputs)
        if held.opaque:
            end_opaque(self, turn, inputs, notes, policy)
            return
        given = turn
        if self._shapes:
            turn = self._encoder.shape(turn, "assistant", inputs, notes)
        content = turn.get("content")
        # (has_text and is_blank of a str, spelled out: one call less for most turns)
        if (
            not calls
            and not (content.strip() if type(content) is str else has_text(content))
            and not any(turn.get(k) for k in SUBSTANCE_KEYS)
        ):
            drop_empty_turn(self, turn, inputs, notes)
            return
        if calls and (
            (not content.strip() if type(content) is str else is_blank(content))
            if content is not None
            else not self._tool_only_null
        ):
            turn = encode_tool_only(self, turn, inputs, notes)
        if self._user.message is not None:
            self.release_user()
        ids = rewrite_ids(self, inputs, notes) if self._rewrites_ids and calls else None
        if ids is not None:
            turn = renamed_calls(turn, given, calls, ids)
        if self._split and calls and has_text(content):
            turn, notes = emit_apart(self, turn, inputs, notes)  # the text emitted; the calls go on
        if len(calls) > 1 and (
            self._single_call or (self._rounds_for is not None and self._rounds_for(turn["tool_calls"]))  # JT-4; GM-12
        ):
            emit_rounds(self, turn, inputs, notes, policy != "keep", ids)
            self._end_block()
            return
        elif notes or not self._direct:
            self._emit(turn, notes)
        else:
            self._out.append(turn)  # _emit, inlined for the common case
        if calls:
            emit_results(self, policy != "keep", inputs, ids)
        self._end_block()


    def _same_speaker(self, a: Message, b: Message, role: str) -> bool:
        # Equal names are one speaker however the output writes them; different ones are two
        # unless the output writes them alike (sanitized alike, or both removed).
        if a.get("name") == b.get("name"):
            return True
        speaker = self._speaker
        return speaker is not None and bool(speaker(a, role) == speaker(b, role))

    def end_turn_at_eof(self, message: Message | None = None) -> None:
        """As end_turn, with the ``trailing_calls`` policy for unanswered calls -- if they
        really are trailing: when a user or system message came after them (deferred),
        the conversation moved on without their results, and they get stubs."""
        self.end_turn(None, trailing_policy(self.options.trailing_calls, bool(self._deferred)))

    # ------------------------------------------------------------------ the repairs


    def _end_block(self) -> None:
        # What was deferred behind the tool block is placed next, in arrival order.
        if self._deferred:
            self._replay.extend(self._deferred)
            self._deferred = []
        # Reset only what was used: this runs once per assistant turn.
        if self._calls:
            self._answered = self._calls  # a late second result for them is a duplicate
            self._calls = {}
            self._unanswered = {}
        if self._results:
            self._results = {}
            self._result_index = {}
            if self._result_notes:
                self._result_notes = {}
        if self._aliases:
            self._aliases = {}
        if self._call_origin:
            self._call_origin = {}
        if self._next_suffix:
            self._next_suffix = {}
        self._held_bytes = self._user.size


# ---------------------------------------------------------------------- helpers


def _nothing() -> None:
    pass
