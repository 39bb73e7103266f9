"""The Anthropic writer holds the leading system messages (to write them as the request's
top-level ``system``) at most ``MAX_LEADING_SYSTEMS`` of them, the profile stage's limit:
the one past it is refused, naming its index."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest

from normalizer import LimitExceeded, awrite_anthropic, write_anthropic
from normalizer.formats._anthropic_writer import AnthropicWriter
from normalizer.profiles import _stage

ROOT = Path(__file__).parents[2]


def system(i: int, role: str = "system") -> dict[str, Any]:
    return {"role": role, "content": f"rule {i}"}


USER = {"role": "user", "content": "hi"}


def request(messages: list[dict[str, Any]], **kwargs: Any) -> Any:
    out = io.BytesIO()
    write_anthropic(messages, out, **kwargs)
    return orjson.loads(out.getvalue())


MESSAGE = ("more than 3 leading system messages are held to write them as the request's 'system'. "
           "no real history has that many; is the input a history?")


def test_one_limit_with_the_profile_stage() -> None:
    assert _stage.MAX_LEADING_SYSTEMS == 10_000
    row = ("| `MAX_LEADING_SYSTEMS` (profile stage, Anthropic writer) | 10,000 | ")
    assert row in (ROOT / "docs" / "limits.md").read_text()


def test_the_limit_itself_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_stage, "MAX_LEADING_SYSTEMS", 3)
    body = request([system(0), system(1, "developer"), system(2), USER])
    assert [block["text"] for block in body["system"]] == ["rule 0", "rule 1", "rule 2"]
    assert body["messages"] == [{"role": "user", "content": "hi"}]


def test_the_one_past_it_is_refused_at_its_index(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_stage, "MAX_LEADING_SYSTEMS", 3)
    with pytest.raises(LimitExceeded) as caught:
        request([system(0), system(1), system(2, "developer"), system(3), USER])
    err = caught.value
    assert (err.limit, err.value, err.index, err.source, err.line) == ("MAX_LEADING_SYSTEMS", 3, 3, None, None)
    assert str(err) == f"message 3: {MESSAGE}"


def test_the_index_counts_the_assistant_messages_left_out(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_stage, "MAX_LEADING_SYSTEMS", 3)
    empty = {"role": "assistant", "content": ""}
    with pytest.raises(LimitExceeded) as caught:
        request([system(0), empty, system(1), system(2), empty, system(3)])
    assert caught.value.index == 5 and str(caught.value) == f"message 5: {MESSAGE}"


def test_async_writer_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_stage, "MAX_LEADING_SYSTEMS", 3)

    async def main() -> None:
        await awrite_anthropic([system(i) for i in range(4)], io.BytesIO())

    with pytest.raises(LimitExceeded, match="^message 3: more than 3 leading system messages"):
        anyio.run(main)


def test_only_leading_systems_are_held(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_stage, "MAX_LEADING_SYSTEMS", 3)
    # After the first other message a system message is written where it is: nothing held.
    body = request([system(0), USER, *[system(i) for i in range(1, 10)]])
    assert body["system"] == "rule 0" and len(body["messages"]) == 10
    # The messages list alone: every system message is written in the list, none held.
    listed = request([system(i) for i in range(10)], container="array")
    assert len(listed) == 10


def test_held_systems_are_let_go_once_written() -> None:
    encoder = AnthropicWriter()
    encoder.start()
    encoder.begin({})
    for i in range(3):
        assert encoder.message(system(i)) == b""
    assert encoder.message(USER) == b""
    assert encoder.message({"role": "assistant", "content": "hello"}).startswith(b'{"system":')
    assert encoder._system == []


def test_command_line_refuses_at_its_line(tmp_path: Path) -> None:
    limit = _stage.MAX_LEADING_SYSTEMS
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "120"}

    def repair(n: int) -> subprocess.CompletedProcess[bytes]:
        src = tmp_path / f"systems{n}.jsonl"
        src.write_bytes(b"".join(orjson.dumps(system(i)) + b"\n" for i in range(n)) + orjson.dumps(USER) + b"\n")
        return subprocess.run([sys.executable, "-m", "normalizer", "repair", "--to", "anthropic", str(src)],
                              capture_output=True, env=env, timeout=120)

    ok = repair(limit)
    assert ok.returncode == 0, ok.stderr
    assert len(orjson.loads(ok.stdout)["system"]) == limit
    refused = repair(limit + 1)
    assert refused.returncode == 1 and refused.stdout == b""
    assert refused.stderr.decode().splitlines()[0] == (
        f"error: {tmp_path / f'systems{limit + 1}.jsonl'}:{limit + 1}:1: message {limit}: more than {limit} "
        "leading system messages are held to write them as the request's 'system'. "
        "no real history has that many; is the input a history?"
    )
