"""Gemini native ``contents`` <-> chat messages, one content (or message) at a time.

A Gemini request (``generateContent``) holds ``contents``: ``{"role": "user"|"model",
"parts": [...]}``, and ``systemInstruction`` (a content whose text parts are the system
prompt). google-genai, Vertex and ADK users store such ``contents`` arrays as they are.

Reading (:class:`GeminiConverter`, :func:`content_to_messages`):

* a ``model`` content is one assistant message: its text parts joined with nothing (Gemini
  cuts one answer into parts wherever it streams, so no separator is added), each
  ``functionCall`` ``{name, args, id?}`` a tool call with ``arguments = json(args)``;
* ``thought: true`` parts become ``reasoning_content`` (joined by a blank line) and are kept
  whole, signatures and all, in :data:`THOUGHT_KEY`, so they go back byte-exact;
* a ``thoughtSignature`` on a ``functionCall`` part goes to the call's
  ``extra_content.google.thought_signature``, and one on a text part to the message's: the
  spelling of Gemini's OpenAI-compatible endpoint, which the core and the ``gemini-compat``
  fields table already carry through (``_content.CHAT_FIELDS``), byte-exact as strings;
* a ``user`` content's ``functionResponse`` parts ``{name, response, id?}`` become tool
  messages (first, in order), its other parts one user message after them;
* a response's ``response`` ``{"output": text}`` (what Gemini CLI and most agents send) becomes
  the tool message's text; any other response is its JSON, marked ``response_json`` in
  ``source_fields`` so the writer gives the object back.

Pairing: Gemini pairs responses with the calls of the model turn before them by position and
name (a response's ``id``, when both have one). A call without an ``id`` is given one
(``gemini_<name>_<n>``, marked ``assigned_id`` in the call's ``source_fields``, recorded as
``assign_call_id``), and a response without one answers the first call of its name that the
turn has not answered yet; a response whose name no open call has is given an id that
answers nothing (``assign_orphan_id``), so the core handles it as the orphan it is. Only the
last model turn's calls are held: memory does not grow with the history.

Writing (:class:`GeminiWriter`, :func:`message_to_parts`) is the reverse: an assistant
message is a ``model`` content (its :data:`THOUGHT_KEY` parts first, then text, then one
``functionCall`` a call, signatures put back), a run of tool messages and the user message
after them one ``user`` content (Gemini wants every response of a turn in one content, and
user turns alternating with model turns), system messages the ``systemInstruction``. An
``assigned_id`` is left out again. A ``reasoning_content`` without :data:`THOUGHT_KEY`
(reasoning read from another provider) is not written: Gemini takes back only its own
thought parts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import orjson

from .._content import THOUGHT_PARTS_KEY
from .._json import dumps as exact_dumps
from .._report import Report
from ._common import SOURCE_KEY, as_text, describe, dumps, invalid, note_extra
from ._format import Clue, DocumentKeys, Evidence, Format, Output
from ._writing import FormatWriter

__all__ = [
    "GeminiConverter", "GeminiWriter", "GeminiEncoder", "guess", "FORMAT", "Calls", "THOUGHT_KEY", "ASSIGNED_ID", "RESPONSE_JSON",
    "content_to_messages", "model_message", "user_messages", "user_part", "tool_message", "message_to_parts",
    "signature_of",
]

#: Where an assistant message keeps its Gemini thought parts whole (``{"text", "thought":
#: true, "thoughtSignature"?}``), in order, for replay to Gemini (like ``thinking_blocks``
#: for Anthropic and ``reasoning_items`` for Responses). A list: the core concatenates two
#: merged turns' lists.
THOUGHT_KEY: Final = THOUGHT_PARTS_KEY
#: ``source_fields`` key: this call's (or response's) id was made by the reader.
ASSIGNED_ID: Final = "assigned_id"
#: ``source_fields`` key: this tool message's text is the JSON of the response object.
RESPONSE_JSON: Final = "response_json"

#: The keys of Gemini's FunctionCall besides id, name and args (google-genai's types): the
#: only source fields the writer gives back on a call.
_CALL_FIELDS = frozenset({"partialArgs", "willContinue"})

# Part keys the conversion consumes; any other key of a part is kept under source_fields.
_CALL_PART = frozenset({"functionCall", "thoughtSignature"})
_RESPONSE_PART = frozenset({"functionResponse"})


def signature_of(value: Any) -> Any:
    """``value["extra_content"]["google"]["thought_signature"]``, else None."""
    extra = value.get("extra_content") if isinstance(value, dict) else None
    google = extra.get("google") if isinstance(extra, dict) else None
    return google.get("thought_signature") if isinstance(google, dict) else None


def _source(value: dict[str, Any]) -> dict[str, Any]:
    """A message's or call's ``source_fields`` (empty: none)."""
    source = value.get(SOURCE_KEY)
    return source if isinstance(source, dict) else {}


def _with_signature(target: dict[str, Any], signature: Any) -> dict[str, Any]:
    target["extra_content"] = {"google": {"thought_signature": signature}}
    return target


class Calls:
    """The calls of the last model turn that no response answered yet (for pairing by name
    and position), and the counter of the ids the reader makes."""

    __slots__ = ("open", "made")

    def __init__(self) -> None:
        self.open: list[dict[str, Any]] = []
        self.made = 0

    def new_id(self, name: str) -> str:
        self.made += 1
        return f"gemini_{name}_{self.made}"

    def answer(self, name: str, call_id: str | None) -> str | None:
        """The id of the open call a response answers (taken off the open calls): the one of
        its id, or with none, the first of its name; None when no open call fits (a response
        with an id answering none keeps it: the core tells the orphan)."""
        for i, call in enumerate(self.open):
            if call.get("id") == call_id if call_id is not None else call["function"]["name"] == name:
                del self.open[i]
                return call["id"]  # type: ignore[no-any-return]
        return call_id


def _parts(content: Any, line: int | None) -> list[Any]:
    parts = content.get("parts") if isinstance(content, dict) else None
    if parts is None:
        return []
    if not isinstance(parts, list):
        raise invalid(f"'parts' is {describe(parts)}, expected a list of parts", line=line, field="parts")
    return parts


def _call(part: dict[str, Any], calls: Calls, report: Report | None, line: int | None) -> dict[str, Any]:
    """A ``functionCall`` part as a chat tool call."""
    fc = part["functionCall"]
    if not isinstance(fc, dict) or not isinstance(fc.get("name"), str):
        raise invalid(f"a functionCall needs a string 'name', got {describe(fc)}", line=line, field="parts.functionCall")
    name, call_id = fc["name"], fc.get("id")
    source = {k: v for k, v in fc.items() if k not in ("name", "args", "id")}
    source.update({k: v for k, v in part.items() if k not in _CALL_PART})
    if call_id is None:
        call_id = calls.new_id(name)
        source[ASSIGNED_ID] = True
        note_extra(report, "assign_call_id", f"functionCall {name!r} has no id: given {call_id!r} to pair its "
                   "response by position and name", line=line, dropped=None)
    elif not isinstance(call_id, str):
        raise invalid(f"a functionCall's 'id' must be a string, got {describe(call_id)}", line=line, field="parts.functionCall.id")
    call: dict[str, Any] = {"id": call_id, "type": "function",
                            "function": {"name": name, "arguments": dumps(fc.get("args", {}), line=line, what="a functionCall's 'args'")}}
    if "thoughtSignature" in part:
        _with_signature(call, part["thoughtSignature"])
    if source:
        call[SOURCE_KEY] = source
    return call


def model_message(parts: list[Any], calls: Calls, report: Report | None = None, *, line: int | None = None,
                  extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """One assistant message of a model content's parts; ``calls`` now holds its calls."""
    texts: list[str] = []
    thoughts: list[dict[str, Any]] = []
    made: list[dict[str, Any]] = []
    signature: Any = None
    for part in parts:
        if not isinstance(part, dict):
            raise invalid(f"a model part is {describe(part)}, expected an object", line=line, field="parts")
        if "functionCall" in part:
            made.append(_call(part, calls, report, line))
        elif part.get("thought") is True:
            thoughts.append(part)
        elif isinstance(part.get("text"), str) and set(part) <= {"text", "thoughtSignature", "thought"}:
            texts.append(part["text"])
            if "thoughtSignature" in part:
                if signature is not None:
                    note_extra(report, "drop_signature", "a second signed text part in one model turn: its "
                               "signature has no place in the message (the first is kept)", line=line, dropped=part)
                else:
                    signature = part["thoughtSignature"]
        else:
            note_extra(report, "drop_part", f"model part {sorted(part)} has no chat equivalent; left out",
                       line=line, dropped=part)
    joined = "".join(texts)
    # Calls with no text: null content, as the Chat API returns it ("" beside calls is a defect).
    msg: dict[str, Any] = {"role": "assistant", "content": joined if joined or not made else None}
    reasoning = [t["text"] for t in thoughts if isinstance(t.get("text"), str) and t["text"]]
    if reasoning:
        msg["reasoning_content"] = "\n\n".join(reasoning)
    if made:
        msg["tool_calls"] = made
    if thoughts:
        msg[THOUGHT_KEY] = thoughts
    if signature is not None:
        _with_signature(msg, signature)
    if extra:
        msg[SOURCE_KEY] = extra
    calls.open = list(made)
    return msg


def _response_text(response: Any, line: int | None) -> tuple[str, bool]:
    """A response object as a tool message's text, and whether it is that object's JSON."""
    if isinstance(response, dict) and len(response) == 1 and isinstance(response.get("output"), str):
        return response["output"], False
    return dumps(response, line=line, what="a functionResponse's 'response'"), True


def tool_message(part: dict[str, Any], calls: Calls, report: Report | None = None, *,
                 line: int | None = None) -> dict[str, Any]:
    """A ``functionResponse`` part as a tool message answering the call it pairs with."""
    fr = part["functionResponse"]
    if not isinstance(fr, dict) or not isinstance(fr.get("name"), str):
        raise invalid(f"a functionResponse needs a string 'name', got {describe(fr)}", line=line,
                      field="parts.functionResponse")
    name, given = fr["name"], fr.get("id")
    if given is not None and not isinstance(given, str):
        raise invalid(f"a functionResponse's 'id' must be a string, got {describe(given)}", line=line,
                      field="parts.functionResponse.id")
    call_id = calls.answer(name, given)
    # The response's name too rides aside, for the Gemini writer: a chat tool message has no
    # name (the gemini profile gives it its call's, which it answers by that name).
    source = {"name": name, **{k: v for k, v in fr.items() if k not in ("name", "response", "id")}}
    source.update({k: v for k, v in part.items() if k not in _RESPONSE_PART})
    if call_id is None:
        call_id = calls.new_id(name)
        source[ASSIGNED_ID] = True
        note_extra(report, "assign_orphan_id", f"functionResponse {name!r} has no id and answers no open call of "
                   f"that name: given {call_id!r}, which no call has", line=line, dropped=None)
    elif given is None:
        source[ASSIGNED_ID] = True  # paired by position and name: its id is the call's
    text, as_json = _response_text(fr.get("response"), line)
    if as_json:
        source[RESPONSE_JSON] = True
    return {"role": "tool", "tool_call_id": call_id, "content": text, SOURCE_KEY: source}


def user_part(part: Any, line: int | None) -> dict[str, Any]:
    """A user part other than a response, as a chat content part (unknown ones kept as they are)."""
    if isinstance(part, str):
        return {"type": "text", "text": part}
    if not isinstance(part, dict):
        raise invalid(f"a user part is {describe(part)}, expected an object", line=line, field="parts")
    if isinstance(part.get("text"), str) and set(part) == {"text"}:
        return {"type": "text", "text": part["text"]}
    inline = part.get("inlineData")
    if isinstance(inline, dict) and str(inline.get("mimeType", "")).startswith("image/") and set(part) == {"inlineData"}:
        return {"type": "image_url", "image_url": {"url": f"data:{inline['mimeType']};base64,{inline.get('data', '')}"}}
    return dict(part)  # fileData, other media, a signed or thought text: the writer gives it back


def user_messages(parts: list[Any], calls: Calls, report: Report | None = None, *, line: int | None = None,
                  extra: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """The tool messages of a user content's responses, then one user message of the rest."""
    out: list[dict[str, Any]] = []
    rest: list[dict[str, Any]] = []
    for part in parts:
        if isinstance(part, dict) and "functionResponse" in part:
            out.append(tool_message(part, calls, report, line=line))
        else:
            rest.append(user_part(part, line))
    if rest or not out:
        msg: dict[str, Any] = {"role": "user", "content": as_text(rest)}
        if extra:
            msg[SOURCE_KEY] = extra
        out.append(msg)
    elif extra:
        out[0].setdefault(SOURCE_KEY, {}).update(extra)
    return out


def content_to_messages(content: Any, calls: Calls | None = None, report: Report | None = None, *,
                        line: int | None = None) -> list[dict[str, Any]]:
    """The chat messages of one Gemini content (``calls``: the pairing state, one per history)."""
    if not isinstance(content, dict) or content.get("role") not in ("user", "model", None):
        raise invalid(f"expected a Gemini content {{role: user|model, parts}}, got {describe(content)}", line=line,
                      field="role", hint="Is this a Gemini contents array? Try another --from format")
    calls = calls if calls is not None else Calls()
    parts = _parts(content, line)
    extra = {k: v for k, v in content.items() if k not in ("role", "parts")}
    if content.get("role") == "model":
        return [model_message(parts, calls, report, line=line, extra=extra)]
    return user_messages(parts, calls, report, line=line, extra=extra)


def system_message(value: Any, *, line: int | None = None) -> dict[str, Any] | None:
    """``systemInstruction`` (a content, its parts, or a string) as a system message."""
    if isinstance(value, str):
        return {"role": "system", "content": value} if value else None
    parts = value.get("parts") if isinstance(value, dict) else value
    if isinstance(parts, dict):
        parts = [parts]
    if not isinstance(parts, list) or not all(isinstance(p, dict) and isinstance(p.get("text"), str) for p in parts):
        raise invalid(f"'systemInstruction' is {describe(value)}, expected a content of text parts", line=line,
                      field="systemInstruction")
    if not parts:
        return None
    # One part is the text; several stay parts (joined, they would not come back as written).
    if len(parts) == 1:
        return {"role": "system", "content": parts[0]["text"]}
    return {"role": "system", "content": [{"type": "text", "text": p["text"]} for p in parts]}


class GeminiConverter:
    """Gemini contents in, chat messages out (the readers' converter protocol). Holds the
    last model turn's open calls only."""

    name = "gemini"
    multi = False

    def __init__(self, report: Report | None = None) -> None:
        self.report = report
        self.calls = Calls()
        self._started = False

    def meta(self, key: str, value: Any, *, line: int | None = None) -> list[dict[str, Any]]:
        if key not in ("systemInstruction", "system_instruction"):
            return []
        if self._started:
            note_extra(self.report, "drop_late_system", "'systemInstruction' came after the contents already read",
                       line=line, dropped=value)
            return []
        msg = system_message(value, line=line)
        return [msg] if msg is not None else []

    def feed(self, record: Any, *, line: int | None = None) -> list[dict[str, Any]]:
        self._started = True
        return content_to_messages(record, self.calls, self.report, line=line)

    def close(self) -> list[dict[str, Any]]:
        return []


# --- chat -> Gemini ---------------------------------------------------------------------


def _args(arguments: Any) -> dict[str, Any]:
    """A chat call's ``arguments`` (JSON text) as Gemini's ``args``, which is an object (a
    protobuf Struct): anything else is refused, not guessed at."""
    value = arguments
    if arguments in (None, ""):
        value = {}
    elif isinstance(arguments, str):
        try:
            value = orjson.loads(arguments)
        except orjson.JSONDecodeError:
            value = None
    if not isinstance(value, dict):
        raise invalid(f"a tool call's arguments are not a JSON object: {describe(arguments)}", line=None,
                      field="tool_calls.function.arguments",
                      hint="Gemini takes a call's args as an object; repair the history first (chatnorm repair)")
    return value


def _text_part(part: Any) -> dict[str, Any]:
    """A chat content part as a Gemini part (a part kept whole by the reader goes back as it was)."""
    if isinstance(part, str):
        return {"text": part}
    if isinstance(part, dict) and part.get("type") in ("text", "input_text", "output_text") and isinstance(part.get("text"), str):
        return {"text": part["text"]}
    url = part.get("image_url", {}).get("url") if isinstance(part, dict) and part.get("type") == "image_url" else None
    if isinstance(url, str) and url.startswith("data:") and ";base64," in url:
        mime, data = url[5:].split(";base64,", 1)
        return {"inlineData": {"mimeType": mime, "data": data}}
    if isinstance(url, str):
        return {"fileData": {"fileUri": url}}
    if isinstance(part, dict) and part.get("type") == "thinking" and isinstance(part.get("thinking"), str):
        # Another provider's thinking block (Anthropic's): a thought part. Its signature is that
        # provider's, which Gemini cannot verify (a Part has no field for it): not written.
        return {"text": part["thinking"], "thought": True}
    return dict(part) if isinstance(part, dict) else {"text": str(part)}


def _content_parts(content: Any) -> list[dict[str, Any]]:
    if content is None or content == "":
        return []
    if isinstance(content, str):
        return [{"text": content}]
    return [_text_part(p) for p in content]


def _model_parts(message: dict[str, Any]) -> list[dict[str, Any]]:
    parts = [dict(p) for p in message.get(THOUGHT_KEY) or () if isinstance(p, dict)]
    text = _content_parts(message.get("content"))
    signature = signature_of(message)
    if signature is not None:
        if text and "text" in text[-1]:
            text[-1]["thoughtSignature"] = signature
        else:
            text.append({"text": "", "thoughtSignature": signature})
    parts += text
    for call in message.get("tool_calls") or ():
        fn = call.get("function") or {}
        source = _source(call)
        fc: dict[str, Any] = {"name": fn.get("name"), "args": _args(fn.get("arguments"))}
        if call.get("id") is not None and not source.get(ASSIGNED_ID):
            fc = {"id": call["id"], **fc}
        # Only what Gemini's FunctionCall itself has besides id, name and args: source fields
        # another reader kept (a Responses item's id and status) are no Gemini keys, and an id
        # among them is not the call's.
        fc.update({k: v for k, v in source.items() if k in _CALL_FIELDS})
        part: dict[str, Any] = {"functionCall": fc}
        if signature_of(call) is not None:
            part["thoughtSignature"] = signature_of(call)
        parts.append(part)
    return parts


def _response_part(message: dict[str, Any], names: dict[Any, Any]) -> dict[str, Any]:
    source = _source(message)
    content = message.get("content")
    text = content if isinstance(content, str) else "".join(p.get("text", "") for p in content or () if isinstance(p, dict))
    response: Any = {"output": text}
    if source.get(RESPONSE_JSON):
        try:
            response = orjson.loads(text)
        except orjson.JSONDecodeError:
            pass  # edited since it was read: as text
    call_id = message.get("tool_call_id")
    name = message.get("name") or names.get(call_id) or ""
    fr: dict[str, Any] = {"name": name, "response": response}
    if call_id is not None and not source.get(ASSIGNED_ID):
        fr = {"id": call_id, **fr}
    fr.update({k: v for k, v in source.items() if k not in (ASSIGNED_ID, RESPONSE_JSON)})
    return {"functionResponse": fr}


def message_to_parts(message: dict[str, Any], names: dict[Any, Any] | None = None) -> tuple[str, list[dict[str, Any]]]:
    """``(role, parts)`` of one chat message (``names``: call id -> function name, for a tool
    message with no ``name``). A system message's role is ``"system"``."""
    role = message.get("role")
    if role == "assistant":
        return "model", _model_parts(message)
    if role == "tool":
        return "user", [_response_part(message, names or {})]
    if role in ("system", "developer"):
        return "system", _content_parts(message.get("content"))
    return "user", _content_parts(message.get("content"))


class GeminiWriter:
    """Chat messages in, Gemini contents out: ``feed`` returns the contents a message
    completes (consecutive same-role messages are one content); ``close`` the last one;
    ``system_instruction`` the system messages' parts (None: none)."""

    def __init__(self) -> None:
        self._role: str | None = None
        self._parts: list[dict[str, Any]] = []
        self._names: dict[Any, Any] = {}
        self.system: list[dict[str, Any]] = []

    @property
    def system_instruction(self) -> dict[str, Any] | None:
        return {"parts": self.system} if self.system else None

    def feed(self, message: dict[str, Any]) -> list[dict[str, Any]]:
        role, parts = message_to_parts(message, self._names)
        if role == "system":
            self.system += parts
            return []
        if role == "model":
            self._names = {c.get("id"): (c.get("function") or {}).get("name") for c in message.get("tool_calls") or ()}
        out = self.close() if role != self._role else []
        self._role = role
        self._parts += parts
        return out

    def close(self) -> list[dict[str, Any]]:
        if self._role is None:
            return []
        content = {"role": self._role, "parts": self._parts}
        self._role, self._parts = None, []
        return [content]


class GeminiEncoder(FormatWriter):
    """``--to gemini``: a ``generateContent`` request body, ``{"contents": [...],
    "systemInstruction": {...}}``, one content a line (:class:`GeminiWriter`). The system
    instruction goes after the contents: the system messages are all known only then (JSON
    key order means nothing)."""

    name = "gemini"
    restores_from = frozenset({"gemini", "gemini-cli"})  # (a Gemini CLI session is Gemini parts)

    def __init__(self) -> None:
        self._writer = GeminiWriter()
        self._separator = b"\n"
        self._begun = False
        self.message = self._message

    def _contents(self, contents: list[dict[str, Any]]) -> bytes:
        out = b""
        for content in contents:
            out += self._separator + exact_dumps(content)
            self._separator = b",\n"
        return out

    def begin(self, extra: Mapping[str, Any]) -> bytes:
        self._writer, self._separator, self._begun = GeminiWriter(), b"\n", True
        return b'{"contents":['

    def _message(self, message: Mapping[str, Any]) -> bytes:
        return self._contents(self._writer.feed(message if isinstance(message, dict) else dict(message)))

    def end(self) -> bytes:
        out = self._contents(self._writer.close()) + b"\n]"
        system = self._writer.system_instruction
        if system is not None:
            out += b',"systemInstruction":' + exact_dumps(system)
        return out + b"}\n"

    def finish(self) -> bytes:
        return b"" if self._begun else b'{"contents":[\n]}\n'


# -- the format -----------------------------------------------------------------------------------


def guess(record: dict[str, Any]) -> Clue | None:
    """A Gemini content: a ``user`` or ``model`` role and a ``parts`` list (no other format's
    message has ``parts``)."""
    if record.get("role") in ("user", "model") and isinstance(record.get("parts"), list):
        return Clue(Evidence.PARTS)
    return None


FORMAT: Format = Format("gemini", GeminiConverter, guess, outputs=(Output("gemini", 55, GeminiEncoder),), per_file=True,
                document=DocumentKeys(arrays=("contents",), system_keys=("systemInstruction", "system_instruction"),
                                         body_keys=("contents",)))
