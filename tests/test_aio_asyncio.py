"""The async adapter under plain asyncio, driven by pytest-asyncio (strict mode): what an
asyncio application sees, without anyio's test plugin in between."""

from __future__ import annotations

import asyncio

import pytest

import normalizer

from helpers import A, T, U

HISTORY = [U("q"), A("Let me look."), A(None, ["c1"]), U("hurry"), T("c1"), A("done")]


@pytest.mark.asyncio
async def test_async_generator_loader_under_asyncio():
    @normalizer.repairing
    async def load():
        for message in HISTORY:
            await asyncio.sleep(0)
            yield message

    stream = load()
    out = [m async for m in stream]
    assert out == list(normalizer.repair(HISTORY))
    assert stream.report.counts == {"merge_assistant": 1, "move_result": 1}


@pytest.mark.asyncio
async def test_task_cancellation_closes_the_source():
    closed = asyncio.Event()

    async def endless():
        try:
            while True:
                yield U("again")
                yield A("and again")
                await asyncio.sleep(0)
        finally:
            closed.set()

    async def consume():
        async with normalizer.arepair(endless()) as messages:
            async for _ in messages:
                pass

    task = asyncio.create_task(consume())
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert closed.is_set()
    assert not [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]


@pytest.mark.asyncio
async def test_wait_for_timeout_on_a_slow_source():
    async def slow():
        yield U("q")
        await asyncio.sleep(10)
        yield A("never")

    with pytest.raises(asyncio.TimeoutError):  # the builtin TimeoutError only from 3.11
        await asyncio.wait_for(_drain(normalizer.arepair(slow())), timeout=0.05)


async def _drain(stream):
    async with stream:
        return [m async for m in stream]
