"""LangChain v1: an agent (``langchain.agents.create_agent``) with ``NormalizerMiddleware`` and
a ``ChatOpenAI`` pointed at a stub provider on 127.0.0.1; ``repair_messages`` on its own."""

from __future__ import annotations

import logging
from typing import Any

import pytest

pytest.importorskip("langchain.agents", reason="LangChain v1 is not installed (extra [langchain])")
pytest.importorskip("langchain_openai", reason="langchain-openai is not installed (extra [langchain])")

from langchain.agents import create_agent  # noqa: E402
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage  # noqa: E402
from langchain_core.tools import tool  # noqa: E402
from langchain_openai import ChatOpenAI  # noqa: E402

import normalizer  # noqa: E402
from histories import REPAIRED, STUB, SYSTEM  # noqa: E402
from normalizer.integrations.langchain import NormalizerMiddleware, model_name, repair_messages  # noqa: E402
from wire import Stub  # noqa: E402


def _call(call_id: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "args": args, "id": call_id, "type": "tool_call"}


def broken() -> list[BaseMessage]:
    """The broken history as LangChain messages (the system prompt is the agent's)."""
    return [
        HumanMessage("What is in the repo?", id="h1"),
        AIMessage("Let me look.", id="a1", response_metadata={"model_name": "gpt-4o"}),
        AIMessage("", id="a2", tool_calls=[_call("call_ls", "ls", {"path": "."})], response_metadata={"model_name": "gpt-4o"}),
        ToolMessage("README.md", tool_call_id="call_ls", id="t1"),
        ToolMessage("output of a call that was compacted away", tool_call_id="call_gone", id="t2"),
        HumanMessage("Read the README.", id="h2"),
        AIMessage("", id="a3", tool_calls=[_call("call_cat", "cat", {"path": "README.md"})]),
        HumanMessage("Never mind. Summarise the repo.", id="h3"),
    ]


@tool
def ls(path: str) -> str:
    """List the files under a path."""
    return "README.md"


def _agent(stub: Stub, model: str = "gpt-4o", **kwargs: Any) -> Any:
    chat_model = ChatOpenAI(model=model, base_url=f"{stub.url}/v1", api_key="sk-test")  # type: ignore[arg-type]
    return create_agent(chat_model, [ls], system_prompt=SYSTEM, middleware=[NormalizerMiddleware(**kwargs)])


def test_agent_invoke_sends_the_repaired_history(stub: Stub, caplog: pytest.LogCaptureFixture) -> None:
    history = broken()
    with caplog.at_level(logging.INFO, logger="normalizer.integrations"):
        state = _agent(stub).invoke({"messages": history})
    [body] = stub.bodies("/chat/completions")
    assert body["messages"] == REPAIRED
    assert normalizer.check(body["messages"], profile="openai") == []
    # The agent's state keeps the history as it was stored; the model's reply after it.
    assert [m.id for m in state["messages"][:-1]] == [m.id for m in history]
    assert state["messages"][-1].content == "ok"
    [record] = [r for r in caplog.records if r.name == "normalizer.integrations.langchain"]
    assert record.getMessage() == (
        "agent model call: repaired the history [profile openai]: 8 in, 7 out; drop_orphan_result 1, "
        "empty_content_to_null 1, merge_assistant 1, merge_conflict 1, stub_missing_result 1"
    )


@pytest.mark.anyio
async def test_agent_ainvoke_sends_the_repaired_history(stub: Stub) -> None:
    reports: list[normalizer.Report] = []
    await _agent(stub, on_report=reports.append).ainvoke({"messages": broken()})
    [body] = stub.bodies("/chat/completions")
    assert body["messages"] == REPAIRED
    [report] = reports
    assert report.changed


def test_profile_auto_takes_the_models_name(stub: Stub) -> None:
    _agent(stub, model="mistral-small-2506").invoke({"messages": broken()})
    [body] = stub.bodies("/chat/completions")
    assert normalizer.check(body["messages"], profile="mistral") == []
    ids = [c["id"] for m in body["messages"] for c in m.get("tool_calls") or ()]
    assert all(len(i) == 9 and i.isalnum() for i in ids)  # Mistral's call ids


def test_repair_messages_keeps_objects_ids_and_metadata() -> None:
    image = HumanMessage(
        [{"type": "text", "text": "Read the README."}, {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}],
        id="h2",
    )
    history = broken()
    history[5] = image
    out = repair_messages(history, "openai")
    assert [(type(m).__name__, m.id) for m in out] == [
        ("HumanMessage", "h1"), ("AIMessage", "a2"), ("ToolMessage", "t1"), ("HumanMessage", "h2"),
        ("AIMessage", "a3"), ("ToolMessage", None), ("HumanMessage", "h3"),
    ]
    # Left as they were: the same objects (content blocks and all).
    assert out[0] is history[0] and out[2] is history[3] and out[3] is image and out[6] is history[7]
    # Merged: the text and the calls in one message, its metadata kept.
    merged = out[1]
    assert isinstance(merged, AIMessage)
    assert merged.content == "Let me look."
    assert merged.tool_calls == [_call("call_ls", "ls", {"path": "."})]
    assert merged.response_metadata == {"model_name": "gpt-4o"}
    # Added: the answer to the call never answered, paired by its id.
    stub_result = out[5]
    assert isinstance(stub_result, ToolMessage)
    assert (stub_result.tool_call_id, stub_result.content) == ("call_cat", STUB)
    # The caller's messages are left as they were.
    assert history[2].content == "" and len(history) == 8


def test_a_clean_history_comes_back_as_the_same_objects() -> None:
    history = [HumanMessage("hi", id="h1"), AIMessage("hello", id="a1")]
    out = repair_messages(history)
    assert out == history and all(a is b for a, b in zip(out, history))


def test_model_name() -> None:
    assert model_name(ChatOpenAI(model="gpt-4o", api_key="sk-test")) == "gpt-4o"  # type: ignore[arg-type]
    assert model_name(object()) is None
