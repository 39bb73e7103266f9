from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from wire import Stub, serve

# LiteLLM fetches its model price map from the network at import unless told not to.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
# The Agents SDK exports traces to OpenAI unless tracing is off.
os.environ.setdefault("OPENAI_AGENTS_DISABLE_TRACING", "1")


@pytest.fixture
def anyio_backend() -> str:
    """The frameworks run on asyncio."""
    return "asyncio"


@pytest.fixture
def stub() -> Iterator[Stub]:
    server, stub = serve()
    try:
        yield stub
    finally:
        server.shutdown()
        server.server_close()
