"""The built-in profiles, as data: which provider rules each enforces, and its encoding.

Each entry is a profile's fields (``Profile``), in registry order. An entry with ``extends``
names an earlier entry and holds only its changes to it: ``add_rules`` / ``remove_rules``
edit the parent's rules, the other fields replace the parent's (``_profiles._build``, the
same merge as a profile file's). The rule ids are the catalogue's (``rules.RULES``).
"""

from __future__ import annotations

from typing import Any, Literal

__all__ = ["BUILTINS", "ProfileName"]

_CORE_TOOLS = ("OA-1", "OA-2", "OA-3", "OA-4")

#: The built-in profiles, in registry order (``PROFILES`` keeps it).
BUILTINS: tuple[dict[str, Any], ...] = (
    dict(
        name="default",
        description="The core's repairs only; checks the OpenAI tool-pairing rules. Any OpenAI-compatible API.",
        rules=_CORE_TOOLS,
    ),
    dict(
        name="openai", extends="default", description="OpenAI Chat Completions and Azure OpenAI.",
        add_rules=["OA-5", "OA-6a", "OA-6c", "OA-6d", "OA-7"], tool_only_content="null", id_style="openai40",
    ),
    dict(
        name="deepseek", description="DeepSeek API (V3.x/V4). Thinking on by default (V4); 'deepseek:no-thinking' for off.",
        rules=("DS-1", "DS-2", "OA-3", "OA-4", "DS-3b", "DS-5b"),
        tool_only_content="null", reasoning="require", thinking=True, content_form="string",
    ),
    dict(
        name="moonshot", description="Moonshot / Kimi (K2, K2.5+, K3) hosted. Thinking on; 'moonshot:no-thinking' for off.",
        rules=("MS-1", "OA-2", "OA-3", "OA-4", "MS-2", "MS-3", "MS-4"),
        tool_only_content="null", reasoning="require", thinking=True, content_form="string",
    ),
    dict(
        name="anthropic",
        description="OpenAI-shaped requests that a gateway turns into Claude (Anthropic's /v1/chat/completions, "
        "OpenRouter, LiteLLM, Copilot). Claude >= 4.6: no prefill.",
        rules=("AN-1", "AN-3", "AN-4", "AN-5", "AN-7a", "AN-7b", "AN-8", "AN-9", "AN-10a", "AN-11", "AN-12",
               "AN-13", "AN-14", "AN-15", "AN-16"),
        tool_only_content="null", id_style="anthropic64", trailing_assistant="forbid", system="leading",
        alternate=True, opaque="plain",
    ),
    dict(
        name="bedrock", extends="anthropic",
        description="AWS Bedrock Converse (any model) and InvokeModel with Claude.",
        remove_rules=["AN-3", "AN-7a", "AN-7b", "AN-10a", "AN-15"], add_rules=["BR-1", "BR-2", "BR-3", "BR-5", "BR-6"],
        first_user=True,
    ),
    dict(
        name="gemini", description="Google Gemini / Vertex AI through an OpenAI-shaped converter.",
        rules=("GM-1", "GM-2", "GM-3", "OA-4", "GM-4", "GM-5", "GM-6a", "GM-6b", "GM-7", "GM-9", "GM-10", "GM-11",
               "GM-12", "GM-13"),
        tool_only_content="null", trailing_assistant="forbid", system="leading", alternate=True, first_user=True,
        opaque="plain",
    ),
    dict(
        name="mistral", description="Mistral La Plateforme, and vLLM with the mistral tokenizer (mistral-common).",
        rules=("MI-1", "MI-2", "MI-3", "MI-4", "MI-5", "MI-6a", "MI-7", "MI-8", "MI-9", "MI-10", "MI-11",
               "MI-13", "MI-14", "MI-15"),
        tool_only_content="null", id_style="mistral9", trailing_assistant="prefix", system="leading",
        first_user=True, content_form="string", reasoning="strip", opaque="plain",
    ),
    dict(
        name="mistral-v3", extends="mistral",
        description="mistral-common tokenizer v3 (Mistral 7B v0.3, Mixtral 8x22B, Codestral 22B): "
        "as mistral, and the text before a turn's calls is dropped (v3 cannot send both; kept in the report).",
        add_rules=["MI-12"],
    ),
    dict(
        name="groq", extends="default",
        description="Groq (strict field validation; no reasoning fields in history).",
        add_rules=["OA-6a", "GQ-1", "GQ-2", "GQ-3", "GQ-4", "GQ-5"], tool_only_content="empty", reasoning="strip",
        content_form="string",
    ),
    dict(
        name="xai", extends="default", description="xAI Grok.", add_rules=["OA-6a", "XA-1", "XA-2", "XA-3"],
        tool_only_content="empty", content_form="string",
    ),
    dict(
        name="qwen",
        description="Qwen on Alibaba DashScope (native and OpenAI-compatible). 'qwen:thinking' pads reasoning.",
        rules=("QW-1", "QW-2", "OA-3", "OA-4", "QW-3"), tool_only_content="null", reasoning="require",
    ),
    dict(
        name="zhipu", description="Zhipu GLM / Z.ai. 'zhipu:thinking' for preserved thinking (clear_thinking=false).",
        rules=("ZP-1", "ZP-2", "ZP-3"), tool_only_content="null", id_style="unique", reasoning="require",
    ),
    dict(
        name="jinja-strict",
        description="Self-hosted HF chat templates without tool-aware alternation (vLLM, SGLang, TGI, llama.cpp).",
        rules=("JT-1", "JT-3", "JT-6", "JT-7", "JT-8", "JT-10", "JT-15"), tool_only_content="empty", reasoning="strip",
        system="single", alternate=True, first_user=True, content_form="string", opaque="plain",
    ),
    # Model families whose template needs what another forbids (issue 14; each judged by its template).
    # Llama 3.x renders a message with a call as the call alone, and never asks for alternation:
    # the text beside a call goes first as its own message (JT-13), which alternation would merge back.
    dict(
        name="llama3", extends="jinja-strict",
        description="Llama 3.1 / 3.2 / 3.3 chat templates: one tool call per assistant message "
        "(parallel calls sent as call/result rounds); the text beside a call sent as its own message.",
        remove_rules=["JT-1"], add_rules=["JT-14", "JT-4", "JT-13"], alternate=False,
    ),
    dict(
        name="qwen3", extends="jinja-strict",
        description="Qwen3 / Qwen2.5 chat templates (string content, '' beside calls).",
    ),
    dict(
        name="jinja-mapping", extends="jinja-strict",
        description="Chat templates that read a call's arguments as a mapping (GLM-4.6/4.7, DeepSeek-V3.2/V4, "
        "Kimi K2, MiniMax-M2, Nemotron-3, Seed-OSS, Qwen3-Coder, Qwen3.5+).",
        add_rules=["JT-5a", "JT-12"], arguments="object",
    ),
    dict(
        name="qwen3.5", extends="jinja-mapping",
        description="Qwen3.5+ and Qwen3-Coder chat templates: call arguments as a mapping.",
    ),
    dict(
        name="gemma", extends="jinja-strict",
        description="Gemma 2 / Gemma 3 chat templates: no system role (folded into the first user turn).",
        remove_rules=["JT-3"], add_rules=["JT-2"], system="fold",
    ),
    dict(
        name="mistral-template", extends="jinja-strict",
        description="Mistral chat templates served without mistral-common (Mistral-Nemo, "
        "Mistral-Small-3.x, Devstral via HF templates): 9-character ids, user/assistant alternation that skips "
        "tool turns.", add_rules=["JT-9", "JT-11"], id_style="mistral9",
    ),
    dict(
        name="hermes", extends="jinja-strict",
        description="Hermes-3 (tool use) chat template: the text beside calls sent as its own message (the "
        "template shows only the calls); no alternation asked.",
        remove_rules=["JT-1"], add_rules=["JT-13"], alternate=False,
    ),
    dict(
        name="gpt-oss", extends="llama3",
        description="gpt-oss chat template (harmony): string content, '' beside calls, one call per assistant "
        "message, the text beside a call as its own message (the template drops it before a final answer).",
    ),
    dict(
        name="ollama", description="Ollama native /api/chat (arguments as objects, string content).",
        rules=("OL-1", "JT-5b", "OL-3"), tool_only_content="empty", content_form="string", arguments="object",
    ),
    dict(
        name="strict",
        description="The safe common ground when the target is unknown (providers.md (b)): all structural rules; "
        "not MI-5 split, reasoning require/strip, or the null-vs-\"\" encoding.",
        rules=(*_CORE_TOOLS, "OA-6a", "OA-6c", "OA-6d", "AN-4", "MI-4", "GM-7", "BR-1", "BR-2", "QW-3", "AN-11",
               "JT-3", "MI-1", "AN-7a", "AN-7b", "AN-8", "AN-9"),
        tool_only_content="null", id_style="mistral9", trailing_assistant="forbid", system="single",
        alternate=True, first_user=True,
    ),
)

#: The built-in profiles by name, as a type (``normalizer.ProfileName``, for type checkers:
#: ``tests/test_types.py`` keeps it in step with :data:`BUILTINS`), and the flag spellings
#: the README documents.
ProfileName = Literal[
    "default", "openai", "deepseek", "moonshot", "anthropic", "bedrock", "gemini", "mistral", "mistral-v3",
    "groq", "xai", "qwen", "zhipu", "jinja-strict", "llama3", "qwen3", "jinja-mapping", "qwen3.5", "gemma",
    "mistral-template", "hermes", "gpt-oss", "ollama", "strict",
    "deepseek:no-thinking", "moonshot:no-thinking", "qwen:thinking", "zhipu:thinking",
]
