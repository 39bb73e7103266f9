"""The ``--report`` document, merged from many files' results: counts summed, each file's
records streamed from its spool file (one open at a time, never all in memory). The one
merger every way of running uses: one job, ``--jobs``, ``--engine dask``, and
``normalizer.distributed`` (which re-exports it)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator

import orjson

from ._repair import FileResult

__all__ = ["total_counts", "report_chunks"]


def total_counts(results: Iterable[FileResult]) -> dict[str, int]:
    """Every result's counts, summed (sorted by kind)."""
    counts: dict[str, int] = {}
    for r in results:
        for k, v in r.counts.items():
            counts[k] = counts.get(k, 0) + v
    return dict(sorted(counts.items()))


def report_chunks(results: list[FileResult], seconds: float, *, remove_spools: bool = True) -> Iterator[bytes]:
    """The report document (``chatnorm repair --report``), in pieces: per file its counts
    and records, then the totals. Records are streamed from each result's spool file, one
    file open at a time, and never all in memory; each spool is removed once copied
    (``remove_spools``)."""
    yield b'{"files":['
    for i, r in enumerate(results):
        head = {
            "input": r.input, "output": r.output, "format": r.format, "error": r.error,
            "conversations": r.conversations, "messages_in": r.messages_in,
            "messages_out": r.messages_out, "counts": dict(sorted(r.counts.items())),
            "seconds": round(r.seconds, 6),
        }
        yield (b",\n" if i else b"\n") + orjson.dumps(head)[:-1] + b',"records":['
        if r.spool is not None:
            with open(r.spool, "rb") as spool:
                first = True
                for line in spool:
                    yield (b"" if first else b",") + b"\n" + line.rstrip(b"\n")
                    first = False
            if remove_spools:
                os.unlink(r.spool)
        yield b"]}"
    tail = {
        "messages_in": sum(r.messages_in for r in results),
        "messages_out": sum(r.messages_out for r in results),
        "counts": total_counts(results),
        "failed": [r.input for r in results if r.error],
        "seconds": round(seconds, 6),
    }
    yield b"\n]," + orjson.dumps(tail)[1:] + b"\n"
