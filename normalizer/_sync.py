"""The synchronous adapter: a loop around the core."""

from __future__ import annotations

import inspect
from collections.abc import Generator, Iterable, Iterator
from typing import Any

from typing_extensions import Unpack

from ._core import Normalizer
from ._errors import NormalizerError
from ._report import Report
from ._types import ChatMessage, ProfileArg, RepairOptions

__all__ = ["Repaired", "repair", "add_position_note"]


class Repaired(Iterator[ChatMessage]):
    """An iterator of repaired messages; ``.report`` says what was repaired.

    The report is complete once the iterator is exhausted.
    """

    def __init__(self, source: Iterable[Any], normalizer: Normalizer) -> None:
        normalizer._claim(self)  # one history per normalizer: a second stream over it is refused
        self.normalizer = normalizer
        self._origin = source  # (asked for its source fields by a writer: keep_source_fields)
        self._source = iter(source)
        self._messages = self._run(self._source)

    @property
    def report(self) -> Report:
        return self.normalizer.report

    def __iter__(self) -> Iterator[ChatMessage]:
        # The generator itself: a for-loop then skips one Python call per message. (Its items
        # are the core's plain dicts, in the shape ChatMessage describes: see _types.py.)
        return self._messages  # type: ignore[return-value, unused-ignore]

    def __next__(self) -> ChatMessage:
        return next(self._messages)  # type: ignore[return-value, unused-ignore]

    def keep_source_fields(self, formats: Iterable[str] | None = None) -> None:
        """Ask the source, when it is a reader's stream (:func:`normalizer.read_messages`),
        for the fields its reader kept aside for a writer of the source format (see
        ``MessageStream.keep_source_fields``): the repaired messages then carry them to that
        writer, which asks before writing (``write_responses(repair(read_messages(f)), ...)``).
        Chat output never has them."""
        keep = getattr(self._origin, "keep_source_fields", None)
        if keep is not None:
            keep(formats)

    def close(self) -> None:
        """Stop early: closes the source if it can be closed."""
        if inspect.getgeneratorstate(self._messages) == inspect.GEN_CREATED:
            # Never started: its `finally` would not run, so close the source here.
            close = getattr(self._source, "close", None)
            if close is not None:
                close()
            self.normalizer._release(self)
        self._messages.close()

    def _run(self, source: Iterator[Any]) -> Generator[dict[str, Any], None, None]:
        normalizer = self.normalizer
        feed = normalizer.feed
        feeding = False  # an exception meanwhile is ours (or a reader's), not the source's
        try:
            try:
                # A plain for-loop: a try/next() per message would cost ~5% of the whole run.
                for message in source:
                    feeding = True
                    out = feed(message)
                    feeding = False
                    if out:
                        yield from out
            except NormalizerError:
                raise  # ours (or a reader's): it already says where
            except Exception as exc:
                # Raised by the source, unless it came out of feed() (a bug of ours): say
                # where in the history the source failed, keeping the exception's type.
                if not feeding:
                    add_position_note(exc, normalizer._n_in)
                raise
            yield from normalizer.close()
        finally:
            normalizer._release(self)
            close = getattr(source, "close", None)
            if close is not None:
                close()


def repair(
    source: Iterable[Any],
    *,
    normalizer: Normalizer | None = None,
    profile: ProfileArg = "default",
    **options: Unpack[RepairOptions],
) -> Repaired:
    """Repair a history given as any iterable of messages; returns an iterator.

    >>> out = repair([{"role": "assistant", "content": "A"},
    ...                       {"role": "assistant", "content": "B"}])
    >>> list(out), out.report.counts
    ([{'role': 'assistant', 'content': 'A\\nB'}], {'merge_assistant': 1})

    Args:
        source: messages (dicts, mappings, or pydantic models with ``model_dump``).
        normalizer: a Normalizer to use (its report is ``.report``); else one is made
            from ``profile`` and ``options`` (see :class:`normalizer.Options`).
    """
    return Repaired(source, normalizer or Normalizer(profile, **options))


def add_position_note(exc: BaseException, index: int) -> None:
    """Say where in the history the source failed, without changing the exception's type."""
    note = f"raised by the message source while reading message {index} (normalizer)"
    if hasattr(exc, "add_note"):
        exc.add_note(note)
    else:  # Python 3.10
        exc.__notes__ = [*getattr(exc, "__notes__", []), note]  # type: ignore[attr-defined]
