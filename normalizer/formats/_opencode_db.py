"""An ``opencode.db`` read where users meet it, read-only: each session one conversation.

opencode 1.18 keeps its sessions in SQLite (``~/.local/share/opencode/opencode.db``; research:
``../shared/research/agents-in-the-wild.md`` §2): tables ``session``, ``message`` and ``part``,
JSON in ``data``. A database is known by SQLite's own 16-byte header (``_database_head``),
never by its name; the readers (``_read``) hand it here instead of reading its bytes, and
each session comes out as one :class:`~._events.Conversation` whose ``extra`` names it
(``{"session": id}``), oldest first (``time_created``, then ``id``), or the one session the
``session`` reader option names.

Read-only for real: the file is opened through a ``mode=ro`` URI, so SQLite refuses every
write and makes no journal; with no write-ahead log beside it, ``immutable=1`` as well (no
lock is taken, nothing is written anywhere). A ``-wal`` beside it holds what opencode has not
checkpointed yet: ``immutable`` would read past it, so it is then read with ``mode=ro`` only.

Memory: the rows of one session come from one cursor, in order, one message (its parts) at a
time; nothing is fetched whole.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final
from urllib.parse import quote

import orjson

from .._errors import InputError
from .._report import Report
from ._common import describe, invalid
from ._events import Conversation
from ._opencode import OpencodeConverter

__all__ = [
    "connect_ro", "db_records", "session_ids", "read_db",
    "database_conversations",
]

# How the ids of a database's sessions are found, to say which ones there are.
_LIST_HINT: Final = "`chatnorm check FILE` names each session (conversation N), `opencode session list` lists them"
# At most this many ids are named in the error for a session that is not there.
_IDS_NAMED: Final = 5


def connect_ro(path: str | os.PathLike[str]) -> sqlite3.Connection:
    """``path`` opened read-only (see the module docstring: ``mode=ro``, and ``immutable=1``
    when no write-ahead log is beside it)."""
    resolved = Path(path).resolve()
    wal = resolved.with_name(resolved.name + "-wal")
    immutable = "" if wal.exists() and wal.stat().st_size > 0 else "&immutable=1"
    return sqlite3.connect(f"file:{quote(str(resolved))}?mode=ro{immutable}", uri=True)


def _data(raw: Any, what: str) -> dict[str, Any]:
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise invalid(f"{what}'s data is not JSON ({exc})", line=None, hint="Is this database corrupt?") from None
    if not isinstance(value, dict):
        raise invalid(f"{what}'s data is {describe(value)}, expected an object", line=None)
    return value


def db_records(db: sqlite3.Connection, session_id: str) -> Iterator[dict[str, Any]]:
    """One session's messages as ``opencode export`` writes them (``{"info", "parts"}``),
    ordered by id, one message's parts held at a time."""
    rows = db.execute(
        "SELECT m.id, m.data, p.id, p.data FROM message m LEFT JOIN part p ON p.message_id = m.id "
        "WHERE m.session_id = ? ORDER BY m.id, p.id", (session_id,))
    current: dict[str, Any] | None = None
    for message_id, message_data, part_id, part_data in rows:
        if current is None or current["info"]["id"] != message_id:
            if current is not None:
                yield current
            info = {**_data(message_data, f"message {message_id}"), "id": message_id, "sessionID": session_id}
            current = {"info": info, "parts": []}
        if part_id is not None:
            part = {**_data(part_data, f"part {part_id}"), "id": part_id, "sessionID": session_id, "messageID": message_id}
            current["parts"].append(part)
    if current is not None:
        yield current


def session_ids(db: sqlite3.Connection) -> Iterator[str]:
    """Every session's id, oldest first (opencode's ids themselves sort newest first)."""
    columns = {row[1] for row in db.execute("PRAGMA table_info(session)")}
    order = "time_created, id" if "time_created" in columns else "rowid"
    for (sid,) in db.execute(f"SELECT id FROM session ORDER BY {order}"):
        yield sid


def _chosen(db: sqlite3.Connection, session: str | None, source: str) -> Iterator[str]:
    """The ids to read: every session's, or the one asked for (an error if it is not there)."""
    if session is None:
        yield from session_ids(db)
        return
    if db.execute("SELECT 1 FROM session WHERE id = ?", (session,)).fetchone() is None:
        some = list(_first(session_ids(db), _IDS_NAMED + 1))
        listed = ", ".join(some[:_IDS_NAMED]) + (", ..." if len(some) > _IDS_NAMED else "") if some else "none"
        raise InputError(f"no session {session!r} in this opencode database (its sessions: {listed})",
                         source=source, hint=f"Give one of its ids with --session ({_LIST_HINT})")
    yield session


def _first(ids: Iterator[str], n: int) -> Iterator[str]:
    for i, sid in enumerate(ids):
        if i == n:
            return
        yield sid


def read_db(path: str | os.PathLike[str], session_id: str | None = None,
            report: Report | None = None) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """``(session id, chat messages)`` of one session of an ``opencode.db`` (or of every one,
    oldest first), read-only: the database is never written."""
    for conversation in database_conversations(path, session_id, report, source=str(path)):
        yield conversation.extra["session"], list(conversation.messages)


def database_conversations(path: str | os.PathLike[str], session: str | None, report: Report | None, *,
                           source: str, skip: bool = False) -> Iterator[Conversation]:
    """Each session of the database a conversation (see the module docstring). A session's
    messages are read as the consumer takes them; what it leaves unread is read past before
    the next session. A database SQLite cannot read (corrupt, locked, not opencode's) is one
    :class:`InputError` naming it. ``skip``: a message the converter refuses is left out and
    recorded (``skip_invalid``), as ``on_invalid="skip"`` does for a file's records."""
    try:
        db = connect_ro(path)
    except sqlite3.Error as exc:
        raise _unreadable(exc, source) from None
    try:
        for index, sid in enumerate(_guarded(_chosen(db, session, source), source)):
            messages = _guarded(_messages(db, sid, report, skip), source)
            yield Conversation(messages, {"session": sid}, index, None)
            for _ in messages:  # whatever the caller did not read
                pass
    finally:
        db.close()


def _messages(db: sqlite3.Connection, session: str, report: Report | None, skip: bool) -> Iterator[dict[str, Any]]:
    converter = OpencodeConverter(report)
    for record in db_records(db, session):
        try:
            messages = converter.feed(record)
        except InputError as exc:
            if not skip or report is None:
                raise
            report.add("skip_invalid", str(exc), line=None, dropped=record)
            continue
        yield from messages


def _guarded(items: Iterator[Any], source: str) -> Iterator[Any]:
    """``items``, an error of SQLite's while they are read said as an :class:`InputError`."""
    try:
        yield from items
    except sqlite3.Error as exc:
        raise _unreadable(exc, source) from None
    except InputError as exc:
        if exc.source is None or exc.source in ("<input>", "<stream>"):
            exc.located(source=source)
        raise


def _unreadable(exc: sqlite3.Error, source: str) -> InputError:
    return InputError(
        f"cannot read this SQLite database as an opencode.db: {exc}", source=source,
        hint="Is it opencode's (tables session, message, part), whole and not locked? Copy it while opencode "
        "is not running, or read an `opencode export <id>` file instead",
    )
