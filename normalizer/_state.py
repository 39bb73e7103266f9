################################################################################
# The normalizer's state machine
################################################################################
#
# Theory of operation
# -------------------
# A chat history is repaired one message at a time. The only thing that needs memory is
# the *pending turn*: the messages whose final shape depends on what comes next.
#
#   - An assistant message may be followed by another fragment of the same model turn
#     (text, then the tool calls) -- so it is held, and fragments merge into it.
#   - A held assistant with tool calls waits for its results. Results are collected (and
#     put in call order); a user or system message that arrives while results are still
#     outstanding is held back and replayed after the tool block, so results move up to
#     their call instead of being deleted.
#   - A user message may be followed by another user message, or by an assistant turn that
#     turns out empty and is dropped -- either way the users must merge, so a user message
#     is held until something else is emitted after it (the next turn, a system message).
#
# So at any moment at most one of each is held: a user message, an assistant turn, its
# results, and the messages deferred behind them. That is the whole state, and it does
# not grow with the length of the history (bounds: the max_* options in _options.py).
#
# Rule 1: every decision about *where a message goes* lives in TRANSITIONS below.
#         _core/_actions.py implements the named conditions and actions (the repairs they
#         make: the parts of normalizer/_core); actions never fire events. (The one
#         loop: an action may *schedule* messages for replay -- deferred users after a tool
#         block, an orphan result kept as user text -- and Normalizer.feed dispatches them
#         after the current transition, in order.)
# Rule 2: the table is total. Every live state handles every event, repairing and recording.
#         Only misuse raises (feed after close), plus the data errors the options ask for
#         (orphan_results="error") and the documented limits.
# Rule 3: rows are tried in order; the first whose conditions all hold wins (transitions'
#         own semantics), so each (state, event) pair reads as guarded rows, then a fallback.
#
# States
#   idle     nothing is held
#   user     a user message is held (it may merge with the next user message)
#   turn     an assistant turn is held (fragments merge into it); the user message before it
#            stays held too, until the turn is emitted (the turn may yet turn out empty)
#   tools    the held turn's results are being collected; user/system messages are deferred
#   closed   end of input seen, everything flushed
#
# Events are the roles ("developer" dispatches as "system") plus "eof".
#
# The table is declared for `transitions` (the spec, the diagram in the README, the
# reference in tests/test_state.py) and compiled by _dispatch.py into _table.py as one
# function, dispatch(), a branch per state and event, for the per-message path: a
# transitions trigger costs ~8 us, the whole per-message budget is ~2 us.
#
# WARNING: README's diagram is generated from this table by diagram(); tests/test_readme.py
#          fails when the two differ.
################################################################################

from __future__ import annotations

from typing import Any, Final

__all__ = ["IDLE", "USER", "TURN", "TOOLS", "CLOSED", "STATES", "LIVE", "EVENTS", "TRANSITIONS"]

# Final: the compiled build (mypyc) then reads them as constants, not module attributes.
IDLE: Final = "idle"
USER: Final = "user"
TURN: Final = "turn"
TOOLS: Final = "tools"
CLOSED: Final = "closed"
STATES = [IDLE, USER, TURN, TOOLS, CLOSED]
LIVE = [IDLE, USER, TURN, TOOLS]
EVENTS = ["system", "user", "assistant", "tool", "eof"]


def _row(event: str, source: str, dest: str | None, *actions: str, when: str | None = None) -> dict[str, Any]:
    # One row; `when` is a single named condition (a method of Normalizer).
    row: dict[str, Any] = {"trigger": event, "source": source, "dest": dest, "after": list(actions)}
    if when is not None:
        row["conditions"] = [when]
    return row


TRANSITIONS: list[dict[str, Any]] = [
    # -- idle: nothing held ------------------------------------------------------------
    _row("system", IDLE, IDLE, "emit"),
    _row("user", IDLE, USER, "hold_user"),
    _row("assistant", IDLE, TURN, "hold_turn"),
    _row("tool", IDLE, IDLE, "orphan_result"),  # nothing to answer
    _row("eof", IDLE, CLOSED),
    # -- user: a user message held -----------------------------------------------------
    _row("system", USER, IDLE, "release_user", "emit"),
    _row("user", USER, USER, "merge_user", when="continues_user"),
    _row("user", USER, USER, "release_user", "hold_user"),  # another speaker (`name`)
    _row("assistant", USER, TURN, "hold_turn"),  # the user stays held until the turn is emitted
    _row("tool", USER, USER, "orphan_result"),
    _row("eof", USER, CLOSED, "release_user"),
    # -- turn: an assistant turn held --------------------------------------------------
    # A turn with calls waits for results: what arrives before them is deferred.
    _row("system", TURN, TOOLS, "defer", when="turn_has_calls"),
    _row("system", TURN, IDLE, "end_turn", "release_user", "emit"),
    _row("user", TURN, TOOLS, "defer", when="turn_has_calls"),
    _row("user", TURN, USER, "end_turn", "hold_user"),  # an empty turn drops; users then merge
    _row("assistant", TURN, TURN, "merge_turn", when="continues_turn"),
    _row("assistant", TURN, TURN, "drop_empty", when="is_empty_fragment"),  # see Normalizer.drop_empty
    _row("assistant", TURN, TURN, "end_turn", "hold_turn"),  # opaque state or another speaker
    _row("tool", TURN, IDLE, "take_result", "end_turn", when="completes_turn"),
    _row("tool", TURN, TOOLS, "take_result", when="answers_turn"),
    _row("tool", TURN, TURN, "orphan_result"),
    _row("eof", TURN, CLOSED, "end_turn_at_eof", "release_user"),
    # -- tools: collecting the held turn's results -------------------------------------
    _row("system", TOOLS, TOOLS, "defer"),
    _row("user", TOOLS, TOOLS, "defer"),
    _row("assistant", TOOLS, IDLE, "end_turn", "replay"),  # a new round: stub what is missing
    _row("tool", TOOLS, IDLE, "take_result", "end_turn", when="completes_turn"),
    _row("tool", TOOLS, TOOLS, "take_result", when="answers_turn"),
    _row("tool", TOOLS, TOOLS, "orphan_result"),  # a duplicate, or for no call of this turn
    # eof ends the block, replays what was deferred, and comes round again from idle/user.
    _row("eof", TOOLS, IDLE, "end_turn_at_eof", "replay"),
]


def diagram() -> str:
    """The machine as Mermaid ``stateDiagram-v2`` text (for the README)."""
    from transitions.extensions import GraphMachine

    machine = GraphMachine(
        states=STATES,
        transitions=TRANSITIONS,
        initial=IDLE,
        auto_transitions=False,
        graph_engine="mermaid",
        show_conditions=True,
    )
    return str(machine.get_graph().draw(None))

