"""The ``sharegpt`` format: ShareGPT / LLaMA-Factory ``conversations``, one conversation per
record (formats.md §4): ``{"conversations": [{"from", "value"}], "system"?, "tools"?}``.

Its calls carry no ids: results are paired with calls by position (``_pairing``).
"""

from __future__ import annotations

from typing import Any

from .._report import Report
from ._common import SplitRecord, describe, dumps, invalid
from ._format import Clue, Evidence, Format
from ._pairing import Pairing, chat_tools, parse_call

__all__ = ["ShareGPTConverter", "guess", "FORMAT"]

_SHAREGPT_ROLES = {
    "human": "user", "user": "user", "gpt": "assistant", "assistant": "assistant",
    "model": "assistant", "chatgpt": "assistant", "system": "system",
}
_SHAREGPT_CALLS = {"function_call", "tool_call"}
_SHAREGPT_RESULTS = {"observation", "tool", "function", "ipython"}


class ShareGPTConverter:
    """One ShareGPT / LLaMA-Factory record in, that conversation's chat messages out."""

    name = "sharegpt"
    multi = True

    def __init__(self, report: Report | None = None) -> None:
        self.report = report
        self._n = 0

    def feed(self, record: Any, *, line: int | None = None) -> list[dict[str, Any]]:
        return self.split(record, line=line).messages

    def close(self) -> list[dict[str, Any]]:
        return []

    def split(self, record: Any, *, line: int | None = None) -> SplitRecord:
        """The conversation's messages, and its other keys (``tools`` in the chat shape)."""
        turns = record.get("conversations") if isinstance(record, dict) else None
        if not isinstance(turns, list):
            raise invalid(f"expected a ShareGPT record {{\"conversations\": [...]}}, got {describe(record)}", line=line, field="conversations")
        pairing = Pairing(self._n, self.report, line)
        system = record.get("system")
        if isinstance(system, str) and system:
            pairing.emit({"role": "system", "content": system})
        for i, turn in enumerate(turns):
            where = f"conversations[{i}]"
            if not isinstance(turn, dict) or not isinstance(turn.get("from"), str):
                raise invalid(f"{where} is {describe(turn)}, expected {{\"from\", \"value\"}}", line=line)
            source, value = turn["from"], turn.get("value", "")
            extra = {k: v for k, v in turn.items() if k not in ("from", "value")}
            if source in _SHAREGPT_CALLS:
                pairing.assistant([], [], parse_call(value, line, where), extra)
            elif source in _SHAREGPT_RESULTS:
                pairing.result(value if isinstance(value, str) else dumps(value, line=line, what=f"{where} value"), extra)
            elif source in _SHAREGPT_ROLES:
                role = _SHAREGPT_ROLES[source]
                text = value if isinstance(value, str) else dumps(value, line=line, what=f"{where} value")
                if role == "assistant":
                    pairing.assistant([text], [], [], extra)
                else:
                    pairing.message(role, text, extra)
            else:
                raise invalid(f"{where} has unknown 'from' {source!r}", line=line, hint="Expected human, gpt, system, function_call or observation")
        self._n += 1
        other = {k: v for k, v in record.items() if k not in ("conversations", "system")}
        if "tools" in other:
            other["tools"] = chat_tools(other["tools"], self.report)
        return SplitRecord(messages=pairing.close(), extra=other)


def guess(record: dict[str, Any]) -> Clue | None:
    """A record that holds a ``conversations`` list."""
    return Clue(Evidence.CONVERSATION) if isinstance(record.get("conversations"), list) else None


FORMAT: Format = Format("sharegpt", ShareGPTConverter, guess, source_fields=False)
