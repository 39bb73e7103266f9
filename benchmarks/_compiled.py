"""The compiled build's core row, run by another interpreter (``run.py --compiled PYTHON``).

``PYTHON -P -m benchmarks._compiled FILE [PROFILE]`` (``-P``: the checkout's sources are not
importable, so the installed compiled build is what runs) reads the chat JSONL file into a
list, then times ``normalizer.repair`` over it, as the in-process core row does, and prints
one JSON object: ``elapsed_s``, ``peak_rss_kb``, ``compiled`` (the core is a .so) and
``messages_out``.
"""

from __future__ import annotations

import json
import resource
import sys
import time
from collections import deque


def main() -> None:
    path, profile = sys.argv[1], (sys.argv[2] if len(sys.argv) > 2 else "default")
    import normalizer
    import normalizer._core

    with open(path, "rb") as fh:
        msgs = [json.loads(line) for line in fh if line.strip()]
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
        "peak_rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
        "compiled": normalizer._core.__file__.endswith((".so", ".pyd")),
        "messages_out": n,
    }))


if __name__ == "__main__":
    main()
