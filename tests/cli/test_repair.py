"""``chatnorm repair`` through the real entry point: pipes, files, folders, formats,
reports, exit statuses and error positions."""

from __future__ import annotations

import select
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest

import normalizer
from tests.cli.conftest import EXAMPLE, HAVE_SAMPLES, ROOT, SAMPLES, SKIP_REASON, big_session, jsonl, needs_samples, read_pty, run, write_jsonl

EXPECTED_SUMMARY = (
    "12 in, 10 out; drop_orphan_result 1, empty_content_to_null 1, merge_assistant 1, "
    "move_result 2, reorder_results 1, stub_missing_result 1"
)


def library_repair(path: Path) -> list[dict]:
    return list(normalizer.repair(jsonl(path.read_bytes())))


# -- pipes and files ------------------------------------------------------------------------------


def test_file_to_stdout_is_the_library_output():
    result = run("repair", EXAMPLE)
    assert result.returncode == 0, result.stderr
    assert jsonl(result.stdout) == library_repair(EXAMPLE)
    summary, timing = result.stderr.decode().splitlines()
    assert summary == f"{EXAMPLE}: {EXPECTED_SUMMARY}"
    assert timing.startswith("1 file, ") and timing.endswith(" s")


def test_stdin_to_stdout_is_the_default():
    result = run("repair", input=EXAMPLE.read_bytes())
    assert result.returncode == 0, result.stderr
    assert jsonl(result.stdout) == library_repair(EXAMPLE)
    assert result.stderr.decode().startswith("<stdin>: 12 in, 10 out")


def test_dash_reads_stdin_and_quiet_prints_nothing():
    result = run("repair", "-", "--quiet", input=EXAMPLE.read_bytes())
    assert result.returncode == 0
    assert result.stderr == b""
    assert len(jsonl(result.stdout)) == 10


def test_output_file(tmp_path: Path):
    out = tmp_path / "fixed.jsonl"
    result = run("repair", EXAMPLE, "-o", out)
    assert result.returncode == 0, result.stderr
    assert result.stdout == b""
    assert jsonl(out.read_bytes()) == library_repair(EXAMPLE)
    assert [p.name for p in tmp_path.iterdir()] == ["fixed.jsonl"]  # no temporary file left


def test_repaired_output_repairs_to_itself(tmp_path: Path):
    first = run("repair", EXAMPLE).stdout
    second = run("repair", "-", input=first)
    assert second.stdout == first
    assert "no repairs" in second.stderr.decode()


def test_to_json_array_and_finetune(tmp_path: Path):
    as_json = run("repair", EXAMPLE, "--to", "json", "-q")
    assert orjson.loads(as_json.stdout) == library_repair(EXAMPLE)
    as_ft = run("repair", EXAMPLE, "--to", "finetune", "-q")
    assert jsonl(as_ft.stdout) == [{"messages": library_repair(EXAMPLE)}]


def test_empty_input_gives_empty_output():
    assert run("repair", "-", input=b"").stdout == b""
    assert orjson.loads(run("repair", "-", "--to", "json", input=b"").stdout) == []


@needs_samples
def test_finetune_input_keeps_one_conversation_per_line():
    src = SAMPLES / "chat_training" / "llamafactory_reason_tool_use_demo_50_first21lines.jsonl"
    result = run("repair", src)
    assert result.returncode == 0, result.stderr
    lines = jsonl(result.stdout)
    assert len(lines) == len(jsonl(src.read_bytes()))
    assert all("messages" in line for line in lines)
    # and asking for chat JSONL explains what to do instead
    refused = run("repair", src, "--to", "jsonl")
    assert refused.returncode == 1
    assert "--to finetune" in refused.stderr.decode()


@needs_samples
@pytest.mark.parametrize("sample", [
    "claude_code/ccviewer_v1.0.108_5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl",
    "codex_rollout/moonmind_rollout-2025-11-12T17-48-11_first165lines.jsonl",
    "hermes/session_20260420_134110_b27c28.json",
])
def test_real_sessions_repair_and_then_check_clean(sample: str):
    repaired = run("repair", "--to", "jsonl", SAMPLES / sample)
    assert repaired.returncode == 0, repaired.stderr
    assert jsonl(repaired.stdout)
    checked = run("check", "-", input=repaired.stdout)
    assert checked.returncode == 0, checked.stdout + checked.stderr


# -- streaming ------------------------------------------------------------------------------------


@pytest.mark.parametrize("args, turns", [([], 12), (["--from", "chat"], 2)])
def test_output_starts_before_input_ends(args: list[str], turns: int):
    """Write a few turns, keep stdin open, and read repaired lines back. (Detecting the
    format looks at up to 16 records first; with --from nothing is waited for.)"""
    env_root = str(ROOT)
    proc = subprocess.Popen(
        [sys.executable, "-m", "normalizer", "repair", "-q", *args],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env={"PYTHONPATH": env_root, "PATH": "/usr/bin:/bin"},
    )
    try:
        messages = []
        for t in range(turns):
            messages += [{"role": "user", "content": f"q{t}"}, {"role": "assistant", "content": f"a{t}"}]
        head = b"".join(orjson.dumps(m) + b"\n" for m in messages + [{"role": "user", "content": "last"}])
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(head)
        proc.stdin.flush()
        ready, _, _ = select.select([proc.stdout], [], [], 20)
        assert ready, "no output while the input was still open"
        line = proc.stdout.readline()
        assert orjson.loads(line) == {"role": "user", "content": "q0"}
        assert proc.poll() is None  # still running: the input has not ended
    finally:
        proc.kill()
        proc.communicate()


def test_closed_stdout_pipe_exits_cleanly(tmp_path: Path):
    src = big_session(tmp_path / "big.jsonl", 20_000)
    proc = subprocess.Popen(
        [sys.executable, "-m", "normalizer", "repair", src],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.readline()  # like `| head -1`
    proc.stdout.close()
    err = proc.stderr.read()
    proc.stderr.close()
    assert proc.wait(timeout=60) == 0
    assert b"Traceback" not in err and b"Error" not in err, err


def test_shell_pipeline_into_head(tmp_path: Path):
    src = big_session(tmp_path / "big.jsonl", 20_000)
    script = f"cat {src} | {sys.executable} -m normalizer repair | head -n 3; echo status=${{PIPESTATUS[1]}} >&2"
    result = subprocess.run(["bash", "-c", script], capture_output=True, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}, timeout=60)
    assert len(result.stdout.splitlines()) == 3
    assert b"Traceback" not in result.stderr
    assert b"status=0" in result.stderr


# -- folders and several inputs --------------------------------------------------------------------


def make_tree(root: Path) -> Path:
    src = root / "sessions"
    (src / "a").mkdir(parents=True)
    (src / "a" / "one.jsonl").write_bytes(EXAMPLE.read_bytes())
    (src / "two.jsonl").write_bytes(EXAMPLE.read_bytes())
    if not HAVE_SAMPLES:
        pytest.skip(SKIP_REASON)
    (src / "hermes.json").write_bytes((SAMPLES / "hermes" / "session_20260420_131817_5fb96e.json").read_bytes())
    (src / "notes.txt").write_text("not a session")
    (src / ".hidden.jsonl").write_text("not read")
    return src


def test_folder_is_mirrored_into_output_folder(tmp_path: Path):
    src = make_tree(tmp_path)
    out = tmp_path / "out"
    result = run("repair", src, "-o", out)
    assert result.returncode == 0, result.stderr
    got = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())
    assert got == ["a/one.jsonl", "hermes.jsonl", "two.jsonl"]  # .json holding JSONL now says so
    assert jsonl((out / "a" / "one.jsonl").read_bytes()) == library_repair(EXAMPLE)
    err = result.stderr.decode()
    assert "total: 3 files, " in err


def test_jobs_give_the_same_output_as_one_job(tmp_path: Path):
    src = make_tree(tmp_path)
    for i in range(6):
        big_session(src / f"big{i}.jsonl", 300 + 50 * i)
    one, many = tmp_path / "one", tmp_path / "many"
    r1 = run("repair", src, "-o", one, "--jobs", "1", "--report", tmp_path / "r1.json")
    r4 = run("repair", src, "-o", many, "--jobs", "4", "--report", tmp_path / "r4.json")
    assert r1.returncode == r4.returncode == 0, (r1.stderr, r4.stderr)
    files = sorted(p.relative_to(one) for p in one.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(many) for p in many.rglob("*") if p.is_file())
    for rel in files:
        assert (one / rel).read_bytes() == (many / rel).read_bytes()
    rep1, rep4 = (orjson.loads((tmp_path / n).read_bytes()) for n in ("r1.json", "r4.json"))
    for f in rep1["files"] + rep4["files"]:
        f.pop("seconds"), f.pop("output")
    assert rep1["files"] == rep4["files"]
    assert rep1["counts"] == rep4["counts"]


def test_several_inputs_to_stdout_is_a_usage_error(tmp_path: Path):
    src = make_tree(tmp_path)
    result = run("repair", src)
    assert result.returncode == 2
    assert "-o DIR" in result.stderr.decode()


def test_in_place_replaces_each_file(tmp_path: Path):
    src = make_tree(tmp_path)
    result = run("repair", "--in-place", src)
    assert result.returncode == 0, result.stderr
    assert jsonl((src / "two.jsonl").read_bytes()) == library_repair(EXAMPLE)
    assert (src / "notes.txt").read_text() == "not a session"
    assert not list(src.rglob(".*.chatnorm-tmp.*"))
    again = run("repair", "--in-place", src)
    assert "no repairs" in again.stderr.decode()


def test_in_place_keeps_the_file_mode(tmp_path: Path):
    path = tmp_path / "s.jsonl"
    path.write_bytes(EXAMPLE.read_bytes())
    path.chmod(0o640)
    assert run("repair", "--in-place", path).returncode == 0
    assert path.stat().st_mode & 0o777 == 0o640


# -- report ---------------------------------------------------------------------------------------


def test_report_lists_every_repair_with_what_was_dropped(tmp_path: Path):
    report = tmp_path / "report.json"
    result = run("repair", EXAMPLE, "--report", report, "-q")
    assert result.returncode == 0
    data = orjson.loads(report.read_bytes())
    (entry,) = data["files"]
    assert entry["input"] == str(EXAMPLE) and entry["error"] is None and entry["format"] == "chat"
    assert entry["messages_in"] == 12 and entry["messages_out"] == 10
    kinds = [r["kind"] for r in entry["records"]]
    assert sorted(kinds) == sorted(k for k, n in entry["counts"].items() for _ in range(n))
    dropped = [r for r in entry["records"] if r["kind"] == "drop_orphan_result"][0]["dropped"]
    assert dropped["tool_call_id"] == "call_gone"
    assert data["messages_in"] == 12 and data["failed"] == []


def test_report_to_stderr():
    result = run("repair", EXAMPLE, "--report", "-", "-q")
    data = orjson.loads(result.stderr)
    assert data["files"][0]["counts"]["merge_assistant"] == 1


# -- errors and exit statuses ---------------------------------------------------------------------


def test_bad_json_line_names_file_line_and_column(tmp_path: Path):
    path = tmp_path / "bad.jsonl"
    path.write_bytes(b'{"role": "user", "content": "hi"}\n\n{"role": "assistant", "content": "x",}\n')
    result = run("repair", path)
    assert result.returncode == 1
    err = result.stderr.decode()
    assert f"{path}:3:37: not JSON: trailing comma" in err  # column 37 is the comma
    assert "Traceback" not in err


def test_invalid_message_names_the_line_it_came_from(tmp_path: Path):
    path = tmp_path / "bad.jsonl"
    path.write_bytes(b'{"role": "user", "content": "hi"}\n\n{"role": "assistant", "content": "x"}\n{"role": "robot"}\n')
    result = run("repair", path)
    assert result.returncode == 1
    err = result.stderr.decode()
    assert f"error: {path}:4:1: message 2: unknown role 'robot'. " in err
    assert "Traceback" not in err


BAD_AT_LINE_4 = b'{"role": "user", "content": "hi"}\n\n{"role": "assistant", "content": "x"}\n{"role": "robot"}\n'
BAD_DOCUMENT = b'{"model": "m",\n "messages": [\n  {"role": "user", "content": "hi"},\n    {"role": "robot"}\n ]}\n'
ROBOT = "unknown role 'robot'. Expected one of system, developer, user, assistant, tool"


def test_invalid_message_on_stdin_names_its_line_and_column():
    result = run("repair", "-", input=BAD_AT_LINE_4)
    assert result.returncode == 1
    assert result.stderr.decode().splitlines()[0] == f"error: <stdin>:4:1: message 2: {ROBOT}"


def test_invalid_message_in_a_json_document_names_its_line_and_column(tmp_path: Path):
    path = tmp_path / "body.json"
    path.write_bytes(BAD_DOCUMENT)
    result = run("repair", path)
    assert result.returncode == 1
    assert result.stderr.decode().splitlines()[0] == f"error: {path}:4:5: message 1: {ROBOT}"
    piped = run("repair", "-", input=BAD_DOCUMENT)
    assert piped.stderr.decode().splitlines()[0] == f"error: <stdin>:4:5: message 1: {ROBOT}"


def test_a_clean_file_has_no_repairs_and_its_format_in_the_report(tmp_path: Path):
    clean = tmp_path / "clean.jsonl"
    clean.write_bytes(run("repair", "-q", EXAMPLE).stdout)
    report = tmp_path / "report.json"
    result = run("repair", clean, "--report", report)
    assert result.returncode == 0, result.stderr
    entry = orjson.loads(report.read_bytes())["files"][0]
    assert (entry["format"], entry["counts"], entry["records"]) == ("chat", {}, [])
    assert result.stderr.decode().splitlines()[0] == f"{clean}: 10 in, 10 out; no repairs"


def test_on_invalid_skip_keeps_going_and_records_it(tmp_path: Path):
    path = tmp_path / "bad.jsonl"
    path.write_bytes(b'{"role": "user", "content": "hi"}\nnot json\n{"role": "assistant", "content": "x"}\n')
    result = run("repair", path, "--on-invalid", "skip")
    assert result.returncode == 0, result.stderr
    assert len(jsonl(result.stdout)) == 2
    assert "skip_invalid 1" in result.stderr.decode()


@pytest.mark.parametrize("args, needle", [
    (["repair", "--profile", "no-such-profile", str(EXAMPLE)], "no-such-profile"),
    (["repair", "--from", "nope", str(EXAMPLE)], "nope"),
    (["repair", "--in-place", "-"], "stdin"),
    (["repair", str(EXAMPLE), "-o", str(EXAMPLE)], "--in-place"),
    (["frobnicate"], "No such command"),
])
def test_usage_errors_exit_2(args: list[str], needle: str):
    result = run(*args)
    assert result.returncode == 2, result.stderr
    assert needle in result.stderr.decode()
    assert b"Traceback" not in result.stderr


def test_folder_with_one_bad_file_repairs_the_others_and_names_it(tmp_path: Path):
    src = make_tree(tmp_path)
    (src / "bad.jsonl").write_bytes(b'{"role": "user", "content": "hi"}\n{oops\n')
    out = tmp_path / "out"
    result = run("repair", src, "-o", out)
    assert result.returncode == 1
    err = result.stderr.decode()
    assert f"error: {src / 'bad.jsonl'}:2:" in err
    assert "total: 4 files (1 failed)" in err
    assert (out / "two.jsonl").exists() and not (out / "bad.jsonl").exists()


@pytest.mark.parametrize("command", ["repair", "check", "explain"])
def test_a_profile_file_is_read_once_per_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str):
    from normalizer.cli._main import main
    from normalizer.profiles import _profiles

    profile = tmp_path / "gateway.toml"
    profile.write_text('extends = "mistral"\n')
    train = write_jsonl(tmp_path / "train.jsonl", [{"messages": [{"role": "user", "content": f"q{i}"}]} for i in range(3)])
    reads: list[str] = []
    load = _profiles.load_profile

    def counting(path: object, *args: object) -> object:
        reads.append(str(path))
        return load(path, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(_profiles, "load_profile", counting)
    args = {"repair": ["-q", "-o", str(tmp_path / "out.jsonl")], "check": ["-q"], "explain": []}[command]
    main([command, "--profile", str(profile), str(train), *args])
    assert reads == [str(profile)]  # not once per conversation, nor per check of the name


# -- help, version, imports -----------------------------------------------------------------------


@pytest.mark.parametrize("command", [[], ["repair"], ["check"], ["explain"]])
def test_help_has_examples(command: list[str]):
    result = run(*command, "--help")
    assert result.returncode == 0
    text = result.stdout.decode()
    assert "Examples:" in text
    assert f"Usage: chatnorm {' '.join(command)}".rstrip() + " [OPTIONS]" in text
    assert "  chatnorm " in text
    assert "normalizer " not in text  # the old command name is gone from every help text


def test_version():
    result = run("--version")
    assert result.returncode == 0
    assert result.stdout.decode().strip() == f"chatnorm, version {normalizer.__version__} (pure Python)"


def test_importing_the_library_does_not_import_the_cli_dependencies():
    code = "import normalizer, sys; assert 'click' not in sys.modules and 'rich' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True, env={"PYTHONPATH": str(ROOT)})


def test_no_rich_import_when_not_on_a_terminal():
    code = (
        "import sys; sys.argv=['normalizer','repair','-q',%r]\n"
        "from normalizer.cli._main import main\n"
        "main(sys.argv[1:]); assert 'rich' not in sys.modules, 'rich imported'" % str(EXAMPLE)
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, env={"PYTHONPATH": str(ROOT)})
    assert result.returncode == 0, result.stderr


def test_repairing_chat_jsonl_loads_only_what_it_needs():
    # Start-up time: a chat file to stdout needs no worker processes, no JSON document parser,
    # no session repairer and no writer of the library's own API; plain messages need no
    # message models (the adapter), and a repair neither the checker nor the model table.
    unneeded = ("multiprocessing", "concurrent.futures", "ijson", "normalizer.formats._sessions",
                "normalizer.formats._writers", "normalizer.formats._memory", "normalizer._aio", "anyio",
                "normalizer._message_models", "pydantic.type_adapter", "normalizer.profiles._check",
                "normalizer.profiles._models")
    code = (
        "import sys; sys.argv=['normalizer','repair','-q',%r]\n"
        "from normalizer.cli._main import main\n"
        "main(sys.argv[1:]); print(sorted(m for m in %r if m in sys.modules), file=sys.stderr)" % (str(EXAMPLE), unneeded)
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, env={"PYTHONPATH": str(ROOT)})
    assert result.returncode == 0, result.stderr
    assert result.stderr.decode().strip().splitlines()[-1] == "[]"


def test_repairing_without_a_configuration_parses_no_toml():
    # --isolated reads no pyproject.toml, and the built-in profile is no file: no TOML parser.
    code = (
        "import sys; sys.argv=['normalizer','repair','-q','--isolated',%r]\n"
        "from normalizer.cli._main import main\n"
        "main(sys.argv[1:]); print('tomllib' in sys.modules, file=sys.stderr)" % str(EXAMPLE)
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, env={"PYTHONPATH": str(ROOT)})
    assert result.returncode == 0, result.stderr
    assert result.stderr.decode().strip().splitlines()[-1] == "False"


def test_main_in_process(capsys: pytest.CaptureFixture[str]):
    from normalizer.cli._main import main

    assert main(["repair", "-q", str(EXAMPLE), "-o", "/dev/null"]) == 0
    assert main(["check", "--quiet", str(EXAMPLE)]) == 1
    assert main(["repair", "--jobs", "0", str(EXAMPLE)]) == 2
    time.sleep(0)  # keep the signal handlers main() installed harmless for the rest of the run


def test_without_report_no_record_is_built(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # Records only reach --report: without it the core counts its repairs and builds no
    # record (nor its sentence); with it every repair is spooled, as before.
    from normalizer._report import Repair
    from normalizer.cli._main import main

    built: list[str] = []
    original = Repair.__init__

    def counting_init(self: Repair, *args: object, **kwargs: object) -> None:
        original(self, *args, **kwargs)  # type: ignore[arg-type]
        built.append(self.kind)

    monkeypatch.setattr(Repair, "__init__", counting_init)
    out = tmp_path / "out.jsonl"
    assert main(["repair", "-q", str(EXAMPLE), "-o", str(out)]) == 0
    assert built == []
    report = tmp_path / "report.json"
    assert main(["repair", "-q", str(EXAMPLE), "-o", str(out), "--report", str(report)]) == 0
    (entry,) = orjson.loads(report.read_bytes())["files"]
    kinds = [r["kind"] for r in entry["records"]]
    assert kinds and sorted(built) == sorted(kinds)
    time.sleep(0)


def test_progress_only_on_a_terminal(tmp_path: Path):
    """stderr on a pseudo-terminal gets the progress line; piped stderr (above) never does."""
    import os
    import pty

    src = big_session(tmp_path / "big.jsonl", 30_000)
    for quiet in (False, True):
        master, slave = pty.openpty()
        proc = subprocess.Popen(
            [sys.executable, "-m", "normalizer", "repair", src, "-o", tmp_path / "out.jsonl", *(["-q"] if quiet else [])],
            stdout=subprocess.DEVNULL, stderr=slave, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "COLUMNS": "100"},
        )
        os.close(slave)
        seen = read_pty(master)
        assert proc.wait(timeout=60) == 0
        if quiet:
            assert seen == b""
        else:
            assert b" msgs" in seen and b"/27.5 MB" in seen
            # the line is erased, then the summary (with thousands separators)
            assert b"\r\x1b[K" + f"{src}: 150,001 in, 120,001 out; merge_assistant 30,000\r\n".encode() in seen


def test_training_data_keeps_a_final_call_open_unless_told_otherwise(tmp_path):
    # A fine-tuning example may end on the call the model should learn to make.
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    example = {"messages": [{"role": "user", "content": "q"},
                            {"role": "assistant", "content": None, "tool_calls": [call]}], "tools": []}
    path = tmp_path / "train.jsonl"
    path.write_bytes(orjson.dumps(example) + b"\n")
    kept = run("repair", "--from", "finetune", path)
    assert kept.returncode == 0, kept.stderr
    assert jsonl(kept.stdout) == [example]
    stubbed = run("repair", "--from", "finetune", "--trailing-calls", "stub", path)
    assert jsonl(stubbed.stdout)[0]["messages"][-1]["role"] == "tool"
    # A session still stubs by default.
    session = tmp_path / "session.jsonl"
    session.write_bytes(b"".join(orjson.dumps(m) + b"\n" for m in example["messages"]))
    assert jsonl(run("repair", session).stdout)[-1]["role"] == "tool"


@pytest.mark.parametrize("jobs", ["1", "4"])
def test_report_over_many_inputs_keeps_few_files_open(tmp_path: Path, jobs: str):
    """Each input's records are spooled to a file closed once that input is done: 300 inputs
    under a limit of 64 open files (1,100 under ulimit -n 1024 failed before)."""
    import resource

    src = tmp_path / "in"
    src.mkdir()
    for i in range(300):
        (src / f"s{i:03}.jsonl").write_bytes(EXAMPLE.read_bytes())
    report = tmp_path / "report.json"
    spools = tmp_path / "tmp"
    spools.mkdir()

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))

    result = subprocess.run(
        [sys.executable, "-m", "normalizer", "repair", "-q", "-j", jobs, src, "-o", tmp_path / "out", "--report", report],
        capture_output=True, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "TMPDIR": str(spools)},
        preexec_fn=limit, timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr == b""
    data = orjson.loads(report.read_bytes())
    assert len(data["files"]) == 300
    assert all(f["error"] is None and len(f["records"]) == 7 for f in data["files"])
    assert data["counts"]["merge_assistant"] == 300
    assert list(spools.iterdir()) == []  # the records' spool folder is gone


def test_model_picks_the_profile_and_profile_wins_over_it(tmp_path: Path):
    src = write_jsonl(tmp_path / "a.jsonl", [{"role": "assistant", "content": "hi"}])
    done = run("repair", "-q", "--model", "mistral-small-2506", src)
    assert done.returncode == 0, done.stderr
    assert jsonl(done.stdout) == [{"role": "user", "content": "."},
                                  {"role": "assistant", "content": "hi", "prefix": True}]
    done = run("repair", "-q", "--model", "mistral-small-2506", "--profile", "default", src)
    assert jsonl(done.stdout) == [{"role": "assistant", "content": "hi"}]
    done = run("check", "--model", "Llama-3.1-8B-Instruct", src)
    assert done.returncode == 1
    assert [line.split(": ", 2)[-1].split(" [")[0] for line in done.stdout.decode().splitlines()] == ["JT-14", "JT-8"]
    assert done.stderr.decode().splitlines() == [
        "2 violations in 1 of 1 file(s) [profile llama3]",
        "2 fixable with `chatnorm repair --model Llama-3.1-8B-Instruct` (add --diff to see the changes first)",
    ]
