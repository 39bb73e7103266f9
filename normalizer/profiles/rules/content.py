"""Content rules: what a message's content (and its ``name``) may be."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..._content import NAME_PATTERN, SUBSTANCE_KEYS, has_text, is_text_kind, is_text_part
from ._base import KeyRule, Msg, Out, Plan, roles_of

if TYPE_CHECKING:
    from .._check import Checker
    from .._rules import Rule

__all__ = ["RULES"]

_ALL_ROLES = ("system", "user", "assistant", "tool")


def _text(part: Any) -> tuple[bool, Any]:
    """Whether ``part`` is a text part, and its text: a string, a text type, or no type and
    a ``"text"`` key (the one rule, ``_content.is_text_kind``; an untyped ``{"image_url": ...}``
    is an image)."""
    if isinstance(part, str):
        return True, part
    if isinstance(part, Mapping) and is_text_kind(part):
        return True, part.get("text")
    return False, None


class Null(KeyRule):
    key = "content.null"

    def on_content(self, c: Checker, msg: Msg, role: str, content: Any, calls: Any, index: int, out: Out) -> None:
        if content is None and (role != "assistant" or not calls):
            c.emit(out, self, index, _role=role)

    def repair(self, plan: Plan, words: Sequence[Rule]) -> None:
        plan.null_to_empty = True


class NoElements(KeyRule):
    key = "content.no_elements"
    # Repaired by the core (an empty list is no content) and the tool-only encoding.

    def on_content(self, c: Checker, msg: Msg, role: str, content: Any, calls: Any, index: int, out: Out) -> None:
        if isinstance(content, list) and not content:
            c.emit(out, self, index)


class PartType(KeyRule):
    key = "content.part_type"

    def on_part(self, c: Checker, part: Any, j: int, index: int, out: Out) -> None:
        if not isinstance(part, Mapping) or "type" not in part:
            c.emit(out, self, index, j=j)

    def repair(self, plan: Plan, words: Sequence[Rule]) -> None:
        plan.part_types = True


class NonemptyTextPart(KeyRule):
    key = "content.nonempty_text_part"

    def on_part(self, c: Checker, part: Any, j: int, index: int, out: Out) -> None:
        is_text, text = _text(part)
        if is_text and (not isinstance(text, str) or text == ""):
            c.emit(out, self, index, j=j)

    def repair(self, plan: Plan, words: Sequence[Rule]) -> None:
        plan.nonempty = True


class NonWhitespaceText(KeyRule):
    key = "content.non_whitespace_text"

    def on_part(self, c: Checker, part: Any, j: int, index: int, out: Out) -> None:
        is_text, text = _text(part)
        if is_text and isinstance(text, str) and text != "" and not text.strip():
            c.emit(out, self, index, j=j)

    def on_content_end(self, c: Checker, role: str, content: Any, calls: Any, index: int, out: Out) -> None:
        if isinstance(content, str) and not calls and content and not content.strip():
            c.emit(out, self, index, j=0)

    def repair(self, plan: Plan, words: Sequence[Rule]) -> None:
        plan.nonempty = True


class StringOnly(KeyRule):
    key = "content.string_only"

    def on_content_end(self, c: Checker, role: str, content: Any, calls: Any, index: int, out: Out) -> None:
        if isinstance(content, list):
            c.emit(out, self, index, _role=role)

    def repair(self, plan: Plan, words: Sequence[Rule]) -> None:
        # There a part that is not text cannot stay (_encode: "Parts that are not text").
        plan.string_roles = roles_of(words, _ALL_ROLES)


class TextOnly(KeyRule):
    key = "content.text_only"

    def on_content_end(self, c: Checker, role: str, content: Any, calls: Any, index: int, out: Out) -> None:
        if isinstance(content, list) and not all(is_text_part(p) for p in content):
            c.emit(out, self, index, _role=role)

    def repair(self, plan: Plan, words: Sequence[Rule]) -> None:
        # A list of text parts is fine there; a part that is not text is replaced.
        plan.text_roles = roles_of(words, _ALL_ROLES)


class SingleText(KeyRule):
    key = "content.single_text"

    def on_content_end(self, c: Checker, role: str, content: Any, calls: Any, index: int, out: Out) -> None:
        if isinstance(content, list) and sum(1 for part in content if _text(part)[0]) > 1:
            c.emit(out, self, index)

    def repair(self, plan: Plan, words: Sequence[Rule]) -> None:
        plan.single_text = True


class ToolOnlyAssistant(KeyRule):
    key = "content.tool_only_assistant"
    # Repaired by the profile's tool_only_content (the core writes it as it emits).

    def on_turn(self, c: Checker, msg: Msg, role: str, content: Any, calls: Any, index: int, out: Out) -> None:
        # Only a blank content next to calls is an encoding question; text is text.
        if role != "assistant" or not calls or has_text(content):
            return
        want = c.profile.tool_only_content
        if want == "null":
            bad = content is not None
        elif want == "empty":
            bad = content != ""
        elif want == "omit":
            bad = content is not None and content != ""
        else:
            bad = content == []
        if bad:
            c.emit(out, self, index, _role="assistant", j=0)


class NotBothTextAndCalls(KeyRule):
    key = "content.not_both_text_and_calls"

    def on_turn(self, c: Checker, msg: Msg, role: str, content: Any, calls: Any, index: int, out: Out) -> None:
        if role == "assistant" and calls and has_text(content):
            c.emit(out, self, index)

    def repair(self, plan: Plan, words: Sequence[Rule]) -> None:
        plan.apart = True


class NonemptyMessage(KeyRule):
    key = "content.nonempty_message"

    def on_turn(self, c: Checker, msg: Msg, role: str, content: Any, calls: Any, index: int, out: Out) -> None:
        if role == "assistant":
            if not calls and not has_text(content) and not any(msg.get(k) for k in SUBSTANCE_KEYS):
                c.emit(out, self, index, _role=role)
        elif role == "user" and not has_text(content):
            c.emit(out, self, index, _role=role)

    def repair(self, plan: Plan, words: Sequence[Rule]) -> None:
        plan.nonempty = True


class NamePattern(KeyRule):
    key = "content.name_pattern"

    def on_message(self, c: Checker, msg: Msg, role: str, index: int, out: Out) -> None:
        name = msg.get("name")
        # (not on an opaque turn: replayed as stored, its name is not repaired either)
        if isinstance(name, str) and not NAME_PATTERN.match(name) and role != "tool" and not c.opaque:
            c.emit(out, self, index)

    def repair(self, plan: Plan, words: Sequence[Rule]) -> None:
        plan.names = True


class TextThenCalls(KeyRule):
    key = "content.text_then_calls"

    def on_calls(self, c: Checker, msg: Msg, calls: list[Any], index: int, out: Out) -> None:
        last = c.last
        if last is not None and last.get("role") == "assistant" and not last.get("tool_calls") and has_text(
            last.get("content")
        ):
            c.emit(out, self, index)

    def repair(self, plan: Plan, words: Sequence[Rule]) -> None:
        # mistral-common v3 merges an assistant's text with the calls right after it, then
        # rejects both in one message: that text cannot be sent (MI-12), and is dropped.
        plan.drop_text_before_calls = True


class FinalAssistantTrailingWs(KeyRule):
    key = "content.final_assistant_trailing_ws"

    def on_close(self, c: Checker, last: Msg | None, out: Out) -> None:
        if last is not None and last.get("role") == "assistant" and not last.get("tool_calls") and (
            _ends_in_whitespace(last.get("content"))
        ):
            c.emit(out, self, c.last_index)

    def repair(self, plan: Plan, words: Sequence[Rule]) -> None:
        plan.rstrip_final = True  # (where a final assistant is allowed at all: the stage)


def _ends_in_whitespace(content: Any) -> bool:
    if isinstance(content, str):
        return content != content.rstrip()
    if isinstance(content, list) and content:
        part = content[-1]
        if isinstance(part, Mapping) and isinstance(part.get("text"), str):
            text: str = part["text"]
            return text != text.rstrip()
    return False


#: In walk order (the order of their findings on one message).
RULES: tuple[KeyRule, ...] = (
    NamePattern(), Null(), NoElements(), PartType(), NonemptyTextPart(), NonWhitespaceText(), StringOnly(),
    TextOnly(), SingleText(), ToolOnlyAssistant(), NotBothTextAndCalls(), NonemptyMessage(), TextThenCalls(),
    FinalAssistantTrailingWs(),
)
