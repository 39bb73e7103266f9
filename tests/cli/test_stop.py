"""``normalizer.batch.stop``: a signal that lands inside an import is given again shortly
after; once the run ends on a signal (``settle``), that re-delivery is called off and a
later signal only notes itself, so the interrupted line is said once."""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator

import pytest

from normalizer.batch import stop as _stop


@pytest.fixture
def handlers() -> Iterator[None]:
    """The test process's own handlers and stop state, put back afterwards."""
    saved = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    yield
    signal.signal(signal.SIGINT, saved[0])
    signal.signal(signal.SIGTERM, saved[1])
    _stop.STOP.clear()
    _stop.SIGNAL[0] = 0


def test_a_pending_re_delivery_is_called_off_and_later_signals_raise_nothing(handlers: None) -> None:
    _stop.install()
    _stop._again(signal.SIGINT)  # as the handler does for a signal inside an import
    assert len(_stop._PENDING) == 1
    _stop.settle()
    assert _stop._PENDING == []
    time.sleep(10 * _stop._AGAIN_SECONDS)  # past when it would have been given again: nothing raised
    signal.raise_signal(signal.SIGINT)  # a later ^C: noted, not raised
    signal.raise_signal(signal.SIGTERM)
    assert _stop.STOP.is_set() and _stop.SIGNAL[0] == signal.SIGINT


def test_before_settle_a_re_delivery_raises(handlers: None) -> None:
    _stop.install()
    with pytest.raises(_stop.Interrupted):
        _stop._again(signal.SIGINT)
        time.sleep(10 * _stop._AGAIN_SECONDS)
    _stop._PENDING.clear()
