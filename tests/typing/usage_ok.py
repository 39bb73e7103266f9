"""A caller's code that must type-check under mypy --strict (tests/test_types.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

from openai import OpenAI

import normalizer
from normalizer import AsyncRepaired, Normalizer, Repaired, repair, repairing


def send(client: OpenAI, stored: list[dict[str, Any]]) -> None:
    messages = list(repair(stored, profile="mistral", trailing_calls="drop"))
    client.chat.completions.create(model="mistral-small-2506", messages=messages)


def options() -> None:
    Normalizer("deepseek:no-thinking", validate=False, on_invalid="skip", max_held_bytes=1 << 20)
    Normalizer(Path("my-gateway.toml"))
    Normalizer(normalizer.PROFILES["anthropic"], on_record=lambda record: print(record.kind))


@repairing
def load(session: str) -> Iterator[dict[str, Any]]:
    yield {"role": "user", "content": session}


@repairing(profile="anthropic", orphan_results="keep_as_user")
async def aload(session: str) -> AsyncIterator[dict[str, Any]]:
    yield {"role": "user", "content": session}


def decorated() -> tuple[Repaired, AsyncRepaired]:
    return load("s"), aload("s")
