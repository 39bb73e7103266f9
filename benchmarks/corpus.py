"""A seeded corpus for the scale benchmark (``benchmarks/scale.py``) and the engine tests.

Two layouts, the two that corpora come in:

* fine-tuning JSONL: one conversation per line (``{"messages": [...]}``), several files;
* chat session files: one conversation per file, one message per line.

A conversation is a system prompt and 1-4 user turns, each answered by 0-2 tool rounds and
a text answer: about 12.5 messages and 2.1 KB of JSON on average, with the defects of real
exports -- a turn split into text + calls (30% of tool turns), ``""`` next to calls, a
missing result (5% of rounds), an orphan result (3%). Everything is deterministic in the
seed, and written in streaming blocks (nothing grows with the corpus).
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

__all__ = ["conversations", "finetune_file", "finetune_files", "session_files", "main"]

_WORDS = ("the a of to and in is for on with that this it as be by from are at was file line function test "
          "error value return import class def self none true false path config request response token model "
          "user tool call result output input data list dict key status build run check update fix").split()
_TOOLS = ("shell", "read_file", "write_file", "search", "apply_patch")


class _Text:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.corpus = " ".join(rng.choice(_WORDS) for _ in range(20_000))

    def __call__(self, lo: int, hi: int) -> str:
        size = self.rng.randint(lo, hi)
        start = self.rng.randrange(0, len(self.corpus) - size)
        return self.corpus[start:start + size]


def conversations(n: int, *, seed: int = 0) -> Iterator[list[dict[str, Any]]]:
    """``n`` conversations (lists of chat messages), one at a time."""
    rng = random.Random(seed)
    text = _Text(rng)
    calls = 0
    for _ in range(n):
        conv: list[dict[str, Any]] = [{"role": "system", "content": text(40, 200)}]
        for _turn in range(rng.randint(1, 4)):
            conv.append({"role": "user", "content": text(30, 200)})
            for _round in range(rng.choices((0, 1, 2), weights=(1, 3, 2))[0]):
                calls += 1
                call = {"id": f"c{calls:x}", "type": "function",
                        "function": {"name": rng.choice(_TOOLS), "arguments": '{"q":"x"}'}}
                if rng.random() < 0.30:
                    conv.append({"role": "assistant", "content": text(20, 100)})
                conv.append({"role": "assistant", "content": "", "tool_calls": [call]})
                if rng.random() >= 0.05:
                    conv.append({"role": "tool", "tool_call_id": call["id"], "content": text(40, 300)})
                if rng.random() < 0.03:
                    conv.append({"role": "tool", "tool_call_id": f"gone{calls:x}", "content": text(10, 40)})
            conv.append({"role": "assistant", "content": text(30, 300)})
        yield conv


def _write(path: Path, lines: Iterator[bytes]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as f:
        block: list[bytes] = []
        for line in lines:
            block.append(line)
            if len(block) >= 2048:
                f.write(b"".join(block))
                block.clear()
        f.write(b"".join(block))
    return path


def finetune_file(path: Path, n: int, *, seed: int = 0) -> Path:
    """One fine-tuning JSONL file of ``n`` conversations."""
    return _write(path, (orjson.dumps({"messages": c}) + b"\n" for c in conversations(n, seed=seed)))


def finetune_files(folder: Path, n: int, files: int, *, seed: int = 0) -> list[Path]:
    """``n`` conversations over ``files`` fine-tuning files (``train-000.jsonl``...)."""
    per, extra = divmod(n, files)
    return [finetune_file(folder / f"train-{i:03}.jsonl", per + (i < extra), seed=seed + i) for i in range(files)]


def session_files(folder: Path, n: int, *, turns_per_file: int = 1, seed: int = 0) -> list[Path]:
    """``n`` conversations as chat session files, ``turns_per_file`` conversations' worth
    of messages each (one session per file: their messages follow one another), in
    sub-folders of 1,000 files."""
    paths = []
    convs = conversations(n, seed=seed)
    for i in range(-(-n // turns_per_file)):
        messages: list[bytes] = []
        for _ in range(turns_per_file):
            conv = next(convs, None)
            if conv is None:
                break
            messages.extend(orjson.dumps(m) + b"\n" for m in (conv if not messages else conv[1:]))
        paths.append(_write(folder / f"{i // 1000:04}" / f"session-{i:07}.jsonl", iter(messages)))
    return paths


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("layout", choices=["finetune", "sessions"])
    parser.add_argument("conversations", type=int)
    parser.add_argument("folder", type=Path)
    parser.add_argument("--files", type=int, default=8, help="finetune: how many files")
    parser.add_argument("--per-file", type=int, default=10, help="sessions: conversations' worth per file")
    args = parser.parse_args(argv)
    if args.layout == "finetune":
        finetune_files(args.folder, args.conversations, args.files)
    else:
        session_files(args.folder, args.conversations, turns_per_file=args.per_file)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
