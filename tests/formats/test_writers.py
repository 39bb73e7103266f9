"""In-memory values orjson cannot write are a positioned InvalidMessage, never a TypeError."""

from __future__ import annotations

import io
from typing import Any

import anyio
import pytest

from normalizer import InvalidMessage, write_json_array, write_jsonl
from normalizer.formats._writers import awrite_jsonl

GOOD = {"role": "user", "content": "hi"}
SURROGATE = {"role": "user", "content": "a\ud800b"}


def nested(depth: int) -> Any:
    value: Any = []
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize("bad", [SURROGATE, {"role": "user", "content": "x", "v": nested(300)}], ids=["surrogate", "deep"])
@pytest.mark.parametrize("write", [write_jsonl, write_json_array])
def test_an_unwritable_message_names_its_index(write: Any, bad: dict[str, Any]) -> None:
    with pytest.raises(InvalidMessage) as exc:
        write([GOOD, GOOD, bad], io.BytesIO())
    assert exc.value.index == 2
    assert str(exc.value).startswith("message 2: cannot be written as JSON (")


def test_the_async_writer_names_it_too() -> None:
    async def go() -> None:
        await awrite_jsonl([GOOD, SURROGATE], io.BytesIO())

    with pytest.raises(InvalidMessage) as exc:
        anyio.run(go)
    assert exc.value.index == 1
