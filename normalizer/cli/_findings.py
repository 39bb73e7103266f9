"""What ``chatnorm check`` finds, as data: findings, the codes that select them, and root causes.

A :class:`Finding` is one violation placed in a file (``FILE:LINE:COL``, the message index)
with its rule code (``OA-1``), key (``tool.unanswered_call``), the provider's words and
whether ``chatnorm repair`` fixes it.

**Root causes.** One defect often breaks several rules. A model turn stored as three
assistant messages leaves the calls of the first unanswered when the second begins, and
makes their results, further down, answer nothing; a user message stored between calls and
their results does the same. Reported one by one, the cause is never named. :class:`Causes`
watches the messages as they are checked and folds such violations under one finding that
names the cause (:data:`CAUSES`), each consequence still listed under it:

* ``NZ-1 [turn.split]`` -- assistant messages that are one turn (the repair merges them):
  calls left unanswered when the next message of the turn begins, their results further
  down, and "consecutive assistant messages" rules broken by the turn's later messages;
* ``NZ-2 [tool.late_results]`` -- a user or system message between calls and their
  results (the repair moves the results up): the calls found unanswered, and the results
  that then answer nothing.

Memory stays bounded: the call ids of the blocks still open or ended with calls unanswered
(at most :data:`MAX_TRACKED_IDS` per conversation), and the findings kept per file.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Any

from .._content import EVENT_OF_ROLE, is_opaque
from ..profiles import KEYS, RULES

__all__ = ["Finding", "Root", "CAUSES", "OTHER_CODES", "Causes", "Selection", "SelectorError", "known_codes", "finding_of"]

#: Root causes: code -> (key, what it is). Their codes are this project's, not a provider's.
CAUSES: dict[str, tuple[str, str]] = {
    "NZ-1": ("turn.split", "one model turn stored as several assistant messages"),
    "NZ-2": ("tool.late_results", "a message stored between tool calls and their results"),
}
#: Findings that are not a provider's rule: a message that is not a chat message, a file
#: that cannot be read.
OTHER_CODES: dict[str, tuple[str, str]] = {
    "shape": ("shape", "not a chat message (repair fails on it, or skips it with --on-invalid skip)"),
    "input": ("input.unreadable", "the file cannot be read (not found, not JSON, not a session format)"),
}
#: Call ids remembered per conversation to link a late result to its call.
MAX_TRACKED_IDS = 10_000

_ALTERNATION_KEYS = frozenset({"role.alternate", "role.mistral_transitions"})


@dataclass(eq=False)
class Finding:
    """One violation (or root cause) and where it is."""

    code: str
    key: str
    message: str
    file: str
    line: int | None = None
    column: int | None = None
    index: int | None = None  # the message's 0-based index in its conversation
    conversation: int | None = None  # in a file of several conversations
    session: str | None = None  # the conversation's session id, where it has one (an opencode.db)
    severity: str = "error"
    fixable: bool = False
    provider: str = ""
    #: A root cause's violations (see :class:`Root`), and a violation's root cause.
    consequences: list[Finding] = field(default_factory=list)
    cause: Finding | None = None

    def describe(self) -> str:
        """What is shown: the provider's words (a :class:`Root` makes its own)."""
        return self.message


def finding_of(violation: Any, file: str, position: Any, conversation: int | None, session: str | None = None) -> Finding:
    """A checker's ``Violation`` placed at ``position`` (None: unknown)."""
    rule = RULES.get(violation.rule)
    return Finding(
        code=violation.rule, key=violation.key, message=violation.message, file=file,
        line=position.line if position is not None else None,
        column=position.column if position is not None else None,
        index=violation.index, conversation=conversation, session=session, severity=violation.severity,
        fixable=rule.fixable if rule is not None else False,
        provider=rule.provider if rule is not None else "chat-normalizer",
    )


# -- selecting codes ------------------------------------------------------------------------------


class SelectorError(ValueError):
    """A ``--select`` / ``--ignore`` value that names no code."""


def known_codes() -> dict[str, str]:
    """Every code a finding can have, with its key."""
    codes = {rule_id: rule.keys[0] for rule_id, rule in RULES.items()}
    codes.update({code: key for code, (key, _) in CAUSES.items()})
    codes.update({code: key for code, (key, _) in OTHER_CODES.items()})
    return codes


def _matches(selector: str, code: str, key: str) -> bool:
    s = selector.upper()
    c = code.upper()
    if s == "ALL" or c == s or c.startswith(s + "-"):
        return True
    if c.startswith(s) and s[-1:].isdigit() and c[len(s):].isalpha():
        return True  # OA-6 takes OA-6a and OA-6c, not OA-60
    return key == selector or key.startswith(selector + ".")


class Selection:
    """Which findings are reported: ``--select`` (default: all) minus ``--ignore``.

    A selector is a rule code (``OA-1``), a provider's prefix (``OA``, ``MI``), a rule with
    its lettered variants (``OA-6``: ``OA-6a``, ``OA-6c``), a key (``tool.unanswered_call``),
    a key's category (``tool``, ``content``, ``role``), or ``ALL``; codes are case-insensitive.
    Ignoring a root cause (``NZ-1``, ``NZ``) lists its consequences on their own.
    """

    def __init__(self, select: list[str], ignore: list[str]) -> None:
        codes = known_codes()
        keys = set(KEYS) | {key for key in codes.values()}
        for option, selectors in (("--select", select), ("--ignore", ignore)):
            for selector in selectors:
                if not any(_matches(selector, code, key) for code, key in codes.items()) and not any(
                    key == selector or key.startswith(selector + ".") for key in keys
                ):
                    near = difflib.get_close_matches(selector, [*codes, *keys], n=3)
                    hint = f"did you mean {', '.join(near)}? " if near else ""
                    raise SelectorError(
                        f"{option} {selector}: no rule has that code or key; {hint}Codes look like OA-1 (a rule), "
                        "OA (a provider's rules), tool.unanswered_call (a key) or tool (a category)"
                    )
        self.select = list(select) or ["ALL"]
        self.ignore = list(ignore)

    def ignored(self, code: str, key: str) -> bool:
        """Named by ``--ignore`` (a root cause is shown unless it is: it groups, it adds nothing)."""
        return any(_matches(s, code, key) for s in self.ignore)

    def __call__(self, code: str, key: str) -> bool:
        return any(_matches(s, code, key) for s in self.select) and not any(
            _matches(s, code, key) for s in self.ignore
        )


# -- root causes ----------------------------------------------------------------------------------


class _Run:
    """Consecutive assistant messages the repair would merge into one turn."""

    def __init__(self, index: int, position: Any, name: Any) -> None:
        self.start = index
        self.end = index
        self.position = position
        self.name = name
        self.root: Root | None = None


@dataclass(frozen=True, slots=True)
class _Between:
    """NZ-2: the message between calls and their results (its index), and its role."""

    index: int
    role: str


@dataclass(eq=False)
class Root(Finding):
    """A root cause: its consequences are the violations it explains."""

    run: _Run | None = None  # NZ-1: the turn's messages
    between: _Between | None = None  # NZ-2: the message between calls and results, its role

    def describe(self) -> str:
        """The root cause's sentence, from what it holds now."""
        if self.run is not None:
            run = self.run
            return (f"one model turn stored as {run.end - run.start + 1} assistant messages ({run.start}-{run.end}); "
                    "repair merges them into one")
        between = self.between or _Between(0, "a")
        ender, role = between.index, between.role
        results = sorted({f.index for f in self.consequences if f.index is not None and f.index > ender})
        many = len(results) != 1
        return (f"{role} message {ender} stands between the calls of message {self.index} and their "
                f"result{'s' if many else ''} (message{'s' if many else ''} {', '.join(map(str, results))}); "
                f"repair moves {'them' if many else 'it'} up to the calls")


@dataclass(frozen=True, slots=True)
class _Opening:
    """The block of calls an assistant message opens: id -> its index; the run it is in."""

    block: dict[str, int]
    run: _Run | None


@dataclass(frozen=True, slots=True)
class _Unanswered:
    """A call found unanswered: that finding, the message that ended its block, its role."""

    finding: Finding
    ender: int
    role: str


@dataclass(frozen=True, slots=True)
class Replaced:
    """A finding already returned, now folded under a new root, which takes its place."""

    old: Finding
    root: Root


class Causes:
    """Folds one conversation's violations under their root causes (see the module docstring).

    For each message in order: :meth:`message`, then :meth:`place` with the findings the
    checker made at it (and ``place(..., at_end=True)`` with those of ``close()``).
    ``place`` returns the new top-level findings: a violation on its own, or a root cause
    met for the first time (its consequences are added to it, now and later). When a
    finding already returned is folded under a new root later (a call found unanswered,
    whose result then turns up after a user message), :attr:`replaced` holds the pair: the
    root takes the finding's place.
    """

    def __init__(self, file: str, conversation: int | None, *, merges_text: bool, enabled: dict[str, bool],
                 session: str | None = None) -> None:
        self.file = file
        self.conversation = conversation
        self.session = session
        #: The repair merges a text message with the calls after it (False: the profile
        #: keeps them apart, as Mistral's does; calls after calls still merge).
        self.merges_text = merges_text
        self.enabled = enabled  # root cause code -> selected
        self.index = -1
        self.role: str | None = None
        self.result_id: str | None = None  # the current message's tool_call_id
        self.run: _Run | None = None  # the assistant run of the current message
        self._last_had_calls = False
        # The open block of calls: id -> index of its assistant message; the run it is in.
        self.block: dict[str, int] = {}
        self.block_run: _Run | None = None
        self._opening: _Opening | None = None
        # Calls found unanswered: id -> that finding, the message that ended the block, its role.
        self.unanswered: dict[str, _Unanswered] = {}
        self._late: dict[tuple[int, int], Root] = {}
        self.replaced: list[Replaced] = []

    def message(self, message: Any, position: Any) -> None:
        self.index += 1
        raw = message.get("role") if isinstance(message, dict) else None
        role = EVENT_OF_ROLE.get(raw) if isinstance(raw, str) else None
        self.role = role
        self.result_id = None
        self._opening = None
        if role != "assistant":
            self.run = None
            if role == "tool":
                value = message.get("tool_call_id")
                self.result_id = value if isinstance(value, str) else None
            return
        calls = message.get("tool_calls")
        has_calls = isinstance(calls, list) and bool(calls)
        run = self.run
        joins = (
            run is not None and run.end == self.index - 1 and run.name == message.get("name")
            and not is_opaque(message) and (self.merges_text or self._last_had_calls or not has_calls)
        )
        if joins and run is not None:
            run.end = self.index
        else:
            run = None if is_opaque(message) else _Run(self.index, position, message.get("name"))
        self.run = run
        self._last_had_calls = has_calls
        if has_calls:
            block: dict[str, int] = {}
            for call in calls:
                call_id = call.get("id") if isinstance(call, dict) else None
                if isinstance(call_id, str) and len(self.unanswered) + len(block) < MAX_TRACKED_IDS:
                    block[call_id] = self.index
            self._opening = _Opening(block, run)

    def place(self, found: list[Finding], *, at_end: bool = False) -> list[Finding]:
        top: list[Finding] = []
        for finding in found:
            root = None if at_end else self._root_of(finding)
            if root is None:
                top.append(finding)
                continue
            if not root.consequences:
                top.append(root)
            finding.cause = root
            root.consequences.append(finding)
            root.fixable = all(f.fixable for f in root.consequences)
            if finding.severity == "error":
                root.severity = "error"
        if self.role != "tool":  # any other message ends the open block; an assistant with calls opens one
            opening = self._opening
            self.block, self.block_run = (opening.block, opening.run) if opening is not None else ({}, None)
        return top

    def _root_of(self, finding: Finding) -> Root | None:
        key = finding.key
        if key == "tool.unanswered_call":
            # Found at the message that ended the block: the next message of the same turn,
            # or a user/system message (whose results may still turn up: see _late_root).
            ended_in_turn = self.role == "assistant" and self.block_run is not None and self.block_run is self.run
            for call_id, where in self.block.items():
                if where == finding.index and len(self.unanswered) < MAX_TRACKED_IDS:
                    self.unanswered[call_id] = _Unanswered(finding, self.index, self.role or "other")
            return self._split_root(self.run) if ended_in_turn and self.run is not None else None
        if self.role == "tool" and (key in ("tool.orphan_result", "tool.duplicate_result") or key in _ALTERNATION_KEYS):
            return self._late_root()
        if key in _ALTERNATION_KEYS and self.role == "assistant" and self.run is not None \
                and self.run.start < self.index:
            return self._split_root(self.run)
        return None

    def _split_root(self, run: _Run) -> Root | None:
        if not self.enabled.get("NZ-1", True):
            return None
        if run.root is None:
            position = run.position
            run.root = Root(
                code="NZ-1", key=CAUSES["NZ-1"][0], message="", file=self.file,
                line=position.line if position is not None else None,
                column=position.column if position is not None else None,
                index=run.start, conversation=self.conversation, session=self.session, severity="warning", fixable=True,
                provider="chat-normalizer", run=run,
            )
        return run.root

    def _late_root(self) -> Root | None:
        """The root of a result that answers a call found unanswered earlier: the split turn
        that call's finding is under already, or the message that came between them."""
        known = self.unanswered.get(self.result_id) if self.result_id is not None else None
        if known is None:
            return None
        first, ender, ender_role = known.finding, known.ender, known.role
        if isinstance(first.cause, Root):
            return first.cause
        if not self.enabled.get("NZ-2", True) or ender_role not in ("user", "system"):
            return None
        key = (first.index or 0, ender)
        root = self._late.get(key)
        if root is None:
            root = Root(
                code="NZ-2", key=CAUSES["NZ-2"][0], message="", file=self.file, line=first.line,
                column=first.column, index=first.index, conversation=self.conversation, session=self.session, severity=first.severity,
                fixable=first.fixable, provider="chat-normalizer", between=_Between(ender, ender_role),
            )
            root.consequences.append(first)
            first.cause = root
            self._late[key] = root
            self.replaced.append(Replaced(first, root))
        return root
