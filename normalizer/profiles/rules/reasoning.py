"""Reasoning rules: the reasoning fields a history must, or must not, carry."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..._content import REASONING_KEYS, REASONING_PART_TYPES
from ._base import KeyRule, Msg, Out, Plan

if TYPE_CHECKING:
    from .._check import Checker
    from .._rules import Rule

__all__ = ["RULES"]


class RequiredOnToolTurns(KeyRule):
    key = "reasoning.required_on_tool_turns"
    thinking_only = True
    # Repaired by the profile's reasoning="require" in thinking mode (the spelling pads it).

    def on_calls(self, c: Checker, msg: Msg, calls: list[Any], index: int, out: Out) -> None:
        if not c.opaque and c.profile.requires_reasoning() and msg.get("reasoning_content") is None:
            c.emit(out, self, index)


class Unsupported(KeyRule):
    key = "reasoning.unsupported"
    # Repaired by the profile's reasoning="strip" (the spelling).

    def on_assistant(self, c: Checker, msg: Msg, index: int, out: Out) -> None:
        for field in REASONING_KEYS:
            if field in msg:
                c.emit(out, self, index, field=field)
        content = msg.get("content")
        if isinstance(content, list) and any(
            isinstance(p, Mapping) and p.get("type") in REASONING_PART_TYPES for p in content
        ):
            c.emit(out, self, index, field="content")

    def repair(self, plan: Plan, words: Sequence[Rule]) -> None:
        plan.exempt_all_reasoning = True  # fields.unknown leaves every reasoning field to this rule


#: In walk order (the order of their findings on one message).
RULES: tuple[KeyRule, ...] = (RequiredOnToolTurns(), Unsupported())
