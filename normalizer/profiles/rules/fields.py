"""Field rules: which fields a message may carry."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..._content import FIELD_TABLES, unknown_fields
from .._rules import Rule, word
from ._base import KeyRule, Msg, Out, Plan

if TYPE_CHECKING:
    from .._check import Checker

__all__ = ["RULES"]


class RoleSpecific(KeyRule):
    key = "fields.role_specific"
    summary = "tool_calls only on assistant messages"
    words = (
        word("GQ-4", key, "Groq",
             "'messages.{i}' : for 'role:{role}' the following must be satisfied[('messages.{i}' : property "
             "'tool_calls' is unsupported, did you mean 'tool_call_id'?)]",
             "julep-ai/julep#885"),
        word("JT-15", key, "HF chat templates (vLLM, SGLang, TGI, llama.cpp)",
             "(no error: the tool_calls of a {role} message are left out of the prompt)",
             "the templates render a call only on an assistant message (qwen3.5.jinja, llama3.1.jinja...; "
             "issue 38)"),
    )

    def on_message(self, c: Checker, msg: Msg, role: str, index: int, out: Out) -> None:
        if role != "assistant" and "tool_calls" in msg:
            c.emit(out, self, index, role=msg.get("role"))

    def repair(self, plan: Plan, words: Sequence[Rule]) -> None:
        plan.strip_calls = True


class Unknown(KeyRule):
    key = "fields.unknown"
    summary = "no message or call field the provider does not know (source-format metadata...)"
    words = (
        word("GM-9", key, "Gemini OpenAI-compatible endpoint",
             'Invalid JSON payload received. Unknown name "{field}": Cannot find field.',
             "bytedance/deer-flow#1515, Gitlawb/openclaude#585", fields="chat"),
        word("MI-14", key, "Mistral API, mistral-common",
             "{field}: Extra inputs are not permitted",
             "mistralai/mistral-common src/mistral_common/base.py (MistralBase: extra='forbid', pydantic's "
             "extra_forbidden error) and protocol/instruct/messages.py (SystemMessage and UserMessage: role, content; "
             "AssistantMessage: role, content, tool_calls, prefix; ToolMessage: role, content, tool_call_id, name; "
             "tool_calls.py: ToolCall id, type, function; FunctionCall name, arguments); La Plateforme answers "
             "HTTP 422 {\"type\":\"extra_forbidden\",\"loc\":[\"body\",\"messages\",0,\"user\",\"name\"]}: "
             "Gage-Technologies/mistral-go#3, nomtek/mistralai_client_dart#44 (user name); "
             "zeroclaw-labs/zeroclaw#2693 (tool_calls.0.name); charmbracelet/crush#1590, BerriAI/litellm#30835 "
             "(assistant reasoning_content)",
             fields="mistral"),
        word("GQ-5", key, "Groq",
             "'messages.{i}' : for 'role:{role}' the following must be satisfied[('messages.{i}' : property "
             "'{field}' is unsupported)]",
             "providers.md §9 (field support is strict: GQ-1's envelope for any property); janhq/jan#8136, "
             "musistudio/llms#64", fields="chat"),
    )

    def on_message(self, c: Checker, msg: Msg, role: str, index: int, out: Out) -> None:
        if c.opaque:
            return
        # Each entry in the words of its provider, for the fields its own table does not
        # know (the spelling removes what any of them does not know: the same fields).
        for rule in c.words[self]:
            table = FIELD_TABLES[rule.fields or "chat"]
            for field in unknown_fields(msg, role, c.exempt, table=table):
                c.emit(out, self, index, field=field, role=msg.get("role"), _only=rule)

    def repair(self, plan: Plan, words: Sequence[Rule]) -> None:
        # The fields the provider knows: the table each entry names (Rule.fields; with
        # several, what every one of them knows).
        plan.unknown_fields = True
        plan.field_tables = frozenset(rule.fields or "chat" for rule in words)


#: In walk order (the order of their findings on one message).
RULES: tuple[KeyRule, ...] = (RoleSpecific(), Unknown())
