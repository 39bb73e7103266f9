"""An ``opencode.db`` where users meet it: ``read_messages`` / ``read_conversations`` and
``chatnorm check`` / ``repair`` read it read-only, each session one conversation
(``normalizer/formats/_opencode_db.py``). The databases are built from the exports opencode
wrote (``../shared/samples/wild/opencode/``) in the tables opencode 1.18 writes
(``test_opencode.make_db``); the real opencode's own database is in ``test_opencode_owner``."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import test_opencode as oc

import normalizer
from normalizer.formats import aread_conversations, read_conversations, read_messages
from normalizer.formats._common import without_source
from normalizer.formats._opencode import read_export as export_messages

from realdata import HAVE_SAMPLES, SAMPLES

pytestmark = pytest.mark.skipif(not HAVE_SAMPLES, reason="no ../shared/ (the opencode exports)")

ONE_CALL = SAMPLES / "wild" / "opencode" / "export-one-call.json"
KILLED = SAMPLES / "wild" / "opencode" / "export-killed-during-bash.json"


def read_export(doc: Any) -> list[dict[str, Any]]:
    """An export's chat messages as the readers hand them out: its parts' states and the
    like are kept aside, for the opencode writer, not on the messages."""
    return [without_source(m) for m in export_messages(doc)]


def load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_bytes())  # type: ignore[no-any-return]


def cli(*args: Any, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "normalizer", *map(str, args)], capture_output=True, timeout=60,
                          input=stdin)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """Two sessions: the one-call export (created first) and the killed-during-bash one."""
    path = tmp_path / "data" / "opencode.db"  # alone in its folder: nothing may appear beside it
    path.parent.mkdir()
    oc.make_db(path, load(ONE_CALL), load(KILLED))
    return path


def sid(path: Path) -> str:
    return str(load(path)["info"]["id"])


def state(path: Path) -> tuple[bytes, int, list[str]]:
    """What must not change: the file's bytes, its mtime, and what lies beside it."""
    return path.read_bytes(), path.stat().st_mtime_ns, sorted(p.name for p in path.parent.iterdir())


def test_the_library_reads_each_session_as_its_export(db: Path) -> None:
    stream = read_conversations(db)
    conversations = [(c.index, c.extra, list(c.messages)) for c in stream]
    assert stream.format == "opencode" and stream.container == "sqlite"
    assert conversations == [(0, {"session": sid(ONE_CALL)}, read_export(load(ONE_CALL))),
                             (1, {"session": sid(KILLED)}, read_export(load(KILLED)))]
    for path in (ONE_CALL, KILLED):
        assert list(read_messages(db, format="opencode", session=sid(path))) == read_export(load(path))


def test_the_async_reader_reads_it_too(db: Path) -> None:
    import anyio

    async def main() -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
        return [(c.extra, [m async for m in c.messages] if hasattr(c.messages, "__aiter__") else list(c.messages))
                async for c in aread_conversations(db, session=sid(KILLED))]

    assert anyio.run(main) == [({"session": sid(KILLED)}, read_export(load(KILLED)))]


def test_read_messages_of_several_sessions_says_how_to_choose_one(db: Path) -> None:
    with pytest.raises(normalizer.InputError) as info:
        list(read_messages(db))
    assert str(info.value) == (
        f"{db}: this file holds several conversations. Read it with read_conversations() (on the command line: "
        "--to finetune); or read one session of it: session=ID (on the command line: --session ID)")


def test_a_session_that_is_not_there_lists_the_ids(db: Path) -> None:
    result = cli("repair", "--session", "ses_nope", db)
    assert result.returncode == 1
    assert result.stderr.decode().splitlines()[0] == (
        f"error: {db}: no session 'ses_nope' in this opencode database (its sessions: {sid(ONE_CALL)}, "
        f"{sid(KILLED)}). Give one of its ids with --session (`chatnorm check FILE` names each session "
        "(conversation N), `opencode session list` lists them)")


def test_known_by_its_header_not_its_name(db: Path, tmp_path: Path) -> None:
    disguised = tmp_path / "history.jsonl"
    shutil.copyfile(db, disguised)
    assert [c.extra for c in read_conversations(disguised)] == [{"session": sid(ONE_CALL)}, {"session": sid(KILLED)}]
    not_one = tmp_path / "export.db"
    shutil.copyfile(ONE_CALL, not_one)
    assert list(read_messages(not_one)) == read_export(load(ONE_CALL))


def test_another_format_named_is_refused(db: Path) -> None:
    with pytest.raises(normalizer.InputError, match=r"this is a SQLite database, not a chat file\. An opencode\.db "
                       r"is read with --from opencode \(or --from auto\)"):
        list(read_messages(db, format="chat"))


def test_check_names_each_session_and_flags_the_empty_content(db: Path) -> None:
    before = state(db)
    result = cli("check", "--profile", "anthropic", "--select", "AN-7a", db)
    assert result.returncode == 1
    assert result.stdout.decode().splitlines() == [
        f"{db}: conversation 0 (session {sid(ONE_CALL)}) message 1: AN-7a [content.tool_only_assistant] messages: "
        "text content blocks must be non-empty",
        f"{db}: conversation 1 (session {sid(KILLED)}) message 1: AN-7a [content.tool_only_assistant] messages: "
        "text content blocks must be non-empty",
        f"{db}: conversation 1 (session {sid(KILLED)}) message 4: AN-7a [content.tool_only_assistant] messages: "
        "text content blocks must be non-empty",
    ]
    found = json.loads(cli("check", "--profile", "anthropic", "--select", "AN-7a", "--output-format", "json",
                           "--session", sid(KILLED), db).stdout)
    assert [(f["conversation"], f["session"], f["message_index"]) for f in found] == [(0, sid(KILLED), 1),
                                                                                     (0, sid(KILLED), 4)]
    assert state(db) == before


def test_repair_writes_every_session_with_its_id_and_records_each_change(db: Path, tmp_path: Path) -> None:
    before = state(db)
    report = tmp_path / "report.json"
    result = cli("repair", "--to", "finetune", "--report", report, db)
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [line["session"] for line in lines] == [sid(ONE_CALL), sid(KILLED)]
    assert [list(normalizer.repair(read_export(load(p)))) for p in (ONE_CALL, KILLED)] == [
        line["messages"] for line in lines]
    assert json.loads(report.read_bytes())["counts"] == {"empty_content_to_null": 3, "interrupted_tool_result": 1}
    assert state(db) == before


@pytest.mark.parametrize("to", ["jsonl", "responses", "anthropic"])
def test_one_session_converts_as_its_export_does(db: Path, to: str) -> None:
    from_db = cli("repair", "--to", to, "--session", sid(KILLED), db)
    from_export = cli("repair", "--to", to, KILLED)
    assert from_db.returncode == from_export.returncode == 0, from_db.stderr
    # The session's own keys (the database's session id, the export's info) are opencode's:
    # not written into another format's document (a drop_conversation_keys record keeps them).
    assert from_db.stdout == from_export.stdout
    if to == "anthropic":
        assert list(json.loads(from_db.stdout)) == ["messages"]


def test_in_place_and_stdin_are_refused_and_nothing_is_written(db: Path) -> None:
    before = state(db)
    result = cli("repair", "--in-place", db)
    assert result.returncode == 1
    assert result.stderr.decode().splitlines()[0] == (
        f"error: {db}: this is a SQLite database (an opencode.db): it is only ever read, so --in-place is refused "
        "and it is left as it is. Write its sessions' chat messages to another file: --to finetune -o FILE (every "
        "session, one per line), or --session ID --to jsonl -o FILE (one session)")
    piped = cli("repair", "-", stdin=db.read_bytes())
    assert piped.stderr.decode().splitlines()[0] == (
        "error: <stdin>: this is a SQLite database (an opencode.db?): SQLite reads it from a file, not from stdin. "
        "Give its path: chatnorm repair --to jsonl opencode.db")
    assert state(db) == before


def test_the_diff_of_a_database_is_of_its_messages(db: Path) -> None:
    result = cli("repair", "--diff", "--session", sid(ONE_CALL), db)
    assert result.returncode == 1
    changed = [line for line in result.stdout.decode().splitlines() if line[:1] in "+-" and line[:3] not in "+++---"]
    assert [json.loads(line[1:])["content"] for line in changed] == ["", None]


@pytest.mark.parametrize("damage", ["truncated", "not opencode's"])
def test_a_database_it_cannot_read_is_one_error_line(db: Path, tmp_path: Path, damage: str) -> None:
    bad = tmp_path / "bad.db"
    if damage == "truncated":
        bad.write_bytes(db.read_bytes()[:200])
    else:
        sqlite3.connect(bad).execute("CREATE TABLE other (x)").connection.close()
    for command in ("check", "repair"):
        result = cli(command, bad)
        err = result.stderr.decode()
        assert result.returncode == 1 and "Traceback" not in err
        [line] = [line for line in err.splitlines() if line.startswith("error:")]
        assert line.startswith(f"error: {bad}: cannot read this SQLite database as an opencode.db: ")
        assert line.endswith("Is it opencode's (tables session, message, part), whole and not locked? Copy it while "
                             "opencode is not running, or read an `opencode export <id>` file instead")


def test_what_opencode_has_not_checkpointed_is_read_from_its_wal(tmp_path: Path) -> None:
    # While opencode runs, new rows sit in opencode.db-wal: read with mode=ro, not immutable
    # (which would read past them), and the database file itself is still not written.
    path = tmp_path / "opencode.db"
    oc.make_db(path, load(ONE_CALL))
    writer = sqlite3.connect(path)
    writer.execute("PRAGMA journal_mode=WAL")
    writer.execute("PRAGMA wal_autocheckpoint=0")
    writer.close()  # (a clean close checkpoints: the WAL is empty again)
    writer = sqlite3.connect(path)
    writer.execute("PRAGMA wal_autocheckpoint=0")
    main_bytes = path.read_bytes()
    second = load(KILLED)
    scratch = tmp_path / "second.db"
    oc.make_db(scratch, second)
    writer.execute("ATTACH ? AS s", (str(scratch),))
    for table in ("session", "message", "part"):
        writer.execute(f"INSERT INTO {table} SELECT * FROM s.{table}")
    writer.commit()
    try:
        assert os.path.getsize(f"{path}-wal") > 0
        assert [c.extra["session"] for c in read_conversations(path)] == [sid(ONE_CALL), sid(KILLED)]
        assert path.read_bytes() == main_bytes
    finally:
        writer.close()


def test_explain_shows_one_session_of_it(db: Path) -> None:
    result = cli("explain", "--no-pager", "--no-color", "--session", sid(KILLED), db)
    assert result.returncode == 0, result.stderr
    assert [line for line in result.stdout.decode().splitlines() if line.startswith("#")] == [
        "#1 empty_content_to_null  (message 1 → output 1)", "#2 empty_content_to_null  (message 4 → output 4)"]


def test_the_session_option_on_an_export_must_name_its_session() -> None:
    assert list(read_messages(KILLED, session=sid(KILLED))) == read_export(load(KILLED))
    with pytest.raises(normalizer.InputError) as info:
        list(read_messages(KILLED, session="ses_other"))
    assert str(info.value) == (
        f"{KILLED}:2:11: this opencode export holds session {sid(KILLED)!r}, not 'ses_other'. "
        "Give the export of that session, or leave --session out")
