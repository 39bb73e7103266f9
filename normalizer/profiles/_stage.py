"""The profile stage: provider-specific repairs applied to the core's output, as a stream.

The core (``_core.py``) already leaves a history that every provider's *tool pairing* rules
accept: every call answered exactly once right after its turn, no orphans, no empty
assistant, no consecutive roles except different speakers (``name``) and opaque interims.
What is left differs per provider (providers.md §16), and is done here, in the order the
research recommends:

1. shape: strip fields the provider rejects (reasoning on Groq, ``tool_calls`` off
   assistant messages), add part types, drop empty/whitespace text parts, flatten text
   parts to a string, ``null`` content to ``""`` where only assistant tool turns may be null;
2. system handling: leading systems pass (or merge into one, or fold into the first user
   message); a system message in mid-history becomes user text;
3. tool-only assistant content encoding (``null`` / ``""`` / omitted);
4. id rewriting (below), the same map applied to the call and its result;
5. reasoning padding (``reasoning_content: ""``, DeepSeek/Kimi/GLM thinking mode);
6. boundaries: a leading user placeholder, a bridge assistant between a tool result and a
   user message (Mistral), merging same-role neighbours under strict alternation (a
   placeholder user between two assistants that must not merge), a trailing user
   placeholder (or ``prefix: true``) where a final assistant is forbidden, a user message
   when the history has none.

Parts that are not text
-----------------------
A part is text when its type is a text type, or when it has no type but a ``"text"`` key
(the core's rule, ``_core._has_text``); anything else (an image, audio, a file, an untyped
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

Repairs the stage undoes
------------------------
The core normalizes toward OpenAI's encoding (object arguments become a JSON string, ``""``
next to calls becomes ``null``); a profile that wants the other encoding (Ollama's object
arguments, ``""`` for a tool-only message) turns it back. When the stage restores exactly the
input's value it removes the core's note and makes none of its own, so repairing a repaired
history reports nothing. (The core encodes an object with orjson, which this decodes back to
an equal object for any JSON object; only a non-JSON Python object -- non-string keys, NaN --
would differ, and no history read from JSON has one.) Not covered: Mistral's split of text
and calls, which the core merges back (``merge_assistant``) before the stage splits it again;
the stage cannot tell its own split from two different fragments without the core's help.

Every change is a note on the message it concerns; every synthetic message carries a note
saying it is synthetic (its output index lands in the report); anything removed is kept
whole in the note's ``dropped``. A message the stage drops is returned as ``(None, notes)``
at once, so its notes are recorded (with no output index) and nothing waits. Input dicts
are never mutated: copy on write.

Memory (bounded, documented):

* the leading system messages, merged into one, until the first non-system message
  (``single`` and ``fold`` modes; at most :data:`MAX_LEADING_SYSTEMS` of them);
* one held message (a user or a tool-less assistant) while the next one may merge into it
  or decide that it was final (at most :data:`MAX_MERGED` merged messages);
* the current turn's id map (call ids of the last assistant message, which the core bounds)
  and a few counters.

Id rewriting, unique across the conversation without remembering ids
--------------------------------------------------------------------
Every call the stage sees gets a running number ``n`` (0, 1, 2, ... in output order). The
new id is a function of ``n`` (and, for readable styles, of the original id) built so that
two different ``n`` can never give the same id:

* ``mistral9``: ``n`` mapped by an affine bijection of ``[0, 62**9)`` (multiply by a
  constant coprime to 62, add a constant, modulo ``62**9``) and written as 9 base-62 digits.
  Injective, so unique for the first 1.35e16 calls of a conversation; it looks like the
  random 9-character ids Mistral's models produce.
* ``unique`` / ``anthropic64``: the original id (sanitized to ``[A-Za-z0-9_-]`` and cut so
  the whole fits in 64 characters for ``anthropic64``) + ``_`` + ``n`` in base 62. Base 62
  has no ``_``, so the text after the last ``_`` *is* ``n``: two equal ids would have equal
  ``n``. An id that already ends in ``_<n>`` for its own ``n`` is kept as is.
* ``openai40`` / ``responses64``: only a too-long id is rewritten (``call_`` + a hash); ids
  need not be unique across turns there, and a clash inside the turn is numbered away.

Because the new id depends only on the call's position, repairing a repaired history gives
the same ids (idempotence), and a result gets the same id as its call through the per-turn
map (the core puts results right after their turn).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import orjson

from ._rules import RULES
from .._content import (
    ANTHROPIC_ID,
    NAME_PATTERN,
    NOT_ID_CHAR,
    REASONING_KEYS,
    SUBSTANCE_KEYS,
    Conflict,
    Fold,
    has_text,
    is_blank_part,
    is_opaque,
    is_text_part,
    join,
    merge,
    part_kind,
    text_of,
    unfold,
)
from .._errors import LimitExceeded

if TYPE_CHECKING:
    from ._profiles import Profile

__all__ = ["ProfileStage", "MAX_LEADING_SYSTEMS", "MAX_MERGED", "mistral_id", "base62"]

Message = dict[str, Any]
Note = tuple[str, str, list[int], Any]
Out = list[tuple["Message | None", list[Note]]]  # None: a message the stage dropped (its notes say why)

#: Leading system messages held (merged) until the first non-system message. Real
#: histories have one to three; this only stops a hostile stream of system messages.
MAX_LEADING_SYSTEMS = 10_000
#: Messages merged into one held message under strict alternation (as the core's
#: ``max_turn_fragments``).
MAX_MERGED = 10_000

_ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_SPACE = 62**9
# Odd and not a multiple of 31, so coprime to 62**9 = 2**9 * 31**9: n -> n*A+B is a bijection.
_A = 0x9E3779B97F4A7C15 % _SPACE | 1
_B = 0x2545F4914F6CDD1D % _SPACE
assert _A % 31 and _A % 2


def base62(n: int, width: int = 0) -> str:
    """``n`` in base 62 (digits, upper, lower), left-padded with ``0`` to ``width``."""
    digits = []
    while n:
        n, r = divmod(n, 62)
        digits.append(_ALPHABET[r])
    return "".join(reversed(digits)).rjust(width, "0") or "0"


def mistral_id(n: int) -> str:
    """The ``n``-th call id of a conversation in Mistral's format: 9 alphanumerics, unique per n."""
    return base62((n * _A + _B) % _SPACE, 9)


class ProfileStage:
    """Apply a profile's repairs to the core's output (see the module docstring).

    ``feed(message, notes)`` returns the messages to output with their notes;
    ``close()`` returns the last ones. ``idle`` is True when the profile asks for nothing
    (``make_stage`` then returns None and the core pays nothing).
    """

    def __init__(self, profile: Profile) -> None:
        p = self.profile = profile
        keys = p.keys()
        self._alternate = p.alternate or "role.alternate" in keys
        self._first_user = p.first_user or "role.first_user" in keys
        self._requires_user = "role.requires_user" in keys
        self._bridge = "role.mistral_transitions" in keys
        self._split = "content.not_both_text_and_calls" in keys
        self._nonempty = bool(keys & {"content.nonempty_text_part", "content.non_whitespace_text",
                                      "content.nonempty_message"})
        self._null_to_empty = "content.null" in keys
        self._names = "content.name_pattern" in keys
        self._part_types = "content.part_type" in keys
        self._response_name = "tool.response_name" in keys
        self._strip_calls = "fields.role_specific" in keys
        self._prefix = p.trailing_assistant == "prefix"
        self._forbid = p.trailing_assistant == "forbid"
        self._rstrip = "content.final_assistant_trailing_ws" in keys and p.trailing_assistant == "allow"
        self._pad = p.requires_reasoning()
        self._strip_reasoning = p.reasoning == "strip"
        self._system = p.system
        self._flatten = p.content_form == "string"
        self._single_text = "content.single_text" in keys
        # Roles whose content must be a string (content.string_only): there a part that is
        # not text cannot stay (see "Parts that are not text" in the module docstring).
        self._string_roles: frozenset[str] = frozenset(
            role for rule in p.active_rules() if "content.string_only" in RULES[rule].keys
            for role in (RULES[rule].roles or ("system", "user", "assistant", "tool"))
        )
        self._objects = p.arguments == "object"
        self.idle = not (
            self._alternate or self._first_user or self._requires_user or self._bridge or self._split
            or self._nonempty or self._null_to_empty or self._names or self._part_types or self._response_name
            or self._strip_calls or self._prefix or self._forbid or self._rstrip or self._pad
            or self._strip_reasoning or self._system != "anywhere" or self._flatten or self._objects
            or p.id_style != "keep" or p.tool_only_content != "keep" or self._single_text or bool(self._string_roles)
        )
        # state
        self._started = False  # a non-system message has been placed
        self._leading: tuple[Message, list[Note]] | None = None
        self._leading_merge: _Merging | None = None  # set while several leading systems merge
        self._leading_count = 0
        self._held: tuple[Message, list[Note]] | None = None
        self._held_merge: _Merging | None = None  # set while messages merge into the held one
        self._merged = 0
        self._index: int | None = None  # input index of the message being placed (for errors)
        self._last: str | None = None  # role of the last non-system message placed
        self._last_calls = False  # ... and whether it was an assistant with calls
        self._seen_user = False
        self._placed = False
        self._n = 0  # calls seen: the id counter
        self._ids: dict[Any, str] = {}  # this turn: original call id -> new id
        self._fnames: dict[str, Any] = {}  # this turn: new id -> function name
        self._dropped = False  # the stage dropped a message since the last one placed

    # ------------------------------------------------------------------ interface

    def feed(self, message: Message, notes: list[Note], index: int | None = None) -> Out:
        """``index``: the input index of the message the core is placing, named by a
        ``LimitExceeded`` raised here (the README promises the message index)."""
        self._index = index
        out: Out = []
        notes = list(notes)
        role = message.get("role")
        if role in ("system", "developer"):
            if not self._started:
                message = self._content(message, "system", notes)
                if self._system in ("single", "fold"):
                    self._hold_system(message, notes)
                else:
                    self._emit(message, notes, out)
                return out
            if self._system == "anywhere":
                self._flush(out)
                self._emit(self._content(message, "system", notes), notes, out)
                return out
            notes.append((
                "system_to_user",
                f"a {role} message in mid-history became a user message: {self.profile.name} "
                "accepts system messages only at the start",
                [], {"role": role},
            ))
            message = {**message, "role": "user"}
        for msg, more in self._shape(message, notes):
            if msg is None:  # dropped: its notes are recorded now, with no output index
                out.append((None, more))
            else:
                self._place(msg, more, out)
        return out

    def close(self) -> Out:
        out: Out = []
        lead_held = self._take_leading()
        if not self._started and lead_held is not None:
            lead, notes = lead_held
            if self._system == "fold":
                self._put(self._folded(lead, None), notes + [self._fold_note(lead)], out)
            else:
                self._emit(lead, notes, out)
        self._settle_held()
        held = self._held
        if held is not None and held[0]["role"] == "assistant":
            msg, notes = held
            if self._prefix and msg.get("prefix") is not True:
                msg = {**msg, "prefix": True}
                notes = notes + [("set_prefix", "set prefix: true on the final assistant message "
                                  "(a final assistant message must be a prefix)", [], None)]
            elif self._rstrip:
                msg = self._rstripped(msg, notes)
            self._held = (msg, notes)
        self._flush(out, final=True)
        if self._forbid and self._last == "assistant" and not self._last_calls:
            self._put(
                {"role": "user", "content": self.profile.placeholder_continue},
                [("placeholder_continue", "added a user message after the final assistant message: "
                  f"{self.profile.name} does not accept a history that ends with the assistant", [], None)],
                out,
            )
        # Not after calls left open (trailing_calls="keep"): a user message after them would
        # make the next pass stub them (the history is not sendable until they are answered
        # anyway; once their results are in, the placeholder goes after them).
        if self._requires_user and self._placed and not self._seen_user and not (
            self._last == "assistant" and self._last_calls
        ):
            text = self.profile.placeholder_continue if self._last in ("assistant", "tool") else self.profile.placeholder_user
            self._put({"role": "user", "content": text},
                      [("placeholder_user", "added a user message: the history had none", [], None)], out)
        self._flush(out, final=True)
        return out

    # ------------------------------------------------------------------ per message

    def _shape(self, message: Message, notes: list[Note]) -> list[tuple[Message | None, list[Note]]]:
        role = message["role"]
        m = message
        if role != "assistant" and self._strip_calls and "tool_calls" in m:
            notes.append(("strip_tool_calls", f"removed 'tool_calls' from a {role} message", [],
                          {"tool_calls": m["tool_calls"]}))
            m = {k: v for k, v in m.items() if k != "tool_calls"}
        name = m.get("name")
        if self._names and role != "tool" and isinstance(name, str) and not NAME_PATTERN.match(name):
            fixed = NOT_ID_CHAR.sub("_", name) or "_"
            notes.append(("sanitize_name", f"name {name!r} became {fixed!r} (allowed: letters, digits, _ and -)",
                          [], {"name": name}))
            m = {**m, "name": fixed}
        if role == "assistant":
            if is_opaque(m):
                # Opaque state is replayed exactly as stored; its results keep their ids but
                # still get the name of the function they answer (tool.response_name).
                self._ids, self._fnames = {}, {}
                calls = m.get("tool_calls")
                for call in calls if isinstance(calls, list) else ():
                    function = call.get("function") if isinstance(call, Mapping) else None
                    if isinstance(function, Mapping) and isinstance(call.get("id"), str):
                        self._fnames[call["id"]] = function.get("name")
                return [(m, notes)]
            return self._assistant(self._content(m, role, notes), notes, message)
        m = self._content(m, role, notes)
        if role == "tool":
            m = self._result(m, notes)
        return [(m, notes)]

    def _content(self, m: Message, role: str, notes: list[Note]) -> Message:
        """Part types, blank parts, flattening, null content (copy on write)."""
        content = m.get("content")
        new: Any = content
        if isinstance(content, list):
            if self._part_types and any(not isinstance(p, Mapping) or "type" not in p for p in content):
                typed = [_typed(p) for p in content]
                # Only a string or an object can get a type; a part such as 5 or null stays as
                # it is, and a record must mean a change (check still flags that part).
                if any(t is not p for t, p in zip(typed, content)):
                    new = typed
                    notes.append(("add_part_type", "gave content parts without a 'type' the type 'text'", [], None))
            if self._nonempty:
                kept = [p for p in new if not is_blank_part(p)]
                if len(kept) != len(new):
                    notes.append(("drop_empty_text_part", f"dropped {len(new) - len(kept)} empty or whitespace "
                                  "text part(s)", [], [p for p in new if is_blank_part(p)]))
                    new = kept
            if self._single_text:
                new = self._one_text_part(new, notes)
            if all(is_text_part(p) for p in new):
                if self._flatten or role in self._string_roles:
                    new = "".join(p if isinstance(p, str) else p.get("text") or "" for p in new)
                    notes.append(("flatten_content", "content parts (text only) sent as one string", [], None))
            elif role in self._string_roles:
                new = self._text_only(new, role, notes)
        elif isinstance(content, str) and self._nonempty and content and not content.strip() and role != "user":
            new = ""
            notes.append(("drop_whitespace_text", "whitespace-only content became ''", [], {"content": content}))
        calls = role == "assistant" and bool(m.get("tool_calls"))
        if new is None and self._null_to_empty and not calls:
            new = ""
            notes.append(("null_content_to_empty", "content null became '' (null only fits an assistant "
                          "message with tool calls)", [], None))
        if role == "user" and self._nonempty and not has_text(new):
            notes.append(("placeholder_content", f"empty user content became {self.profile.placeholder_user!r}",
                          [], {"content": content}))
            new = self.profile.placeholder_user
        if new is content and ("content" in m or new is None):
            return m
        return {**m, "content": new}

    def _one_text_part(self, parts: list[Any], notes: list[Note]) -> list[Any]:
        """content.single_text: the text parts joined into the first one, other parts kept in place."""
        at = [i for i, part in enumerate(parts) if is_text_part(part)]
        if len(at) < 2:
            return parts
        text = "".join(text_of(parts[i]) for i in at)
        first = parts[at[0]]
        joined = {**first, "text": text} if isinstance(first, Mapping) else {"type": "text", "text": text}
        rest = set(at[1:])
        notes.append(("join_text_parts", f"{len(at)} text parts joined into one: {self.profile.name} accepts a "
                      "single text element per message (the other parts stay where they were)", [],
                      [parts[i] for i in at[1:]]))
        return [joined if i == at[0] else part for i, part in enumerate(parts) if i not in rest]

    def _text_only(self, parts: list[Any], role: str, notes: list[Note]) -> str:
        """content.string_only with a part that is not text: see the module docstring."""
        pieces: list[str] = []
        run: list[str] = []
        removed: list[Any] = []
        for part in parts:
            if is_text_part(part):
                run.append(text_of(part))
                continue
            removed.append(part)
            if "".join(run):
                pieces.append("".join(run))
            run = []
            pieces.append(self.profile.placeholder_part.replace("{kind}", part_kind(part))
                          .replace("{profile}", self.profile.name))
        if "".join(run):
            pieces.append("".join(run))
        notes.append((
            "replace_non_text_part",
            f"{len(removed)} part(s) that are not text ({', '.join(part_kind(p) for p in removed)}) replaced by a text "
            f"placeholder: {self.profile.name} accepts only a string as the content of a {role} message "
            "(the parts are kept whole here)",
            [], removed,
        ))
        return "\n".join(pieces)

    def _assistant(self, m: Message, notes: list[Note], message: Message) -> list[tuple[Message | None, list[Note]]]:
        p = self.profile
        if self._strip_reasoning:
            removed = {k: m[k] for k in REASONING_KEYS if k in m}
            if removed:
                notes.append(("strip_reasoning", f"removed {', '.join(removed)}: {p.name} rejects reasoning "
                              "fields in the history", [], removed))
                m = {k: v for k, v in m.items() if k not in removed}
        if self._pad and m.get("reasoning_content") is None:
            real = m.get("reasoning")
            if isinstance(real, str) and real.strip():
                m = {**m, "reasoning_content": real}
                notes.append(("restore_reasoning", "reasoning_content restored from 'reasoning'", [], None))
            else:
                m = {**m, "reasoning_content": ""}
                notes.append(("pad_reasoning", "added reasoning_content: '' (thinking mode requires the field "
                              "on assistant messages; the real reasoning was not stored)", [], None))
        self._ids, self._fnames = {}, {}
        calls = m.get("tool_calls")
        if not calls:
            if not has_text(m.get("content")) and not any(m.get(k) for k in SUBSTANCE_KEYS):
                # Blank once its parts are typed and flattened (the core counted an untyped
                # part as content): drop it, as the core drops an empty assistant message.
                self._dropped = True
                return [(None, notes + [("drop_empty_assistant", "dropped an assistant message whose content is "
                                         "only empty text", [], message)])]
            return [(m, notes)]
        new_calls, renamed, decoded, restored = [], [], 0, False
        for call in calls:
            old = call.get("id")
            new = self._new_id(old)
            function = call.get("function") or {}
            fixed = call if new == old else {**call, "id": new}
            if new != old:
                renamed.append((old, new))
            self._ids[old] = new
            self._fnames[new] = function.get("name")
            arguments = function.get("arguments")
            if self._objects and isinstance(arguments, str):
                try:
                    value = orjson.loads(arguments)
                except orjson.JSONDecodeError:
                    value = None
                if isinstance(value, dict):
                    fixed = {**fixed, "function": {**function, "arguments": value}}
                    # The core encoded an object here and this decodes it back: no change
                    # from the input, so neither repair is recorded (idempotence of reports).
                    if not _cancel(notes, "encode_arguments", {"id": old, "arguments": value}):
                        decoded += 1
                    restored = True
            new_calls.append(fixed)
        if renamed:
            notes.append((
                "rewrite_call_id",
                f"call ids rewritten to the {p.id_style} style: " + ", ".join(f"{a!r} -> {b!r}" for a, b in renamed),
                [], [a for a, _ in renamed],
            ))
        if decoded:
            notes.append(("decode_arguments", f"arguments of {decoded} call(s) sent as objects", [], None))
        if renamed or restored:
            m = {**m, "tool_calls": new_calls}
        content = m.get("content")
        if not has_text(content):
            m = self._encode_tool_only(m, notes)
        if self._split and has_text(m.get("content")):
            text = {k: v for k, v in m.items() if k != "tool_calls"}
            only_calls: Message = {"role": "assistant"}
            if "name" in m:
                only_calls["name"] = m["name"]
            only_calls = self._encode_tool_only({**only_calls, "content": None, "tool_calls": m["tool_calls"]}, [])
            if self._pad:
                only_calls["reasoning_content"] = ""
            return [
                (text, notes),
                (only_calls, [("split_text_and_calls", f"the text and the tool calls of one assistant message "
                               f"became two messages: {p.name} accepts one or the other", [], None)]),
            ]
        return [(m, notes)]

    def _encode_tool_only(self, m: Message, notes: list[Note]) -> Message:
        want = self.profile.tool_only_content
        content = m.get("content")
        if want == "null" or (want == "keep" and content == []):
            if content is None:
                return m
            value: Any = None
        elif want == "empty":
            if content == "":
                return m
            value = ""
        elif want == "omit":
            if "content" not in m:
                return m
            notes.append(("encode_tool_only_content", f"removed content {content!r} of a tool-only assistant message",
                          [], {"content": content}))
            return {k: v for k, v in m.items() if k != "content"}
        else:
            return m
        # The core turned a blank content into null and this restores the very value the
        # input had: no change, so neither repair is recorded.
        if not (content is None and _cancel(notes, "empty_content_to_null", {"content": value})):
            notes.append(("encode_tool_only_content", f"content {content!r} of a tool-only assistant message "
                          f"became {value!r} ({self.profile.name})", [], {"content": content}))
        return {**m, "content": value}

    def _result(self, m: Message, notes: list[Note]) -> Message:
        call_id = m.get("tool_call_id")
        new: Any = self._ids.get(call_id, call_id)  # an id that is not a string stays as it is
        if new != call_id:
            notes.append(("rewrite_result_id", f"tool_call_id {call_id!r} -> {new!r}, as its call", [], call_id))
            m = {**m, "tool_call_id": new}
        if self._response_name:
            fname = self._fnames.get(new)
            if fname and m.get("name") != fname:
                notes.append(("fill_tool_name", f"tool message name set to {fname!r}, the function it answers",
                              [], {"name": m["name"]} if "name" in m else None))
                m = {**m, "name": fname}
        return m

    def _new_id(self, old: Any) -> str:
        n = self._n
        self._n = n + 1
        style = self.profile.id_style
        text = old if isinstance(old, str) else ""
        if style == "mistral9":
            return mistral_id(n)
        if style in ("unique", "anthropic64"):
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
            while candidate in self._fnames:  # clash inside the turn
                k += 1
                candidate = f"{base}_{k}"
            return candidate
        return old  # type: ignore[no-any-return]

    # ------------------------------------------------------------------ placement

    def _hold_system(self, message: Message, notes: list[Note]) -> None:
        self._leading_count += 1
        if self._leading_count > MAX_LEADING_SYSTEMS:
            raise LimitExceeded(
                f"more than {MAX_LEADING_SYSTEMS} leading system messages", limit="MAX_LEADING_SYSTEMS",
                value=MAX_LEADING_SYSTEMS, index=self._index,
                hint="no real history has that many; is the input a history?",
            )
        if self._leading is None:
            self._leading = (message, notes)
            return
        merging = self._leading_merge
        if merging is None:
            merging = self._leading_merge = _Merging(*self._leading)
            self._leading = (merging.fields, merging.notes)
        held = merging.fields
        # Every key is kept: content joined as the core joins it, a key only the later one
        # has added, a conflicting value replaced by the later one (the earlier one recorded).
        merging.add(message)  # leaves tool_calls alone:
        if "tool_calls" in message:  # not a system field, but nothing is lost silently
            if "tool_calls" in held and held["tool_calls"] != message["tool_calls"]:
                merging.conflicts.append(("tool_calls", held["tool_calls"], message["tool_calls"]))
            held["tool_calls"] = message["tool_calls"]
        dropped = {"role": message["role"]} if message["role"] != held["role"] else None
        merging.notes.extend(notes)
        merging.notes.append((
            "merge_leading_systems", f"merged {self._leading_count} leading system messages into one: "
            f"{self.profile.name} accepts a single system message at the start"
            + (f" (a {message['role']} message became part of the {held['role']} message)" if dropped else ""),
            [], dropped,
        ))
        merging.notes.extend(
            ("merge_conflict", f"merging leading system messages: '{k}' was {old!r}, the later {new!r} kept",
             [], {k: old})
            for k, old, new in merging.take_conflicts()
        )

    def _take_leading(self) -> tuple[Message, list[Note]] | None:
        """The leading system message, its merged content joined (once), and no longer held."""
        if self._leading_merge is not None:
            self._leading_merge.settle()
            self._leading_merge = None
        lead, self._leading = self._leading, None
        return lead

    def _folded(self, lead: Message, user: Message | None) -> Message:
        content = lead.get("content")
        if user is None:
            return {"role": "user", "content": content if has_text(content) else self.profile.placeholder_user}
        return {**user, "content": join(content, user.get("content"))}

    def _fold_note(self, lead: Message) -> Note:
        return ("fold_system_into_user", f"the system message was folded into the first user message: "
                f"{self.profile.name} has no system role", [], lead)

    def _place(self, m: Message, notes: list[Note], out: Out) -> None:
        role = m["role"]
        if role in ("system", "developer"):
            self._flush(out)
            self._emit(m, notes, out)
            return
        if not self._started:
            self._started = True
            lead = self._take_leading()
            if lead is not None:
                lead_msg, lead_notes = lead
                if self._system == "fold":
                    if role == "user":
                        m, notes = self._folded(lead_msg, m), lead_notes + notes + [self._fold_note(lead_msg)]
                    else:
                        self._put(self._folded(lead_msg, None), lead_notes + [self._fold_note(lead_msg)], out)
                else:
                    self._emit(lead_msg, lead_notes, out)
            if self._first_user and role != "user" and self._last is None:
                self._put({"role": "user", "content": self.profile.placeholder_user},
                          [("placeholder_user", f"added a user message before the first {role} message: "
                            f"{self.profile.name} requires the conversation to start with a user message", [], None)],
                          out)
        self._put(m, notes, out)

    def _put(self, m: Message, notes: list[Note], out: Out) -> None:
        role = m["role"]
        dropped, self._dropped = self._dropped, False
        if self._bridge and self._last == "tool" and role == "user":
            self._flush(out)
            self._emit({"role": "assistant", "content": self.profile.placeholder_bridge},
                       [("bridge_assistant", "added an assistant message between a tool result and a user "
                         f"message: {self.profile.name} does not accept a user message right after a tool", [], None)],
                       out)
        if self._last == role and role in ("user", "assistant"):
            held = self._held
            # The core never emits two same-speaker users, or two same-speaker assistant
            # fragments, side by side: if they meet here, the stage removed or converted
            # what stood between them, and they merge as the core would have merged them.
            # The text half of a Mistral split merges into a text-only assistant before it
            # too (the core keeps text and calls apart for Mistral, so "text" then "text +
            # calls" reaches the stage as two messages); the calls half never merges.
            if (
                held is not None
                and held[0]["role"] == role
                and _mergeable(held[0], m)
                and (self._alternate or (
                    held[0].get("name") == m.get("name")
                    and (role == "user" or dropped or not m.get("tool_calls"))
                ))
            ):
                self._merge_held(m, notes, out)
                return
            if self._alternate:
                self._flush(out)
                if role == "assistant":
                    self._put({"role": "user", "content": self.profile.placeholder_user},
                              [("placeholder_user", "added a user message between two assistant messages that "
                                "cannot be merged (opaque state)", [], None)], out)
        self._flush(out)
        # Hold what the next message may merge into, or may reveal as the final message.
        if role == "user" or (role == "assistant" and not m.get("tool_calls")):
            self._held = (m, notes)
            self._merged = 1
            self._last, self._last_calls = role, False
            if role == "user":
                self._seen_user = True
            self._placed = True
            return
        self._emit(m, notes, out)

    def _merge_held(self, m: Message, notes: list[Note], out: Out) -> None:
        self._merged += 1
        if self._merged > MAX_MERGED:
            raise LimitExceeded(f"more than {MAX_MERGED} messages merge into one", limit="MAX_MERGED",
                                value=MAX_MERGED, index=self._index,
                                hint="no real history has that many consecutive turns")
        merging = self._held_merge
        if merging is None:
            assert self._held is not None  # _put merges only into a held message
            merging = self._held_merge = _Merging(*self._held)
            self._held = (merging.fields, merging.notes)
        a = merging.fields
        dropped: dict[str, Any] = {}
        if a.get("name") != m.get("name"):
            dropped = {"name": [a.get("name"), m.get("name")]}
            a.pop("name", None)
            m = {k: v for k, v in m.items() if k != "name"}
        merging.add(m)
        if m.get("tool_calls"):
            a["tool_calls"] = m["tool_calls"]
        a.pop("prefix", None)  # only the final assistant may be a prefix; close() decides
        role = m["role"]
        why = (f"{self.profile.name} requires user and assistant to alternate" if self._alternate
               else "what stood between them was removed or became a user message")
        merging.notes.extend(notes)
        merging.notes.append((
            f"merge_{role}_alternate" if self._alternate else f"merge_{role}",
            f"merged two consecutive {role} messages: {why}"
            + (" (their different names were dropped)" if dropped else ""),
            [], dropped or None,
        ))
        merging.notes.extend(("merge_conflict", f"merging: '{k}' was {old!r}, the later {new!r} kept", [], {k: old})
                             for k, old, new in merging.take_conflicts())
        if a.get("tool_calls"):
            self._settle_held()
            held = self._held
            self._held = None
            assert held is not None
            self._emit(held[0], held[1], out)

    def _settle_held(self) -> None:
        """Join the held message's merged content (once): before it is read or sent."""
        if self._held_merge is not None:
            self._held_merge.settle()
            self._held_merge = None

    def _flush(self, out: Out, final: bool = False) -> None:
        held = self._held
        if held is None:
            return
        self._settle_held()
        self._held = None
        m, notes = held
        if self._prefix and not final and m.get("prefix") is True and m["role"] == "assistant":
            m = {k: v for k, v in m.items() if k != "prefix"}
            notes = notes + [("clear_prefix", "removed prefix: true from an assistant message that is not "
                              "the last one", [], {"prefix": True})]
        out.append((m, notes))

    def _emit(self, m: Message, notes: list[Note], out: Out) -> None:
        out.append((m, notes))
        self._placed = True
        role = m["role"]
        if role in ("system", "developer"):
            return
        self._last = role
        self._last_calls = role == "assistant" and bool(m.get("tool_calls"))
        if role == "user":
            self._seen_user = True

    def _rstripped(self, m: Message, notes: list[Note]) -> Message:
        content = m.get("content")
        if isinstance(content, str) and content != content.rstrip():
            notes.append(("rstrip_final_assistant", "removed trailing whitespace from the final assistant message",
                          [], {"content": content}))
            return {**m, "content": content.rstrip()}
        if isinstance(content, list) and content and isinstance(content[-1], Mapping):
            text = content[-1].get("text")
            if isinstance(text, str) and text != text.rstrip():
                notes.append(("rstrip_final_assistant", "removed trailing whitespace from the final assistant "
                              "message", [], {"content": content}))
                return {**m, "content": [*content[:-1], {**content[-1], "text": text.rstrip()}]}
        return m


class _Merging:
    """A held message that later ones merge into (``_content.merge``: linear in what is
    merged, text keys folded and joined once). ``fields`` is the message; while merging,
    its text keys are stale until :meth:`settle` (only ``_settle_held``/``_take_leading``
    read them)."""

    __slots__ = ("fields", "notes", "folds", "owned", "conflicts")

    def __init__(self, message: Message, notes: list[Note]) -> None:
        self.fields: Message = dict(message)
        self.notes: list[Note] = list(notes)
        self.folds: dict[str, Fold] = {}
        self.owned: set[str] = set()  # keys whose list value is ours to extend
        self.conflicts: list[Conflict] = []

    def add(self, new: Message) -> None:
        """Merge ``new`` into ``fields`` (conflicts kept for take_conflicts)."""
        self.conflicts.extend(merge(self.fields, new, self.folds, self.owned))

    def take_conflicts(self) -> list[Conflict]:
        conflicts, self.conflicts = self.conflicts, []
        return conflicts

    def settle(self) -> Message:
        """Write the joined text keys into ``fields`` (in place: their order is kept)."""
        return unfold(self.fields, self.folds)


def _mergeable(a: Message, b: Message) -> bool:
    if a["role"] == "user":
        return True
    return not a.get("tool_calls") and not is_opaque(a) and not is_opaque(b)


def _cancel(notes: list[Note], kind: str, before: Any) -> bool:
    """Remove the core's note ``kind`` whose recorded former value is ``before``: the core
    changed that value and this stage restores it exactly, so neither repair happened."""
    for i, note in enumerate(notes):
        if note[0] == kind and note[3] == before:
            del notes[i]
            return True
    return False


def _typed(part: Any) -> Any:
    if isinstance(part, str):
        return {"type": "text", "text": part}
    if isinstance(part, Mapping) and "type" not in part:
        return {**part, "type": "text" if "text" in part else "image_url" if "image_url" in part else "text"}
    return part
