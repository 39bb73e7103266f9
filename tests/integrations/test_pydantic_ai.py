"""pydantic-ai: an ``Agent`` with the history processor (pydantic-ai 2: the ``ProcessHistory``
capability) and an ``OpenAIChatModel`` pointed at a stub provider on 127.0.0.1; the part
mapping on its own."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

pytest.importorskip("pydantic_ai", reason="pydantic-ai is not installed (extra [pydantic-ai])")
pytest.importorskip("pydantic_ai.models.openai", reason="pydantic-ai's OpenAI model needs openai (extra [pydantic-ai])")

from pydantic_ai import Agent  # noqa: E402
from pydantic_ai.capabilities import ProcessHistory  # noqa: E402
from pydantic_ai.messages import (  # noqa: E402
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.openai import OpenAIChatModel  # noqa: E402
from pydantic_ai.providers.openai import OpenAIProvider  # noqa: E402

import normalizer  # noqa: E402
from histories import REPAIRED, STUB, SYSTEM  # noqa: E402
from normalizer.integrations.pydantic_ai import HistoryRepair, repair_capability, repair_history  # noqa: E402
from wire import Stub  # noqa: E402


def broken() -> list[ModelMessage]:
    """The broken history as pydantic-ai messages; its last request is the new prompt."""
    return [
        ModelRequest(parts=[SystemPromptPart(SYSTEM), UserPromptPart("What is in the repo?")]),
        ModelResponse(parts=[TextPart("Let me look.")], model_name="gpt-4o"),
        ModelResponse(parts=[TextPart(""), ToolCallPart("ls", {"path": "."}, tool_call_id="call_ls")], model_name="gpt-4o"),
        ModelRequest(parts=[
            ToolReturnPart("ls", "README.md", tool_call_id="call_ls"),
            ToolReturnPart("gone", "output of a call that was compacted away", tool_call_id="call_gone"),
        ]),
        ModelRequest(parts=[UserPromptPart("Read the README.")]),
        ModelResponse(parts=[ToolCallPart("cat", {"path": "README.md"}, tool_call_id="call_cat")], model_name="gpt-4o"),
        ModelRequest(parts=[UserPromptPart("Never mind. Summarise the repo.")]),
    ]


def compact_arguments(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """pydantic-ai sends a call's arguments as compact JSON."""
    out = []
    for message in messages:
        calls = message.get("tool_calls")
        if calls:
            message = {**message, "tool_calls": [
                {**c, "function": {**c["function"], "arguments": json.dumps(json.loads(c["function"]["arguments"]), separators=(",", ":"))}}
                for c in calls
            ]}
        out.append(message)
    return out


def _agent(stub: Stub, capability: Any, model: str = "gpt-4o") -> Agent[None, str]:
    provider = OpenAIProvider(base_url=f"{stub.url}/v1", api_key="sk-test")
    return Agent(OpenAIChatModel(model, provider=provider), capabilities=[capability])


# Agent.run, not run_sync: run_sync leaves its event loop open (a ResourceWarning, an error here).
@pytest.mark.anyio
async def test_agent_run_sends_the_repaired_history(stub: Stub, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="normalizer.integrations"):
        result = await _agent(stub, repair_capability()).run(message_history=broken())
    assert result.output == "ok"
    [body] = stub.bodies("/chat/completions")
    assert body["messages"] == compact_arguments(REPAIRED)
    assert normalizer.check(body["messages"], profile="openai") == []
    [record] = [r for r in caplog.records if r.name == "normalizer.integrations.pydantic_ai"]
    assert "[profile openai]" in record.getMessage()
    # pydantic-ai keeps the processed history: the turn is one response, its fields kept.
    history = result.all_messages()
    merged = history[1]
    assert isinstance(merged, ModelResponse)
    assert merged.model_name == "gpt-4o"
    assert [type(p).__name__ for p in merged.parts] == ["TextPart", "ToolCallPart"]


@pytest.mark.anyio
async def test_agent_run_with_the_plain_function(stub: Stub) -> None:
    await _agent(stub, ProcessHistory(repair_history)).run(message_history=broken())
    [body] = stub.bodies("/chat/completions")
    assert body["messages"] == compact_arguments(REPAIRED)


@pytest.mark.anyio
async def test_profile_auto_takes_the_models_name(stub: Stub) -> None:
    reports: list[normalizer.Report] = []
    agent = _agent(stub, ProcessHistory(HistoryRepair(on_report=reports.append)), model="mistral-small-2506")
    await agent.run(message_history=broken())
    [body] = stub.bodies("/chat/completions")
    assert normalizer.check(body["messages"], profile="mistral") == []
    [report] = reports
    assert report.counts["rewrite_call_id"] == 2


@pytest.mark.filterwarnings("ignore:`RetryPromptPart` is deprecated")  # still in stored histories
def test_parts_with_no_chat_form_and_unchanged_parts_are_kept() -> None:
    thinking = ThinkingPart("Which files?", signature="sig")
    retry = RetryPromptPart("bad arguments", tool_name="cat", tool_call_id="call_cat")
    history = broken()
    history[1] = ModelResponse(parts=[thinking, TextPart("Let me look.")], model_name="claude")
    history[4] = ModelRequest(parts=[UserPromptPart("Read the README.")], instructions="Be brief.")
    history.insert(6, ModelRequest(parts=[retry]))
    out = repair_history(history, "openai")
    assert [m.kind for m in out] == ["request", "response", "request", "response", "request"]
    assert out[0] is history[0]  # left as it was: the same object
    merged = out[1]
    assert isinstance(merged, ModelResponse)
    assert merged.parts[0] is thinking  # no chat form: kept, in its turn
    assert [p.content for p in merged.parts if isinstance(p, TextPart)] == ["Let me look."]
    assert [p.tool_call_id for p in merged.parts if isinstance(p, ToolCallPart)] == ["call_ls"]
    # The orphan result is gone; the user turn after the result is one request with it.
    assert [type(p).__name__ for p in out[2].parts] == ["ToolReturnPart", "UserPromptPart"]
    assert out[2].parts[0] is history[3].parts[0]
    assert isinstance(out[2], ModelRequest) and out[2].instructions == "Be brief."
    # The retry answers the call: kept as a retry, the new prompt after it.
    assert out[4].parts[0] is retry
    assert [type(p).__name__ for p in out[4].parts] == ["RetryPromptPart", "UserPromptPart"]
    assert history[2].parts[0] == TextPart("")  # the caller's messages are left as they were


def test_a_retried_call_answers_it() -> None:
    retried = ToolReturnPart("cat", "bad arguments", tool_call_id="call_cat", outcome="retried")
    history = broken()
    history.insert(6, ModelRequest(parts=[retried]))
    out = repair_history(history)
    assert out[-1].parts[0] is retried
    assert [type(p).__name__ for p in out[-1].parts] == ["ToolReturnPart", "UserPromptPart"]


def test_an_unanswered_call_gets_a_result() -> None:
    history = broken()[:-1] + [ModelRequest(parts=[UserPromptPart("Never mind.")])]
    out = repair_history(history)
    last = out[-1]
    assert isinstance(last, ModelRequest)
    result = last.parts[0]
    assert isinstance(result, ToolReturnPart)
    assert (result.tool_name, result.tool_call_id, result.content) == ("cat", "call_cat", STUB)


def test_a_clean_history_comes_back_as_the_same_objects() -> None:
    history: list[ModelMessage] = [ModelRequest(parts=[UserPromptPart("hi")]), ModelResponse(parts=[TextPart("hello")])]
    out = repair_history(history)
    assert all(a is b for a, b in zip(out, history)) and len(out) == 2
