"""Check mode: say exactly what a provider would reject, without changing anything.

:class:`Checker` is a streaming detector of every key of the rule catalogue
(``rules.RULES``), in bounded memory: it walks the history, and each rule object in force
(``rules/``: one per key) says what it finds where the walk reaches what it watches. It reads the *raw* input (so it finds the core-level defects too: unanswered calls, orphan results,
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

from .._content import EVENT_OF_ROLE, has_text, is_opaque
from .._defaults import DEFAULT_MAX_SEEN_IDS
from .._errors import InvalidMessage, UsageError
from .._messages import is_plain, validate_message
from ._encode import known_reasoning
from ._profiles import Profile, get_profile
from ._rules import Rule, render
from .rules import KeyRule, compiled

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

    The checker walks the history; what each point of the walk breaks is the rules' to say
    (``rules``: each rule object's ``on_*`` hooks, compiled per set of rules). The walk's
    state below (``prev``, ``started``, ``last`` ...) is what those hooks read.
    """

    def __init__(self, profile: Any = "default", *, max_seen_ids: int = DEFAULT_MAX_SEEN_IDS) -> None:
        self.profile: Profile = get_profile(profile)
        rules = compiled(self.profile.active_rules())
        #: The rules in force, each with its catalogue entries in force (whose words it reports in).
        self.words: dict[KeyRule, list[Rule]] = rules.words
        hooks = rules.hooks
        self._on_unanswered = hooks["on_unanswered"]
        self._on_order = hooks["on_order"]
        self._on_message = hooks["on_message"]
        self._on_content = hooks["on_content"]
        self._on_part = hooks["on_part"]
        self._on_content_end = hooks["on_content_end"]
        self._on_turn = hooks["on_turn"]
        self._on_assistant = hooks["on_assistant"]
        self._on_empty_calls = hooks["on_empty_calls"]
        self._on_calls = hooks["on_calls"]
        self._on_call = hooks["on_call"]
        self._on_result = hooks["on_result"]
        self._on_close = hooks["on_close"]
        # A result without an id: a rule in force says so (tool.id_missing), else it is an orphan.
        self._no_id = "no_id" if any(rule.claims_missing_ids for rule in self.words) else "orphan"
        self._keeps_opaque = self.profile.opaque == "keep"
        self.exempt = known_reasoning(self.profile)  # reasoning fields fields.unknown leaves to their rules
        self.max_seen_ids = max_seen_ids
        self.incomplete = False
        self.incomplete_reason: str | None = None
        """Why the check is not exact (which limit to raise), or None while it is."""
        self._closed = False
        # -- the walk's state, read by the rules
        self.index = -1
        self.systems = 0  # system messages so far (for native indices)
        self.started = False  # a non-system message was seen
        self.seen_user = False
        self.prev: str | None = None  # role of the previous message (system included)
        self.prev_turn: str | None = None  # role of the previous non-system message
        self.prev_turn_index = -1
        self.opaque = False  # the message is an opaque assistant turn (replayed as stored)
        self.seen_ids: set[str] = set()
        self.last: Mapping[str, Any] | None = None
        self.last_index = -1
        self._block: dict[str, str] | None = None  # open tool block: call id -> function name
        self._block_index = -1
        self._block_answered: dict[str, int] = {}  # call id -> index of its result
        self._block_position = 0  # results seen in the open block

    # -- public surface

    def feed(self, message: Any) -> list[Violation]:
        """Check the next message; return the violations found so far."""
        if self._closed:
            raise UsageError("feed() called after close(); start a new Checker for a new history")
        self.index += 1
        out: list[Violation] = []
        if not isinstance(message, Mapping):
            dump = getattr(message, "model_dump", None)
            message = dump(mode="json", exclude_unset=True) if dump is not None else None
        raw_role = message.get("role") if isinstance(message, Mapping) else None
        # A role that is not a string (a list, an object) is not a role: no lookup with it.
        role = EVENT_OF_ROLE.get(raw_role) if isinstance(raw_role, str) else None
        if role is None:
            # Not a chat message at all: no provider text applies, the normalizer's does.
            out.append(_shape(self.index, "expected an object with role system, developer, user, assistant or tool"))
            return out
        problem = _shape_problem(message, self.index)
        if problem is not None:
            out.append(_shape(self.index, problem))
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
        for detect in self._on_close:
            detect(self, self.last, out)
        if self.incomplete_reason is not None:
            # Last, so that "no violations" is never the answer of a check that was not done.
            out.append(Violation(index=None, rule="incomplete", key="incomplete", source="normalizer",
                                 severity="warning", message=f"the check is incomplete: {self.incomplete_reason}"))
        return out

    # -- reporting (the rules' detect hooks call it)

    def emit(self, out: list[Violation], rule: KeyRule, index: int | None, **values: Any) -> None:
        """One finding of ``rule`` at ``index``, in the words of each of its entries in force
        (``_role``: only the entries that cover that role; ``_only``: that entry alone)."""
        entries = self.words.get(rule)
        if not entries:
            return
        role = values.pop("_role", None)
        only = values.pop("_only", None)  # one entry of the key, not all of them
        for entry in entries:
            if entry.roles is not None and role is not None and role not in entry.roles:
                continue
            if only is not None and entry is not only:
                continue
            filled = dict(values)
            if index is not None and "i" not in filled:
                filled["i"] = index - self.systems if entry.native_index else index
            out.append(Violation(
                index=index, rule=entry.id, key=rule.key, message=render(entry.text, filled),
                source=entry.source, severity=entry.severity,
            ))

    def give_up_ids(self) -> None:
        """Past ``max_seen_ids``: the cross-turn duplicate check is no longer exact."""
        self.incomplete = True
        self.incomplete_reason = (
            f"more than {self.max_seen_ids} distinct call ids: ids first seen after that were not remembered, "
            "so a reuse of one of them across turns (tool.duplicate_call_id) is not reported; "
            "raise max_seen_ids to check them"
        )

    # -- the walk

    def _end_block(self, out: list[Violation]) -> None:
        block = self._block
        if block is None:
            return
        self._block = None
        missing = [call_id for call_id in block if call_id not in self._block_answered]
        if missing:
            # The index in the text is the assistant message's; the systems counted for a
            # native index are those before it, which is what systems was back then.
            for detect in self._on_unanswered:
                detect(self, missing, self._block_index, out)

    def _check(self, msg: Mapping[str, Any], role: str, out: list[Violation]) -> None:
        index = self.index
        if role != "tool":
            self._end_block(out)
        # reads keys only; a profile that drops opaque state (Profile.opaque) exempts nothing
        self.opaque = opaque = role == "assistant" and self._keeps_opaque and is_opaque(cast("dict[str, Any]", msg))
        # -- roles and order (the rules read the state before this message)
        for detect in self._on_order:
            detect(self, msg, role, index, out)
        if role == "system":
            self.systems += 1
        else:
            self.started = True
            self.prev_turn = role
            self.prev_turn_index = index
            if role == "user":
                self.seen_user = True
        self.prev = role
        # -- fields
        for detect in self._on_message:
            detect(self, msg, role, index, out)
        # -- content
        if not opaque:
            self._check_content(msg, role, index, out)
        # -- tools
        if role == "assistant":
            self._check_assistant(msg, index, opaque, out)
        elif role == "tool":
            self._check_result(msg, index, out)
        self.last = msg
        self.last_index = index

    def _check_content(self, msg: Mapping[str, Any], role: str, index: int, out: list[Violation]) -> None:
        content = msg.get("content")
        calls = msg.get("tool_calls") if role == "assistant" else None
        for detect in self._on_content:
            detect(self, msg, role, content, calls, index, out)
        if isinstance(content, list) and self._on_part:
            for j, part in enumerate(content):
                for detect in self._on_part:
                    detect(self, part, j, index, out)
        for detect in self._on_content_end:
            detect(self, role, content, calls, index, out)
        if role == "assistant" or role == "user":
            for detect in self._on_turn:
                detect(self, msg, role, content, calls, index, out)

    def _check_assistant(self, msg: Mapping[str, Any], index: int, opaque: bool, out: list[Violation]) -> None:
        # An opaque turn is replayed exactly as stored (no repair may touch it but the removal
        # of an empty call list): the rules about its reasoning fields do not apply.
        if not opaque:
            for detect in self._on_assistant:
                detect(self, msg, index, out)
        calls = msg.get("tool_calls")
        if calls is None or "tool_calls" not in msg:
            return
        if isinstance(calls, list) and not calls:
            for detect in self._on_empty_calls:
                detect(self, index, out)
            return
        if not isinstance(calls, list):
            return
        for detect in self._on_calls:
            detect(self, msg, calls, index, out)
        on_call = () if opaque else self._on_call
        block: dict[str, str] = {}
        offset = 1 if has_text(msg.get("content")) else 0  # Anthropic: the text block comes first
        for j, call in enumerate(calls):
            if not isinstance(call, Mapping):
                continue
            call_id = call.get("id") or call.get("call_id")
            function = call.get("function")
            if isinstance(function, Mapping):
                fname, arguments = function.get("name"), function.get("arguments")
            else:
                fname = arguments = None
            for detect in on_call:
                detect(self, call_id, fname, arguments, j + offset, block, index, out)
            if isinstance(call_id, str) and call_id:
                block[call_id] = fname if isinstance(fname, str) else ""
        if block:
            self._block = block
            self._block_index = index
            self._block_answered = {}
            self._block_position = 0

    def _check_result(self, msg: Mapping[str, Any], index: int, out: list[Violation]) -> None:
        call_id = msg.get("tool_call_id")
        block = self._block
        position = self._block_position
        self._block_position = position + 1
        first: int | None = None
        expected = ""
        if not isinstance(call_id, str) or not call_id:
            kind = self._no_id
        elif block is None or call_id not in block:
            kind = "orphan"
        else:
            first = self._block_answered.get(call_id)
            if first is not None:
                kind = "duplicate"
            else:
                kind = "answer"
                self._block_answered[call_id] = index
                expected = block[call_id]
        for detect in self._on_result:
            detect(self, kind, msg, call_id, position, first, expected, index, out)


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
