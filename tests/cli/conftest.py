"""Helpers for the command-line tests: run the real entry point in a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

ROOT = Path(__file__).parents[2]
EXAMPLE = ROOT / "examples" / "split-turns.jsonl"
sys.path.insert(0, str(ROOT / "tests"))
from realdata import HAVE_SAMPLES, SAMPLES, SKIP_REASON, needs_samples  # noqa: E402

__all__ = ["HAVE_SAMPLES", "SAMPLES", "SKIP_REASON", "needs_samples"]


def run(*args: Any, input: bytes | None = None, cwd: Path | None = None, timeout: float = 60) -> subprocess.CompletedProcess[bytes]:
    """``python -m normalizer ARGS`` with stdin from ``input`` (empty when None)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "120"}
    return subprocess.run(
        [sys.executable, "-m", "normalizer", *map(str, args)],
        input=input if input is not None else b"",
        capture_output=True, cwd=cwd, env=env, timeout=timeout,
    )


def read_pty(master: int) -> bytes:
    """Everything written to a pseudo-terminal, until its other side is closed; closes ``master``."""
    seen = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the slave side is closed (EIO)
            break
        if not chunk:
            break
        seen += chunk
    os.close(master)
    return seen


def jsonl(data: bytes) -> list[Any]:
    return [orjson.loads(line) for line in data.splitlines() if line.strip()]


def write_jsonl(path: Path, messages: list[Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(orjson.dumps(m) + b"\n" for m in messages))
    return path


def big_session(path: Path, turns: int) -> Path:
    """A long, valid-but-broken session (split turns, "" next to calls), written fast."""
    lines = [orjson.dumps({"role": "system", "content": "You are a coding agent."})]
    for t in range(turns):
        lines.append(orjson.dumps({"role": "user", "content": f"question {t} " + "x" * 200}))
        lines.append(orjson.dumps({"role": "assistant", "content": f"Looking at {t}."}))
        lines.append(orjson.dumps({"role": "assistant", "content": "", "tool_calls": [
            {"id": f"c{t}", "type": "function", "function": {"name": "sh", "arguments": "{}"}}]}))
        lines.append(orjson.dumps({"role": "tool", "tool_call_id": f"c{t}", "content": "y" * 400}))
        lines.append(orjson.dumps({"role": "assistant", "content": f"Answer {t}."}))
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


@pytest.fixture
def example() -> Path:
    return EXAMPLE
