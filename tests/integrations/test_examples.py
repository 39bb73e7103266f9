"""Every ``examples/<framework>_*.py`` runs as a user runs it (``python examples/...``), its
provider the stub server on 127.0.0.1 (``OPENAI_BASE_URL``), and what reaches the provider
is a repaired history."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

import normalizer
from normalizer.formats import from_responses
from wire import Stub

ROOT = Path(__file__).resolve().parents[2]

EXAMPLES = {
    "litellm_callback.py": ("litellm",),
    "openai_agents_session.py": ("agents",),
    "langchain_middleware.py": ("langchain", "langchain_openai"),
    "pydantic_ai_history.py": ("pydantic_ai", "openai"),
}


def test_every_framework_example_is_listed() -> None:
    assert sorted(p.name for p in (ROOT / "examples").glob("*.py")) == sorted(EXAMPLES)


@pytest.mark.parametrize("example", sorted(EXAMPLES))
def test_example_runs_and_sends_a_repaired_history(example: str, stub: Stub) -> None:
    for module in EXAMPLES[example]:
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed")
    env = {
        **os.environ,
        "OPENAI_BASE_URL": f"{stub.url}/v1",
        "OPENAI_API_KEY": "sk-test",
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / example)], env=env, capture_output=True, text=True, timeout=120, check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "ok" in done.stdout
    assert "repaired the history" in done.stderr  # the log line, not stdout
    # Chat Completions, or Responses (pydantic-ai's "openai:" models), read back as chat.
    sent = [body["messages"] for body in stub.bodies("/chat/completions")]
    sent += [from_responses(body["input"]) for body in stub.bodies("/responses")]
    assert sent
    for messages in sent:
        assert normalizer.check(messages, profile="openai") == [], messages
        assert not any(m["role"] == "tool" and m["tool_call_id"] == "call_gone" for m in messages)
        assert [m["tool_call_id"] for m in messages if m["role"] == "tool"][-1] == "call_cat"
