"""The providers' own code as judges: does a provider's open-source code accept a history?

Each judge takes an OpenAI-shaped history and returns ``None`` when the provider's code
accepts it, else the provider code's own error text. Nothing here is ours but the glue:

* **mistral-common** (Mistral's request validator and tokenizer, as La Plateforme and vLLM's
  mistral tokenizer mode run it): the request's JSON validated by ``ChatCompletionRequest``
  as La Plateforme reads it (a field or a role its models do not know is refused), then
  ``ChatCompletionRequest.from_openai`` and the validator in *serving* mode for tokenizer
  versions v3, v7, v11 and v13; and ``encode_chat_completion`` with the v3 and v7 tokenizer
  files bundled in the package (no download).
* **transformers**' chat-template renderer (``render_jinja_template``, what
  ``apply_chat_template`` calls; no model, no download) over the templates in
  ``../shared/validators/templates/`` (never copied here), with ``add_generation_prompt`` as
  a server sends a request.
* **LiteLLM**'s OpenAI->Anthropic converter (``AnthropicConfig.transform_request``) and its
  OpenAI->Bedrock Converse converter (``AmazonConverseConfig._transform_request``), the
  latter's output then checked by **botocore**'s parameter validation against the
  ``bedrock-runtime`` ``Converse`` input shape bundled in botocore.

A history with tool calls is judged with tool definitions for the functions it calls (a
request that replays calls declares its tools), with an open schema.

Imports are lazy: a test module calls :func:`require` (``pytest.importorskip``) for the
package it needs, so the suite runs, with clear skips, where the test extra is absent.
"""

from __future__ import annotations

import copy
import functools
import json
import os
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from realdata import TEMPLATES

# LiteLLM fetches its model price map from the network at import unless told not to.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

Messages = list[dict[str, Any]]
Judge = Callable[[Messages], "str | None"]

#: Package that each family of judges needs (for pytest.importorskip).
PACKAGES = {"mistral": "mistral_common", "template": "transformers", "litellm": "litellm", "botocore": "botocore",
            "genai": "google.genai"}

TEMPLATE_NAMES = (
    "deepseek-v3.1", "deepseek-v3", "devstral", "gemma2", "gemma3", "llama3.1", "llama3.2", "mistral-nemo",
    "mistral-small-3.2", "mistral-v0.1", "phi3.5", "qwen2.5", "qwen3.5", "qwen3",
    # today's open-weight families (issue 38)
    "deepseek-v3.2", "deepseek-v4", "gemma4", "glm-4.6", "glm-4.7-flash", "gpt-oss", "granite-4.0",
    "hermes-3-llama3.1", "kimi-k2", "kimi-k2-instruct", "kimi-k2-thinking", "minimax-m2", "ministral-3-reasoning",
    "nemotron-3-nano", "qwen3-coder", "seed-oss", "smollm3",
)
#: Templates written for requests that declare tools (their tool-use variant iterates ``tools``
#: unguarded): a server passes the request's list, empty or not.
TOOLS_ALWAYS = ("hermes-3-llama3.1",)
#: Templates that have no tool role at all (their histories are judged without tool calls).
TOOL_FREE_TEMPLATES = ("gemma2", "gemma3", "mistral-v0.1", "phi3.5")
#: Templates with a tool role that no profile can make render a tool call, and why: each is
#: judged on the histories without tool calls, and the shape is pinned in test_templates_whole.
CALLS_NEVER_RENDERED = {
    "smollm3": "renders no assistant tool call (their results show as user turns)",
    "kimi-k2-instruct": "llama.cpp's copy queues tool ids with list.append, which transformers' sandbox refuses",
    "kimi-k2-thinking": "llama.cpp's copy queues tool ids with list.append, which transformers' sandbox refuses",
}


def require(family: str) -> None:
    """Skip the calling test (or module) when the family's package is not installed."""
    pytest.importorskip(PACKAGES[family], reason=f"the {family} judges need {PACKAGES[family]} (pip install -e '.[test,judges]')")


def _quiet(fn: Callable[..., Any]) -> Callable[..., Any]:
    # The judges' own deprecation warnings are not ours (the suite turns warnings into errors).
    @functools.wraps(fn)
    def wrapper(*args: Any, **kw: Any) -> Any:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(*args, **kw)

    return wrapper


def tools_of(messages: Messages) -> list[dict[str, Any]]:
    """OpenAI tool definitions for every function the history calls (open schemas)."""
    names: dict[str, None] = {}
    for m in messages:
        for call in m.get("tool_calls") or ():
            function = call.get("function") if isinstance(call, dict) else None
            name = function.get("name") if isinstance(function, dict) else None
            if isinstance(name, str) and name:
                names[name] = None
    return [{"type": "function", "function": {"name": n, "description": n,
             "parameters": {"type": "object", "properties": {}}}} for n in names]


def _error(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0][:300]


# ---------------------------------------------------------------------- mistral-common


@functools.cache
def _mistral() -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import mistral_common.protocol.instruct.request as request
        import mistral_common.protocol.instruct.validator as validator
        import mistral_common.tokens.tokenizers.base as base
        import mistral_common.tokens.tokenizers.mistral as mistral
    return request, validator, base, mistral


def _mistral_request(messages: Messages) -> Any:
    request, _, _, _ = _mistral()
    messages = copy.deepcopy(messages)
    prefix = bool(messages) and messages[-1].get("role") == "assistant" and messages[-1].get("prefix") is True
    for m in messages:
        m.pop("prefix", None)  # from_openai reads the final prefix as continue_final_message
    tools = tools_of(messages) or None
    return request.ChatCompletionRequest.from_openai(messages, tools=tools, continue_final_message=prefix,
                                                     model="mistral-judge")


@_quiet
def mistral_validator(version: str, messages: Messages) -> str | None:
    """mistral-common's request model, as the JSON of a request to La Plateforme is read
    (it forbids fields it does not know: ``from_openai`` alone leaves them out unseen),
    then its request validator in serving mode for tokenizer ``version``."""
    request, validator, base, _ = _mistral()
    try:
        request.ChatCompletionRequest.model_validate(
            {"model": "mistral-judge", "messages": copy.deepcopy(messages), "tools": tools_of(messages) or None})
        req = _mistral_request(messages)
        validator.get_validator(base.TokenizerVersion(version), validator.ValidationMode.serving).validate_request(req)
    except Exception as exc:  # the provider's own error, whatever its class
        return _error(exc)
    return None


_TOKENIZER_FILES = {"v3": "mistral_instruct_tokenizer_240323.model.v3", "v7": "mistral_instruct_tokenizer_241114.model.v7"}


@functools.cache
def _tokenizer(version: str) -> Any:
    _, validator, _, mistral = _mistral()
    path = Path(mistral.MistralTokenizer._data_path()) / _TOKENIZER_FILES[version]
    return mistral.MistralTokenizer.from_file(str(path), mode=validator.ValidationMode.serving)


@_quiet
def mistral_encode(version: str, messages: Messages) -> str | None:
    """mistral-common's ``encode_chat_completion`` with the tokenizer file bundled for ``version``."""
    try:
        _tokenizer(version).encode_chat_completion(_mistral_request(messages))
    except Exception as exc:
        return _error(exc)
    return None


# ---------------------------------------------------------------------- chat templates


def have_templates() -> bool:
    return TEMPLATES.is_dir()


@functools.cache
def template_text(name: str) -> str:
    return (TEMPLATES / f"{name}.jinja").read_text(encoding="utf-8")


@_quiet
def rendered(name: str, messages: Messages) -> str:
    """The text transformers' own renderer makes of ``messages`` with the template ``name``
    (as ``apply_chat_template``, with the tools the history calls); raises what the template raises."""
    from transformers.utils.chat_template_utils import render_jinja_template

    tools = tools_of(messages) if name in TOOLS_ALWAYS else tools_of(messages) or None
    texts, _ = render_jinja_template(conversations=[copy.deepcopy(messages)], tools=tools,
                                     chat_template=template_text(name), add_generation_prompt=True,
                                     bos_token="<s>", eos_token="</s>")
    return str(texts[0])


def render_template(name: str, messages: Messages) -> str | None:
    """The template ``name`` renders ``messages`` without raising: None, else its error."""
    try:
        rendered(name, messages)
    except Exception as exc:
        return _error(exc)
    return None


def sent_pieces(messages: Messages) -> list[tuple[str, set[str]]]:
    """What a request sends that a render must show, as (what, the spellings a render may give
    it): every text of every message (system and developer included), every call's name and
    its arguments (as sent, or each argument's value), every tool result. Reasoning is not
    among them (templates keep it for the last turn only, as the models were trained). (A
    call's name is also in the tools the request declares: its arguments tell a call that is
    rendered from one that is not.)"""
    pieces: list[tuple[str, set[str]]] = []
    for index, message in enumerate(messages):
        role = message.get("role")
        content = message.get("content")
        parts = [content] if isinstance(content, str) else [
            p.get("text") for p in content or () if isinstance(p, dict) and p.get("type") == "text"]
        if role == "assistant":
            # Templates that think in <think> tags (Qwen3, GLM, DeepSeek) read an assistant text
            # up to a "</think>" as the model's reasoning, and keep it for the last turn only.
            parts = [text.rsplit("</think>", 1)[-1] if isinstance(text, str) else text for text in parts]
        pieces.extend((f"[{index}] {role} text {text[:60]!r}", _spellings(text))
                      for text in parts if isinstance(text, str) and text.strip())
        for call in message.get("tool_calls") or ():
            function = call.get("function") or {}
            name = function.get("name") or ""
            pieces.append((f"[{index}] call name {name!r}", {name}))
            pieces.extend(_argument_pieces(f"[{index}] argument of {name}", function.get("arguments")))
    return pieces


def _argument_pieces(what: str, arguments: Any) -> list[tuple[str, set[str]]]:
    """A call's arguments as a render may show them: the JSON string as it was sent, or each
    value (a template that parses the string, or takes a mapping, writes the values its way)."""
    as_sent = _spellings(arguments) if isinstance(arguments, str) else set()
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return [(f"{what}: {arguments[:60]!r}", _spellings(arguments))] if arguments else []
    return [(f"{what}: {str(leaf)[:60]!r}", as_sent | _spellings(leaf)) for leaf in _leaves(arguments)
            if leaf != ""]


def _leaves(value: Any) -> list[str | int | float | bool]:
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in _leaves(v)]
    if isinstance(value, list):
        return [leaf for v in value for leaf in _leaves(v)]
    return [] if value is None else [value]


def _spellings(value: str | int | float | bool) -> set[str]:
    """How a template may write ``value``: as it is (trimmed: templates trim text), or JSON-encoded
    (``tojson``, ASCII-escaped or not), or as Python prints it (a mapping rendered whole)."""
    if isinstance(value, str):
        return {value.strip(), json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1],
                repr(value)[1:-1]}
    return {json.dumps(value), str(value)}


def render_whole(name: str, messages: Messages) -> str | None:
    """The template ``name`` renders ``messages`` without raising, and nothing sent is missing
    from the render (:func:`sent_pieces`): None, else what raised or what is missing."""
    try:
        text = rendered(name, messages)
    except Exception as exc:
        return _error(exc)
    for what, spellings in sent_pieces(messages):
        if not any(spelling in text for spelling in spellings):
            return f"not in the render: {what}"
    return None


# ---------------------------------------------------------------------- LiteLLM + botocore


@functools.cache
def _litellm() -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import litellm
        from litellm.llms.bedrock.chat.converse_transformation import AmazonConverseConfig
    litellm.suppress_debug_info = True
    _offline_images()
    return litellm, AmazonConverseConfig


# A 1x1 PNG: what every image URL "downloads" to. The converters fetch image URLs to inline
# them; the tests never touch the network, and the converters still build and check the block.
_PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6300010000000500010d0a2db40000000049454e44ae426082"
)


def _offline_images() -> None:
    import httpx
    from litellm.litellm_core_utils.prompt_templates import factory, image_handling

    def fetch(client: Any, url: str, **kw: Any) -> Any:
        return httpx.Response(200, content=_PNG, headers={"content-type": "image/png"},
                              request=httpx.Request("GET", url))

    for module in (factory, image_handling):
        if hasattr(module, "safe_get"):
            module.safe_get = fetch  # type: ignore[attr-defined]


@_quiet
def litellm_anthropic(messages: Messages) -> str | None:
    """LiteLLM's OpenAI->Anthropic Messages converter, as ``litellm.completion`` runs it."""
    litellm, _ = _litellm()
    tools = tools_of(messages)
    try:
        litellm.AnthropicConfig().transform_request(
            model="claude-sonnet-4-5", messages=copy.deepcopy(messages),
            optional_params={"tools": tools} if tools else {}, litellm_params={}, headers={},
        )
    except Exception as exc:
        return _error(exc)
    return None


@functools.cache
def _converse_shape() -> Any:
    import botocore.session

    return botocore.session.get_session().get_service_model("bedrock-runtime").operation_model("Converse").input_shape


BEDROCK_MODEL = "anthropic.claude-3-5-sonnet-20240620-v1:0"


@_quiet
def litellm_bedrock(messages: Messages) -> str | None:
    """LiteLLM's OpenAI->Bedrock Converse converter, then botocore's parameter validation."""
    import botocore.validate

    _, converse = _litellm()
    tools = tools_of(messages)
    try:
        body = converse()._transform_request(
            model=BEDROCK_MODEL, messages=copy.deepcopy(messages),
            optional_params={"tools": tools} if tools else {}, litellm_params={}, headers={},
        )
    except Exception as exc:
        return _error(exc)
    params = json.loads(json.dumps({"modelId": BEDROCK_MODEL, **body}))
    report = botocore.validate.ParamValidator().validate(params, _converse_shape())
    if report.has_errors():
        return _error(Exception(report.generate_report()))
    return None


@_quiet
def litellm_gemini(messages: Messages) -> str | None:
    """LiteLLM's OpenAI->Gemini converter (``gemini_convert_messages_with_history``, as
    ``litellm.completion`` runs it for ``gemini/`` and ``vertex_ai/`` models; the system
    messages go to ``system_instruction`` first, as LiteLLM does), each content then validated
    by google-genai's own ``types.Content`` (a key Gemini does not define is refused), and every
    turn of calls followed by as many function responses as it has calls (Gemini: "Please
    ensure that the number of function response parts is equal to the number of function call
    parts of the function call turn.")."""
    from google.genai import types
    from litellm.llms.vertex_ai.gemini.transformation import gemini_convert_messages_with_history

    _litellm()
    leading = 0
    while leading < len(messages) and messages[leading].get("role") == "system":
        leading += 1
    try:
        contents = gemini_convert_messages_with_history(messages=copy.deepcopy(messages[leading:]),
                                                        model="gemini-2.5-pro")
        for content in contents:
            types.Content.model_validate(content)
    except Exception as exc:
        return _error(exc)
    for content, after in zip(contents, [*contents[1:], None]):
        calls = sum("function_call" in part for part in content.get("parts") or ())
        responses = sum("function_response" in part for part in (after or {}).get("parts") or ())
        if calls and after is not None and calls != responses:
            return f"{calls} function call parts, {responses} function response parts"
    return None


# ---------------------------------------------------------------------- the judges by name


def judges() -> dict[str, tuple[str, Judge]]:
    """Every judge by name: (the package family it needs, the function)."""
    out: dict[str, tuple[str, Judge]] = {}
    for v in ("v3", "v7", "v11", "v13"):
        out[f"mistral-validator-{v}"] = ("mistral", functools.partial(mistral_validator, v))
    for v in ("v3", "v7"):
        out[f"mistral-encode-{v}"] = ("mistral", functools.partial(mistral_encode, v))
    for name in TEMPLATE_NAMES:
        out[f"template-{name}"] = ("template", functools.partial(render_template, name))
        out[f"whole-{name}"] = ("template", functools.partial(render_whole, name))
    out["litellm-anthropic"] = ("litellm", litellm_anthropic)
    out["litellm-bedrock"] = ("litellm", litellm_bedrock)
    out["litellm-gemini"] = ("genai", litellm_gemini)
    return out
