"""Seeded, streaming generator of realistic chat histories with a tunable defect mix.

A history is one long agent session: a system prompt, then user turns; each user turn is
answered by 0-4 tool rounds (an assistant turn with 1-3 parallel calls, sometimes with
``reasoning_content``, then one ``tool`` result of 200 B-4 KB per call) and a final text
answer. Defects are injected at the rates of a :class:`Mix`:

=============  ================================================================
``split``      the turn's text and its calls arrive as two assistant messages
``empty``      ``content: ""`` next to ``tool_calls``
``orphan``     an extra tool result whose ``tool_call_id`` answers no call
``missing``    one result of the round is never written
``interleave`` a user message sits between the calls and their results
=============  ================================================================

Everything is a generator: :func:`chat_messages` yields exactly ``n`` dicts and holds one
turn at a time, so 10M messages never sit in memory. :func:`responses_items` renders the same
history as OpenAI Responses input items (for the Agents SDK comparison).

Run ``python -m benchmarks.workload N OUT.jsonl [--responses]`` to write a file.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import orjson

__all__ = [
    "Mix",
    "DEFAULT_MIX",
    "WORKLOADS",
    "chat_messages",
    "short_messages",
    "clean_messages",
    "real_messages",
    "responses_items",
    "responses_to_chat",
    "write_jsonl",
    "jsonl_bytes",
]

Message = dict[str, Any]

_WORDS = (
    "the a of to and in is for on with that this it as be by from are at was file line "
    "function test error value return import class def self none true false path config "
    "request response token model user tool call result output input data list dict key "
    "status build run check update fix patch module package version commit branch merge "
    "diff stream message history provider schema field type string number object array"
).split()

_TOOLS = ("shell", "read_file", "write_file", "search", "apply_patch", "web_fetch", "update_plan")


@dataclass(frozen=True)
class Mix:
    """Defect rates, each a probability per opportunity (per tool round or per turn)."""

    split: float = 0.10
    empty: float = 0.10
    orphan: float = 0.02
    missing: float = 0.02
    interleave: float = 0.02
    reasoning: float = 0.30  # not a defect: share of assistant turns that carry reasoning

    @classmethod
    def parse(cls, text: str) -> Mix:
        """Parse ``"split=0.1,orphan=0"``; ``"none"`` turns every defect off."""
        if text.strip() == "none":
            return cls(split=0, empty=0, orphan=0, missing=0, interleave=0)
        known = {f.name for f in fields(cls)}
        values: dict[str, float] = {}
        for part in filter(None, (p.strip() for p in text.split(","))):
            key, _, val = part.partition("=")
            if key not in known:
                raise ValueError(f"unknown defect {key!r}; expected one of {sorted(known)}")
            values[key] = float(val)
        return cls(**values)


DEFAULT_MIX = Mix()


class _Text:
    """Cheap seeded filler text: slices of one pre-generated corpus."""

    def __init__(self, rng: random.Random) -> None:
        self._rng = rng
        words = [rng.choice(_WORDS) for _ in range(40_000)]
        self._corpus = " ".join(words)
        self._n = len(self._corpus)

    def text(self, lo: int, hi: int) -> str:
        size = self._rng.randint(lo, hi)
        start = self._rng.randrange(0, self._n - size)
        return self._corpus[start : start + size]

    def result(self) -> str:
        """A tool result: log-uniform 200 B-4 KB, shaped like command output."""
        size = int(200 * 20 ** self._rng.random())
        start = self._rng.randrange(0, self._n - size)
        body = self._corpus[start : start + size]
        return body.replace(" status ", "\n") if self._rng.random() < 0.5 else body


def _tool_calls(rng: random.Random, text: _Text, counter: list[int]) -> list[Message]:
    k = rng.choices((1, 2, 3), weights=(6, 3, 1))[0]
    calls = []
    for _ in range(k):
        counter[0] += 1
        args = orjson.dumps({"path": text.text(8, 40), "query": text.text(20, 200)}).decode()
        calls.append(
            {
                "id": f"call_{counter[0]:08x}{rng.getrandbits(32):08x}",
                "type": "function",
                "function": {"name": rng.choice(_TOOLS), "arguments": args},
            }
        )
    return calls


def _turns(seed: int, mix: Mix) -> Iterator[Message]:
    """The endless history; :func:`chat_messages` cuts it at ``n``."""
    rng = random.Random(seed)
    text = _Text(rng)
    counter = [0]
    yield {"role": "system", "content": text.text(800, 2500)}
    while True:
        yield {"role": "user", "content": text.text(40, 500)}
        for _round in range(rng.choices((0, 1, 2, 3, 4), weights=(2, 3, 3, 2, 1))[0]):
            calls = _tool_calls(rng, text, counter)
            preface = text.text(20, 300) if rng.random() < 0.4 else None
            reasoning = text.text(100, 800) if rng.random() < mix.reasoning else None
            if preface is not None and rng.random() < mix.split:
                # split turn: text assistant, then a tool-call-only assistant
                first: Message = {"role": "assistant", "content": preface}
                if reasoning is not None:
                    first["reasoning_content"] = reasoning
                yield first
                yield {"role": "assistant", "content": None, "tool_calls": calls}
            else:
                content = preface
                if content is None and rng.random() < mix.empty:
                    content = ""
                msg: Message = {"role": "assistant", "content": content, "tool_calls": calls}
                if reasoning is not None:
                    msg["reasoning_content"] = reasoning
                yield msg
            if rng.random() < mix.interleave:
                yield {"role": "user", "content": text.text(10, 120)}
            skip = rng.randrange(len(calls)) if rng.random() < mix.missing else -1
            for i, call in enumerate(calls):
                if i != skip:
                    yield {"role": "tool", "tool_call_id": call["id"], "content": text.result()}
            if rng.random() < mix.orphan:
                counter[0] += 1
                yield {
                    "role": "tool",
                    "tool_call_id": f"call_orphan{counter[0]:08x}",
                    "content": text.result(),
                }
        final: Message = {"role": "assistant", "content": text.text(100, 1500)}
        if rng.random() < mix.reasoning:
            final["reasoning_content"] = text.text(100, 800)
        yield final


def chat_messages(n: int, *, seed: int = 0, mix: Mix = DEFAULT_MIX) -> Iterator[Message]:
    """Yield exactly ``n`` chat messages (OpenAI Chat Completions dicts), lazily."""
    turns = _turns(seed, mix)
    for _ in range(n):
        yield next(turns)


def _short_turns(seed: int) -> Iterator[Message]:
    """Short messages, defect-heavy: the workload on which per-message overhead shows.

    Mean message about 136 B of JSON; about 0.26 repairs per message: 30% of tool turns split
    into text + calls, every tool-only content ``""``, 5% of rounds miss a result, 3% carry an
    orphan result.
    """
    rng = random.Random(seed)
    text = _Text(rng)
    n = 0
    yield {"role": "system", "content": text.text(40, 120)}
    while True:
        yield {"role": "user", "content": text.text(30, 150)}
        for _round in range(rng.choices((0, 1, 2), weights=(1, 3, 2))[0]):
            n += 1
            call = {"id": f"c{n:x}", "type": "function", "function": {"name": rng.choice(_TOOLS), "arguments": '{"q":"x"}'}}
            if rng.random() < 0.30:
                yield {"role": "assistant", "content": text.text(20, 80)}
            yield {"role": "assistant", "content": "", "tool_calls": [call]}
            if rng.random() >= 0.05:
                yield {"role": "tool", "tool_call_id": call["id"], "content": text.text(40, 170)}
            if rng.random() < 0.03:
                yield {"role": "tool", "tool_call_id": f"gone{n:x}", "content": text.text(10, 40)}
        yield {"role": "assistant", "content": text.text(30, 160)}


def short_messages(n: int, *, seed: int = 0, mix: Mix = DEFAULT_MIX) -> Iterator[Message]:
    """Yield exactly ``n`` short, defect-heavy chat messages (``mix`` is not used)."""
    turns = _short_turns(seed)
    for _ in range(n):
        yield next(turns)


def clean_messages(n: int, *, seed: int = 0, mix: Mix = DEFAULT_MIX) -> Iterator[Message]:
    """Yield exactly ``n`` messages of the ``short`` workload as the core repairs it: a healthy
    history of short messages with nothing left to repair (``mix`` is not used).

    What the per-message machinery costs when there is no work: most stored sessions are
    healthy, and this is what repairing them on resume costs. Made lazily, by the core
    itself, from ``short``; ``tests/test_benchmarks.py`` checks that repairing it changes
    nothing."""
    from normalizer import repair

    count = 0
    skipping = False
    for message in repair(_short_turns(seed)):
        if count == n:
            return
        calls = message.get("tool_calls")
        if calls and n - count < 1 + len(calls):
            # Its results would be cut off (a repair: their stubs). Leave the turn's rounds
            # out, up to its text answer (which may follow a user or a result as well).
            skipping = True
        if skipping:
            if message["role"] != "assistant" or calls:
                continue
            skipping = False
        count += 1
        yield message


SAMPLES = Path(os.environ.get("CHATNORM_SHARED", Path(__file__).resolve().parents[2] / "shared")) / "samples"


def _sample_sessions() -> list[list[Message]]:
    """Every session sample under ``../shared/samples`` read into chat messages (unrepaired)."""
    from normalizer import read_conversations

    sessions = []
    for path in sorted(SAMPLES.rglob("*.json*")):
        try:
            for conv in read_conversations(path):
                msgs = list(conv.messages)
                if msgs:
                    sessions.append(msgs)
        except Exception:  # noqa: BLE001 - a sample this version cannot read is left out
            continue
    if not sessions:
        raise FileNotFoundError(f"no readable session samples under {SAMPLES}")
    return sessions


def real_messages(n: int, *, seed: int = 0, mix: Mix = DEFAULT_MIX) -> Iterator[Message]:
    """Yield exactly ``n`` messages of the real session samples, replicated end to end."""
    sessions = _sample_sessions()
    count = 0
    while True:
        for session in sessions:
            for msg in session:
                if count == n:
                    return
                count += 1
                yield msg


# name -> generator of exactly n messages
WORKLOADS = {"bench": chat_messages, "short": short_messages, "real": real_messages, "clean": clean_messages}


def responses_items(messages: Iterable[Message]) -> Iterator[Message]:
    """Render chat messages as OpenAI Responses input items, lazily.

    Assistant turns become ``reasoning`` + ``message`` (with an ``id``) + ``function_call``
    items; results become ``function_call_output``; system/user stay "easy" messages.
    """
    for i, msg in enumerate(messages):
        role = msg["role"]
        if role == "assistant":
            if msg.get("reasoning_content"):
                yield {
                    "type": "reasoning",
                    "id": f"rs_{i:010d}",
                    "summary": [{"type": "summary_text", "text": msg["reasoning_content"]}],
                }
            if msg.get("content"):
                yield {
                    "type": "message",
                    "id": f"msg_{i:010d}",
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": msg["content"], "annotations": []}],
                }
            for call in msg.get("tool_calls") or ():
                fn = call["function"]
                yield {
                    "type": "function_call",
                    "id": "fc_" + call["id"][5:],
                    "call_id": call["id"],
                    "name": fn["name"],
                    "arguments": fn["arguments"],
                    "status": "completed",
                }
        elif role == "tool":
            yield {
                "type": "function_call_output",
                "call_id": msg["tool_call_id"],
                "output": msg["content"],
            }
        else:
            yield {"role": role, "content": msg["content"]}


def responses_to_chat(items: Iterable[Message]) -> Iterator[Message]:
    """Naive item-by-item Responses -> chat mapping (the split a gateway produces).

    Used only when ``normalizer.formats`` has no Responses reader: every ``message`` item
    becomes its own assistant message, each run of ``function_call`` items one content-less
    assistant, reasoning goes onto the next assistant message. The core repairs the rest.
    """
    calls: list[Message] = []
    reasoning: str | None = None

    def flush() -> Iterator[Message]:
        nonlocal calls, reasoning
        if calls:
            msg: Message = {"role": "assistant", "content": None, "tool_calls": calls}
            if reasoning is not None:
                msg["reasoning_content"] = reasoning
                reasoning = None
            calls = []
            yield msg

    for item in items:
        kind = item.get("type", "message")
        if kind == "function_call":
            calls.append(
                {
                    "id": item["call_id"],
                    "type": "function",
                    "function": {"name": item["name"], "arguments": item["arguments"]},
                }
            )
            continue
        yield from flush()
        if kind == "reasoning":
            reasoning = "\n".join(s["text"] for s in item.get("summary", ()))
        elif kind == "function_call_output":
            yield {"role": "tool", "tool_call_id": item["call_id"], "content": item["output"]}
        else:
            content = item["content"]
            if isinstance(content, list):
                content = "\n".join(p.get("text", "") for p in content)
            msg = {"role": item["role"], "content": content}
            if reasoning is not None and item["role"] == "assistant":
                msg["reasoning_content"] = reasoning
                reasoning = None
            yield msg
    yield from flush()


def jsonl_bytes(records: Iterable[Message]) -> Iterator[bytes]:
    """One ``orjson`` line (with its newline) per record."""
    dumps = orjson.dumps
    opt = orjson.OPT_APPEND_NEWLINE
    for rec in records:
        yield dumps(rec, option=opt)


def write_jsonl(path: str | Path, records: Iterable[Message], *, chunk: int = 1 << 20) -> int:
    """Stream ``records`` to ``path`` as JSONL; return the number of bytes written."""
    total = 0
    buf: list[bytes] = []
    size = 0
    with open(path, "wb") as fh:
        for line in jsonl_bytes(records):
            buf.append(line)
            size += len(line)
            if size >= chunk:
                fh.write(b"".join(buf))
                total += size
                buf, size = [], 0
        fh.write(b"".join(buf))
        total += size
    return total


def main(argv: list[str] | None = None) -> int:
    """Write a workload file: ``python -m benchmarks.workload N OUT [--responses]``."""
    ap = argparse.ArgumentParser(prog="python -m benchmarks.workload", description=main.__doc__)
    ap.add_argument("n", type=int, help="number of chat messages")
    ap.add_argument("out", help="output JSONL path ('-' for stdout)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--mix", default="", help='defect rates, e.g. "split=0.2,orphan=0" or "none"')
    ap.add_argument("--responses", action="store_true", help="write Responses input items")
    args = ap.parse_args(argv)
    records: Iterable[Message] = chat_messages(args.n, seed=args.seed, mix=Mix.parse(args.mix))
    if args.responses:
        records = responses_items(records)
    if args.out == "-":
        out = sys.stdout.buffer
        for line in jsonl_bytes(records):
            out.write(line)
    else:
        write_jsonl(args.out, records)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
