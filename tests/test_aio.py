"""The async adapter and the loader decorator, on asyncio and trio."""

from __future__ import annotations

import gc
import tracemalloc

import anyio
import pytest

import normalizer
from normalizer import InvalidMessage, Normalizer

from helpers import A, T, U

pytestmark = pytest.mark.anyio

HISTORY = [U("q"), A("Let me look."), A(None, ["c1"]), U("hurry"), T("c1"), A("done")]
EXPECTED = list(normalizer.repair(HISTORY))


class CountingSource:
    """An async iterator that records how far it was read and whether it was closed."""

    def __init__(self, messages, fail_at: int | None = None) -> None:
        self.messages = list(messages)
        self.pulled = 0
        self.closed = False
        self.fail_at = fail_at

    def __aiter__(self):
        return self

    async def __anext__(self):
        await anyio.lowlevel.checkpoint()
        if self.pulled == self.fail_at:
            raise ConnectionError("database went away")
        if self.pulled >= len(self.messages):
            raise StopAsyncIteration
        self.pulled += 1
        return self.messages[self.pulled - 1]

    async def aclose(self) -> None:
        self.closed = True


async def test_async_adapter_matches_sync():
    assert [m async for m in normalizer.arepair(CountingSource(HISTORY))] == EXPECTED


async def test_accepts_a_sync_iterable():
    assert [m async for m in normalizer.arepair(iter(HISTORY))] == EXPECTED


async def test_report_is_reachable():
    stream = normalizer.arepair(CountingSource(HISTORY))
    _ = [m async for m in stream]
    assert stream.report.counts == {"merge_assistant": 1, "move_result": 1}


async def test_reads_no_further_ahead_than_the_consumer_asks():
    source = CountingSource([U(str(i)) if i % 2 else A(str(i)) for i in range(100)])
    stream = normalizer.arepair(source)
    first = await stream.__anext__()
    # A("0") is held as a turn until U("1") shows that it is over.
    assert first == A("0")
    assert source.pulled <= 3
    await stream.aclose()


async def test_stopping_early_closes_the_source():
    source = CountingSource([U(str(i)) if i % 2 else A(str(i)) for i in range(100)])
    async with normalizer.arepair(source) as stream:
        async for _ in stream:
            break
    assert source.closed
    assert source.pulled < 100


async def test_cancellation_closes_the_source_and_leaves_no_task():
    class Slow(CountingSource):
        async def __anext__(self):
            if self.pulled >= 3:
                await anyio.sleep_forever()
            return await super().__anext__()

    source = Slow([A(str(i)) if i % 2 else U(str(i)) for i in range(10)])
    stream = normalizer.arepair(source)
    with anyio.move_on_after(0.05):
        async for _ in stream:
            pass
    await stream.aclose()
    assert source.closed


async def test_source_exception_reaches_the_consumer_with_its_position():
    source = CountingSource(HISTORY, fail_at=3)
    with pytest.raises(ConnectionError) as info:
        async for _ in normalizer.arepair(source):
            pass
    assert "message 3" in "".join(getattr(info.value, "__notes__", []))
    assert source.closed


async def test_invalid_message_error_names_its_index():
    with pytest.raises(InvalidMessage, match="message 1"):
        async for _ in normalizer.arepair(CountingSource([U(), {"role": "user", "content": 3}])):
            pass


async def test_decorator_repairs_an_async_loader():
    @normalizer.repairing
    async def load(session_id: str):
        for message in HISTORY:
            await anyio.lowlevel.checkpoint()
            yield message

    stream = load("s1")
    assert [m async for m in stream] == EXPECTED
    assert stream.report.counts["merge_assistant"] == 1


async def test_decorator_takes_options():
    @normalizer.repairing(trailing_calls="drop")
    async def load():
        yield U("q")
        yield A("x", ["c1"])

    assert [m async for m in load()] == [U("q"), A("x")]


def test_decorator_on_a_sync_loader():
    @normalizer.repairing
    def load():
        yield A("a")
        yield A("b")

    stream = load()
    assert list(stream) == [A("a\nb")]
    assert stream.report.counts == {"merge_assistant": 1}


async def test_bring_your_own_normalizer():
    core = Normalizer(stub_text="(lost)")
    out = [m async for m in normalizer.arepair(CountingSource([A(None, ["c1"])]), normalizer=core)]
    assert out[-1] == T("c1", "(lost)")
    assert core.report.counts == {"stub_missing_result": 1}


def _history(n: int):
    """A generated history with defects, as a generator (never materialised)."""
    for i in range(n // 6):
        c = f"call_{i % 50}"
        yield U(f"question {i}")
        yield A("Let me check.")
        yield A("", [c])
        yield U("interjection") if i % 7 == 0 else T(c, "x" * 200)
        yield T(c, "x" * 200) if i % 7 == 0 else T("orphan", "stray")
        yield A(f"answer {i}")


async def _peak(n: int) -> int:
    async def source():
        for message in _history(n):
            yield message

    gc.collect()
    tracemalloc.start()
    try:
        count = 0
        async for _ in normalizer.arepair(source(), max_records=100):
            count += 1
        assert count > n // 2
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_memory_does_not_grow_with_history_length():
    small = await _peak(20_000)
    large = await _peak(200_000)
    # Ten times the messages, about the same peak: nothing is kept per message.
    assert large < small * 1.5 + 64 * 1024, (small, large)


# ---------------------------------------------------------------- one Normalizer per history


class Gated(CountingSource):
    """A source that stops before message ``at`` until ``gate`` is set."""

    def __init__(self, messages, at: int) -> None:
        super().__init__(messages)
        self.at = at
        self.gate = anyio.Event()
        self.waiting = anyio.Event()

    async def __anext__(self):
        if self.pulled == self.at and not self.gate.is_set():
            self.waiting.set()
            await self.gate.wait()
        return await super().__anext__()


async def test_a_second_task_sharing_the_normalizer_is_refused():
    # The attack: two tasks, one Normalizer -- asyncio gave one task nothing, trio
    # interleaved the two histories. Now the second arepair() is refused up front.
    shared = Normalizer()
    first = Gated(HISTORY, at=2)
    got: list = []
    refused: list[str] = []

    async def one():
        got.extend([m async for m in normalizer.arepair(first, normalizer=shared)])

    async def two():
        await first.waiting.wait()  # the first history is half read
        with pytest.raises(normalizer.UsageError, match="create one Normalizer per history") as info:
            normalizer.arepair(CountingSource([U("other"), A("history")]), normalizer=shared)
        refused.append(str(info.value))
        first.gate.set()

    with anyio.fail_after(10):  # a regression fails, it does not hang
        async with anyio.create_task_group() as tg:
            tg.start_soon(one)
            tg.start_soon(two)
    assert len(refused) == 1
    assert got == EXPECTED  # the first history, whole and alone


async def test_two_tasks_iterating_one_stream_are_refused():
    source = Gated(HISTORY, at=1)
    stream = normalizer.arepair(source)
    refused: list[str] = []

    async def second():
        await source.waiting.wait()  # the first task is inside __anext__, awaiting the source
        with pytest.raises(normalizer.UsageError, match="one Normalizer per history") as info:
            await stream.__anext__()
        refused.append(str(info.value))
        source.gate.set()

    with anyio.fail_after(10):  # a regression fails, it does not hang
        async with anyio.create_task_group() as tg:
            tg.start_soon(second)
            out = [m async for m in stream]
    assert len(refused) == 1
    assert out == EXPECTED


@pytest.mark.parametrize("end", ["exhausted", "aclose", "abandoned"])
async def test_the_normalizer_is_free_again_when_its_stream_ends(end):
    shared = Normalizer()
    stream = normalizer.arepair(CountingSource([U("a")]), normalizer=shared)
    if end == "exhausted":
        assert [m async for m in stream] == [U("a")]
    elif end == "aclose":
        await stream.aclose()
    else:
        del stream  # never iterated nor closed: its claim is weak and goes with it
    assert shared._owner is None or shared._owner() is None
    normalizer.arepair(CountingSource([]), normalizer=shared)  # not refused


async def test_two_loops_over_one_stream_in_two_tasks_are_refused():
    # The first `async for` runs the bare loop; a second one (here in another task) goes
    # through the checked __anext__, and is refused while the first is inside.
    source = Gated(HISTORY, at=1)
    stream = normalizer.arepair(source)
    refused: list[str] = []

    async def second():
        await source.waiting.wait()
        with pytest.raises(normalizer.UsageError, match="one Normalizer per history"):
            async for _ in stream:
                pass
        refused.append("yes")
        source.gate.set()

    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(second)
            out = [m async for m in stream]
    assert refused == ["yes"]
    assert out == EXPECTED


@pytest.mark.parametrize("kind", ["list", "async generator that never suspends"])
async def test_a_long_history_lets_other_tasks_run(kind, monkeypatch):
    # Neither a list nor an async generator that never awaits anything yields to the event
    # loop by itself: the adapter checkpoints once it has held the loop for a few ms, so
    # another task runs (and a cancellation gets in) before a long history ends. The few ms
    # are the adapter's tuning, set to 0 here: the compiled build repairs these 20,000
    # messages in about 5 ms, so at the default the run could end before the first checkpoint
    # is due (it did, one run in five).
    from normalizer import _aio

    monkeypatch.setattr(_aio, "_CHECKPOINT_SECONDS", 0.0)
    n = 20_000
    messages = [U(str(i)) if i % 2 == 0 else A(str(i)) for i in range(n)]
    pulled = [0]

    async def never_suspends():
        for message in messages:
            pulled[0] += 1
            yield message

    def counted():
        for message in messages:
            pulled[0] += 1
            yield message

    ran_at: list[int] = []

    async def other():
        ran_at.append(pulled[0])

    source = never_suspends() if kind != "list" else counted()
    async with anyio.create_task_group() as tg:
        tg.start_soon(other)
        count = 0
        async for _ in normalizer.arepair(source):
            count += 1
    assert count == n
    assert ran_at and ran_at[0] < n, ran_at
