"""Tool rules: calls, their ids and arguments, and the results that answer them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..._content import ANTHROPIC_ID, MISTRAL_ID
from ..._json import JSONDecodeError, loads
from ._base import KeyRule, Msg, Out, Plan

if TYPE_CHECKING:
    from .._check import Checker
    from .._rules import Rule

__all__ = ["RULES"]

# The pairing rules (unanswered, orphan, duplicate result, empty tool_calls) are repaired by
# the core, for every profile: it answers each call once, right after its turn.


class UnansweredCall(KeyRule):
    key = "tool.unanswered_call"

    def on_unanswered(self, c: Checker, missing: list[str], index: int, out: Out) -> None:
        c.emit(out, self, index, ids=", ".join(missing))


class OrphanResult(KeyRule):
    key = "tool.orphan_result"

    def on_result(self, c: Checker, kind: str, msg: Msg, call_id: Any, position: int, first: int | None,
                  expected: str, index: int, out: Out) -> None:
        if kind == "orphan":
            c.emit(out, self, index, id=call_id, j=position)


class DuplicateResult(KeyRule):
    key = "tool.duplicate_result"

    def on_result(self, c: Checker, kind: str, msg: Msg, call_id: Any, position: int, first: int | None,
                  expected: str, index: int, out: Out) -> None:
        if kind == "duplicate":
            c.emit(out, self, index, id=call_id, first=first, j=position)


class EmptyToolCalls(KeyRule):
    key = "tool.empty_tool_calls"

    def on_empty_calls(self, c: Checker, index: int, out: Out) -> None:
        c.emit(out, self, index)  # opaque or not: an empty list is no state


class SingleCall(KeyRule):
    key = "tool.single_call"

    def on_calls(self, c: Checker, msg: Msg, calls: list[Any], index: int, out: Out) -> None:
        if len(calls) > 1 and not c.opaque:
            c.emit(out, self, index)

    def repair(self, plan: Plan, words: Sequence[Rule]) -> None:
        plan.single_call = True


class IdFormat(KeyRule):
    key = "tool.id_format"
    # Repaired by the profile's id_style (the spelling writes every id in it).

    def on_call(self, c: Checker, call_id: Any, fname: Any, arguments: Any, j: int, block: Mapping[str, str],
                index: int, out: Out) -> None:
        style = c.profile.id_style
        if style == "keep" or style == "unique":
            return
        text = call_id if isinstance(call_id, str) else ""
        if style == "openai40":
            if len(text) > 40:
                c.emit(out, self, index, j=j, n=len(text))
        elif style == "responses64":
            if len(text) > 64:
                c.emit(out, self, index, n=len(text))
        elif style == "anthropic64":
            if not ANTHROPIC_ID.match(text):
                c.emit(out, self, index, j=j)
        elif style == "mistral9":
            if not MISTRAL_ID.match(text):
                c.emit(out, self, index, id=call_id)


class ArgumentsJson(KeyRule):
    key = "tool.arguments_json"
    # Repaired by the core (arguments written as a JSON string, "{}" when there are none).

    def on_call(self, c: Checker, call_id: Any, fname: Any, arguments: Any, j: int, block: Mapping[str, str],
                index: int, out: Out) -> None:
        if not isinstance(arguments, str) or not arguments.strip():
            if not isinstance(arguments, (dict, list)):
                c.emit(out, self, index, id=call_id)


class ArgumentsObject(KeyRule):
    key = "tool.arguments_object"
    # Repaired by the profile's arguments="object" (the core decodes them as it cleans a call).

    def on_call(self, c: Checker, call_id: Any, fname: Any, arguments: Any, j: int, block: Mapping[str, str],
                index: int, out: Out) -> None:
        if isinstance(arguments, str):
            c.emit(out, self, index)


class ArgumentsValidJson(KeyRule):
    key = "tool.arguments_valid_json"

    def on_call(self, c: Checker, call_id: Any, fname: Any, arguments: Any, j: int, block: Mapping[str, str],
                index: int, out: Out) -> None:
        if isinstance(arguments, str) and arguments.strip():
            try:
                loads(arguments)  # (orjson refuses an integer of 309 digits or more: valid JSON)
            except JSONDecodeError:
                c.emit(out, self, index, name=fname)

    def repair(self, plan: Plan, words: Sequence[Rule]) -> None:
        plan.repairs_arguments = True


class DuplicateCallId(KeyRule):
    key = "tool.duplicate_call_id"
    # Repaired by the profile's id_style ("unique", "anthropic64", "mistral9").

    def on_call(self, c: Checker, call_id: Any, fname: Any, arguments: Any, j: int, block: Mapping[str, str],
                index: int, out: Out) -> None:
        if not isinstance(call_id, str) or not call_id:
            return
        if call_id in block:
            c.emit(out, self, index, id=call_id, j=j)
            return
        seen = c.seen_ids
        if call_id in seen:
            c.emit(out, self, index, id=call_id, j=j)
        elif len(seen) < c.max_seen_ids:
            seen.add(call_id)
        elif not c.incomplete:
            c.give_up_ids()


class IdMissing(KeyRule):
    key = "tool.id_missing"
    claims_missing_ids = True
    # Repaired by the core (a result without an id answers no call: an orphan).

    def on_result(self, c: Checker, kind: str, msg: Msg, call_id: Any, position: int, first: int | None,
                  expected: str, index: int, out: Out) -> None:
        if kind == "no_id":
            c.emit(out, self, index)


class ResponseName(KeyRule):
    key = "tool.response_name"

    def on_result(self, c: Checker, kind: str, msg: Msg, call_id: Any, position: int, first: int | None,
                  expected: str, index: int, out: Out) -> None:
        if kind == "answer":
            name = msg.get("name")
            if not name or (expected and name != expected):
                c.emit(out, self, index, j=position)

    def repair(self, plan: Plan, words: Sequence[Rule]) -> None:
        plan.response_name = True


#: In walk order (the order of their findings on one message).
RULES: tuple[KeyRule, ...] = (
    UnansweredCall(), OrphanResult(), DuplicateResult(), EmptyToolCalls(), SingleCall(), IdFormat(),
    ArgumentsJson(), ArgumentsObject(), ArgumentsValidJson(), DuplicateCallId(), IdMissing(), ResponseName(),
)
