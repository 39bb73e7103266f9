"""Hostile shapes against the documented limits: memory stays bounded, time stays linear.

``python -m benchmarks.limits [--sizes 1000,2000,5000,10000] [--out benchmarks/results]``

Every scenario runs in a fresh process (so its peak RSS is its own, read from ``VmHWM``)
and prints one JSON object; this driver collects them into a table and ``limits.json``.

Bounded memory (one run each; the outcome is the error the library gives, or ``ok``):

* ``deep_document``: a 400 KB JSON document nested 200,000 levels deep (was: 22 GB, OOM kill);
* ``long_record``: a JSON array whose one record is 80 MB, past ``max_record_bytes``;
* ``deep_line``: a JSONL line nested 300 levels deep (valid JSON orjson cannot write back);
* ``held_images``: 2,000 user messages each carrying a distinct 1 MB ``image_url`` part, held
  behind an open call (was: 1.94 GB, no error; the limit is ``max_held_bytes``, 256 MiB);
* ``profile_dev_zero``: a profile file that ``extends = "/dev/zero"`` (was: reads forever).

Linear time (per-unit cost at each of ``--sizes``; flat means linear):

* ``merge_assistant``: N assistant fragments of 20 KB merged into one turn (core);
* ``merge_user``: N user messages of 20 KB merged into one (core);
* ``stage_merge``: N user messages of 20 KB under the ``anthropic`` profile's alternation;
* ``duplicate_ids``: N calls sharing one id in one turn, each renamed (core).

Linear time on shapes a sweep found quadratic (each with the report's records streamed to a
listener, as ``--report`` streams them, or through the command itself):

* ``conflict_fragments``: N assistant fragments whose every one changes an extra key (each
  record named every index before it: 10,000 took 37 s and 436 MB with ``--report``);
* ``unanswered_fragments``: N one-call fragments left unanswered (each stub record listed
  every fragment: 5,000 took 17 s);
* ``moved_results``: N/2 calls, N/4 user messages, then the N/2 results (each move record
  listed every deferred message);
* ``finetune_line``: one conversation of N messages of 20 KB written as one fine-tuning line
  (the writer held the conversation: peak RSS grew with N);
* ``blank_separated``: ``chatnorm repair`` on 8 N KB of chat JSONL with a blank line after
  each record (the format peek read 64 MiB ahead, joining the head at every chunk);
* ``backslash_run``: a JSON document whose one string is a run of N KB of backslashes (a
  pass over each 256 KiB piece per backslash: 240 KB took 107 s);
* ``escaped_results``: a pretty JSON array of N tool results of 16 KB of JSON text (the quote
  opening a string cut by a piece boundary was found by copying the piece up to each
  escaped quote);
* ``long_string``: ``cat doc.json | chatnorm repair -`` on a JSON document whose one string
  is N units of 4 KB of JSON text (ijson's lexer read the string again from its start at
  each slice pushed, and a pipe's reads are 64 KiB: 16 MB took 9 s).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
KB = 1024
MB = 1024 * KB


def _hwm_mb() -> float:
    with open("/proc/self/status", "rb") as fh:
        for line in fh:
            if line.startswith(b"VmHWM:"):
                return int(line.split()[1]) / KB
    return float("nan")


def _outcome(run: Callable[[], object]) -> tuple[str, float]:
    """Run, and say how it ended: ``ok`` or the exception's class and first words."""
    start = time.perf_counter()
    try:
        run()
        outcome = "ok"
    except Exception as exc:  # noqa: BLE001 - the outcome is what we report
        outcome = f"{type(exc).__name__}: {str(exc)[:90]}"
    return outcome, time.perf_counter() - start


# --------------------------------------------------------------------------- scenarios (child side)


def deep_document(workdir: Path, n: int) -> Callable[[], object]:
    path = workdir / "deep.json"
    path.write_bytes(b"[" * 200_000 + b"]" * 200_000)
    from normalizer import read_messages

    return lambda: list(read_messages(path))


def long_record(workdir: Path, n: int) -> Callable[[], object]:
    path = workdir / "long.json"
    with path.open("wb") as fh:
        fh.write(b'[{"role": "user", "content": "')
        chunk = b"x" * MB
        for _ in range(80):
            fh.write(chunk)
        fh.write(b'"}]')
    from normalizer import read_messages

    return lambda: list(read_messages(path))


def deep_line(workdir: Path, n: int) -> Callable[[], object]:
    path = workdir / "deep.jsonl"
    path.write_bytes(b'{"role": "user", "content": "hi", "x": ' + b"[" * 300 + b"]" * 300 + b"}\n")
    from normalizer import repair, read_messages, write_jsonl

    # written back out, as the CLI does: orjson reads 300 levels but cannot write them
    return lambda: write_jsonl(repair(read_messages(path)), workdir / "out.jsonl")


def held_images(workdir: Path, n: int) -> Callable[[], object]:
    from normalizer import repair

    def history() -> Iterator[dict[str, Any]]:
        yield {"role": "user", "content": "look"}
        yield {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}
        for i in range(2000):
            # a distinct string each time, so the held bytes are real memory
            url = f"data:image/png;base64,{i:08d}" + "A" * MB
            yield {"role": "user", "content": [{"type": "image_url", "image_url": {"url": url}}]}
        yield {"role": "tool", "tool_call_id": "c1", "content": "done"}

    return lambda: sum(1 for _ in repair(history()))


def profile_dev_zero(workdir: Path, n: int) -> Callable[[], object]:
    path = workdir / "p.toml"
    path.write_text('extends = "/dev/zero"\n', encoding="utf-8")
    from normalizer import load_profile

    return lambda: load_profile(path)


FRAGMENT = "y" * (20 * KB)


def merge_assistant(workdir: Path, n: int) -> Callable[[], object]:
    from normalizer import repair

    msgs = [{"role": "user", "content": "go"}] + [{"role": "assistant", "content": f"{i} {FRAGMENT}"} for i in range(n)]
    return lambda: list(repair(msgs))


def merge_user(workdir: Path, n: int) -> Callable[[], object]:
    from normalizer import repair

    msgs = [{"role": "user", "content": f"{i} {FRAGMENT}"} for i in range(n)]
    return lambda: list(repair(msgs))


def stage_merge(workdir: Path, n: int) -> Callable[[], object]:
    from normalizer import repair

    # user, then system messages: the core keeps them apart, the anthropic profile turns a
    # mid-history system into user text and merges it into the user turn (alternation)
    msgs: list[dict[str, Any]] = [{"role": "user", "content": "start"}]
    msgs += [{"role": "system", "content": f"{i} {FRAGMENT}"} for i in range(n)]
    msgs.append({"role": "assistant", "content": "ok"})
    return lambda: list(repair(msgs, profile="anthropic"))


def duplicate_ids(workdir: Path, n: int) -> Callable[[], object]:
    from normalizer import repair

    calls = [{"id": "a", "type": "function", "function": {"name": "f", "arguments": f'{{"i": {i}}}'}} for i in range(n)]
    msgs = [{"role": "user", "content": "go"}, {"role": "assistant", "content": None, "tool_calls": calls}]
    return lambda: list(repair(msgs))


def _call(i: int) -> dict[str, Any]:
    return {"id": f"c{i}", "type": "function", "function": {"name": "f", "arguments": "{}"}}


def _streamed(msgs: list[dict[str, Any]]) -> Callable[[], object]:
    """Repair with every record streamed to a listener and none kept (as ``--report``)."""
    from normalizer import repair

    return lambda: sum(1 for _ in repair(msgs, max_records=0, on_record=lambda record: record.detail))


def conflict_fragments(workdir: Path, n: int) -> Callable[[], object]:
    return _streamed([{"role": "user", "content": "go"}]
                     + [{"role": "assistant", "content": f"f{i}", "meta": {"n": i}} for i in range(n)])


def unanswered_fragments(workdir: Path, n: int) -> Callable[[], object]:
    return _streamed([{"role": "user", "content": "go"}]
                     + [{"role": "assistant", "content": None, "tool_calls": [_call(i)]} for i in range(n)])


def moved_results(workdir: Path, n: int) -> Callable[[], object]:
    calls = n // 2  # (what is held stays under max_held_messages at N = 10,000)
    return _streamed([{"role": "user", "content": "go"},
                      {"role": "assistant", "content": None, "tool_calls": [_call(i) for i in range(calls)]}]
                     + [{"role": "user", "content": f"u{i}"} for i in range(calls // 2)]
                     + [{"role": "tool", "tool_call_id": f"c{i}", "content": "r"} for i in range(calls)])


def finetune_line(workdir: Path, n: int) -> Callable[[], object]:
    from normalizer import write_finetune

    def messages() -> Iterator[dict[str, Any]]:
        for i in range(n):  # made as they are written: what is held is the writer's
            yield {"role": "user" if i % 2 == 0 else "assistant", "content": f"{i:08d}" + FRAGMENT}

    return lambda: write_finetune([(messages(), {})], workdir / "train.jsonl")


def _command(args: list[str]) -> Callable[[], object]:
    from normalizer.cli._main import main

    def run() -> object:
        status = main(["repair", "-q", *args])
        if status:
            raise RuntimeError(f"chatnorm repair exited {status}")
        return status

    return run


def blank_separated(workdir: Path, n: int) -> Callable[[], object]:
    path = workdir / "blank.jsonl"
    pair = b"".join(json.dumps({"role": role, "content": "x" * 1000}).encode() + b"\n\n"
                    for role in ("user", "assistant"))
    path.write_bytes(pair * 4 * n)  # a unit: 8 KB
    return _command([str(path), "-o", str(workdir / "out.jsonl")])


def backslash_run(workdir: Path, n: int) -> Callable[[], object]:
    path = workdir / "run.json"
    path.write_bytes(b'[{"role": "user", "content": "' + b"\\" * (n * 512) + b'"}]')
    return _command([str(path), "-o", str(workdir / "out.jsonl")])


def escaped_results(workdir: Path, n: int) -> Callable[[], object]:
    path = workdir / "results.json"
    text = json.dumps({"rows": [{"k": f"v{i}", "q": 'say "hi"'} for i in range(500)]})  # 16 KB of JSON text
    msgs: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    for i in range(n):
        msgs += [{"role": "assistant", "content": None, "tool_calls": [_call(i)]},
                 {"role": "tool", "tool_call_id": f"c{i}", "content": text}]
    path.write_text(json.dumps(msgs, indent=2), encoding="utf-8")
    return _command([str(path), "-o", str(workdir / "out.jsonl")])


def _piped(path: Path, args: list[str]) -> Callable[[], object]:
    """``cat PATH | chatnorm repair - ARGS``, in this process: the command reads its standard
    input as it reads any pipe, what is there (64 KiB at most on Linux), not a 256 KiB chunk."""
    command = _command(["-", *args])

    def run() -> object:
        read, write = os.pipe()

        def cat() -> None:
            try:
                with path.open("rb") as src, open(write, "wb") as out:
                    shutil.copyfileobj(src, out)
            except BrokenPipeError:
                pass  # the command stopped reading: its error says why

        writer = threading.Thread(target=cat)
        writer.start()
        stdin, sys.stdin = sys.stdin, io.TextIOWrapper(open(read, "rb"))
        try:
            return command()
        finally:
            sys.stdin.close()
            sys.stdin = stdin
            writer.join()

    return run


def long_string(workdir: Path, n: int) -> Callable[[], object]:
    path = workdir / "long.json"
    line = json.dumps('    print("résumé", x)  # 漢字\n', ensure_ascii=False)[1:-1].encode()  # JSON text, escaped
    unit = line * (4 * KB // len(line))  # a unit: about 4 KB
    with path.open("wb") as fh:
        fh.write(b'[{"role": "user", "content": "')
        for _ in range(n):
            fh.write(unit)
        fh.write(b'"}]')
    return _piped(path, ["-o", str(workdir / "out.jsonl")])


BOUNDED = {f.__name__: f for f in (deep_document, long_record, deep_line, held_images, profile_dev_zero)}
LINEAR = {f.__name__: f for f in (merge_assistant, merge_user, stage_merge, duplicate_ids, conflict_fragments,
                                  unanswered_fragments, moved_results, finetune_line, blank_separated,
                                  backslash_run, escaped_results, long_string)}


def child(name: str, n: int) -> None:
    scenario = {**BOUNDED, **LINEAR}[name]
    with tempfile.TemporaryDirectory() as tmp:
        run = scenario(Path(tmp), n)
        before = _hwm_mb()
        outcome, seconds = _outcome(run)
    print(json.dumps({"scenario": name, "n": n, "outcome": outcome, "seconds": seconds,
                      "peak_rss_mb": _hwm_mb(), "setup_rss_mb": before}))


# --------------------------------------------------------------------------- driver


def run_child(name: str, n: int, timeout: float) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "benchmarks.limits", "--child", name, str(n)]
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=ROOT, env=env)
    except subprocess.TimeoutExpired:
        return {"scenario": name, "n": n, "outcome": f"TIMEOUT after {timeout:.0f} s", "seconds": None, "peak_rss_mb": None}
    if done.returncode != 0:
        return {"scenario": name, "n": n, "outcome": f"crashed (exit {done.returncode}): {done.stderr.strip()[-200:]}",
                "seconds": None, "peak_rss_mb": None}
    row: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return row


def table(bounded: list[dict[str, Any]], linear: list[dict[str, Any]]) -> str:
    out = ["| scenario | outcome | seconds | peak RSS MB |", "|---|---|---:|---:|"]
    for r in bounded:
        secs = "—" if r["seconds"] is None else f"{r['seconds']:.3f}"
        rss = "—" if r["peak_rss_mb"] is None else f"{r['peak_rss_mb']:.0f}"
        out.append(f"| {r['scenario']} | {r['outcome']} | {secs} | {rss} |")
    out += ["", "| scenario | N | µs per unit | total s | peak RSS MB | outcome |", "|---|---:|---:|---:|---:|---|"]
    for r in linear:
        per = "—" if r["seconds"] is None else f"{r['seconds'] / r['n'] * 1e6:.1f}"
        secs = "—" if r["seconds"] is None else f"{r['seconds']:.3f}"
        rss = "—" if r["peak_rss_mb"] is None else f"{r['peak_rss_mb']:.0f}"
        out.append(f"| {r['scenario']} | {r['n']:,} | {per} | {secs} | {rss} | {r['outcome']} |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.limits", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="1000,2000,5000,10000", help="N for the linear-time scenarios")
    ap.add_argument("--only", default="", help="comma-separated scenario names (default: all)")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds before a scenario counts as hung")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results"))
    ap.add_argument("--child", nargs=2, metavar=("SCENARIO", "N"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child(args.child[0], int(args.child[1]))
        return 0
    only = set(filter(None, args.only.split(",")))
    sizes = [int(s) for s in args.sizes.split(",")]
    bounded = [run_child(name, 0, args.timeout) for name in BOUNDED if not only or name in only]
    linear = [run_child(name, n, args.timeout) for name in LINEAR if not only or name in only for n in sizes]
    text = table(bounded, linear)
    print(text)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "limits.json").write_text(json.dumps({"bounded": bounded, "linear": linear}, indent=2) + "\n", encoding="utf-8")
    (out / "limits.md").write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
