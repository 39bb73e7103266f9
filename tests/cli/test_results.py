"""Results as they come: the command says and reports each file when it and every file
before it are done, then forgets it (``_main._repair``, ``_report.ReportStream``), and the
pool hands results out in the plan's order with at most ``REORDER_WINDOW`` of them waiting
for a slower file (``_order.InOrder``). So what a run holds does not grow with its files."""

from __future__ import annotations

import gc
import threading
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from normalizer.batch import jobs as _jobs
from normalizer.batch import order as _order
from normalizer.batch.plan import Job
from normalizer.batch.tracking import Tracker
from normalizer.batch.results import FileResult, Settings
from normalizer.batch.report import ReportStream, Totals, report_chunks
from tests.cli.conftest import EXAMPLE, run


class Counts(dict[str, int]):
    """A result's counts that a weak reference can follow (FileResult has slots)."""


# -- InOrder ----------------------------------------------------------------------------------------


def test_in_order_hands_out_what_is_done_from_the_first_not_handed_out():
    order = _order.InOrder()
    order.put(2, FileResult("c", ""))
    order.put(1, FileResult("b", ""))
    assert list(order.take()) == []  # 0 is not done
    order.put(0, FileResult("a", ""))
    assert [r.input for r in order.take()] == ["a", "b", "c"]
    assert order.next == 3
    order.put(3, None)  # stopped: no result, and the order goes on past it
    order.put(4, FileResult("e", ""))
    assert [r.input for r in order.take()] == ["e"]
    assert order.next == 5


def test_in_order_room_is_the_window_from_the_first_not_handed_out(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(_order, "REORDER_WINDOW", 3)
    order = _order.InOrder()
    assert [order.room(i) for i in range(5)] == [True, True, True, False, False]
    order.put(0, FileResult("a", ""))
    list(order.take())
    assert [order.room(i) for i in range(5)] == [True, True, True, True, False]


# -- the pool -----------------------------------------------------------------------------------


def test_a_slow_file_holds_back_at_most_the_window(monkeypatch: pytest.MonkeyPatch):
    """File 0 runs until files 1..W-1 are done. No file from W on starts before it ends,
    and never more than W results wait. (A thread pool stands in for the process pool, so
    that the test decides the order in which files finish.)"""
    import concurrent.futures

    window = 4
    monkeypatch.setattr(_order, "REORDER_WINDOW", window)
    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor",
                        lambda max_workers, **_: concurrent.futures.ThreadPoolExecutor(max_workers))
    lock = threading.Lock()
    done: set[int] = set()
    done_when_started: dict[int, set[int]] = {}
    others_done = threading.Event()

    def work(job: Job, settings: Settings) -> FileResult:
        i = int(job.name)
        with lock:
            done_when_started[i] = set(done)
        if i == 0:
            assert others_done.wait(30)
        with lock:
            done.add(i)
            if set(range(1, window)) <= done:
                others_done.set()
        return FileResult(job.name, job.output, messages_in=i)

    waiting: list[int] = []
    put = _order.InOrder.put

    def counting_put(self: _order.InOrder, i: int, result: FileResult | None) -> None:
        put(self, i, result)
        waiting.append(len(self._ready))

    monkeypatch.setattr(_jobs, "_work", work)
    monkeypatch.setattr(_order.InOrder, "put", counting_put)
    jobs = [Job(str(i), str(i), f"out{i}") for i in range(12)]
    results = list(_jobs.run_pool(jobs, Settings(), Tracker(len(jobs)), 3))
    assert [r.input for r in results] == [str(i) for i in range(12)]
    assert [0 in done_when_started[i] for i in range(12)] == [False] * window + [True] * (12 - window)
    assert max(waiting) == window  # 1..W-1 waiting, then 0 comes in: all W handed out at once


def test_pool_results_come_while_the_pool_still_works(monkeypatch: pytest.MonkeyPatch):
    """The first result is handed out before the last file has started (not gathered at
    the end)."""
    import concurrent.futures

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor",
                        lambda max_workers, **_: concurrent.futures.ThreadPoolExecutor(max_workers))
    started: list[int] = []

    def work(job: Job, settings: Settings) -> FileResult:
        started.append(int(job.name))
        return FileResult(job.name, job.output)

    monkeypatch.setattr(_jobs, "_work", work)
    jobs = [Job(str(i), str(i), f"out{i}") for i in range(50)]
    stream = _jobs.run_pool(jobs, Settings(), Tracker(len(jobs)), 2)
    first = next(stream)
    assert first.input == "0" and len(started) < 50
    assert [r.input for r in stream] == [str(i) for i in range(1, 50)]


# -- the command ----------------------------------------------------------------------------------


def spy_run_jobs(monkeypatch: pytest.MonkeyPatch, seen: Any) -> None:
    """Wrap the real run_jobs: ``seen(result, settings)`` as each result is handed out."""
    real = _jobs.run_jobs

    def run_jobs(jobs: list[Job], settings: Settings, tracker: Tracker, n: int, **kwargs: Any) -> Iterator[FileResult]:
        for result in real(jobs, settings, tracker, n, **kwargs):
            seen(result, settings)
            yield result

    monkeypatch.setattr(_jobs, "run_jobs", run_jobs)


def test_the_command_forgets_each_result_once_said(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]):
    from normalizer.cli._main import main

    src = tmp_path / "in"
    src.mkdir()
    for i in range(6):
        (src / f"s{i}.jsonl").write_bytes(EXAMPLE.read_bytes())
    kept: list[weakref.ref[Counts]] = []
    alive: list[int] = []

    def seen(result: FileResult, settings: Settings) -> None:
        # (the command's loop still names the result before this one while it asks for it)
        gc.collect()
        alive.append(sum(ref() is not None for ref in kept[:-1]))
        result.counts = Counts(result.counts)
        kept.append(weakref.ref(result.counts))

    spy_run_jobs(monkeypatch, seen)
    assert main(["repair", str(src), "-o", str(tmp_path / "out"), "--report", str(tmp_path / "r.json")]) == 0
    assert alive == [0] * 6  # none of the results before the last one is kept
    err = capsys.readouterr().err.splitlines()
    assert [line.split(":")[0] for line in err[:6]] == [str(src / f"s{i}.jsonl") for i in range(6)]
    assert err[6].startswith("total: 6 files, ")
    report = orjson.loads((tmp_path / "r.json").read_bytes())
    assert [f["input"] for f in report["files"]] == [str(src / f"s{i}.jsonl") for i in range(6)]
    assert report["counts"]["merge_assistant"] == 6 * report["files"][0]["counts"]["merge_assistant"]


def test_each_files_records_leave_the_spool_folder_when_it_is_reported(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch):
    from normalizer.cli._main import main

    src = tmp_path / "in"
    src.mkdir()
    for i in range(5):
        (src / f"s{i}.jsonl").write_bytes(EXAMPLE.read_bytes())
    spools: list[int] = []

    def seen(result: FileResult, settings: Settings) -> None:
        assert settings.spool_dir is not None and result.spool is not None
        spools.append(len(list(Path(settings.spool_dir).glob("*.records"))))

    spy_run_jobs(monkeypatch, seen)
    assert main(["repair", "-q", str(src), "-o", str(tmp_path / "out"), "--report", str(tmp_path / "r.json")]) == 0
    assert spools == [1] * 5  # only the file just done: the earlier ones' were copied and removed
    report = orjson.loads((tmp_path / "r.json").read_bytes())
    records = [len(f["records"]) for f in report["files"]]
    assert records == [sum(f["counts"].values()) for f in report["files"]] == [records[0]] * 5 and records[0] > 0


def test_errors_and_summaries_come_in_the_plans_order(tmp_path: Path):
    src = tmp_path / "in"
    src.mkdir()
    (src / "a.jsonl").write_bytes(EXAMPLE.read_bytes())
    (src / "b.jsonl").write_bytes(b'{"role": \n')
    (src / "c.jsonl").write_bytes(b"")
    (src / "d.jsonl").write_bytes(EXAMPLE.read_bytes())
    result = run("repair", src, "-o", tmp_path / "out")
    assert result.returncode == 1
    lines = result.stderr.decode().splitlines()
    assert [line.split(" ")[0] for line in lines] == [
        f"{src / 'a.jsonl'}:", "error:", "warning:", f"{src / 'c.jsonl'}:", f"{src / 'd.jsonl'}:", "total:"]
    assert lines[1].startswith(f"error: {src / 'b.jsonl'}:2:1: ")
    assert lines[-1].startswith("total: 4 files (1 failed), ")


# -- the report ---------------------------------------------------------------------------------


def results_with_spools(tmp_path: Path) -> list[FileResult]:
    spool = tmp_path / "one.records"
    spool.write_bytes(b'{"kind":"a"}\n{"kind":"b"}\n')
    return [
        FileResult("one", "o1", format="jsonl", messages_in=3, messages_out=2, conversations=1,
                   counts={"z": 1, "a": 2}, seconds=0.25, spool=str(spool)),
        FileResult("two \"quoted\"", "o2", error="bad"),
        FileResult("three", "o3", counts={"a": 1}),
        FileResult("four", "o4", error="worse"),
    ]


def test_the_streamed_report_is_the_merged_one_byte_for_byte(tmp_path: Path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    merged = b"".join(report_chunks(results_with_spools(tmp_path / "a"), 1.5))
    chunks: list[bytes] = []
    stream = ReportStream(chunks.append, str(tmp_path / "b" / "failed.names"))
    totals = Totals()
    for r in results_with_spools(tmp_path / "b"):
        totals.add(r)
        stream.add(r)
    stream.finish(totals, 1.5)
    assert b"".join(chunks) == merged
    document = orjson.loads(merged)
    assert document["failed"] == ["two \"quoted\"", "four"]
    assert document["counts"] == {"a": 3, "z": 1}
    assert document["files"][0]["records"] == [{"kind": "a"}, {"kind": "b"}]
    assert sorted(p.name for p in (tmp_path / "b").iterdir()) == []  # spool and names removed


def test_an_empty_run_reports_an_empty_document(tmp_path: Path):
    chunks: list[bytes] = []
    stream = ReportStream(chunks.append, str(tmp_path / "failed.names"))
    stream.finish(Totals(), 0.0)
    assert b"".join(chunks) == b"".join(report_chunks([], 0.0))
    assert orjson.loads(b"".join(chunks)) == {"files": [], "messages_in": 0, "messages_out": 0, "counts": {},
                                              "failed": [], "seconds": 0.0}


def test_totals_sum_what_they_are_given():
    totals = Totals()
    for r in (FileResult("a", "", messages_in=2, messages_out=1, counts={"x": 1}),
              FileResult("b", "", error="no"), FileResult("c", "", messages_in=1, counts={"x": 2, "b": 1})):
        totals.add(r)
    assert (totals.files, totals.failed, totals.messages_in, totals.messages_out) == (3, 1, 3, 1)
    assert list(totals.sorted_counts().items()) == [("b", 1), ("x", 3)]


def test_a_report_that_cannot_be_opened_stops_the_run_before_anything_is_written(tmp_path: Path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    result = run("repair", EXAMPLE, "-o", tmp_path / "out.jsonl", "--report", blocker / "r.json")
    assert result.returncode == 1
    assert result.stderr.decode().splitlines() == [
        f"error: {blocker / 'r.json'}: cannot write the report: Not a directory; nothing was repaired. "
        "Check the --report path"]
    assert not (tmp_path / "out.jsonl").exists()


def test_a_report_that_fails_mid_run_is_said_at_the_end_and_the_outputs_are_written(tmp_path: Path):
    src = tmp_path / "in"
    src.mkdir()
    for i in range(3):
        (src / f"s{i}.jsonl").write_bytes(EXAMPLE.read_bytes())
    result = run("repair", "-q", src, "-o", tmp_path / "out", "--report", "/dev/full")
    assert result.returncode == 1
    assert result.stderr.decode().splitlines() == [
        "error: /dev/full: cannot write the report: No space left on device"]
    expected = run("repair", "-q", EXAMPLE).stdout
    assert [(tmp_path / "out" / f"s{i}.jsonl").read_bytes() for i in range(3)] == [expected] * 3
