"""Profile files are small data whatever the path names: only regular .toml/.json files,
at most MAX_PROFILE_BYTES, nested at most MAX_PROFILE_DEPTH deep, extends chains at most
MAX_PROFILE_EXTENDS long; every refusal a positioned UsageError (the CLI exits 2), never a
hang, a RecursionError or a TypeError."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from normalizer._errors import UsageError
from normalizer.profiles._profiles import (
    MAX_PROFILE_BYTES,
    MAX_PROFILE_DEPTH,
    MAX_PROFILE_EXTENDS,
    PROFILES,
    get_profile,
    load_profile,
)

ROOT = Path(__file__).parents[2]
DEEP = (f"nested deeper than {MAX_PROFILE_DEPTH} levels (MAX_PROFILE_DEPTH); "
        "a profile is a table of fields, a few levels deep")


def _limited() -> None:  # pragma: no cover - runs in the child
    # A regression that reads /dev/zero must fail the test, not exhaust the shared machine.
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))


def load_in_child(path: Path) -> str:
    """``load_profile(path)``'s error text, in a child process that a hang or a runaway
    read cannot outlive (timeout, 2 GiB of address space)."""
    code = (
        "import sys\nfrom normalizer._errors import UsageError\nfrom normalizer.profiles._profiles import load_profile\n"
        "try:\n    load_profile(sys.argv[1])\nexcept UsageError as exc:\n    print(exc)\n"
    )
    done = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=30,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, preexec_fn=_limited)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_extends_dev_zero_is_refused_by_its_suffix_without_reading(tmp_path: Path) -> None:
    path = tmp_path / "p.toml"
    path.write_text('description = "x"\nextends = "/dev/zero"\n')
    assert load_in_child(path) == (
        f"{path}:2: profile field 'extends': /dev/zero: a profile file must end in .toml or .json")


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_a_device_behind_a_profile_name_is_refused_without_reading(tmp_path: Path) -> None:
    (tmp_path / "zero.toml").symlink_to("/dev/zero")
    path = tmp_path / "p.json"
    path.write_text('{"extends": "zero.toml"}')
    assert load_in_child(path) == (
        f"{path}:1: profile field 'extends': {tmp_path / 'zero.toml'}: a profile file must be a regular file, "
        "this is a character device")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.toml")
    path = tmp_path / "p.toml"
    path.write_text('extends = "pipe.toml"\n')
    assert load_in_child(path) == (
        f"{path}:1: profile field 'extends': {tmp_path / 'pipe.toml'}: a profile file must be a regular file, "
        "this is a FIFO")
    assert load_in_child(tmp_path / "pipe.toml") == (
        f"{tmp_path / 'pipe.toml'}: a profile file must be a regular file, this is a FIFO")


def test_a_directory_is_refused(tmp_path: Path) -> None:
    (tmp_path / "dir.json").mkdir()
    with pytest.raises(UsageError) as caught:
        load_profile(tmp_path / "dir.json")
    assert str(caught.value) == f"{tmp_path / 'dir.json'}: a profile file must be a regular file, this is a directory"


def test_size_cap(tmp_path: Path) -> None:
    head = 'extends = "mistral"\n'
    path = tmp_path / "big.toml"
    path.write_text(head + "#" * (MAX_PROFILE_BYTES - len(head) - 1) + "\n")  # exactly the cap
    assert os.path.getsize(path) == MAX_PROFILE_BYTES
    assert load_profile(path).extends == "mistral"
    path.write_text(head + "#" * (MAX_PROFILE_BYTES - len(head)) + "\n")  # one byte more
    with pytest.raises(UsageError) as caught:
        load_profile(path)
    assert str(caught.value) == (f"{path}: a profile file is at most {MAX_PROFILE_BYTES} bytes (MAX_PROFILE_BYTES); "
                                 "is this the right file?")


def test_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "latin.toml"
    path.write_bytes(b'extends = "mistral"\ndescription = "caf\xe9"\n')
    with pytest.raises(UsageError) as caught:
        load_profile(path)
    assert str(caught.value) == f"{path}:2: a profile file must be UTF-8 text (byte 38 is not)"


@pytest.mark.parametrize(
    ("name", "text", "where"),
    [
        # Before: RecursionError out of json / tomllib.
        ("deep.json", '{"options": ' + "[" * 100_000 + "]" * 100_000 + "}", f":1:{12 + MAX_PROFILE_DEPTH}"),
        ("deep.toml", 'extends = "mistral"\nx = ' + "[" * 100_000 + "]" * 100_000, f":2:{4 + MAX_PROFILE_DEPTH + 1}"),
        ("inline.toml", "x = " + "{a = " * 50_000 + "1" + "}" * 50_000, f":1:{4 + 5 * MAX_PROFILE_DEPTH + 1}"),
        # Dotted keys nest without brackets (and tomllib is quadratic in them).
        ("dotted.toml", "# a comment\n" + "a." * 50_000 + "b = 1\n", f":2:{2 * MAX_PROFILE_DEPTH + 2}"),
        # A header and a key, each within the cap, nest past it together: found after parsing.
        ("split.toml", "[" + "a." * 20 + "b]\n" + "c." * 20 + "d = 1\n", ":1: profile field 'a'"),
    ],
)
def test_deep_nesting_is_a_positioned_error(tmp_path: Path, name: str, text: str, where: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(UsageError) as caught:
        load_profile(path)
    assert str(caught.value) == f"{path}{where}: {DEEP}"


def test_nesting_at_the_cap_is_read(tmp_path: Path) -> None:
    # The object and 31 arrays: 32 levels, read; the error is then about the value.
    path = tmp_path / "cap.json"
    path.write_text('{"rules": ' + "[" * (MAX_PROFILE_DEPTH - 1) + "]" * (MAX_PROFILE_DEPTH - 1) + "}")
    with pytest.raises(UsageError) as caught:
        load_profile(path)
    assert str(caught.value) == f"{path}:1: profile field 'rules': must be a list of rule ids"


def test_brackets_and_dots_inside_strings_do_not_nest(tmp_path: Path) -> None:
    text = "[" * 100 + "." * 100
    path = tmp_path / "s.toml"
    path.write_text(f'extends = "mistral"  # {text}\nplaceholder_user = "{text}"\n'
                    f"placeholder_continue = '{text}'\nplaceholder_bridge = '''\n{text}'''\n")
    profile = load_profile(path)
    assert profile.placeholder_user == text and profile.placeholder_bridge == text
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"extends": "mistral", "placeholder_user": text + '"' + text}))
    assert load_profile(path).placeholder_user == text + '"' + text


@pytest.mark.parametrize(
    ("text", "field", "what"),
    [
        ('{"rules": [["OA-1"]]}', "rules", "must be a list of rule ids"),  # before: TypeError (unhashable)
        ('{"add_rules": [{"a": 1}]}', "add_rules", "must be a list of rule ids"),
        ('{"remove_rules": [[1]]}', "remove_rules", "must be a list of rule ids"),
        ('{"rules": "OA-1"}', "rules", "must be a list of rule ids"),
        ('{"options": [1]}', "options", "must be a table of the core's options"),  # before: TypeError
    ],
)
def test_rule_lists_and_options_of_the_wrong_type(tmp_path: Path, text: str, field: str, what: str) -> None:
    path = tmp_path / "p.json"
    path.write_text(text)
    with pytest.raises(UsageError) as caught:
        load_profile(path)
    assert str(caught.value) == f"{path}:1: profile field {field!r}: {what}"


def test_extends_chain_is_capped(tmp_path: Path) -> None:
    # p1 -> p2 -> ... -> p33 -> mistral: from p2 that is MAX_PROFILE_EXTENDS files, from p1 one more.
    last = MAX_PROFILE_EXTENDS + 1
    for k in range(1, last):
        (tmp_path / f"p{k}.json").write_text(json.dumps({"extends": f"p{k + 1}.json"}))
    (tmp_path / f"p{last}.json").write_text(json.dumps({"extends": "mistral"}))
    assert load_profile(tmp_path / "p2.json").rules == PROFILES["mistral"].rules
    with pytest.raises(UsageError) as caught:
        load_profile(tmp_path / "p1.json")
    assert str(caught.value) == (
        f"{tmp_path / 'p1.json'}:1: profile field 'extends': {tmp_path / f'p{last}.json'}: more than "
        f"{MAX_PROFILE_EXTENDS} profile files extend one another (MAX_PROFILE_EXTENDS); a real chain is one or two "
        "files long")


def test_a_bad_profile_file_exits_2_on_the_cli(tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_text('{"options": ' + "[" * 100_000 + "]" * 100_000 + "}")
    session = tmp_path / "s.jsonl"
    session.write_text('{"role": "user", "content": "hi"}\n')
    for command in ("check", "repair"):
        done = subprocess.run([sys.executable, "-m", "normalizer", command, "--profile", str(path), str(session)],
                              capture_output=True, text=True, timeout=60,
                              env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "300"})
        assert done.returncode == 2, done.stderr
        assert f"{path}:1:{12 + MAX_PROFILE_DEPTH}: nested deeper than" in done.stderr
        assert "Traceback" not in done.stderr


def test_get_profile_reads_a_path_string(tmp_path: Path) -> None:
    path = tmp_path / "x.toml"
    path.write_text('extends = "xai"\n')
    assert get_profile(str(path)).extends == "xai"
