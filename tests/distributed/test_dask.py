"""Dask: files and bags of lines on a real ``LocalCluster`` (started and shut down here), and
``chatnorm repair --engine dask``. Outputs are byte for byte those of one process, file by
file; the merged report has the same counts; a worker that dies mid-file leaves no partial
output, and its file is retried -- or reported failed, never silently missing."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.cli.conftest import EXAMPLE, ROOT, big_session, run
from tests.distributed.conftest import inputs, leftovers, same_report, same_tree

dask = pytest.importorskip("dask")
pytest.importorskip("dask.bag")
distributed = pytest.importorskip("distributed")

import dask.bag  # noqa: E402

from normalizer.distributed import write_report  # noqa: E402
from normalizer.distributed.dask import bag_results, repair_bag, repair_files  # noqa: E402

ENV = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as c:
        yield c


@pytest.fixture
def client(cluster: Any) -> Iterator[Any]:
    with distributed.Client(cluster) as c:
        yield c


def test_files_on_a_client_are_byte_identical_and_the_report_merges(corpus: Path, client: Any, tmp_path: Path):
    srcs = inputs(corpus)
    dsts = [tmp_path / "out" / p.relative_to(corpus / "in") for p in srcs]
    results = repair_files(srcs, dsts, client=client, report=tmp_path / "report.json")
    assert [r.input for r in results] == [str(p) for p in srcs]
    assert [r.error is not None for r in results] == [p.name == "bad.jsonl" for p in srcs]
    same_tree(corpus / "expected", tmp_path / "out")
    report = same_report(tmp_path / "report.json", corpus / "expected.json")
    assert report["counts"]["merge_assistant"] > 1_000
    assert leftovers(tmp_path) == []


def test_a_bag_of_lines_is_the_cli_output_file_by_file(corpus: Path, client: Any, tmp_path: Path):
    train = sorted((corpus / "in" / "train").glob("*.jsonl"))
    spool = tmp_path / "spool"
    spool.mkdir()
    lines = repair_bag(dask.bag.read_text([str(p) for p in train], blocksize=None), records_dir=str(spool))
    assert lines.npartitions == 3
    lines.to_textfiles([str(tmp_path / "out" / p.name) for p in train], last_endline=True)
    for p in train:
        assert (tmp_path / "out" / p.name).read_bytes() == (corpus / "expected" / "train" / p.name).read_bytes()
    lines.count().compute()  # computed again: the same results, not twice as many
    results = bag_results(spool)
    assert [r.input for r in results] == ["partition 0", "partition 1", "partition 2"]
    write_report(tmp_path / "report.json", results)
    got = orjson.loads((tmp_path / "report.json").read_bytes())
    want = orjson.loads((corpus / "expected.json").read_bytes())
    per_file = {f["input"]: f for f in want["files"]}
    for i, p in enumerate(train):
        assert got["files"][i]["records"] == per_file[str(p)]["records"]
        assert got["files"][i]["counts"] == per_file[str(p)]["counts"]
    assert got["counts"] == {k: sum(per_file[str(p)]["counts"].get(k, 0) for p in train) for k in got["counts"]}
    assert sorted(p.name for p in spool.iterdir()) == [f"partition-{i:06}.result.json" for i in range(3)]


def test_a_bad_line_in_a_bag_fails_the_compute_naming_its_partition_and_line(client: Any):
    bag = dask.bag.from_sequence(['{"messages": [{"role": "user", "content": "hi"}]}', '{"messages": [}'], npartitions=1)
    lines = repair_bag(bag, name="train.jsonl")
    with pytest.raises(Exception, match=r"^train\.jsonl 0:2:15: not JSON"):
        lines.compute()


class _KillWhileWriting(distributed.WorkerPlugin):
    """Kills its worker (SIGKILL) as soon as that worker has a temporary output of ``name``
    open; once (a marker file), or every time (``once=False``)."""

    def __init__(self, folder: str, name: str, once: bool) -> None:
        self.folder, self.name, self.once = folder, name, once

    def setup(self, worker: Any) -> None:
        threading.Thread(target=self._watch, daemon=True).start()

    def _watch(self) -> None:
        marker = os.path.join(self.folder, "..", "killed-once")
        prefix = f".{self.name}.chatnorm-tmp."
        while True:
            try:
                mine = [n for n in os.listdir(self.folder)
                        if n.startswith(prefix) and n.split(".")[-2] == str(os.getpid())]
            except FileNotFoundError:
                mine = []
            if mine and not (self.once and os.path.exists(marker)):
                open(marker, "w").close()
                os.kill(os.getpid(), signal.SIGKILL)
            time.sleep(0.002)


def repair_with_a_killer(tmp_path: Path, name: str, *, once: bool, allowed_failures: int) -> list[Any]:
    """``repair_files`` of ``tmp_path/in`` into ``tmp_path/out`` on a LocalCluster whose
    workers die (SIGKILL) while writing ``name``."""
    (tmp_path / "out").mkdir()
    with dask.config.set({"distributed.scheduler.allowed-failures": allowed_failures}):
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0")
    client = distributed.Client(cluster)
    try:
        client.register_plugin(_KillWhileWriting(str(tmp_path / "out"), name, once))
        srcs = sorted((tmp_path / "in").iterdir())
        return repair_files(srcs, [tmp_path / "out" / p.name for p in srcs], client=client)
    finally:
        client.close()
        cluster.close()


def test_a_worker_killed_mid_file_leaves_nothing_partial_and_the_file_is_retried(tmp_path: Path):
    src = tmp_path / "in"
    src.mkdir()
    for i in range(3):
        big_session(src / f"s{i}.jsonl", 10_000)
    srcs = sorted(src.iterdir())
    results = repair_with_a_killer(tmp_path, "s1.jsonl", once=True, allowed_failures=3)
    assert (tmp_path / "killed-once").exists()  # the worker did die, mid-file
    assert [r.error for r in results] == [None, None, None]
    expected = run("repair", "-q", src / "s0.jsonl").stdout
    for p in srcs:
        assert (tmp_path / "out" / p.name).read_bytes() == expected
    assert leftovers(tmp_path) == []


def test_a_file_whose_workers_always_die_is_reported_failed_and_only_it(tmp_path: Path):
    # Three files in one task (small, big, small): the task dies, is split, and only the big
    # file, which kills every worker that writes it, is reported failed.
    src = tmp_path / "in"
    src.mkdir()
    (src / "s0.jsonl").write_bytes(EXAMPLE.read_bytes())
    big_session(src / "s1.jsonl", 10_000)
    (src / "s2.jsonl").write_bytes(EXAMPLE.read_bytes())
    results = repair_with_a_killer(tmp_path, "s1.jsonl", once=False, allowed_failures=1)
    assert [r.error is None for r in results] == [True, False, True]
    assert results[1].error == (
        f"{src / 's1.jsonl'}: the Dask workers repairing it died each time it was tried (killed, or out of "
        "memory; see distributed.scheduler.allowed-failures); its output was not written. "
        "Repair it alone (chatnorm repair FILE) to see why")
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["s0.jsonl", "s2.jsonl"]
    expected = run("repair", "-q", EXAMPLE).stdout
    assert (tmp_path / "out" / "s0.jsonl").read_bytes() == (tmp_path / "out" / "s2.jsonl").read_bytes() == expected
    assert leftovers(tmp_path) == []


def test_small_files_go_in_runs_and_big_ones_alone(tmp_path: Path):
    from normalizer.batch.dask_engine import chunks
    from normalizer.batch.plan import Job

    sizes = [10, 10, 500, 10, 10, 10, 10]
    jobs = []
    for i, n in enumerate(sizes):
        (tmp_path / f"f{i}").write_bytes(b"x" * n)
        jobs.append(Job(str(tmp_path / f"f{i}"), f"f{i}", "-"))
    jobs.append(Job(str(tmp_path / "missing"), "missing", "-"))
    assert list(chunks(jobs, max_files=3, max_bytes=100)) == [[0, 1], [2], [3, 4, 5], [6, 7]]
    # made as they are taken: the first run needs the stat of its files and the next one's
    lazy = chunks(jobs, max_files=3, max_bytes=100)
    (tmp_path / "f1").write_bytes(b"x" * 500)  # read before it is stat'ed: a run of its own
    assert next(lazy) == [0]


# -- the command line ---------------------------------------------------------------------------


def test_engine_dask_on_a_local_cluster_is_byte_identical(corpus: Path, tmp_path: Path):
    result = run("repair", "-q", "--engine", "dask", "-j", "2", corpus / "in", "-o", tmp_path / "out",
                 "--report", tmp_path / "report.json", timeout=180)
    assert result.returncode == 1, result.stderr
    assert f"error: {corpus / 'in' / 'bad.jsonl'}:13:" in result.stderr.decode()
    same_tree(corpus / "expected", tmp_path / "out")
    same_report(tmp_path / "report.json", corpus / "expected.json")
    assert leftovers(tmp_path) == []


def test_a_killed_dask_runs_temporary_files_go_with_the_next_dask_run(tmp_path: Path):
    """Issue 35, third round: the temporary files of a killed ``--engine dask`` run (its
    workers gone) stayed forever. The next run's workers remove those whose process is dead
    on their host, and nothing else (a live process's file, another host's, the user's)."""
    from normalizer.batch.outputs import host_id
    from tests.cli.test_faults import dead_pid

    src = tmp_path / "in"
    src.mkdir()
    (src / "a.jsonl").write_bytes(EXAMPLE.read_bytes())
    out = tmp_path / "out"
    out.mkdir()
    here = host_id()
    with subprocess.Popen(["sleep", "60"]) as alive:
        dead = out / f".a.jsonl.chatnorm-tmp.r0123456789.{here}.{dead_pid()}.0123abcd"
        kept = [out / f".a.jsonl.chatnorm-tmp.r0123456789.{here}.{alive.pid}.0123abcd",
                out / f".a.jsonl.chatnorm-tmp.r0123456789.{'f' * 12}.{dead_pid()}.0123abcd",
                out / ".a.jsonl.chatnorm-tmp.notes", out / "notes.txt"]
        for p in [dead, *kept]:
            p.write_bytes(b"x" * 1000)
        try:
            result = run("repair", "-q", "--engine", "dask", "-j", "1", src, "-o", out, timeout=180)
        finally:
            alive.kill()
    assert result.returncode == 0, result.stderr
    assert not dead.exists()
    assert [p for p in kept if not p.exists()] == []
    assert (out / "a.jsonl").read_bytes() == run("repair", "-q", EXAMPLE).stdout


def test_engine_dask_on_a_running_scheduler(corpus: Path, cluster: Any, tmp_path: Path):
    result = run("repair", "-q", "--engine", "dask", "--scheduler", cluster.scheduler_address, corpus / "in",
                 "-o", tmp_path / "out", "--report", tmp_path / "report.json", timeout=180)
    assert result.returncode == 1, result.stderr
    same_tree(corpus / "expected", tmp_path / "out")
    same_report(tmp_path / "report.json", corpus / "expected.json")
    assert leftovers(tmp_path) == []  # the records' hidden spool folder beside the outputs is gone


@pytest.mark.parametrize("args, needle", [
    (["--scheduler", "tcp://127.0.0.1:1"], "--scheduler is the address of a Dask scheduler: give --engine dask too"),
    (["--engine", "dask"], "--engine dask repairs files into files: give input files or folders, and -o DIR"),
])
def test_engine_usage_errors(args: list[str], needle: str):
    result = run("repair", EXAMPLE, *args)
    assert result.returncode == 2 and needle in result.stderr.decode()


def test_a_signal_stops_the_cluster_run_with_nothing_half_written(tmp_path: Path):
    # SIGINT here; SIGTERM takes the same path (the command's handler sets the same flag).
    sig, status = signal.SIGINT, 130
    src = tmp_path / "in"
    src.mkdir()
    for i in range(4):
        big_session(src / f"s{i}.jsonl", 40_000)
    out = tmp_path / "out"
    with subprocess.Popen(
        [sys.executable, "-m", "normalizer", "repair", str(src), "-o", str(out), "--engine", "dask", "-j", "2"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV, start_new_session=True,
    ) as proc:
        deadline = time.monotonic() + 60
        while not [p for p in out.rglob("*") if ".chatnorm-tmp." in p.name] if out.exists() else True:
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.01)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=90)
    assert proc.returncode == status, err
    assert b"interrupted" in err and b"Traceback" not in err
    assert leftovers(tmp_path) == []
    expected = run("repair", "-q", src / "s0.jsonl").stdout
    for done in out.rglob("*.jsonl"):  # a file finished before the signal is whole
        assert done.read_bytes() == expected


def test_results_come_in_order_with_at_most_the_window_waiting(client: Any, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch):
    """A task per file, a window of 3: whatever order the cluster finishes them in, the
    results come in the plan's order and never more than 3 wait for an earlier one."""
    from normalizer.batch import dask_engine as _dask
    from normalizer.batch import order as _order
    from normalizer.batch.plan import Job
    from normalizer.batch.results import Settings

    monkeypatch.setattr(_order, "REORDER_WINDOW", 3)
    monkeypatch.setattr(_dask, "CHUNK_FILES", 1)
    waiting: list[int] = []
    put = _order.InOrder.put

    def counting_put(self: _order.InOrder, i: int, result: Any) -> None:
        put(self, i, result)
        waiting.append(len(self._ready))

    monkeypatch.setattr(_order.InOrder, "put", counting_put)
    jobs = []
    for i in range(12):
        (tmp_path / f"s{i}.jsonl").write_bytes(EXAMPLE.read_bytes() * (40 if i % 4 == 0 else 1))
        jobs.append(Job(str(tmp_path / f"s{i}.jsonl"), f"s{i}", str(tmp_path / "out" / f"s{i}.jsonl")))
    results = list(_dask.iter_file_jobs(client, jobs, Settings()))
    assert [r.input for r in results] == [f"s{i}" for i in range(12)]
    assert [r.error for r in results] == [None] * 12
    assert len(waiting) == 12 and max(waiting) <= 3
