"""Check mode: say exactly what a provider would reject, without changing anything.

:class:`Checker` is a streaming detector of every key of the rule catalogue
(``_rules.py``), in bounded memory. It reads the *raw* input (so it finds the core-level defects too: unanswered calls, orphan results,
  results that are not adjacent, ``""`` next to calls, empty messages, consecutive roles)
  and returns :class:`Violation` values, one per rule of the profile whose key fired.

Indices in the provider's text follow the provider's convention (providers.md §0): the
Anthropic, Bedrock and Gemini families count only non-system messages (their converters
hoist ``system`` out of the list), everyone else counts every message. ``Violation.index``
is always the 0-based index in the stream that was fed.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator, Mapping
from typing import Any, Literal, cast

from pydantic import BaseModel, ConfigDict

from .._content import (
    EVENT_OF_ROLE,
    FIELD_TABLES,
    MISTRAL_ID,
    NAME_PATTERN,
    ANTHROPIC_ID,
    REASONING_KEYS,
    REASONING_PART_TYPES,
    SUBSTANCE_KEYS,
    has_text,
    is_opaque,
    is_text_kind,
    is_text_part,
    unknown_fields,
)
from .._defaults import DEFAULT_MAX_SEEN_IDS
from .._errors import InvalidMessage, UsageError
from .._json import JSONDecodeError, loads
from .._messages import is_plain, validate_message
from ._encode import known_reasoning
from ._profiles import Profile, get_profile
from ._rules import RULES, Rule, render

__all__ = [
    "acheck",
    "Violation",
    "Checker",
    "check",
    "check_iter",
    "acheck_iter",
    "DEFAULT_MAX_SEEN_IDS",
]



class Violation(BaseModel):
    """One thing the provider would reject."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    index: int | None
    """0-based index of the offending message in the stream (None: the history as a whole)."""
    rule: str
    """Rule id (``"MI-4"``); see :data:`RULES`."""
    key: str
    """The canonical key that fired (``"tool.id_format"``)."""
    message: str
    """The provider's error text, as the provider words it."""
    source: str
    """Evidence for the rule."""
    severity: Literal["error", "warning"] = "error"


# ---------------------------------------------------------------------- the checker

# mistral-common's transition table (MI-1): what may follow each role.
_MISTRAL_NEXT = {
    "system": {"user", "assistant", "system"},
    "user": {"assistant", "system", "user"},
    "assistant": {"assistant", "user", "tool"},
    "tool": {"assistant", "tool"},
}


class Checker:
    """Check a history one message at a time against a profile's rules.

    >>> c = Checker("mistral")
    >>> c.feed({"role": "user", "content": "hi"})
    []
    >>> [v.rule for v in c.feed({"role": "assistant", "tool_calls": [
    ...     {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]})]
    ['MI-4']
    >>> [v.rule for v in c.close()]
    ['MI-3']

    ``feed()`` returns the violations found at that message (some are only known later: an
    unanswered call is reported when its tool block ends); ``close()`` returns the ones
    known at the end. Nothing is changed: messages are only read.

    Memory is bounded: the checker holds the open tool block's call ids and names, the
    last role, a few counters, and up to ``max_seen_ids`` call ids for the cross-turn
    duplicate check (see :data:`DEFAULT_MAX_SEEN_IDS`).

    Past ``max_seen_ids`` the check is no longer exact: ``incomplete`` turns True,
    ``incomplete_reason`` says which limit to raise, and ``close()`` returns, last, a
    warning with rule ``incomplete`` (index None) saying the same, so a caller that only
    sees the list of violations (``check()``) is not told "no violations" for a check that
    could not be done.

    Opaque assistant messages (Codex interim turns, ``finish_reason: "incomplete"``) are
    exempt from the rules about the message itself (content, call ids and arguments,
    reasoning fields, its ``name``, an empty ``tool_calls``): they must be replayed exactly as stored, so
    no repair could change them. Their tool results, and where they stand, are still checked.
    """

    def __init__(self, profile: Any = "default", *, max_seen_ids: int = DEFAULT_MAX_SEEN_IDS) -> None:
        self.profile: Profile = get_profile(profile)
        self._rules: dict[str, list[Rule]] = {}
        for rule_id in self.profile.active_rules():
            rule = RULES[rule_id]
            for key in rule.keys:
                self._rules.setdefault(key, []).append(rule)
        self._keeps_opaque = self.profile.opaque == "keep"
        self._exempt = known_reasoning(self.profile)  # reasoning fields fields.unknown leaves to their rules
        self.max_seen_ids = max_seen_ids
        self.incomplete = False
        self.incomplete_reason: str | None = None
        """Why the check is not exact (which limit to raise), or None while it is."""
        self._closed = False
        self._index = -1
        self._systems = 0  # system messages so far (for native indices)
        self._started = False  # a non-system message was seen
        self._seen_user = False
        self._prev: str | None = None  # role of the previous message (system included)
        self._prev_turn: str | None = None  # role of the previous non-system message
        self._prev_turn_index = -1
        self._block: dict[str, str] | None = None  # open tool block: call id -> function name
        self._block_index = -1
        self._block_answered: dict[str, int] = {}  # call id -> index of its result
        self._block_position = 0  # results seen in the open block
        self._seen_ids: set[str] = set()
        self._last: Mapping[str, Any] | None = None
        self._last_index = -1

    # -- public surface

    def feed(self, message: Any) -> list[Violation]:
        """Check the next message; return the violations found so far."""
        if self._closed:
            raise UsageError("feed() called after close(); start a new Checker for a new history")
        self._index += 1
        out: list[Violation] = []
        if not isinstance(message, Mapping):
            dump = getattr(message, "model_dump", None)
            message = dump(mode="json", exclude_unset=True) if dump is not None else None
        raw_role = message.get("role") if isinstance(message, Mapping) else None
        # A role that is not a string (a list, an object) is not a role: no lookup with it.
        role = EVENT_OF_ROLE.get(raw_role) if isinstance(raw_role, str) else None
        if role is None:
            # Not a chat message at all: no provider text applies, the normalizer's does.
            out.append(_shape(self._index, "expected an object with role system, developer, user, assistant or tool"))
            return out
        problem = _shape_problem(message, self._index)
        if problem is not None:
            out.append(_shape(self._index, problem))
            return out
        self._check(message, role, out)
        return out

    def close(self) -> list[Violation]:
        """End of input: report what only the end reveals. Idempotent."""
        if self._closed:
            return []
        self._closed = True
        out: list[Violation] = []
        self._end_block(out)
        if self._index >= 0 and not self._seen_user:
            self._emit(out, "role.requires_user", None)
        last = self._last
        if last is not None and last.get("role") == "assistant" and not last.get("tool_calls"):
            if not (last.get("prefix") is True and self.profile.trailing_assistant == "prefix"):
                self._emit(out, "role.last_user_or_tool", self._last_index)
            if _ends_in_whitespace(last.get("content")):
                self._emit(out, "content.final_assistant_trailing_ws", self._last_index)
        if self.incomplete_reason is not None:
            # Last, so that "no violations" is never the answer of a check that was not done.
            out.append(Violation(index=None, rule="incomplete", key="incomplete", source="normalizer",
                                 severity="warning", message=f"the check is incomplete: {self.incomplete_reason}"))
        return out

    # -- detection

    def _emit(self, out: list[Violation], key: str, index: int | None, **values: Any) -> None:
        rules = self._rules.get(key)
        if not rules:
            return
        role = values.pop("_role", None)
        only = values.pop("_only", None)  # one rule of the key, not all of them
        for rule in rules:
            if rule.roles is not None and role is not None and role not in rule.roles:
                continue
            if only is not None and rule is not only:
                continue
            filled = dict(values)
            if index is not None and "i" not in filled:
                filled["i"] = index - self._systems if rule.native_index else index
            out.append(Violation(
                index=index, rule=rule.id, key=key, message=render(rule.text, filled),
                source=rule.source, severity=rule.severity,
            ))

    def _end_block(self, out: list[Violation]) -> None:
        block = self._block
        if block is None:
            return
        self._block = None
        missing = [call_id for call_id in block if call_id not in self._block_answered]
        if missing:
            index = self._block_index
            # The index in the text is the assistant message's; the systems counted for a
            # native index are those before it, which is what _systems was back then.
            self._emit(out, "tool.unanswered_call", index, ids=", ".join(missing))

    def _check(self, msg: Mapping[str, Any], role: str, out: list[Violation]) -> None:
        index = self._index
        emit = self._emit
        if role != "tool":
            self._end_block(out)
        # reads keys only; a profile that drops opaque state (Profile.opaque) exempts nothing
        opaque = role == "assistant" and self._keeps_opaque and is_opaque(cast("dict[str, Any]", msg))
        # -- roles and order
        prev = self._prev
        if "role.mistral_transitions" in self._rules and prev is not None and role not in _MISTRAL_NEXT[prev]:
            emit(out, "role.mistral_transitions", index, current=role, previous=prev)
        if role == "system":
            if msg.get("role") == "developer":
                emit(out, "role.developer", index)
            if "role.system_unsupported" in self._rules:
                emit(out, "role.system_unsupported", index)
            mode = self.profile.system
            if (self._started and mode != "anywhere") or (mode == "single" and self._systems > 0):
                emit(out, "role.system_position", index)
            self._systems += 1
        else:
            if not self._started:
                self._started = True
                if role != "user":
                    emit(out, "role.first_user", index)
            before = self._prev_turn
            if before == role and role in ("user", "assistant"):
                emit(out, "role.alternate", index, role=role, j=self._prev_turn_index)
            self._prev_turn = role
            self._prev_turn_index = index
            if role == "user":
                self._seen_user = True
        self._prev = role
        # -- fields
        if role != "assistant" and "tool_calls" in msg:
            emit(out, "fields.role_specific", index, role=msg.get("role"))
        if "fields.unknown" in self._rules and not opaque:
            # Each rule in the words of its provider, for the fields its own table does not
            # know (the encoder removes what any of them does not know: the same fields).
            for rule in self._rules["fields.unknown"]:
                table = FIELD_TABLES[rule.fields or "chat"]
                for field in unknown_fields(msg, role, self._exempt, table=table):
                    emit(out, "fields.unknown", index, field=field, role=msg.get("role"), _only=rule)
        name = msg.get("name")
        # (not on an opaque turn: replayed as stored, its name is not repaired either)
        if isinstance(name, str) and not NAME_PATTERN.match(name) and role != "tool" and not opaque:
            emit(out, "content.name_pattern", index)
        # -- content
        if not opaque:
            self._check_content(msg, role, index, out)
        # -- tools
        if role == "assistant":
            self._check_assistant(msg, index, opaque, out)
        elif role == "tool":
            self._check_result(msg, index, out)
        self._last = msg
        self._last_index = index

    def _check_content(self, msg: Mapping[str, Any], role: str, index: int, out: list[Violation]) -> None:
        emit = self._emit
        content = msg.get("content")
        calls = msg.get("tool_calls") if role == "assistant" else None
        if content is None:
            if role != "assistant" or not calls:
                emit(out, "content.null", index, _role=role)
        elif isinstance(content, list):
            if not content:
                emit(out, "content.no_elements", index)
            texts = 0
            for j, part in enumerate(content):
                if not isinstance(part, Mapping) or "type" not in part:
                    emit(out, "content.part_type", index, j=j)
                # A text part: a string, a text type, or no type and a "text" key (the one
                # rule, _content.is_text_kind; an untyped {"image_url": ...} is an image).
                if isinstance(part, str):
                    text: Any = part
                elif isinstance(part, Mapping) and is_text_kind(part):
                    text = part.get("text")
                else:
                    continue
                texts += 1
                if not isinstance(text, str) or text == "":
                    emit(out, "content.nonempty_text_part", index, j=j)
                elif not text.strip():
                    emit(out, "content.non_whitespace_text", index, j=j)
            emit(out, "content.string_only", index, _role=role)
            if "content.text_only" in self._rules and not all(is_text_part(p) for p in content):
                emit(out, "content.text_only", index, _role=role)
            if texts > 1:
                emit(out, "content.single_text", index)
        elif isinstance(content, str) and not calls and content and not content.strip():
            emit(out, "content.non_whitespace_text", index, j=0)
        if role == "assistant":
            if calls:
                self._check_tool_only(content, index, out)
                if has_text(content):
                    emit(out, "content.not_both_text_and_calls", index)
            elif not has_text(content) and not any(msg.get(k) for k in SUBSTANCE_KEYS):
                emit(out, "content.nonempty_message", index, _role=role)
        elif role == "user" and not has_text(content):
            emit(out, "content.nonempty_message", index, _role=role)

    def _check_tool_only(self, content: Any, index: int, out: list[Violation]) -> None:
        # Only a blank content next to calls is an encoding question; text is text.
        if has_text(content):
            return
        want = self.profile.tool_only_content
        if want == "null":
            bad = content is not None
        elif want == "empty":
            bad = content != ""
        elif want == "omit":
            bad = content is not None and content != ""
        else:
            bad = content == []
        if bad:
            self._emit(out, "content.tool_only_assistant", index, _role="assistant", j=0)

    def _check_assistant(self, msg: Mapping[str, Any], index: int, opaque: bool, out: list[Violation]) -> None:
        emit = self._emit
        # An opaque turn is replayed exactly as stored (no repair may touch it but the removal
        # of an empty call list): the rules about its reasoning fields do not apply.
        if not opaque:
            for field in REASONING_KEYS:
                if field in msg:
                    emit(out, "reasoning.unsupported", index, field=field)
            content = msg.get("content")
            if "reasoning.unsupported" in self._rules and isinstance(content, list) and any(
                isinstance(p, Mapping) and p.get("type") in REASONING_PART_TYPES for p in content
            ):
                emit(out, "reasoning.unsupported", index, field="content")
        calls = msg.get("tool_calls")
        if calls is None or "tool_calls" not in msg:
            return
        if isinstance(calls, list) and not calls:
            emit(out, "tool.empty_tool_calls", index)  # opaque or not: an empty list is no state
            return
        if not isinstance(calls, list):
            return
        last = self._last
        if (
            "content.text_then_calls" in self._rules and last is not None and last.get("role") == "assistant"
            and not last.get("tool_calls") and has_text(last.get("content"))
        ):
            emit(out, "content.text_then_calls", index)
        profile = self.profile
        if not opaque and profile.requires_reasoning() and msg.get("reasoning_content") is None:
            emit(out, "reasoning.required_on_tool_turns", index)
        if len(calls) > 1 and not opaque:
            emit(out, "tool.single_call", index)
        parse = "tool.arguments_valid_json" in self._rules and not opaque
        block: dict[str, str] = {}
        offset = 1 if has_text(msg.get("content")) else 0  # Anthropic: the text block comes first
        for j, call in enumerate(calls):
            if not isinstance(call, Mapping):
                continue
            call_id = call.get("id") or call.get("call_id")
            function = call.get("function")
            fname = function.get("name") if isinstance(function, Mapping) else None
            if not opaque:
                self._check_call_id(call_id, index, j + offset, out)
                arguments = function.get("arguments") if isinstance(function, Mapping) else None
                if not isinstance(arguments, str) or not arguments.strip():
                    if not isinstance(arguments, (dict, list)):
                        emit(out, "tool.arguments_json", index, id=call_id)
                if isinstance(arguments, str):
                    emit(out, "tool.arguments_object", index)
                    if parse and arguments.strip():
                        try:
                            loads(arguments)  # (orjson refuses an integer of 309 digits or more: valid JSON)
                        except JSONDecodeError:
                            emit(out, "tool.arguments_valid_json", index, name=fname)
            if isinstance(call_id, str) and call_id:
                if call_id in block:
                    if not opaque:
                        emit(out, "tool.duplicate_call_id", index, id=call_id, j=j + offset)
                elif "tool.duplicate_call_id" in self._rules and not opaque:
                    seen = self._seen_ids
                    if call_id in seen:
                        emit(out, "tool.duplicate_call_id", index, id=call_id, j=j + offset)
                    elif len(seen) < self.max_seen_ids:
                        seen.add(call_id)
                    elif not self.incomplete:
                        self._give_up_ids()
                block[call_id] = fname if isinstance(fname, str) else ""
        if block:
            self._block = block
            self._block_index = index
            self._block_answered = {}
            self._block_position = 0

    def _give_up_ids(self) -> None:
        self.incomplete = True
        self.incomplete_reason = (
            f"more than {self.max_seen_ids} distinct call ids: ids first seen after that were not remembered, "
            "so a reuse of one of them across turns (tool.duplicate_call_id) is not reported; "
            "raise max_seen_ids to check them"
        )

    def _check_call_id(self, call_id: Any, index: int, j: int, out: list[Violation]) -> None:
        style = self.profile.id_style
        if style == "keep" or style == "unique":
            return
        text = call_id if isinstance(call_id, str) else ""
        if style == "openai40":
            if len(text) > 40:
                self._emit(out, "tool.id_format", index, j=j, n=len(text))
        elif style == "responses64":
            if len(text) > 64:
                self._emit(out, "tool.id_format", index, n=len(text))
        elif style == "anthropic64":
            if not ANTHROPIC_ID.match(text):
                self._emit(out, "tool.id_format", index, j=j)
        elif style == "mistral9":
            if not MISTRAL_ID.match(text):
                self._emit(out, "tool.id_format", index, id=call_id)

    def _check_result(self, msg: Mapping[str, Any], index: int, out: list[Violation]) -> None:
        emit = self._emit
        call_id = msg.get("tool_call_id")
        block = self._block
        position = self._block_position
        self._block_position = position + 1
        if not isinstance(call_id, str) or not call_id:
            if "tool.id_missing" in self._rules:
                emit(out, "tool.id_missing", index)
            else:
                emit(out, "tool.orphan_result", index, id=call_id, j=position)
            return
        if block is None or call_id not in block:
            emit(out, "tool.orphan_result", index, id=call_id, j=position)
            return
        first = self._block_answered.get(call_id)
        if first is not None:
            emit(out, "tool.duplicate_result", index, id=call_id, first=first, j=position)
            return
        self._block_answered[call_id] = index
        name = msg.get("name")
        if not name or (block[call_id] and name != block[call_id]):
            emit(out, "tool.response_name", index, j=position)


def _shape(index: int, what: str) -> Violation:
    return Violation(index=index, rule="shape", key="shape", source="normalizer", message=f"not a chat message: {what}")


def _shape_problem(message: Mapping[str, Any], index: int) -> str | None:
    """What the normalizer's message validation (``_messages.py``, the one home of the
    message shape) says is wrong with ``message``, or None. A message the repair would
    refuse (content a number, ``tool_calls`` not a list of objects...) is a finding here,
    never a silent pass."""
    if type(message) is dict and is_plain(message):
        return None  # the validator would accept it unchanged (the core's fast path)
    try:
        validate_message(message, index)
    except InvalidMessage as exc:
        return f"{exc.what}. {exc.hint}" if exc.hint else exc.what
    except RecursionError:
        return "nested too deeply to read (a chat message is a few levels deep)"
    return None


def _ends_in_whitespace(content: Any) -> bool:
    if isinstance(content, str):
        return content != content.rstrip()
    if isinstance(content, list) and content:
        part = content[-1]
        if isinstance(part, Mapping) and isinstance(part.get("text"), str):
            text: str = part["text"]
            return text != text.rstrip()
    return False


def check_iter(messages: Iterable[Any], profile: Any = "default", **kw: Any) -> Iterator[Violation]:
    """Check a history lazily: violations are yielded as they are found (constant memory).

    Args:
        messages: any iterable of messages (dicts, mappings, pydantic models).
        profile: a built-in profile name, a path to a TOML/JSON profile, or a Profile.
        **kw: ``max_seen_ids`` (see :class:`Checker`).
    """
    checker = Checker(profile, **kw)
    for message in messages:
        yield from checker.feed(message)
    yield from checker.close()


async def acheck_iter(messages: AsyncIterable[Any], profile: Any = "default", **kw: Any) -> AsyncIterator[Violation]:
    """As :func:`check_iter`, over an async iterable."""
    checker = Checker(profile, **kw)
    async for message in messages:
        for violation in checker.feed(message):
            yield violation
    for violation in checker.close():
        yield violation


def check(messages: Iterable[Any], profile: Any = "default", **kw: Any) -> list[Violation]:
    """Every violation of ``profile``'s rules in ``messages``; changes nothing.

    When the check could not be exact (more distinct call ids than ``max_seen_ids``), the
    list ends with a warning whose ``rule`` is ``"incomplete"`` saying which limit to
    raise (see :class:`Checker`); an empty list always means a complete check.

    >>> check([{"role": "assistant", "content": "Hi"}], profile="bedrock")[0].message
    'A conversation must start with a user message. Try again with a conversation that starts with a user message.'
    """
    return list(check_iter(messages, profile, **kw))


async def acheck(messages: AsyncIterable[Any], profile: Any = "default", **kw: Any) -> list[Violation]:
    """:func:`check` over an async iterable of messages."""
    return [violation async for violation in acheck_iter(messages, profile, **kw)]
