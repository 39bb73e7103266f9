"""Pieces every converter shares: the converter protocol, the pending assistant turn, helpers.

A converter is sans-I/O: ``feed(record, line=...)`` takes one decoded JSON value and returns
the chat messages it completes; ``close()`` returns what is still pending. It holds at most
one assistant turn (and that turn's results), so memory does not grow with the input.
Converters never mutate the records they are given: every output dict is new.
"""

from __future__ import annotations

import json
import reprlib
from dataclasses import dataclass
from typing import Any, Protocol

import orjson

from .._errors import InvalidMessage
from .._json import dumps as exact_dumps
from .._report import Report

__all__ = [
    "Converter", "SplitRecord", "Turn", "SOURCE_KEY", "dumps", "canonical", "invalid", "text_parts", "as_text", "merge_extra",
    "merge_source", "with_source", "without_source", "string_id",
]

#: Where a converter keeps a source record's fields that have no Chat equivalent (a Responses
#: item's ``id``, ``status``, ``phase``, ``provider_data``; a ``tool_result``'s ``is_error``;
#: Cline's ``ts``, ``modelInfo``, ``metrics``...), verbatim, on the message or call made from
#: it: one key, so that a writer of the source format can restore them. It never leaves the
#: package on a chat message: the readers take it off (:func:`without_source`) unless a writer
#: of the source format asked for it (``keep_source_fields()`` of a stream), and only the
#: writers of the source formats read it.
SOURCE_KEY = "source_fields"


class Converter(Protocol):
    """What the readers drive. ``multi`` converters turn one record into one conversation."""

    name: str
    multi: bool

    def feed(self, record: Any, *, line: int | None = None) -> list[dict[str, Any]]: ...

    def close(self) -> list[dict[str, Any]]: ...


@dataclass(frozen=True, slots=True)
class SplitRecord:
    """One record of a one-conversation-per-record format (``multi`` converters), as its
    converter's ``split(record, line=)`` reads it: the reader makes it a ``Conversation``."""

    messages: list[dict[str, Any]]
    """The conversation's chat messages."""
    extra: dict[str, Any]
    """The record's other keys (``tools``, ``parallel_tool_calls``...), to be written back
    untouched."""


def dumps(value: Any, *, line: int | None = None, what: str = "value") -> str:
    """Compact JSON text (orjson's, integers past 64 bits as their digits: ``.._json``), as
    tool-call arguments and stringified outputs use.

    orjson refuses nesting deeper than 254: that falls back to the standard library; what
    neither can write becomes an :class:`InvalidMessage` naming ``what`` and the line.
    """
    try:
        return exact_dumps(value).decode()
    except TypeError:  # orjson.JSONEncodeError
        pass
    return _slow_dumps(value, line=line, what=what, sort_keys=False)


def canonical(value: Any, *, line: int | None = None, what: str = "value") -> bytes:
    """Key-sorted JSON bytes of a value, to compare values (duplicate detection)."""
    try:
        return exact_dumps(value, orjson.OPT_SORT_KEYS)
    except TypeError:  # orjson.JSONEncodeError
        pass
    return _slow_dumps(value, line=line, what=what, sort_keys=True).encode()


def _slow_dumps(value: Any, *, line: int | None, what: str, sort_keys: bool) -> str:
    try:
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False, sort_keys=sort_keys)
    except RecursionError:
        raise invalid(f"{what} is nested too deeply to be written as JSON", line=line, hint="Is this file corrupt?") from None
    except (TypeError, ValueError) as exc:
        raise invalid(f"{what} cannot be written as JSON ({exc})", line=line) from None


def invalid(what: str, *, line: int | None, hint: str | None = None, field: str | None = None) -> InvalidMessage:
    return InvalidMessage(what, field=field, line=line, hint=hint)


_repr = reprlib.Repr()
_repr.maxlevel = 3
_repr.maxstring = 60
_repr.maxother = 60
_repr.maxlong = 60


def describe(value: Any) -> str:
    """A short description of a value for error messages (bounded, however big or deep)."""
    text = _repr.repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{type(value).__name__} {text}"


def string_id(value: Any, *, line: int | None, what: str, field: str | None = None) -> str | None:
    """``value`` when it is a string or missing (None); else a clear error about ``what``."""
    if value is None or isinstance(value, str):
        return value
    raise invalid(f"{what} must be a string, got {describe(value)}", line=line, field=field)


def same(a: Any, b: Any) -> bool:
    """``a == b``, with values too deeply nested to compare counted as different."""
    try:
        return bool(a == b)
    except RecursionError:
        return False


def merge_extra(msg: dict[str, Any], extra: Any, report: Report | None, *, line: int | None) -> dict[str, Any]:
    """Add a record's other keys to the message being built, never over a key the converter
    set (a record's own ``role`` or ``tool_call_id`` must not replace the converted one):
    a clashing value is recorded in the report, not lost."""
    for key, value in extra.items():
        if key in msg:
            if not same(msg[key], value):
                note_extra(report, "drop_conflicting_field", f"{key!r} is set by the conversion; the record's own value was left out", line=line, dropped={key: value})
        else:
            msg[key] = value
    return msg


def merge_source(target: dict[str, Any], fields: dict[str, Any], report: Report | None, *, line: int | None) -> None:
    """Add a record's other fields to ``target`` (a :data:`SOURCE_KEY` dict being built): a
    field it holds already with another value (two items of one turn, two message ids) keeps
    the first, and the other is recorded in the report, never lost."""
    for key, value in fields.items():
        if key in target and not same(target[key], value):
            note_extra(report, "drop_conflicting_field", f"{key!r} of this turn is already {describe(target[key])}; "
                       "kept the first value", line=line, dropped={key: value})
        else:
            target[key] = value


def with_source(msg: dict[str, Any], fields: dict[str, Any]) -> dict[str, Any]:
    """``msg`` with ``fields`` under :data:`SOURCE_KEY` (none: unchanged)."""
    if fields:
        msg[SOURCE_KEY] = fields
    return msg


def without_source(message: dict[str, Any]) -> dict[str, Any]:
    """``message`` as chat output: without the fields its reader kept aside for a writer of
    the source format (:data:`SOURCE_KEY`, on it and on its calls). The message itself when
    it holds none; else a copy (a call copied only where its own are taken off). Only the
    reader's own key goes: every other key stays as the reader made it."""
    calls = message.get("tool_calls")
    if type(calls) is not list or not any(type(call) is dict and SOURCE_KEY in call for call in calls):
        calls = None
    if calls is None and SOURCE_KEY not in message:
        return message
    out = {key: value for key, value in message.items() if key != SOURCE_KEY}
    if calls is not None:
        out["tool_calls"] = [
            {key: value for key, value in call.items() if key != SOURCE_KEY}
            if type(call) is dict and SOURCE_KEY in call else call
            for call in calls
        ]
    return out


# Text-like content part types of the formats we read (Responses, Anthropic, Chat).
_TEXT_PARTS = {"text", "input_text", "output_text", "summary_text", "reasoning_text"}
_EMPTY_NOISE = {"annotations", "logprobs"}


def text_parts(content: Any, *, line: int | None, where: str) -> list[Any]:
    """Chat content parts for a list of Responses / Anthropic / Chat parts.

    Text parts become ``{"type": "text", "text"}``; images become ``image_url`` parts; any
    other part is kept as it is (the core or the target decides), so nothing is lost. A text
    part whose ``text`` is missing or not a string is refused (InvalidMessage at ``line``).
    """
    if not isinstance(content, list):
        raise invalid(f"{where}: expected a string or a list of parts, got {describe(content)}", line=line)
    out: list[Any] = []
    for part in content:
        if isinstance(part, str):
            out.append({"type": "text", "text": part})
            continue
        if not isinstance(part, dict):
            raise invalid(f"{where}: content part is {describe(part)}, expected an object", line=line)
        kind = part.get("type")
        if isinstance(kind, str) and kind in _TEXT_PARTS and not isinstance(part.get("text"), str):
            raise _textless(part, kind, line=line, where=where)
        if isinstance(kind, str) and kind in _TEXT_PARTS:
            # Other keys of a text part (cache_control, citations...) stay on it; empty
            # annotation/logprob lists of Responses output are noise, not data.
            text: dict[str, Any] = {"type": "text", "text": part["text"]}
            for key, value in part.items():
                if key not in ("type", "text") and not (key in _EMPTY_NOISE and value in ([], None)):
                    text[key] = value
            out.append(text)
        elif kind == "input_image" and isinstance(part.get("image_url"), str):
            image: dict[str, Any] = {"url": part["image_url"]}
            if "detail" in part:
                image["detail"] = part["detail"]
            out.append({"type": "image_url", "image_url": image})
        elif kind == "image" and isinstance(part.get("source"), dict):
            out.append(_anthropic_image(part["source"]))
        else:
            out.append(dict(part))
    return out


def _textless(part: dict[str, Any], kind: str, *, line: int | None, where: str) -> InvalidMessage:
    """A text part without its text: refused (kept as it is, it would be a text part the
    writers and the core's text tests cannot read, KeyError: 'text')."""
    got = "none" if "text" not in part else describe(part["text"])
    if "value" in part:
        hint = ("Its text is under 'value', as in LLaMA-Factory's messages: read such a file with --from finetune "
                "(format='finetune'), or skip such records with --on-invalid skip")
    else:
        hint = "Give the part its text, or skip such records with --on-invalid skip"
    return invalid(f"{where}: a {kind!r} part needs a string 'text', got {got}", line=line, field="text", hint=hint)


def _anthropic_image(source: dict[str, Any]) -> dict[str, Any]:
    if source.get("type") == "base64":
        url = f"data:{source.get('media_type', 'image/png')};base64,{source.get('data', '')}"
    else:
        url = str(source.get("url", ""))
    return {"type": "image_url", "image_url": {"url": url}}


def as_text(parts: list[Any]) -> str | list[Any]:
    """One text part collapses to a string (the common case); anything else stays a list."""
    if not parts:
        return ""
    if len(parts) == 1 and parts[0].get("type") == "text" and len(parts[0]) == 2:
        return parts[0]["text"]  # type: ignore[no-any-return]
    return parts


def only_text(parts: list[Any]) -> str | None:
    """The joined text of parts when they are all text, else None."""
    if all(isinstance(p, dict) and p.get("type") == "text" and len(p) == 2 for p in parts):
        return "".join(p["text"] for p in parts)
    return None


class Turn:
    """One assistant turn being assembled from fragments, plus the results that follow it.

    Results are held (not emitted) until the turn is known to be over, because a format may
    still add a fragment to the turn after its first result (Claude Code does, rarely);
    emitting early would split one model turn into two assistant messages. They are released
    in call order, and results for ids this turn never made come last, in arrival order.
    """

    __slots__ = ("key", "texts", "reasoning", "calls", "extra", "source", "preserved", "results", "seen", "refusal")

    def __init__(self, key: Any = None) -> None:
        self.key = key
        self.texts: list[str] = []
        self.reasoning: list[str] = []
        self.calls: list[dict[str, Any]] = []
        self.extra: dict[str, Any] = {}
        self.source: dict[str, Any] = {}  # the turn's records' other fields (SOURCE_KEY)
        # Vendor data kept whole for replay to its own API (encrypted reasoning, signatures).
        self.preserved: dict[str, list[Any]] = {}
        self.results: list[dict[str, Any]] = []
        self.seen: set[bytes] = set()
        self.refusal: str | None = None

    def preserve(self, key: str, value: Any) -> None:
        self.preserved.setdefault(key, []).append(value)

    def message(self) -> dict[str, Any]:
        texts = [t for t in self.texts if t]
        msg: dict[str, Any] = {"role": "assistant"}
        if texts:
            msg["content"] = "\n\n".join(texts)
        else:
            # Calls with no text: null content, as the Chat API itself returns it.
            msg["content"] = None if self.calls else ""
        if self.refusal is not None:
            msg["refusal"] = self.refusal
        reasoning = [r for r in self.reasoning if r]
        if reasoning:
            msg["reasoning_content"] = "\n\n".join(reasoning)
        if self.calls:
            msg["tool_calls"] = self.calls
        for key, values in self.preserved.items():
            msg[key] = values
        for key, value in self.extra.items():
            msg.setdefault(key, value)
        if self.source:
            msg[SOURCE_KEY] = self.source
        return msg

    def flush(self) -> list[dict[str, Any]]:
        """The assistant message, then its held results in call order."""
        out = [self.message()]
        if self.results:
            order = {call.get("id"): i for i, call in enumerate(self.calls)}
            late = len(order)
            # sorted() is stable: unknown ids keep their arrival order, after the known ones.
            out.extend(sorted(self.results, key=lambda r: order.get(r.get("tool_call_id"), late)))
        return out


def note_extra(report: Report | None, kind: str, detail: str, *, line: int | None, dropped: Any) -> None:
    if report is not None:
        report.add(kind, detail, line=line, dropped=dropped)


def count(report: Report | None, kind: str) -> None:
    if report is not None:
        report.count(kind)
