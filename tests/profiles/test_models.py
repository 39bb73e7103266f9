"""Profile by model name: the table's rows, first match wins, ``default`` otherwise."""

from __future__ import annotations

import pytest

import normalizer
from normalizer.profiles import MODEL_PATTERNS, PROFILES
from normalizer.profiles._models import pattern_for_model


@pytest.mark.parametrize(("model", "profile", "tokenizer"), [
    ("mistral-small-2506", "mistral", "v7+"),
    ("mistralai/Mistral-Small-3.2-24B-Instruct-2506", "mistral", "v7+"),
    ("magistral-medium-2509", "mistral", "v7+"),
    ("mistral-large-2411", "mistral", "v7"),
    ("open-mistral-nemo-2407", "mistral-v3", "v3"),
    ("codestral-2405", "mistral-v3", "v3"),
    ("mistral-small-2402", "mistral-v3", "v1/v2"),
    ("mistralai/Mixtral-8x7B-Instruct-v0.1", "jinja-strict", None),
    ("meta-llama/Llama-3.1-8B-Instruct", "llama3", None),
    ("llama3.2:3b", "llama3", None),
    ("Qwen/Qwen3.5-4B", "qwen3.5", None),
    ("qwen3-coder-30b", "qwen3.5", None),
    ("Qwen/Qwen2.5-7B-Instruct", "qwen3", None),
    ("google/gemma-2-2b-it", "gemma", None),
    ("deepseek-ai/DeepSeek-V3.1", "jinja-strict", None),
    ("deepseek-ai/DeepSeek-V3.2", "jinja-mapping", None),
    ("deepseek-ai/DeepSeek-V4", "jinja-mapping", None),
    ("zai-org/GLM-4.6", "jinja-mapping", None),
    ("glm-4.6", "zhipu", None),  # Z.ai's API name
    ("moonshotai/Kimi-K2-Instruct", "jinja-mapping", None),
    ("kimi-k2-0905-preview", "moonshot", None),  # Moonshot's API name
    ("MiniMaxAI/MiniMax-M2", "jinja-mapping", None),
    ("nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", "jinja-mapping", None),
    ("nvidia/Llama-3.1-Nemotron-70B-Instruct", "llama3", None),
    ("ByteDance-Seed/Seed-OSS-36B-Instruct", "jinja-mapping", None),
    ("openai/gpt-oss-120b", "gpt-oss", None),
    ("ibm-granite/granite-4.0-h-small", "jinja-strict", None),
    ("HuggingFaceTB/SmolLM3-3B", "jinja-strict", None),
    ("NousResearch/Hermes-3-Llama-3.1-8B", "hermes", None),
    ("mistralai/Ministral-3-14B-Reasoning-2512", "mistral", "v7+"),
    ("google/gemma-4-31B-it", "gemma", None),
    ("meta-llama/Llama-4-Scout-17B-16E-Instruct", "llama3", None),
    ("deepseek-chat", "deepseek", None),
    ("claude-sonnet-4-5", "anthropic", None),
    ("gemini-2.5-pro", "gemini", None),
    ("gpt-4o", "openai", None),
    ("o3-mini", "openai", None),
])
def test_profile_for_model(model: str, profile: str, tokenizer: str | None) -> None:
    assert normalizer.profile_for_model(model) is PROFILES[profile]
    row = pattern_for_model(model)
    assert row is not None and row.tokenizer == tokenizer


def test_an_unknown_model_gets_default() -> None:
    assert normalizer.profile_for_model("my-finetune") is PROFILES["default"]
    assert pattern_for_model("my-finetune") is None


def test_every_row_names_a_builtin_profile() -> None:
    assert {row.profile for row in MODEL_PATTERNS} <= set(PROFILES)


def test_a_row_is_a_frozen_value() -> None:
    row = MODEL_PATTERNS[0]
    with pytest.raises(AttributeError):
        row.profile = "default"  # type: ignore[misc]
    assert not isinstance(row, tuple)
