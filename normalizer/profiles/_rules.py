"""The rule catalogue, as data: one :class:`Rule` per provider error.

Each rule is one provider error: its id in ``providers.md`` (``OA-1``, ``AN-5``, ``MI-4``
...), the canonical *keys* it enforces (``tool.unanswered_call``, ``role.alternate`` ...,
listed in :data:`KEYS`), the error text **as the provider words it** (quoted verbatim from
the research, ``{i}``-style placeholders filled in by :func:`render`), and the evidence
(issues, PRs, documentation URLs). A profile lists rule ids; two providers enforcing the
same key with different words are two rules.

Each key is one rule object (``rules/``: its ``detect`` hooks and its ``repair()``); the
catalogue gives it its words. It is read by the profiles (which rules apply, hence which
repairs the spelling and the stage make) and by the checker (which findings to report, in
whose words). It imports nothing of the package but pydantic.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

__all__ = ["Rule", "RULES", "KEYS", "SERVING_ONLY_KEYS", "render"]

class Rule(BaseModel):
    """One provider error, as data."""

    # defer_build: the catalogue below is the library's own data, made without validation
    # (tests/profiles/test_profiles.py validates every rule); the schema is built only when a
    # rule is validated or dumped, not at start-up.
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    id: str
    """The rule's id in providers.md (e.g. ``"OA-1"``)."""
    keys: tuple[str, ...]
    """Canonical keys it enforces (what the checker detects; what the stage repairs)."""
    provider: str
    text: str
    """The error text as the provider words it; ``{i}``, ``{ids}``... are filled in."""
    source: str
    """Evidence: issues/PRs (``owner/repo#N``) and documentation URLs."""
    severity: Literal["error", "warning"] = "error"
    roles: tuple[str, ...] | None = None
    """Only messages of these roles (None: any role the key applies to)."""
    native_index: bool = False
    """``{i}`` counts only non-system messages (Anthropic/Bedrock/Gemini converters)."""
    fixable: bool = True
    """``repair`` with the same profile removes every violation of it (each rule's case in
    tests/profiles/test_check.py shows it: ``check(repair(x)) == []``)."""
    fields: Literal["chat", "mistral"] | None = None
    """A ``fields.unknown`` rule: the table of the fields the provider knows
    (``_content.FIELD_TABLES``); what the checker reports and the encoder removes."""


# The keys the checker detects (and the repair removes), each one rule object of rules/
# (rules.BY_KEY). One line each; the profile docs and the README table use the same words.
KEYS: dict[str, str] = {
    "tool.unanswered_call": "every tool call is answered by tool messages right after its turn",
    "tool.orphan_result": "every tool message answers a call of the assistant turn just before it",
    "tool.duplicate_result": "one tool message per tool_call_id",
    "tool.empty_tool_calls": "no `tool_calls: []`",
    "tool.arguments_json": "call arguments are a non-empty JSON string",
    "tool.arguments_object": "call arguments are an object (Ollama native)",
    "tool.duplicate_call_id": "call ids are unique across the whole conversation",
    "tool.id_format": "call ids have the provider's format (length, charset)",
    "tool.id_missing": "tool messages carry a tool_call_id",
    "tool.response_name": "tool messages carry the `name` of the function they answer",
    "content.null": "content is null only on an assistant message with tool calls",
    "content.tool_only_assistant": "the content of a tool-only assistant message is encoded as the provider wants",
    "content.nonempty_text_part": "no empty text parts",
    "content.non_whitespace_text": "no whitespace-only text",
    "content.nonempty_message": "no message without content",
    "content.no_elements": "no `content: []`",
    "content.final_assistant_trailing_ws": "a final assistant message does not end in whitespace",
    "content.name_pattern": "`name` matches ^[a-zA-Z0-9_-]+$",
    "content.part_type": "content parts are objects with a `type`",
    "content.string_only": "content is a string, not a list of parts",
    "content.text_only": "content is text (a string or text parts): no image, audio or file part",
    "content.single_text": "at most one text element per message",
    "content.not_both_text_and_calls": "an assistant message has text or tool calls, not both",
    "content.text_then_calls": "no assistant text right before the turn's tool calls (mistral-common v3 merges "
                               "the two messages back into one)",
    "tool.single_call": "one tool call per assistant message",
    "tool.arguments_valid_json": "call arguments parse as JSON (a truncated JSON string does not)",
    "role.developer": "no `developer` role (it is sent as `system`)",
    "role.alternate": "user and assistant turns alternate",
    "role.first_user": "the first non-system message is a user message",
    "role.requires_user": "the history has a user message",
    "role.last_user_or_tool": "the history does not end with an assistant message",
    "role.mistral_transitions": "only Mistral's allowed role transitions",
    "role.system_position": "system messages only where the provider allows them",
    "role.system_unsupported": "no system role at all",
    "reasoning.required_on_tool_turns": "assistant tool-call turns carry reasoning_content (thinking mode)",
    "reasoning.unsupported": "no reasoning fields in the history",
    "fields.role_specific": "tool_calls only on assistant messages",
    "fields.unknown": "no message or call field the provider does not know (source-format metadata...)",
}


#: Keys that hold for a request served now, not for a training example: a fine-tuning
#: example ends on the assistant turn the model learns (or on the call it learns to make),
#: which a serving API refuses as the last message. ``chatnorm check --purpose training``
#: (the default for fine-tuning formats) leaves them out, with calls left open at the end.
SERVING_ONLY_KEYS: frozenset[str] = frozenset({"role.last_user_or_tool", "content.final_assistant_trailing_ws"})


def _rule(id: str, keys: str | tuple[str, ...], provider: str, text: str, source: str, **kw: Any) -> Rule:
    return Rule.model_construct(id=id, keys=(keys,) if isinstance(keys, str) else keys, provider=provider,
                                text=text, source=source, **kw)


_UNANSWERED = "tool.unanswered_call"
_ORPHAN = "tool.orphan_result"
_DUP_RESULT = "tool.duplicate_result"

# The catalogue. Texts are verbatim from providers.md (which quotes each from the cited
# reports); `\"` there is a JSON-escaped quote, so it is a plain `"` here.
_CATALOGUE = [
    # -- OpenAI Chat Completions (providers.md §1) ---------------------------------------
    _rule("OA-1", _UNANSWERED, "OpenAI, Azure OpenAI",
          "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
          "'tool_call_id'. The following tool_call_ids did not have response messages: {ids}",
          "openai/codex#7051, openai/codex#8638, BerriAI/litellm#10083, aliasrobotics/cai#111, "
          "google/adk-python#417, pydantic/pydantic-ai#2360"),
    _rule("OA-2", _ORPHAN, "OpenAI, Azure OpenAI",
          "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
          "miurla/morphic#136, smarter-sh/smarter#264, Nikunj2003/LLaMa-MCP-Streamlit#1, lobehub/lobehub#3613"),
    _rule("OA-3", _DUP_RESULT, "OpenAI, Azure OpenAI, Copilot",
          "Invalid parameter: Duplicate value for 'tool_call_id' of '{id}' in messages[{first}] and messages[{i}].",
          "agno-agi/agno#5116, fatwang2/search2ai#30, anomalyco/opencode#1211"),
    _rule("OA-4", "tool.empty_tool_calls", "OpenAI (and vLLM Llama templates)",
          "Invalid 'messages[{i}].tool_calls': empty array. Expected an array with minimum length 1, "
          "but got an empty array instead.",
          "openai/openai-node#1341, vllm-project/vllm#13978"),
    _rule("OA-5", "tool.id_format", "OpenAI, Azure OpenAI",
          "Invalid 'messages[{i}].tool_calls[{j}].id': string too long. Expected a string with maximum "
          "length 40, but got a string with length {n} instead.",
          "agno-agi/agno#5382, camel-ai/camel#2215, vercel/ai#8132, Portkey-AI/gateway#1062, "
          "openclaw/openclaw#875; not reproduced in 2026: vercel/ai#17233",
          severity="warning"),
    _rule("OA-6a", "content.null", "OpenAI, Azure OpenAI",
          "Invalid value for 'content': expected a string, got null.",
          "langchain-ai/langchainjs#4153, docker/docker-agent#63"),
    _rule("OA-6c", "content.name_pattern", "OpenAI",
          "Invalid 'messages[{i}].name': string does not match pattern. Expected a string that matches "
          "the pattern '^[a-zA-Z0-9_-]+$'.",
          "crazyyanchao/llmcompiler#1"),
    _rule("OA-6d", "content.part_type", "OpenAI",
          "Missing required parameter: 'messages[{i}].content[{j}].type'.",
          "neuron-core/neuron-ai#292"),
    _rule("OA-7", "content.text_only", "OpenAI, Azure OpenAI",
          "Invalid 'messages[{i}]'. Image URLs are only allowed for messages with role 'user', but this message "
          "with role 'tool' contains an image URL.",
          "OpenHands/OpenHands#7700, openai/openai-node#1030, openai/openai-openapi#523 (gpt-5.2 ignores the image "
          "instead); openai SDK: ChatCompletionToolMessageParam.content is str | Iterable[text part]",
          roles=("tool",)),
    _rule("OA-8", "role.system_unsupported", "OpenAI o1-mini (legacy models)",
          "Unsupported value: 'messages[{i}].role' does not support 'system' with this model.",
          "BerriAI/litellm#5671, microsoft/agent-framework#1077"),
    _rule("RX-7", "tool.id_format", "OpenAI Responses / Codex",
          "Invalid 'input[{i}].call_id': string too long. Expected a string with maximum length 64, "
          "but got a string with length {n} instead.",
          "AnswerDotAI/fastllm#45, orchidfiles/ungate#26, decolua/9router#393"),
    # -- DeepSeek (§3) ---------------------------------------------------------------------
    _rule("DS-1", _UNANSWERED, "DeepSeek",
          "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
          "'tool_call_id'. (insufficient tool messages following tool_calls message)",
          "langgenius/dify#32222, agno-agi/agno#3105, smallmain/vscode-unify-chat-provider#248, "
          "Alishahryar1/free-claude-code#326"),
    _rule("DS-2", _ORPHAN, "DeepSeek",
          "Messages with role 'tool' must be a response to a preceding message with 'tool_calls'",
          "FoundationAgents/OpenManus#23, FoundationAgents/OpenManus#744, qwersyk/Newelle#425"),
    _rule("DS-3a", "reasoning.required_on_tool_turns", "DeepSeek V3.2 thinking",
          "Missing `reasoning_content` field in the assistant message at message index {i}. For more "
          "information, please refer to https://api-docs.deepseek.com/guides/thinking_mode#tool-calls",
          "https://api-docs.deepseek.com/guides/thinking_mode; continuedev/continue#11285 (fix PR #11290), "
          "hotovo/aider-desk#529, CherryHQ/cherry-studio#11751, spring-projects/spring-ai#5038"),
    _rule("DS-3b", "reasoning.required_on_tool_turns", "DeepSeek V4 (thinking on by default)",
          "The `reasoning_content` in the thinking mode must be passed back to the API.",
          "https://api-docs.deepseek.com/guides/thinking_mode; JohnnyZ93/oai-compatible-copilot#215, "
          "earendil-works/pi#3636, continuedev/continue#12691, crewAIInc/crewAI#5878, anomalyco/opencode#25356"),
    _rule("DS-4a", "role.alternate", "DeepSeek R1 (legacy, Jan-Mar 2025)",
          "deepseek-reasoner does not support successive user or assistant messages (messages[{j}] and "
          "messages[{i}] in your input). You should interleave the user/assistant messages in the message sequence.",
          "deepseek-ai/DeepSeek-R1#21, Aider-AI/aider#2974, BerriAI/litellm#8018, open-webui/open-webui#9266"),
    _rule("DS-4b", "role.first_user", "DeepSeek R1 (legacy)",
          "The first message (except the system message) of deepseek-reasoner must be a user message, "
          "but an assistant message detected.",
          "ChatGPTNextWeb/NextChat#6343, lobehub/lobehub#5601"),
    _rule("DS-5b", "content.string_only", "DeepSeek (older parsers)",
          "Failed to deserialize the JSON body into the target type: messages[{i}]: invalid type: sequence, "
          "expected a string at line 1 column {c}",
          "lastmile-ai/mcp-agent#25", roles=("tool",)),
    # -- Moonshot / Kimi (§4) --------------------------------------------------------------
    _rule("MS-1", _UNANSWERED, "Moonshot/Kimi",
          "an assistant message with 'tool_calls' must be followed by tool messages responding to each "
          "'tool_call_id'. The following tool_call_ids did not have response messages: {ids}",
          "MoonshotAI/kimi-cli#2405"),
    _rule("MS-2", "reasoning.required_on_tool_turns", "Moonshot Kimi thinking (K2-thinking, K2.5+, K3)",
          "thinking is enabled but reasoning_content is missing in assistant tool call message at index {i}",
          "agentscope-ai/QwenPaw#433, VicBilibily/GCMP#162, mastra-ai/mastra#12592, cloudwego/eino-ext#700, "
          "anomalyco/opencode#28542"),
    _rule("MS-3", ("content.nonempty_message", "content.tool_only_assistant"), "Moonshot/Kimi",
          "Invalid request: the message at position {i} with role 'assistant' must not be empty",
          "AstrBotDevs/AstrBot#7200 (fix PR #7202), lobehub/lobehub#8419, CherryHQ/cherry-studio#1313, "
          "labring/FastGPT#3575, anomalyco/opencode#6056", roles=("assistant",)),
    _rule("MS-4", "content.nonempty_text_part", "Moonshot/Kimi",
          "Invalid request: text content is empty",
          "BerriAI/litellm#42186 (fix PR #42199)"),
    # -- Anthropic (§5), as reached through OpenAI-shaped converters -------------------------
    _rule("AN-1", _UNANSWERED, "Anthropic",
          "messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately after: {ids}. "
          "Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
          "anthropics/claude-code#1237, anthropics/claude-code#2697, anthropics/claude-code#3512, "
          "OpenHands/OpenHands#7512, Kilo-Org/kilocode#5163", native_index=True),
    _rule("AN-3", (_ORPHAN, _DUP_RESULT), "Anthropic",
          "messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` blocks: {id}. Each "
          "`tool_result` block must have a corresponding `tool_use` block in the previous message.",
          "anthropics/claude-code#13460, anthropics/claude-code#18947, router-for-me/CLIProxyAPI#497, "
          "github/copilot-cli#1159", native_index=True),
    _rule("AN-4", "tool.duplicate_call_id", "Anthropic",
          "messages.{i}.content.{j}: `tool_use` ids must be unique",
          "BerriAI/litellm#23510, anthropics/claude-code#20901, trycua/cua#524, anomalyco/opencode#1279",
          native_index=True),
    _rule("AN-5", "tool.id_format", "Anthropic, Bedrock",
          "messages.{i}.content.{j}.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'",
          "CommandCodeAI/command-code#323, tailcallhq/forgecode#1142, RooCodeInc/Roo-Code#10649, "
          "HKUDS/nanobot#4356; length 1-64: "
          "https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ToolUseBlock.html",
          native_index=True),
    _rule("AN-7a", ("content.nonempty_text_part", "content.tool_only_assistant"), "Anthropic, Bedrock InvokeModel",
          "messages: text content blocks must be non-empty",
          "anthropics/claude-code#59812, anthropics/anthropic-sdk-python#461, miurla/morphic#83, "
          "anomalyco/opencode#15715"),
    _rule("AN-7b", "content.non_whitespace_text", "Anthropic, Bedrock",
          "messages: text content blocks must contain non-whitespace text",
          "anthropics/claude-code#23352, anthropics/claude-code#23440, anomalyco/opencode#31259, "
          "NousResearch/hermes-agent#41985"),
    _rule("AN-8", "content.nonempty_message", "Anthropic (also its OpenAI-compatible endpoint)",
          "messages.{i}: all messages must have non-empty content except for the optional final assistant message",
          "anthropics/claude-code#3196, anthropics/claude-code#6774, corespeed-io/zypher-agent#122, "
          "microsoft/autogen#6083", native_index=True, roles=("user", "assistant")),
    _rule("AN-9", "content.final_assistant_trailing_ws", "Anthropic, Bedrock",
          "messages: final assistant content cannot end with trailing whitespace",
          "tailcallhq/forgecode#1872, anomalyco/opencode#1295, langchain-ai/langchain#35071, "
          "aaif-goose/goose#5967, junjiem/dify-plugin-agent-mcp_sse#118"),
    _rule("AN-10a", "role.alternate", "Anthropic (legacy; 1P now merges), Bedrock InvokeModel",
          'messages: roles must alternate between "user" and "assistant", but found multiple "{role}" roles in a row',
          "modelcontextprotocol/quickstart-resources#20, coaidev/coai#209, FlowiseAI/Flowise#2006"),
    _rule("AN-10b", "role.first_user", "Anthropic (legacy), Bedrock",
          'messages: first message must use the "user" role',
          "lobehub/lobehub#1601, langbot-app/LangBot#867"),
    _rule("AN-11", "role.last_user_or_tool", "Anthropic Claude >= 4.6",
          "This model does not support assistant message prefill. The conversation must end with a user message.",
          "https://platform.claude.com/docs/en/about-claude/models/whats-new-claude-4-6#prefill-removal; "
          "Skyvern-AI/skyvern#4795, langchain-ai/deepagents#1585, anthropics/claude-code#28478, vercel/ai#12296"),
    _rule("AN-12", "role.system_position", "Anthropic (before Opus 4.8)",
          'messages: Unexpected role "system". The Messages API accepts a top-level `system` parameter, '
          'not "system" as an input message role.',
          "ianarawjo/ChainForge#271, Maol-1997/cursor-claude-connector#3; "
          "https://platform.claude.com/docs/en/build-with-claude/mid-conversation-system-messages"),
    _rule("AN-13", "role.developer", "LiteLLM's OpenAI->Anthropic converter",
          "Invalid Message passed in {'role': 'developer', ...}",
          "BerriAI/litellm litellm/litellm_core_utils/prompt_templates/factory.py (anthropic_messages_pt)"),
    _rule("AN-14", "tool.arguments_valid_json", "LiteLLM's OpenAI->Anthropic converter",
          "Failed to parse tool call arguments for tool '{name}' (Anthropic tool invoke).",
          "BerriAI/litellm litellm/litellm_core_utils/prompt_templates/factory.py (the tool_use input is the "
          "parsed arguments; the JSON error follows, e.g. \"Error: Unterminated string starting at: line 1 "
          "column 7\"); NousResearch/hermes-agent repairs truncated arguments (research/hermes.md §4.9)"),
    _rule("AN-15", "role.requires_user", "LiteLLM's OpenAI->Anthropic converter, Anthropic",
          "Anthropic requires at least one non-system message.",
          "BerriAI/litellm litellm/litellm_core_utils/prompt_templates/factory.py (anthropic_messages_pt); "
          "Anthropic: messages: at least one message is required"),
    _rule("AN-16", "content.part_type", "LiteLLM's OpenAI->Anthropic and OpenAI->Bedrock converters",
          "KeyError: 'type'",
          "BerriAI/litellm litellm/litellm_core_utils/prompt_templates/factory.py (content parts are read by "
          "their 'type'); Anthropic: every content block has a type"),
    # -- Bedrock Converse (§6) --------------------------------------------------------------
    _rule("BR-1", "role.alternate", "AWS Bedrock Converse",
          "A conversation must alternate between user and assistant roles. Make sure the conversation "
          "alternates between user and assistant roles and try again.",
          "microsoft/semantic-kernel#10281, CopilotKit/CopilotKit#736, Portkey-AI/gateway#748, "
          "langchain-ai/langchainjs#6724, langchain-ai/langchain-aws#130"),
    _rule("BR-2", "role.first_user", "AWS Bedrock Converse",
          "A conversation must start with a user message. Try again with a conversation that starts with a user message.",
          "langgenius/dify#12340, elastic/kibana#246393, strands-agents/sdk-typescript#727"),
    _rule("BR-3", (_ORPHAN, _DUP_RESULT), "AWS Bedrock Converse",
          "The number of toolResult blocks at messages.{i}.content exceeds the number of toolUse blocks of previous turn.",
          "Just-Curieous/Curie#16, langgenius/dify-official-plugins#765, pydantic/pydantic-ai#2327",
          native_index=True),
    _rule("BR-5", ("content.nonempty_text_part", "content.non_whitespace_text", "content.tool_only_assistant"),
          "AWS Bedrock Converse",
          "The text field in the ContentBlock object at messages.{i}.content.{j} is blank. Add text to the "
          "text field, and try again.",
          "Just-Curieous/Curie#14, Just-Curieous/Curie#22, langchain-ai/langchainjs#7942, "
          "langchain-ai/langchainjs#5960", native_index=True),
    _rule("BR-6", "role.requires_user", "LiteLLM's OpenAI->Bedrock Converse converter",
          "bedrock requires at least one non-system message",
          "BerriAI/litellm litellm/litellm_core_utils/prompt_templates/factory.py "
          "(BedrockConverseMessagesProcessor._initial_message_setup)"),
    _rule("BR-8", "content.tool_only_assistant", "AWS Bedrock OpenAI-compatible endpoint",
          "messages: text content blocks must be non-empty",
          "anomalyco/opencode#17395, anomalyco/opencode#17394, vercel/ai#14612"),
    # -- Gemini (§7) ------------------------------------------------------------------------
    _rule("GM-1", (_ORPHAN, _DUP_RESULT), "Google Gemini / Vertex AI",
          "Please ensure that function response turn comes immediately after a function call turn.",
          "langchain-ai/langchain#27799, GoogleCloudPlatform/generative-ai#368, "
          "google-gemini/deprecated-generative-ai-js#267, google-gemini/gemini-cli#26956"),
    _rule("GM-2", "role.first_user", "Google Gemini / Vertex AI",
          "Please ensure that function call turn comes immediately after a user turn or after a function response turn.",
          "google-gemini/gemini-cli#11814, continuedev/continue#11164, lbjlaq/Antigravity-Manager#3396"),
    _rule("GM-3", _UNANSWERED, "Google Gemini / Vertex AI",
          "Please ensure that the number of function response parts is equal to the number of function "
          "call parts of the function call turn.",
          "google-gemini/gemini-cli#4217, google-gemini/gemini-cli#16415, google-gemini/gemini-cli#5443, "
          "microsoft/vscode#299295"),
    _rule("GM-4", "role.alternate", "Google Gemini / Vertex AI",
          "Please ensure that multiturn requests alternate between user and model.",
          "microsoft/autogen#2900, langchain-ai/langchain#22651, NousResearch/hermes-agent#55427"),
    _rule("GM-5", "role.last_user_or_tool", "Google Gemini (newer models)",
          "Requests ending with a model turn are not supported.",
          "pipecat-ai/pipecat#5821, crewAIInc/crewAI#7134, crewAIInc/crewAI#7157, crewAIInc/crewAI#6973"),
    _rule("GM-6a", "content.nonempty_message", "Google Gemini / Vertex AI",
          "* GenerateContentRequest.contents[{i}].parts: contents.parts must not be empty.",
          "vercel/ai#3775, egoist/chatwise-releases#250, QuantumNous/new-api#1060, livekit/agents#1397",
          native_index=True, roles=("user", "assistant")),
    _rule("GM-6b", "role.requires_user", "Google Gemini / Vertex AI",
          "* GenerateContentRequest.contents: contents is not specified",
          "ikechan8370/chatgpt-plugin#733, NousResearch/hermes-agent#57942"),
    _rule("GM-7", "tool.response_name", "Google Gemini / Vertex AI (Gemini 3.x)",
          "* GenerateContentRequest.contents[{i}].parts[{j}].function_response.name: Name cannot be empty.",
          "langflow-ai/langflow#9437, archestra-ai/archestra#7583, AstrBotDevs/AstrBot#9876, "
          "NousResearch/hermes-agent#72089", native_index=True),
    _rule("GM-9", "fields.unknown", "Gemini OpenAI-compatible endpoint",
          'Invalid JSON payload received. Unknown name "{field}": Cannot find field.',
          "bytedance/deer-flow#1515, Gitlawb/openclaude#585", fields="chat"),
    # -- Mistral (§8; the mistral-common validator is authoritative) --------------------------
    _rule("MI-1", "role.mistral_transitions", "Mistral API (code 3230), mistral-common",
          "Unexpected role '{current}' after role '{previous}'",
          "mistralai/mistral-common src/mistral_common/protocol/instruct/validator.py; zed-industries/zed#37021, "
          "avante-corp/avante.nvim#2695, NousResearch/hermes-agent#20154, charmbracelet/crush#279"),
    _rule("MI-2", "role.last_user_or_tool", "Mistral API, mistral-common",
          "Expected last role User or Tool (or Assistant with prefix True) for serving but got assistant",
          "0xPlaygrounds/rig#708, pipecat-ai/pipecat#2408"),
    _rule("MI-3", (_UNANSWERED, _ORPHAN, _DUP_RESULT), "Mistral API, mistral-common",
          "Not the same number of function calls and responses",
          "mistralai/client-ts#106, camel-ai/camel#1467, 567-labs/instructor#724, partITech/php-mistral#57, "
          "NousResearch/hermes-agent#11722"),
    _rule("MI-4", "tool.id_format", "Mistral API (code 3280), vLLM/omlx mistral tokenizer",
          "Tool call id was {id} but must be a-z, A-Z, 0-9, with a length of 9.",
          "langchain-ai/langchain#24668, jackmpcollins/magentic#276, editor-code-assistant/eca#233, "
          "mistralai/mistral-vibe#1075, vllm-project/vllm#12332, jundot/omlx#1997"),
    _rule("MI-5", "content.not_both_text_and_calls", "Mistral API (legacy; devstral 2026), mistral-common < V5",
          "Assistant message must have either content or tool_calls, but not both.",
          "langchain-ai/langchain#21196, OpenHands/OpenHands#8685, mistralai/mistral-common#186, "
          "vllm-project/vllm#16774, github/copilot-cli#4884"),
    _rule("MI-6a", "tool.duplicate_call_id", "mistral-common V13",
          "Duplicate tool call id {id} in assistant message",
          "mistralai/mistral-common src/mistral_common/protocol/instruct/validator.py; NousResearch/hermes-agent#11722"),
    _rule("MI-7", "role.first_user", "mistral-common",
          "Conversation must start with a user message or system message",
          "mistralai/mistral-common src/mistral_common/protocol/instruct/validator.py "
          "(_validate_message_list_structure); providers.md §8 MI-7. A history that starts with an assistant "
          "tool call fails earlier, as MI-3 (\"Not the same number of function calls and responses\"; v11+: "
          "\"Unexpected tool call id {id} in tool results\"): the validator pairs calls from message 1 on"),
    _rule("MI-8", "content.part_type", "mistral-common",
          "Content chunk must have a type field.",
          "mistralai/mistral-common src/mistral_common/protocol/instruct/messages.py (_content_from_openai)"),
    _rule("MI-9", "content.string_only", "mistral-common",
          "Unexpected content chunk types in assistant message",
          "mistralai/mistral-common src/mistral_common/protocol/instruct/validator.py "
          "(_validate_content_chunk_types: the list of the chunk types found follows; a part type it does not "
          "know at all fails as \"'tool_use' is not a valid ChunkTypes\"); assistant content is text only",
          roles=("assistant",)),
    _rule("MI-13", "content.string_only", "mistral-common",
          "Unexpected content chunk types in tool message",
          "mistralai/mistral-common src/mistral_common/protocol/instruct/validator.py "
          "(_validate_tool_content_chunks: text chunks only, up to v13)", roles=("tool",)),
    _rule("MI-10", "content.null", "mistral-common",
          "2 validation errors for UserMessage content.str Input should be a valid string",
          "mistralai/mistral-common src/mistral_common/protocol/instruct/messages.py (UserMessage.content is "
          "a string or a list of chunks)", roles=("user", "system", "tool")),
    _rule("MI-11", "reasoning.unsupported", "mistral-common tokenizers v3 and v7",
          "Unexpected content chunk types in assistant message: ['ThinkChunk']",
          "mistralai/mistral-common src/mistral_common/protocol/instruct/validator.py (MistralRequestValidatorV5 "
          "accepts TextChunk only; v11 adds ThinkChunk); reasoning/reasoning_content become a ThinkChunk in "
          "AssistantMessage.from_openai, which also rejects \"`reasoning_content` and `reasoning` should be equal.\""),
    _rule("MI-12", "content.text_then_calls", "mistral-common tokenizer v3",
          "Cannot have tool calls and content defined in the same assistant message",
          "mistralai/mistral-common src/mistral_common/tokens/tokenizers/instruct.py (InstructTokenizerV3); "
          "its request normalizer (protocol/instruct/normalize.py, _aggregate_assistant_messages) first merges "
          "consecutive assistant messages, so MI-5's split is undone and no lossless form exists on v3"),
    _rule("MI-14", "fields.unknown", "Mistral API, mistral-common",
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
    _rule("MI-15", "role.developer", "Mistral API, mistral-common",
          "Input tag 'developer' found using 'role' does not match any of the expected tags: "
          "<Roles.system: 'system'>, <Roles.user: 'user'>, <Roles.assistant: 'assistant'>, <Roles.tool: 'tool'>",
          "mistralai/mistral-common src/mistral_common/protocol/instruct/messages.py (ChatMessage: SystemMessage, "
          "UserMessage, AssistantMessage or ToolMessage, discriminated by role; pydantic's union_tag_invalid)"),
    # -- Groq (§9) --------------------------------------------------------------------------
    _rule("GQ-1", "reasoning.unsupported", "Groq",
          "'messages.{i}' : for 'role:assistant' the following must be satisfied[('messages.{i}' : "
          "property '{field}' is unsupported)]",
          "janhq/jan#8136, tashfeenahmed/freellmapi#1070, SimonSchubert/Kai#265, "
          "vellum-ai/vellum-assistant#42635, musistudio/llms#64"),
    _rule("GQ-2", "tool.id_missing", "Groq",
          "'messages.{i}' : for 'role:tool' the following must be satisfied[('messages.{i}.tool_call_id' : "
          "property 'tool_call_id' is missing)]",
          "hackclub/ai#22"),
    _rule("GQ-3", "content.string_only", "Groq",
          "'messages.{i}' : for 'role:tool' the following must be satisfied[('messages.{i}.content' : "
          "value must be a string)]",
          "CherryHQ/cherry-studio#3307, tidyverse/ellmer#162", roles=("tool",)),
    _rule("GQ-4", "fields.role_specific", "Groq",
          "'messages.{i}' : for 'role:{role}' the following must be satisfied[('messages.{i}' : property "
          "'tool_calls' is unsupported, did you mean 'tool_call_id'?)]",
          "julep-ai/julep#885"),
    _rule("GQ-5", "fields.unknown", "Groq",
          "'messages.{i}' : for 'role:{role}' the following must be satisfied[('messages.{i}' : property "
          "'{field}' is unsupported)]",
          "providers.md §9 (field support is strict: GQ-1's envelope for any property); janhq/jan#8136, "
          "musistudio/llms#64", fields="chat"),
    # -- xAI (§10) --------------------------------------------------------------------------
    _rule("XA-1", ("content.tool_only_assistant", "content.no_elements"), "xAI Grok",
          "Invalid request content: Each message must have at least one content element.",
          "AstrBotDevs/AstrBot#6447 (fix PR #6551), langchain-ai/langchain#34140, charmbracelet/crush#964, "
          "n8n-io/n8n#14797"),
    _rule("XA-2", "content.single_text", "xAI Grok",
          "The model expects a single `text` element per message.",
          "nocmt/LLMSearchPlus#2"),
    _rule("XA-3", "tool.arguments_json", "xAI Grok",
          "The arguments to a tool_call with ID '{id}' are not a valid JSON string. Parsing error: "
          'Error("EOF while parsing a value", line: 1, column: 0)',
          "spiceai/spiceai#4734"),
    # -- Qwen / DashScope (§11) -------------------------------------------------------------
    _rule("QW-1", _UNANSWERED, "Qwen DashScope",
          '<400> InternalError.Algo.InvalidParameter: An assistant message with "tool_calls" must be followed '
          'by tool messages responding to each "tool_call_id". The following tool_call_ids did not have '
          "response messages: message[{i}].role",
          "QwenLM/qwen-code#606, QwenLM/qwen-code#2435, QwenLM/Qwen3-Coder#455"),
    _rule("QW-2", _ORPHAN, "Qwen DashScope",
          '<400> InternalError.Algo.InvalidParameter: messages with role "tool" must be a response to a '
          'preceeding message with "tool_calls".',
          "philschmid/mcp-openai-gemini-llama-example#5, alibaba/spring-ai-alibaba#914"),
    _rule("QW-3", "role.requires_user", "Qwen DashScope",
          "<400> InternalError.Algo.InvalidParameter: The input messages do not contain elements with the role of user",
          "langfuse/langfuse#10513, agentscope-ai/agentscope-java#613, coze-dev/coze-studio#2557"),
    # -- Zhipu GLM / Z.ai (§12) -------------------------------------------------------------
    _rule("ZP-1", (_UNANSWERED, _ORPHAN, _DUP_RESULT, "role.requires_user", "tool.duplicate_call_id"),
          "Zhipu GLM / Z.ai",
          '{"code":"1214","message":"messages 参数非法。请检查文档。"}',
          "MetaGLM/zhipuai-sdk-python-v4#14, lobehub/lobehub#11408, anomalyco/opencode#2557 (fix PR #2659)"),
    _rule("ZP-2", "content.part_type", "Zhipu GLM",
          "request param validation error, Value error, message[{i}].content[{j}] has invalid field(s): text",
          "BigPizzaV3/CodexPlusPlus#329"),
    _rule("ZP-3", "reasoning.required_on_tool_turns", "Z.ai GLM-4.7/5.x preserved thinking",
          "thinking is enabled but reasoning_content is missing in assistant tool call message at index {i}",
          "https://docs.z.ai/guides/capabilities/thinking-mode; the Kimi-style text as seen through "
          "new-api: QuantumNous/new-api#4408"),
    # -- Self-hosted chat templates and Ollama (§15) -----------------------------------------
    _rule("JT-1", ("role.alternate", "role.first_user"), "HF Jinja chat templates (vLLM, SGLang, TGI, llama.cpp)",
          "Conversation roles must alternate user/assistant/user/assistant/...",
          "unslothai/unsloth#334, run-llama/llama_index#11731, vllm-project/vllm#6862, ggml-org/llama.cpp#19851, "
          "huggingface/text-generation-inference#3198"),
    _rule("JT-2", "role.system_unsupported", "Gemma chat templates",
          "System role not supported",
          "sgl-project/sglang#892, huggingface/chat-ui#1386, EleutherAI/lm-evaluation-harness#2109"),
    _rule("JT-3", "role.system_position", "Qwen3.5+ chat templates (llama.cpp, vLLM)",
          "System message must be at the beginning.",
          "moltis-org/moltis#317, ggml-org/llama.cpp#20733, QwenLM/Qwen3.8#244"),
    _rule("JT-4", "tool.single_call", "Llama 3.x chat templates (vLLM, transformers)",
          "This model only supports single tool-calls at once!",
          "vllm-project/vllm#12937, vllm-project/vllm#12938; raised by meta-llama/Llama-3.1-8B-Instruct's and "
          "Llama-3.2-3B-Instruct's chat_template"),
    _rule("JT-6", "content.string_only", "HF chat templates that concatenate content (Qwen, DeepSeek, Llama, "
          "Mistral, Phi, Gemma)",
          'can only concatenate str (not "list") to str',
          "the templates' own text (e.g. Qwen/Qwen2.5-7B-Instruct: '<|im_start|>' + message.role + '\\n' + "
          "message.content), rendered by transformers' render_jinja_template"),
    _rule("JT-7", "content.null", "HF chat templates that concatenate content",
          'can only concatenate str (not "NoneType") to str',
          "as JT-6 (a null content of a message without tool calls)"),
    _rule("JT-8", "role.requires_user", "Qwen3.5 chat template",
          "No user query found in messages.",
          "Qwen/Qwen3.5-4B chat_template (raise_exception)"),
    _rule("JT-9", "tool.id_format", "Mistral chat templates (Mistral-Nemo, Mistral-Small-3.x)",
          "Tool call IDs should be alphanumeric strings with length 9!",
          "mistralai/Mistral-Nemo-Instruct-2407 and Mistral-Small-3.2-24B-Instruct-2506 chat_template "
          "(raise_exception); the same rule as MI-4"),
    _rule("JT-10", "role.developer", "Qwen3.5 chat template",
          "Unexpected message role.",
          "Qwen/Qwen3.5-4B chat_template (raise_exception for a role other than system, user, assistant, tool)"),
    _rule("JT-11", "role.mistral_transitions", "Mistral chat templates (Mistral-Nemo, Mistral-Small-3.x)",
          "After the optional system message, conversation roles must alternate user/assistant/user/assistant/...",
          "mistralai/Mistral-Nemo-Instruct-2407 chat_template: tool messages and assistant messages with "
          "tool_calls are skipped when counting, so a user right after a tool result breaks the alternation"),
    _rule("JT-5a", "tool.arguments_object", "HF templates used directly (Qwen3-Coder...)",
          "TypeError: Can only get item pairs from a mapping.",
          "QwenLM/Qwen3-Coder#444, huggingface/transformers#45419"),
    _rule("JT-12", "tool.arguments_valid_json", "HF templates that read arguments as a mapping (Qwen3.5+)",
          "TypeError: Can only get item pairs from a mapping.",
          "as JT-5a: arguments cut off mid-JSON cannot be decoded into a mapping, so they stay a string"),
    _rule("JT-5b", "tool.arguments_object", "Ollama native /api/chat",
          "json: cannot unmarshal string into Go struct field ChatRequest.messages.tool_calls.function.arguments "
          "of type api.ToolCallFunctionArguments",
          "aliasrobotics/cai#76, neuron-core/neuron-ai#219"),
    _rule("OL-3", "tool.arguments_valid_json", "Ollama native /api/chat",
          "json: cannot unmarshal string into Go struct field ChatRequest.messages.tool_calls.function.arguments "
          "of type api.ToolCallFunctionArguments",
          "as JT-5b: arguments that are not JSON (cut off) cannot be decoded into an object, so they stayed a "
          "string; closed where they were cut, else {} (the original kept in the report)"),
    _rule("OL-1", "content.string_only", "Ollama native /api/chat",
          "json: cannot unmarshal array into Go struct field ChatRequest.messages.content of type string",
          "BerriAI/litellm#11273, BerriAI/litellm#10127, google/adk-python#191"),
    _rule("OL-2", "content.tool_only_assistant", "Ollama OpenAI-compatible /v1",
          "invalid message content type: <nil>",
          "SAIL-Research-Lab/cheetahclaws#72, tombii/better-ccflare#141"),
]

#: Every rule, by id.
RULES: dict[str, Rule] = {rule.id: rule for rule in _CATALOGUE}
assert len(RULES) == len(_CATALOGUE), "duplicate rule id"
assert all(k in KEYS for rule in _CATALOGUE for k in rule.keys), "rule with an unknown key"


_PLACEHOLDER = re.compile(r"\{(i|j|n|c|id|ids|name|role|field|first|current|previous)\}")


def render(text: str, values: Mapping[str, Any]) -> str:
    """A rule's text with its placeholders filled from ``values``."""
    # Only the known placeholders are filled: provider texts contain other braces (ZP-1's
    # JSON), and an unknown value ({c}: a JSON column we cannot know) stays visible.
    def fill(match: re.Match[str]) -> str:
        value = values.get(match.group(1))
        if value is None:
            return match.group(0)
        try:
            return str(value)
        except RecursionError:  # an id that is a list nested thousands deep: say so, do not crash
            return f"<{type(value).__name__} nested too deeply to show>"

    return _PLACEHOLDER.sub(fill, text)
