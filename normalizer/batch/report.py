"""The ``--report`` document, merged from many files' results: counts summed, each file's
records streamed from its spool file (one open at a time, never all in memory). The one
merger every way of running uses: one job, ``--jobs``, ``--engine dask``, and
``normalizer.distributed`` (which re-exports it)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from typing import IO

import orjson

from .results import FileResult

__all__ = ["total_counts", "report_chunks", "Totals", "ReportStream"]


class Totals:
    """Running sums over results as they come: the summary line and the report's tail.
    The command keeps these, not the results (millions of files: ``cli._commands_repair``)."""

    __slots__ = ("files", "failed", "messages_in", "messages_out", "counts")

    def __init__(self) -> None:
        self.files = 0
        self.failed = 0
        self.messages_in = 0
        self.messages_out = 0
        self.counts: dict[str, int] = {}

    def add(self, r: FileResult) -> None:
        self.files += 1
        self.failed += r.error is not None
        self.messages_in += r.messages_in
        self.messages_out += r.messages_out
        counts = self.counts
        for k, v in r.counts.items():
            counts[k] = counts.get(k, 0) + v

    def sorted_counts(self) -> dict[str, int]:
        return dict(sorted(self.counts.items()))


def total_counts(results: Iterable[FileResult]) -> dict[str, int]:
    """Every result's counts, summed (sorted by kind)."""
    totals = Totals()
    for r in results:
        totals.add(r)
    return totals.sorted_counts()


def report_chunks(results: Iterable[FileResult], seconds: float, *, remove_spools: bool = True) -> Iterator[bytes]:
    """The report document (``chatnorm repair --report``), in pieces: per file its counts
    and records, then the totals. Records are streamed from each result's spool file, one
    file open at a time, and never all in memory; each spool is removed once copied
    (``remove_spools``)."""
    totals = Totals()
    failed: list[str] = []
    yield _HEAD
    for r in results:
        totals.add(r)
        if r.error is not None:
            failed.append(r.input)
        yield from _file_chunks(r, totals.files == 1, remove_spools)
    yield from _tail(totals, [orjson.dumps(name) for name in failed], seconds)


class ReportStream:
    """The report document written as the results come, in the plan's order: each file's
    counts and records (its spool removed once copied), then the totals, which the caller
    keeps (:class:`Totals`). The names of failed files, which the tail lists, go to a file
    in the spool folder (``failed_path``) meanwhile, so nothing here grows with the number
    of files. The same bytes as :func:`report_chunks` over the same results."""

    def __init__(self, write: Callable[[bytes], object], failed_path: str) -> None:
        self._write = write
        self._failed_path = failed_path
        self._failed: IO[bytes] | None = None  # opened at the first failed file
        self._first = True
        write(_HEAD)

    def add(self, r: FileResult) -> None:
        if r.error is not None:
            if self._failed is None:
                self._failed = open(self._failed_path, "wb")  # noqa: SIM115 - closed by finish/discard
            self._failed.write(orjson.dumps(r.input, option=orjson.OPT_APPEND_NEWLINE))
        self._write_all(_file_chunks(r, self._first, True))
        self._first = False

    def finish(self, totals: Totals, seconds: float) -> None:
        """Write the totals (the document is then complete)."""
        if self._failed is None:
            self._write_all(_tail(totals, (), seconds))
            return
        self._failed.close()
        self._failed = None
        with open(self._failed_path, "rb") as names:
            self._write_all(_tail(totals, (line.rstrip(b"\n") for line in names), seconds))
        os.unlink(self._failed_path)

    def _write_all(self, chunks: Iterable[bytes]) -> None:
        for chunk in chunks:
            self._write(chunk)

    def discard(self) -> None:
        """Let go of the failed names' file (the run did not finish)."""
        if self._failed is not None:
            self._failed.close()
            self._failed = None


_HEAD = b'{"files":['


def _file_chunks(r: FileResult, first: bool, remove_spool: bool) -> Iterator[bytes]:
    head = {
        "input": r.input, "output": r.output, "format": r.format, "error": r.error,
        "conversations": r.conversations, "messages_in": r.messages_in,
        "messages_out": r.messages_out, "counts": dict(sorted(r.counts.items())),
        "seconds": round(r.seconds, 6),
    }
    yield (b"\n" if first else b",\n") + orjson.dumps(head)[:-1] + b',"records":['
    if r.spool is not None:
        with open(r.spool, "rb") as spool:
            first_record = True
            for line in spool:
                yield (b"" if first_record else b",") + b"\n" + line.rstrip(b"\n")
                first_record = False
        if remove_spool:
            os.unlink(r.spool)
    yield b"]}"


def _tail(totals: Totals, failed: Iterable[bytes], seconds: float) -> Iterator[bytes]:
    # As orjson.dumps of {"messages_in", "messages_out", "counts", "failed", "seconds"},
    # the failed names (each already JSON) streamed in.
    sums = orjson.dumps({"messages_in": totals.messages_in, "messages_out": totals.messages_out,
                         "counts": totals.sorted_counts()})
    yield b"\n]," + sums[1:-1] + b',"failed":['
    for k, name in enumerate(failed):
        yield b"," + name if k else name
    yield b'],"seconds":' + orjson.dumps(round(seconds, 6)) + b"}\n"
