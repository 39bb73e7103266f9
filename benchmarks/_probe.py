"""Peak-RSS probes, each meant to run in a fresh process (``run.py`` starts one per point).

``python -m benchmarks._probe MODE N [--seed S] [--mix M]`` streams ``N`` generated messages
(never a list) and prints one JSON object: ``peak_rss_kb``, ``start_rss_kb`` (after imports,
before the first message), ``elapsed_s`` and ``messages_out``.

Modes:
  ``async``  this process runs ``normalizer.arepair`` (asyncio) over the generator
  ``sync``   this process runs ``normalizer.repair`` over the generator
  ``cli``    a child ``python -m normalizer repair -`` is fed the JSONL through a
             pipe; its own peak RSS is read with ``os.wait4``
  ``copy``   the same with the bare orjson copy (``benchmarks._copy``), the floor
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from typing import Any

import orjson

from ._rss import hwm_kb as _hwm_kb, rss_kb as _rss_kb
from .workload import Mix, chat_messages, jsonl_bytes

CLI_INPUT = "-"


class _Watch(threading.Thread):
    """Poll a child's ``VmHWM`` until it exits; the last value read is its peak RSS."""

    def __init__(self, pid: int, every: float = 0.02) -> None:
        super().__init__(daemon=True)
        self.pid, self.every, self.peak = pid, every, 0
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            hwm = _hwm_kb(self.pid)
            if hwm is not None:
                self.peak = max(self.peak, hwm)
            self.done.wait(self.every)


def _chunks(lines: Iterator[bytes], size: int = 1 << 20) -> Iterator[bytes]:
    buf: list[bytes] = []
    n = 0
    for line in lines:
        buf.append(line)
        n += len(line)
        if n >= size:
            yield b"".join(buf)
            buf, n = [], 0
    if buf:
        yield b"".join(buf)


def child_command(mode: str, path: str = CLI_INPUT) -> list[str]:
    """The child command line for ``cli`` and ``copy``."""
    if mode == "cli":
        return [sys.executable, "-m", "normalizer", "repair", path]
    return [sys.executable, "-m", "benchmarks._copy", path]


def run_child(cmd: list[str], feed: Iterator[bytes] | None, env: dict[str, str] | None = None) -> dict[str, Any]:
    """Run ``cmd`` (stdin fed from ``feed`` chunks, stdout discarded); wall time and peak RSS."""
    with tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            cmd,
            stdin=subprocess.PIPE if feed is not None else subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
            env=env,
        )
        watch = _Watch(proc.pid)
        watch.start()
        broken = False
        if feed is not None:
            assert proc.stdin is not None
            try:
                for chunk in feed:
                    proc.stdin.write(chunk)
            except BrokenPipeError:
                broken = True
            try:
                proc.stdin.close()
            except BrokenPipeError:
                broken = True
        # WNOWAIT: the child is left a zombie-to-be, so its /proc entry outlives the poll.
        os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)
        elapsed = time.perf_counter() - t0
        watch.done.set()
        watch.join()
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        stderr = err.read().decode("utf-8", "replace")
    return {
        "elapsed_s": elapsed,
        "peak_rss_kb": watch.peak or usage.ru_maxrss,
        "ru_maxrss_kb": usage.ru_maxrss,  # an upper bound: includes the forking parent
        "returncode": proc.returncode,
        "broken_pipe": broken,
        "stderr_tail": stderr[-2000:],
    }


def probe(mode: str, n: int, seed: int, mix: Mix, options: dict[str, Any] | None = None) -> dict[str, Any]:
    """Run one probe in this process; see the module docstring.

    ``options`` go to the core (``async``/``sync`` modes), e.g. ``{"max_records": 0}``.
    """
    options = options or {}
    if mode in ("cli", "copy"):
        start = _rss_kb()
        res = run_child(child_command(mode), _chunks(jsonl_bytes(chat_messages(n, seed=seed, mix=mix))))
        res.update(start_rss_kb=None, messages_out=None, probe_rss_kb=_rss_kb() - start)
        return res
    import normalizer

    messages = chat_messages(n, seed=seed, mix=mix)
    start = _rss_kb()
    t0 = time.perf_counter()
    count = 0
    if mode == "sync":
        for _ in normalizer.repair(messages, **options):
            count += 1
    else:

        async def consume() -> int:
            k = 0
            async for _ in normalizer.arepair(messages, **options):
                k += 1
            return k

        count = asyncio.run(consume())
    return {
        "elapsed_s": time.perf_counter() - t0,
        "peak_rss_kb": _rss_kb(),
        "start_rss_kb": start,
        "messages_out": count,
        "returncode": 0,
    }


def main(argv: list[str] | None = None) -> int:
    """Command line: ``python -m benchmarks._probe MODE N``."""
    ap = argparse.ArgumentParser(prog="python -m benchmarks._probe")
    ap.add_argument("mode", choices=("async", "sync", "cli", "copy"))
    ap.add_argument("n", type=int)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--mix", default="")
    ap.add_argument("--opt", action="append", default=[], metavar="KEY=JSON", help="core option (async/sync)")
    args = ap.parse_args(argv)
    options = {k: orjson.loads(v) for k, _, v in (o.partition("=") for o in args.opt)}
    result = probe(args.mode, args.n, args.seed, Mix.parse(args.mix), options)
    sys.stdout.buffer.write(orjson.dumps(result) + b"\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
