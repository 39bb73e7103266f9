"""Results and stubs, a part of the core (``_core.py``): the held turn's tool block emitted
in call order, each call's result (in the provider's encoding: its call's new id, the
function's name, its shape) or a stub for a missing one, and the record of a reorder.

The stub itself (its text, its record's sentence, its shape) is ``_stub``'s: the session
editor makes its own stubs from the same module.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import TYPE_CHECKING, Any

from ._held import Pending
from ._notes import as_user_text, span
from .._errors import OrphanResultError
from .._note import Note
from .._stub import STUB_KIND, chat_stub, stray_result_kind, stub_detail

if TYPE_CHECKING:
    from ._actions import TableActions

__all__ = ["stray_result", "emit_results", "emit_result", "record_reorder", "stub_message", "stub_note", "made_by", "encode_result"]

Message = dict[str, Any]


def emit_results(n: TableActions, stub: bool, inputs: list[int], ids: dict[str, Any] | None) -> None:
    """The tool block in call order: each call's result, or a stub for a missing one
    (``stub``; else it is left open)."""
    results = n._results
    notes_of = n._result_notes
    if n._plain_results:
        out = n._out
        for call_id in n._calls:
            result = results.get(call_id)
            if result is not None:
                notes = notes_of.get(call_id) if notes_of else None
                if notes:
                    n._emit(result, notes)
                else:
                    out.append(result)  # _emit, inlined for the common case
            elif stub:
                n._emit(stub_message(n, call_id), [stub_note(n, call_id, made_by(n, call_id, inputs))])
    elif not n._encode_results:
        emit = n._emit
        for call_id in n._calls:
            result = results.get(call_id)
            if result is not None:
                emit(result, notes_of.get(call_id) if notes_of else None)
            elif stub:
                emit(stub_message(n, call_id), [stub_note(n, call_id, made_by(n, call_id, inputs))])
    else:
        for call_id in n._calls:
            emit_result(n, call_id, stub, inputs, ids)
    if len(results) > 1:  # (one result cannot be out of order: no call for it)
        record_reorder(n, inputs)


def emit_result(n: TableActions, call_id: str, stub: bool, inputs: list[int], ids: dict[str, Any] | None) -> None:
    """One call's result (or its stub) in the provider's encoding."""
    result = n._results.get(call_id)
    if result is not None:
        notes_of = n._result_notes  # (empty for most turns: no lookup then)
        stored = notes_of.get(call_id) if notes_of else None
        notes = list(stored) if stored else []
        n._emit(encode_result(n, result, call_id, ids, [n._result_index[call_id]], notes), notes)
    elif stub:
        origin = made_by(n, call_id, inputs)
        notes = [stub_note(n, call_id, origin)]
        n._emit(encode_result(n, stub_message(n, call_id), call_id, ids, origin, notes), notes)


def record_reorder(n: TableActions, inputs: list[int]) -> None:
    """Record that the turn's results came in another order than its calls (they are
    emitted in call order). The results map is in the order they arrived."""
    results = n._results
    # (filter with the map's own method: no comprehension's frame, once a turn)
    if len(results) > 1 and list(results) != list(filter(results.__contains__, n._calls)):
        n._record(
            "reorder_results",
            f"put the results of turn {span(inputs)} in the order of its calls",
            list(n._result_index.values()),
        )


def stray_result(n: TableActions, message: Message) -> None:
    """A tool result that answers no unanswered call of the turn before it: what it is
    (``_stub.stray_result_kind``, as the session editor asks), and ``orphan_results``."""
    index = n._index
    call_id = message.get("tool_call_id")
    # (an empty or missing id answers nothing; validate=False: one that is no str may not hash)
    kind = stray_result_kind(call_id, n._results, n._answered) if call_id else "orphan_result"
    if kind == "duplicate_result":
        why = f"a second result for call {call_id!r}"
    else:
        why = f"a result for call {call_id!r}, which the turn before it did not make"
    policy = n.options.orphan_results
    if policy == "error":
        raise OrphanResultError(
            f"tool message is {why}",
            index=index,
            hint='pass orphan_results="drop" to drop it (recorded) or "keep_as_user" to keep its text',
        )
    if policy == "drop":
        n._record(f"drop_{kind}", f"dropped tool message {index}: {why}", [index], message)
        return
    user = {"role": "user", "content": as_user_text(message)}
    n._record(
        f"{kind}_to_user", f"tool message {index} ({why}) kept as user text", [index], message
    )
    n._replay.append(Pending(user, index))


def stub_message(n: TableActions, call_id: str) -> Message:
    """The stub for a call that got no result (its words and shape: ``_stub``)."""
    return chat_stub(call_id, n.options.stub_text)


def stub_note(n: TableActions, call_id: str, made_by: list[int]) -> Note:
    """The stub's record (its sentence made only for a record: ``Note.detail``)."""
    return Note(STUB_KIND, partial(stub_detail, call_id), made_by, None)


def made_by(n: TableActions, call_id: str, inputs: list[int]) -> list[int]:
    """The input index of the message that made the call, as a record's inputs: one
    index a record, whatever the number of fragments the turn merged."""
    return [n._call_origin.get(call_id, inputs[0])]


def encode_result(
    n: TableActions, message: Message, call_id: str, ids: dict[str, Any] | None, inputs: list[int], notes: list[Note]
) -> Message:
    """A result in the provider's encoding: its call's new id (``ids``), the name of
    the function it answers, its shape."""
    given = message
    new = ids[call_id] if ids is not None else call_id
    if new != call_id:
        notes.append(Note("rewrite_result_id", partial("tool_call_id {!r} -> {!r}, as its call".format, call_id, new),
                          inputs, call_id))
        message = {**message, "tool_call_id": new}
    if n._encoder.response_name:
        function = n._calls[call_id].get("function")
        fname = function.get("name") if type(function) is dict or isinstance(function, Mapping) else None
        if fname and message.get("name") != fname:
            notes.append(Note("fill_tool_name", partial("tool message name set to {!r}, the function it "
                              "answers".format, fname), inputs, {"name": message["name"]} if "name" in message else None))
            if message is given:
                message = {**message, "name": fname}
            else:  # the copy made for the new id (strict does both): ours, no second copy
                message["name"] = fname
    if n._shapes:
        message = n._encoder.shape(message, "tool", inputs, notes)
    return message
