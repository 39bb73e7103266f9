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

from anyio.lowlevel import checkpoint

from ._core import Normalizer
from ._report import Report
from ._sync import Normalized, add_position_note

__all__ = ["ANormalized", "normalize", "repairing"]

# A sync source never yields to the event loop by itself; checkpoint every so many
# messages so a long history stays cancellable without paying ~1 us per message.
_CHECKPOINT_EVERY = 256

F = TypeVar("F", bound=Callable[..., Any])


class ANormalized(AsyncIterator[dict[str, Any]]):
    """An async iterator of repaired messages; ``.report`` says what was repaired.

    Use it as ``async with normalize(src) as messages: async for m in messages: ...`` (or
    call ``aclose()``) to close the source promptly when you stop early.
    """

    def __init__(self, source: AsyncIterable[Any] | Iterable[Any], normalizer: Normalizer) -> None:
        self.normalizer = normalizer
        self._messages = self._run(source)

    @property
    def report(self) -> Report:
        return self.normalizer.report

    def __aiter__(self) -> ANormalized:
        return self

    async def __anext__(self) -> dict[str, Any]:
        return await self._messages.__anext__()

    async def aclose(self) -> None:
        """Stop early: closes the source (``aclose``/``close``) too."""
        await self._messages.aclose()

    async def __aenter__(self) -> ANormalized:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def _run(self, source: AsyncIterable[Any] | Iterable[Any]) -> AsyncIterator[dict[str, Any]]:
        feed = self.normalizer.feed
        index = 0
        if hasattr(source, "__aiter__"):
            iterator = source.__aiter__()  # type: ignore[union-attr]
            try:
                while True:
                    try:
                        message = await iterator.__anext__()
                    except StopAsyncIteration:
                        break
                    except Exception as exc:
                        add_position_note(exc, index)
                        raise
                    index += 1
                    for out in feed(message):
                        yield out
            finally:
                aclose = getattr(iterator, "aclose", None)
                if aclose is not None:
                    await aclose()
        else:
            sync_iterator = iter(source)  # type: ignore[arg-type]
            try:
                while True:
                    try:
                        message = next(sync_iterator)
                    except StopIteration:
                        break
                    except Exception as exc:
                        add_position_note(exc, index)
                        raise
                    index += 1
                    if not index % _CHECKPOINT_EVERY:
                        await checkpoint()
                    for out in feed(message):
                        yield out
            finally:
                close = getattr(sync_iterator, "close", None)
                if close is not None:
                    close()
        await checkpoint()
        for out in self.normalizer.close():
            yield out


def normalize(
    source: AsyncIterable[Any] | Iterable[Any], *, normalizer: Normalizer | None = None, **options: Any
) -> ANormalized:
    """Repair a history from an async (or sync) iterable; returns an async iterator.

    ``async for message in normalize(load_history(session_id)): ...``

    Args:
        source: an async iterable of messages, or any iterable.
        normalizer: a Normalizer to use; else one is made from ``options``.
    """
    return ANormalized(source, normalizer or Normalizer(**options))


def repairing(func: F | None = None, /, **options: Any) -> Any:
    """Decorate a history loader so what it yields is already repaired.

    Works on async generator functions (the result is an :class:`ANormalized`) and on
    sync generator functions (a :class:`~normalizer.Normalized`). Use bare or with options::

        @repairing
        async def load(session_id): ...

        @repairing(profile="default", trailing_calls="keep")
        async def load(session_id): ...
    """

    def decorate(loader: F) -> F:
        if inspect.isasyncgenfunction(loader) or not inspect.isgeneratorfunction(loader):

            @functools.wraps(loader)
            def wrapper(*args: Any, **kwargs: Any) -> ANormalized:
                return ANormalized(loader(*args, **kwargs), Normalizer(**options))

        else:

            @functools.wraps(loader)
            def wrapper(*args: Any, **kwargs: Any) -> Normalized:  # type: ignore[misc]
                return Normalized(loader(*args, **kwargs), Normalizer(**options))

        return wrapper  # type: ignore[return-value]

    if func is not None:
        return decorate(func)
    return decorate
