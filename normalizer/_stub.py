"""Stub a missing result: the one home of the synthetic result for a call that never got one.

Everything that says or shapes it lives here, for the core (a chat ``tool`` message) and
for the session editor (a line in the tool's own format, ``formats/_sessions.py``): the text
(:data:`DEFAULT_STUB_TEXT`, ``stub_text`` overrides it), the record's kind and sentence
(:func:`stub_detail`), and the shapes (:func:`chat_stub`, :func:`claude_code_stub`,
:func:`codex_stub`, :func:`gemini_stub` / :func:`gemini_cli_stub_record`). Rewording the stub touches this file only.

Also here, as the other halves of the same pairing decision, asked by both: what a result
that answers no open call is (:func:`stray_result_kind`), and what calls left open at the
end get (:func:`trailing_policy`).

Imports nothing of the package, and the session shapes' modules (uuid, datetime, re) only
when a session stub is made: the command line's option declarations read the default text
(through ``_defaults``) without loading the core or those.
"""

from __future__ import annotations

from collections.abc import Container
from typing import Any, Final

__all__ = [
    "DEFAULT_STUB_TEXT",
    "STUB_KIND",
    "stub_detail",
    "chat_stub",
    "claude_code_stub",
    "codex_stub",
    "gemini_stub",
    "gemini_cli_stub_record",
    "stub_stamp",
    "stray_result_kind",
    "trailing_policy",
]

#: The synthetic result for a call that never got one. Worded as a fact about the record,
#: not as tool output: hermes' "see context summary above" made models invent results
#: (hermes.md G13).
DEFAULT_STUB_TEXT = "[no result: this tool call was not answered in the stored history]"

#: The record kind of a stub, in the core's report and the session editor's.
STUB_KIND: Final = "stub_missing_result"


def stub_detail(call_id: str, line: int | None = None, call_kind: str = "") -> str:
    """The record's sentence for a stub. Two variants, each kept as it was worded: the
    core's (a chat message: ``call_id`` only; made lazily, as ``Note.detail``) and the
    session editor's (``line``: the call's line; ``call_kind``: ``tool_use`` for Claude
    Code, whose stub is a ``tool_result``, else the Codex item's type)."""
    if line is None:
        return f"call {call_id!r} had no result; added a stub result"
    if call_kind == "functionCall":  # Gemini CLI: a response part in the call's record, or a record after it
        return f"call {call_id} (line {line}) was not answered; a synthetic functionResponse was added"
    written_as = "tool_result" if call_kind == "tool_use" else call_kind + "_output"
    return f"call {call_id} (line {line}) was not answered; a synthetic {written_as} line was added"


def chat_stub(call_id: str, text: str) -> dict[str, Any]:
    """The core's stub: a chat ``tool`` message."""
    return {"role": "tool", "tool_call_id": call_id, "content": text}


def stray_result_kind(call_id: Any, *answered: Container[Any]) -> str:
    """What a result that answers no open call is: ``"duplicate_result"`` when its call was
    answered already (in any of ``answered``), else ``"orphan_result"`` (its turn made no
    such call). The core and the session editor record it so."""
    return "duplicate_result" if any(call_id in ids for ids in answered) else "orphan_result"


def trailing_policy(trailing_calls: str, moved_on: bool) -> str:
    """What calls still unanswered at the end of a history get: ``trailing_calls`` (stub,
    keep, drop), unless the conversation moved on after them (a message came after them
    while they waited): then they were not trailing, and get stubs. The core and the
    session editor decide it so."""
    return "stub" if moved_on else trailing_calls


# -- in a session file's own format

#: Synthetic Claude Code lines get a uuid derived from the call's tool_use line and the call
#: (uuid5 in this namespace): fresh, one per call line (an id left open in two turns gets
#: two), and the same for the same repair (the output is reproducible).
_NAMESPACE: Final = "6f3c3b2e-4a43-5c1b-9a2e-636861746e6f"


def claude_code_stub(source: dict[str, Any], call_id: str, text: str, timestamp: Any) -> dict[str, Any]:
    """A Claude Code ``user`` line with a ``tool_result`` block (``is_error: true``) for the
    call ``call_id`` of the ``tool_use`` line ``source``: that line's envelope (the keys
    before ``message``), a uuid derived from its and the call's, ``toolUseResult``."""
    import uuid
    # Results hang from their tool_use line (2.1 on); one whose uuid is no string is no
    # link of the chain (classify), so the stub hangs from the line before it, as before 2.1.
    tree = _version(source.get("version")) >= (2, 1) and isinstance(source.get("uuid"), str)
    line: dict[str, Any] = {"parentUuid": source.get("uuid") if tree else None}
    for key, value in source.items():  # the envelope: the keys before "message"
        if key == "message":
            break
        if key != "parentUuid":
            line[key] = value
    line["type"] = "user"
    line["message"] = {"role": "user", "content": [
        {"tool_use_id": call_id, "type": "tool_result", "content": text, "is_error": True}]}
    line["uuid"] = str(uuid.uuid5(uuid.UUID(_NAMESPACE), f"{source.get('uuid')}/{call_id}"))
    if timestamp is not None:
        line["timestamp"] = timestamp
    line["toolUseResult"] = f"Error: {text}"
    if tree:
        line["sourceToolAssistantUUID"] = source.get("uuid")
    return line


def codex_stub(call_id: str, call_kind: str, text: str, timestamp: Any) -> dict[str, Any]:
    """A Codex ``response_item``: ``function_call_output`` (``custom_tool_call_output`` for
    a custom call)."""
    kind = "custom_tool_call_output" if call_kind == "custom_tool_call" else "function_call_output"
    line: dict[str, Any] = {}
    if timestamp is not None:
        line["timestamp"] = timestamp
    line["type"] = "response_item"
    line["payload"] = {"type": kind, "call_id": call_id, "output": text}
    return line


def gemini_stub(call_id: Any, name: Any, text: str) -> dict[str, Any]:
    """A Gemini ``functionResponse`` part answering the call ``call_id`` (its ``name``), the
    text as ``{"output": text}``, as Gemini CLI sends a tool's output (and the gemini writer a
    chat ``tool`` message)."""
    response: dict[str, Any] = {"name": name, "response": {"output": text}}
    if call_id is not None:
        response = {"id": call_id, **response}
    return {"functionResponse": response}


def gemini_cli_stub_record(model: dict[str, Any], parts: list[dict[str, Any]]) -> dict[str, Any]:
    """A Gemini CLI ``user`` message record holding the stub ``parts`` for calls of the
    ``gemini`` record ``model`` (one the CLI rewrote: its calls are ``content`` parts, so no
    ``toolCalls[].result`` can hold them): an id derived from the model record's and the
    calls' (uuid5: the same for the same repair), the model record's timestamp."""
    import uuid
    ids = ",".join(str(p["functionResponse"].get("id")) for p in parts)
    record: dict[str, Any] = {"id": str(uuid.uuid5(uuid.UUID(_NAMESPACE), f"{model.get('id')}/{ids}"))}
    if "timestamp" in model:
        record["timestamp"] = model["timestamp"]
    record["type"] = "user"
    record["content"] = parts
    return record


def _version(value: Any) -> tuple[int, int]:
    import re
    match = re.match(r"(\d+)\.(\d+)", value) if isinstance(value, str) else None
    return (int(match.group(1)), int(match.group(2))) if match else (0, 0)


def stub_stamp(stamp: Any, ms: int) -> Any:
    """``stamp`` (Claude Code's ``toISOString()``, ``2025-12-17T01:45:59.662Z``) ``ms``
    milliseconds later; anything else as it is.

    A synthetic result must be later than the line before it: Claude Code 2.0.76 (tried
    against the real binary, issue 35) resumes from the line with the latest timestamp, and
    of two with the same from the one written first (its ``cli.js`` sorts the lines by
    timestamp, newest first, with a stable sort), so a stub stamped like its ``tool_use`` line
    was never loaded, nor the call: the request was the original's. The n-th stub of a turn is
    n ms later, since 2.0 chains them one after the other. Today's versions follow the chain
    from the file's last line and are indifferent to it (tests/owners runs both)."""
    import re
    from datetime import datetime, timedelta

    if not isinstance(stamp, str) or not re.fullmatch(_ISO_MS, stamp):
        return stamp
    when = datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S.%fZ") + timedelta(milliseconds=ms)
    return when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"


_ISO_MS: Final = r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z"  # (re caches it compiled)
