"""``repair --in-place`` on a file someone else owns or is still writing (issue 35, third
round): the owner and mode are kept (the file and its ``--backup``), and a line appended
while the repair runs is never lost."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from tests.cli.conftest import EXAMPLE, run

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
