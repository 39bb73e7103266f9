"""Results that finish in any order, handed out in the plan's order: the one rule that the
process pool (``jobs``) and the Dask runner (``dask_engine``) share, so the command can say,
report and forget each file as it comes (``cli._commands_repair``) with a bounded wait."""

from __future__ import annotations

from collections.abc import Iterator

from .results import FileResult

__all__ = ["InOrder", "REORDER_WINDOW"]

#: Finished files kept waiting for an earlier, slower one (their results, and with
#: ``--report`` their record spools), with ``--jobs`` and ``--engine dask``: past it, no new
#: file starts until the earliest is done. A few hundred bytes each; a slow file stalls the
#: others only when this many files are done behind it.
REORDER_WINDOW = 1024


class InOrder:
    """Results that finish in any order, handed out in the plan's order (:meth:`take`).
    ``room(i)``: job ``i`` may start without more than :data:`REORDER_WINDOW` results
    waiting."""

    __slots__ = ("_ready", "next")

    def __init__(self) -> None:
        self._ready: dict[int, FileResult | None] = {}
        self.next = 0  # the first job not handed out yet

    def room(self, i: int) -> bool:
        return i - self.next < REORDER_WINDOW

    def put(self, i: int, result: FileResult | None) -> None:
        """Job ``i`` is done (None: it was stopped, and has no result)."""
        self._ready[i] = result

    def has(self, i: int) -> bool:
        """Job ``i`` is done and waits to be handed out."""
        return i in self._ready

    def take(self) -> Iterator[FileResult]:
        """The results from :attr:`next` on that are done, in order."""
        ready = self._ready
        while self.next in ready:
            result = ready.pop(self.next)
            self.next += 1
            if result is not None:
                yield result
