"""OpenAI Agents SDK: a session holding a broken history, replayed repaired
(``pip install 'chat-normalizer[agents]'``).

    OPENAI_API_KEY=sk-... python examples/openai_agents_session.py

(``OPENAI_BASE_URL`` points it at any OpenAI-compatible server.) ``RepairingSession`` wraps the
SQLite session: the run sees the repaired history, the stored one stays as it was
(``rewrite=True`` would store the repaired one).
"""

from __future__ import annotations

import asyncio
import logging
import os

from agents import Agent, OpenAIChatCompletionsModel, Runner, SQLiteSession, set_tracing_disabled
from openai import AsyncOpenAI

from normalizer.integrations.openai_agents import RepairingSession

#: Responses items as the session stores them: the turn split in two message items (the
#: second "" before its call), a result whose call is gone, a call never answered.
ITEMS = [
    {"role": "user", "content": "What is in the repo?"},
    {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
     "content": [{"type": "output_text", "text": "Let me look.", "annotations": []}]},
    {"type": "message", "id": "msg_2", "role": "assistant", "status": "completed",
     "content": [{"type": "output_text", "text": "", "annotations": []}]},
    {"type": "function_call", "call_id": "call_ls", "name": "ls", "arguments": '{"path": "."}'},
    {"type": "function_call_output", "call_id": "call_ls", "output": "README.md"},
    {"type": "function_call_output", "call_id": "call_gone", "output": "output of a call that was compacted away"},
    {"role": "user", "content": "Read the README."},
    {"type": "function_call", "call_id": "call_cat", "name": "cat", "arguments": '{"path": "README.md"}'},
]


async def main() -> None:
    set_tracing_disabled(True)  # the example sends nothing but the model call
    stored = SQLiteSession("user-42")  # in memory; SQLiteSession("user-42", "history.db") on disk
    await stored.add_items(ITEMS)  # type: ignore[arg-type]
    session = RepairingSession(stored, profile="openai")

    model = OpenAIChatCompletionsModel(os.environ.get("MODEL", "gpt-4o-mini"), openai_client=AsyncOpenAI())
    agent = Agent(name="coder", instructions="You are a coding agent.", model=model)
    result = await Runner.run(agent, "Never mind. Summarise the repo in one line.", session=session)
    print(result.final_output)


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")  # the repair's log line
    asyncio.run(main())
