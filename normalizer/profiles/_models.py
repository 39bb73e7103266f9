"""Profile by model name: which built-in profile a model's requests need.

:data:`MODEL_PATTERNS` is the table, as data: the first pattern that matches the model name
(case-insensitive, anywhere in the name, so ``mistralai/Mistral-Small-3.2-24B-Instruct-2506``
and ``mistral-small-2506`` both match) gives the profile, and for Mistral models the
mistral-common tokenizer version the profile was judged against. The README prints the same
table. A name that matches nothing gets ``default``.

The profile is the *model's* (its chat template, or mistral-common for Mistral's own serving);
a model reached through a provider's API takes that provider's profile instead (``anthropic``,
``bedrock``, ``gemini``...): the API, not the model, decides what is accepted there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ._profiles import PROFILES, Profile

__all__ = ["ModelPattern", "MODEL_PATTERNS", "profile_for_model"]


@dataclass(frozen=True, slots=True)
class ModelPattern:
    """One row of :data:`MODEL_PATTERNS`."""

    pattern: str
    """A regular expression searched in the lower-cased model name."""
    profile: str
    """The built-in profile."""
    tokenizer: str | None = None
    """Mistral models: the mistral-common tokenizer version (v3, v7, v11, v13)."""
    note: str = ""
    """Why, where the row needs a word (a family not judged, a template's gap)."""


#: Model-name patterns to profiles, first match wins (most specific first).
MODEL_PATTERNS: tuple[ModelPattern, ...] = (
    # Mistral, served with mistral-common (La Plateforme, vLLM --tokenizer-mode mistral). The
    # tokenizer versions are mistral-common's own (MODEL_NAME_TO_TOKENIZER_CLS); the mistral
    # profile's output is accepted by the v7, v11 and v13 validators alike (test_validators).
    ModelPattern(r"ministral-8b-2410|open-mistral-nemo|mistral-nemo|mistral-small-2409|mistral-large-2407"
                 r"|mistral-tiny-2407|codestral-2405|codestral-mamba|mixtral-8x22b|pixtral-12b"
                 r"|mistral-7b-instruct-v0\.3", "mistral-v3", "v3"),
    ModelPattern(r"mistral-(tiny|small|medium|large)-(2312|2402)", "mistral-v3", "v1/v2",
                 "not judged (no v1/v2 judge); mistral-v3 is the strictest form"),
    ModelPattern(r"mistral-7b-instruct-v0\.[12]|mixtral-8x7b", "jinja-strict", None,
                 "no tool role in their template (mistral-v0.1.jinja)"),
    ModelPattern(r"mistral-large-2411|pixtral-large-2411", "mistral", "v7"),
    ModelPattern(r"mistral|ministral|magistral|codestral|devstral|pixtral", "mistral", "v7+",
                 "newer models (v7, v11, v13 tokenizers): reasoning is stripped, which v7 needs; served through "
                 "their HF chat template instead (Ministral-3, Devstral), they take mistral-template"),
    # Self-hosted chat templates (vLLM, SGLang, TGI, llama.cpp) by family. A name with the
    # maker's Hugging Face organisation is a checkpoint served with its template; the bare API
    # names (glm-4.6, kimi-k2-0905-preview, deepseek-chat) take the API's profile below.
    ModelPattern(r"gpt-oss", "gpt-oss"),
    ModelPattern(r"hermes", "hermes", None, "Hermes-3's tool-use template"),
    ModelPattern(r"nemotron-3", "jinja-mapping"),
    ModelPattern(r"llama-?3", "llama3"),
    ModelPattern(r"llama-?4", "llama3", None, "not judged: no copy of Meta's Llama 4 template was found"),
    ModelPattern(r"qwen3\.[5-9]|qwen3-coder", "qwen3.5"),
    ModelPattern(r"qwen", "qwen3", None, "Qwen2.5 and Qwen3 templates"),
    ModelPattern(r"gemma", "gemma", None, "Gemma 2 and 3 have no tool role (judged without tools)"),
    ModelPattern(r"deepseek-v3\.[2-9]|deepseek-v4", "jinja-mapping"),
    ModelPattern(r"deepseek-(v3|r1)|phi-?3", "jinja-strict"),
    ModelPattern(r"(zai-org|thudm)/glm", "jinja-mapping"),
    ModelPattern(r"moonshotai/", "jinja-mapping", None,
                 "llama.cpp's copies of the K2-Instruct-0905 and K2-Thinking templates call list.append, which "
                 "transformers' sandbox refuses: they render no history with tool calls (judged without tools)"),
    ModelPattern(r"minimax-m[2-9]", "jinja-mapping"),
    ModelPattern(r"seed-oss", "jinja-mapping"),
    ModelPattern(r"granite", "jinja-strict"),
    ModelPattern(r"smollm", "jinja-strict", None,
                 "SmolLM3's template renders no tool call (their results show as user turns): judged without tools"),
    # Hosted APIs, where the name says which API serves the model.
    ModelPattern(r"claude", "anthropic"),
    ModelPattern(r"gemini", "gemini"),
    ModelPattern(r"grok", "xai"),
    ModelPattern(r"kimi|moonshot", "moonshot"),
    ModelPattern(r"glm", "zhipu"),
    ModelPattern(r"deepseek", "deepseek"),
    ModelPattern(r"gpt-|^o[1-9]|chatgpt", "openai"),
)

_COMPILED = tuple((re.compile(p.pattern), p) for p in MODEL_PATTERNS)


def profile_for_model(name: str) -> Profile:
    """The built-in profile for the model ``name`` (``default`` when no pattern matches).

    >>> profile_for_model("mistral-small-2506").name
    'mistral'
    >>> profile_for_model("meta-llama/Llama-3.1-8B-Instruct").name
    'llama3'
    >>> profile_for_model("some-unknown-model").name
    'default'
    """
    match = pattern_for_model(name)
    return PROFILES[match.profile] if match is not None else PROFILES["default"]


def pattern_for_model(name: str) -> ModelPattern | None:
    """The row of :data:`MODEL_PATTERNS` that ``name`` matches first, or None."""
    lowered = name.lower()
    for regex, row in _COMPILED:
        if regex.search(lowered):
            return row
    return None
