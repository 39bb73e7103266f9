"""The scale benchmark: a corpus of conversations repaired by one process, by ``--jobs N``
worker processes, by Dask (``--engine dask``, a LocalCluster of N workers) and by Ray
(``normalizer.distributed.ray`` on a local Ray of N CPUs).

Two layouts of the same number of conversations (``benchmarks/corpus.py``):

* ``finetune``: fine-tuning JSONL, one conversation per line, in ``--files`` files;
* ``sessions``: chat session files, ``--per-file`` conversations' worth of messages each.

Every run is a whole command in a subprocess (start-up, cluster start and stop included),
its outputs checked byte for byte against the one-process run's. Beside them, the floor: a
bare orjson copy of the same files, each written as the CLI writes an output (temporary
file, fsync, rename), and the one process's throughput against it (bare copy ÷ 1 process). The runs are interleaved
round by round (one of each engine per round), so a machine that slows down slows them all;
figures are medians over ``--rounds``. Per run: wall seconds; conversations per second per
core (``N`` cores; 1 for the single process); the CPU seconds of the whole process tree
(``RUSAGE_CHILDREN``: the processes it waited for); the peak RSS of the largest single process of
the run's tree (a worker, or the driver) and of the driver itself, sampled every 50 ms.

    python -m benchmarks.scale                       # 200k conversations, 2 cores, 3 rounds
    python -m benchmarks.scale --conversations 20000 --rounds 1   # a quick look

Writes ``scale.json`` (every round) and ``scale.md`` (the table) to ``--out``. Needs psutil,
and dask[distributed] and ray[data] for their rows (a missing engine's rows are skipped).
"""

from __future__ import annotations

import argparse
import filecmp
import importlib.util
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from .corpus import finetune_files, session_files

ROOT = Path(__file__).resolve().parents[1]

_RAY = """
import sys, os, ray
ray.init(num_cpus=int(sys.argv[3]), include_dashboard=False, log_to_driver=False)
ray.data.DataContext.get_current().enable_progress_bars = False
from normalizer.distributed.ray import repair_files
src, out = sys.argv[1], sys.argv[2]
paths = sorted(os.path.join(d, f) for d, _, fs in os.walk(src) for f in fs if f.endswith(".jsonl"))
results = repair_files(paths, [os.path.join(out, os.path.relpath(p, src)) for p in paths])
ray.shutdown()
sys.exit(1 if any(r.error for r in results) else 0)
"""


#: The floor: a bare orjson copy of every file, each output written as the CLI writes one
#: (temporary file, fsync, rename), with no repair and no checks (``benchmarks/_copy.py``).
FLOOR = "bare copy (floor)"


def _engines(cores: int) -> dict[str, Any]:
    chatnorm = [sys.executable, "-m", "normalizer", "repair", "-q"]
    engines: dict[str, Any] = {
        "1 process": (1, lambda src, out: [*chatnorm, src, "-o", out]),
        FLOOR: (1, lambda src, out: [sys.executable, "-m", "benchmarks._copy", "--tree", src, out]),
        f"--jobs {cores}": (cores, lambda src, out: [*chatnorm, "--jobs", str(cores), src, "-o", out]),
    }
    if importlib.util.find_spec("distributed") is not None:
        engines[f"dask LocalCluster({cores})"] = (
            cores, lambda src, out: [*chatnorm, "--engine", "dask", "--jobs", str(cores), src, "-o", out])
    if importlib.util.find_spec("ray") is not None:
        engines[f"ray local ({cores} CPUs)"] = (
            cores, lambda src, out: [sys.executable, "-c", _RAY, src, out, str(cores)])
    return engines


def _measure(cmd: list[str]) -> dict[str, float]:
    """Run ``cmd``; wall seconds and the peak RSS (MiB) of the driver and of the largest
    single process of its tree, sampled every 50 ms."""
    import resource
    import tempfile

    import psutil

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    # stderr to a file, not a pipe: a chatty run cannot fill a pipe nobody reads while we poll
    errfile = tempfile.TemporaryFile()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=errfile, env=env)
    driver = psutil.Process(proc.pid)
    peak_driver = peak_any = 0
    alone = True  # no process of the run's tree besides the driver seen
    while True:
        # Reaped here (wait4, not poll), for the child's own resource usage at its end.
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            break
        try:
            tree = [driver, *driver.children(recursive=True)]
        except psutil.NoSuchProcess:
            tree = []
        alone = alone and len(tree) <= 1
        for p in tree:
            try:
                rss = p.memory_info().rss
            except psutil.Error:
                continue
            peak_any = max(peak_any, rss)
            if p.pid == proc.pid:
                peak_driver = max(peak_driver, rss)
        time.sleep(0.05)
    # The kernel's peak of the child and of what it waited for: what the samples approach,
    # and all there is of a run over before its first sample, or sampled as it started (the
    # bare copy of a small corpus). The driver's own, when it ran alone.
    kernel = usage.ru_maxrss * 1024
    peak_any = max(peak_any, kernel)
    if alone:
        peak_driver = max(peak_driver, kernel)
    errfile.seek(0)
    err = errfile.read()
    errfile.close()
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(map(str, cmd))[:200]} failed ({proc.returncode}):\n{err.decode()[-2000:]}")
    return {"wall": wall, "cpu": cpu, "peak_driver_mib": peak_driver / 2**20, "peak_process_mib": peak_any / 2**20}


def _same(a: Path, b: Path) -> None:
    cmp = filecmp.dircmp(a, b)
    stack = [cmp]
    while stack:
        c = stack.pop()
        if c.left_only or c.right_only:
            raise SystemExit(f"different files: {c.left_only[:3]} / {c.right_only[:3]} in {c.left}")
        _, mismatch, errors = filecmp.cmpfiles(c.left, c.right, c.common_files, shallow=False)
        if mismatch or errors:
            raise SystemExit(f"outputs differ from the single process's: {mismatch[:3]} {errors[:3]} in {c.left}")
        stack.extend(c.subdirs.values())


def make_corpus(data: Path, conversations: int, files: int, per_file: int) -> dict[str, Path]:
    layouts = {"finetune": data / f"finetune-{conversations}-{files}", "sessions": data / f"sessions-{conversations}-{per_file}"}
    if not layouts["finetune"].exists():
        finetune_files(layouts["finetune"].with_suffix(".part"), conversations, files)
        layouts["finetune"].with_suffix(".part").rename(layouts["finetune"])
    if not layouts["sessions"].exists():
        session_files(layouts["sessions"].with_suffix(".part"), conversations, turns_per_file=per_file)
        layouts["sessions"].with_suffix(".part").rename(layouts["sessions"])
    return layouts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--conversations", type=int, default=200_000)
    parser.add_argument("--files", type=int, default=8, help="finetune layout: files")
    parser.add_argument("--per-file", type=int, default=10, help="sessions layout: conversations' worth per file")
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--layouts", default="finetune,sessions")
    parser.add_argument("--engines", default="", help="comma-separated name prefixes to run (default: all)")
    parser.add_argument("--data", type=Path, default=Path(os.environ.get("TMPDIR", "/tmp")) / "chatnorm-scale")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results")
    args = parser.parse_args(argv)

    layouts = make_corpus(args.data, args.conversations, args.files, args.per_file)
    engines = _engines(args.cores)
    if args.engines:
        wanted = args.engines.split(",")
        engines = {k: v for k, v in engines.items()
                   if k in ("1 process", FLOOR) or any(k.startswith(w) for w in wanted)}
    rounds: dict[str, dict[str, list[dict[str, float]]]] = {}
    for layout in args.layouts.split(","):
        src = layouts[layout]
        rounds[layout] = {name: [] for name in engines}
        for r in range(args.rounds):
            for name, (cores, command) in engines.items():
                out = args.data / f"out-{layout}-{name.split()[0].strip('-')}"  # (1, jobs, dask, ray, bare)
                shutil.rmtree(out, ignore_errors=True)
                m = _measure(command(str(src), str(out)))
                m["cores"] = cores
                rounds[layout][name].append(m)
                print(f"{layout:9} round {r + 1} {name:24} {m['wall']:7.2f} s wall {m['cpu']:7.2f} s cpu  "
                      f"peak {m['peak_process_mib']:6.0f} MiB",
                      flush=True)
                if name == FLOOR:
                    shutil.rmtree(out)  # not repaired: nothing to compare
                elif name != "1 process":
                    _same(args.data / f"out-{layout}-1", out)
                    shutil.rmtree(out)
    rows = []
    for layout, by_engine in rounds.items():
        base = statistics.median(m["wall"] for m in by_engine["1 process"])
        # The CLI's throughput against the floor's, round by round (one round's two runs
        # saw the same machine), as the other benchmarks' copy ÷ CLI.
        floor_ratio = statistics.median(
            f["wall"] / m["wall"] for f, m in zip(by_engine[FLOOR], by_engine["1 process"]))
        for name, ms in by_engine.items():
            wall = statistics.median(m["wall"] for m in ms)
            cores = ms[0]["cores"]
            rows.append({
                "layout": layout, "engine": name, "cores": cores, "wall_s": round(wall, 2),
                "speedup": round(base / wall, 2),
                "floor_over_this": round(floor_ratio, 2) if name == "1 process" else None,
                "cpu_s": round(statistics.median(m["cpu"] for m in ms), 2),
                "conv_per_s_per_core": round(args.conversations / wall / cores),
                "peak_process_mib": round(statistics.median(m["peak_process_mib"] for m in ms)),
                "peak_driver_mib": round(statistics.median(m["peak_driver_mib"] for m in ms)),
            })
    args.out.mkdir(parents=True, exist_ok=True)
    meta = {"conversations": args.conversations, "files": args.files, "per_file": args.per_file, "cores": args.cores,
            "rounds": args.rounds, "python": platform.python_version(), "cpus": os.cpu_count(),
            "date": time.strftime("%Y-%m-%d")}
    (args.out / "scale.json").write_text(json.dumps({"meta": meta, "rows": rows, "rounds": rounds}, indent=1) + "\n")
    head = ("| layout | engine | cores | wall s (median) | × 1 process | CPU s (whole tree) | conversations/s per core "
            "| peak RSS, largest process (MiB) | peak RSS, driver (MiB) |\n|---|---|---:|---:|---:|---:|---:|---:|---:|\n")
    table = head + "".join(
        f"| {r['layout']} | {r['engine']} | {r['cores']} | {r['wall_s']} | {r['speedup']} | {r['cpu_s']} "
        f"| {r['conv_per_s_per_core']:,} | {r['peak_process_mib']} | {r['peak_driver_mib']} |\n" for r in rows)
    table += "\n" + "".join(
        f"{r['layout']}: bare copy ÷ 1 process (throughput, median of the rounds' ratios) = {r['floor_over_this']}\n"
        for r in rows if r["floor_over_this"] is not None)
    (args.out / "scale.md").write_text(table)
    print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
