"""``batch/outputs`` and ``batch/plan``: how an output's temporary file is made (its mode, its name, a taken name,
a folder that went away) and what is done once per folder rather than once per file."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from normalizer.batch import outputs as _files
from normalizer.batch import plan as _plan
from normalizer.batch.outputs import TMP_MARK, AtomicOutput, open_output, remove_stale_temps


@pytest.fixture
def umask():
    """Set the process's umask for one test (restored after)."""
    saved = os.umask(0o022)
    os.umask(saved)
    yield os.umask
    os.umask(saved)


@pytest.mark.parametrize("mask", [0o022, 0o077, 0o002, 0o000])
def test_a_new_output_gets_the_mode_any_new_file_gets(tmp_path: Path, umask, mask: int):
    umask(mask)
    out = AtomicOutput(str(tmp_path / "o.jsonl"))
    out.write(b"{}\n")
    out.commit()
    assert stat.S_IMODE((tmp_path / "o.jsonl").stat().st_mode) == 0o666 & ~mask


def test_a_replaced_file_keeps_the_mode_of_the_file_it_replaces(tmp_path: Path, umask):
    umask(0o077)
    src = tmp_path / "s.jsonl"
    src.write_bytes(b"{}\n")
    src.chmod(0o644)
    out = AtomicOutput(str(src), mode_from=str(src))
    out.write(b"[]\n")
    out.commit()
    assert stat.S_IMODE(src.stat().st_mode) == 0o644
    assert src.read_bytes() == b"[]\n"


def test_the_temporary_file_is_named_as_stale_files_are_recognised(tmp_path: Path):
    out = AtomicOutput(str(tmp_path / "o.jsonl"))
    name = os.path.basename(out.tmp)
    assert name.startswith(f".o.jsonl{TMP_MARK}{_files._RUN}.{_files.host_id()}.{os.getpid()}.")
    assert _files._TMP_NAME.fullmatch(name)
    out.abort()
    assert list(tmp_path.iterdir()) == []


def test_a_taken_temporary_name_is_never_opened_and_another_is_drawn(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    draws = iter([0xABCDEF01, 0xABCDEF01, 0x12345678])
    monkeypatch.setattr(_files._NAMES, "getrandbits", lambda bits: next(draws))
    prefix = _files.temp_prefix(str(tmp_path / "o.jsonl"))
    taken = tmp_path / f"{prefix}abcdef01"
    taken.write_bytes(b"someone else's")
    out = AtomicOutput(str(tmp_path / "o.jsonl"))
    assert out.tmp == str(tmp_path / f"{prefix}12345678")
    out.abort()
    assert taken.read_bytes() == b"someone else's"


def test_a_symlink_in_the_way_is_not_followed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    draws = iter([0xABCDEF01, 0x12345678])
    monkeypatch.setattr(_files._NAMES, "getrandbits", lambda bits: next(draws))
    victim = tmp_path / "victim"
    victim.write_bytes(b"keep")
    (tmp_path / f"{_files.temp_prefix('o.jsonl')}abcdef01").symlink_to(victim)
    out = AtomicOutput(str(tmp_path / "o.jsonl"))
    out.write(b"new\n")
    out.commit()
    assert victim.read_bytes() == b"keep"
    assert (tmp_path / "o.jsonl").read_bytes() == b"new\n"


def test_no_free_name_is_an_error_not_a_loop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(_files._NAMES, "getrandbits", lambda bits: 0xABCDEF01)
    (tmp_path / f"{_files.temp_prefix('o.jsonl')}abcdef01").write_bytes(b"")
    with pytest.raises(FileExistsError, match="no free temporary file name"):
        AtomicOutput(str(tmp_path / "o.jsonl"))


def test_naming_a_temporary_file_leaves_the_random_module_alone(tmp_path: Path):
    import random

    random.seed(1234)
    expected = [random.random() for _ in range(3)]
    random.seed(1234)
    out = AtomicOutput(str(tmp_path / "o.jsonl"))
    out.abort()
    assert [random.random() for _ in range(3)] == expected  # a seeded caller's sequence is its own


def test_an_output_folder_removed_mid_run_is_made_again(tmp_path: Path):
    folder = tmp_path / "out" / "sub"
    for name in ("a.jsonl", "b.jsonl"):
        if name == "b.jsonl":
            (folder / "a.jsonl").unlink()
            folder.rmdir()  # someone removed it after the first output
        out = open_output(str(folder / name))
        out.write(b"{}\n")
        out.commit()
    assert sorted(p.name for p in folder.iterdir()) == ["b.jsonl"]


def test_an_output_folder_is_made_once_not_per_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    made: list[str] = []
    real = os.makedirs

    def makedirs(name: str, *args: object, **kwargs: object) -> None:
        made.append(name)
        real(name, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(_files.os, "makedirs", makedirs)
    folder = str(tmp_path / "out")
    for i in range(5):
        out = AtomicOutput(os.path.join(folder, f"{i}.jsonl"))
        out.write(b"{}\n")
        out.commit()
    assert made == [folder]
    assert sorted(os.listdir(folder)) == [f"{i}.jsonl" for i in range(5)]


def test_stale_temps_are_looked_for_once_per_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    listed: list[str] = []
    real = os.scandir

    def scandir(path: str):  # type: ignore[no-untyped-def]
        listed.append(path)
        return real(path)

    monkeypatch.setattr(_files.os, "scandir", scandir)
    folder = str(tmp_path)
    link = str(tmp_path.parent / (tmp_path.name + "-link"))
    os.symlink(folder, link)
    assert remove_stale_temps(folder) == []
    assert remove_stale_temps(folder) == []
    assert remove_stale_temps(link) == []  # the same folder by another path: not listed again
    assert remove_stale_temps(link) == []
    assert listed == [folder]
    assert remove_stale_temps(folder, again=True) == []
    assert listed == [folder, folder]


def test_resolve_is_realpath_with_each_folder_resolved_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    (tmp_path / "real" / "sub").mkdir(parents=True)
    (tmp_path / "real" / "f.jsonl").write_bytes(b"")
    (tmp_path / "linked").symlink_to(tmp_path / "real")
    (tmp_path / "real" / "to-f.jsonl").symlink_to(tmp_path / "real" / "f.jsonl")
    (tmp_path / "real" / "dangling.jsonl").symlink_to(tmp_path / "nowhere" / "x.jsonl")
    (tmp_path / "real" / "up.jsonl").symlink_to("../real/sub/../f.jsonl")
    monkeypatch.chdir(tmp_path)
    paths = [
        "real/f.jsonl", "linked/f.jsonl", "linked/to-f.jsonl", "linked/dangling.jsonl", "linked/up.jsonl",
        "linked/new.jsonl", "linked/sub/new.jsonl", "missing/dir/new.jsonl", "new.jsonl", "linked/sub/../f.jsonl",
        "linked/sub/..", "linked/.", "linked/", "linked", ".", "/", str(tmp_path / "linked" / "f.jsonl"),
        "linked//f.jsonl", "./linked/./f.jsonl",
    ]
    folders: dict[str, str] = {}
    for path in paths:
        assert _plan.resolve(path, folders) == os.path.realpath(path), path
    calls: list[str] = []
    real = os.path.realpath

    def counted(path: str, *args: object, **kwargs: object) -> str:
        calls.append(path)
        return real(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(_files.os.path, "realpath", counted)
    folders = {}
    for i in range(50):
        assert _plan.resolve(f"linked/sub/{i}.jsonl", folders) == str(tmp_path / "real" / "sub" / f"{i}.jsonl")
    assert calls == ["linked/sub"]


@pytest.mark.parametrize(("path", "folder", "inside"), [
    ("/a/b", "/a/b", True), ("/a/b/c", "/a/b", True), ("/a/bc", "/a/b", False), ("/a", "/a/b", False),
    ("/x", "/", True), ("/", "/", True), ("/a/b/c/d", "/a", True),
])
def test_inside(path: str, folder: str, inside: bool):
    assert _plan._inside(path, folder) is inside
    assert (os.path.commonpath([path, folder]) == folder) is inside  # what it replaces


# -- check_paths --------------------------------------------------------------------------------


def test_check_paths_names_a_folder_given_as_input_and_a_backup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from normalizer.batch.plan import Job, PlanError, check_paths

    monkeypatch.chdir(tmp_path)
    Path("in").mkdir()
    Path("in/a.jsonl").write_bytes(b"{}\n")
    Path("b.jsonl").write_bytes(b"{}\n")
    with pytest.raises(PlanError) as onto_folder:
        check_paths([Job("in/a.jsonl", "in/a.jsonl", "in")], ["in"], None)
    assert str(onto_folder.value) == ("the output of in/a.jsonl (in) is the input in; writing it would destroy the "
                                      "input. Give it another path")
    jobs = [Job("in/a.jsonl", "in/a.jsonl", os.path.realpath("in/a.jsonl"), in_place=True),
            Job("b.jsonl", "b.jsonl", os.path.realpath("b.jsonl"), in_place=True)]
    check_paths(jobs, ["in/a.jsonl", "b.jsonl"], None, ".orig")  # in place: each its own input, once
    with pytest.raises(PlanError) as backup_on_output:
        check_paths(jobs, ["in/a.jsonl", "b.jsonl"], str(tmp_path / "b.jsonl.orig"), ".orig")
    assert str(backup_on_output.value) == (f"the report ({tmp_path / 'b.jsonl.orig'}) and the backup of b.jsonl "
                                           f"({tmp_path / 'b.jsonl'}.orig) are the same file; give each output its "
                                           "own path")


def test_check_paths_keeps_an_int_per_existing_file_and_makes_no_sentence_unless_refusing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The tables hold an identity and a job index a file; the names are only read to
    refuse (a Job whose name cannot be read shows that none was read)."""
    from normalizer.batch.plan import Job, _identity, check_paths

    class Unnamed(Job):
        @property  # type: ignore[misc]
        def name(self) -> str:
            raise AssertionError("a name was read")

    for i in range(3):
        (tmp_path / f"s{i}.jsonl").write_bytes(b"{}\n")
    identity = _identity(str(tmp_path / "s0.jsonl"))
    st = os.stat(tmp_path / "s0.jsonl")
    assert identity == st.st_dev << 64 | st.st_ino
    assert _identity(str(tmp_path / "new.jsonl")) == str(tmp_path / "new.jsonl")
    jobs = [Unnamed.__new__(Unnamed) for _ in range(3)]
    for i, job in enumerate(jobs):
        object.__setattr__(job, "input", str(tmp_path / f"s{i}.jsonl"))
        object.__setattr__(job, "output", str(tmp_path / "out" / f"s{i}.jsonl"))
        object.__setattr__(job, "in_place", False)
    check_paths(jobs, [str(tmp_path)], None)
