"""Role rules: which roles may come where (order, alternation, system placement)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ._base import KeyRule, Msg, Out, Plan

if TYPE_CHECKING:
    from .._check import Checker
    from .._rules import Rule

__all__ = ["RULES"]

# mistral-common's transition table (MI-1): what may follow each role.
_MISTRAL_NEXT = {
    "system": {"user", "assistant", "system"},
    "user": {"assistant", "system", "user"},
    "assistant": {"assistant", "user", "tool"},
    "tool": {"assistant", "tool"},
}


class MistralTransitions(KeyRule):
    key = "role.mistral_transitions"

    def on_order(self, c: Checker, msg: Msg, role: str, index: int, out: Out) -> None:
        prev = c.prev
        if prev is not None and role not in _MISTRAL_NEXT[prev]:
            c.emit(out, self, index, current=role, previous=prev)

    def repair(self, plan: Plan, words: Sequence[Rule]) -> None:
        plan.bridge = True  # an assistant between a tool result and a user message


class Developer(KeyRule):
    key = "role.developer"

    def on_order(self, c: Checker, msg: Msg, role: str, index: int, out: Out) -> None:
        if role == "system" and msg.get("role") == "developer":
            c.emit(out, self, index)

    def repair(self, plan: Plan, words: Sequence[Rule]) -> None:
        plan.developer_to_system = True


class SystemUnsupported(KeyRule):
    key = "role.system_unsupported"
    # Repaired by the profile's system="fold" (the stage).

    def on_order(self, c: Checker, msg: Msg, role: str, index: int, out: Out) -> None:
        if role == "system":
            c.emit(out, self, index)


class SystemPosition(KeyRule):
    key = "role.system_position"
    # Repaired by the profile's system placement (the stage): it says where systems may go.

    def on_order(self, c: Checker, msg: Msg, role: str, index: int, out: Out) -> None:
        if role == "system":
            mode = c.profile.system
            if (c.started and mode != "anywhere") or (mode == "single" and c.systems > 0):
                c.emit(out, self, index)


class FirstUser(KeyRule):
    key = "role.first_user"

    def on_order(self, c: Checker, msg: Msg, role: str, index: int, out: Out) -> None:
        if role != "system" and not c.started and role != "user":
            c.emit(out, self, index)

    def repair(self, plan: Plan, words: Sequence[Rule]) -> None:
        plan.first_user = True


class Alternate(KeyRule):
    key = "role.alternate"

    def on_order(self, c: Checker, msg: Msg, role: str, index: int, out: Out) -> None:
        if role != "system" and c.prev_turn == role and role in ("user", "assistant"):
            c.emit(out, self, index, role=role, j=c.prev_turn_index)

    def repair(self, plan: Plan, words: Sequence[Rule]) -> None:
        plan.alternate = True


class RequiresUser(KeyRule):
    key = "role.requires_user"

    def on_close(self, c: Checker, last: Msg | None, out: Out) -> None:
        if c.index >= 0 and not c.seen_user:
            c.emit(out, self, None)

    def repair(self, plan: Plan, words: Sequence[Rule]) -> None:
        plan.requires_user = True


class LastUserOrTool(KeyRule):
    key = "role.last_user_or_tool"
    # Repaired by the profile's trailing_assistant ("prefix" or "forbid": the stage).

    def on_close(self, c: Checker, last: Msg | None, out: Out) -> None:
        if last is not None and last.get("role") == "assistant" and not last.get("tool_calls"):
            if not (last.get("prefix") is True and c.profile.trailing_assistant == "prefix"):
                c.emit(out, self, c.last_index)


#: In walk order (the order of their findings on one message).
RULES: tuple[KeyRule, ...] = (
    MistralTransitions(), Developer(), SystemUnsupported(), SystemPosition(), FirstUser(), Alternate(),
    RequiresUser(), LastUserOrTool(),
)
