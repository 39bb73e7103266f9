"""Tool rules: calls, their ids and arguments, and the results that answer them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..._content import ANTHROPIC_ID, MISTRAL_ID
from ..._json import JSONDecodeError, loads
from .._arguments import repeats_a_call
from .._rules import Rule, word
from ._base import KeyRule, Msg, Out, Plan

if TYPE_CHECKING:
    from .._check import Checker

__all__ = ["RULES"]

# The pairing rules (unanswered, orphan, duplicate result, empty tool_calls) are repaired by
# the core, for every profile: it answers each call once, right after its turn.


class UnansweredCall(KeyRule):
    key = "tool.unanswered_call"
    summary = "every tool call is answered by tool messages right after its turn"
    words = (
        word("OA-1", key, "OpenAI, Azure OpenAI",
             "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
             "'tool_call_id'. The following tool_call_ids did not have response messages: {ids}",
             "openai/codex#7051, openai/codex#8638, BerriAI/litellm#10083, aliasrobotics/cai#111, "
             "google/adk-python#417, pydantic/pydantic-ai#2360"),
        word("DS-1", key, "DeepSeek",
             "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
             "'tool_call_id'. (insufficient tool messages following tool_calls message)",
             "langgenius/dify#32222, agno-agi/agno#3105, smallmain/vscode-unify-chat-provider#248, "
             "Alishahryar1/free-claude-code#326"),
        word("MS-1", key, "Moonshot/Kimi",
             "an assistant message with 'tool_calls' must be followed by tool messages responding to each "
             "'tool_call_id'. The following tool_call_ids did not have response messages: {ids}",
             "MoonshotAI/kimi-cli#2405"),
        word("AN-1", key, "Anthropic",
             "messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately after: {ids}. "
             "Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
             "anthropics/claude-code#1237, anthropics/claude-code#2697, anthropics/claude-code#3512, "
             "OpenHands/OpenHands#7512, Kilo-Org/kilocode#5163", native_index=True),
        word("GM-3", key, "Google Gemini / Vertex AI",
             "Please ensure that the number of function response parts is equal to the number of function "
             "call parts of the function call turn.",
             "google-gemini/gemini-cli#4217, google-gemini/gemini-cli#16415, google-gemini/gemini-cli#5443, "
             "microsoft/vscode#299295"),
        word("MI-3", (key, "tool.orphan_result", "tool.duplicate_result"), "Mistral API, mistral-common",
             "Not the same number of function calls and responses",
             "mistralai/client-ts#106, camel-ai/camel#1467, 567-labs/instructor#724, partITech/php-mistral#57, "
             "NousResearch/hermes-agent#11722"),
        word("QW-1", key, "Qwen DashScope",
             '<400> InternalError.Algo.InvalidParameter: An assistant message with "tool_calls" must be followed '
             'by tool messages responding to each "tool_call_id". The following tool_call_ids did not have '
             "response messages: message[{i}].role",
             "QwenLM/qwen-code#606, QwenLM/qwen-code#2435, QwenLM/Qwen3-Coder#455"),
        word("ZP-1", (key, "tool.orphan_result", "tool.duplicate_result", "role.requires_user",
                      "tool.duplicate_call_id"),
             "Zhipu GLM / Z.ai",
             '{"code":"1214","message":"messages 参数非法。请检查文档。"}',
             "MetaGLM/zhipuai-sdk-python-v4#14, lobehub/lobehub#11408, anomalyco/opencode#2557 (fix PR #2659)"),
    )

    def on_unanswered(self, c: Checker, missing: list[str], index: int, out: Out) -> None:
        c.emit(out, self, index, ids=", ".join(missing))


class OrphanResult(KeyRule):
    key = "tool.orphan_result"
    summary = "every tool message answers a call of the assistant turn just before it"
    words = (
        word("OA-2", key, "OpenAI, Azure OpenAI",
             "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
             "miurla/morphic#136, smarter-sh/smarter#264, Nikunj2003/LLaMa-MCP-Streamlit#1, lobehub/lobehub#3613"),
        word("DS-2", key, "DeepSeek",
             "Messages with role 'tool' must be a response to a preceding message with 'tool_calls'",
             "FoundationAgents/OpenManus#23, FoundationAgents/OpenManus#744, qwersyk/Newelle#425"),
        word("AN-3", (key, "tool.duplicate_result"), "Anthropic",
             "messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` blocks: {id}. Each "
             "`tool_result` block must have a corresponding `tool_use` block in the previous message.",
             "anthropics/claude-code#13460, anthropics/claude-code#18947, router-for-me/CLIProxyAPI#497, "
             "github/copilot-cli#1159", native_index=True),
        word("BR-3", (key, "tool.duplicate_result"), "AWS Bedrock Converse",
             "The number of toolResult blocks at messages.{i}.content exceeds the number of toolUse blocks of previous turn.",
             "Just-Curieous/Curie#16, langgenius/dify-official-plugins#765, pydantic/pydantic-ai#2327",
             native_index=True),
        word("GM-1", (key, "tool.duplicate_result"), "Google Gemini / Vertex AI",
             "Please ensure that function response turn comes immediately after a function call turn.",
             "langchain-ai/langchain#27799, GoogleCloudPlatform/generative-ai#368, "
             "google-gemini/deprecated-generative-ai-js#267, google-gemini/gemini-cli#26956"),
        word("QW-2", key, "Qwen DashScope",
             '<400> InternalError.Algo.InvalidParameter: messages with role "tool" must be a response to a '
             'preceeding message with "tool_calls".',
             "philschmid/mcp-openai-gemini-llama-example#5, alibaba/spring-ai-alibaba#914"),
    )
    # Also enforced by entries whose words live with their first key: MI-3, ZP-1 (at tool.unanswered_call).

    def on_result(self, c: Checker, kind: str, msg: Msg, call_id: Any, position: int, first: int | None,
                  expected: str, index: int, out: Out) -> None:
        if kind == "orphan":
            c.emit(out, self, index, id=call_id, j=position)


class DuplicateResult(KeyRule):
    key = "tool.duplicate_result"
    summary = "one tool message per tool_call_id"
    words = (
        word("OA-3", key, "OpenAI, Azure OpenAI, Copilot",
             "Invalid parameter: Duplicate value for 'tool_call_id' of '{id}' in messages[{first}] and messages[{i}].",
             "agno-agi/agno#5116, fatwang2/search2ai#30, anomalyco/opencode#1211"),
    )
    # Also enforced by entries whose words live with their first key:
    # AN-3, BR-3, GM-1 (at tool.orphan_result); MI-3, ZP-1 (at tool.unanswered_call).

    def on_result(self, c: Checker, kind: str, msg: Msg, call_id: Any, position: int, first: int | None,
                  expected: str, index: int, out: Out) -> None:
        if kind == "duplicate":
            c.emit(out, self, index, id=call_id, first=first, j=position)


class EmptyToolCalls(KeyRule):
    key = "tool.empty_tool_calls"
    summary = "no `tool_calls: []`"
    words = (
        word("OA-4", key, "OpenAI (and vLLM Llama templates)",
             "Invalid 'messages[{i}].tool_calls': empty array. Expected an array with minimum length 1, "
             "but got an empty array instead.",
             "openai/openai-node#1341, vllm-project/vllm#13978"),
    )

    def on_empty_calls(self, c: Checker, index: int, out: Out) -> None:
        c.emit(out, self, index)  # opaque or not: an empty list is no state


class SingleCall(KeyRule):
    key = "tool.single_call"
    summary = "one tool call per assistant message"
    words = (
        word("JT-4", key, "Llama 3.x chat templates (vLLM, transformers)",
             "This model only supports single tool-calls at once!",
             "vllm-project/vllm#12937, vllm-project/vllm#12938; raised by meta-llama/Llama-3.1-8B-Instruct's and "
             "Llama-3.2-3B-Instruct's chat_template"),
    )

    def on_calls(self, c: Checker, msg: Msg, calls: list[Any], index: int, out: Out) -> None:
        if len(calls) > 1 and not c.opaque:
            c.emit(out, self, index)

    def repair(self, plan: Plan, words: Sequence[Rule]) -> None:
        plan.single_call = True


class DistinctCalls(KeyRule):
    key = "tool.distinct_calls"
    summary = "no two calls of one turn alike (one function, the same arguments)"
    words = (
        word("GM-12", key, "LiteLLM's OpenAI->Gemini converter, then Gemini",
             "Please ensure that the number of function response parts is equal to the number of function call "
             "parts of the function call turn.",
             "BerriAI/litellm litellm/llms/vertex_ai/gemini/transformation.py (gemini_convert_messages_with_history: "
             "a call part equal to one already in the model turn is not added, check_if_part_exists_in_parts; "
             "both results are); issue 38 item 3"),
    )

    def on_calls(self, c: Checker, msg: Msg, calls: list[Any], index: int, out: Out) -> None:
        if len(calls) > 1 and not c.opaque and repeats_a_call(calls):
            c.emit(out, self, index)

    def repair(self, plan: Plan, words: Sequence[Rule]) -> None:
        plan.distinct_calls = True


class IdFormat(KeyRule):
    key = "tool.id_format"
    summary = "call ids have the provider's format (length, charset)"
    words = (
        word("OA-5", key, "OpenAI, Azure OpenAI",
             "Invalid 'messages[{i}].tool_calls[{j}].id': string too long. Expected a string with maximum "
             "length 40, but got a string with length {n} instead.",
             "agno-agi/agno#5382, camel-ai/camel#2215, vercel/ai#8132, Portkey-AI/gateway#1062, "
             "openclaw/openclaw#875; not reproduced in 2026: vercel/ai#17233",
             severity="warning"),
        word("RX-7", key, "OpenAI Responses / Codex",
             "Invalid 'input[{i}].call_id': string too long. Expected a string with maximum length 64, "
             "but got a string with length {n} instead.",
             "AnswerDotAI/fastllm#45, orchidfiles/ungate#26, decolua/9router#393"),
        word("AN-5", key, "Anthropic, Bedrock",
             "messages.{i}.content.{j}.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'",
             "CommandCodeAI/command-code#323, tailcallhq/forgecode#1142, RooCodeInc/Roo-Code#10649, "
             "HKUDS/nanobot#4356; length 1-64: "
             "https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ToolUseBlock.html",
             native_index=True),
        word("MI-4", key, "Mistral API (code 3280), vLLM/omlx mistral tokenizer",
             "Tool call id was {id} but must be a-z, A-Z, 0-9, with a length of 9.",
             "langchain-ai/langchain#24668, jackmpcollins/magentic#276, editor-code-assistant/eca#233, "
             "mistralai/mistral-vibe#1075, vllm-project/vllm#12332, jundot/omlx#1997"),
        word("JT-9", key, "Mistral chat templates (Mistral-Nemo, Mistral-Small-3.x)",
             "Tool call IDs should be alphanumeric strings with length 9!",
             "mistralai/Mistral-Nemo-Instruct-2407 and Mistral-Small-3.2-24B-Instruct-2506 chat_template "
             "(raise_exception); the same rule as MI-4"),
    )
    # Repaired by the profile's id_style (the spelling writes every id in it).

    def on_call(self, c: Checker, call_id: Any, fname: Any, arguments: Any, j: int, block: Mapping[str, str],
                index: int, out: Out) -> None:
        style = c.profile.id_style
        if style == "keep" or style == "unique":
            return
        text = call_id if isinstance(call_id, str) else ""
        if style == "openai40":
            if len(text) > 40:
                c.emit(out, self, index, j=j, n=len(text))
        elif style == "responses64":
            if len(text) > 64:
                c.emit(out, self, index, n=len(text))
        elif style == "anthropic64":
            if not ANTHROPIC_ID.match(text):
                c.emit(out, self, index, j=j)
        elif style == "mistral9":
            if not MISTRAL_ID.match(text):
                c.emit(out, self, index, id=call_id)


class ArgumentsJson(KeyRule):
    key = "tool.arguments_json"
    summary = "call arguments are a non-empty JSON string"
    words = (
        word("XA-3", key, "xAI Grok",
             "The arguments to a tool_call with ID '{id}' are not a valid JSON string. Parsing error: "
             'Error("EOF while parsing a value", line: 1, column: 0)',
             "spiceai/spiceai#4734"),
    )
    # Repaired by the core (arguments written as a JSON string, "{}" when there are none).

    def on_call(self, c: Checker, call_id: Any, fname: Any, arguments: Any, j: int, block: Mapping[str, str],
                index: int, out: Out) -> None:
        if not isinstance(arguments, str) or not arguments.strip():
            if not isinstance(arguments, (dict, list)):
                c.emit(out, self, index, id=call_id)


class ArgumentsObject(KeyRule):
    key = "tool.arguments_object"
    summary = "call arguments are an object (Ollama native)"
    words = (
        word("JT-5a", key, "HF templates used directly (Qwen3-Coder...)",
             "TypeError: Can only get item pairs from a mapping.",
             "QwenLM/Qwen3-Coder#444, huggingface/transformers#45419"),
        word("JT-5b", key, "Ollama native /api/chat",
             "json: cannot unmarshal string into Go struct field ChatRequest.messages.tool_calls.function.arguments "
             "of type api.ToolCallFunctionArguments",
             "aliasrobotics/cai#76, neuron-core/neuron-ai#219"),
    )
    # Repaired by the profile's arguments="object" (the core decodes them as it cleans a call).

    def on_call(self, c: Checker, call_id: Any, fname: Any, arguments: Any, j: int, block: Mapping[str, str],
                index: int, out: Out) -> None:
        if isinstance(arguments, str):
            c.emit(out, self, index)


class ArgumentsValidJson(KeyRule):
    key = "tool.arguments_valid_json"
    summary = "call arguments parse as JSON (a truncated JSON string does not)"
    words = (
        word("AN-14", key, "LiteLLM's OpenAI->Anthropic converter",
             "Failed to parse tool call arguments for tool '{name}' (Anthropic tool invoke).",
             "BerriAI/litellm litellm/litellm_core_utils/prompt_templates/factory.py (the tool_use input is the "
             "parsed arguments; the JSON error follows, e.g. \"Error: Unterminated string starting at: line 1 "
             "column 7\"); NousResearch/hermes-agent repairs truncated arguments (research/hermes.md §4.9)"),
        word("JT-12", key, "HF templates that read arguments as a mapping (Qwen3.5+)",
             "TypeError: Can only get item pairs from a mapping.",
             "as JT-5a: arguments cut off mid-JSON cannot be decoded into a mapping, so they stay a string"),
        word("GM-10", key, "LiteLLM's OpenAI->Gemini converter (Gemini takes a call's args as an object)",
             "Unable to convert openai tool calls={message} to gemini tool calls. Received error={error}",
             "BerriAI/litellm litellm/litellm_core_utils/prompt_templates/factory.py "
             "(convert_to_gemini_tool_call_invoke: the args are the parsed arguments; a JSON error raises this)"),
        word("OL-3", key, "Ollama native /api/chat",
             "json: cannot unmarshal string into Go struct field ChatRequest.messages.tool_calls.function.arguments "
             "of type api.ToolCallFunctionArguments",
             "as JT-5b: arguments that are not JSON (cut off) cannot be decoded into an object, so they stayed a "
             "string; closed where they were cut, else {} (the original kept in the report)"),
    )

    def on_call(self, c: Checker, call_id: Any, fname: Any, arguments: Any, j: int, block: Mapping[str, str],
                index: int, out: Out) -> None:
        if isinstance(arguments, str) and arguments.strip():
            try:
                loads(arguments)  # (orjson refuses an integer of 309 digits or more: valid JSON)
            except JSONDecodeError:
                c.emit(out, self, index, name=fname)

    def repair(self, plan: Plan, words: Sequence[Rule]) -> None:
        plan.repairs_arguments = True


class DuplicateCallId(KeyRule):
    key = "tool.duplicate_call_id"
    summary = "call ids are unique across the whole conversation"
    words = (
        word("AN-4", key, "Anthropic",
             "messages.{i}.content.{j}: `tool_use` ids must be unique",
             "BerriAI/litellm#23510, anthropics/claude-code#20901, trycua/cua#524, anomalyco/opencode#1279",
             native_index=True),
        word("MI-6a", key, "mistral-common V13",
             "Duplicate tool call id {id} in assistant message",
             "mistralai/mistral-common src/mistral_common/protocol/instruct/validator.py; NousResearch/hermes-agent#11722"),
    )
    # Also enforced by entries whose words live with their first key: ZP-1 (at tool.unanswered_call).
    # Repaired by the profile's id_style ("unique", "anthropic64", "mistral9").

    def on_call(self, c: Checker, call_id: Any, fname: Any, arguments: Any, j: int, block: Mapping[str, str],
                index: int, out: Out) -> None:
        if not isinstance(call_id, str) or not call_id:
            return
        if call_id in block:
            c.emit(out, self, index, id=call_id, j=j)
            return
        seen = c.seen_ids
        if call_id in seen:
            c.emit(out, self, index, id=call_id, j=j)
        elif len(seen) < c.max_seen_ids:
            seen.add(call_id)
        elif not c.incomplete:
            c.give_up_ids()


class IdMissing(KeyRule):
    key = "tool.id_missing"
    summary = "tool messages carry a tool_call_id"
    words = (
        word("GQ-2", key, "Groq",
             "'messages.{i}' : for 'role:tool' the following must be satisfied[('messages.{i}.tool_call_id' : "
             "property 'tool_call_id' is missing)]",
             "hackclub/ai#22"),
    )
    claims_missing_ids = True
    # Repaired by the core (a result without an id answers no call: an orphan).

    def on_result(self, c: Checker, kind: str, msg: Msg, call_id: Any, position: int, first: int | None,
                  expected: str, index: int, out: Out) -> None:
        if kind == "no_id":
            c.emit(out, self, index)


class ResponseName(KeyRule):
    key = "tool.response_name"
    summary = "tool messages carry the `name` of the function they answer"
    words = (
        word("GM-7", key, "Google Gemini / Vertex AI (Gemini 3.x)",
             "* GenerateContentRequest.contents[{i}].parts[{j}].function_response.name: Name cannot be empty.",
             "langflow-ai/langflow#9437, archestra-ai/archestra#7583, AstrBotDevs/AstrBot#9876, "
             "NousResearch/hermes-agent#72089", native_index=True),
    )

    def on_result(self, c: Checker, kind: str, msg: Msg, call_id: Any, position: int, first: int | None,
                  expected: str, index: int, out: Out) -> None:
        if kind == "answer":
            name = msg.get("name")
            if not name or (expected and name != expected):
                c.emit(out, self, index, j=position)

    def repair(self, plan: Plan, words: Sequence[Rule]) -> None:
        plan.response_name = True


#: In walk order (the order of their findings on one message).
RULES: tuple[KeyRule, ...] = (
    UnansweredCall(), OrphanResult(), DuplicateResult(), EmptyToolCalls(), SingleCall(), DistinctCalls(), IdFormat(),
    ArgumentsJson(), ArgumentsObject(), ArgumentsValidJson(), DuplicateCallId(), IdMissing(), ResponseName(),
)
