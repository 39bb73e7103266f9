"""The per-file cost: ``chatnorm repair DIR -o OUT`` on a folder of small session files,
against the bare copy of the same folder (``python -m benchmarks._copy --tree``: every file
through orjson, each output written as the CLI writes one -- temporary file, fsync, rename).

Millions of stored sessions are millions of small files, one session each: what a file
costs besides its messages (planning its output, opening, detecting its format, a core and
a report for it, the atomic write) is paid a million times. Counted as the instruction
benchmark counts (valgrind's cachegrind, ``benchmarks/instructions.py``): each command runs
on a folder of ``--small`` and of ``--big`` files, and

* instructions a file = (Ir(big) − Ir(small)) / (big − small),
* start-up = Ir(small) − small × instructions a file.

The files are the scale benchmark's ``sessions`` layout with one conversation a file
(``benchmarks/corpus.py``: about 12.5 messages and 2.1 KB, with the defects of real
exports). A file's system calls (create, fsync, rename) cost the same in both commands and
are not instructions of the process: the wall-clock side of this is the scale benchmark's
floor row. Writes ``files.json`` and ``files.md`` to ``--out``.

    python -m benchmarks.files                      # 200 and 600 files
    python -m benchmarks.files --compiled PYTHON    # and the CLI of a compiled build
"""

from __future__ import annotations

import argparse
import json
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from .corpus import session_files
from .instructions import ROOT, per_message, run_counted, run_native, valgrind_version

__all__ = ["main", "commands"]


def commands(compiled: str = "") -> dict[str, Any]:
    """What is measured: name -> a function of (source folder, output folder) to the command."""
    found: dict[str, Any] = {
        "cli": lambda src, out: [sys.executable, "-m", "normalizer", "repair", "-q", str(src), "-o", str(out)],
        "copy": lambda src, out: [sys.executable, "-m", "benchmarks._copy", "--tree", str(src), str(out)],
    }
    if compiled:
        found["cli_compiled"] = lambda src, out: [compiled, "-P", "-m", "normalizer", "repair", "-q", str(src),
                                                  "-o", str(out)]
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--small", type=int, default=200, help="files in the small folder")
    parser.add_argument("--big", type=int, default=600, help="files in the big folder")
    parser.add_argument("--compiled", default="", help="an interpreter with the compiled build installed")
    parser.add_argument("--valgrind", default="valgrind")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results")
    args = parser.parse_args(argv)
    if args.big <= args.small:
        parser.error(f"--big ({args.big}) must be more than --small ({args.small})")
    if shutil.which(args.valgrind) is None:
        parser.error(f"{args.valgrind}: not found (install valgrind, or give --valgrind PATH)")
    start = time.perf_counter()
    rows: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="chatnorm-files-") as tmp_name:
        tmp = Path(tmp_name)
        folders = {n: tmp / f"sessions-{n}" for n in (args.small, args.big)}
        for n, folder in folders.items():
            session_files(folder, n, turns_per_file=1)
        for name, command in commands(args.compiled).items():
            probe = "cli_compiled" if name == "cli_compiled" else ""  # (its own build, not the checkout)
            run_native(command(folders[args.small], tmp / "warm"), probe)  # works, and every .pyc is written
            counts = {}
            for n, folder in folders.items():
                out = tmp / f"out-{name}-{n}"
                counts[n], _ = run_counted(args.valgrind, command(folder, out), tmp, f"{name}.{n}", probe)
                shutil.rmtree(out)
            shutil.rmtree(tmp / "warm")
            per_file = per_message(counts[args.small], counts[args.big], args.small, args.big)  # (a file, here)
            rows[name] = {"per_file": round(per_file), "startup": round(counts[args.small] - args.small * per_file)}
            print(f"{name:13} {per_file:12,.0f} instructions a file, start-up {rows[name]['startup']:,}", flush=True)
    ratios = {f"copy/{name}": round(rows["copy"]["per_file"] / rows[name]["per_file"], 3)
              for name in rows if name != "copy"}
    meta = {"small": args.small, "big": args.big, "python": platform.python_version(),
            "valgrind": valgrind_version(args.valgrind), "seconds": round(time.perf_counter() - start, 1),
            "date": time.strftime("%Y-%m-%d")}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "files.json").write_text(json.dumps({"meta": meta, "rows": rows, "ratios": ratios}, indent=1) + "\n")
    table = ("| command | instructions a file | start-up (instructions) |\n|---|---:|---:|\n"
             + "".join(f"| {name} | {r['per_file']:,} | {r['startup']:,} |\n" for name, r in rows.items())
             + "\n" + "".join(f"{k.replace('/', ' ÷ ')} (a file's throughput, start-up aside): {v}\n"
                              for k, v in ratios.items()))
    (args.out / "files.md").write_text(table)
    print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
