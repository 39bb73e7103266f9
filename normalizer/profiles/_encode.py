"""The profile's encoding: how each message is written for one provider, applied once.

The core (``_core.py``) decides what the history *is* -- which messages, which turns, which
results answer which calls. How each message is then *spelled* differs per provider
(providers.md §16, "Provider conflicts"), and the core asks a :class:`Spelling` built from
the profile, at the one moment it emits a message:

* the content of a tool-only assistant message: ``null``, ``""`` or no key
  (:attr:`Spelling.tool_only`);
* call arguments as a JSON string or as an object (:attr:`Spelling.object_arguments`, used
  by the core while it cleans each call);
* text and calls together in one assistant message, or apart in two (:attr:`Spelling.apart`,
  Mistral's MI-5: then the core neither merges a text fragment with the calls after it nor
  emits one message holding both);
* call ids in the provider's style, unique across the conversation where it must be
  (:meth:`Spelling.new_id`), the same id written on the call and on its result;
* the ``name`` of the function a tool message answers (:attr:`Spelling.response_name`);
* the shape of each message (:meth:`Spelling.shape`): content parts typed, blank text parts
  dropped, text parts flattened to one string, a part that is not text replaced where only
  a string is accepted, reasoning fields stripped or padded, ``tool_calls`` off messages
  that are not the assistant's, names sanitized.

Because the core applies the provider's encoding in the same pass as its repairs, nothing
is encoded one way and then decoded back: ``""`` next to calls is written as the provider
wants it at once, object arguments stay objects for Ollama, a Mistral turn is never merged
to be split again. A record means a change from the input, and repairing a repaired
history records nothing.

Parts that are not text
-----------------------
A part is text when its type is a text type, or when it has no type but a ``"text"`` key
(``_content.is_text_kind``); anything else (an image, audio, a file, an untyped
``{"image_url": ...}``) is never flattened away. Where the profile only prefers strings
(``content_form="string"``) a list that holds such a part stays a list: nothing is lost.
Where the provider *rejects* a list (``content.string_only``: DeepSeek and Groq tool
results, every Ollama message) the part cannot be sent at all, so it is replaced by a short
text placeholder (``Profile.placeholder_part``, naming its type) and kept whole in the
note's ``dropped``. That is the least lossy repair that the provider accepts: moving the
part into a user message after the tool block would add a turn the conversation never had,
and the same providers reject images there too (DeepSeek's API is text-only, Ollama's
``content`` is a string everywhere), so the part would still have to go. Several text parts
where one is allowed (``content.single_text``, xAI) are joined into the first one; the
other parts stay in place.

Ids unique across the conversation without remembering ids
----------------------------------------------------------
Every call the core emits gets a running number ``n`` (0, 1, 2, ... in output order). The
new id is a function of ``n`` (and, for readable styles, of the original id) built so that
two different ``n`` can never give the same id:

* ``mistral9``: ``n`` mapped by an affine bijection of ``[0, 62**9)`` (multiply by a
  constant coprime to 62, add a constant, modulo ``62**9``) and written as 9 base-62 digits.
  Injective, so unique for the first 1.35e16 calls of a conversation; it looks like the
  random 9-character ids Mistral's models produce.
* ``unique``: the original id + ``_`` + ``n`` in base 62. Base 62 has no ``_``, so the text
  after the last ``_`` *is* ``n``: two equal ids would have equal ``n``. An id that already
  ends in ``_<n>`` for its own ``n`` is kept as is.
* ``anthropic64``: a valid id (``^[a-zA-Z0-9_-]{1,64}$``) that the conversation has not used
  yet is kept as it is: rewriting valid ids only churns the prompt-cache prefix. Any other id
  is numbered as ``unique`` (sanitized, cut to fit 64 characters), and checked against the
  ids kept so far. This style remembers the ids it gave, at most :data:`MAX_KEPT_IDS`; past
  that every id is numbered.
* ``openai40`` / ``responses64``: only a too-long id is rewritten (``call_`` + a hash); ids
  need not be unique across turns there, and a clash inside the turn is numbered away.

Because the new id depends only on the call's position, repairing a repaired history gives
the same ids (idempotence).
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, Container, Mapping
from typing import TYPE_CHECKING, Any, Final

from .._content import (
    ANTHROPIC_ID,
    NAME_PATTERN,
    NOT_ID_CHAR,
    OPAQUE_KEYS,
    REASONING_KEYS,
    REASONING_PART_TYPES,
    FieldTable,
    drop_unknown_fields,
    field_table,
    has_text,
    has_unknown_fields,
    is_blank_part,
    is_text_part,
    join_text,
    known_fields,
    part_kind,
    text_of,
)
from .._json import JSONDecodeError, loads
from ._arguments import close_json, repeats_a_call
from .._note import Note
from .rules import plan_for

if TYPE_CHECKING:
    from ._profiles import Profile

__all__ = ["Spelling", "CoreSpelling", "mistral_id", "base62", "close_json"]

Message = dict[str, Any]

# Final: constants to the compiled build (mypyc), not a module dict's lookups.
_ALPHABET: Final = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_SPACE: Final = 62**9
# Odd and not a multiple of 31, so coprime to 62**9 = 2**9 * 31**9: n -> n*A+B is a bijection.
_A: Final = 0x9E3779B97F4A7C15 % _SPACE | 1
_B: Final = 0x2545F4914F6CDD1D % _SPACE
assert _A % 31 and _A % 2
_ALL_ROLES: Final = ("system", "user", "assistant", "tool")
#: The keys whose presence lets :meth:`Spelling._drop_opaque` change a message.
_OPAQUE_TRIGGERS: Final = frozenset((*OPAQUE_KEYS, "finish_reason"))
#: ``anthropic64``: ids remembered to keep valid ones unchanged and unique (a few MB at most).
#: Past it every new id is numbered (unique by construction, see :meth:`Spelling._anthropic_id`).
MAX_KEPT_IDS = 100_000


#: Every two-digit base-62 string, at its value: base62 takes two digits per division
#: (a Mistral id is 9 digits, written for every call a Mistral history carries).
_PAIRS: Final = [a + b for a in _ALPHABET for b in _ALPHABET]


def base62(n: int, width: int = 0) -> str:
    """``n`` (>= 0) in base 62 (digits, upper, lower), left-padded with ``0`` to ``width``."""
    if n < 62:
        text = _ALPHABET[n]
    else:
        chunks = []
        while n >= 3844:
            n, r = divmod(n, 3844)
            chunks.append(_PAIRS[r])
        chunks.append(_PAIRS[n] if n >= 62 else _ALPHABET[n])
        text = "".join(reversed(chunks))
    return text.rjust(width, "0")


#: 62**4: a value below 62**9 is one digit and two groups of four (each two pairs).
_QUAD: Final = 3844 * 3844


def mistral_id(n: int) -> str:
    """The ``n``-th call id of a conversation in Mistral's format: 9 alphanumerics, unique per n.

    ``base62(x, 9)`` unrolled: a Mistral history writes one for every call it carries, and
    the loop cost ~2 us an id; one division of the (two-digit) big int, then small ones."""
    high, low = divmod((n * _A + _B) % _SPACE, _QUAD)
    first, mid = divmod(high, _QUAD)  # first < 62
    # (one f-string, not four concatenations: one string built, not four)
    return f"{_ALPHABET[first]}{_PAIRS[mid // 3844]}{_PAIRS[mid % 3844]}{_PAIRS[low // 3844]}{_PAIRS[low % 3844]}"


class Spelling:
    """One provider's spelling of each message: the profile's encoding choices, read by the
    core when it emits (module docstring). Not ``formats.Encoder``, which writes finished
    messages as bytes in a file format.

    ``shapes`` is False when :meth:`shape` would return every message unchanged (the core
    then never calls it); ``rewrites_ids`` likewise for :meth:`new_id`.
    """

    # Slots, as the core's Normalizer: read on every message a profile shapes, and at 28 attributes
    # one more would pass the 30 keys an instance dict shares (CPython's slow path).
    __slots__ = ('_content', '_developer_to_system', '_exempt', '_fields', '_flatten', '_known', '_names',
        '_nonempty', '_null_to_empty', '_part_types', '_seen_ids', '_single_text', '_string_roles',
        '_strip_calls', '_strip_reasoning', '_text_roles', '_unknown', 'apart', 'id_style',
        'keeps_opaque', 'object_arguments', 'pad_reasoning', 'profile', 'renames_speakers',
        'repairs_arguments', 'response_name', 'rewrites_ids', 'shapes', 'single_call', 'distinct_calls', 'tool_only',
        '_steps',
        'core')

    def __init__(self, profile: Profile) -> None:
        p = self.profile = profile
        # What the profile's rules switch on (rules/: each rule's repair()), compiled once per
        # set of rules; the encoding settings are the profile's own fields.
        plan = plan_for(p.active_rules())
        #: Content of a tool-only assistant message: "null", "empty" ("") or "omit".
        self.tool_only: str = "null" if p.tool_only_content == "keep" else p.tool_only_content
        #: Call arguments as objects (Ollama native), not JSON strings.
        self.object_arguments = p.arguments == "object"
        #: Text and calls in two assistant messages, never one (MI-5).
        self.apart = plan.apart
        #: A tool message carries the name of the function it answers.
        self.response_name = plan.response_name
        #: Thinking mode: assistant messages carry ``reasoning_content`` (padded with "").
        self.pad_reasoning = p.requires_reasoning()
        self.id_style = p.id_style
        self._seen_ids: set[str] = set()  # anthropic64: the ids given so far (at most MAX_KEPT_IDS)
        self.rewrites_ids = p.id_style != "keep"
        self._strip_reasoning = p.reasoning == "strip"
        self._nonempty = plan.nonempty
        self._null_to_empty = plan.null_to_empty
        self._names = plan.names
        self._part_types = plan.part_types
        self._strip_calls = plan.strip_calls
        self._flatten = p.content_form == "string"
        self._single_text = plan.single_text
        # Roles whose content must be a string (content.string_only): there a part that is
        # not text cannot stay (see "Parts that are not text" in the module docstring).
        self._string_roles = plan.string_roles
        # Roles whose content must be text (content.text_only, OpenAI's tool messages): a list
        # of text parts is fine there, a part that is not text is replaced as above.
        self._text_roles = plan.text_roles
        self._content = (self._part_types or self._nonempty or self._single_text or self._flatten
                         or self._null_to_empty or bool(self._string_roles) or bool(self._text_roles))
        #: A ``developer`` message is written as ``system`` (templates and converters that know no
        #: developer role).
        self._developer_to_system = plan.developer_to_system
        #: Call arguments that do not parse as JSON (truncated) are repaired (:meth:`repair_arguments`).
        self.repairs_arguments = plan.repairs_arguments
        #: One call per assistant message: a parallel turn is sent as call/result rounds (the core).
        self.single_call = plan.single_call
        #: A turn with two alike calls is sent as call/result rounds too (GM-12).
        self.distinct_calls = plan.distinct_calls
        #: Opaque continuation state (Codex interim items, ``finish_reason: "incomplete"``) is
        #: replayed as stored; a profile for a provider it means nothing to drops it instead.
        self.keeps_opaque = p.opaque == "keep"
        # fields.unknown: fields the provider does not know are removed (kept whole in the
        # note); the reasoning fields follow the reasoning policy instead.
        self._unknown = plan.unknown_fields
        self._exempt = known_reasoning(p)
        # The fields the provider knows: the table its fields.unknown rule names (Rule.fields;
        # with several such rules, what every one of them knows).
        tables = field_tables(p)
        self._fields: FieldTable = _table(tables)
        # Per event: the fields that pass fields.unknown (the known ones and the exempt ones).
        self._known = _known_by_event(tables, self._exempt)  # (shared by every encoder alike: read only)
        #: The output names a user's or an assistant's speaker otherwise than the input does:
        #: sanitized (content.name_pattern), or not at all (the provider knows no ``name`` there:
        #: fields.unknown, Mistral). The core then tells speakers apart by :meth:`speaker`.
        self.renames_speakers = self._names or (self._unknown and not (
            "name" in self._known["user"] and "name" in self._known["assistant"]))
        # Rules whose repair is a step of their own (Plan.message_steps): none built in.
        self._steps = plan.message_steps
        self.shapes = (self._content or self._names or self._strip_calls or self._strip_reasoning
                       or self.pad_reasoning or not self.keeps_opaque or self._developer_to_system
                       or self._unknown or bool(self._steps))
        #: What the core needs to know of this spelling, derived once (:class:`CoreSpelling`).
        self.core = CoreSpelling(self)

    # ------------------------------------------------------------------ one message

    def speaker(self, message: Message, role: str) -> Any:
        """Who speaks ``message`` (a user or an assistant message) as the provider will read
        it: its ``name`` as :meth:`shape` writes it -- sanitized where it must match
        ``NAME_PATTERN``, None where the provider knows no ``name`` (it is removed). Messages
        the output cannot tell apart are one speaker's: a second pass would merge them."""
        name = message.get("name")
        if name is None or (self._unknown and "name" not in self._known[role]):
            return None
        if self._names and isinstance(name, str) and not NAME_PATTERN.match(name):
            return _sanitized(name)
        return name

    def shape(self, message: Message, role: str, inputs: list[int], notes: list[Note]) -> Message:
        """``message`` (of the event ``role``) in the provider's shape: a copy if anything
        changed (each change a note in ``notes``), else the message itself.

        This runs for every message a shaping profile emits, and almost every message needs
        nothing: each step is guarded by a cheap test that holds whenever the step would
        change something (a key it acts on is there, a value it rewrites could be there),
        so a message already in shape costs a few dict lookups and set tests."""
        m = message
        if role == "system" and self._developer_to_system and m.get("role") == "developer":
            notes.append(Note("developer_to_system", f"a developer message is sent as a system message: "
                              f"{self.profile.name} has no developer role", inputs, {"role": "developer"}))
            m = {**m, "role": "system"}
        if role != "assistant" and self._strip_calls and "tool_calls" in m:
            notes.append(Note("strip_tool_calls", f"removed 'tool_calls' from a {role} message", inputs,
                              {"tool_calls": m["tool_calls"]}))
            m = {k: v for k, v in m.items() if k != "tool_calls"}
        if self._names and role != "tool" and "name" in m:
            name = m["name"]
            if isinstance(name, str) and not NAME_PATTERN.match(name):
                fixed = _sanitized(name)
                notes.append(Note("sanitize_name", f"name {repr(name)} became {repr(fixed)} (allowed: letters, digits, _ "
                                  "and -)", inputs, {"name": name}))
                m = {**m, "name": fixed}
        if role == "assistant":
            # Only a key it removes (or finish_reason) can make _drop_opaque change anything.
            if not self.keeps_opaque and not m.keys().isdisjoint(_OPAQUE_TRIGGERS):
                m = self._drop_opaque(m, inputs, notes)
            if self._strip_reasoning and isinstance(m.get("content"), list):
                m = self._strip_reasoning_parts(m, inputs, notes)
        if self._content:
            content = m.get("content")
            # Non-blank text is in every profile's shape: no step of _shape_content touches it
            # (it reshapes lists, blank text and null only); nor null next to tool calls, the
            # tool-only content the core wrote (content.null is about null without calls).
            if not (type(content) is str and content and not content.isspace()) and not (
                content is None and role == "assistant" and m.get("tool_calls")
            ):
                m = self._shape_content(m, role, inputs, notes)
        if role == "assistant" and (
            (self._strip_reasoning and not m.keys().isdisjoint(REASONING_KEYS))
            or (self.pad_reasoning and m.get("reasoning_content") is None)
        ):
            m = self._shape_reasoning(m, inputs, notes)
        if self._steps:
            for step in self._steps:
                m = step(m, role, self.profile, inputs, notes)
        # (has_unknown_fields, its top-level test inlined: a call saved on most messages)
        if self._unknown and (not m.keys() <= self._known[role] or (
            role == "assistant" and "tool_calls" in m and has_unknown_fields(m, role, self._known[role], self._fields)
        )):
            # Last, so whatever copy a step above made is removed from, not copied again
            # (mistral: a stored assistant turn loses its reasoning and its source fields).
            m = self._drop_unknown(m, role, inputs, notes, m is not message)
        return m

    def _drop_opaque(self, m: Message, inputs: list[int], notes: list[Note]) -> Message:
        removed: dict[str, Any] = {k: m[k] for k in OPAQUE_KEYS if k in m}
        if m.get("finish_reason") == "incomplete":
            removed["finish_reason"] = "incomplete"
        if not removed:
            return m
        notes.append(Note("drop_opaque_state", lambda: f"removed {', '.join(removed)}: opaque OpenAI continuation "
                          f"state that {self.profile.name} cannot replay (the turn is sent as plain text and calls)",
                          inputs, removed))
        return {k: v for k, v in m.items() if k not in removed}

    def _strip_reasoning_parts(self, m: Message, inputs: list[int], notes: list[Note]) -> Message:
        """Reasoning stored as content parts (``thinking``, ``redacted_thinking``, ``reasoning``)
        goes where the reasoning fields go when the profile strips them: out, kept in the note."""
        content = m["content"]
        removed = [p for p in content if isinstance(p, Mapping) and p.get("type") in REASONING_PART_TYPES]
        if not removed:
            return m
        notes.append(Note("strip_reasoning", lambda: f"removed {len(removed)} reasoning part(s) from the content: "
                          f"{self.profile.name} does not accept reasoning in the history", inputs, removed))
        return {**m, "content": [p for p in content if not (isinstance(p, Mapping)
                                                             and p.get("type") in REASONING_PART_TYPES)]}

    def _drop_unknown(
        self, m: Message, role: str, inputs: list[int], notes: list[Note], owned: bool = False
    ) -> Message:
        """fields.unknown: the message without the fields the provider rejects; each removed
        value kept whole in the note, under its path (in the message's order). ``owned``:
        ``m`` is shape's own copy, changed in place (``drop_unknown_fields``)."""
        out, removed = drop_unknown_fields(m, role, self._exempt, table=self._fields, owned=owned)
        if not removed:
            return m
        notes.append(Note("drop_unknown_fields", lambda: f"removed {', '.join(map(str, removed))}: "
                          f"{self.profile.name} rejects fields it does not know", inputs, removed))
        return out

    def _shape_content(self, m: Message, role: str, inputs: list[int], notes: list[Note]) -> Message:
        """Part types, blank parts, flattening, null content (copy on write)."""
        content = m.get("content")
        new: Any = content
        if isinstance(content, list):
            if self._part_types and any(
                not (type(p) is dict or isinstance(p, Mapping)) or "type" not in p for p in content
            ):
                typed = [_typed(p) for p in content]
                # Only a string or an object can get a type; a part such as 5 or null stays as
                # it is, and a record must mean a change (check still flags that part).
                if any(t is not p for t, p in zip(typed, content)):
                    new = typed
                    notes.append(Note("add_part_type", "gave content parts without a 'type' the type 'text'",
                                      inputs, None))
            if self._nonempty:
                kept = [p for p in new if not is_blank_part(p)]
                if len(kept) != len(new):
                    notes.append(Note("drop_empty_text_part", f"dropped {len(new) - len(kept)} empty or whitespace "
                                      "text part(s)", inputs, [p for p in new if is_blank_part(p)]))
                    new = kept
            if self._single_text:
                new = self._one_text_part(new, inputs, notes)
            if all(is_text_part(p) for p in new):
                if self._flatten or role in self._string_roles:
                    new = join_text([text_of(p) for p in new])
                    notes.append(Note("flatten_content", "content parts (text only) sent as one string, joined "
                                      "with newlines", inputs, None))
            elif role in self._string_roles or role in self._text_roles:
                new = self._text_only(new, role, inputs, notes)
        elif isinstance(content, str) and self._nonempty and content and not content.strip() and role != "user":
            new = ""
            notes.append(Note("drop_whitespace_text", "whitespace-only content became ''", inputs,
                              {"content": content}))
        calls = role == "assistant" and bool(m.get("tool_calls"))
        if new is None and self._null_to_empty and not calls:
            new = ""
            notes.append(Note("null_content_to_empty", "content null became '' (null only fits an assistant "
                              "message with tool calls)", inputs, None))
        if role == "user" and self._nonempty and not has_text(new):
            notes.append(Note("placeholder_content", f"empty user content became {self.profile.placeholder_user!r}",
                              inputs, {"content": content}))
            new = self.profile.placeholder_user
        if new is content and ("content" in m or new is None):
            return m
        return {**m, "content": new}

    def _one_text_part(self, parts: list[Any], inputs: list[int], notes: list[Note]) -> list[Any]:
        """content.single_text: the text parts joined into the first one, other parts kept in place."""
        at = [i for i, part in enumerate(parts) if is_text_part(part)]
        if len(at) < 2:
            return parts
        text = join_text([text_of(parts[i]) for i in at])
        first = parts[at[0]]
        joined = {**first, "text": text} if isinstance(first, Mapping) else {"type": "text", "text": text}
        rest = set(at[1:])
        notes.append(Note("join_text_parts", f"{len(at)} text parts joined into one: {self.profile.name} accepts a "
                          "single text element per message (the other parts stay where they were)", inputs,
                          [parts[i] for i in at[1:]]))
        return [joined if i == at[0] else part for i, part in enumerate(parts) if i not in rest]

    def _text_only(self, parts: list[Any], role: str, inputs: list[int], notes: list[Note]) -> str:
        """content.string_only with a part that is not text: see the module docstring."""
        pieces: list[str] = []
        run: list[str] = []
        removed: list[Any] = []
        for part in parts:
            if is_text_part(part):
                run.append(text_of(part))
                continue
            removed.append(part)
            if run and join_text(run):
                pieces.append(join_text(run))
            run = []
            pieces.append(self.profile.placeholder_part.replace("{kind}", part_kind(part))
                          .replace("{profile}", self.profile.name))
        if run and join_text(run):
            pieces.append(join_text(run))
        notes.append(Note(
            "replace_non_text_part",
            f"{len(removed)} part(s) that are not text ({', '.join(part_kind(p) for p in removed)}) replaced by a "
            f"text placeholder: {self.profile.name} accepts only "
            f"{'a string' if role in self._string_roles else 'text'} as the content of a {role} message "
            "(the parts are kept whole here)",
            inputs, removed,
        ))
        return "\n".join(pieces)

    def _shape_reasoning(self, m: Message, inputs: list[int], notes: list[Note]) -> Message:
        if self._strip_reasoning:
            removed = {k: m[k] for k in REASONING_KEYS if k in m}
            if removed:
                notes.append(Note("strip_reasoning", lambda: f"removed {', '.join(removed)}: {self.profile.name} "
                                  "rejects reasoning fields in the history", inputs, removed))
                m = {k: v for k, v in m.items() if k not in removed}
        if self.pad_reasoning and m.get("reasoning_content") is None:
            real = m.get("reasoning")
            if isinstance(real, str) and real.strip():
                m = {**m, "reasoning_content": real}
                notes.append(Note("restore_reasoning", "reasoning_content restored from 'reasoning'", inputs, None))
            else:
                m = {**m, "reasoning_content": ""}
                notes.append(Note("pad_reasoning", "added reasoning_content: '' (thinking mode requires the field "
                                  "on assistant messages; the real reasoning was not stored)", inputs, None))
        return m

    def _anthropic_id(self, text: str, n: int) -> str:
        """``anthropic64``: a valid id not used before in the conversation is kept as it is
        (rewriting it would only churn the prompt-cache prefix); any other becomes
        ``<sanitized original>_<n in base 62>``, checked against the ids kept so far."""
        seen = self._seen_ids
        room = len(seen) < MAX_KEPT_IDS
        if ANTHROPIC_ID.match(text) and text not in seen and room:
            seen.add(text)
            return text
        tag = base62(n)
        base = NOT_ID_CHAR.sub("_", text)[: 64 - 1 - len(tag)] or "call"
        candidate = f"{base}_{tag}"
        k = 0
        # Numbered ids never clash with one another (the text after the last "_" is n, and
        # base 62 has no "_"); only a kept id can equal one. Past MAX_KEPT_IDS no more ids are
        # kept, so the set still holds every id a numbered one could clash with.
        while candidate in seen:
            candidate = f"call{k}_{tag}"
            k += 1
        if room:
            seen.add(candidate)
        return candidate

    # ------------------------------------------------------------------ arguments

    def repair_arguments(self, arguments: str) -> str | None:
        """Arguments that do not parse as JSON, repaired (``tool.arguments_valid_json``): the
        JSON text closed where it was cut off (see :func:`close_json`), else ``"{}"``; None
        when they parse already."""
        try:
            loads(arguments)  # (not orjson's: it refuses an integer of 309 digits or more, valid JSON)
            return None
        except JSONDecodeError:
            pass
        closed = close_json(arguments)
        return closed if closed is not None else "{}"

    # ------------------------------------------------------------------ ids

    def new_id(self, old: Any, n: int, taken: Container[str]) -> Any:
        """The id of the conversation's ``n``-th call (0-based, output order) in the profile's
        style; ``taken``: the new ids already given in this turn."""
        style = self.id_style
        text = old if isinstance(old, str) else ""
        if style == "mistral9":
            return mistral_id(n)
        if style == "anthropic64":
            return self._anthropic_id(text, n)
        if style == "unique":
            tag = base62(n)
            head, sep, tail = text.rpartition("_")
            if sep and tail == tag and (style == "unique" or ANTHROPIC_ID.match(text)):
                return text  # already this call's canonical id
            base = text if style == "unique" else NOT_ID_CHAR.sub("_", text)[: 64 - 1 - len(tag)]
            return f"{base or 'call'}_{tag}"
        if style in ("openai40", "responses64"):
            limit = 40 if style == "openai40" else 64
            if text and len(text) <= limit:
                return text
            candidate = base = "call_" + hashlib.sha256(text.encode()).hexdigest()[:24]
            k = 1
            while candidate in taken:  # clash inside the turn
                k += 1
                candidate = f"{base}_{k}"
            return candidate
        return old


class CoreSpelling:
    """What the core (``_core.TableActions``) needs to know of a :class:`Spelling`, in the
    core's terms, derived here once beside the flags it comes from (the core binds these
    to its own slots: read per message, they are one attribute away). A value: its fields
    are Final, as ``_core._held.Pending``'s."""

    __slots__ = ("shapes", "rewrites_ids", "object_arguments", "repair_arguments", "apart", "single_call", "rounds_for",
                 "speaker", "tool_only_null", "keeps_opaque", "encodes_results")

    def __init__(self, spelling: Spelling) -> None:
        #: :meth:`Spelling.shape` may change a message (False: the core never calls it).
        self.shapes: Final = spelling.shapes
        #: :meth:`Spelling.new_id` may change an id (False: the core never calls it).
        self.rewrites_ids: Final = spelling.rewrites_ids
        #: Call arguments are written as objects: they take the core's slow path.
        self.object_arguments: Final = spelling.object_arguments
        #: Arguments that must parse are repaired with this (None: they are left as they are).
        self.repair_arguments: Final[Callable[[str], str | None] | None] = (
            spelling.repair_arguments if spelling.repairs_arguments else None)
        #: A turn holding text and calls is emitted as two messages (MI-5).
        self.apart: Final = spelling.apart
        #: A turn with parallel calls is emitted as call/result rounds (JT-4).
        self.single_call: Final = spelling.single_call
        #: A turn whose calls this finds alike is emitted as rounds too (GM-12; None: never).
        self.rounds_for: Final[Callable[[list[Any]], bool] | None] = (
            repeats_a_call if spelling.distinct_calls else None)
        #: Speakers as the output names them (None: as the input does, the names kept): names
        #: the provider does not know or that are sanitized tell no one apart once written.
        self.speaker: Final[Callable[[Message, str], Any] | None] = (
            spelling.speaker if spelling.renames_speakers else None)
        #: The content of a tool-only turn is null, as the core writes it (None stays None).
        self.tool_only_null: Final = spelling.tool_only == "null"
        #: Opaque continuation state (Codex interims) is kept: means something to OpenAI only.
        self.keeps_opaque: Final = spelling.keeps_opaque
        #: A held result is written with a shape, a new id or a function name (False: as it is).
        self.encodes_results: Final = spelling.shapes or spelling.rewrites_ids or spelling.response_name


def _sanitized(name: str) -> str:
    """A ``name`` that does not match ``NAME_PATTERN``, as the provider is sent it (the one
    rule for :meth:`Spelling.shape`, which writes it, and :meth:`Spelling.speaker`)."""
    return NOT_ID_CHAR.sub("_", name) or "_"


def known_reasoning(profile: Profile) -> tuple[str, ...]:
    """The reasoning fields exempt from fields.unknown: ``reasoning_content`` when the profile
    sends it (thinking mode), all of them when another rule strips them (Groq's GQ-1)."""
    if plan_for(profile.active_rules()).exempt_all_reasoning:
        return REASONING_KEYS
    return ("reasoning_content",) if profile.requires_reasoning() else ()


def field_tables(profile: Profile) -> tuple[str, ...]:
    """The names of the field tables (``_content.FIELD_TABLES``) that the profile's
    ``fields.unknown`` rules name, sorted; ``("chat",)`` when it has none."""
    return tuple(sorted(plan_for(profile.active_rules()).field_tables)) or ("chat",)


@functools.lru_cache(maxsize=64)
def _table(tables: tuple[str, ...]) -> FieldTable:
    return field_table(tables)  # (a profile with several tables: their intersection, made once)


@functools.lru_cache(maxsize=64)
def _known_by_event(tables: tuple[str, ...], exempt: tuple[str, ...]) -> dict[str, frozenset[str]]:
    """Per event, the fields that pass fields.unknown (the known ones and ``exempt``)."""
    table = _table(tables)
    return {role: known_fields(role, exempt, table) for role in _ALL_ROLES}


def _typed(part: Any) -> Any:
    if isinstance(part, str):
        return {"type": "text", "text": part}
    if isinstance(part, Mapping) and "type" not in part:
        return {**part, "type": "text" if "text" in part else "image_url" if "image_url" in part else "text"}
    return part
