"""A rule as one object: its key, what ``check`` reports for it, what ``repair`` does about it.

A :class:`KeyRule` is the rule behind one canonical key of :data:`~.KEYS`
(``tool.unanswered_call``, ``role.alternate`` ...). Its provider *words* are the catalogue
entries that name the key (``_rules.Rule``: each provider's own error text and evidence;
two providers enforcing the key in different words are two entries); it declares, as
``words``, those whose first key it is (``rules.RULES`` gathers them all). Beside the key
and its words, in one class:

* the ``on_*`` hooks are its ``detect()``: the checker (``_check.Checker``) walks a history
  once and, at each point of the walk, asks the rules in force that watch that point; a
  rule reports with ``checker.emit(self, index, **values)``, which renders each provider
  entry of the key in force in its own words. The points, in walk order, are the hooks
  below; at one point the rules are asked in the registry's order (``rules.ALL``: role,
  fields, content, reasoning, tool; within a family, its module's order), which is the
  order of the findings on one message.
* :meth:`KeyRule.repair` switches on, in a :class:`Plan`, what the repair does so that
  ``detect`` finds nothing: the steps the spelling applies to each message
  (``_encode.Spelling``) and the stage applies across messages (``_stage.ProfileStage``).
  A profile's plan is compiled once per set of rules (``rules.plan_for``), never per
  message: the per-message paths read its flags.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from ..._note import Note
    from .._check import Checker, Violation
    from .._profiles import Profile
    from .._rules import Rule

__all__ = ["KeyRule", "Plan", "Step", "HOOKS"]

Out = list["Violation"]
Msg = Mapping[str, Any]
#: A rule's own repair step on one message (see :attr:`Plan.message_steps`).
Step = Callable[[dict[str, Any], str, "Profile", list[int], list["Note"]], dict[str, Any]]


@dataclass
class Plan:
    """What a profile's rules switch on in the repair (filled by :meth:`KeyRule.repair`)."""

    # -- the spelling (per message, ``_encode.Spelling``)
    apart: bool = False
    """Text and calls in two assistant messages, never one (MI-5)."""
    response_name: bool = False
    """A tool message carries the name of the function it answers."""
    nonempty: bool = False
    """Blank text parts dropped, whitespace-only text emptied, empty user content filled."""
    null_to_empty: bool = False
    """A null content (not beside calls) becomes ``""``."""
    names: bool = False
    """``name`` sanitized to ``NAME_PATTERN``."""
    part_types: bool = False
    """Content parts without a ``type`` get one."""
    strip_calls: bool = False
    """``tool_calls`` removed from messages that are not the assistant's."""
    single_text: bool = False
    """Several text parts joined into the first one."""
    string_roles: frozenset[str] = frozenset()
    """Roles whose content must be a string (a part that is not text is replaced there)."""
    text_roles: frozenset[str] = frozenset()
    """Roles whose content must be text (a list of text parts is fine there)."""
    developer_to_system: bool = False
    """A ``developer`` message is written as ``system``."""
    repairs_arguments: bool = False
    """Call arguments that do not parse as JSON are closed (or ``{}``)."""
    single_call: bool = False
    """One call per assistant message: a parallel turn is sent as call/result rounds (the core)."""
    distinct_calls: bool = False
    """A turn with two alike calls (one function, the same arguments) is sent as call/result
    rounds (the core), so that no converter takes the two for one."""
    unknown_fields: bool = False
    """Fields the provider does not know are removed."""
    field_tables: frozenset[str] = frozenset()
    """The field tables (``_content.FIELD_TABLES``) the fields.unknown entries name."""
    exempt_all_reasoning: bool = False
    """Every reasoning field is left to the reasoning policy by fields.unknown (not only
    ``reasoning_content``): another rule strips them (Groq's GQ-1)."""
    # -- the stage (across messages, ``_stage.ProfileStage``)
    alternate: bool = False
    """User and assistant turns strictly alternate (merged, or a placeholder between)."""
    first_user: bool = False
    """A leading user placeholder before a first assistant or tool message."""
    requires_user: bool = False
    """A user message added when the history has none."""
    bridge: bool = False
    """A bridge assistant between a tool result and a user message (Mistral)."""
    rstrip_final: bool = False
    """Trailing whitespace removed from a final assistant message."""
    drop_text_before_calls: bool = False
    """The assistant text right before a turn's calls is dropped (kept in the report)."""
    # -- a rule's own step
    message_steps: tuple[Step, ...] = ()
    """Steps of rules whose repair is none of the above: each is given every message the
    spelling shapes (after its own steps, before the unknown fields go) and returns it, or a
    copy with its change noted (``step(message, role, profile, inputs, notes)``)."""


def roles_of(words: Sequence[Rule], every: tuple[str, ...]) -> frozenset[str]:
    """The roles the entries ``words`` enforce their key on (``every`` where one says none)."""
    return frozenset(role for rule in words for role in (rule.roles or every))


class KeyRule:
    """The rule behind one canonical key (module docstring). Subclasses override the hooks
    they detect at and :meth:`repair`; one instance each, in ``rules.ALL``."""

    key: ClassVar[str]
    """The canonical key (one of ``KEYS``)."""
    summary: ClassVar[str]
    """The key in one line (``KEYS[key]``; the profile docs and the CLI's reports use it)."""
    words: ClassVar[tuple[Rule, ...]] = ()
    """The providers' words for the key: the catalogue entries whose first key it is (an
    entry enforcing several keys lives with its first; it is in force for each of them)."""
    thinking_only: ClassVar[bool] = False
    """Its entries apply only in the provider's thinking mode (``Profile.active_rules``)."""
    serving_only: ClassVar[bool] = False
    """It holds for a request served now, not for a training example: a fine-tuning example
    ends on the assistant turn the model learns (or on the call it learns to make), which a
    serving API refuses as the last message. ``chatnorm check --purpose training`` (the
    default for fine-tuning formats) leaves its findings out (``rules.SERVING_ONLY_KEYS``)."""
    claims_missing_ids: ClassVar[bool] = False
    """In force, a tool message without a ``tool_call_id`` is its finding (``no_id``), not
    an orphan result's."""

    def __repr__(self) -> str:
        return f"<rule {self.key}>"

    # -- repair

    def repair(self, plan: Plan, words: Sequence[Rule]) -> None:
        """Switch on in ``plan`` what removes this rule's findings (``words``: its entries in
        force). Default: nothing (the core's repairs, or the encoding settings, do it)."""

    # -- detect: the checker's walk, in order (see _check.Checker._check)

    def on_unanswered(self, c: Checker, missing: list[str], index: int, out: Out) -> None:
        """A tool block ended with calls ``missing`` a result (``index``: the assistant's)."""

    def on_order(self, c: Checker, msg: Msg, role: str, index: int, out: Out) -> None:
        """A message, before the walk's state takes it in (``c.prev``... are the previous)."""

    def on_message(self, c: Checker, msg: Msg, role: str, index: int, out: Out) -> None:
        """A message's fields (``c.opaque``: an opaque assistant turn, replayed as stored)."""

    def on_content(self, c: Checker, msg: Msg, role: str, content: Any, calls: Any, index: int, out: Out) -> None:
        """The content, before its parts (not on an opaque turn)."""

    def on_part(self, c: Checker, part: Any, j: int, index: int, out: Out) -> None:
        """Each part of a content list."""

    def on_content_end(self, c: Checker, role: str, content: Any, calls: Any, index: int, out: Out) -> None:
        """The content, after its parts."""

    def on_turn(self, c: Checker, msg: Msg, role: str, content: Any, calls: Any, index: int, out: Out) -> None:
        """A user or an assistant message as a turn (its text, its calls)."""

    def on_assistant(self, c: Checker, msg: Msg, index: int, out: Out) -> None:
        """An assistant message that is not opaque, before its calls."""

    def on_empty_calls(self, c: Checker, index: int, out: Out) -> None:
        """An assistant message with ``tool_calls: []`` (nothing more is asked of it)."""

    def on_calls(self, c: Checker, msg: Msg, calls: list[Any], index: int, out: Out) -> None:
        """An assistant message with calls (``c.last``: the message before it)."""

    def on_call(self, c: Checker, call_id: Any, fname: Any, arguments: Any, j: int, block: Mapping[str, str],
                index: int, out: Out) -> None:
        """Each call of a turn that is not opaque (its id, its function's name and arguments;
        ``j``: its place as the provider counts it; ``block``: the ids of the turn's calls
        before it)."""

    def on_result(self, c: Checker, kind: str, msg: Msg, call_id: Any, position: int, first: int | None,
                  expected: str, index: int, out: Out) -> None:
        """A tool message, paired: ``kind`` is ``no_id`` (no ``tool_call_id``, and a rule in
        force says so), ``orphan``, ``duplicate`` (``first``: the first result's index) or
        ``answer`` (``expected``: the function's name, or "")."""

    def on_close(self, c: Checker, last: Msg | None, out: Out) -> None:
        """The end of the history (``last``: its last message)."""


#: The hooks, in walk order (the checker compiles, per profile, each one's rules in force).
HOOKS: tuple[str, ...] = ("on_unanswered", "on_order", "on_message", "on_content", "on_part", "on_content_end",
                          "on_turn", "on_assistant", "on_empty_calls", "on_calls", "on_call", "on_result",
                          "on_close")


def watches(rule: KeyRule, hook: str) -> bool:
    """True when ``rule`` detects at ``hook`` (its class overrides the no-op)."""
    return getattr(type(rule), hook) is not getattr(KeyRule, hook)
