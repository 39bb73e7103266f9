"""Emission of the held turn, a part of the core (``_core.py``): what ``Normalizer.end_turn``
does to a turn before it goes out, in the provider's encoding: the content of a tool-only
turn, the call ids in the profile's style, text and calls apart (MI-5), parallel calls as
call/result rounds (JT-4), or the turn dropped when it carries nothing.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any

from .._content import REASONING_TEXT_KEYS, has_text, unfold
from ._notes import merged_turn_detail, renamed_detail, span
from ._results import emit_result, emit_results, made_by, record_reorder
from .._note import Note

if TYPE_CHECKING:
    from ._actions import TableActions
    from ._held import Held

__all__ = ["finish_merged", "drop_unanswered", "end_opaque", "encode_tool_only", "rewrite_ids", "renamed_calls", "emit_apart",
           "emit_rounds", "drop_empty_turn"]

Message = dict[str, Any]


def finish_merged(n: TableActions, held: Held, turn: Message) -> None:
    # A merged turn is our own copy: its text joined once, its calls from the registry.
    if held.folds:
        unfold(turn, held.folds)
    if n._calls:
        turn["tool_calls"] = list(n._calls.values())
    else:
        turn.pop("tool_calls", None)
    inputs = held.inputs
    held.notes.insert(0, Note("merge_assistant", partial(merged_turn_detail, inputs), inputs, None))


def drop_unanswered(n: TableActions, turn: Message, inputs: list[int]) -> Message:
    # Trailing calls were never run (trailing_calls="drop"): remove them, kept whole in
    # the report; the turn without them.
    calls = n._calls
    for call_id in list(n._unanswered):
        n._record(
            "drop_unanswered_call",
            f"removed call {call_id!r}: the history ends before it was answered",
            made_by(n, call_id, inputs), calls.pop(call_id),
        )
    n._unanswered = {}
    kept = list(calls.values())
    return {**turn, "tool_calls": kept} if kept else {k: v for k, v in turn.items() if k != "tool_calls"}


def end_opaque(n: TableActions, turn: Message, inputs: list[int], notes: list[Note], policy: str) -> None:
    # Replayed exactly as stored: no repair, no encoding touches it (its results do).
    if n._user.message is not None:
        n.release_user()
    n._emit(turn, notes)
    if n._calls:
        emit_results(n, policy != "keep", inputs, None)
    n._end_block()


def encode_tool_only(n: TableActions, turn: Message, inputs: list[int], notes: list[Note]) -> Message:
    """The content of a tool-only assistant message, as the provider wants it (blank
    content next to calls means "no text": "text content blocks must be non-empty")."""
    content = turn.get("content")
    want = n._encoder.tool_only
    if want == "null":
        if content is None:
            return turn
        # (repr(), not !r, in a sentence made eagerly on a per-turn path: compiled, an
        # f-string's !r is a str.format call, ~1,500 instructions; repr() is a C call.)
        notes.append(Note("empty_content_to_null", f"content {repr(content)} next to tool calls became null",
                          list(inputs), {"content": content}))
        return {**turn, "content": None}
    if want == "empty":
        if content == "":
            return turn
        notes.append(Note("encode_tool_only_content", f"content {repr(content)} of a tool-only assistant message "
                          f"became '' ({n.profile.name})", list(inputs), {"content": content}))
        return {**turn, "content": ""}
    if "content" not in turn:  # "omit"
        return turn
    notes.append(Note("encode_tool_only_content", f"removed content {repr(content)} of a tool-only assistant "
                      f"message ({n.profile.name})", list(inputs), {"content": content}))
    return {k: v for k, v in turn.items() if k != "content"}


def rewrite_ids(n: TableActions, inputs: list[int], notes: list[Note]) -> dict[str, Any] | None:
    """The turn's call ids in the profile's style: call id -> new id when any changed
    (written on the calls and on their results as they are emitted), else None. The
    registry keeps the ids the input used: a late duplicate result still names them."""
    encoder = n._encoder
    count = n._n_calls
    new_ids: dict[str, Any] = {}
    renamed: dict[str, Any] = {}  # the ids that changed: old -> new
    for call_id in n._calls:
        new = encoder.new_id(call_id, count, new_ids.values())
        count += 1
        new_ids[call_id] = new
        if new != call_id:
            renamed[call_id] = new
    n._n_calls = count
    if not renamed:
        return None
    notes.append(Note(  # (a lazy detail: Note.detail)
        "rewrite_call_id", partial(renamed_detail, encoder.id_style, renamed), list(inputs), list(renamed),
    ))
    return new_ids


def emit_apart(n: TableActions, turn: Message, inputs: list[int], notes: list[Note]) -> tuple[Message, list[Note]]:
    # Text and calls as two messages (MI-5: "Assistant message must have either content
    # or tool_calls, but not both"; JT-13: a template that shows only the calls): the text
    # first, as the model said it. The calls half is returned, for the caller to emit as one
    # message or, one call per message, as rounds.
    text = {k: v for k, v in turn.items() if k != "tool_calls"}
    calls: Message = {"role": "assistant"}
    if "name" in turn:
        calls["name"] = turn["name"]
    want = n._encoder.tool_only
    if want != "omit":
        calls["content"] = None if want == "null" else ""
    calls["tool_calls"] = turn["tool_calls"]
    if n._encoder.pad_reasoning:
        calls["reasoning_content"] = ""
    n._emit(text, notes)
    return calls, [Note(
        "split_text_and_calls",
        f"the text and the tool calls of one assistant message became two messages: {n.profile.name} "
        "accepts one or the other", list(inputs), None,
    )]


def emit_rounds(
    n: TableActions, turn: Message, inputs: list[int], notes: list[Note], stub: bool, ids: dict[str, Any] | None
) -> None:
    # One call per assistant message (JT-4, "This model only supports single tool-calls at
    # once!"): the turn's calls in order, each followed by its result. The first message
    # carries the turn's text and fields; the others only their call. The model made the
    # calls at once, so no call sees a result the turn did not already have.
    calls = turn["tool_calls"]
    want = n._encoder.tool_only
    assert len(calls) == len(n._calls)  # the turn's calls are the registry's, in order
    for k, (call_id, call) in enumerate(zip(n._calls, calls)):
        if k == 0:
            message: Message = {**turn, "tool_calls": [call]}
            message_notes = notes + [Note(
                "split_parallel_calls", f"the {len(calls)} parallel tool calls of one assistant message became "
                f"{len(calls)} call/result rounds: {n.profile.name} "
                f"{'accepts one call per message' if n._single_call else 'would take two alike calls for one'}",
                list(inputs), None,
            )]
        else:
            message = {"role": "assistant"}
            if "name" in turn:
                message["name"] = turn["name"]
            if want != "omit":
                message["content"] = None if want == "null" else ""
            message["tool_calls"] = [call]
            message_notes = []
        n._emit(message, message_notes)
        # Left open (trailing_calls="keep"), a call is open only in the last round: the
        # others have a round after them, so each gets its stub (recorded), or a second
        # repair would find it unanswered mid-history and add one then.
        emit_result(n, call_id, stub or k < len(calls) - 1, inputs, ids)
    record_reorder(n, inputs)


def drop_empty_turn(n: TableActions, turn: Message, inputs: list[int], notes: list[Note]) -> None:
    """Drop a turn that carries nothing (kept whole in the report), and end its block."""
    has_reasoning = any(has_text(turn.get(k)) for k in REASONING_TEXT_KEYS) or bool(turn.get("reasoning_details"))
    why = "it has only reasoning and no turn follows to carry it" if has_reasoning else "it has no text and no tool calls"
    n._note(notes, None)  # repairs made to a message that is then dropped are still repairs
    n._record("drop_empty_assistant", f"dropped assistant message {span(inputs)}: {why}", list(inputs), turn)
    n._end_block()  # the user held before it stays held: the next user merges into it


def renamed_calls(turn: Message, given: Message, calls: dict[str, Any], ids: dict[str, Any]) -> Message:
    """The turn with its calls renamed (``ids``), on the calls as the turn now has them: the
    encoder may have removed fields from them (the registry keeps them as they came), and
    the turn's calls are the registry's, in order."""
    shaped = turn["tool_calls"]
    assert len(shaped) == len(calls)
    renamed = [call if ids[c] == c else {**call, "id": ids[c]} for c, call in zip(calls, shaped)]
    if turn is given:
        return {**turn, "tool_calls": renamed}
    turn["tool_calls"] = renamed  # a copy the shape or the tool-only content made: ours, no second copy
    return turn
