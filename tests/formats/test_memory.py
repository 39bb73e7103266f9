"""Memory: a long rollout streams through in constant memory (tracemalloc peak at two sizes)."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import orjson
import pytest

from normalizer import Report
from normalizer.formats import read_messages

_BLOCK = 5  # lines per generated turn


def make_rollout(path: Path, lines: int) -> None:
    """A Codex rollout of ``lines`` lines: user, reasoning, call, output, answer, repeated."""
    with path.open("wb") as f:
        buf = bytearray()
        for i in range(lines // _BLOCK):
            for payload in (
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": f"question {i}"}]},
                {"type": "reasoning", "summary": [{"type": "summary_text", "text": "thinking"}], "content": None, "encrypted_content": "gAAAA" + "x" * 64},
                {"type": "function_call", "name": "shell", "arguments": '{"command":["ls"]}', "call_id": f"call_{i}"},
                {"type": "function_call_output", "call_id": f"call_{i}", "output": "a\nb\nc"},
                {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": f"answer {i}"}]},
            ):
                buf += orjson.dumps({"timestamp": "2025-11-13T01:50:42.994Z", "type": "response_item", "payload": payload})
                buf += b"\n"
            if len(buf) > 1 << 20:
                f.write(buf)
                buf.clear()
        f.write(buf)


def peak_while_reading(path: Path) -> tuple[int, int]:
    report = Report()
    tracemalloc.start()
    try:
        n = sum(1 for _ in read_messages(path, report=report))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return n, peak


@pytest.mark.parametrize(
    "sizes",
    [(10_000, 100_000), pytest.param((100_000, 1_000_000), marks=pytest.mark.slow)],
    ids=["10k-100k", "100k-1m"],
)
def test_memory_is_flat_at_two_sizes(tmp_path: Path, sizes: tuple[int, int]) -> None:
    small, big = tmp_path / "small.jsonl", tmp_path / "big.jsonl"
    make_rollout(small, sizes[0])
    make_rollout(big, sizes[1])
    n_small, peak_small = peak_while_reading(small)
    n_big, peak_big = peak_while_reading(big)
    assert (n_small, n_big) == (sizes[0] * 4 // 5, sizes[1] * 4 // 5)  # 4 messages per 5 lines
    # Ten times the input, (about) the same peak: a few read chunks and one turn.
    assert peak_big < peak_small * 1.25 + 256 * 1024, (peak_small, peak_big)
    assert peak_big < 8 * 1024 * 1024
