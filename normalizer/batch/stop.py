"""How the command stops on ^C or SIGTERM: the one stop flag, the exception that unwinds a
run, and the handler. A module with nothing else in it (it imports only ``signal`` and
``threading``), so that the handler is installed before the command's imports, which take a
few tenths of a second on a busy machine: a signal while the pipe (then ``cli._repair``) was half imported used
to be an ImportError traceback (exit 1), one during the imports before that a
KeyboardInterrupt traceback.
"""

from __future__ import annotations

import signal
import threading
from typing import Any

__all__ = ["STOP", "Interrupted", "DEFER", "SIGNAL", "on_signal", "install", "settle"]

#: Set by the signal handler; the pipe checks it at every flush point (workers too).
STOP = threading.Event()
#: True while the run waits on workers (``--jobs``, dask): the handler only sets ``STOP``, and
#: the waiting loop stops the workers and then raises :class:`Interrupted` itself.
DEFER = [False]
#: The signal that stopped the run (0: none yet).
SIGNAL = [0]


class Interrupted(BaseException):
    """^C or SIGTERM reached a worker (a BaseException, like KeyboardInterrupt, so no
    ``except Exception`` on the way swallows it)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def on_signal(signum: int, frame: Any) -> None:
    SIGNAL[0] = signum
    STOP.set()
    if DEFER[0]:
        return
    if _importing(frame):
        # Not raised inside an import: a module half executed is harmless, but an extension
        # module's initialisation (orjson's, pydantic_core's) that runs Python code and meets
        # an exception it does not expect crashes the interpreter (SIGSEGV, found at ~0.1 s).
        # The signal is given again shortly after, until it lands outside any import.
        _again(signum)
        return
    raise Interrupted(signum)


def _importing(frame: Any) -> bool:
    """Whether the interrupted code runs inside an import (importlib's frames on the stack)."""
    while frame is not None:
        if frame.f_code.co_filename.startswith("<frozen importlib"):
            return True
        frame = frame.f_back
    return False


#: How long a signal that landed inside an import waits to be given again.
_AGAIN_SECONDS = 0.01


#: The re-deliveries not yet made (:func:`_again`), so that :func:`settle` can call them off.
_PENDING: list[threading.Timer] = []


def _again(signum: int) -> None:
    import _thread

    timer = threading.Timer(_AGAIN_SECONDS, _thread.interrupt_main, (signum,))
    timer.daemon = True
    _PENDING.append(timer)
    timer.start()


def _note(signum: int, frame: Any) -> None:
    """The handler once the run is ending on a signal: it notes it, and raises nothing."""
    SIGNAL[0] = SIGNAL[0] or signum
    STOP.set()


def settle() -> None:
    """The run is ending on a signal and is about to say so: a re-delivery still pending
    (:func:`_again`) is called off, and a later signal only notes itself. Without this, a
    signal given again 10 ms after it landed in an import could arrive while the interrupted
    line was being said, and a second one followed it (found on the floors CI step)."""
    while _PENDING:
        _PENDING.pop().cancel()
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, _note)
        signal.signal(signal.SIGTERM, _note)


def install() -> None:
    """:func:`on_signal` for SIGINT and SIGTERM (from the main thread only: signal handlers
    cannot be set from another)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, on_signal)
        signal.signal(signal.SIGTERM, on_signal)


def interrupted_line(signum: int, left_behind: str) -> str:
    """The one line an interrupted run ends with (after a blank one)."""
    return f"\ninterrupted ({signal.Signals(signum or signal.SIGINT).name}): {left_behind}"
