"""Reasoning rules: the reasoning fields a history must, or must not, carry."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..._content import REASONING_KEYS, REASONING_PART_TYPES
from .._rules import Rule, word
from ._base import KeyRule, Msg, Out, Plan

if TYPE_CHECKING:
    from .._check import Checker

__all__ = ["RULES"]


class RequiredOnToolTurns(KeyRule):
    key = "reasoning.required_on_tool_turns"
    summary = "assistant tool-call turns carry reasoning_content (thinking mode)"
    words = (
        word("DS-3a", key, "DeepSeek V3.2 thinking",
             "Missing `reasoning_content` field in the assistant message at message index {i}. For more "
             "information, please refer to https://api-docs.deepseek.com/guides/thinking_mode#tool-calls",
             "https://api-docs.deepseek.com/guides/thinking_mode; continuedev/continue#11285 (fix PR #11290), "
             "hotovo/aider-desk#529, CherryHQ/cherry-studio#11751, spring-projects/spring-ai#5038"),
        word("DS-3b", key, "DeepSeek V4 (thinking on by default)",
             "The `reasoning_content` in the thinking mode must be passed back to the API.",
             "https://api-docs.deepseek.com/guides/thinking_mode; JohnnyZ93/oai-compatible-copilot#215, "
             "earendil-works/pi#3636, continuedev/continue#12691, crewAIInc/crewAI#5878, anomalyco/opencode#25356"),
        word("MS-2", key, "Moonshot Kimi thinking (K2-thinking, K2.5+, K3)",
             "thinking is enabled but reasoning_content is missing in assistant tool call message at index {i}",
             "agentscope-ai/QwenPaw#433, VicBilibily/GCMP#162, mastra-ai/mastra#12592, cloudwego/eino-ext#700, "
             "anomalyco/opencode#28542"),
        word("ZP-3", key, "Z.ai GLM-4.7/5.x preserved thinking",
             "thinking is enabled but reasoning_content is missing in assistant tool call message at index {i}",
             "https://docs.z.ai/guides/capabilities/thinking-mode; the Kimi-style text as seen through "
             "new-api: QuantumNous/new-api#4408"),
    )
    thinking_only = True
    # Repaired by the profile's reasoning="require" in thinking mode (the spelling pads it).

    def on_calls(self, c: Checker, msg: Msg, calls: list[Any], index: int, out: Out) -> None:
        if not c.opaque and c.profile.requires_reasoning() and msg.get("reasoning_content") is None:
            c.emit(out, self, index)


class Unsupported(KeyRule):
    key = "reasoning.unsupported"
    summary = "no reasoning fields in the history"
    words = (
        word("MI-11", key, "mistral-common tokenizers v3 and v7",
             "Unexpected content chunk types in assistant message: ['ThinkChunk']",
             "mistralai/mistral-common src/mistral_common/protocol/instruct/validator.py (MistralRequestValidatorV5 "
             "accepts TextChunk only; v11 adds ThinkChunk); reasoning/reasoning_content become a ThinkChunk in "
             "AssistantMessage.from_openai, which also rejects \"`reasoning_content` and `reasoning` should be equal.\""),
        word("GQ-1", key, "Groq",
             "'messages.{i}' : for 'role:assistant' the following must be satisfied[('messages.{i}' : "
             "property '{field}' is unsupported)]",
             "janhq/jan#8136, tashfeenahmed/freellmapi#1070, SimonSchubert/Kai#265, "
             "vellum-ai/vellum-assistant#42635, musistudio/llms#64"),
    )
    # Repaired by the profile's reasoning="strip" (the spelling).

    def on_assistant(self, c: Checker, msg: Msg, index: int, out: Out) -> None:
        for field in REASONING_KEYS:
            if field in msg:
                c.emit(out, self, index, field=field)
        content = msg.get("content")
        if isinstance(content, list) and any(
            isinstance(p, Mapping) and p.get("type") in REASONING_PART_TYPES for p in content
        ):
            c.emit(out, self, index, field="content")

    def repair(self, plan: Plan, words: Sequence[Rule]) -> None:
        plan.exempt_all_reasoning = True  # fields.unknown leaves every reasoning field to this rule


#: In walk order (the order of their findings on one message).
RULES: tuple[KeyRule, ...] = (RequiredOnToolTurns(), Unsupported())
