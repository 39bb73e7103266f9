"""Field rules: which fields a message may carry."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..._content import FIELD_TABLES, unknown_fields
from ._base import KeyRule, Msg, Out, Plan

if TYPE_CHECKING:
    from .._check import Checker
    from .._rules import Rule

__all__ = ["RULES"]


class RoleSpecific(KeyRule):
    key = "fields.role_specific"

    def on_message(self, c: Checker, msg: Msg, role: str, index: int, out: Out) -> None:
        if role != "assistant" and "tool_calls" in msg:
            c.emit(out, self, index, role=msg.get("role"))

    def repair(self, plan: Plan, words: Sequence[Rule]) -> None:
        plan.strip_calls = True


class Unknown(KeyRule):
    key = "fields.unknown"

    def on_message(self, c: Checker, msg: Msg, role: str, index: int, out: Out) -> None:
        if c.opaque:
            return
        # Each entry in the words of its provider, for the fields its own table does not
        # know (the spelling removes what any of them does not know: the same fields).
        for rule in c.words[self]:
            table = FIELD_TABLES[rule.fields or "chat"]
            for field in unknown_fields(msg, role, c.exempt, table=table):
                c.emit(out, self, index, field=field, role=msg.get("role"), _only=rule)

    def repair(self, plan: Plan, words: Sequence[Rule]) -> None:
        # The fields the provider knows: the table each entry names (Rule.fields; with
        # several, what every one of them knows).
        plan.unknown_fields = True
        plan.field_tables = frozenset(rule.fields or "chat" for rule in words)


#: In walk order (the order of their findings on one message).
RULES: tuple[KeyRule, ...] = (RoleSpecific(), Unknown())
