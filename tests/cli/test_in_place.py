"""``repair --in-place`` on a file someone else owns or is still writing (issue 35, third
round): the owner and mode are kept (the file and its ``--backup``), and a line appended
while the repair runs is never lost."""

from __future__ import annotations

import os
import stat
import subprocess
import threading
import time
from pathlib import Path

import pytest

from tests.cli.conftest import EXAMPLE, big_session, run

OWNER = 12345


needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")


@needs_root
def test_in_place_as_root_keeps_the_files_owner_group_and_mode(tmp_path: Path):
    path = tmp_path / "s.jsonl"
    path.write_bytes(EXAMPLE.read_bytes())
    os.chown(path, OWNER, OWNER)
    path.chmod(0o640)
    result = run("repair", "-q", "--in-place", "--backup", path)
    assert result.returncode == 0, result.stderr
    assert path.read_bytes() != EXAMPLE.read_bytes()  # repaired: a new inode
    for p in (path, tmp_path / "s.jsonl.bak"):
        st = p.stat()
        assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (OWNER, OWNER, 0o640), p
    assert (tmp_path / "s.jsonl.bak").read_bytes() == EXAMPLE.read_bytes()


@needs_root
def test_a_backup_copied_not_linked_keeps_the_owner_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from normalizer.cli._main import main

    path = tmp_path / "s.jsonl"
    path.write_bytes(EXAMPLE.read_bytes())
    os.chown(path, OWNER, OWNER)
    path.chmod(0o600)

    def no_link(*args: object) -> None:
        raise OSError(1, "Operation not permitted")  # a file system without hard links

    monkeypatch.setattr(os, "link", no_link)
    assert main(["repair", "-q", "--in-place", "--backup=.orig", str(path)]) == 0
    for p in (path, tmp_path / "s.jsonl.orig"):
        st = p.stat()
        assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (OWNER, OWNER, 0o600), p


def test_not_being_allowed_to_give_the_file_away_is_no_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from normalizer.cli._main import main

    path = tmp_path / "s.jsonl"
    path.write_bytes(EXAMPLE.read_bytes())
    path.chmod(0o640)
    calls = []

    def refuse(p: str, uid: int, gid: int) -> None:
        calls.append((uid, gid))
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "chown", refuse)
    monkeypatch.setattr(os, "geteuid", lambda: OWNER + 1)  # as if another user ran it
    assert main(["repair", "-q", "--in-place", str(path)]) == 0
    assert calls and stat.S_IMODE(path.stat().st_mode) == 0o640


# -- a file still being written -----------------------------------------------------------------

from normalizer.batch import outputs as _files  # noqa: E402
from normalizer.batch.streams import Input  # noqa: E402
from tests.cli.conftest import ROOT  # noqa: E402

CHANGED = "changed while it was repaired; left untouched: run again when the tool that writes it has stopped"


def _leftovers(folder: Path) -> list[Path]:
    return [p for p in folder.iterdir() if ".chatnorm-tmp." in p.name]


@pytest.mark.parametrize("name", ["claude-session.jsonl", "codex-rollout.jsonl", "split-turns.jsonl"])
@pytest.mark.parametrize("cut", [1, 3])
def test_lines_appended_after_the_end_was_read_are_repaired_through_the_same_state(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, cut: int):
    """The tool appends its next lines after the repair read to the end: they are read on,
    by the same repairer, and the file comes out as the whole file repaired at once."""
    from normalizer.cli._main import main

    whole = (ROOT / "examples" / name).read_bytes()
    head, rest = b"".join(whole.splitlines(True)[:cut]), b"".join(whole.splitlines(True)[cut:])
    expected = tmp_path / "expected" / name
    expected.parent.mkdir()
    expected.write_bytes(whole)
    assert main(["repair", "-q", "--in-place", str(expected)]) == 0
    path = tmp_path / name
    path.write_bytes(head)
    original = Input._watched
    appended: list[bool] = []

    def append_at_the_end(self: Input, data: bytes, n: int) -> bytes:
        if not data and not appended:
            appended.append(True)
            with open(path, "ab") as f:  # as the tool does: open, append, close
                f.write(rest)
        return original(self, data, n)

    monkeypatch.setattr(Input, "_watched", append_at_the_end)
    assert main(["repair", "-q", "--in-place", str(path)]) == 0
    assert appended
    assert path.read_bytes() == expected.read_bytes()
    assert _leftovers(tmp_path) == []


def test_a_line_appended_after_the_repair_ended_leaves_the_file_untouched(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    """Appended once the repair has closed (its last turn stubbed), before the rename: the
    file is not replaced, the temporary file goes, and the run says so (exit 1)."""
    from normalizer.cli._main import main

    path = tmp_path / "s.jsonl"
    path.write_bytes(EXAMPLE.read_bytes())
    line = b'{"role": "user", "content": "appended while it was repaired"}\n'
    real_fsync = os.fsync

    def append_then_fsync(fd: int) -> None:
        real_fsync(fd)
        if path.read_bytes() == EXAMPLE.read_bytes():
            with open(path, "ab") as f:
                f.write(line)

    monkeypatch.setattr(os, "fsync", append_then_fsync)
    assert main(["repair", "-q", "--in-place", "--backup", str(path)]) == 1
    assert f"{path} {CHANGED}" in capsys.readouterr().err
    assert path.read_bytes() == EXAMPLE.read_bytes() + line
    assert _leftovers(tmp_path) == [] and not (tmp_path / "s.jsonl.bak").exists()


def test_a_file_rewritten_not_appended_to_while_it_was_read_is_left_untouched(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    from normalizer.cli._main import main

    path = tmp_path / "s.jsonl"
    path.write_bytes(EXAMPLE.read_bytes())
    rewritten = EXAMPLE.read_bytes().replace(b"README", b"LICENSE") + b'{"role": "user", "content": "more"}\n'
    original = Input._watched
    done: list[bool] = []

    def rewrite_at_the_end(self: Input, data: bytes, n: int) -> bytes:
        if not data and not done:
            done.append(True)
            with open(path, "r+b") as f:  # in place: the same inode, grown
                f.write(rewritten)
        return original(self, data, n)

    monkeypatch.setattr(Input, "_watched", rewrite_at_the_end)
    assert main(["repair", "-q", "--in-place", str(path)]) == 1
    assert f"{path} {CHANGED}" in capsys.readouterr().err
    assert path.read_bytes() == rewritten and _leftovers(tmp_path) == []


def test_a_line_appended_in_the_renames_own_instant_is_kept_beside_the_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    """The window no check closes (between the last stat and the rename): what went to the
    replaced file is read back from it and kept next to the file; the run fails, saying so."""
    from normalizer.cli._main import main

    path = tmp_path / "s.jsonl"
    path.write_bytes(EXAMPLE.read_bytes())
    line = b'{"role": "user", "content": "appended in the window"}\n'
    real_replace = os.replace

    def append_then_replace(src: str, dst: str) -> None:
        if dst == str(path):
            with open(path, "ab") as f:
                f.write(line)
        real_replace(src, dst)

    monkeypatch.setattr(_files.os, "replace", append_then_replace)
    assert main(["repair", "-q", "--in-place", str(path)]) == 1
    late = tmp_path / "s.jsonl.chatnorm-late"
    assert late.read_bytes() == line
    assert f"{path}: {len(line)} bytes were appended to it while it was replaced; they are in {late}" \
        in capsys.readouterr().err
    assert path.read_bytes() == run("repair", "-q", EXAMPLE).stdout  # the repair of what was read


def _appending_run(path: Path, marker: str) -> tuple[subprocess.CompletedProcess[bytes], int]:
    """``repair --in-place`` on ``path`` while a thread appends a user/assistant pair every
    couple of milliseconds (each pair one write, as a tool appends a line), from before the
    repair starts until after it ends. Returns the run and how many pairs were appended."""
    stop = threading.Event()
    count = [0]

    def append() -> None:
        while not stop.is_set():
            n = count[0]
            pair = (b'{"role":"user","content":"%s %d?"}\n{"role":"assistant","content":"%s %d."}\n'
                    % (marker.encode(), n, marker.encode(), n))
            with open(path, "ab") as f:
                f.write(pair)
            count[0] = n + 1
            time.sleep(0.002)

    writer = threading.Thread(target=append)
    writer.start()
    try:
        result = run("repair", "-q", "--in-place", path, timeout=300)
        time.sleep(0.05)
    finally:
        stop.set()
        writer.join()
    return result, count[0]


def test_no_line_appended_by_a_running_tool_is_ever_lost(tmp_path: Path):
    """A real appender against the real command, several times: every appended pair is in
    the file afterwards (repaired into it, or the file left untouched and saying so), or
    kept beside it (the rename's own instant) -- never lost. Before the fix: ~4% lost, exit 0."""
    path = big_session(tmp_path / "big.jsonl", 20_000)
    outcomes = []
    for attempt in range(3):
        marker = f"appended-{attempt}"
        result, count = _appending_run(path, marker)
        err = result.stderr.decode()
        assert result.returncode in (0, 1), err
        if result.returncode == 1:
            assert CHANGED in err or "while it was replaced" in err, err
        kept = path.read_bytes()
        late = tmp_path / "big.jsonl.chatnorm-late"
        if late.exists():
            kept += late.read_bytes()
            late.unlink()
        missing = [n for n in range(count) if f'"{marker} {n}?"'.encode() not in kept
                   or f'"{marker} {n}."'.encode() not in kept]
        assert count > 10 and missing == [], (attempt, count, missing[:10], err)
        assert _leftovers(tmp_path) == []
        outcomes.append(result.returncode)
    # The file is still a chat history the command reads whole.
    assert run("repair", "-q", path, "-o", tmp_path / "check.jsonl").returncode == 0, outcomes
