"""What starting ``chatnorm`` costs: whole commands, in interleaved rounds, against Python itself.

``python -m benchmarks.startup [--repeats 21] [--out DIR]`` runs, round after round (so a
machine whose speed drifts slows every row alike), each of:

* ``python -c pass``: the interpreter's own start-up, the floor of every row;
* the bare copy (``benchmarks._copy``: orjson reads and writes each line) of a 20-message chat
  file, the floor of ``chatnorm repair``'s start-up (issue 41);
* ``chatnorm --version``, ``chatnorm --help``, and ``chatnorm repair`` and ``chatnorm check``
  of the same 20-message file (``python -m normalizer``, stdout discarded).

It prints, per row, the median wall time and CPU time (user + system, the child's own
accounting) and their ratio to ``python -c pass`` and to the copy, with valgrind's count of
the instructions of one run beside them when valgrind is found (``--valgrind``; the figure
that holds on a noisy machine: ``benchmarks/instructions.py`` counts the same way), then the targets
(``--version`` under 0.1 s, ``repair`` under 0.25 s, ``repair`` at most 2x the copy); writes
``startup.json`` (every round) and ``startup.md`` (the table) to ``--out``. Which modules each
command imports is pinned by tests/cli/test_startup_imports.py, not here.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from benchmarks.instructions import run_counted
from benchmarks.workload import clean_messages, write_jsonl

ROOT = Path(__file__).resolve().parent.parent
#: Messages in the chat file ``repair`` and ``check`` read (a short stored session).
MESSAGES = 20


@dataclass(frozen=True, slots=True)
class Row:
    """One command of the benchmark: its name and its argv (``{file}`` is the chat file)."""

    name: str
    argv: tuple[str, ...]


ROWS = (
    Row("python -c pass", (sys.executable, "-c", "pass")),
    Row("bare copy", (sys.executable, "-m", "benchmarks._copy", "{file}")),
    Row("chatnorm --version", (sys.executable, "-m", "normalizer", "--version")),
    Row("chatnorm --help", (sys.executable, "-m", "normalizer", "--help")),
    Row("chatnorm repair", (sys.executable, "-m", "normalizer", "repair", "-q", "{file}")),
    Row("chatnorm check", (sys.executable, "-m", "normalizer", "check", "-q", "{file}")),
)


@dataclass(frozen=True, slots=True)
class Timing:
    """One run: wall seconds, and the child's CPU seconds (user + system)."""

    wall: float
    cpu: float


def run_once(argv: list[str], env: dict[str, str]) -> Timing:
    """Run ``argv`` to its end (stdout and stderr discarded); its wall and CPU time."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   env=env, cwd=ROOT, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Timing(wall, cpu)


def measure(repeats: int, rows: tuple[Row, ...] = ROWS) -> dict[str, list[Timing]]:
    """Every row once a round, ``repeats`` rounds after one warm-up round."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}
    with tempfile.TemporaryDirectory() as tmp:
        chat = Path(tmp) / "chat.jsonl"
        write_jsonl(chat, clean_messages(MESSAGES, seed=1))
        argvs = {row.name: [a.replace("{file}", str(chat)) for a in row.argv] for row in rows}
        runs: dict[str, list[Timing]] = {row.name: [] for row in rows}
        for round_ in range(repeats + 1):
            for row in rows:
                timing = run_once(argvs[row.name], env)
                if round_:
                    runs[row.name].append(timing)
    return runs


def count(valgrind: str, rows: tuple[Row, ...] = ROWS) -> dict[str, int]:
    """Instructions of one run of each row (after the timed runs wrote every .pyc)."""
    counts: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as tmp:
        chat = Path(tmp) / "chat.jsonl"
        write_jsonl(chat, clean_messages(MESSAGES, seed=1))
        for row in rows:
            argv = [a.replace("{file}", str(chat)) for a in row.argv]
            counts[row.name], _ = run_counted(valgrind, argv, Path(tmp), row.name.replace(" ", "_"))
    return counts


def table(runs: dict[str, list[Timing]], counts: dict[str, int]) -> str:
    """The markdown table: medians, instructions, and each row's ratios to ``python -c pass``
    and to the copy (instructions; wall)."""
    wall = {name: statistics.median(t.wall for t in ts) for name, ts in runs.items()}
    cpu = {name: statistics.median(t.cpu for t in ts) for name, ts in runs.items()}
    lines = ["| command | wall (median) | CPU (median) | instructions | ÷ `python -c pass`: instructions (wall) "
             "| ÷ bare copy: instructions (wall) |", "|---|---:|---:|---:|---:|---:|"]

    def ratio(name: str, floor: str) -> str:
        wall_ratio = f"{wall[name] / wall[floor]:.2f}"
        return f"{counts[name] / counts[floor]:.2f} ({wall_ratio})" if counts else wall_ratio

    for name in runs:
        ir = f"{counts[name] / 1e6:,.0f}M" if counts else "-"
        lines.append(f"| {name} | {wall[name] * 1e3:.0f} ms | {cpu[name] * 1e3:.0f} ms | {ir} | "
                     f"{ratio(name, 'python -c pass')} | {ratio(name, 'bare copy')} |")
    return "\n".join(lines) + "\n"


def targets(runs: dict[str, list[Timing]]) -> list[str]:
    """The start-up targets (issues 39 and 41), each with its measured median."""
    wall = {name: statistics.median(t.wall for t in ts) for name, ts in runs.items()}
    cpu = {name: statistics.median(t.cpu for t in ts) for name, ts in runs.items()}
    met = {True: "met", False: "NOT met"}
    version, repair, copy = wall["chatnorm --version"], wall["chatnorm repair"], wall["bare copy"]
    # (CPU time beside wall: on a loaded machine the wall medians carry the wait for a core)
    return [
        f"chatnorm --version under 0.1 s: {version * 1e3:.0f} ms (CPU {cpu['chatnorm --version'] * 1e3:.0f} ms), "
        f"{met[version < 0.1]}",
        f"chatnorm repair of {MESSAGES} messages under 0.25 s: {repair * 1e3:.0f} ms "
        f"(CPU {cpu['chatnorm repair'] * 1e3:.0f} ms), {met[repair < 0.25]}",
        f"chatnorm repair at most 2x the bare copy: {repair / copy:.2f}x "
        f"(CPU {cpu['chatnorm repair'] / cpu['bare copy']:.2f}x), {met[repair <= 2 * copy]}",
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.startup", description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=21, help="counted rounds (default 21)")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results", help="where to write")
    parser.add_argument("--valgrind", default="valgrind", help="valgrind, for the instruction counts "
                                                                   "(left out when not found)")
    args = parser.parse_args(argv)
    runs = measure(args.repeats)
    counts = count(args.valgrind) if shutil.which(args.valgrind) else {}
    text = table(runs, counts)
    notes = targets(runs)
    print(text + "\n" + "\n".join(notes))
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "startup.md").write_text(text + "\n" + "".join(f"- {n}\n" for n in notes), encoding="utf-8")
    record = {"python": sys.version, "messages": MESSAGES, "repeats": args.repeats, "targets": notes,
              "instructions": counts,
              "runs": {name: [{"wall": t.wall, "cpu": t.cpu} for t in ts] for name, ts in runs.items()}}
    (args.out / "startup.json").write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
