"""A session (Claude Code, Codex, Gemini CLI) repaired in its own format
(``formats._sessions``): bytes in, bytes out."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from .._errors import InputError, UsageError
from .._report import Repair, Report, new_report
from ..formats._writing import FLUSH_BYTES
from ..formats._records import CHUNK_BYTES
from .plan import Job
from .results import FileResult, Settings
from .stop import STOP, Interrupted
from .streams import Input, Output
from .text import warn
from .tracking import Tracker

if TYPE_CHECKING:
    from ..formats._sessions import SessionRepairer

__all__ = ["pump_session", "repair_session"]


def repair_session(src: Input, job: Job, settings: Settings, fmt: str, report: Report, *,
                   output: Callable[[bytes, bool], None], read: Callable[[bytes], None] | None = None) -> SessionRepairer:
    """Repair the session ``src`` in its own format ``fmt``: the one place a file's
    ``SessionRepairer`` is made and fed, for ``repair`` (:func:`pump_session`) and for
    ``repair --check``/``--diff`` (``cli._diff``) alike, so both refuse the same options
    with the same words (naming the file, saying what to do).

    Each chunk read is given to ``read`` (before it is repaired), and what the repair writes
    for it to ``output`` (``end``: the input is done, and this is the repairer's last word).
    Returns the repairer, which knows the format read and a torn last line."""
    if settings.provider:
        raise InputError(
            f"--profile {settings.profile.name} shapes chat messages for a provider; a session repaired in its own "
            "format keeps its own", source=job.name, hint="Give --to jsonl to write the provider's chat messages",
        )
    from ..formats._sessions import SessionRepairer  # only for session files: start-up of the rest

    try:
        repairer = SessionRepairer(fmt, report=report, on_invalid=settings.on_invalid, source=job.name,
                                   **settings.session_options)
    except UsageError as exc:
        raise InputError(f"{exc}", source=job.name, hint="Give --to jsonl to repair it as chat messages") from None
    while True:
        chunk = src.read(CHUNK_BYTES)
        if read is not None:
            read(chunk)
        output(repairer.feed(chunk) if chunk else repairer.close(), not chunk)
        if not chunk:
            return repairer


def pump_session(src: Input, out: Output, job: Job, settings: Settings, tracker: Tracker, result: FileResult,
                 on_record: Callable[[Repair], None] | None, fmt: str) -> None:
    """A session repaired in its own format (``formats._sessions``): bytes in, bytes out."""
    report = new_report(max_records=0, on_record=on_record)
    buf = out.buf
    done = 0

    def output(data: bytes, end: bool) -> None:
        nonlocal done
        buf.extend(data)
        if len(buf) >= FLUSH_BYTES or end:
            out.drain()
            tracker.advance(report.messages_in - result.messages_in, src.bytes - done)
            result.messages_in, done = report.messages_in, src.bytes
            if STOP.is_set():
                raise Interrupted(0)

    repairer = repair_session(src, job, settings, fmt, report, output=output)
    if repairer.torn is not None:
        warn(f"warning: {job.name}:{repairer.torn}: the last line is torn (no newline, not JSON: its writer stopped "
             "mid-line); left out, as the tool skips it on resume, and kept whole in the report")
    result.format = repairer.format
    result.conversations = 1 if repairer.format is not None else 0
    result.messages_in, result.messages_out = report.messages_in, report.messages_out
    result.counts.update(report.counts)
