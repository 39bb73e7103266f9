"""The compiled build's core row, run by another interpreter (``run.py --compiled PYTHON``).

``PYTHON -P benchmarks/_compiled.py FILE [PROFILE]`` (``-P``: the checkout's sources are not
importable, so the installed compiled build is what runs) reads the chat JSONL file into a
list, repairs it once untimed, then times ``normalizer.repair`` over it again, as the
in-process core row does, and prints one JSON object: ``elapsed_s``, ``peak_rss_kb`` (this
process's own, ``_rss.py``), ``compiled`` (the core is a .so) and ``messages_out``.

The warm-up is there because the in-process rows are timed in a process that has run them
before (five interleaved rounds), while this one starts fresh every round: without it, what
a first repair loads or builds on first use (the message models, on the first message that
is not plain; the interpreter's caches) was timed against the compiled build alone.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import time
from collections import deque
from pathlib import Path
from types import ModuleType

def _rss_module() -> ModuleType:
    # benchmarks/_rss.py by its path: the checkout is not importable here (-P), on purpose.
    path = Path(__file__).with_name("_rss.py")
    spec = importlib.util.spec_from_file_location("_chatnorm_bench_rss", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> None:
    path, profile = sys.argv[1], (sys.argv[2] if len(sys.argv) > 2 else "default")
    import normalizer
    import normalizer._core._normalizer

    with open(path, "rb") as fh:
        msgs = [json.loads(line) for line in fh if line.strip()]
    deque(normalizer.repair(msgs, profile=profile), maxlen=0)  # the warm-up (docstring)
    out = deque(maxlen=1)
    t0 = time.perf_counter()
    stream = normalizer.repair(msgs, profile=profile)
    n = 0
    for message in stream:
        out.append(message)
        n += 1
    elapsed = time.perf_counter() - t0
    print(json.dumps({
        "elapsed_s": elapsed,
        "peak_rss_kb": _rss_module().rss_kb(),
        "compiled": normalizer._core._normalizer.__file__.endswith((".so", ".pyd")),
        "messages_out": n,
    }))


if __name__ == "__main__":
    main()
