"""Claude Code session JSONL and Anthropic Messages lists -> chat messages (formats.md §2).

Both store content as Anthropic blocks: ``text``, ``thinking``, ``tool_use`` in assistant
messages, ``tool_result`` in user messages. Conversion (§2.3):

* ``text`` -> ``content``; ``thinking`` -> ``reasoning_content``, and the block itself (with
  its ``signature``) is kept whole in ``thinking_blocks`` (LiteLLM's key) for replay to
  Anthropic; ``redacted_thinking`` is kept there too.
* ``tool_use`` -> ``tool_calls`` with ``arguments = json(input)``.
* ``tool_result`` -> one ``tool`` message each, in call order; ``is_error`` is kept as a key.

Claude Code writes one line per content block, so the lines of one API response share
``message.id`` and are merged into one assistant message (exact-duplicate blocks, which
streaming snapshots produce, are dropped and counted). The turn stays pending while its
results arrive -- in any order, across snapshot, system and sidechain lines -- and ends at the
next line that carries new content.
"""

from __future__ import annotations

from typing import Any

from .._report import Report
from ._common import Turn, as_text, canonical, count, describe, dumps, invalid, merge_extra, note_extra, string_id, text_parts

__all__ = ["ClaudeCodeConverter", "AnthropicConverter", "CLAUDE_LINE_TYPES"]

#: Line types Claude Code writes that carry no conversation (and some that do). Used by
#: format detection; unknown types are skipped and counted anyway.
CLAUDE_LINE_TYPES = frozenset({
    "user", "assistant", "system", "summary", "file-history-snapshot", "queue-operation",
    "last-prompt", "progress", "attachment", "permission-mode", "custom-title", "ai-title",
    "agent-name", "pr-link", "worktree-state",
})

THINKING_KEY = "thinking_blocks"

_Op = tuple[str, Any]


class _BlockConverter:
    """The shared machinery: assistant blocks into a pending turn, user blocks out."""

    def __init__(self, report: Report | None) -> None:
        self.report = report
        self._turn: Turn | None = None

    def flush(self) -> list[dict[str, Any]]:
        turn, self._turn = self._turn, None
        return turn.flush() if turn is not None else []

    def close(self) -> list[dict[str, Any]]:
        return self.flush()

    # Parsing is separate from applying so that an invalid record changes no state.

    def _assistant_ops(self, content: Any, line: int | None) -> list[_Op]:
        if isinstance(content, str):
            return [("text", content)]
        if content is None:
            return []
        if not isinstance(content, list):
            raise invalid(f"assistant content is {describe(content)}, expected a list of blocks", line=line, field="content")
        ops: list[_Op] = []
        for block in content:
            if not isinstance(block, dict):
                raise invalid(f"assistant content block is {describe(block)}", line=line, field="content")
            kind = block.get("type")
            if kind == "text":
                ops.append(("text", block.get("text") if isinstance(block.get("text"), str) else ""))
                extra = {k: v for k, v in block.items() if k not in ("type", "text")}
                if extra:  # e.g. citations: a Chat message's text has no room for them
                    note_extra(self.report, "drop_block_fields", f"text block fields {sorted(extra)} have no place in a Chat message; kept here", line=line, dropped=extra)
            elif kind == "tool_use":
                name = block.get("name")
                if not isinstance(name, str):
                    raise invalid(f"a 'tool_use' block needs a string 'name', got {describe(name)}", line=line, field="content.name")
                call: dict[str, Any] = {
                    "id": string_id(block.get("id"), line=line, what="a 'tool_use' block's 'id'", field="content.id"),
                    "type": "function",
                    "function": {"name": name, "arguments": dumps(block.get("input", {}), line=line, what="a 'tool_use' block's 'input'")},
                }
                # Other keys (e.g. "caller" on newer lines) are kept, never over the call's own.
                merge_extra(call, {k: v for k, v in block.items() if k not in ("type", "id", "name", "input")}, self.report, line=line)
                ops.append(("call", call))
            elif kind in ("thinking", "redacted_thinking"):
                ops.append(("thinking", block))
            else:
                ops.append(("other", block))
        return ops

    def _keys(self, ops: list[_Op], blocks: Any, line: int | None) -> list[bytes]:
        """Each block's duplicate-detection key (computed before any state changes: a block
        too deep to encode rejects the whole record)."""
        return [canonical(blocks[i] if isinstance(blocks, list) else blocks, line=line, what="an assistant content block") for i in range(len(ops))]

    def _apply(self, turn: Turn, ops: list[_Op], keys: list[bytes], line: int | None) -> None:
        for (op, value), key in zip(ops, keys):
            if key in turn.seen:
                count(self.report, "skip_duplicate_block")
                continue
            turn.seen.add(key)
            if op == "text":
                turn.texts.append(value)
            elif op == "call":
                turn.calls.append(value)
            elif op == "thinking":
                if isinstance(value.get("thinking"), str):
                    turn.reasoning.append(value["thinking"])
                turn.preserve(THINKING_KEY, value)
            else:
                # server_tool_use, web_search_tool_result, ...: no Chat equivalent.
                note_extra(self.report, "drop_block", f"{value.get('type')!r} block has no Chat equivalent; left out", line=line, dropped=value)

    def _user_parts(self, content: Any, line: int | None) -> tuple[list[dict[str, Any]], Any]:
        """Tool messages and the user content (None when there is none) of a user message."""
        if isinstance(content, str):
            return [], content
        if not isinstance(content, list):
            raise invalid(f"user content is {describe(content)}, expected a string or a list of blocks", line=line, field="content")
        results: list[dict[str, Any]] = []
        rest: list[Any] = []
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                results.append(self._result(block, line))
            else:
                rest.append(block)
        user = as_text(text_parts(rest, line=line, where="user content")) if rest else None
        return results, user

    def _result(self, block: dict[str, Any], line: int | None) -> dict[str, Any]:
        call_id = block.get("tool_use_id")
        if not isinstance(call_id, str):
            raise invalid(f"a 'tool_result' block needs a string 'tool_use_id', got {describe(call_id)}", line=line, field="content.tool_use_id")
        content = block.get("content")
        if content is None:
            content = ""
        elif not isinstance(content, str):
            content = as_text(text_parts(content if isinstance(content, list) else [content], line=line, where="tool_result content"))
        msg: dict[str, Any] = {"role": "tool", "tool_call_id": call_id, "content": content}
        # is_error stays: an error result is still the call's answer.
        return merge_extra(msg, {k: v for k, v in block.items() if k not in ("type", "tool_use_id", "content")}, self.report, line=line)

    def _assistant(self, content: Any, key: Any, line: int | None, extra: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        ops = self._assistant_ops(content, line)
        keys = self._keys(ops, content, line)
        out: list[dict[str, Any]] = []
        if self._turn is None or key is None or self._turn.key != key:
            out = self.flush()
            self._turn = Turn(key)
        if extra:
            for k, v in extra.items():
                self._turn.extra.setdefault(k, v)
        self._apply(self._turn, ops, keys, line)
        return out

    def _user(self, content: Any, line: int | None, extra: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        results, user = self._user_parts(content, line)
        out: list[dict[str, Any]] = []
        if self._turn is not None:
            self._turn.results.extend(results)
        else:
            out.extend(results)  # results with no turn before them: the core decides
        if user is not None:
            out.extend(self.flush())
            msg: dict[str, Any] = {"role": "user", "content": user}
            if extra:
                msg.update(extra)
            out.append(msg)
        return out


class ClaudeCodeConverter(_BlockConverter):
    """Claude Code session lines in, chat messages out.

    Args:
        report: where skipped lines are counted and dropped content is recorded.
        keep_sidechains: convert sub-agent (``isSidechain``) lines into conversations of
            their own, collected by :meth:`take_sidechains`, instead of dropping them.
        keep_meta: keep ``isMeta`` user lines (harness-injected text) as user messages.
    """

    name = "claude-code"
    multi = False

    def __init__(self, report: Report | None = None, *, keep_sidechains: bool = False, keep_meta: bool = False) -> None:
        super().__init__(report)
        self.keep_sidechains = keep_sidechains
        self.keep_meta = keep_meta
        self._side: ClaudeCodeConverter | None = None
        self._side_messages: list[dict[str, Any]] = []
        self._sidechains: list[list[dict[str, Any]]] = []

    def feed(self, record: Any, *, line: int | None = None) -> list[dict[str, Any]]:
        if not isinstance(record, dict) or not isinstance(record.get("type"), str):
            raise invalid(
                f"expected a Claude Code session line with a 'type', got {describe(record)}",
                line=line,
                hint="Is this a Claude Code session file? Try another --from format",
            )
        kind = record["type"]
        if kind not in ("user", "assistant"):
            count(self.report, f"skip_{kind}" if kind in CLAUDE_LINE_TYPES else "skip_unknown_line")
            return []
        message = record.get("message")
        if not isinstance(message, dict):
            raise invalid(f"{kind} line has message {describe(message)}, expected an object", line=line, field="message")
        if record.get("isSidechain"):
            return self._sidechain(record, line)
        if kind == "assistant":
            if message.get("model") == "<synthetic>" or record.get("isApiErrorMessage"):
                # Harness-made error text ("API Error: 529 ...") is not a model turn (A6).
                note_extra(self.report, "drop_synthetic", "synthetic assistant line (harness error message) left out", line=line, dropped=record)
                return []
            key = message.get("id") or record.get("requestId") or record.get("uuid")
            return self._assistant(message.get("content"), key, line)
        if record.get("isMeta") and not self.keep_meta:
            note_extra(self.report, "drop_meta", "isMeta user line (harness-injected text) left out", line=line, dropped=record)
            return []
        if record.get("isCompactSummary"):
            count(self.report, "compact_summary")
        return self._user(message.get("content"), line)

    def close(self) -> list[dict[str, Any]]:
        out = self.flush()
        self._end_sidechain()
        return out

    def take_sidechains(self) -> list[list[dict[str, Any]]]:
        """Sub-agent conversations completed so far (with ``keep_sidechains``)."""
        done, self._sidechains = self._sidechains, []
        return done

    def _sidechain(self, record: dict[str, Any], line: int | None) -> list[dict[str, Any]]:
        if not self.keep_sidechains:
            # A4: a sub-agent's prompt between a Task call and its result is not a user turn.
            note_extra(self.report, "drop_sidechain", f"sub-agent ({record['type']}) line left out of the main conversation", line=line, dropped=record)
            return []
        if record.get("parentUuid") is None and record["type"] == "user":
            self._end_sidechain()  # a root line starts the next sub-agent transcript
        if self._side is None:
            self._side = ClaudeCodeConverter(self.report, keep_meta=self.keep_meta)
        self._side_messages.extend(self._side.feed(dict(record, isSidechain=False), line=line))
        return []

    def _end_sidechain(self) -> None:
        if self._side is not None:
            self._side_messages.extend(self._side.close())
            if self._side_messages:
                self._sidechains.append(self._side_messages)
            self._side, self._side_messages = None, []


class AnthropicConverter(_BlockConverter):
    """Anthropic Messages (``{"role", "content": blocks}``) in, chat messages out.

    The request's top-level ``system`` is given through :meth:`meta`.
    """

    name = "anthropic"
    multi = False

    def __init__(self, report: Report | None = None) -> None:
        super().__init__(report)
        self._started = False

    def meta(self, key: str, value: Any, *, line: int | None = None) -> list[dict[str, Any]]:
        if key != "system":
            return []
        if self._started:
            note_extra(self.report, "drop_late_system", "top-level 'system' came after the messages; a system message cannot go there", line=line, dropped=value)
            return []
        if isinstance(value, str):
            return [{"role": "system", "content": value}] if value else []
        if isinstance(value, list):
            return [{"role": "system", "content": as_text(text_parts(value, line=line, where="system"))}]
        raise invalid(f"'system' is {describe(value)}, expected a string or a list of text blocks", line=line, field="system")

    def feed(self, record: Any, *, line: int | None = None) -> list[dict[str, Any]]:
        if not isinstance(record, dict) or record.get("role") not in ("user", "assistant", "system"):
            raise invalid(f"expected an Anthropic message {{role: user|assistant, content}}, got {describe(record)}", line=line, field="role")
        self._started = True
        extra = {k: v for k, v in record.items() if k not in ("role", "content")}
        if record["role"] == "assistant":
            return self._assistant(record.get("content"), None, line, extra)
        if record["role"] == "system":
            content = record.get("content")
            parts = content if isinstance(content, str) else as_text(text_parts(content, line=line, where="system"))
            return [*self.flush(), {"role": "system", "content": parts, **extra}]
        return self._user(record.get("content"), line, extra)
