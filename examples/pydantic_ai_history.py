"""pydantic-ai: a message history stored broken, repaired before every model request
(``pip install 'chat-normalizer[pydantic-ai]' 'pydantic-ai-slim[openai]'``).

    OPENAI_API_KEY=sk-... python examples/pydantic_ai_history.py

(``OPENAI_BASE_URL`` points it at any OpenAI-compatible server.) pydantic-ai 2 spells a history
processor as the ``ProcessHistory`` capability: ``repair_capability()`` is one.
"""

from __future__ import annotations

import asyncio
import logging
import os

from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from normalizer.integrations.pydantic_ai import repair_capability

HISTORY: list[ModelMessage] = [
    ModelRequest(parts=[SystemPromptPart("You are a coding agent."), UserPromptPart("What is in the repo?")]),
    ModelResponse(parts=[TextPart("Let me look.")]),  # one turn stored as two responses...
    ModelResponse(parts=[TextPart(""), ToolCallPart("ls", {"path": "."}, tool_call_id="call_ls")]),  # ...with ""
    ModelRequest(parts=[ToolReturnPart("ls", "README.md", tool_call_id="call_ls")]),
    ModelRequest(parts=[UserPromptPart("Read the README.")]),
    ModelResponse(parts=[ToolCallPart("cat", {"path": "README.md"}, tool_call_id="call_cat")]),  # never answered
    ModelRequest(parts=[UserPromptPart("Never mind. Summarise the repo in one line.")]),
]


async def main() -> None:
    agent = Agent(f"openai:{os.environ.get('MODEL', 'gpt-4o-mini')}", capabilities=[repair_capability()])
    result = await agent.run(message_history=HISTORY)
    print(result.output)


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")  # the repair's log line
    asyncio.run(main())
