"""LiteLLM: the callback in the SDK (``litellm.acompletion``) and in the Proxy (its own
``ProxyLogging.pre_call_hook``, both call types), against a stub provider on 127.0.0.1."""

from __future__ import annotations

import copy
import logging
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("litellm")

import litellm  # noqa: E402
from litellm.integrations.custom_logger import CustomLogger  # noqa: E402

import normalizer  # noqa: E402
from histories import BROKEN, COUNTS, REPAIRED, STUB, SYSTEM, without_nulls  # noqa: E402
from normalizer.integrations.litellm import (  # noqa: E402
    METADATA_KEY,
    NormalizerCallback,
    profile_for_litellm_model,
    repair_request,
)
from wire import Stub  # noqa: E402

pytestmark = [
    pytest.mark.anyio,
    # LiteLLM's own models, not ours: pydantic warns about their ReadOnly TypedDict items.
    pytest.mark.filterwarnings("ignore:Items? .* using the `ReadOnly` qualifier:UserWarning"),
]


@pytest.fixture
def callbacks() -> Iterator[list[Any]]:
    """``litellm.callbacks`` is global: each test gets it empty and leaves it as it was."""
    saved = litellm.callbacks
    litellm.callbacks = []
    try:
        yield litellm.callbacks
    finally:
        litellm.callbacks = saved


class Captured(CustomLogger):
    """A logging callback, as a user's Langfuse or spend log: what metadata it is given."""

    def __init__(self) -> None:
        super().__init__()
        self.metadata: list[dict[str, Any]] = []

    async def async_log_success_event(self, kwargs: Any, response_obj: Any, start_time: Any, end_time: Any) -> None:
        self.metadata.append(kwargs["litellm_params"]["metadata"])


async def test_sdk_acompletion_sends_the_repaired_history(stub: Stub, callbacks: list[Any], caplog: pytest.LogCaptureFixture) -> None:
    captured = Captured()
    callbacks.extend([NormalizerCallback(), captured])
    sent = copy.deepcopy(BROKEN)
    with caplog.at_level(logging.INFO, logger="normalizer.integrations"):
        response = await litellm.acompletion(
            model="openai/gpt-4o", messages=sent, api_base=f"{stub.url}/v1", api_key="sk-test",
        )
    assert response.choices[0].message.content == "ok"
    [body] = stub.bodies("/chat/completions")
    assert body["messages"] == without_nulls(REPAIRED)  # LiteLLM leaves out content: null
    assert normalizer.check(body["messages"], profile="openai") == []
    assert sent == BROKEN  # the caller's list is left as it was
    # What was repaired reaches LiteLLM's logging callbacks, and the logger (not stdout).
    await _settle()
    [metadata] = captured.metadata
    assert metadata[METADATA_KEY] == {
        "profile": "openai", "changed": True, "messages_in": 9, "messages_out": 8, "counts": COUNTS,
    }
    [record] = [r for r in caplog.records if r.name == "normalizer.integrations.litellm"]
    assert record.levelname == "INFO"
    assert record.getMessage() == (
        "litellm acompletion: repaired the history [profile openai]: 9 in, 8 out; "
        "drop_orphan_result 1, empty_content_to_null 1, merge_assistant 1, stub_missing_result 1"
    )


async def _settle() -> None:
    """LiteLLM logs success from a task of its own: let it run."""
    import asyncio

    for _ in range(50):
        await asyncio.sleep(0.01)


async def test_sdk_profile_auto_takes_the_routed_model(stub: Stub, callbacks: list[Any]) -> None:
    reports: list[normalizer.Report] = []
    callbacks.append(NormalizerCallback(on_report=reports.append))
    await litellm.acompletion(model="openai/mistral-small-2506", messages=BROKEN, api_base=f"{stub.url}/v1", api_key="sk-test")
    [body] = stub.bodies("/chat/completions")
    assert body["messages"] == without_nulls(list(normalizer.repair(BROKEN, profile="mistral")))
    assert normalizer.check(body["messages"], profile="mistral") == []
    [report] = reports
    assert report.counts["rewrite_call_id"] >= 2


async def test_sdk_positional_messages_are_not_seen_and_say_so(stub: Stub, callbacks: list[Any], caplog: pytest.LogCaptureFixture) -> None:
    callbacks.append(NormalizerCallback())
    with caplog.at_level(logging.WARNING, logger="normalizer.integrations"):
        await litellm.acompletion("openai/gpt-4o", BROKEN, api_base=f"{stub.url}/v1", api_key="sk-test")
    [body] = stub.bodies("/chat/completions")
    assert body["messages"] == BROKEN  # LiteLLM's hooks never see positional messages
    [record] = [r for r in caplog.records if r.name == "normalizer.integrations.litellm"]
    assert record.getMessage() == (
        "litellm acompletion: no 'messages' keyword to repair (messages passed positionally are not "
        "visible to LiteLLM's hooks: pass messages=... by keyword)"
    )


def test_sync_completion_with_repair_request(stub: Stub, callbacks: list[Any]) -> None:
    request = {"model": "openai/gpt-4o", "messages": BROKEN, "api_base": f"{stub.url}/v1", "api_key": "sk-test"}
    litellm.completion(**repair_request(request))
    [body] = stub.bodies("/chat/completions")
    assert body["messages"] == without_nulls(REPAIRED)
    assert request["messages"] is BROKEN


def test_repair_request_leaves_a_clean_history_as_it_is() -> None:
    clean = {"model": "gpt-4o", "messages": REPAIRED, "metadata": {"user": "u1"}}
    out = repair_request(clean)
    assert out["messages"] is REPAIRED
    assert out["metadata"] == {"user": "u1", METADATA_KEY: {
        "profile": "openai", "changed": False, "messages_in": 8, "messages_out": 8, "counts": {},
    }}
    assert clean["metadata"] == {"user": "u1"}


def test_profile_for_litellm_model() -> None:
    assert profile_for_litellm_model("anthropic/claude-sonnet-4-5") == "anthropic"
    assert profile_for_litellm_model("bedrock/converse/anthropic.claude-3-5-sonnet") == "bedrock"
    assert profile_for_litellm_model("groq/llama-3.1-8b-instant") == "groq"
    assert profile_for_litellm_model("claude-sonnet-4-5", "bedrock") == "bedrock"
    assert profile_for_litellm_model("hosted_vllm/Qwen/Qwen3-8B").name == "qwen3"
    assert profile_for_litellm_model("openai/gpt-4o").name == "openai"
    assert profile_for_litellm_model("my-alias").name == "default"
    assert profile_for_litellm_model(None).name == "default"


# -- the Proxy -----------------------------------------------------------------------------------

#: The broken history as a client of the Proxy's /v1/messages sends it (Claude Code, ...).
ANTHROPIC_BROKEN: list[dict[str, Any]] = [
    {"role": "user", "content": [{"type": "text", "text": "What is in the repo?"}]},
    {"role": "assistant", "content": [{"type": "text", "text": "Let me look."}]},
    {"role": "assistant", "content": [
        {"type": "text", "text": ""},
        {"type": "tool_use", "id": "toolu_ls", "name": "ls", "input": {"path": "."}},
    ]},
    {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_ls", "content": "README.md"},
        {"type": "tool_result", "tool_use_id": "toolu_gone", "content": "output of a call that was compacted away"},
    ]},
    {"role": "user", "content": [{"type": "text", "text": "Read the README."}]},
    {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_cat", "name": "cat", "input": {"path": "README.md"}}]},
    {"role": "user", "content": [{"type": "text", "text": "Never mind. Summarise the repo."}]},
]

ANTHROPIC_REPAIRED: list[dict[str, Any]] = [
    {"role": "user", "content": "What is in the repo?"},
    {"role": "assistant", "content": [
        {"type": "text", "text": "Let me look."},
        {"type": "tool_use", "id": "toolu_ls", "name": "ls", "input": {"path": "."}},
    ]},
    {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_ls", "content": "README.md"},
        {"type": "text", "text": "Read the README."},
    ]},
    {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_cat", "name": "cat", "input": {"path": "README.md"}}]},
    {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_cat", "content": STUB},
        {"type": "text", "text": "Never mind. Summarise the repo."},
    ]},
]


def _proxy() -> Any:
    pytest.importorskip("fastapi", reason="LiteLLM's proxy module needs fastapi (the test extra has it)")
    from litellm.caching.dual_cache import DualCache
    from litellm.proxy.utils import ProxyLogging

    return ProxyLogging(user_api_key_cache=DualCache())


def _key() -> Any:
    from litellm.proxy._types import UserAPIKeyAuth

    return UserAPIKeyAuth()


async def test_proxy_chat_completions(stub: Stub, callbacks: list[Any]) -> None:
    proxy = _proxy()
    callbacks.append(NormalizerCallback())
    request = {"model": "gpt-4o", "messages": copy.deepcopy(BROKEN), "metadata": {"user_api_key": "hashed"}}
    data = await proxy.pre_call_hook(user_api_key_dict=_key(), data=request, call_type="acompletion")
    assert data["messages"] == REPAIRED
    assert data["metadata"] == {"user_api_key": "hashed", METADATA_KEY: {
        "profile": "openai", "changed": True, "messages_in": 9, "messages_out": 8, "counts": COUNTS,
    }}
    # What the Proxy then does with it: the SDK call to the deployment.
    await litellm.acompletion(**{**data, "model": "openai/gpt-4o"}, api_base=f"{stub.url}/v1", api_key="sk-test")
    [body] = stub.bodies("/chat/completions")
    assert body["messages"] == without_nulls(REPAIRED)
    assert normalizer.check(body["messages"], profile="openai") == []


async def test_proxy_anthropic_messages(stub: Stub, callbacks: list[Any]) -> None:
    proxy = _proxy()
    callbacks.append(NormalizerCallback())
    request = {
        "model": "claude-sonnet-4-5", "max_tokens": 64, "system": SYSTEM,
        "messages": copy.deepcopy(ANTHROPIC_BROKEN), "litellm_metadata": {},
    }
    data = await proxy.pre_call_hook(user_api_key_dict=_key(), data=request, call_type="anthropic_messages")
    assert data["system"] == SYSTEM
    assert data["messages"] == ANTHROPIC_REPAIRED
    assert data["litellm_metadata"][METADATA_KEY]["counts"] == {
        "merge_assistant": 1, "drop_orphan_result": 1, "stub_missing_result": 1,
    }
    assert data["litellm_metadata"][METADATA_KEY]["profile"] == "anthropic"
    assert request["messages"] == ANTHROPIC_BROKEN
    # What the Proxy then does with it: the SDK's Anthropic Messages call to the deployment.
    del data["litellm_metadata"]
    await litellm.anthropic_messages(
        **{**data, "model": "anthropic/claude-sonnet-4-5"}, api_base=stub.url, api_key="sk-test",
    )
    [body] = stub.bodies("/v1/messages")
    assert body["system"] == SYSTEM
    assert body["messages"] == ANTHROPIC_REPAIRED
    chat = normalizer.formats.from_anthropic(body["messages"], system=body["system"])
    assert normalizer.check(chat, profile="anthropic") == []


async def test_proxy_hook_must_be_on_the_class_and_is(callbacks: list[Any]) -> None:
    """LiteLLM's Proxy calls ``async_pre_call_hook`` only when the callback's own class defines it."""
    assert "async_pre_call_hook" in vars(NormalizerCallback)
    assert "async_pre_call_deployment_hook" in vars(NormalizerCallback)


async def test_proxy_anthropic_content_with_no_chat_form_is_sent_as_it_is(callbacks: list[Any], caplog: pytest.LogCaptureFixture) -> None:
    proxy = _proxy()
    callbacks.append(NormalizerCallback())
    messages = [
        {"role": "user", "content": "Search the web"},
        {"role": "assistant", "content": [
            {"type": "container_upload", "file_id": "file_1"},  # no chat form (server tools have one)
            {"type": "text", "text": "Found nothing."},
        ]},
        {"role": "assistant", "content": [{"type": "text", "text": "Anything else?"}]},
        {"role": "user", "content": "No."},
    ]
    with caplog.at_level(logging.WARNING, logger="normalizer.integrations"):
        data = await proxy.pre_call_hook(user_api_key_dict=_key(), data={"model": "claude-sonnet-4-5", "messages": messages}, call_type="anthropic_messages")
    assert data["messages"] is messages
    assert data["metadata"][METADATA_KEY]["applied"] is False
    [record] = [r for r in caplog.records if r.name == "normalizer.integrations.litellm"]
    assert record.getMessage() == (
        "litellm proxy anthropic_messages: history not repaired: it holds content a chat message "
        "cannot carry (drop_block); sent as it is"
    )
