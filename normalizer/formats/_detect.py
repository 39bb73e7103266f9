"""Format detection from the first records of a file."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from .._errors import InputError
from ._claude import CLAUDE_LINE_TYPES
from ._codex import CODEX_LINE_TYPES

__all__ = ["detect_format", "decide", "guess", "nothing_recognised", "DETECT_RECORDS", "SESSION_FORMATS"]

#: The formats a session file can be repaired in (``--to claude-code``, ``--to codex``; see
#: ``_sessions``). Here, not there: the command line asks it of every input, and a chat
#: file must not load the session repairers to be told it is not a session.
SESSION_FORMATS = ("claude-code", "codex")

#: Records looked at before settling on a weak guess (a plain ``{"role", "content"}`` could
#: be Chat, Anthropic or Responses; a later record with tool calls usually tells).
DETECT_RECORDS = 16

_RESPONSES_ITEMS = {
    "message", "reasoning", "function_call", "function_call_output", "custom_tool_call",
    "custom_tool_call_output", "local_shell_call", "local_shell_call_output", "web_search_call",
    "item_reference", "compaction",
}
_ANTHROPIC_BLOCKS = {"tool_use", "tool_result", "thinking", "redacted_thinking"}
_RESPONSES_PARTS = {"input_text", "output_text", "input_image", "input_file", "refusal"}
_CLAUDE_KEYS = ("uuid", "parentUuid", "sessionId", "leafUuid", "messageId")


def guess(record: Any) -> tuple[str | None, bool]:
    """``(format, decisive)`` for one record; ``(None, False)`` when it says nothing."""
    if not isinstance(record, dict):
        return None, False
    kind = record.get("type")
    if not isinstance(kind, str):
        kind = None  # a record may hold anything there (a list, an object): it says nothing
    if "payload" in record and kind in CODEX_LINE_TYPES:
        return "codex", True
    if kind in CLAUDE_LINE_TYPES and any(k in record for k in _CLAUDE_KEYS):
        return "claude-code", True
    if isinstance(record.get("conversations"), list):
        return "sharegpt", True
    if isinstance(record.get("messages"), list):
        return "finetune", True
    if kind in _RESPONSES_ITEMS:
        return "responses", True
    if isinstance(record.get("role"), str):
        content = record.get("content")
        if isinstance(content, list):
            types = {p.get("type") for p in content if isinstance(p, dict) and isinstance(p.get("type"), str)}
            if types & _ANTHROPIC_BLOCKS or any(isinstance(p, dict) and p.get("type") == "image" and "source" in p for p in content):
                return "anthropic", True
            if types & _RESPONSES_PARTS:
                return "responses", True
        if record["role"] == "tool" or "tool_calls" in record or "tool_call_id" in record:
            return "chat", True
        return "chat", False
    return None, False


def detect_format(first_records: Sequence[Any], *, hint: str | None = None) -> str:
    """The format name (a key of :data:`FORMATS`) the first records of a file are in.

    Args:
        first_records: decoded records from the start of the file (one is often enough;
            up to :data:`DETECT_RECORDS` are useful).
        hint: what the container said: ``"input"`` for a document's ``input`` array
            (a Responses request), ``"system"`` when a document has a top-level ``system``
            (an Anthropic request).

    Raises:
        InputError: nothing in the records looks like a known format.
    """
    return decide(map(guess, first_records), hint=hint)


def decide(guesses: Iterable[tuple[str | None, bool]], *, hint: str | None = None) -> str:
    """:func:`detect_format` from :func:`guess`'s verdicts on the first records, for a caller
    that guessed each record as it read it (so none is guessed twice). Taken lazily: none is
    asked for past a decisive one."""
    weak: str | None = None
    records = False
    for name, decisive in guesses:
        if decisive:
            assert name is not None
            return name
        records = True
        weak = weak or name
    if hint == "input":
        return "responses"
    if hint == "system" and weak == "chat":
        return "anthropic"
    if weak is not None:
        return weak
    if not records:
        return "chat"  # an empty input is an empty chat history
    raise InputError(
        "cannot tell the format of this input",
        hint="Name it with --from (chat, responses, codex, claude-code, anthropic, sharegpt, finetune)",
    )


def nothing_recognised(fmt: str, guesses: list[tuple[str | None, bool]], known: Iterable[str],
                       source: str | None) -> InputError:
    """The error for a file in which no record was recognised as ``fmt``: the format its
    records look like (``guesses``: :func:`guess` of the first ones), when one does."""
    likely = next((name for name, decisive in guesses if decisive), None)
    likely = likely or next((name for name, _ in guesses if name is not None), None)
    what = f"no record of this file was recognised as {fmt}"
    if likely is not None and likely != fmt:
        return InputError(f"{what}; it looks like {likely}", source=source,
                          hint=f"Read it with --from {likely} (in Python: format={likely!r})")
    return InputError(f"{what}, and it looks like none of the known formats", source=source,
                      hint=f"Name its format with --from (in Python: format=...): one of {', '.join(known)}")
