"""OpenAI Agents SDK: ``Runner.run`` over a ``RepairingSession`` wrapping a ``SQLiteSession``
that holds a broken history, and ``RunConfig(call_model_input_filter=repair_model_input)``,
with the SDK's own OpenAI models pointed at a stub provider on 127.0.0.1."""

from __future__ import annotations

import copy
import logging
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("agents", reason="the OpenAI Agents SDK is not installed (extra [agents])")

from agents import (  # noqa: E402
    Agent,
    OpenAIChatCompletionsModel,
    OpenAIResponsesModel,
    RunConfig,
    Runner,
    SQLiteSession,
    set_tracing_disabled,
)
from openai import AsyncOpenAI  # noqa: E402

import normalizer  # noqa: E402
from histories import BROKEN_ITEMS, REPAIRED, REPAIRED_ITEMS, SYSTEM, output_message  # noqa: E402
from normalizer.formats import from_responses  # noqa: E402
from normalizer.integrations.openai_agents import (  # noqa: E402
    ModelInputRepair,
    RepairingSession,
    repair_items,
    repair_model_input,
)
from wire import Stub  # noqa: E402

pytestmark = pytest.mark.anyio

NEW_INPUT = "Never mind. Summarise the repo."


@pytest.fixture(autouse=True)
def no_tracing() -> Iterator[None]:
    set_tracing_disabled(True)
    yield


async def _session(items: list[dict[str, Any]]) -> SQLiteSession:
    session = SQLiteSession("user-42")
    await session.add_items(copy.deepcopy(items))  # type: ignore[arg-type]
    return session


def _agent(stub: Stub, model: type[OpenAIChatCompletionsModel] | type[OpenAIResponsesModel]) -> Agent[Any]:
    client = AsyncOpenAI(base_url=f"{stub.url}/v1", api_key="sk-test")
    return Agent(name="coder", instructions=SYSTEM, model=model("gpt-4o", openai_client=client))


async def test_runner_chat_completions_with_a_repairing_session(stub: Stub, caplog: pytest.LogCaptureFixture) -> None:
    stored = await _session(BROKEN_ITEMS)
    reports: list[normalizer.Report] = []
    session = RepairingSession(stored, profile="openai", on_report=reports.append)
    with caplog.at_level(logging.INFO, logger="normalizer.integrations"):
        result = await Runner.run(_agent(stub, OpenAIChatCompletionsModel), NEW_INPUT, session=session)
    assert result.final_output == "ok"
    [body] = stub.bodies("/chat/completions")
    assert body["messages"] == REPAIRED
    assert normalizer.check(body["messages"], profile="openai") == []
    [report] = reports
    assert report.counts == {"drop_orphan_result": 1, "stub_missing_result": 1}
    [record] = [r for r in caplog.records if r.name == "normalizer.integrations.openai_agents"]
    assert record.getMessage().startswith("session user-42: repaired the history [profile openai]: 6 in, 6 out")
    # The stored history is the user's record: left as it was, the run's new items after it.
    items = await stored.get_items()
    assert items[: len(BROKEN_ITEMS)] == BROKEN_ITEMS
    assert items[len(BROKEN_ITEMS)] == {"role": "user", "content": NEW_INPUT}


async def test_runner_responses_with_a_repairing_session(stub: Stub) -> None:
    session = RepairingSession(await _session(BROKEN_ITEMS), profile="openai")
    await Runner.run(_agent(stub, OpenAIResponsesModel), NEW_INPUT, session=session)
    [body] = stub.bodies("/responses")
    assert body["instructions"] == SYSTEM
    assert body["input"] == [*REPAIRED_ITEMS, {"role": "user", "content": NEW_INPUT}]
    chat = [{"role": "system", "content": body["instructions"]}, *from_responses(body["input"])]
    assert normalizer.check(chat, profile="openai") == []


async def test_rewrite_stores_the_repaired_history(stub: Stub) -> None:
    stored = await _session(BROKEN_ITEMS)
    await Runner.run(_agent(stub, OpenAIResponsesModel), NEW_INPUT, session=RepairingSession(stored, rewrite=True))
    items = await stored.get_items()
    assert items[: len(REPAIRED_ITEMS)] == REPAIRED_ITEMS
    assert items[len(REPAIRED_ITEMS)] == {"role": "user", "content": NEW_INPUT}
    # Stored repaired, it reads back as it is.
    assert repair_items(items[: len(REPAIRED_ITEMS)]).report.changed is False


async def test_a_window_is_never_written_back(stub: Stub) -> None:
    stored = await _session(BROKEN_ITEMS)
    session = RepairingSession(stored, rewrite=True)
    window = await session.get_items(limit=4)
    # The last 4 items start with two results: both lose their call to the cut, both are dropped.
    assert window == REPAIRED_ITEMS[4:]
    assert await stored.get_items() == BROKEN_ITEMS


async def test_call_model_input_filter(stub: Stub) -> None:
    history = [*copy.deepcopy(BROKEN_ITEMS), {"role": "user", "content": NEW_INPUT}]
    await Runner.run(
        _agent(stub, OpenAIChatCompletionsModel), history,  # type: ignore[arg-type]
        run_config=RunConfig(call_model_input_filter=repair_model_input),
    )
    [body] = stub.bodies("/chat/completions")
    assert body["messages"] == REPAIRED
    assert normalizer.check(body["messages"], profile="openai") == []


async def test_call_model_input_filter_auto_takes_the_agents_model(stub: Stub, caplog: pytest.LogCaptureFixture) -> None:
    client = AsyncOpenAI(base_url=f"{stub.url}/v1", api_key="sk-test")
    agent = Agent(name="coder", instructions=SYSTEM, model=OpenAIChatCompletionsModel("qwen3-8b", openai_client=client))
    history = [*copy.deepcopy(BROKEN_ITEMS), {"role": "user", "content": NEW_INPUT}]
    with caplog.at_level(logging.INFO, logger="normalizer.integrations"):
        await Runner.run(agent, history, run_config=RunConfig(call_model_input_filter=ModelInputRepair()))  # type: ignore[arg-type]
    [body] = stub.bodies("/chat/completions")
    assert normalizer.check(body["messages"], profile="qwen3") == []
    [record] = [r for r in caplog.records if r.name == "normalizer.integrations.openai_agents"]
    assert "[profile qwen3]" in record.getMessage()


async def test_the_wrapper_is_the_wrapped_session_for_everything_else() -> None:
    stored = await _session(BROKEN_ITEMS)
    session = RepairingSession(stored)
    assert session.session_id == "user-42" and session.db_path == ":memory:"
    assert await session.pop_item() == BROKEN_ITEMS[-1]
    await session.add_items([{"role": "user", "content": "again"}])
    assert (await stored.get_items())[-1] == {"role": "user", "content": "again"}
    await session.clear_session()
    assert await stored.get_items() == []


def test_a_clean_history_is_the_same_list() -> None:
    outcome = repair_items(REPAIRED_ITEMS)
    assert outcome.items is REPAIRED_ITEMS
    assert outcome.applied and not outcome.report.changed


def test_items_with_no_chat_form_are_used_as_they_are(caplog: pytest.LogCaptureFixture) -> None:
    hosted = {"type": "web_search_call", "id": "ws_1", "status": "completed", "action": {"type": "search", "query": "x"}}
    items = [{"role": "user", "content": "Search"}, hosted, output_message("Found.", "msg_9"), output_message("More?", "msg_10")]
    with caplog.at_level(logging.WARNING, logger="normalizer.integrations"):
        outcome = repair_items(items, where="session s")
    assert outcome.items is items
    assert outcome.applied is False
    [record] = [r for r in caplog.records if r.name == "normalizer.integrations.openai_agents"]
    assert record.getMessage() == (
        "session s: history not repaired: it holds items a chat message cannot carry (drop_web_search_call); used as it is"
    )
