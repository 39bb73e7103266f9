"""One in-process probe of ``benchmarks.instructions``, meant to run under valgrind.

``python -m benchmarks._instr_probe PROBE FILE --small S --big B --run small|big``

``FILE`` is a JSONL file of at least ``B`` messages, written beforehand. Before the measured
region, both runs (``small`` and ``big``) do exactly the same setup: they read the first ``B``
lines, keep each line's bytes and its ``orjson.loads`` dict, slice the first ``S`` of each,
run the probe once on the first 16 messages (a warm-up that loads whatever the probe loads
lazily: the event loop, a profile), validate one message that is not plain (which loads the
message models) and freeze the garbage collector's view of all that
(``gc.freeze``). The measured region then runs ``PROBE`` over the first ``S`` messages
(``--run small``) or all ``B`` (``--run big``). The runner counts the instructions of both
whole processes and divides their difference by ``B - S``: start-up, imports, setup, warm-up
and the end of the stream cancel out, and what is left is the cost of a message (of messages
``S+1..B`` of the workload, to be exact).

Probes:

``floor``                 ``orjson.dumps(orjson.loads(b))`` for every message's bytes
``core``                  ``normalizer.repair(dicts)`` drained (``deque(maxlen=0)``), defaults
``core_novalidate``       the same with ``validate=False`` (``validate`` = core - this)
``core_norecords``        the same with ``max_records=0`` (the report keeps counts only)
``profile:NAME``          the same with ``profile=NAME``
``bare_feed``             the least a message-at-a-time core can do, drained as ``core`` is: a
                          ``feed`` that validates as the core does (``is_plain``, else the
                          message models), looks up the role's event and holds one message
                          back, in a generator as ``repair``'s; no repair, no report. The
                          per-message machinery's floor, against which ``core`` on the
                          ``clean`` workload (nothing to repair) shows what the core's own
                          state costs
``sync_iter``             ``for m in repair(dicts): pass``: the consumer's Python loop
``async_asyncio``         ``async for m in arepair(dicts): pass`` under ``anyio.run`` (asyncio)
``async_trio``            the same on trio
``async_bare_asyncio``    a bare async generator around ``Normalizer.feed``/``close``, drained
                          with ``async for`` under ``anyio.run`` (asyncio): the adapter's floor
``async_bare_trio``       the same on trio

``--checkpoint-scale K`` multiplies the async adapter's time-based checkpoint interval
(``normalizer._aio._CHECKPOINT_SECONDS``, 5 ms) by ``K``: under valgrind the program runs
about 50 times slower, so the unscaled interval would checkpoint about 50 times as often
(per message) as a native run does. It touches the ``async_*`` adapter probes only.

It prints one JSON line: the probe, the run, the messages it measured and the outputs.
"""

from __future__ import annotations

import argparse
import gc
import sys
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import orjson

from normalizer import _messages
from normalizer._content import EVENT_OF_ROLE
from normalizer._plain import is_plain

Message = dict[str, Any]

FIXED_PROBES = (
    "floor",
    "core",
    "core_novalidate",
    "core_norecords",
    "bare_feed",
    "sync_iter",
    "async_asyncio",
    "async_trio",
    "async_bare_asyncio",
    "async_bare_trio",
)
PROFILE_PREFIX = "profile:"
WARM_UP = 16  # messages run before the measured region, in both runs


def is_probe(name: str) -> bool:
    """A name this script runs (``profile:NAME`` is checked by the library when it runs)."""
    return name in FIXED_PROBES or (name.startswith(PROFILE_PREFIX) and len(name) > len(PROFILE_PREFIX))


def load(path: str, big: int) -> tuple[list[bytes], list[Message]]:
    """The first ``big`` lines of ``path``: their bytes and their dicts."""
    blobs: list[bytes] = []
    with open(path, "rb") as fh:
        for line in fh:
            if len(blobs) == big:
                break
            if line.strip():
                blobs.append(line.rstrip(b"\n"))
    if len(blobs) < big:
        raise SystemExit(f"{path} has {len(blobs)} messages, fewer than --big {big}")
    return blobs, [orjson.loads(b) for b in blobs]


def _floor(blobs: list[bytes], dicts: list[Message]) -> int:
    loads, dumps = orjson.loads, orjson.dumps
    for b in blobs:
        dumps(loads(b))
    return len(blobs)


def _repair(options: dict[str, Any]) -> Callable[[list[bytes], list[Message]], int]:
    import normalizer

    repair = normalizer.repair

    def run(blobs: list[bytes], dicts: list[Message]) -> int:
        deque(repair(dicts, **options), maxlen=0)
        return len(dicts)

    return run


class _BareFeed:
    """``bare_feed``'s core: ``feed`` returns the message before this one (module docstring)."""

    __slots__ = ("_held", "event")

    def __init__(self) -> None:
        self._held: Message | None = None
        self.event = ""

    def feed(self, message: Any) -> list[Message]:
        # As Normalizer.feed: the fast check, else the validator of record (which raises
        # pydantic's ValidationError for what is not a chat message).
        if not (type(message) is dict and is_plain(message)):
            message = _messages.validate_python(message)
        self.event = EVENT_OF_ROLE[message["role"]]
        held, self._held = self._held, message
        return [] if held is None else [held]

    def close(self) -> list[Message]:
        held, self._held = self._held, None
        return [] if held is None else [held]


def _bare_stream(dicts: list[Message]) -> Iterator[Message]:
    feeder = _BareFeed()
    feed = feeder.feed
    for message in dicts:
        out = feed(message)
        if out:
            yield from out
    yield from feeder.close()


def _bare_feed(blobs: list[bytes], dicts: list[Message]) -> int:
    deque(_bare_stream(dicts), maxlen=0)
    return len(dicts)


def _sync_iter(blobs: list[bytes], dicts: list[Message]) -> int:
    import normalizer

    n = 0
    for _ in normalizer.repair(dicts):
        n += 1
    return n


async def bare(messages: list[Message], norm: Any) -> AsyncIterator[Message]:
    """The floor of the async adapter: an async generator around ``feed`` and ``close``."""
    feed = norm.feed
    for message in messages:
        for item in feed(message):
            yield item
    for item in norm.close():
        yield item


def _async(backend: str, adapter: bool) -> Callable[[list[bytes], list[Message]], int]:
    import anyio

    import normalizer

    def stream(dicts: list[Message]) -> AsyncIterator[Any]:
        return normalizer.arepair(dicts) if adapter else bare(dicts, normalizer.Normalizer())

    def run(blobs: list[bytes], dicts: list[Message]) -> int:
        async def consume() -> int:
            n = 0
            async for _ in stream(dicts):
                n += 1
            return n

        result: int = anyio.run(consume, backend=backend)
        return result

    return run


def prepare(probe: str, checkpoint_scale: float = 1.0) -> Callable[[list[bytes], list[Message]], int]:
    """The measured region of ``probe``: a function of the messages (bytes and dicts)."""
    if probe == "floor":
        return _floor
    import normalizer

    if probe.startswith("async_"):
        from normalizer import _aio

        _aio._CHECKPOINT_SECONDS *= checkpoint_scale
        backend = probe.rsplit("_", 1)[1]
        return _async(backend, adapter=not probe.startswith("async_bare_"))
    if probe == "sync_iter":
        return _sync_iter
    if probe == "bare_feed":
        return _bare_feed
    presets: dict[str, dict[str, Any]] = {
        "core": {},
        "core_novalidate": {"validate": False},
        "core_norecords": {"max_records": 0},
    }
    if probe.startswith(PROFILE_PREFIX):
        name = probe[len(PROFILE_PREFIX) :]
        if name not in normalizer.PROFILES:
            raise SystemExit(f"unknown profile {name!r}; built-in: {', '.join(normalizer.PROFILES)}")
        return _repair({"profile": name})
    if probe not in presets:
        raise SystemExit(f"unknown probe {probe!r}")
    return _repair(presets[probe])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks._instr_probe", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("probe")
    ap.add_argument("file", help="JSONL of at least --big messages")
    ap.add_argument("--small", type=int, required=True)
    ap.add_argument("--big", type=int, required=True)
    ap.add_argument("--run", choices=("small", "big"), required=True)
    ap.add_argument("--checkpoint-scale", type=float, default=1.0)
    ap.add_argument("--expect-compiled", action="store_true",
                    help="fail unless the normalizer imported is the compiled build (its core a .so)")
    args = ap.parse_args(argv)
    if not is_probe(args.probe):
        ap.error(f"unknown probe {args.probe!r}")
    if not 0 <= args.small < args.big:
        ap.error("need 0 <= --small < --big")
    if args.expect_compiled:
        import normalizer._core._normalizer

        if not normalizer._core._normalizer.__file__.endswith((".so", ".pyd")):
            print(f"_instr_probe: {normalizer._core._normalizer.__file__} is not the compiled build", file=sys.stderr)
            return 1
    # The same setup in both runs: the runs differ only in the messages they measure.
    blobs, dicts = load(args.file, args.big)
    small_blobs, small_dicts = blobs[: args.small], dicts[: args.small]
    if args.run == "small":
        blobs, dicts = small_blobs, small_dicts
    run = prepare(args.probe, args.checkpoint_scale)
    # A warm-up on a few messages of their own: every module the probe loads lazily (the
    # event loop's, a profile's) is loaded, and frozen below with the setup, before the
    # measured region. Otherwise a full collection in one run but not the other walks them.
    warm = blobs[:WARM_UP]
    run(warm, [orjson.loads(b) for b in warm])
    # The same for the message models, which the core loads at the first message that is
    # not plain: the real sessions' first is their 462nd, inside the measured region, where
    # the models (and the schema machinery pydantic loads to build them) stayed unfrozen and
    # every full collection of the bigger run walked them: 800 instructions a message.
    _messages.validate_python({"role": "user", "content": [{"type": "text", "text": "warm-up"}]})
    gc.collect()
    gc.freeze()  # the setup's objects are not the probe's to scan
    # ---- measured region (by difference between the two runs) ----
    out = run(blobs, dicts)
    # ----
    gc.unfreeze()  # (for a caller in the same process)
    sys.stdout.buffer.write(orjson.dumps({"probe": args.probe, "run": args.run, "messages": len(dicts), "out": out}) + b"\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
