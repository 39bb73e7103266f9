"""The synchronous driver (``normalizer._sync``): a loop around the core."""

from __future__ import annotations

from typing import Any

from normalizer import repair


class Source:
    """An endless iterator that knows whether it was closed."""

    def __init__(self) -> None:
        self.closed = False
        self.pulled = 0

    def __iter__(self) -> Source:
        return self

    def __next__(self) -> dict[str, Any]:
        self.pulled += 1
        return {"role": "user" if self.pulled % 2 else "assistant", "content": str(self.pulled)}

    def close(self) -> None:
        self.closed = True


def test_closing_before_iterating_closes_the_source() -> None:
    source = Source()
    stream = repair(source)
    stream.close()
    assert source.closed and source.pulled == 0


def test_it_pulls_only_what_the_consumer_asks_for_and_stopping_closes_the_source() -> None:
    source = Source()
    stream = repair(source)
    # The user is held with the turn after it (which may turn out empty), the turn until
    # the next user shows it is over: both come out when message 3 is read, not later.
    assert next(stream) == {"role": "user", "content": "1"}
    assert source.pulled == 3
    assert next(stream) == {"role": "assistant", "content": "2"}
    assert source.pulled == 3
    stream.close()
    assert source.closed and stream.report.messages_in == 3
