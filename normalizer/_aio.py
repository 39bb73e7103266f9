"""The asynchronous adapter: a loop around the core, anyio-native (asyncio and trio).

No task group or cancel scope straddles a ``yield`` (anyio's rule for async generators):
the adapter is a plain loop that pulls one message from the source only when the
consumer asks for the next output, so it reads no further ahead than needed.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable
from typing import Any, TypeVar

from anyio import CancelScope
from anyio.lowlevel import checkpoint

from ._core import Normalizer
from ._errors import NormalizerError, UsageError
from ._report import Report
from ._sync import Repaired, add_position_note

__all__ = ["AsyncRepaired", "arepair", "repairing"]

# A sync source never yields to the event loop by itself; checkpoint every so many
# messages so a long history stays cancellable without paying ~1 us per message.
_CHECKPOINT_EVERY = 256

F = TypeVar("F", bound=Callable[..., Any])


class AsyncRepaired(AsyncIterator[dict[str, Any]]):
    """An async iterator of repaired messages; ``.report`` says what was repaired.

    Use it as ``async with arepair(src) as messages: async for m in messages: ...`` (or
    call ``aclose()``) to close the source promptly when you stop early.

    It is a plain class, not an async generator: each ``__anext__`` awaits the source at
    most once and nothing else, so the adapter adds one coroutine layer, not two (the
    difference is measurable at ~1 us per message).
    """

    def __init__(self, source: AsyncIterable[Any] | Iterable[Any], normalizer: Normalizer) -> None:
        normalizer._claim(self)  # one history per normalizer: a second stream over it is refused
        self.normalizer = normalizer
        self._async = hasattr(source, "__aiter__")
        # Taking the iterator starts nothing (an async generator's __aiter__ is itself).
        self._iterator: Any = source.__aiter__() if self._async else iter(source)  # type: ignore[union-attr,arg-type]
        self._pending: list[dict[str, Any]] = []  # outputs not handed out yet
        self._next = 0
        self._pulled = 0  # messages read from the source
        self._done = False
        self._running = False  # inside __anext__: a second task iterating meanwhile is refused

    @property
    def report(self) -> Report:
        return self.normalizer.report

    def __aiter__(self) -> AsyncRepaired:
        return self

    async def __anext__(self) -> dict[str, Any]:
        if self._running:
            raise UsageError(
                "two tasks are iterating one arepair() stream at once; its messages are one "
                "history in order: iterate it from one task (and create one Normalizer per history)"
            )
        self._running = True
        try:  # (the loop inline, not in a helper coroutine: see the class docstring)
            while True:
                if self._next < len(self._pending):
                    self._next += 1
                    return self._pending[self._next - 1]
                if self._done:
                    raise StopAsyncIteration
                # Pull exactly one message: never read further ahead than the consumer asks.
                # (Inlined rather than a helper coroutine: one await per message, not two.)
                try:
                    if self._async:
                        message = await self._iterator.__anext__()
                    else:
                        try:
                            message = next(self._iterator)
                        except StopIteration:
                            raise StopAsyncIteration from None
                        # A sync source never yields to the event loop by itself: checkpoint
                        # now and then so that a long history stays cancellable.
                        if not self._pulled % _CHECKPOINT_EVERY:
                            await checkpoint()
                    self._pulled += 1
                except StopAsyncIteration:
                    self._done = True
                    await self._close_source()
                    await checkpoint()
                    self._pending, self._next = self.normalizer.close(), 0
                    self.normalizer._release(self)
                    continue
                except BaseException as exc:
                    if isinstance(exc, Exception) and not isinstance(exc, NormalizerError):
                        add_position_note(exc, self._pulled)
                    await self._fail()
                    raise
                try:
                    self._pending, self._next = self.normalizer.feed(message), 0
                except BaseException:
                    await self._fail()
                    raise
        finally:
            self._running = False

    async def aclose(self) -> None:
        """Stop early: closes the source (``aclose``/``close``) too."""
        self._done = True
        self._pending, self._next = [], 0
        self.normalizer._release(self)
        await self._close_source()

    async def _fail(self) -> None:
        self._done = True
        self._pending, self._next = [], 0
        self.normalizer._release(self)
        await self._close_source()

    async def _close_source(self) -> None:
        iterator, self._iterator = self._iterator, None
        if iterator is None:
            return
        # Shielded: closing must finish even when we got here by being cancelled (trio
        # would otherwise cancel the source's aclose at its first checkpoint).
        with CancelScope(shield=True):
            aclose = getattr(iterator, "aclose", None)
            if aclose is not None:
                await aclose()
            else:
                close = getattr(iterator, "close", None)
                if close is not None:
                    close()

    async def __aenter__(self) -> AsyncRepaired:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


def arepair(
    source: AsyncIterable[Any] | Iterable[Any], *, normalizer: Normalizer | None = None, **options: Any
) -> AsyncRepaired:
    """Repair a history from an async (or sync) iterable; returns an async iterator.

    ``async for message in arepair(load_history(session_id)): ...``

    Args:
        source: an async iterable of messages, or any iterable.
        normalizer: a Normalizer to use; else one is made from ``options``.
    """
    return AsyncRepaired(source, normalizer or Normalizer(**options))


def repairing(func: F | None = None, /, **options: Any) -> Any:
    """Decorate a history loader so what it returns is already repaired.

    The result keeps the loader's colour: an async generator function or a coroutine
    function (``async def`` returning a list) gives an :class:`AsyncRepaired`; a generator
    function or a plain function returning an iterable gives a :class:`~normalizer.Repaired`.
    Use bare or with options::

        @repairing
        async def load(session_id): ...

        @repairing(profile="default", trailing_calls="keep")
        def load(session_id): ...
    """

    def decorate(loader: F) -> F:
        if inspect.isasyncgenfunction(loader):

            @functools.wraps(loader)
            def wrapper(*args: Any, **kwargs: Any) -> AsyncRepaired:
                return AsyncRepaired(loader(*args, **kwargs), Normalizer(**options))

        elif inspect.iscoroutinefunction(loader):

            async def awaited(args: tuple[Any, ...], kwargs: dict[str, Any]) -> AsyncIterator[Any]:
                for message in await loader(*args, **kwargs):
                    yield message

            @functools.wraps(loader)
            def wrapper(*args: Any, **kwargs: Any) -> AsyncRepaired:
                return AsyncRepaired(awaited(args, kwargs), Normalizer(**options))

        else:

            @functools.wraps(loader)
            def wrapper(*args: Any, **kwargs: Any) -> Repaired:
                return Repaired(loader(*args, **kwargs), Normalizer(**options))

        return wrapper  # type: ignore[return-value]

    if func is not None:
        return decorate(func)
    return decorate
