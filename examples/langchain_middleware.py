"""LangChain v1: an agent whose stored history is broken, each model call repaired
(``pip install 'chat-normalizer[langchain]' langchain-openai``).

    OPENAI_API_KEY=sk-... python examples/langchain_middleware.py

(``OPENAI_BASE_URL`` points it at any OpenAI-compatible server.) The middleware repairs the
messages of every model call for the model's profile; the agent's state keeps the history as
it was stored.
"""

from __future__ import annotations

import logging
import os

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_openai import ChatOpenAI

from normalizer.integrations.langchain import NormalizerMiddleware

HISTORY = [
    HumanMessage("What is in the repo?"),
    AIMessage("Let me look."),  # one turn stored as two messages...
    AIMessage("", tool_calls=[{"name": "ls", "args": {"path": "."}, "id": "call_ls"}]),  # ..."" next to the call
    ToolMessage("README.md", tool_call_id="call_ls"),
    ToolMessage("output of a call that was compacted away", tool_call_id="call_gone"),  # its call is gone
    HumanMessage("Read the README."),
    AIMessage("", tool_calls=[{"name": "cat", "args": {"path": "README.md"}, "id": "call_cat"}]),  # never answered
    HumanMessage("Never mind. Summarise the repo in one line."),
]


def main() -> None:
    model = ChatOpenAI(model=os.environ.get("MODEL", "gpt-4o-mini"))
    agent = create_agent(model, tools=[], system_prompt="You are a coding agent.", middleware=[NormalizerMiddleware()])
    state = agent.invoke({"messages": HISTORY})
    print(state["messages"][-1].content)


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")  # the repair's log line
    main()
