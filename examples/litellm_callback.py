"""LiteLLM: a broken stored history goes out repaired (``pip install 'chat-normalizer[litellm]'``).

    OPENAI_API_KEY=sk-... python examples/litellm_callback.py

(``OPENAI_BASE_URL`` points it at any OpenAI-compatible server.) The callback repairs every
``litellm.acompletion``'s messages for the routed model's profile; what it repaired is in
the request's LiteLLM metadata (every logging callback gets it) and in the log, not on stdout.
"""

from __future__ import annotations

import asyncio
import logging
import os

import litellm

from normalizer.integrations.litellm import METADATA_KEY, NormalizerCallback, repair_request

#: One model turn stored as two messages, "" next to the calls, a result whose call is gone,
#: a call never answered: each one a 400 from a strict provider.
HISTORY = [
    {"role": "system", "content": "You are a coding agent."},
    {"role": "user", "content": "What is in the repo?"},
    {"role": "assistant", "content": "Let me look."},
    {"role": "assistant", "content": "", "tool_calls": [
        {"id": "call_ls", "type": "function", "function": {"name": "ls", "arguments": '{"path": "."}'}}]},
    {"role": "tool", "tool_call_id": "call_ls", "content": "README.md"},
    {"role": "tool", "tool_call_id": "call_gone", "content": "output of a call that was compacted away"},
    {"role": "user", "content": "Read the README."},
    {"role": "assistant", "content": "", "tool_calls": [
        {"id": "call_cat", "type": "function", "function": {"name": "cat", "arguments": '{"path": "README.md"}'}}]},
    {"role": "user", "content": "Never mind. Summarise the repo in one line."},
]

MODEL = os.environ.get("MODEL", "openai/gpt-4o-mini")
SERVER = {"api_base": os.environ["OPENAI_BASE_URL"]} if "OPENAI_BASE_URL" in os.environ else {}


async def main() -> None:
    litellm.callbacks.append(NormalizerCallback())  # every async call from here on
    response = await litellm.acompletion(model=MODEL, messages=HISTORY, **SERVER)
    print("async:", response.choices[0].message.content)

    # litellm.completion (sync) runs no hook: repair the keywords yourself.
    request = repair_request({"model": MODEL, "messages": HISTORY, **SERVER})
    print("repaired:", request["metadata"][METADATA_KEY]["counts"])
    response = litellm.completion(**request)
    print("sync:", response.choices[0].message.content)


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")  # the repair's log lines
    asyncio.run(main())
