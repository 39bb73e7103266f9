"""Content rules: what a message's content (and its ``name``) may be."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..._content import NAME_PATTERN, SUBSTANCE_KEYS, has_text, is_text_kind, is_text_part
from .._rules import Rule, word
from ._base import KeyRule, Msg, Out, Plan, roles_of

if TYPE_CHECKING:
    from .._check import Checker

__all__ = ["RULES"]

_ALL_ROLES = ("system", "user", "assistant", "tool")


def _text(part: Any) -> tuple[bool, Any]:
    """Whether ``part`` is a text part, and its text: a string, a text type, or no type and
    a ``"text"`` key (the one rule, ``_content.is_text_kind``; an untyped ``{"image_url": ...}``
    is an image)."""
    if isinstance(part, str):
        return True, part
    if isinstance(part, Mapping) and is_text_kind(part):
        return True, part.get("text")
    return False, None


class Null(KeyRule):
    key = "content.null"
    summary = "content is null only on an assistant message with tool calls"
    words = (
        word("OA-6a", key, "OpenAI, Azure OpenAI",
             "Invalid value for 'content': expected a string, got null.",
             "langchain-ai/langchainjs#4153, docker/docker-agent#63"),
        word("MI-10", key, "mistral-common",
             "2 validation errors for UserMessage content.str Input should be a valid string",
             "mistralai/mistral-common src/mistral_common/protocol/instruct/messages.py (UserMessage.content is "
             "a string or a list of chunks)", roles=("user", "system", "tool")),
        word("JT-7", key, "HF chat templates that concatenate content",
             'can only concatenate str (not "NoneType") to str',
             "as JT-6 (a null content of a message without tool calls)"),
    )

    def on_content(self, c: Checker, msg: Msg, role: str, content: Any, calls: Any, index: int, out: Out) -> None:
        if content is None and (role != "assistant" or not calls):
            c.emit(out, self, index, _role=role)

    def repair(self, plan: Plan, words: Sequence[Rule]) -> None:
        plan.null_to_empty = True


class NoElements(KeyRule):
    key = "content.no_elements"
    summary = "no `content: []`"
    # Also enforced by entries whose words live with their first key: XA-1 (at content.tool_only_assistant).
    # Repaired by the core (an empty list is no content) and the tool-only encoding.

    def on_content(self, c: Checker, msg: Msg, role: str, content: Any, calls: Any, index: int, out: Out) -> None:
        if isinstance(content, list) and not content:
            c.emit(out, self, index)


class PartType(KeyRule):
    key = "content.part_type"
    summary = "content parts are objects with a `type`"
    words = (
        word("OA-6d", key, "OpenAI",
             "Missing required parameter: 'messages[{i}].content[{j}].type'.",
             "neuron-core/neuron-ai#292"),
        word("AN-16", key, "LiteLLM's OpenAI->Anthropic and OpenAI->Bedrock converters",
             "KeyError: 'type'",
             "BerriAI/litellm litellm/litellm_core_utils/prompt_templates/factory.py (content parts are read by "
             "their 'type'); Anthropic: every content block has a type"),
        word("GM-11", key, "LiteLLM's OpenAI->Gemini converter",
             "KeyError: 'type'",
             "BerriAI/litellm litellm/llms/vertex_ai/gemini/transformation.py (_gemini_convert_messages_with_history "
             "reads each content part's element[\"type\"])"),
        word("MI-8", key, "mistral-common",
             "Content chunk must have a type field.",
             "mistralai/mistral-common src/mistral_common/protocol/instruct/messages.py (_content_from_openai)"),
        word("ZP-2", key, "Zhipu GLM",
             "request param validation error, Value error, message[{i}].content[{j}] has invalid field(s): text",
             "BigPizzaV3/CodexPlusPlus#329"),
    )

    def on_part(self, c: Checker, part: Any, j: int, index: int, out: Out) -> None:
        if not isinstance(part, Mapping) or "type" not in part:
            c.emit(out, self, index, j=j)

    def repair(self, plan: Plan, words: Sequence[Rule]) -> None:
        plan.part_types = True


class NonemptyTextPart(KeyRule):
    key = "content.nonempty_text_part"
    summary = "no empty text parts"
    words = (
        word("MS-4", key, "Moonshot/Kimi",
             "Invalid request: text content is empty",
             "BerriAI/litellm#42186 (fix PR #42199)"),
        word("AN-7a", (key, "content.tool_only_assistant"), "Anthropic, Bedrock InvokeModel",
             "messages: text content blocks must be non-empty",
             "anthropics/claude-code#59812, anthropics/anthropic-sdk-python#461, miurla/morphic#83, "
             "anomalyco/opencode#15715"),
        word("BR-5", (key, "content.non_whitespace_text", "content.tool_only_assistant"),
             "AWS Bedrock Converse",
             "The text field in the ContentBlock object at messages.{i}.content.{j} is blank. Add text to the "
             "text field, and try again.",
             "Just-Curieous/Curie#14, Just-Curieous/Curie#22, langchain-ai/langchainjs#7942, "
             "langchain-ai/langchainjs#5960", native_index=True),
    )

    def on_part(self, c: Checker, part: Any, j: int, index: int, out: Out) -> None:
        is_text, text = _text(part)
        if is_text and (not isinstance(text, str) or text == ""):
            c.emit(out, self, index, j=j)

    def repair(self, plan: Plan, words: Sequence[Rule]) -> None:
        plan.nonempty = True


class NonWhitespaceText(KeyRule):
    key = "content.non_whitespace_text"
    summary = "no whitespace-only text"
    words = (
        word("AN-7b", key, "Anthropic, Bedrock",
             "messages: text content blocks must contain non-whitespace text",
             "anthropics/claude-code#23352, anthropics/claude-code#23440, anomalyco/opencode#31259, "
             "NousResearch/hermes-agent#41985"),
    )
    # Also enforced by entries whose words live with their first key: BR-5 (at content.nonempty_text_part).

    def on_part(self, c: Checker, part: Any, j: int, index: int, out: Out) -> None:
        is_text, text = _text(part)
        if is_text and isinstance(text, str) and text != "" and not text.strip():
            c.emit(out, self, index, j=j)

    def on_content_end(self, c: Checker, role: str, content: Any, calls: Any, index: int, out: Out) -> None:
        if isinstance(content, str) and not calls and content and not content.strip():
            c.emit(out, self, index, j=0)

    def repair(self, plan: Plan, words: Sequence[Rule]) -> None:
        plan.nonempty = True


class StringOnly(KeyRule):
    key = "content.string_only"
    summary = "content is a string, not a list of parts"
    words = (
        word("DS-5b", key, "DeepSeek (older parsers)",
             "Failed to deserialize the JSON body into the target type: messages[{i}]: invalid type: sequence, "
             "expected a string at line 1 column {c}",
             "lastmile-ai/mcp-agent#25", roles=("tool",)),
        word("MI-9", key, "mistral-common",
             "Unexpected content chunk types in assistant message",
             "mistralai/mistral-common src/mistral_common/protocol/instruct/validator.py "
             "(_validate_content_chunk_types: the list of the chunk types found follows; a part type it does not "
             "know at all fails as \"'tool_use' is not a valid ChunkTypes\"); assistant content is text only",
             roles=("assistant",)),
        word("MI-13", key, "mistral-common",
             "Unexpected content chunk types in tool message",
             "mistralai/mistral-common src/mistral_common/protocol/instruct/validator.py "
             "(_validate_tool_content_chunks: text chunks only, up to v13)", roles=("tool",)),
        word("GQ-3", key, "Groq",
             "'messages.{i}' : for 'role:tool' the following must be satisfied[('messages.{i}.content' : "
             "value must be a string)]",
             "CherryHQ/cherry-studio#3307, tidyverse/ellmer#162", roles=("tool",)),
        word("JT-6", key, "HF chat templates that concatenate content (Qwen, DeepSeek, Llama, "
             "Mistral, Phi, Gemma)",
             'can only concatenate str (not "list") to str',
             "the templates' own text (e.g. Qwen/Qwen2.5-7B-Instruct: '<|im_start|>' + message.role + '\\n' + "
             "message.content), rendered by transformers' render_jinja_template"),
        word("OL-1", key, "Ollama native /api/chat",
             "json: cannot unmarshal array into Go struct field ChatRequest.messages.content of type string",
             "BerriAI/litellm#11273, BerriAI/litellm#10127, google/adk-python#191"),
    )

    def on_content_end(self, c: Checker, role: str, content: Any, calls: Any, index: int, out: Out) -> None:
        if isinstance(content, list):
            c.emit(out, self, index, _role=role)

    def repair(self, plan: Plan, words: Sequence[Rule]) -> None:
        # There a part that is not text cannot stay (_encode: "Parts that are not text").
        plan.string_roles = roles_of(words, _ALL_ROLES)


class TextOnly(KeyRule):
    key = "content.text_only"
    summary = "content is text (a string or text parts): no image, audio or file part"
    words = (
        word("OA-7", key, "OpenAI, Azure OpenAI",
             "Invalid 'messages[{i}]'. Image URLs are only allowed for messages with role 'user', but this message "
             "with role 'tool' contains an image URL.",
             "OpenHands/OpenHands#7700, openai/openai-node#1030, openai/openai-openapi#523 (gpt-5.2 ignores the image "
             "instead); openai SDK: ChatCompletionToolMessageParam.content is str | Iterable[text part]",
             roles=("tool",)),
    )

    def on_content_end(self, c: Checker, role: str, content: Any, calls: Any, index: int, out: Out) -> None:
        if isinstance(content, list) and not all(is_text_part(p) for p in content):
            c.emit(out, self, index, _role=role)

    def repair(self, plan: Plan, words: Sequence[Rule]) -> None:
        # A list of text parts is fine there; a part that is not text is replaced.
        plan.text_roles = roles_of(words, _ALL_ROLES)


class SingleText(KeyRule):
    key = "content.single_text"
    summary = "at most one text element per message"
    words = (
        word("XA-2", key, "xAI Grok",
             "The model expects a single `text` element per message.",
             "nocmt/LLMSearchPlus#2"),
    )

    def on_content_end(self, c: Checker, role: str, content: Any, calls: Any, index: int, out: Out) -> None:
        if isinstance(content, list) and sum(1 for part in content if _text(part)[0]) > 1:
            c.emit(out, self, index)

    def repair(self, plan: Plan, words: Sequence[Rule]) -> None:
        plan.single_text = True


class ToolOnlyAssistant(KeyRule):
    key = "content.tool_only_assistant"
    summary = "the content of a tool-only assistant message is encoded as the provider wants"
    words = (
        word("BR-8", key, "AWS Bedrock OpenAI-compatible endpoint",
             "messages: text content blocks must be non-empty",
             "anomalyco/opencode#17395, anomalyco/opencode#17394, vercel/ai#14612"),
        word("XA-1", (key, "content.no_elements"), "xAI Grok",
             "Invalid request content: Each message must have at least one content element.",
             "AstrBotDevs/AstrBot#6447 (fix PR #6551), langchain-ai/langchain#34140, charmbracelet/crush#964, "
             "n8n-io/n8n#14797"),
        word("OL-2", key, "Ollama OpenAI-compatible /v1",
             "invalid message content type: <nil>",
             "SAIL-Research-Lab/cheetahclaws#72, tombii/better-ccflare#141"),
    )
    # Also enforced by entries whose words live with their first key:
    # MS-3 (at content.nonempty_message); AN-7a, BR-5 (at content.nonempty_text_part).
    # Repaired by the profile's tool_only_content (the core writes it as it emits).

    def on_turn(self, c: Checker, msg: Msg, role: str, content: Any, calls: Any, index: int, out: Out) -> None:
        # Only a blank content next to calls is an encoding question; text is text.
        if role != "assistant" or not calls or has_text(content):
            return
        want = c.profile.tool_only_content
        if want == "null":
            bad = content is not None
        elif want == "empty":
            bad = content != ""
        elif want == "omit":
            bad = content is not None and content != ""
        else:
            bad = content == []
        if bad:
            c.emit(out, self, index, _role="assistant", j=0)


class NotBothTextAndCalls(KeyRule):
    key = "content.not_both_text_and_calls"
    summary = "an assistant message has text or tool calls, not both"
    words = (
        word("MI-5", key, "Mistral API (legacy; devstral 2026), mistral-common < V5",
             "Assistant message must have either content or tool_calls, but not both.",
             "langchain-ai/langchain#21196, OpenHands/OpenHands#8685, mistralai/mistral-common#186, "
             "vllm-project/vllm#16774, github/copilot-cli#4884"),
        # No error here: the template renders an assistant message that has calls as its calls
        # alone, and the text beside them never reaches the model (issue 38).
        word("JT-13", key, "Llama 3.x, Hermes-3 and gpt-oss chat templates",
             "(no error: the text of an assistant message with tool calls is left out of the prompt)",
             "llama3.1.jinja, hermes-3-llama3.1.jinja (llama.cpp models/templates/); gpt-oss.jinja drops it when a "
             "later final answer follows"),
    )

    def on_turn(self, c: Checker, msg: Msg, role: str, content: Any, calls: Any, index: int, out: Out) -> None:
        if role == "assistant" and calls and has_text(content):
            c.emit(out, self, index)

    def repair(self, plan: Plan, words: Sequence[Rule]) -> None:
        plan.apart = True


class NonemptyMessage(KeyRule):
    key = "content.nonempty_message"
    summary = "no message without content"
    words = (
        word("MS-3", (key, "content.tool_only_assistant"), "Moonshot/Kimi",
             "Invalid request: the message at position {i} with role 'assistant' must not be empty",
             "AstrBotDevs/AstrBot#7200 (fix PR #7202), lobehub/lobehub#8419, CherryHQ/cherry-studio#1313, "
             "labring/FastGPT#3575, anomalyco/opencode#6056", roles=("assistant",)),
        word("AN-8", key, "Anthropic (also its OpenAI-compatible endpoint)",
             "messages.{i}: all messages must have non-empty content except for the optional final assistant message",
             "anthropics/claude-code#3196, anthropics/claude-code#6774, corespeed-io/zypher-agent#122, "
             "microsoft/autogen#6083", native_index=True, roles=("user", "assistant")),
        word("GM-6a", key, "Google Gemini / Vertex AI",
             "* GenerateContentRequest.contents[{i}].parts: contents.parts must not be empty.",
             "vercel/ai#3775, egoist/chatwise-releases#250, QuantumNous/new-api#1060, livekit/agents#1397",
             native_index=True, roles=("user", "assistant")),
    )

    def on_turn(self, c: Checker, msg: Msg, role: str, content: Any, calls: Any, index: int, out: Out) -> None:
        if role == "assistant":
            if not calls and not has_text(content) and not any(msg.get(k) for k in SUBSTANCE_KEYS):
                c.emit(out, self, index, _role=role)
        elif role == "user" and not has_text(content):
            c.emit(out, self, index, _role=role)

    def repair(self, plan: Plan, words: Sequence[Rule]) -> None:
        plan.nonempty = True


class NamePattern(KeyRule):
    key = "content.name_pattern"
    summary = "`name` matches ^[a-zA-Z0-9_-]+$"
    words = (
        word("OA-6c", key, "OpenAI",
             "Invalid 'messages[{i}].name': string does not match pattern. Expected a string that matches "
             "the pattern '^[a-zA-Z0-9_-]+$'.",
             "crazyyanchao/llmcompiler#1"),
    )

    def on_message(self, c: Checker, msg: Msg, role: str, index: int, out: Out) -> None:
        name = msg.get("name")
        # (not on an opaque turn: replayed as stored, its name is not repaired either)
        if isinstance(name, str) and not NAME_PATTERN.match(name) and role != "tool" and not c.opaque:
            c.emit(out, self, index)

    def repair(self, plan: Plan, words: Sequence[Rule]) -> None:
        plan.names = True


class TextThenCalls(KeyRule):
    key = "content.text_then_calls"
    summary = (
        "no assistant text right before the turn's tool calls (mistral-common v3 merges the two messages back"
        " into one)"
    )
    words = (
        word("MI-12", key, "mistral-common tokenizer v3",
             "Cannot have tool calls and content defined in the same assistant message",
             "mistralai/mistral-common src/mistral_common/tokens/tokenizers/instruct.py (InstructTokenizerV3); "
             "its request normalizer (protocol/instruct/normalize.py, _aggregate_assistant_messages) first merges "
             "consecutive assistant messages, so MI-5's split is undone and no lossless form exists on v3"),
    )

    def on_calls(self, c: Checker, msg: Msg, calls: list[Any], index: int, out: Out) -> None:
        last = c.last
        if last is not None and last.get("role") == "assistant" and not last.get("tool_calls") and has_text(
            last.get("content")
        ):
            c.emit(out, self, index)

    def repair(self, plan: Plan, words: Sequence[Rule]) -> None:
        # mistral-common v3 merges an assistant's text with the calls right after it, then
        # rejects both in one message: that text cannot be sent (MI-12), and is dropped.
        plan.drop_text_before_calls = True


class FinalAssistantTrailingWs(KeyRule):
    key = "content.final_assistant_trailing_ws"
    serving_only = True
    summary = "a final assistant message does not end in whitespace"
    words = (
        word("AN-9", key, "Anthropic, Bedrock",
             "messages: final assistant content cannot end with trailing whitespace",
             "tailcallhq/forgecode#1872, anomalyco/opencode#1295, langchain-ai/langchain#35071, "
             "aaif-goose/goose#5967, junjiem/dify-plugin-agent-mcp_sse#118"),
    )

    def on_close(self, c: Checker, last: Msg | None, out: Out) -> None:
        if last is not None and last.get("role") == "assistant" and not last.get("tool_calls") and (
            _ends_in_whitespace(last.get("content"))
        ):
            c.emit(out, self, c.last_index)

    def repair(self, plan: Plan, words: Sequence[Rule]) -> None:
        plan.rstrip_final = True  # (where a final assistant is allowed at all: the stage)


def _ends_in_whitespace(content: Any) -> bool:
    if isinstance(content, str):
        return content != content.rstrip()
    if isinstance(content, list) and content:
        part = content[-1]
        if isinstance(part, Mapping) and isinstance(part.get("text"), str):
            text: str = part["text"]
            return text != text.rstrip()
    return False


#: In walk order (the order of their findings on one message).
RULES: tuple[KeyRule, ...] = (
    NamePattern(), Null(), NoElements(), PartType(), NonemptyTextPart(), NonWhitespaceText(), StringOnly(),
    TextOnly(), SingleText(), ToolOnlyAssistant(), NotBothTextAndCalls(), NonemptyMessage(), TextThenCalls(),
    FinalAssistantTrailingWs(),
)
