"""Chat-shaped inputs: Chat Completions messages, fine-tuning JSONL, ShareGPT (formats.md §4).

* ``chat``: messages as they are (the core validates and repairs them). A hermes session
  snapshot's ``system_prompt`` becomes the leading system message.
* ``finetune``: one conversation per line, ``{"messages": [...], "tools": [...], ...}``; the
  other keys are kept untouched. LLaMA-Factory "v1" lines (content parts ``{"type":
  "text"|"reasoning"|"tool_call", "value"}``, ``tool`` messages without ids) are converted.
* ``sharegpt``: ``{"conversations": [{"from", "value"}], "system"?, "tools"?}`` per record.

ShareGPT and LLaMA-Factory calls carry no ids: results are paired with calls by position and
both get the same deterministic id, ``call_<conversation>_<n>`` (n counts the calls of the
conversation from 0), so converting the same file twice gives the same output.
"""

from __future__ import annotations

from typing import Any

from .._json import JSONDecodeError, loads
from .._report import Report
from ._common import Turn, count, describe, dumps, invalid, merge_extra, note_extra

__all__ = ["ChatConverter", "FinetuneConverter", "ShareGPTConverter"]


class ChatConverter:
    """Chat Completions messages in, the same messages out (validation is the core's job)."""

    name = "chat"
    multi = False

    def __init__(self, report: Report | None = None) -> None:
        self.report = report
        self._started = False

    def meta(self, key: str, value: Any, *, line: int | None = None) -> list[dict[str, Any]]:
        # hermes session snapshots keep the system prompt next to the messages (§3.3).
        if key == "system_prompt" and isinstance(value, str) and value:
            if self._started:
                note_extra(self.report, "drop_late_system", "'system_prompt' came after the messages already read (from "
                           "a stream, the messages are held only up to max_record_bytes: read the file itself to "
                           "place it first)", line=line, dropped=value)
                return []
            return [{"role": "system", "content": value}]
        return []

    def feed(self, record: Any, *, line: int | None = None) -> list[dict[str, Any]]:
        if not isinstance(record, dict) or not isinstance(record.get("role"), str):
            raise invalid(
                f"expected a chat message {{role, content}}, got {describe(record)}",
                line=line,
                field="role",
                hint="Is this a chat history? Try another --from format",
            )
        self._started = True
        return [record]

    def close(self) -> list[dict[str, Any]]:
        return []


class _Pairing:
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

    def assistant(self, texts: list[str], reasoning: list[str], calls: list[tuple[str, str]], extra: dict[str, Any]) -> None:
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
        for name, arguments in calls:
            call_id = f"{self.prefix}{self.n}"
            self.n += 1
            turn.calls.append({"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}})
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


def _parse_call(value: Any, line: int | None, where: str) -> list[tuple[str, str]]:
    """(name, arguments JSON) of a ShareGPT function_call / LLaMA-Factory tool_call value."""
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
        calls.append((item["name"], args if isinstance(args, str) else dumps(args, line=line, what=f"{where} arguments")))
    return calls


def _tools(value: Any, report: Report | None) -> Any:
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
        return self.split(record, line=line)[0]

    def close(self) -> list[dict[str, Any]]:
        return []

    def split(self, record: Any, *, line: int | None = None) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """The conversation's messages, and its other keys (``tools`` in the chat shape)."""
        turns = record.get("conversations") if isinstance(record, dict) else None
        if not isinstance(turns, list):
            raise invalid(f"expected a ShareGPT record {{\"conversations\": [...]}}, got {describe(record)}", line=line, field="conversations")
        pairing = _Pairing(self._n, self.report, line)
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
                pairing.assistant([], [], _parse_call(value, line, where), extra)
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
            other["tools"] = _tools(other["tools"], self.report)
        return pairing.close(), other


class FinetuneConverter:
    """One fine-tuning line ``{"messages": [...], ...}`` in, that conversation out."""

    name = "finetune"
    multi = True

    def __init__(self, report: Report | None = None) -> None:
        self.report = report
        self._n = 0

    def feed(self, record: Any, *, line: int | None = None) -> list[dict[str, Any]]:
        return self.split(record, line=line)[0]

    def close(self) -> list[dict[str, Any]]:
        return []

    def split(self, record: Any, *, line: int | None = None) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        messages = record.get("messages") if isinstance(record, dict) else None
        if not isinstance(messages, list):
            raise invalid(f"expected a fine-tuning record {{\"messages\": [...]}}, got {describe(record)}", line=line, field="messages")
        if any(_is_v1(m) for m in messages):
            out = self._v1(messages, line)
            count(self.report, "convert_llamafactory_v1")
        else:
            for i, m in enumerate(messages):
                if not isinstance(m, dict) or not isinstance(m.get("role"), str):
                    raise invalid(f"messages[{i}] is {describe(m)}, expected a chat message", line=line, field=f"messages.{i}")
            out = list(messages)
        self._n += 1
        other = {k: v for k, v in record.items() if k != "messages"}
        if isinstance(other.get("tools"), str):
            other["tools"] = _tools(other["tools"], self.report)
        return out, other

    def _v1(self, messages: list[Any], line: int | None) -> list[dict[str, Any]]:
        pairing = _Pairing(self._n, self.report, line)
        for i, m in enumerate(messages):
            where = f"messages[{i}]"
            if not isinstance(m, dict) or not isinstance(m.get("role"), str):
                raise invalid(f"{where} is {describe(m)}, expected a message", line=line)
            role, content = m["role"], m.get("content")
            extra = {k: v for k, v in m.items() if k not in ("role", "content")}
            texts, reasoning, calls = _v1_parts(content, line, where)
            if role == "assistant":
                pairing.assistant(texts, reasoning, calls, extra)
            elif role == "tool":
                pairing.result("".join(texts), extra)
            else:
                pairing.message(role, "".join(texts), extra)
        return pairing.close()


def _is_v1(message: Any) -> bool:
    content = message.get("content") if isinstance(message, dict) else None
    return isinstance(content, list) and any(isinstance(p, dict) and "value" in p and "text" not in p for p in content)


def _v1_parts(content: Any, line: int | None, where: str) -> tuple[list[str], list[str], list[tuple[str, str]]]:
    if isinstance(content, str):
        return [content], [], []
    if not isinstance(content, list):
        raise invalid(f"{where} content is {describe(content)}", line=line)
    texts: list[str] = []
    reasoning: list[str] = []
    calls: list[tuple[str, str]] = []
    for part in content:
        if not isinstance(part, dict):
            raise invalid(f"{where} content part is {describe(part)}", line=line)
        kind, value = part.get("type"), part.get("value", part.get("text", ""))
        if kind == "reasoning":
            reasoning.append(value if isinstance(value, str) else dumps(value, line=line, what=f"{where} reasoning"))
        elif kind == "tool_call":
            calls.extend(_parse_call(value, line, f"{where} tool_call"))
        else:
            texts.append(value if isinstance(value, str) else dumps(value, line=line, what=f"{where} content"))
    return texts, reasoning, calls
