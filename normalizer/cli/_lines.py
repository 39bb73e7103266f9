"""Which line of a JSONL file a message came from, for error messages and ``check``.

The core counts messages, not lines, and the readers do not (yet) say which record produced
the message they yield. Messages and lines drift apart (blank lines, skipped records, a
Claude Code line that becomes two messages or none), so counting lines here would be
wrong for every format but the simplest. Instead, when a position is needed, the file is
read a second time through the very pipeline the readers use (``formats._read._Pipeline``
over ``_records.iter_records``), counting the messages each record produces.

That costs a second read, only on the error path (or once per ``check``ed file that has
violations), and works for regular files only: stdin cannot be read twice, so there the
position stays "message N". Documents (a JSON array) have no lines either.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from .._report import Report

__all__ = ["lines_of"]


def lines_of(path: str, fmt: str | None, indices: Iterable[int]) -> dict[int, int]:
    """``{message index: 1-based line}`` for the wanted indices (those it could find)."""
    wanted = sorted(set(indices))
    if not wanted or path == "-" or fmt is None or not os.path.isfile(path):
        return {}
    try:
        # Private to the formats package; on the error path only, and guarded.
        from ..formats._records import iter_raw_lines, iter_records
        from ..formats._codex import plan_codex
        from ..formats._read import _Pipeline
    except ImportError:  # pragma: no cover - the formats package moved things around
        return {}
    found: dict[int, int] = {}
    try:
        with open(path, "rb") as f:
            pipeline = _Pipeline(fmt, path, Report(), "skip", {})
            if pipeline.pending_plan:
                with open(path, "rb") as g:
                    plan = plan_codex(iter_raw_lines(g, path))
                pipeline.set_plan(plan)
            count = 0
            pos = 0
            for rec in iter_records(f, path, on_invalid="skip", report=None):
                line = rec[2]
                if line is None:
                    return {}  # a JSON document: no lines to speak of
                for ev in pipeline.push(rec):
                    if ev[0] != "msg":
                        continue
                    while pos < len(wanted) and wanted[pos] == count:
                        found[wanted[pos]] = line
                        pos += 1
                    count += 1
                    if pos == len(wanted):
                        return found
    except Exception:  # noqa: BLE001 - a position is a nicety; never fail the error report
        return found
    return found
