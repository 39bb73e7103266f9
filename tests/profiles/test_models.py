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
