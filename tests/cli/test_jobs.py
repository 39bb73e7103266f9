"""``--jobs N``: files repaired in worker processes. The outputs and the report are those of
one job, in the plan's order; a signal (to the command, or to its whole process group as a
terminal's ^C is) stops every worker with nothing half-written; a worker killed mid-file
gets its files retried, and a file that a second death takes is reported failed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest

from tests.cli.conftest import EXAMPLE, ROOT, big_session, run

psutil = pytest.importorskip("psutil")

ENV = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}


def leftovers(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if ".chatnorm-tmp." in p.name]


def workers_writing(proc: subprocess.Popen[bytes], folder: Path) -> list[int]:
    """The pids of the command's worker processes holding a temporary output in ``folder``."""
    found = []
    for child in psutil.Process(proc.pid).children(recursive=True):
        try:
            if any(".chatnorm-tmp." in f.path and f.path.startswith(str(folder)) for f in child.open_files()):
                found.append(child.pid)
        except psutil.NoSuchProcess:
            continue
    return found


def wait_for_writers(proc: subprocess.Popen[bytes], folder: Path, n: int, timeout: float = 60) -> list[int]:
    deadline = time.monotonic() + timeout
    while len(pids := workers_writing(proc, folder)) < n:
        assert proc.poll() is None, "the command ended before its workers were caught writing"
        assert time.monotonic() < deadline, "the workers never started writing"
        time.sleep(0.01)
    return pids


def tree(tmp_path: Path, sizes: list[int]) -> Path:
    src = tmp_path / "in"
    src.mkdir()
    for i, turns in enumerate(sizes):
        big_session(src / f"s{i}.jsonl", turns)
    return src


def test_outputs_and_report_are_those_of_one_job_in_plan_order(tmp_path: Path):
    src = tree(tmp_path, [3_000, 10, 2_000, 10, 500])
    (src / "train.jsonl").write_bytes(b"".join(
        orjson.dumps({"messages": [{"role": "user", "content": f"q{i}"}, {"role": "assistant", "content": "a"},
                                   {"role": "assistant", "content": "b"}]}) + b"\n" for i in range(50)))
    (src / "bad.jsonl").write_bytes(EXAMPLE.read_bytes() + b'{"role": \n')
    one, two = tmp_path / "one", tmp_path / "two"
    r1 = run("repair", src, "-o", one, "-j", "1", "--report", tmp_path / "r1.json")
    r2 = run("repair", src, "-o", two, "-j", "2", "--report", tmp_path / "r2.json")
    assert r1.returncode == r2.returncode == 1  # bad.jsonl
    names = sorted(p.name for p in one.iterdir())
    assert names == sorted(p.name for p in two.iterdir()) == [f"s{i}.jsonl" for i in range(5)] + ["train.jsonl"]
    for name in names:
        assert (one / name).read_bytes() == (two / name).read_bytes()
    rep1, rep2 = (orjson.loads((tmp_path / n).read_bytes()) for n in ("r1.json", "r2.json"))
    for f in rep1["files"] + rep2["files"]:
        f.pop("seconds"), f.pop("output")
    assert [f["input"] for f in rep2["files"]] == [str(src / n) for n in ["bad.jsonl", *[f"s{i}.jsonl" for i in range(5)],
                                                                          "train.jsonl"]]
    assert rep1["files"] == rep2["files"]
    assert rep1["counts"] == rep2["counts"] and rep2["counts"]["merge_assistant"] == 5_520 + 50
    assert rep2["failed"] == [str(src / "bad.jsonl")]
    assert f"error: {src / 'bad.jsonl'}:13:" in r2.stderr.decode()
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("sig, status, to_group", [
    (signal.SIGINT, 130, False),
    (signal.SIGINT, 130, True),
    (signal.SIGTERM, 143, True),  # (SIGTERM to the command alone: tests/cli/test_faults.py)
], ids=["SIGINT-command", "SIGINT-process-group", "SIGTERM-process-group"])
def test_a_signal_stops_every_worker_and_leaves_nothing_half_written(tmp_path: Path, sig: int, status: int,
                                                                     to_group: bool):
    src = tree(tmp_path, [40_000] * 4)
    out = tmp_path / "out"
    with subprocess.Popen(
        [sys.executable, "-m", "normalizer", "repair", str(src), "-o", str(out), "--jobs", "2"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV, start_new_session=True,
    ) as proc:
        wait_for_writers(proc, out, 2)
        if to_group:  # what ^C at a terminal does: every process of the foreground group
            os.killpg(proc.pid, sig)
        else:
            proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == status, err
    assert b"interrupted" in err and b"Traceback" not in err
    assert leftovers(tmp_path) == []
    assert list(out.rglob("*.jsonl")) == []  # both files were mid-way: neither was written


def test_a_worker_killed_mid_file_gets_its_files_retried(tmp_path: Path):
    src = tree(tmp_path, [15_000] * 3)
    out = tmp_path / "out"
    with subprocess.Popen(
        [sys.executable, "-m", "normalizer", "repair", "-q", str(src), "-o", str(out), "--jobs", "2",
         "--report", str(tmp_path / "r.json")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV,
    ) as proc:
        [victim, *_] = wait_for_writers(proc, out, 1)
        os.kill(victim, signal.SIGKILL)
        _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    expected = run("repair", "-q", src / "s0.jsonl").stdout
    for i in range(3):
        assert (out / f"s{i}.jsonl").read_bytes() == expected
    assert orjson.loads((tmp_path / "r.json").read_bytes())["counts"]["merge_assistant"] == 3 * 15_000
    assert leftovers(tmp_path) == []


def test_a_file_whose_worker_dies_twice_is_reported_failed(tmp_path: Path):
    src = tree(tmp_path, [60_000] * 2)
    out = tmp_path / "out"
    with subprocess.Popen(
        [sys.executable, "-m", "normalizer", "repair", str(src), "-o", str(out), "--jobs", "2"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV,
    ) as proc:
        for _ in range(2):  # both files are in flight both times
            for pid in wait_for_writers(proc, out, 2):
                os.kill(pid, signal.SIGKILL)
            while workers_writing(proc, out):
                time.sleep(0.01)
        _, err = proc.communicate(timeout=120)
    assert proc.returncode == 1, err
    text = err.decode()
    for i in range(2):
        assert (f"error: {src / f's{i}.jsonl'}: the worker process repairing it died (killed, or out of memory) "
                "twice; its output was not written. Repair it alone (chatnorm repair FILE) to see why, "
                "or with fewer --jobs") in text
    assert list(out.rglob("*.jsonl")) == []
    assert leftovers(tmp_path) == []
