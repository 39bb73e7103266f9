"""The CLI's floor: a bare orjson JSONL copy.

* ``python -m benchmarks._copy FILE > OUT``: reads the file line by line, ``orjson.loads``
  + ``orjson.dumps`` each line, writes stdout. Same I/O pattern as ``normalizer repair
  FILE``, with no repair at all.
* ``python -m benchmarks._copy --tree SRC DST``: every ``.jsonl`` file under SRC copied so
  into the same place under DST, each written as ``chatnorm repair SRC -o DST`` writes an
  output: a temporary file in its folder, synced, then renamed over the destination. The
  floor of the scale benchmark's many-files rows (``benchmarks/scale.py``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

import orjson


def copy_lines(src: Any, write: Callable[[bytes], Any]) -> None:
    """Every non-blank line of ``src`` through ``orjson.loads`` + ``orjson.dumps`` to ``write``."""
    loads, dumps, opt = orjson.loads, orjson.dumps, orjson.OPT_APPEND_NEWLINE
    for line in src:
        if line.strip():
            write(dumps(loads(line), option=opt))


def copy_tree(src: str, dst: str) -> int:
    """Copy every ``.jsonl`` file under ``src`` into ``dst`` (see the module docstring);
    how many files."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    n = 0
    for folder, dirs, files in os.walk(src):
        dirs.sort()
        into = os.path.join(dst, os.path.relpath(folder, src))
        os.makedirs(into, exist_ok=True)
        for name in sorted(files):
            if not name.endswith(".jsonl"):
                continue
            tmp = os.path.join(into, f".{name}.copy-tmp.{os.getpid()}")
            with open(os.path.join(folder, name), "rb") as f, os.fdopen(os.open(tmp, flags, 0o666), "wb") as out:
                copy_lines(f, out.write)
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, os.path.join(into, name))
            n += 1
    return n


def main(argv: list[str] | None = None) -> int:
    """Copy ``argv[0]`` (or stdin for ``-``) to stdout through orjson; or ``--tree SRC DST``."""
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["--tree"]:
        copy_tree(args[1], args[2])
        return 0
    out = sys.stdout.buffer
    src = sys.stdin.buffer if not args or args[0] == "-" else open(args[0], "rb")  # noqa: SIM115
    with src:
        copy_lines(src, out.write)
    out.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
