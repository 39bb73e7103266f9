"""A Claude Code session or a Codex rollout repaired in its own format
(``formats._sessions``): bytes in, bytes out."""

from __future__ import annotations

from collections.abc import Callable

from .._errors import InputError, UsageError
from .._report import Repair, new_report
from ..formats._encode import FLUSH_BYTES
from ..formats._records import CHUNK_BYTES
from .plan import Job
from .results import FileResult, Settings
from .stop import STOP, Interrupted
from .streams import Input, Output
from .text import warn
from .tracking import Tracker

__all__ = ["pump_session"]


def pump_session(src: Input, out: Output, job: Job, settings: Settings, tracker: Tracker, result: FileResult,
                  on_record: Callable[[Repair], None] | None, fmt: str) -> None:
    """A session repaired in its own format (``formats._sessions``): bytes in, bytes out."""
    if settings.provider:
        raise InputError(
            f"--profile {settings.profile.name} shapes chat messages for a provider; a session repaired in its own "
            "format keeps its own", source=job.name, hint="Give --to jsonl to write the provider's chat messages",
        )
    from ..formats._sessions import SessionRepairer  # only for session files: start-up of the rest

    report = new_report(max_records=0, on_record=on_record)
    try:
        repairer = SessionRepairer(fmt, report=report, on_invalid=settings.on_invalid, source=job.name,
                                   **settings.session_options)
    except UsageError as exc:
        raise InputError(f"{exc}", source=job.name, hint="Give --to jsonl to repair it as chat messages") from None
    buf = out.buf
    done = 0
    while True:
        chunk = src.read(CHUNK_BYTES)
        buf += repairer.feed(chunk) if chunk else repairer.close()
        if len(buf) >= FLUSH_BYTES or not chunk:
            out.drain()
            tracker.advance(report.messages_in - result.messages_in, src.bytes - done)
            result.messages_in, done = report.messages_in, src.bytes
            if STOP.is_set():
                raise Interrupted(0)
        if not chunk:
            break
    if repairer.torn is not None:
        warn(f"warning: {job.name}:{repairer.torn}: the last line is torn (no newline, not JSON: its writer stopped "
            "mid-line); left out, as the tool skips it on resume, and kept whole in the report")
    result.format = repairer.format
    result.conversations = 1 if repairer.format is not None else 0
    result.messages_in, result.messages_out = report.messages_in, report.messages_out
    result.counts.update(report.counts)

