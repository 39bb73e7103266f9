"""Peak RSS of a process, read the one way that is right in a child: no imports of this
package or of ``normalizer``, so ``_compiled.py`` (run with ``-P``, the checkout not
importable) loads it by its path, and ``_probe`` imports it."""

from __future__ import annotations

import resource


def hwm_kb(pid: int | str = "self") -> int | None:
    """``VmHWM`` (peak RSS of the current address space; exec resets it), or None."""
    try:
        with open(f"/proc/{pid}/status", "rb") as fh:
            for line in fh:
                if line.startswith(b"VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return None


def rss_kb() -> int:
    """Peak RSS of this process since its exec.

    ``ru_maxrss`` is not used where ``VmHWM`` exists: Linux carries the *parent's* RSS at
    fork time into the child's ``ru_maxrss``, which would charge the benchmark runner's
    memory to the probe.
    """
    hwm = hwm_kb()
    return hwm if hwm is not None else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
