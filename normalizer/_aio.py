"""The asynchronous adapter: a loop around the core, anyio-native (asyncio and trio).

The adapter is one async generator around the core that pulls one message from the source
only when the consumer asks for the next output, so it reads no further ahead than needed.
No task group or cancel scope straddles a ``yield`` (anyio's rule for async generators):
the only cancel scope shields the source's closing, in ``finally``.
"""

from __future__ import annotations

import functools
import inspect
from itertools import islice
import weakref
from time import monotonic
from types import AsyncGeneratorType
from collections.abc import AsyncGenerator, AsyncIterable, AsyncIterator, Awaitable, Callable, Iterable
from typing import Any, Protocol, TypeVar, overload

from typing_extensions import ParamSpec

from anyio import CancelScope
from typing_extensions import Unpack
from anyio.lowlevel import checkpoint

from ._core import Normalizer
from ._errors import NormalizerError, UsageError
from ._report import Report
from ._types import ChatMessage, ProfileArg, RepairOptions
from ._sync import Repaired, add_position_note

__all__ = ["AsyncRepaired", "arepair", "repairing"]

# Neither a sync source nor an async one that never suspends yields to the event loop by
# itself: the loop checkpoints once it has held the event loop for _CHECKPOINT_SECONDS, so
# a long history stays cancellable and lets other tasks run. Looked at (one clock read)
# every _CHECK_EVERY messages. By time, not by count: a checkpoint every 256 messages (~1 ms
# of the core's work) cost 3-6% of the whole run, measured; one every 5 ms costs ~1%, and
# the bound holds for large messages too (~5 ms plus 64 messages).
_CHECK_EVERY = 64
_CHECKPOINT_SECONDS = 0.005
_END: Any = object()  # no message pulled (a source may yield None)

F = TypeVar("F", bound=Callable[..., Any])
P = ParamSpec("P")


class AsyncRepaired(AsyncIterator[ChatMessage]):
    """An async iterator of repaired messages; ``.report`` says what was repaired.

    Use it as ``async with arepair(src) as messages: async for m in messages: ...`` (or
    call ``aclose()``) to close the source promptly when you stop early.

    The loop is one async generator (``_run``), and the first ``__aiter__`` hands out that
    generator itself: an ``async for`` then costs no Python call per message beyond the
    loop's own step -- what a bare async generator around ``feed`` costs. ``__anext__`` (and
    any later ``__aiter__``, which returns this object) is a plain method that refuses a
    second task while one is inside the loop (an async generator is a single consumer's),
    then hands out the generator's own awaitable.

    The generator, not this object, holds the claim on the normalizer (weakly): a consumer
    of the bare generator may drop this object at once, and the history is still the
    generator's until it ends. Nothing refers back to this object, so a stream dropped
    unfinished is collected at once (no cycle), and its claim with it.
    """

    def __init__(self, source: AsyncIterable[Any] | Iterable[Any], normalizer: Normalizer) -> None:
        normalizer._claim(self)  # one history per normalizer: refused before the source is touched
        self.normalizer = normalizer
        self._origin = source  # (asked for its source fields by a writer: keep_source_fields)
        # Taking the iterator starts nothing (an async generator's __aiter__ is itself).
        self._source: Any = source.__aiter__() if hasattr(source, "__aiter__") else iter(source)
        self._started: list[bool] = [False]  # shared with the loop, which must not hold self
        self._handed_out = False  # the first __aiter__ gave out the generator itself
        # The loop's weak reference to itself (filled once it exists): it releases its claim by it.
        me: list[weakref.ref[Any]] = []
        self._messages: AsyncGeneratorType[dict[str, Any], None] = _run(  # type: ignore[assignment]
            self._source, hasattr(self._source, "__anext__"), normalizer, me, self._started
        )
        me.append(weakref.ref(self._messages))
        normalizer._release(self)
        normalizer._claim(self._messages)

    @property
    def report(self) -> Report:
        return self.normalizer.report

    def __aiter__(self) -> AsyncIterator[ChatMessage]:
        if self._handed_out:
            # A second loop over this stream (maybe in another task): through __anext__,
            # which refuses it while the first one is inside.
            return self
        self._handed_out = True
        # The generator itself: an async for-loop then skips one Python call per message.
        # (Its items are the core's plain dicts, in the shape ChatMessage describes: see _types.py.)
        return self._messages  # type: ignore[return-value, unused-ignore]

    def __anext__(self) -> Awaitable[ChatMessage]:
        messages = self._messages
        if messages.ag_running:  # (True while it awaits the source: another task is inside)
            raise UsageError(
                "two tasks are iterating one arepair() stream at once; its messages are one "
                "history in order: iterate it from one task (and create one Normalizer per history)"
            )
        return messages.__anext__()  # type: ignore[return-value, unused-ignore]  # plain dicts: see _types.py

    def keep_source_fields(self, formats: Iterable[str] | None = None) -> None:
        """Ask the source, when it is a reader's stream (:func:`normalizer.aread_messages`),
        for the fields its reader kept aside for a writer of the source format (see
        ``MessageStream.keep_source_fields``): the repaired messages then carry them to that
        writer, which asks before writing (``awrite_responses(arepair(aread_messages(f)), ...)``).
        Chat output never has them."""
        keep = getattr(self._origin, "keep_source_fields", None)
        if keep is not None:
            keep(formats)

    async def aclose(self) -> None:
        """Stop early: closes the source (``aclose``/``close``) too."""
        await self._messages.aclose()
        if not self._started[0]:  # never started: its `finally` did not run
            self.normalizer._release(self._messages)
            await _close(self._source)

    async def __aenter__(self) -> AsyncRepaired:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


async def _run(
    source: Any, is_async: bool, normalizer: Normalizer, me: list[weakref.ref[Any]], started: list[bool]
) -> AsyncGenerator[dict[str, Any], None]:
    # Pulls exactly one message per step: never reads further ahead than the consumer asks.
    started[0] = True
    feed = normalizer.feed
    feeding = False  # an exception meanwhile is ours (or a reader's), not the source's
    try:
        try:
            if is_async:
                # An await on the source is a checkpoint only if the source suspends, and an
                # async generator over a list (or a driver's prefetched rows) never does: so
                # checkpoint here too, every so many messages, or such a source would hold
                # the event loop for the whole history and could not be cancelled. (A small
                # countdown: no int is allocated per message.)
                left = _CHECK_EVERY
                due = monotonic() + _CHECKPOINT_SECONDS
                async for message in source:
                    left -= 1
                    if not left:
                        left = _CHECK_EVERY
                        if monotonic() >= due:
                            await checkpoint()
                            due = monotonic() + _CHECKPOINT_SECONDS
                    feeding = True
                    out = feed(message)
                    feeding = False
                    for item in out:
                        yield item
            else:
                # A sync source never yields to the event loop by itself: look at the clock
                # every _CHECK_EVERY messages. islice counts them in C and pulls one message
                # at a time (it reads no further ahead): a Python counter per message would
                # cost a quarter of what the async loop adds to the sync one.
                due = monotonic() + _CHECKPOINT_SECONDS
                while True:
                    message = _END
                    for message in islice(source, _CHECK_EVERY):
                        feeding = True
                        out = feed(message)
                        feeding = False
                        for item in out:
                            yield item
                    if message is _END:  # nothing left to pull (an ended iterator stays ended)
                        break
                    if monotonic() >= due:
                        await checkpoint()
                        due = monotonic() + _CHECKPOINT_SECONDS
        except NormalizerError:
            raise  # ours (or a reader's): it already says where
        except Exception as exc:
            if not feeding:
                add_position_note(exc, normalizer._n_in)
            raise
        await checkpoint()
        for item in normalizer.close():
            yield item
    finally:
        # Dead when this generator is being finalized after it was dropped: its claim died
        # with the reference (a generator's weak references are cleared before it finalizes).
        this = me[0]()
        if this is not None:
            normalizer._release(this)
        await _close(source)


async def _close(source: Any) -> None:
    # Shielded: closing must finish even when we got here by being cancelled (trio would
    # otherwise cancel the source's aclose at its first checkpoint).
    with CancelScope(shield=True):
        aclose = getattr(source, "aclose", None)
        if aclose is not None:
            await aclose()
        else:
            close = getattr(source, "close", None)
            if close is not None:
                close()


def arepair(
    source: AsyncIterable[Any] | Iterable[Any],
    *,
    normalizer: Normalizer | None = None,
    profile: ProfileArg = "default",
    **options: Unpack[RepairOptions],
) -> AsyncRepaired:
    """Repair a history from an async (or sync) iterable; returns an async iterator.

    ``async for message in arepair(load_history(session_id)): ...``

    Args:
        source: an async iterable of messages, or any iterable.
        normalizer: a Normalizer to use; else one is made from ``profile`` and ``options``.
    """
    return AsyncRepaired(source, normalizer or Normalizer(profile, **options))


class _Decorator(Protocol):
    """What ``repairing(**options)`` returns: a decorator that keeps the loader's colour."""

    @overload
    def __call__(self, loader: Callable[P, AsyncIterator[Any]], /) -> Callable[P, AsyncRepaired]: ...
    @overload
    def __call__(self, loader: Callable[P, Awaitable[Iterable[Any]]], /) -> Callable[P, AsyncRepaired]: ...
    @overload
    def __call__(self, loader: Callable[P, Iterable[Any]], /) -> Callable[P, Repaired]: ...


@overload
def repairing(func: Callable[P, AsyncIterator[Any]], /) -> Callable[P, AsyncRepaired]: ...
@overload
def repairing(func: Callable[P, Awaitable[Iterable[Any]]], /) -> Callable[P, AsyncRepaired]: ...
@overload
def repairing(func: Callable[P, Iterable[Any]], /) -> Callable[P, Repaired]: ...
@overload
def repairing(*, profile: ProfileArg = "default", **options: Unpack[RepairOptions]) -> _Decorator: ...
def repairing(func: Callable[..., Any] | None = None, /, **options: Any) -> Any:
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
