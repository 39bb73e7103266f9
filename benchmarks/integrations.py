"""What each framework adapter (``normalizer.integrations``) costs over the bare core.

``python -m benchmarks.integrations [--messages 1000] [--repeats 7] [--json OUT.json]``

One seeded agent history (``workload.chat_messages``, the default defect mix: split turns,
``""`` next to calls, orphan results, missing results) is rendered once, untimed, in each
framework's own form. Then each row is timed on it:

* ``core``: ``list(normalizer.repair(chat))``, the bare core on chat messages;
* ``litellm``: ``repair_request`` on a request holding the chat messages (the callback's work);
* ``litellm anthropic``: the same for ``/v1/messages`` (Anthropic blocks -> chat -> core -> blocks);
* ``openai-agents``: ``repair_items`` on Responses items (items -> chat -> core -> items);
* ``langchain``: ``repair_messages`` on ``BaseMessage`` objects (both converters and the core);
* ``pydantic-ai``: ``repair_history`` on ``ModelMessage`` objects (parts -> chat -> core -> parts).

Every adapter repairs for the ``default`` profile, as the core row does. Rows run interleaved
(round-robin) ``--repeats`` times; the table gives each row's median, in µs per history, and
its ratio to the core's median of the same run. A framework that is not installed is a row
marked skipped. The machines this runs on are shared and noisy: compare ratios, not runs.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

# LiteLLM fetches its model price map from the network at import unless told not to.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import normalizer  # noqa: E402
from normalizer.formats import to_anthropic  # noqa: E402

from .workload import chat_messages, responses_items  # noqa: E402

Message = dict[str, Any]
Thunk = Callable[[], object]

COLUMNS = ("adapter", "µs/history", "× core", "note")


@dataclass
class Row:
    """One timed adapter: its thunk (None when skipped), its times, and what it does."""

    name: str
    run: Thunk | None
    note: str
    times: list[float] = field(default_factory=list)

    @property
    def median_us(self) -> float | None:
        return statistics.median(self.times) * 1e6 if self.times else None


def history(n: int, seed: int) -> list[Message]:
    """The chat history every row starts from: ``n`` messages with the default defects."""
    return list(chat_messages(n, seed=seed))


def rows(chat: list[Message]) -> list[Row]:
    """Every row, its input rendered in its framework's form now (untimed)."""
    out = [Row("core", lambda: list(normalizer.repair(chat)), "normalizer.repair on chat dicts")]
    for build in (_litellm, _litellm_anthropic, _agents, _langchain, _pydantic_ai):
        out.append(build(chat))
    return out


def _skipped(name: str, module: str) -> Row:
    return Row(name, None, f"skipped ({module} not installed)")


def _litellm(chat: list[Message]) -> Row:
    try:
        from normalizer.integrations.litellm import repair_request
    except ImportError:
        return _skipped("litellm", "litellm")
    request = {"model": "my-model", "messages": chat}
    return Row("litellm", lambda: repair_request(request, profile="default"), "repair_request, chat messages")


def _litellm_anthropic(chat: list[Message]) -> Row:
    try:
        from normalizer.integrations.litellm import repair_request
    except ImportError:
        return _skipped("litellm anthropic", "litellm")
    # Anthropic messages of the same history (the core makes them valid first: the writer
    # wants results paired with calls).
    request = {"model": "my-model", **to_anthropic(normalizer.repair(chat, profile="anthropic"))}
    return Row(
        "litellm anthropic",
        lambda: repair_request(request, profile="default", call_type="anthropic_messages"),
        "repair_request, /v1/messages blocks -> chat -> blocks",
    )


def _agents(chat: list[Message]) -> Row:
    try:
        from normalizer.integrations.openai_agents import repair_items
    except ImportError:
        return _skipped("openai-agents", "agents")
    items: list[Any] = list(responses_items(chat))
    return Row("openai-agents", lambda: repair_items(items, "default"), "repair_items, Responses items -> chat -> items")


def _langchain(chat: list[Message]) -> Row:
    try:
        from langchain_core.messages.utils import convert_to_messages

        from normalizer.integrations.langchain import repair_messages
    except ImportError:
        return _skipped("langchain", "langchain")
    messages = convert_to_messages(chat)
    return Row("langchain", lambda: repair_messages(messages, "default"), "repair_messages, BaseMessage -> chat -> BaseMessage")


def _pydantic_ai(chat: list[Message]) -> Row:
    try:
        from normalizer.integrations.pydantic_ai import ChatHistory, from_chat, repair_history
    except ImportError:
        return _skipped("pydantic-ai", "pydantic_ai")
    # The adapter's own way back, with no originals, builds ModelMessages from chat messages.
    messages = from_chat(chat, ChatHistory(messages=[], originals=[], forms={}))
    return Row("pydantic-ai", lambda: repair_history(messages, "default"), "repair_history, ModelMessage parts -> chat -> parts")


def measure(table: list[Row], repeats: int) -> None:
    """Each row ``repeats`` times, round-robin and rotated each round (noise hits all rows)."""
    live = [row for row in table if row.run is not None]
    for round_number in range(repeats):
        shift = round_number % len(live)
        for row in live[shift:] + live[:shift]:
            assert row.run is not None
            gc.collect()
            start = time.perf_counter()
            row.run()
            row.times.append(time.perf_counter() - start)


def render(table: list[Row], messages: int, repeats: int) -> str:
    core = table[0].median_us
    lines = [
        f"history: {messages} messages (workload.chat_messages, default defect mix); median of {repeats} rounds",
        "| " + " | ".join(COLUMNS) + " |",
        "|---|---:|---:|---|",
    ]
    for row in table:
        us = row.median_us
        if us is None or core is None:
            lines.append(f"| {row.name} | - | - | {row.note} |")
        else:
            lines.append(f"| {row.name} | {us:,.0f} | {us / core:.2f} | {row.note} |")
    return "\n".join(lines)


def as_json(table: list[Row], messages: int, repeats: int) -> dict[str, Any]:
    core = table[0].median_us
    return {
        "messages": messages,
        "repeats": repeats,
        "rows": [
            {
                "adapter": row.name,
                "status": "ok" if row.run is not None else row.note,
                "us_per_history": row.median_us,
                "ratio_to_core": (row.median_us / core) if row.median_us is not None and core else None,
                "times_s": row.times,
                "note": row.note,
            }
            for row in table
        ],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.integrations", description=__doc__.split("\n")[0])
    parser.add_argument("--messages", type=int, default=1000, help="messages in the history (default 1000)")
    parser.add_argument("--repeats", type=int, default=7, help="rounds per row; the median is reported (default 7)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", metavar="OUT", help="also write every row and round as JSON")
    args = parser.parse_args(argv)
    if args.messages < 1 or args.repeats < 1:
        parser.error("--messages and --repeats must be at least 1")
    table = rows(history(args.messages, args.seed))
    measure(table, args.repeats)
    print(render(table, args.messages, args.repeats))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(as_json(table, args.messages, args.repeats), out, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
