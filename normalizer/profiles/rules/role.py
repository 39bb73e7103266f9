"""Role rules: which roles may come where (order, alternation, system placement)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .._rules import Rule, word
from ._base import KeyRule, Msg, Out, Plan

if TYPE_CHECKING:
    from .._check import Checker

__all__ = ["RULES"]

# mistral-common's transition table (MI-1): what may follow each role.
_MISTRAL_NEXT = {
    "system": {"user", "assistant", "system"},
    "user": {"assistant", "system", "user"},
    "assistant": {"assistant", "user", "tool"},
    "tool": {"assistant", "tool"},
}


class MistralTransitions(KeyRule):
    key = "role.mistral_transitions"
    summary = "only Mistral's allowed role transitions"
    words = (
        word("MI-1", key, "Mistral API (code 3230), mistral-common",
             "Unexpected role '{current}' after role '{previous}'",
             "mistralai/mistral-common src/mistral_common/protocol/instruct/validator.py; zed-industries/zed#37021, "
             "avante-corp/avante.nvim#2695, NousResearch/hermes-agent#20154, charmbracelet/crush#279"),
        word("JT-11", key, "Mistral chat templates (Mistral-Nemo, Mistral-Small-3.x)",
             "After the optional system message, conversation roles must alternate user/assistant/user/assistant/...",
             "mistralai/Mistral-Nemo-Instruct-2407 chat_template: tool messages and assistant messages with "
             "tool_calls are skipped when counting, so a user right after a tool result breaks the alternation"),
    )

    def on_order(self, c: Checker, msg: Msg, role: str, index: int, out: Out) -> None:
        prev = c.prev
        if prev is not None and role not in _MISTRAL_NEXT[prev]:
            c.emit(out, self, index, current=role, previous=prev)

    def repair(self, plan: Plan, words: Sequence[Rule]) -> None:
        plan.bridge = True  # an assistant between a tool result and a user message


class Developer(KeyRule):
    key = "role.developer"
    summary = "no `developer` role (it is sent as `system`)"
    words = (
        word("AN-13", key, "LiteLLM's OpenAI->Anthropic converter",
             "Invalid Message passed in {'role': 'developer', ...}",
             "BerriAI/litellm litellm/litellm_core_utils/prompt_templates/factory.py (anthropic_messages_pt)"),
        word("MI-15", key, "Mistral API, mistral-common",
             "Input tag 'developer' found using 'role' does not match any of the expected tags: "
             "<Roles.system: 'system'>, <Roles.user: 'user'>, <Roles.assistant: 'assistant'>, <Roles.tool: 'tool'>",
             "mistralai/mistral-common src/mistral_common/protocol/instruct/messages.py (ChatMessage: SystemMessage, "
             "UserMessage, AssistantMessage or ToolMessage, discriminated by role; pydantic's union_tag_invalid)"),
        word("GM-13", key, "LiteLLM's OpenAI->Gemini converter",
             "Invalid Message passed in - {'role': 'developer', ...}",
             "BerriAI/litellm litellm/llms/vertex_ai/gemini/transformation.py (gemini_convert_messages_with_history: "
             "a role it does not handle is refused); issue 38"),
        word("JT-10", key, "Qwen3.5 chat template",
             "Unexpected message role.",
             "Qwen/Qwen3.5-4B chat_template (raise_exception for a role other than system, user, assistant, tool)"),
    )

    def on_order(self, c: Checker, msg: Msg, role: str, index: int, out: Out) -> None:
        if role == "system" and msg.get("role") == "developer":
            c.emit(out, self, index)

    def repair(self, plan: Plan, words: Sequence[Rule]) -> None:
        plan.developer_to_system = True


class SystemUnsupported(KeyRule):
    key = "role.system_unsupported"
    summary = "no system role at all"
    words = (
        word("OA-8", key, "OpenAI o1-mini (legacy models)",
             "Unsupported value: 'messages[{i}].role' does not support 'system' with this model.",
             "BerriAI/litellm#5671, microsoft/agent-framework#1077"),
        word("JT-2", key, "Gemma chat templates",
             "System role not supported",
             "sgl-project/sglang#892, huggingface/chat-ui#1386, EleutherAI/lm-evaluation-harness#2109"),
    )
    # Repaired by the profile's system="fold" (the stage).

    def on_order(self, c: Checker, msg: Msg, role: str, index: int, out: Out) -> None:
        if role == "system":
            c.emit(out, self, index)


class SystemPosition(KeyRule):
    key = "role.system_position"
    summary = "system messages only where the provider allows them"
    words = (
        word("AN-12", key, "Anthropic (before Opus 4.8)",
             'messages: Unexpected role "system". The Messages API accepts a top-level `system` parameter, '
             'not "system" as an input message role.',
             "ianarawjo/ChainForge#271, Maol-1997/cursor-claude-connector#3; "
             "https://platform.claude.com/docs/en/build-with-claude/mid-conversation-system-messages"),
        word("JT-3", key, "Qwen3.5+ chat templates (llama.cpp, vLLM)",
             "System message must be at the beginning.",
             "moltis-org/moltis#317, ggml-org/llama.cpp#20733, QwenLM/Qwen3.8#244"),
    )
    # Repaired by the profile's system placement (the stage): it says where systems may go.

    def on_order(self, c: Checker, msg: Msg, role: str, index: int, out: Out) -> None:
        if role == "system":
            mode = c.profile.system
            if (c.started and mode != "anywhere") or (mode == "single" and c.systems > 0):
                c.emit(out, self, index)


class FirstUser(KeyRule):
    key = "role.first_user"
    summary = "the first non-system message is a user message"
    words = (
        word("DS-4b", key, "DeepSeek R1 (legacy)",
             "The first message (except the system message) of deepseek-reasoner must be a user message, "
             "but an assistant message detected.",
             "ChatGPTNextWeb/NextChat#6343, lobehub/lobehub#5601"),
        word("AN-10b", key, "Anthropic (legacy), Bedrock",
             'messages: first message must use the "user" role',
             "lobehub/lobehub#1601, langbot-app/LangBot#867"),
        word("BR-2", key, "AWS Bedrock Converse",
             "A conversation must start with a user message. Try again with a conversation that starts with a user message.",
             "langgenius/dify#12340, elastic/kibana#246393, strands-agents/sdk-typescript#727"),
        word("GM-2", key, "Google Gemini / Vertex AI",
             "Please ensure that function call turn comes immediately after a user turn or after a function response turn.",
             "google-gemini/gemini-cli#11814, continuedev/continue#11164, lbjlaq/Antigravity-Manager#3396"),
        word("MI-7", key, "mistral-common",
             "Conversation must start with a user message or system message",
             "mistralai/mistral-common src/mistral_common/protocol/instruct/validator.py "
             "(_validate_message_list_structure); providers.md §8 MI-7. A history that starts with an assistant "
             "tool call fails earlier, as MI-3 (\"Not the same number of function calls and responses\"; v11+: "
             "\"Unexpected tool call id {id} in tool results\"): the validator pairs calls from message 1 on"),
        word("JT-14", key, "Llama 3.x chat templates (vLLM, transformers)",
             "Cannot put tools in the first user message when there's no first user message!",
             "llama3.1.jinja, llama3.2.jinja (tools_in_user_message, true unless set)"),
    )
    # Also enforced by entries whose words live with their first key: JT-1 (at role.alternate).

    def on_order(self, c: Checker, msg: Msg, role: str, index: int, out: Out) -> None:
        if role != "system" and not c.started and role != "user":
            c.emit(out, self, index)

    def repair(self, plan: Plan, words: Sequence[Rule]) -> None:
        plan.first_user = True


class Alternate(KeyRule):
    key = "role.alternate"
    summary = "user and assistant turns alternate"
    words = (
        word("DS-4a", key, "DeepSeek R1 (legacy, Jan-Mar 2025)",
             "deepseek-reasoner does not support successive user or assistant messages (messages[{j}] and "
             "messages[{i}] in your input). You should interleave the user/assistant messages in the message sequence.",
             "deepseek-ai/DeepSeek-R1#21, Aider-AI/aider#2974, BerriAI/litellm#8018, open-webui/open-webui#9266"),
        word("AN-10a", key, "Anthropic (legacy; 1P now merges), Bedrock InvokeModel",
             'messages: roles must alternate between "user" and "assistant", but found multiple "{role}" roles in a row',
             "modelcontextprotocol/quickstart-resources#20, coaidev/coai#209, FlowiseAI/Flowise#2006"),
        word("BR-1", key, "AWS Bedrock Converse",
             "A conversation must alternate between user and assistant roles. Make sure the conversation "
             "alternates between user and assistant roles and try again.",
             "microsoft/semantic-kernel#10281, CopilotKit/CopilotKit#736, Portkey-AI/gateway#748, "
             "langchain-ai/langchainjs#6724, langchain-ai/langchain-aws#130"),
        word("GM-4", key, "Google Gemini / Vertex AI",
             "Please ensure that multiturn requests alternate between user and model.",
             "microsoft/autogen#2900, langchain-ai/langchain#22651, NousResearch/hermes-agent#55427"),
        word("JT-1", (key, "role.first_user"), "HF Jinja chat templates (vLLM, SGLang, TGI, llama.cpp)",
             "Conversation roles must alternate user/assistant/user/assistant/...",
             "unslothai/unsloth#334, run-llama/llama_index#11731, vllm-project/vllm#6862, ggml-org/llama.cpp#19851, "
             "huggingface/text-generation-inference#3198"),
    )

    def on_order(self, c: Checker, msg: Msg, role: str, index: int, out: Out) -> None:
        if role != "system" and c.prev_turn == role and role in ("user", "assistant"):
            c.emit(out, self, index, role=role, j=c.prev_turn_index)

    def repair(self, plan: Plan, words: Sequence[Rule]) -> None:
        plan.alternate = True


class RequiresUser(KeyRule):
    key = "role.requires_user"
    summary = "the history has a user message"
    words = (
        word("AN-15", key, "LiteLLM's OpenAI->Anthropic converter, Anthropic",
             "Anthropic requires at least one non-system message.",
             "BerriAI/litellm litellm/litellm_core_utils/prompt_templates/factory.py (anthropic_messages_pt); "
             "Anthropic: messages: at least one message is required"),
        word("BR-6", key, "LiteLLM's OpenAI->Bedrock Converse converter",
             "bedrock requires at least one non-system message",
             "BerriAI/litellm litellm/litellm_core_utils/prompt_templates/factory.py "
             "(BedrockConverseMessagesProcessor._initial_message_setup)"),
        word("GM-6b", key, "Google Gemini / Vertex AI",
             "* GenerateContentRequest.contents: contents is not specified",
             "ikechan8370/chatgpt-plugin#733, NousResearch/hermes-agent#57942"),
        word("QW-3", key, "Qwen DashScope",
             "<400> InternalError.Algo.InvalidParameter: The input messages do not contain elements with the role of user",
             "langfuse/langfuse#10513, agentscope-ai/agentscope-java#613, coze-dev/coze-studio#2557"),
        word("JT-8", key, "Qwen3.5 chat template",
             "No user query found in messages.",
             "Qwen/Qwen3.5-4B chat_template (raise_exception)"),
    )
    # Also enforced by entries whose words live with their first key: ZP-1 (at tool.unanswered_call).

    def on_close(self, c: Checker, last: Msg | None, out: Out) -> None:
        if c.index >= 0 and not c.seen_user:
            c.emit(out, self, None)

    def repair(self, plan: Plan, words: Sequence[Rule]) -> None:
        plan.requires_user = True


class LastUserOrTool(KeyRule):
    key = "role.last_user_or_tool"
    serving_only = True
    summary = "the history does not end with an assistant message"
    words = (
        word("AN-11", key, "Anthropic Claude >= 4.6",
             "This model does not support assistant message prefill. The conversation must end with a user message.",
             "https://platform.claude.com/docs/en/about-claude/models/whats-new-claude-4-6#prefill-removal; "
             "Skyvern-AI/skyvern#4795, langchain-ai/deepagents#1585, anthropics/claude-code#28478, vercel/ai#12296"),
        word("GM-5", key, "Google Gemini (newer models)",
             "Requests ending with a model turn are not supported.",
             "pipecat-ai/pipecat#5821, crewAIInc/crewAI#7134, crewAIInc/crewAI#7157, crewAIInc/crewAI#6973"),
        word("MI-2", key, "Mistral API, mistral-common",
             "Expected last role User or Tool (or Assistant with prefix True) for serving but got assistant",
             "0xPlaygrounds/rig#708, pipecat-ai/pipecat#2408"),
    )
    # Repaired by the profile's trailing_assistant ("prefix" or "forbid": the stage).

    def on_close(self, c: Checker, last: Msg | None, out: Out) -> None:
        if last is not None and last.get("role") == "assistant" and not last.get("tool_calls"):
            if not (last.get("prefix") is True and c.profile.trailing_assistant == "prefix"):
                c.emit(out, self, c.last_index)


#: In walk order (the order of their findings on one message).
RULES: tuple[KeyRule, ...] = (
    MistralTransitions(), Developer(), SystemUnsupported(), SystemPosition(), FirstUser(), Alternate(),
    RequiresUser(), LastUserOrTool(),
)
