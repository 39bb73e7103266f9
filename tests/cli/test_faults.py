"""Faults on the command line: signals mid-file, unwritable outputs, a bad file in a folder,
outputs that would escape their folder. Whatever happens, no half-written output is left
and the input is untouched."""

from __future__ import annotations

import errno
import os
import re
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest

from normalizer.batch.outputs import host_id
from tests.cli.conftest import EXAMPLE, ROOT, big_session, jsonl, run

ENV = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}


def leftovers(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if ".chatnorm-tmp." in p.name]


def wait_for_temp(folder: Path, proc: subprocess.Popen[bytes], timeout: float = 30) -> None:
    """Until the child has started writing its temporary output."""
    deadline = time.monotonic() + timeout
    while not leftovers(folder):
        assert proc.poll() is None, "the child ended before it could be interrupted"
        assert time.monotonic() < deadline, "the child never started writing"
        time.sleep(0.005)


# -- interrupted mid-file ---------------------------------------------------------------------------


@pytest.mark.parametrize("sig, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_signal_while_reading_a_pipe_leaves_no_output(tmp_path: Path, sig: int, status: int):
    src = big_session(tmp_path / "big.jsonl", 2_000).read_bytes()
    out = tmp_path / "out" / "fixed.jsonl"
    with subprocess.Popen(
        [sys.executable, "-m", "normalizer", "repair", "-", "-o", str(out)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV,
    ) as proc:
        assert proc.stdin is not None
        proc.stdin.write(src[: len(src) // 2])  # half the input; the pipe stays open
        proc.stdin.flush()
        wait_for_temp(tmp_path / "out", proc)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == status, err
    name = signal.Signals(sig).name
    assert err.decode() == f"\ninterrupted ({name}): no output file was written (none was left half-written)\n"
    assert not out.exists()
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("sig, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_signal_during_in_place_leaves_the_original(tmp_path: Path, sig: int, status: int):
    path = big_session(tmp_path / "big.jsonl", 100_000)  # ~2 s of work: the signal lands mid-file
    before = path.read_bytes()
    with subprocess.Popen(
        [sys.executable, "-m", "normalizer", "repair", "--in-place", str(path)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV,
    ) as proc:
        wait_for_temp(tmp_path, proc)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == status, err
    assert err.decode() == f"\ninterrupted ({signal.Signals(sig).name}): no input was changed (none was left half-written)\n"
    assert path.read_bytes() == before
    assert leftovers(tmp_path) == []


def test_signal_with_several_jobs_stops_every_worker(tmp_path: Path):
    src = tmp_path / "in"
    src.mkdir()
    for i in range(4):
        big_session(src / f"s{i}.jsonl", 60_000)
    out = tmp_path / "out"
    with subprocess.Popen(
        [sys.executable, "-m", "normalizer", "repair", str(src), "-o", str(out), "--jobs", "2"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV,
    ) as proc:
        wait_for_temp(out, proc)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    assert leftovers(tmp_path) == []
    expected = run("repair", "-q", src / "s0.jsonl").stdout.count(b"\n")
    done = list(out.rglob("*.jsonl"))
    for path in done:  # a file finished before the signal is whole
        assert path.read_bytes().count(b"\n") == expected
    said = (f"{len(done)} file{'s' if len(done) != 1 else ''} had been written; no output was left half-written"
            if done else "no output file was written (none was left half-written)")
    assert err.decode() == f"\ninterrupted (SIGTERM): {said}\n"


def our_handlers_are_in(pid: int, timeout: float = 30) -> None:
    """Until the command has its signal handlers: SIGTERM is caught (bit 15 of SigCgt), which
    the interpreter never does by itself. Before that a ^C is the interpreter's own (its
    start-up, and ``import normalizer``: no code of the command has run yet)."""
    deadline = time.monotonic() + timeout
    while True:
        with open(f"/proc/{pid}/status") as f:
            caught = next(int(line.split()[1], 16) for line in f if line.startswith("SigCgt:"))
        if caught & (1 << (signal.SIGTERM - 1)):
            return
        assert time.monotonic() < deadline, "the command never set its signal handlers"
        time.sleep(0.001)


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads /proc/PID/status")
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_ctrl_c_while_the_command_starts_is_one_line_and_130(tmp_path: Path, jobs: str):
    # Issue 35, third round: ^C 0.4-1.5 s after the start was 'ImportError: cannot import name
    # STOP from partially initialized module normalizer.cli._repair' (exit 1): the handler
    # imported the module being imported. With --jobs 2, the workers still starting printed
    # their KeyboardInterrupt tracebacks. Each delay counts from the moment the handlers are
    # in, so 0 is the earliest ^C the command can answer (a ^C is sent to the process group,
    # as a terminal does).
    src = tmp_path / "in"
    src.mkdir()
    for i in range(3):  # ~4 s of work with one job: every delay lands before the end
        big_session(src / f"s{i}.jsonl", 60_000)
    for delay in (0, 0.005, 0.02, 0.05, 0.1, 0.2, 0.3, 0.4, 0.6, 0.8, 1.0, 1.5):
        out = tmp_path / f"out{delay}"
        with subprocess.Popen(
            [sys.executable, "-m", "normalizer", "repair", str(src), "-o", str(out), "--jobs", jobs],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV, start_new_session=True,
        ) as proc:
            our_handlers_are_in(proc.pid)
            time.sleep(delay)
            os.killpg(proc.pid, signal.SIGINT)
            _, err = proc.communicate(timeout=60)
        said = err.decode()
        assert proc.returncode == 130, (delay, said)
        assert "Traceback" not in said, (delay, said)
        # One line says it was interrupted, last; before it, only the lines of files that
        # were done before the ^C (on a fast machine, at the longest delays).
        *done, blank, last = said.split("\n")[:-1] if said.endswith("\n") else [said, "", ""]
        assert blank == "" and last.startswith("interrupted (SIGINT): "), (delay, said)
        assert all(re.fullmatch(r".+: [\d,]+ in, [\d,]+ out; .*", line) for line in done), (delay, said)
        assert leftovers(tmp_path) == []


# -- outputs that cannot be written ------------------------------------------------------------------


def test_disk_full_on_output_is_a_clear_error(tmp_path: Path):
    result = run("repair", EXAMPLE, "-o", "/dev/full")
    assert result.returncode == 1
    err = result.stderr.decode()
    assert "/dev/full: cannot write: No space left on device" in err and "Free some space" in err
    assert "Traceback" not in err
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


def test_writing_to_dev_null_keeps_it_a_device():
    assert run("repair", EXAMPLE, "-o", "/dev/null", "--report", "/dev/null").returncode == 0
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_unwritable_output_folder(tmp_path: Path):
    out = tmp_path / "ro"
    out.mkdir()
    out.chmod(0o555)
    try:
        result = run("repair", EXAMPLE, "-o", out / "fixed.jsonl")
    finally:
        out.chmod(0o755)
    assert result.returncode == 1
    assert "Permission denied" in result.stderr.decode()


def test_permission_denied_in_place_keeps_the_input(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    """As root a folder cannot be made unwritable, so the refusal is injected."""
    from normalizer.batch import outputs as _cli_files
    from normalizer.cli._main import main

    path = tmp_path / "s.jsonl"
    path.write_bytes(EXAMPLE.read_bytes())

    def refuse(*args: object, **kwargs: object) -> None:
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(_cli_files, "_create_temp", refuse)
    assert main(["repair", "--in-place", str(path)]) == 1
    err = capsys.readouterr().err
    assert f"{path}: cannot write: Permission denied; {path} is unchanged. Check the folder's permissions" in err
    assert path.read_bytes() == EXAMPLE.read_bytes()


def test_disk_full_mid_file_in_place_keeps_the_input(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    from normalizer.batch import outputs as _cli_files
    from normalizer.cli._main import main

    path = big_session(tmp_path / "s.jsonl", 3_000)
    before = path.read_bytes()
    written = [0]
    real_write = _cli_files.AtomicOutput.write

    def write(self: _cli_files.AtomicOutput, data: bytes) -> int:
        written[0] += 1
        if written[0] > 1:  # the first block lands, the second finds the disk full
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(self, data)

    monkeypatch.setattr(_cli_files.AtomicOutput, "write", write)
    assert main(["repair", "--in-place", str(path)]) == 1
    assert "No space left on device" in capsys.readouterr().err
    assert written[0] == 2
    assert path.read_bytes() == before
    assert leftovers(tmp_path) == []


# -- a bad file among good ones ---------------------------------------------------------------------


def test_in_place_folder_with_one_bad_file(tmp_path: Path):
    folder = tmp_path / "sessions"
    folder.mkdir()
    for name in ("a.jsonl", "c.jsonl"):
        (folder / name).write_bytes(EXAMPLE.read_bytes())
    bad = folder / "b.jsonl"
    bad_bytes = EXAMPLE.read_bytes() + b'{"role": "user", "content": \n'
    bad.write_bytes(bad_bytes)
    result = run("repair", "--in-place", folder)
    assert result.returncode == 1
    err = result.stderr.decode()
    assert f"error: {bad}:13:" in err
    assert bad.read_bytes() == bad_bytes
    fixed = run("repair", "-q", EXAMPLE).stdout
    assert (folder / "a.jsonl").read_bytes() == fixed
    assert (folder / "c.jsonl").read_bytes() == fixed
    assert leftovers(tmp_path) == []


# -- outputs stay inside the output folder ------------------------------------------------------------


def test_symlink_in_output_folder_cannot_redirect_writes(tmp_path: Path):
    src = tmp_path / "in"
    (src / "sub").mkdir(parents=True)
    (src / "sub" / "s.jsonl").write_bytes(EXAMPLE.read_bytes())
    (src / "t.jsonl").write_bytes(EXAMPLE.read_bytes())
    outside = tmp_path / "outside"
    outside.mkdir()
    out = tmp_path / "out"
    out.mkdir()
    (out / "sub").symlink_to(outside)  # planted: out/sub/s.jsonl would land in outside/
    result = run("repair", src, "-o", out)
    assert result.returncode == 2
    assert "outside" in result.stderr.decode()
    assert list(outside.iterdir()) == []
    assert not (out / "t.jsonl").exists()  # refused before anything was written


def test_dotdot_inputs_land_inside_the_output_folder(tmp_path: Path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "x.jsonl").write_bytes(EXAMPLE.read_bytes())
    (tmp_path / "b" / "y.jsonl").write_bytes(EXAMPLE.read_bytes())
    result = run("repair", "../x.jsonl", "../b/../b/y.jsonl", "-o", "out", cwd=tmp_path / "a")
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in (tmp_path / "a" / "out").iterdir()) == ["x.jsonl", "y.jsonl"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "b", "x.jsonl"]


def test_crafted_file_names_stay_inside(tmp_path: Path):
    src = tmp_path / "in"
    src.mkdir()
    names = ["-o.jsonl", "a b.jsonl", "x\nnewline.jsonl", "x..jsonl", "~.jsonl", "$(touch pwned).jsonl"]
    for name in names + ["..jsonl", ".hidden.jsonl"]:  # hidden files are not read
        (src / name).write_bytes(EXAMPLE.read_bytes())
    out = tmp_path / "out"
    result = run("repair", src, "-o", out)
    assert result.returncode == 0, result.stderr
    written = sorted(p.name for p in out.iterdir())
    assert written == sorted(names)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in", "out"]
    assert not (ROOT / "pwned").exists()


def test_output_folder_inside_input_folder_is_not_read_back(tmp_path: Path):
    src = tmp_path / "in"
    src.mkdir()
    (src / "s.jsonl").write_bytes(EXAMPLE.read_bytes())
    assert run("repair", src, "-o", src / "fixed").returncode == 0
    second = run("repair", src, "-o", src / "fixed")
    assert second.returncode == 0, second.stderr
    assert not (src / "fixed" / "fixed").exists()
    assert jsonl((src / "fixed" / "s.jsonl").read_bytes()) == jsonl(run("repair", "-q", EXAMPLE).stdout)
    assert orjson.loads(b"1") == 1


# -- temporary files left by a killed run -----------------------------------------------------------


def dead_pid() -> int:
    """The pid of a process that has ended (and been reaped)."""
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def test_kill_9_leaves_a_temp_file_named_with_its_pid(tmp_path: Path):
    path = big_session(tmp_path / "big.jsonl", 100_000)
    before = path.read_bytes()
    with subprocess.Popen(
        [sys.executable, "-m", "normalizer", "repair", "--in-place", str(path)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV,
    ) as proc:
        wait_for_temp(tmp_path, proc)
        proc.kill()
        proc.communicate(timeout=30)
    [left] = leftovers(tmp_path)
    prefix = f".big.jsonl.chatnorm-tmp.{left.name.split('.')[4]}.{host_id()}.{proc.pid}."
    assert left.name.startswith(prefix) and len(left.name) == len(prefix) + 8
    assert path.read_bytes() == before
    # The next run writing into that folder removes it: its process is gone.
    assert run("repair", "-q", "--in-place", path).returncode == 0
    assert leftovers(tmp_path) == []


def test_stale_temp_files_go_and_live_or_foreign_ones_stay(tmp_path: Path):
    folder = tmp_path / "out"
    folder.mkdir()
    here = host_id()
    stale = [
        folder / f".s.jsonl.chatnorm-tmp.p0123456789.{here}.{dead_pid()}.0123abcd",
        folder / f".s.jsonl.chatnorm-tmp.r0123456789.{here}.{dead_pid()}.0123abcd",  # a killed Dask run's
        folder / f".s.jsonl.chatnorm-tmp.{dead_pid()}.abc_12xy",  # an earlier version's
    ]
    live = folder / f".s.jsonl.chatnorm-tmp.p0123456789.{here}.{os.getpid()}.0123abcd"  # this test's process
    foreign = [
        folder / f".s.jsonl.chatnorm-tmp.r0123456789.{'0' * 12}.{dead_pid()}.0123abcd",  # another host's
        folder / f".s.jsonl.chatnorm-tmp.r0123456789-{dead_pid()}.abc_12xy",  # an earlier Dask run's: no host
        folder / f".s.jsonl.chatnorm-tmp.p0123456789.{here}.{dead_pid()}.0123abcdx",  # not 8 hex digits
        folder / f".s.jsonl.chatnorm-tmp.{dead_pid()}.abc_12xyz",  # not mkstemp's 8 characters
        folder / f"s.jsonl.chatnorm-tmp.{dead_pid()}.abc_12xy",  # not hidden
        folder / f".s.jsonl.chatnorm-tmp.x{dead_pid()}.abc_12xy",  # not a pid
        folder / ".s.jsonl.abcd1234.normalizer-tmp",  # an older tool's: not ours to judge
    ]
    for p in [*stale, live, *foreign]:
        p.write_bytes(b"partial")
    target = tmp_path / "elsewhere"
    target.write_bytes(b"not ours")
    link = folder / f".t.jsonl.chatnorm-tmp.{dead_pid()}.abc_12xy"
    link.symlink_to(target)  # a symlink is never ours
    result = run("repair", "-q", EXAMPLE, "-o", folder / "fixed.jsonl")
    assert result.returncode == 0, result.stderr
    assert [p for p in stale if p.exists()] == []
    assert live.read_bytes() == b"partial"
    for p in foreign:
        assert p.read_bytes() == b"partial"
    assert link.is_symlink() and target.read_bytes() == b"not ours"
    assert (folder / "fixed.jsonl").read_bytes() == run("repair", "-q", EXAMPLE).stdout


@pytest.mark.parametrize("how", [["--in-place"], ["--in-place", "--jobs", "2"], ["-o", "out", "--jobs", "2"]])
def test_a_killed_runs_temporary_files_go_with_the_next_run_of_any_kind(tmp_path: Path, how: list[str]):
    """Issue 35, third round: a killed ``--engine dask`` run's temporary files (13 MB each)
    stayed forever, named by a run tag no later run judged. Every temporary file now says
    its run, host and pid, and any later run on that host removes the dead ones -- only
    those: a live process's file, another host's, and files not named like ours stay."""
    folder = tmp_path / "sessions"
    folder.mkdir()
    for name in ("a.jsonl", "b.jsonl"):
        (folder / name).write_bytes(EXAMPLE.read_bytes())
    where = folder if how[0] == "--in-place" else tmp_path / "out"
    where.mkdir(exist_ok=True)
    here = host_id()
    with subprocess.Popen(["sleep", "60"]) as alive:
        dead = [where / f".a.jsonl.chatnorm-tmp.r0123456789.{here}.{dead_pid()}.0123abcd",  # a Dask worker's
                where / f".b.jsonl.chatnorm-tmp.p0123456789.{here}.{dead_pid()}.89abcdef"]  # a --jobs worker's
        kept = [where / f".a.jsonl.chatnorm-tmp.r0123456789.{here}.{alive.pid}.0123abcd",  # a live run's
                where / f".a.jsonl.chatnorm-tmp.r0123456789.{'f' * 12}.{dead_pid()}.0123abcd",  # another host's
                where / ".a.jsonl.chatnorm-tmp.notes", where / "notes.txt"]  # the user's
        for p in dead + kept:
            p.write_bytes(b"x" * 1000)
        try:
            result = run("repair", "-q", *how, folder, cwd=tmp_path)
        finally:
            alive.kill()
    assert result.returncode == 0, result.stderr
    assert [p for p in dead if p.exists()] == []
    assert [p for p in kept if not p.exists()] == []


def test_report_spool_that_cannot_be_written_is_named_as_such(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]):
    """TMPDIR full: the records' spool fails, not the output; the input stays as it was."""
    import tempfile

    from normalizer.cli._main import main

    path = tmp_path / "s.jsonl"
    path.write_bytes(EXAMPLE.read_bytes())
    real_mkstemp = tempfile.mkstemp

    def mkstemp(*args: object, **kwargs: object) -> tuple[int, str]:
        if kwargs.get("suffix") == ".records":
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_mkstemp(*args, **kwargs)  # type: ignore[call-overload, no-any-return]

    monkeypatch.setattr(tempfile, "mkstemp", mkstemp)
    assert main(["repair", "-q", "--in-place", str(path), "--report", str(tmp_path / "r.json")]) == 1
    err = capsys.readouterr().err
    assert err.splitlines()[0].startswith(f"error: {path}: cannot keep the report's records in ")
    assert err.splitlines()[0].endswith(f": No space left on device; {path} is unchanged. "
                                        "Point TMPDIR at a folder with space, or drop --report")
    assert path.read_bytes() == EXAMPLE.read_bytes()
    assert leftovers(tmp_path) == []


def test_a_signal_between_a_temps_creation_and_its_owner_leaves_nothing(tmp_path: Path, monkeypatch):
    # Found under load: SIGINT landed inside AtomicOutput() right after mkstemp, before any
    # abort() could know the file. The run's end removes every temp still listed as live.
    from normalizer.batch import outputs as _files

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(_files.os, "fdopen", interrupted)
    with pytest.raises(KeyboardInterrupt):
        _files.AtomicOutput(str(tmp_path / "out.jsonl"))
    assert len(leftovers(tmp_path)) == 1
    _files.remove_live_temps()
    assert leftovers(tmp_path) == [] and _files._LIVE_TEMPS == set()


def test_a_signal_right_after_a_temporary_file_is_made_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # The window the signal tests can hit on a loaded machine (CI did): the file exists, its
    # descriptor is not returned yet. It is listed live before it is made, so the end of an
    # interrupted run removes it.
    from normalizer.batch import outputs
    from normalizer.batch.stop import Interrupted

    real_open = os.open

    def open_then_interrupted(path: str, flags: int, mode: int = 0o777) -> int:
        os.close(real_open(path, flags, mode))
        raise Interrupted(15)

    monkeypatch.setattr(outputs.os, "open", open_then_interrupted)
    with pytest.raises(Interrupted):
        outputs.AtomicOutput(str(tmp_path / "out.jsonl"))
    monkeypatch.undo()
    assert leftovers(tmp_path) != []
    outputs.remove_live_temps()
    assert leftovers(tmp_path) == []
