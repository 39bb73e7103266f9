"""What a distributed run holds in its driver does not grow with the number of files
(issue 35, third round: one result object per file, about 5 GB at 10 million files). The
results stream into the report as they come and the totals are summed as they pass; with
``keep_results=False`` nothing per file is kept. Measured with tracemalloc on the
engine-neutral path with the local engine (the one the Dask and Ray adapters share)."""

from __future__ import annotations

import gc
import tracemalloc
from pathlib import Path
from typing import Any

import orjson

from normalizer.distributed import Totals, repair_file, repair_files
from tests.cli.conftest import EXAMPLE

N = 200


def _files(folder: Path, n: int) -> tuple[list[str], list[str]]:
    folder.mkdir()
    data = EXAMPLE.read_bytes()
    srcs = []
    for i in range(n):
        (folder / f"{i:06}.jsonl").write_bytes(data)
        srcs.append(str(folder / f"{i:06}.jsonl"))
    return srcs, [s.replace("/in-", "/out-") for s in srcs]


def _peak(tmp_path: Path, n: int, **kwargs: Any) -> tuple[Any, int, Path]:
    srcs, dsts = _files(tmp_path / f"in-{n}", n)
    report = tmp_path / f"report-{n}.json"
    repair_files(srcs[:2], [d + ".warm" for d in dsts[:2]])  # imports and caches, outside the measure
    # Cyclic garbage (each conversation's core) waits for the collector, which runs a full
    # collection only once it is a quarter of the long-lived objects (pytest's are many): the
    # objects alive now are frozen out of that count and the collector runs often, so that
    # the peak is what is held, not when the collector last came.
    thresholds = gc.get_threshold()
    gc.collect()
    gc.freeze()
    gc.collect()  # (the count of long-lived objects is taken at a full collection)
    gc.set_threshold(100, 2, 2)
    tracemalloc.start()
    try:
        result = repair_files(srcs, dsts, report=report, **kwargs)
        return result, tracemalloc.get_traced_memory()[1], report
    finally:
        tracemalloc.stop()
        gc.set_threshold(*thresholds)
        gc.unfreeze()


def test_the_drivers_peak_does_not_grow_with_the_number_of_files(tmp_path: Path):
    one = repair_file(EXAMPLE, tmp_path / "one.jsonl")
    peaks = {}
    for n in (N, 4 * N):
        totals, peak, report = _peak(tmp_path, n, keep_results=False)
        peaks[n] = peak
        assert isinstance(totals, Totals)
        assert (totals.files, totals.failed, totals.messages_in) == (n, 0, n * one.messages_in)
        # The report is complete: every file, in order, with its records; the totals.
        doc = orjson.loads(report.read_bytes())
        assert [f["input"] for f in doc["files"]] == [str(tmp_path / f"in-{n}" / f"{i:06}.jsonl") for i in range(n)]
        assert all(f["counts"] == one.counts and len(f["records"]) == sum(one.counts.values()) for f in doc["files"])
        assert doc["counts"] == {k: v * n for k, v in sorted(one.counts.items())} and doc["failed"] == []
        assert (tmp_path / f"out-{n}" / "000000.jsonl").read_bytes() == (tmp_path / "one.jsonl").read_bytes()
    # 3 N more files: not 3 N more of anything (a result kept is ~600 bytes: 3 N of them,
    # 360 KB; measured 3 KB from 300 files to 2,400, ~1 byte a file, that is the collector's).
    assert peaks[4 * N] - peaks[N] < 32 * 3 * N, peaks


def test_kept_results_are_the_only_thing_that_grows(tmp_path: Path):
    """The default keeps the list it returns (what grows, and all that does)."""
    results, peak, report = _peak(tmp_path, N)
    more, more_peak, _ = _peak(tmp_path, 4 * N)
    assert len(more) == 4 * N and more_peak - peak > 300 * 3 * N  # (what the test above would see)
    assert [r.input for r in results] == [str(tmp_path / f"in-{N}" / f"{i:06}.jsonl") for i in range(N)]
    assert orjson.loads(report.read_bytes())["counts"] == dict(sorted(
        (k, sum(r.counts[k] for r in results)) for k in results[0].counts))
