"""Outputs that are inputs, or each other, are refused before anything is written; and
``--in-place`` writes through a symlink to the file it points at."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.conftest import EXAMPLE, ROOT, run

USAGE = "Usage: chatnorm repair [OPTIONS] [INPUT]...\nTry 'chatnorm repair --help' for help.\n\n"


def session(tmp_path: Path, name: str = "s.jsonl") -> Path:
    path = tmp_path / name
    path.write_bytes(EXAMPLE.read_bytes())
    return path


def refused(result: object, message: str) -> None:
    assert result.returncode == 2, result.stderr  # type: ignore[attr-defined]
    assert result.stderr.decode() == USAGE + f"Error: {message}\n"  # type: ignore[attr-defined]
    assert result.stdout == b""  # type: ignore[attr-defined]


def test_report_over_the_input_is_refused(tmp_path: Path):
    src = session(tmp_path)
    result = run("repair", "s.jsonl", "--report", "./s.jsonl", cwd=tmp_path)
    refused(result, "the report (./s.jsonl) is the input s.jsonl; writing it would destroy the input. "
                    "Give it another path")
    assert src.read_bytes() == EXAMPLE.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.jsonl"]


def test_report_over_an_in_place_input_is_refused(tmp_path: Path):
    src = session(tmp_path)
    result = run("repair", "--in-place", "s.jsonl", "--report", "s.jsonl", cwd=tmp_path)
    refused(result, "the report (s.jsonl) is the input s.jsonl; writing it would destroy the input. "
                    "Give it another path")
    assert src.read_bytes() == EXAMPLE.read_bytes()


def test_report_over_the_output_is_refused(tmp_path: Path):
    session(tmp_path)
    result = run("repair", "s.jsonl", "-o", "Y", "--report", "./Y", cwd=tmp_path)
    refused(result, "the report (./Y) and the output of s.jsonl (Y) are the same file; give each output its own path")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.jsonl"]


@pytest.mark.parametrize("kind", ["symlink", "hardlink"])
def test_report_through_a_link_to_the_input_is_refused(tmp_path: Path, kind: str):
    src = session(tmp_path)
    link = tmp_path / "alias.json"
    if kind == "symlink":
        link.symlink_to(src.name)
    else:
        os.link(src, link)
    result = run("repair", "s.jsonl", "--report", "alias.json", cwd=tmp_path)
    refused(result, "the report (alias.json) is the input s.jsonl; writing it would destroy the input. "
                    "Give it another path")
    assert src.read_bytes() == EXAMPLE.read_bytes()


def test_report_onto_a_file_inside_an_input_folder_is_refused(tmp_path: Path):
    folder = tmp_path / "in"
    folder.mkdir()
    inner = session(folder, "a.jsonl")
    result = run("repair", "in", "-o", "out", "--report", "in/a.jsonl", cwd=tmp_path)
    refused(result, "the report (in/a.jsonl) is the input in/a.jsonl; writing it would destroy the input. "
                    "Give it another path")
    assert inner.read_bytes() == EXAMPLE.read_bytes()
    assert not (tmp_path / "out").exists()


def test_report_onto_a_folder_is_refused(tmp_path: Path):
    session(tmp_path)
    refused(run("repair", "s.jsonl", "--report", ".", cwd=tmp_path),
            "--report .: is a folder; give the report a file name")


def test_the_same_file_twice_in_place_is_refused(tmp_path: Path):
    src = session(tmp_path)
    (tmp_path / "link.jsonl").symlink_to("s.jsonl")
    result = run("repair", "--in-place", "s.jsonl", "link.jsonl", cwd=tmp_path)
    real = os.path.realpath(src)
    refused(result, f"the output of link.jsonl ({real}) and the output of s.jsonl ({real}) are the same file; "
                    "give each output its own path")
    assert src.read_bytes() == EXAMPLE.read_bytes()


def test_devices_may_take_several_outputs():
    assert run("repair", EXAMPLE, "-o", "/dev/null", "--report", "/dev/null").returncode == 0


def test_in_place_through_a_symlink_repairs_the_target_and_keeps_the_link(tmp_path: Path):
    real_dir = tmp_path / "real"
    real_dir.mkdir()
    target = session(real_dir)
    target.chmod(0o640)
    link = tmp_path / "link.jsonl"
    link.symlink_to(target)
    result = run("repair", "-q", "--in-place", link)
    assert result.returncode == 0, result.stderr
    assert link.is_symlink()
    assert os.readlink(link) == str(target)
    assert target.read_bytes() == run("repair", "-q", EXAMPLE).stdout
    assert target.stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.jsonl", "real"]
    assert sorted(p.name for p in real_dir.iterdir()) == ["s.jsonl"]


def shell(script: str, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    """A bash script, for its redirections; ``chatnorm`` in it runs this checkout."""
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "COLUMNS": "120"}
    return subprocess.run(["bash", "-c", script.replace("chatnorm", f"{sys.executable} -m normalizer")],
                          capture_output=True, cwd=cwd, env=env, timeout=60)


def test_report_over_the_file_on_stdin_is_refused(tmp_path: Path):
    src = session(tmp_path)
    result = shell("chatnorm repair - --report s.jsonl < s.jsonl", tmp_path)
    refused(result, "the report (s.jsonl) is the input <stdin>; writing it would destroy the input. "
                    "Give it another path")
    assert src.read_bytes() == EXAMPLE.read_bytes()


def test_stdout_appending_to_the_input_is_refused(tmp_path: Path):
    src = session(tmp_path)
    result = shell("chatnorm repair s.jsonl >> s.jsonl", tmp_path)
    assert result.returncode == 2
    assert result.stderr.decode().splitlines()[-1] == (
        "Error: stdout is the input s.jsonl; writing it would destroy the input. Send stdout elsewhere")
    assert src.read_bytes() == EXAMPLE.read_bytes()


def test_report_over_the_file_stdout_goes_to_is_refused(tmp_path: Path):
    session(tmp_path)
    result = shell("chatnorm repair s.jsonl --report out.json > out.json", tmp_path)
    assert result.returncode == 2
    assert result.stderr.decode().splitlines()[-1] == (
        "Error: the report (out.json) and stdout are the same file; give each output its own path")
