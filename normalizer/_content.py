"""The shared vocabulary: what a message's content *is*, in one place.

The core (``_core.py``), the profiles' encoder and stage (``profiles/_shape.py``,
``profiles/_stage.py``) and the checker (``profiles/_check.py``) all ask the same questions
of a message -- is there text worth sending? is this part text? is this turn opaque state
that must be replayed as stored? how do two contents join? -- and must answer them the
same way, or repair and check drift apart (``check(repair(x))`` would not be empty). So the
answers live here, and nowhere else:

* roles and the event each dispatches as (:data:`EVENT_OF_ROLE`);
* key tuples (:data:`TEXT_PART_TYPES`, :data:`SUBSTANCE_KEYS`, :data:`REASONING_TEXT_KEYS`,
  :data:`REASONING_KEYS`);
* content predicates (:func:`has_text`, :func:`is_blank`, :func:`is_text_part`,
  :func:`is_blank_part`, :func:`is_opaque`) and the join of two contents (:func:`join`,
  folded in linear time by :class:`Fold`, and :func:`merge` of two messages);
* id and name patterns (:data:`NAME_PATTERN`, :data:`ANTHROPIC_ID`, :data:`MISTRAL_ID`);
* the fields a strict provider knows (:class:`FieldTable`: :data:`CHAT_FIELDS`,
  :data:`MISTRAL_FIELDS`), which the encoder removes and the checker reports alike
  (``fields.unknown``).

Everything here is pure (no state, no I/O) and imports nothing of the package: every other
module may import it, so it can never be part of an import cycle.
"""

from __future__ import annotations

import re
from collections.abc import Container, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

__all__ = [
    "Message",
    "EVENT_OF_ROLE",
    "TEXT_PART_TYPES",
    "SUBSTANCE_KEYS",
    "REASONING_TEXT_KEYS",
    "REASONING_KEYS",
    "REASONING_REPLAY_KEYS",
    "THINKING_BLOCKS_KEY",
    "REASONING_ITEMS_KEY",
    "THOUGHT_PARTS_KEY",
    "REASONING_PART_TYPES",
    "OPAQUE_KEYS",
    "FieldTable",
    "CHAT_FIELDS",
    "MISTRAL_FIELDS",
    "FIELD_TABLES",
    "field_table",
    "unknown_fields",
    "drop_unknown_fields",
    "known_fields",
    "has_unknown_fields",
    "NAME_PATTERN",
    "NOT_ID_CHAR",
    "ANTHROPIC_ID",
    "MISTRAL_ID",
    "has_text",
    "is_blank",
    "is_opaque",
    "is_text_part",
    "is_blank_part",
    "text_of",
    "part_kind",
    "join",
    "join_text",
    "joinable",
    "merge",
    "Fold",
    "Conflict",
    "unfold",
    "is_text_kind",
]

Message = dict[str, Any]

#: The event each role dispatches as in the state table (``developer`` is a system message).
EVENT_OF_ROLE: Final[dict[str, str]] = {
    "system": "system",
    "developer": "system",
    "user": "user",
    "assistant": "assistant",
    "tool": "tool",
}

#: Content parts that carry text (Chat, Responses input and output spellings).
TEXT_PART_TYPES: Final = ("text", "input_text", "output_text")
#: Keys whose presence makes an assistant message worth sending even with no text or calls.
SUBSTANCE_KEYS: Final = ("refusal", "function_call", "audio")
#: Reasoning text: joined like content when fragments merge; not substance on its own.
REASONING_TEXT_KEYS: Final = ("reasoning_content", "reasoning")
#: The keys a reader keeps a turn's reasoning in whole, for a writer of its format to replay:
#: Anthropic's thinking blocks (LiteLLM's key), Responses' reasoning items, Gemini's thought
#: parts. Not Chat Completions keys: a profile that strips reasoning strips them too.
THINKING_BLOCKS_KEY: Final = "thinking_blocks"
REASONING_ITEMS_KEY: Final = "reasoning_items"
THOUGHT_PARTS_KEY: Final = "thought_parts"
REASONING_REPLAY_KEYS: Final = (THINKING_BLOCKS_KEY, REASONING_ITEMS_KEY, THOUGHT_PARTS_KEY)
#: Every reasoning field a provider may reject (Groq) or a template may choke on.
REASONING_KEYS: Final = ("reasoning_content", "reasoning", "reasoning_details", *REASONING_REPLAY_KEYS)
#: Content parts that hold reasoning (Anthropic's thinking blocks, Responses' reasoning items).
REASONING_PART_TYPES: Final = ("thinking", "redacted_thinking", "reasoning")

@dataclass(frozen=True, slots=True)
class FieldTable:
    """The fields a provider that validates fields strictly knows (``fields.unknown``):
    anything else -- a source format's metadata, a framework's own keys -- is rejected there.
    Reasoning fields are unknown too, unless the profile sends them (``exempt=`` below)."""

    messages: dict[str, frozenset[str]]
    """Per event (``developer`` is a system message), the message's own fields."""
    calls: frozenset[str]
    """The fields of one entry of an assistant message's ``tool_calls``."""
    functions: frozenset[str]
    """The fields of a call's ``function``."""


# ``extra_content`` carries Gemini's thought signatures.
_COMMON_FIELDS = ("role", "content", "name", "extra_content")
#: Chat Completions as Groq and Gemini's OpenAI-compatible endpoint read it.
CHAT_FIELDS: Final = FieldTable(
    messages={
        "system": frozenset(_COMMON_FIELDS),
        "user": frozenset(_COMMON_FIELDS),
        "assistant": frozenset((*_COMMON_FIELDS, "tool_calls", "refusal", "audio", "function_call", "prefix")),
        "tool": frozenset((*_COMMON_FIELDS, "tool_call_id")),
    },
    calls=frozenset(("id", "type", "function", "extra_content")),
    functions=frozenset(("name", "arguments")),
)
#: mistral-common's request models (1.13: ``SystemMessage``, ``UserMessage``,
#: ``AssistantMessage``, ``ToolMessage``, ``ToolCall``, ``FunctionCall``; all
#: ``extra="forbid"``), which La Plateforme validates a request's JSON with: ``name`` only
#: on a tool message (the function it answers), ``prefix`` only on an assistant message.
MISTRAL_FIELDS: Final = FieldTable(
    messages={
        "system": frozenset(("role", "content")),
        "user": frozenset(("role", "content")),
        "assistant": frozenset(("role", "content", "tool_calls", "prefix")),
        "tool": frozenset(("role", "content", "tool_call_id", "name")),
    },
    calls=frozenset(("id", "type", "function")),
    functions=frozenset(("name", "arguments")),
)
#: The field tables, by the name a ``fields.unknown`` rule gives (``Rule.fields``).
FIELD_TABLES: Final[dict[str, FieldTable]] = {"chat": CHAT_FIELDS, "mistral": MISTRAL_FIELDS}


def field_table(names: Iterable[str]) -> FieldTable:
    """The fields that every table of ``names`` knows (several ``fields.unknown`` rules in
    one profile: a field passes only if each of them lets it pass)."""
    tables = [FIELD_TABLES[name] for name in names]
    if len(tables) == 1:
        return tables[0]
    if not tables:
        return CHAT_FIELDS
    first, rest = tables[0], tables[1:]
    return FieldTable(
        messages={event: first.messages[event].intersection(*(t.messages[event] for t in rest))
                  for event in first.messages},
        calls=first.calls.intersection(*(t.calls for t in rest)),
        functions=first.functions.intersection(*(t.functions for t in rest)),
    )


def known_fields(event: str, exempt: Iterable[str] = (), table: FieldTable = CHAT_FIELDS) -> frozenset[str]:
    """The message fields ``table`` knows for the event ``event``, with ``exempt`` (as
    :func:`unknown_fields` takes it): the ``known`` of :func:`has_unknown_fields`."""
    return table.messages[event] | frozenset(exempt)


def has_unknown_fields(
    message: Mapping[str, Any], event: str, known: frozenset[str], table: FieldTable = CHAT_FIELDS
) -> bool:
    """``bool(unknown_fields(message, event, exempt, table=table))`` for ``known =
    known_fields(event, exempt, table)``, without building a path: almost every message has
    only known fields, and a set inclusion per dict says so in one C call (the encoder asks
    this of every message a ``fields.unknown`` profile emits; :func:`unknown_fields` runs
    only when it is True)."""
    if not message.keys() <= known:
        return True
    calls = message.get("tool_calls") if event == "assistant" else None
    if isinstance(calls, list):
        call_fields = table.calls
        function_fields = table.functions
        for call in calls:
            # (type() first: isinstance of the Mapping ABC costs ~250 ns, of a dict ~30)
            if not (type(call) is dict or isinstance(call, Mapping)):
                continue
            if not call.keys() <= call_fields:
                return True
            function = call.get("function")
            if (type(function) is dict or isinstance(function, Mapping)) and not function.keys() <= function_fields:
                return True
    return False


def unknown_fields(
    message: Mapping[str, Any], event: str, exempt: Container[str] = (), *, table: FieldTable = CHAT_FIELDS
) -> list[str]:
    """The fields of ``message`` (of the event ``event``) that ``table`` does not know, as
    paths: ``"source_fields"``, ``"tool_calls.0.status"``, ``"tool_calls.0.function.strict"``.
    ``exempt``: message fields another rule governs (the reasoning fields a profile sends or
    strips on its own terms)."""
    known = table.messages[event]
    found = [k for k in message if k not in known and k not in exempt]
    calls = message.get("tool_calls") if event == "assistant" else None
    if isinstance(calls, list):
        for j, call in enumerate(calls):
            if not isinstance(call, Mapping):
                continue
            found += [f"tool_calls.{j}.{k}" for k in call if k not in table.calls]
            function = call.get("function")
            if isinstance(function, Mapping):
                found += [f"tool_calls.{j}.function.{k}" for k in function if k not in table.functions]
    return found


def drop_unknown_fields(
    message: Message, event: str, exempt: Container[str] = (), *, table: FieldTable = CHAT_FIELDS,
    owned: bool = False,
) -> tuple[Message, dict[Any, Any]]:
    """``message`` without the fields :func:`unknown_fields` names, and the removed values
    by those paths, in its order (top-level fields, then each call's own, then its
    function's). The message itself when none is there; else a copy, with a call (and its
    ``function``) copied only where something is removed from it.

    ``owned``: ``message`` is a copy the caller made and nobody else holds (an earlier
    step of ``Spelling.shape`` changed it): the fields are removed from it in place, so a
    message that two steps change is copied once, not twice. The result is the same dict
    either way (deleting keys keeps the order of the others)."""
    known = table.messages[event]
    call_fields = table.calls
    function_fields = table.functions
    removed: dict[Any, Any] = {}
    out: Message
    if owned:
        out = message
        for key in [k for k in message if k not in known and k not in exempt]:
            removed[key] = out.pop(key)
    else:
        out = {}
        for key, value in message.items():
            if key in known or key in exempt:
                out[key] = value
            else:
                removed[key] = value
    calls = message.get("tool_calls") if event == "assistant" else None
    if isinstance(calls, list):
        new_calls: list[Any] = []
        changed = False
        for j, call in enumerate(calls):
            if isinstance(call, Mapping):
                kept: dict[Any, Any] = {}
                for key, value in call.items():
                    if key in call_fields:
                        kept[key] = value
                    else:
                        removed[f"tool_calls.{j}.{key}"] = value
                function = call.get("function")
                if isinstance(function, Mapping) and not function.keys() <= function_fields:
                    kept_function = {}
                    for key, value in function.items():
                        if key in function_fields:
                            kept_function[key] = value
                        else:
                            removed[f"tool_calls.{j}.function.{key}"] = value
                    kept["function"] = kept_function  # (in place: "function" is a call field)
                elif len(kept) == len(call):
                    new_calls.append(call)  # nothing of this call is unknown: the call itself
                    continue
                changed = True
                call = kept
            new_calls.append(call)
        if changed:
            out["tool_calls"] = new_calls
    if not removed:
        return message, removed
    return out, removed


#: OpenAI's ``name`` pattern (and most providers' function-name pattern).
NAME_PATTERN = re.compile(r"^[a-zA-Z0-9_-]+$")
#: A character that may not appear in a ``NAME_PATTERN`` name or an Anthropic id.
NOT_ID_CHAR = re.compile(r"[^a-zA-Z0-9_-]")
#: Anthropic's ``tool_use.id``: ``^[a-zA-Z0-9_-]+$``, at most 64 characters.
ANTHROPIC_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
#: mistral-common's tool-call id: exactly 9 alphanumerics.
MISTRAL_ID = re.compile(r"^[a-zA-Z0-9]{9}$")


# ---------------------------------------------------------------------- predicates


#: Keys holding opaque continuation state (with ``finish_reason: "incomplete"``).
OPAQUE_KEYS: Final = ("codex_reasoning_items", "codex_message_items")


def is_opaque(message: Mapping[str, Any]) -> bool:
    """An assistant message carrying opaque continuation state (Codex interim turns,
    incomplete responses): replayed exactly as stored, never merged, dropped or edited."""
    # Spelled out (no loop), and `in` before any lookup: this runs for every assistant
    # message, and most have none of the three keys.
    return bool(
        ("finish_reason" in message and message["finish_reason"] == "incomplete")
        or ("codex_reasoning_items" in message and message["codex_reasoning_items"])
        or ("codex_message_items" in message and message["codex_message_items"])
    )


def has_text(content: Any) -> bool:
    """Content worth sending: non-blank text, or any part that is not text (an image...).

    A part is text when its type is a text type, or when it has no type but a ``"text"``
    key; an untyped ``{"image_url": ...}`` is an image. ``None`` and ``{}`` are nothing.
    """
    if isinstance(content, str):
        return bool(content.strip())
    if isinstance(content, list):
        for part in content:
            if isinstance(part, str):
                if part.strip():
                    return True
            elif type(part) is dict or isinstance(part, Mapping):
                kind = part.get("type")
                if kind in TEXT_PART_TYPES or (kind is None and "text" in part):
                    text = part.get("text")
                    if isinstance(text, str) and text.strip():
                        return True
                elif kind is not None or part:
                    return True  # an image, audio, file... part: content worth sending
            elif part is not None:
                return True
        return False
    return content is not None and content != {}


def is_blank(content: Any) -> bool:
    """``""`` / whitespace / ``[]`` / only empty text parts (None is not blank: it is absent)."""
    if isinstance(content, str):
        return not content.strip()
    if isinstance(content, list):
        return not has_text(content)
    return False


def is_text_kind(part: Mapping[str, Any]) -> bool:
    """A part object of a text type, or with no type and a ``"text"`` key."""
    kind = part.get("type")
    return kind in TEXT_PART_TYPES or (kind is None and "text" in part)


def is_text_part(part: Any) -> bool:
    """A string, or a text part object whose ``text`` is a string (or absent)."""
    if isinstance(part, str):
        return True
    return ((type(part) is dict or isinstance(part, Mapping)) and is_text_kind(part)
            and isinstance(part.get("text", ""), str))


def is_blank_part(part: Any) -> bool:
    """A text part (string or object) with no non-whitespace text."""
    if isinstance(part, str):
        return not part.strip()
    if (type(part) is dict or isinstance(part, Mapping)) and is_text_kind(part):
        text = part.get("text")
        return not isinstance(text, str) or not text.strip()
    return False


def text_of(part: Any) -> str:
    """The text of a text part (see :func:`is_text_part`)."""
    return part if isinstance(part, str) else part.get("text") or ""


def part_kind(part: Any) -> str:
    """A short name for a part, for people: its type, else its first key, else its type name."""
    if isinstance(part, Mapping):
        kind = part.get("type")
        if isinstance(kind, str) and kind:
            return kind
        keys = [k for k in part if isinstance(k, str)]
        return keys[0] if keys else "empty"
    return type(part).__name__


# ---------------------------------------------------------------------- joining


def joinable(value: Any) -> bool:
    """A value :func:`join` can join: None, a string or a list of parts."""
    return value is None or type(value) is str or type(value) is list


def _as_parts(content: Any) -> list[Any]:
    if isinstance(content, list):
        return content
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content.strip() else []
    return []


def join(a: Any, b: Any) -> Any:
    """Join two contents: text with a newline, blank text skipped; a string meeting a list
    becomes a text part; lists concatenated. Folded over many values by :class:`Fold`."""
    if b is None:
        return a
    if a is None:
        return b
    if isinstance(a, str) and isinstance(b, str):
        if not b.strip():
            return a
        if not a.strip():
            return b
        return a + "\n" + b
    if is_blank(b) and not isinstance(b, list):
        return a
    joined = _as_parts(a) + _as_parts(b)
    return joined if joined else a


def join_text(texts: list[str]) -> str:
    """Texts as one string, as :func:`join` joins two: non-blank ones with a newline, blank
    ones skipped (all blank: the first, as :class:`Fold` keeps it). Flattening text parts
    and merging messages must join alike: ``["Hello", "World"]`` is ``"Hello\nWorld"``."""
    kept = [t for t in texts if t.strip()]
    if kept:
        return kept[0] if len(kept) == 1 else "\n".join(kept)
    return texts[0] if texts else ""


class Fold:
    """:func:`join` folded over one key's values, in linear time: equal to joining them one
    by one, but strings are collected and joined once, and parts go into one list of our
    own (never the input's) extended in place. ``a + "\\n" + b`` per fragment would copy
    the text so far each time: 4,000 fragments of 20 KB took minutes."""

    __slots__ = ("_texts", "_parts", "_checked", "_found")

    def __init__(self, first: Any) -> None:
        self._texts: list[str] | None = None  # text so far: "\n".join(_texts); only [0] may be blank
        self._parts: list[Any] | None = None  # once a list joined in: the parts so far
        self._checked = 0  # has_text(): how many parts were looked at, and what was found
        self._found = False
        self.add(first)

    def add(self, value: Any) -> None:
        if value is None:
            return
        parts = self._parts
        if parts is not None:
            if isinstance(value, str):
                if value.strip():
                    parts.append({"type": "text", "text": value})
            else:
                parts.extend(value)
            return
        texts = self._texts
        if texts is None:  # nothing yet (None so far)
            if isinstance(value, str):
                self._texts = [value]
            else:
                self._parts = list(value)
            return
        if isinstance(value, str):
            if value.strip():
                if texts[0].strip():
                    texts.append(value)
                else:
                    texts[0] = value  # blank text gives way to text
            return
        blank = not texts[0].strip()
        if blank and not value:
            return  # "" + []: nothing to join, the text stays
        self._parts = ([] if blank else [{"type": "text", "text": "\n".join(texts)}]) + value
        self._texts = None

    def value(self) -> Any:
        if self._parts is not None:
            return self._parts
        texts = self._texts
        if texts is None:
            return None
        return texts[0] if len(texts) == 1 else "\n".join(texts)

    def has_text(self) -> bool:
        """``has_text(self.value())``, without building it (each part looked at once)."""
        parts = self._parts
        if parts is None:
            return self._texts is not None and bool(self._texts[0].strip())
        if not self._found and self._checked < len(parts):
            self._found = has_text(parts[self._checked:])
            self._checked = len(parts)
        return self._found


@dataclass(frozen=True, slots=True)
class Conflict:
    """A value a merge overwrote."""

    key: str
    old: Any
    """The earlier value."""
    new: Any
    """The later value, the one kept."""


def merge(held: Message, new: Message, folds: dict[str, Fold], owned: set[str] | None = None) -> list[Conflict]:
    """Merge ``new`` into ``held`` **in place** (the caller owns ``held``); return the values
    ``new`` overwrote, to be recorded -- never silently lost.

    Text keys (``content`` and the reasoning text) are not joined here but collected in
    ``folds`` (key -> :class:`Fold`); :func:`unfold` writes them back once. ``role`` and
    ``tool_calls`` are left alone: the caller decides about calls. A key only ``new`` has is
    added; equal values and a later ``None`` change nothing; two lists concatenate (in
    place for a key in ``owned``, the caller's own lists); anything else: the later wins.
    """
    conflicts: list[Conflict] = []
    for key, value in new.items():
        if key == "tool_calls" or key == "role":
            continue
        fold = folds.get(key)
        if fold is not None:
            if joinable(value):
                fold.add(value)
                continue
            held[key] = folds.pop(key).value()  # a value that does not join: a conflict, below
        if key not in held:
            held[key] = value
            continue
        old = held[key]
        if (key == "content" or key in REASONING_TEXT_KEYS) and joinable(old) and joinable(value):
            folds[key] = fold = Fold(old)
            fold.add(value)
            continue
        if old == value or value is None:
            continue
        if isinstance(old, list) and isinstance(value, list):
            if owned is not None and key in owned:
                old.extend(value)
            else:
                held[key] = old + value
                if owned is not None:
                    owned.add(key)
            continue
        # The later value replaces the earlier one: the key holds the caller's object again,
        # no longer a list of ours to extend.
        held[key] = value
        if owned is not None:
            owned.discard(key)
        if old is not None:
            conflicts.append(Conflict(key, old, value))
    return conflicts


def unfold(message: Message, folds: dict[str, Fold]) -> Message:
    """Write the joined text keys into the (owned) merged message, in place."""
    for key, fold in folds.items():
        message[key] = fold.value()
    folds.clear()
    return message
