"""Calls paired with their results by position, for the formats whose calls carry no ids
(ShareGPT, LLaMA-Factory's fine-tuning lines).

Both get the same deterministic id, ``call_<conversation>_<n>`` (n counts the calls of the
conversation from 0), so converting the same file twice gives the same output.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .._json import JSONDecodeError, loads
from .._report import Report
from ._common import Turn, count, describe, dumps, invalid, merge_extra

__all__ = ["CallText", "Pairing", "parse_call", "chat_tools"]


@dataclass(frozen=True, slots=True)
class CallText:
    """One call of an id-less format: its function name and its arguments as JSON text."""

    name: str
    arguments: str


class Pairing:
    """Positional call/result pairing for one id-less conversation."""

    def __init__(self, conversation: int, report: Report | None = None, line: int | None = None) -> None:
        self.report = report
        self.line = line
        self.prefix = f"call_{conversation}_"
        self.n = 0
        self.turn: Turn | None = None
        self.unanswered: list[str] = []
        self.out: list[dict[str, Any]] = []
        self.orphans = 0

    def flush(self) -> None:
        if self.turn is not None:
            self.out.extend(self.turn.flush())
            self.turn = None

    def emit(self, msg: dict[str, Any]) -> None:
        self.flush()
        self.unanswered = []  # a non-tool message ends the previous call round
        self.out.append(msg)

    def message(self, role: str, content: Any, extra: dict[str, Any]) -> None:
        self.emit(merge_extra({"role": role, "content": content}, extra, self.report, line=self.line))

    def assistant(self, texts: list[str], reasoning: list[str], calls: list[CallText], extra: dict[str, Any]) -> None:
        if self.turn is None or self.turn.calls or not calls or texts or reasoning:
            # A new model turn, unless this only adds calls to a text turn still pending.
            self.flush()
            self.turn = Turn()
        turn = self.turn
        turn.texts.extend(texts)
        turn.reasoning.extend(reasoning)
        for k, v in extra.items():
            turn.extra.setdefault(k, v)
        self.unanswered = []
        for call in calls:
            call_id = f"{self.prefix}{self.n}"
            self.n += 1
            turn.calls.append({"id": call_id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}})
            self.unanswered.append(call_id)

    def result(self, content: Any, extra: dict[str, Any]) -> None:
        self.flush()
        # LLaMA-Factory packs the results of parallel calls into one tool message, as a JSON
        # list of {"tool_call_id"?, "name", "content"}: split it so each call gets its answer.
        if len(self.unanswered) > 1 and isinstance(content, str):
            parts = _parallel_results(content, len(self.unanswered), self.line)
            if parts is not None:
                for part in parts:
                    self._one(part, extra)
                return
        self._one(content, extra)

    def _one(self, content: Any, extra: dict[str, Any]) -> None:
        if self.unanswered:
            call_id = self.unanswered.pop(0)
        else:
            call_id = f"{self.prefix}orphan_{self.orphans}"  # answers nothing: the core decides
            self.orphans += 1
        if isinstance(extra.get("tool_call_id"), str):
            call_id = extra["tool_call_id"]  # the record names its call itself
        self.out.append(merge_extra({"role": "tool", "tool_call_id": call_id, "content": content}, extra, self.report, line=self.line))

    def close(self) -> list[dict[str, Any]]:
        self.flush()
        return self.out


def _parallel_results(text: str, n: int, line: int | None) -> list[str] | None:
    try:
        value = loads(text)
    except JSONDecodeError:
        return None
    if not (isinstance(value, list) and len(value) == n and all(isinstance(v, dict) and "content" in v and "name" in v for v in value)):
        return None
    return [v["content"] if isinstance(v["content"], str) else dumps(v["content"], line=line, what="a parallel tool result's content") for v in value]


def parse_call(value: Any, line: int | None, where: str) -> list[CallText]:
    """The calls (name, arguments JSON) of a ShareGPT function_call / LLaMA-Factory tool_call value."""
    if isinstance(value, str):
        try:
            value = loads(value)
        except JSONDecodeError as exc:
            raise invalid(f"{where} is not JSON ({exc})", line=line, hint='Expected {"name": ..., "arguments": {...}}') from None
    items = value if isinstance(value, list) else [value]
    calls = []
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            raise invalid(f"{where} is {describe(item)}, expected {{\"name\": <string>, \"arguments\"}}", line=line)
        args = item.get("arguments", {})
        calls.append(CallText(item["name"], args if isinstance(args, str) else dumps(args, line=line, what=f"{where} arguments")))
    return calls


def chat_tools(value: Any, report: Report | None) -> Any:
    """LLaMA-Factory keeps ``tools`` as a JSON string of bare function schemas; the chat shape
    is a list of ``{"type": "function", "function": schema}``. Anything else is kept as is."""
    if isinstance(value, str):
        try:
            parsed = loads(value)
        except JSONDecodeError:
            return value
        if not isinstance(parsed, list):
            return value
        count(report, "convert_tools_string")
        value = parsed
    if isinstance(value, list):
        return [t if not isinstance(t, dict) or "type" in t else {"type": "function", "function": t} for t in value]
    return value

