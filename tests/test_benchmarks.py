"""Smoke test of the benchmark suite: it runs on a tiny size and produces its outputs.

No timing assertions: timings belong in the benchmark output, not in tests.
"""

from __future__ import annotations

import importlib.util
import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from realdata import needs_samples

from benchmarks import workload
from benchmarks.run import COLUMNS, ROW_KEYS

ROOT = Path(__file__).resolve().parent.parent


def test_workload_is_seeded_streaming_and_exact() -> None:
    gen = workload.chat_messages(500, seed=7)
    assert not isinstance(gen, list)
    first = list(gen)
    assert len(first) == 500
    assert first == list(workload.chat_messages(500, seed=7))
    assert first != list(workload.chat_messages(500, seed=8))
    assert first[0]["role"] == "system"
    assert {m["role"] for m in first} == {"system", "user", "assistant", "tool"}


def test_workload_defect_mix_is_tunable() -> None:
    def defects(mix: workload.Mix) -> int:
        msgs = list(workload.chat_messages(3000, seed=1, mix=mix))
        pairs = zip(msgs, msgs[1:])
        split = sum(a["role"] == b["role"] == "assistant" for a, b in pairs)
        empty = sum(m.get("content") == "" and bool(m.get("tool_calls")) for m in msgs)
        orphans = sum("orphan" in m.get("tool_call_id", "") for m in msgs)
        return split + empty + orphans

    assert defects(workload.Mix.parse("none")) == 0
    assert defects(workload.Mix.parse("split=0.5,empty=0.5,orphan=0.2")) > 50
    with pytest.raises(ValueError):
        workload.Mix.parse("nonsense=1")


def test_responses_rendering_round_trips_to_chat() -> None:
    msgs = list(workload.chat_messages(400, seed=2, mix=workload.Mix.parse("none")))
    items = list(workload.responses_items(msgs))
    kinds = {i.get("type", "easy") for i in items}
    assert {"function_call", "function_call_output", "message", "easy"} <= kinds
    back = list(workload.responses_to_chat(items))

    def calls(ms: list[dict]) -> list[str]:
        return [c["id"] for m in ms for c in m.get("tool_calls") or ()]

    def results(ms: list[dict]) -> list[str]:
        return [m["tool_call_id"] for m in ms if m["role"] == "tool"]

    assert calls(back) == calls(msgs)
    assert results(back) == results(msgs)
    # the naive mapping splits text + calls into two assistant messages, as gateways do
    assert len(back) >= len(msgs)


def test_short_workload_is_short_and_defect_heavy() -> None:
    import normalizer

    msgs = list(workload.short_messages(5000, seed=3))
    assert msgs == list(workload.short_messages(5000, seed=3))
    mean = sum(len(orjson.dumps(m)) for m in msgs) / len(msgs)
    assert 100 < mean < 170
    stream = normalizer.repair(msgs)
    list(stream)
    per_message = sum(stream.report.counts.values()) / len(msgs)
    assert 0.2 < per_message < 0.35
    assert {"merge_assistant", "empty_content_to_null", "stub_missing_result", "drop_orphan_result"} <= set(stream.report.counts)


def test_clean_workload_is_short_repaired_with_nothing_left_to_repair() -> None:
    import normalizer

    short = list(normalizer.repair(workload.short_messages(3000, seed=2)))
    # Cuts that would leave a turn's calls without their results: right after a two-call
    # turn, and between its results.
    two = next(i for i, m in enumerate(short) if len(m.get("tool_calls") or ()) == 2)
    for n in (0, 1, 2, 3, 4, 5, two + 1, two + 2, two + 3, 997, 2000):
        msgs = list(workload.clean_messages(n, seed=2))
        assert len(msgs) == n
        stream = normalizer.repair(msgs)
        assert list(stream) == msgs
        assert stream.report.counts == {}
    msgs = list(workload.clean_messages(2000, seed=2))
    assert msgs[:1900] == short[:1900]  # the repaired short workload, up to the cut
    assert workload.WORKLOADS["clean"] is workload.clean_messages


@needs_samples
def test_real_workload_replicates_the_samples() -> None:
    msgs = list(workload.real_messages(3000))
    assert len(msgs) == 3000
    assert {m["role"] for m in msgs} >= {"user", "assistant", "tool"}


@needs_samples
@pytest.mark.skipif(importlib.util.find_spec("pydantic_ai") is None, reason="pydantic-ai is not installed (the bench extra)")
def test_the_pydantic_ai_row_reads_every_workload() -> None:
    # Real sessions carry content as lists of parts, which pydantic-ai's text parts and
    # prompts do not take: the conversion joins them (the row once failed on `real`).
    from pydantic_ai.messages import ModelMessagesTypeAdapter

    from benchmarks.run import chat_to_pydantic_ai

    for name, messages in workload.WORKLOADS.items():
        history = ModelMessagesTypeAdapter.validate_python(chat_to_pydantic_ai(messages(2000)))
        assert len(history) == 2000, name


def test_generator_holds_constant_state() -> None:
    # 10M messages must stream: taking a slice deep into the history needs no list.
    gen = workload.chat_messages(10_000_000, seed=0)
    tail = list(itertools.islice(gen, 20_000, 20_005))
    assert len(tail) == 5
    gen.close()


def test_benchmark_command_produces_table_and_json(tmp_path: Path) -> None:
    out = tmp_path / "results"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks.run", "--quick", "--sizes", "300", "--repeats", "1", "--out", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    header = proc.stdout.splitlines()[0]
    for column in COLUMNS:
        assert column in header
    assert "floor: orjson loads+dumps" in proc.stdout
    assert "Targets" in proc.stdout

    result = json.loads((out / "bench.json").read_text())
    assert {"meta", "columns", "rows", "targets", "notes"} <= result.keys()
    assert result["columns"] == list(COLUMNS)
    rows = result["rows"]
    assert rows and all(set(ROW_KEYS) <= r.keys() for r in rows)
    keys = {r["key"] for r in rows}
    assert {"floor", "core_validate", "core_novalidate", "async", "copy", "mem_async", "mem_cli"} <= keys
    by = {r["key"]: r for r in rows}
    assert by["floor"]["status"] == "ok" and by["floor"]["per_s"] > 0
    for key, module in (("langchain", "langchain_core"), ("pydantic_ai", "pydantic_ai"), ("agents_sdk", "agents")):
        expected = "ok" if importlib.util.find_spec(module) is not None else "skipped (not installed)"
        assert by[key]["status"] == expected, key
    assert by["async_trio"]["status"] == "ok"
    assert by["profile_mistral"]["status"] == "ok"
    assert {r["workload"] for r in rows} == {"bench"}
    for t in result["targets"]:
        assert {"target", "value", "limit", "met"} <= t.keys()
    assert (out / "bench.md").read_text().startswith("| row |")


# -- the scale benchmark (benchmarks/scale.py, benchmarks/corpus.py) ------------------------------


def test_scale_corpus_is_seeded_and_both_layouts_hold_the_same_conversations(tmp_path: Path) -> None:
    from benchmarks import corpus

    convs = list(corpus.conversations(40, seed=3))
    assert convs == list(corpus.conversations(40, seed=3)) != list(corpus.conversations(40, seed=4))
    files = corpus.finetune_files(tmp_path / "ft", 40, 3, seed=3)
    lines = [orjson.loads(line) for p in files for line in p.read_bytes().splitlines()]
    assert [len(p.read_bytes().splitlines()) for p in files] == [14, 13, 13]
    assert len(lines) == 40 and all(set(line) == {"messages"} for line in lines)
    sessions = corpus.session_files(tmp_path / "s", 40, turns_per_file=10, seed=3)
    assert len(sessions) == 4
    messages = [orjson.loads(line) for line in sessions[0].read_bytes().splitlines()]
    assert messages[0]["role"] == "system" and sum(m["role"] == "system" for m in messages) == 1


def test_scale_benchmark_runs_and_checks_outputs(tmp_path: Path) -> None:
    pytest.importorskip("psutil")
    from benchmarks import scale

    out = tmp_path / "res"
    assert scale.main(["--conversations", "200", "--files", "4", "--per-file", "5", "--rounds", "1",
                       "--engines=--jobs", "--data", str(tmp_path / "data"), "--out", str(out)]) == 0
    data = json.loads((out / "scale.json").read_text())
    assert [(r["layout"], r["engine"]) for r in data["rows"]] == [
        ("finetune", "1 process"), ("finetune", scale.FLOOR), ("finetune", "--jobs 2"),
        ("sessions", "1 process"), ("sessions", scale.FLOOR), ("sessions", "--jobs 2")]
    assert all(r["wall_s"] > 0 and r["cpu_s"] > 0 and r["peak_process_mib"] > 0 for r in data["rows"])
    table = (out / "scale.md").read_text()
    assert "| finetune | --jobs 2 | 2 |" in table and f"| sessions | {scale.FLOOR} | 1 |" in table
    for layout in ("finetune", "sessions"):
        rows = {r["engine"]: r for r in data["rows"] if r["layout"] == layout}
        ratios = [f["wall"] / m["wall"] for f, m in zip(data["rounds"][layout][scale.FLOOR],
                                                         data["rounds"][layout]["1 process"])]
        assert rows["1 process"]["floor_over_this"] == round(ratios[0], 2)  # one round: its ratio
        assert rows[scale.FLOOR]["floor_over_this"] is None and rows["--jobs 2"]["floor_over_this"] is None
        assert f"{layout}: bare copy ÷ 1 process (throughput, median of the rounds' ratios) = " \
               f"{rows['1 process']['floor_over_this']}\n" in table


def test_scale_measures_a_peak_for_a_run_too_quick_to_sample(monkeypatch: pytest.MonkeyPatch) -> None:
    # A tiny corpus's bare copy can end before the first 50 ms sample, or be sampled only as
    # it starts: its peak is the kernel's for the child (wait4), not 0 or the size of a
    # process that has not loaded yet. Every sample is made to fail here.
    psutil = pytest.importorskip("psutil")
    from benchmarks import scale

    def refuse(self: object) -> None:
        raise psutil.AccessDenied()

    monkeypatch.setattr(psutil.Process, "memory_info", refuse)
    m = scale._measure([sys.executable, "-c", "x = bytearray(30 * 2**20)"])
    assert m["peak_driver_mib"] == m["peak_process_mib"] > 30  # its 30 MiB and the interpreter's own
    monkeypatch.undo()  # sampled, as it starts and later: never below the kernel's peak
    m = scale._measure([sys.executable, "-c", "import time; x = bytearray(30 * 2**20); time.sleep(0.2)"])
    assert m["peak_driver_mib"] == m["peak_process_mib"] > 30
    assert m["wall"] > 0
    with pytest.raises(SystemExit, match=r"failed \(3\)"):
        scale._measure([sys.executable, "-c", "raise SystemExit(3)"])


def test_the_tree_copy_writes_what_it_reads_as_the_cli_writes_outputs(tmp_path: Path) -> None:
    from benchmarks._copy import copy_tree

    src = tmp_path / "src"
    (src / "a" / "b").mkdir(parents=True)
    (src / "s1.jsonl").write_bytes(b'{"role": "user", "content": "hi"}\n\n{"role":"assistant","content":"yo"}\n')
    (src / "a" / "b" / "s2.jsonl").write_bytes(b'{"role":"user","content":"x"}')
    (src / "a" / "notes.txt").write_bytes(b"not a session")
    assert copy_tree(str(src), str(tmp_path / "dst")) == 2
    assert (tmp_path / "dst" / "s1.jsonl").read_bytes() == (
        b'{"role":"user","content":"hi"}\n{"role":"assistant","content":"yo"}\n')
    assert (tmp_path / "dst" / "a" / "b" / "s2.jsonl").read_bytes() == b'{"role":"user","content":"x"}\n'
    assert sorted(str(p.relative_to(tmp_path / "dst")) for p in (tmp_path / "dst").rglob("*") if p.is_file()) == [
        "a/b/s2.jsonl", "s1.jsonl"]  # no temporary file left, nothing but sessions


def test_integrations_benchmark_prints_a_row_per_adapter(tmp_path: Path) -> None:
    out = tmp_path / "integrations.json"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks.integrations", "--messages", "200", "--repeats", "1", "--json", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "| adapter | µs/history | × core | note |" in proc.stdout
    result = json.loads(out.read_text())
    by = {r["adapter"]: r for r in result["rows"]}
    assert list(by) == ["core", "litellm", "litellm anthropic", "openai-agents", "langchain", "pydantic-ai"]
    assert by["core"]["status"] == "ok" and by["core"]["ratio_to_core"] == 1.0
    for adapter, module in (("litellm", "litellm"), ("openai-agents", "agents"), ("langchain", "langchain"), ("pydantic-ai", "pydantic_ai")):
        installed = importlib.util.find_spec(module) is not None
        assert (by[adapter]["status"] == "ok") is installed, adapter
        assert (by[adapter]["us_per_history"] is not None) is installed, adapter


# -- instruction counts (benchmarks/instructions.py, benchmarks/_instr_probe.py) ------------------

CACHEGRIND_OUT = """\
desc: I1 cache:         32768 B, 64 B, 8-way associative
desc: D1 cache:         32768 B, 64 B, 8-way associative
desc: LL cache:         268435456 B, 64 B, direct-mapped
cmd: /work/.venv/bin/python -m benchmarks._instr_probe core /tmp/bench_4000.jsonl --small 2000 --big 4000 --run big
events: Ir
fl=???
fn=0x0000000000001080
0 5
fl=/tmp/python-build/Python-3.11.7/Python/ceval.c
fn=_PyEval_EvalFrameDefault
0 412345678
fn=zlibVersion
0 2
summary: 1039643214
"""


def test_instructions_parse_ir_reads_cachegrind_callgrind_and_stderr() -> None:
    from benchmarks.instructions import parse_ir

    assert parse_ir(CACHEGRIND_OUT) == 1_039_643_214
    # with the cache simulation on, Ir is the column that `events:` names first
    assert parse_ir("events: Dr Ir Dw\nfn=f\n0 1 2 3\nsummary: 7 900 8\n") == 900
    # callgrind's out file: `totals:` (and `summary:`)
    assert parse_ir("version: 1\ncreator: callgrind-3.19.0\nevents: Ir\nfn=(1) main\n16 42\ntotals: 997071862\n") == 997_071_862
    # valgrind's own report on stderr
    stderr = "==2450== Cachegrind, a cache and branch-prediction profiler\n==2450== \n==2450== I   refs:      902,425,648\n"
    assert parse_ir(stderr) == 902_425_648
    assert parse_ir("==77== Events    : Ir\n==77== Collected : 123456\n==77== \n==77== I   refs:      123,456\n") == 123_456
    with pytest.raises(ValueError):
        parse_ir("Python 3.11.7\nTraceback (most recent call last):\n")
    with pytest.raises(ValueError):
        parse_ir("events: Dr Dw\nsummary: 1 2\n")


def test_instructions_per_message_is_the_difference_over_the_extra_messages() -> None:
    from benchmarks.instructions import per_message

    # start-up (997M) cancels: 2,000 extra messages cost 42,438,000 instructions
    assert per_message(997_000_000, 1_039_438_000, 2000, 4000) == 21_219.0
    assert per_message(100, 100, 0, 10) == 0.0
    with pytest.raises(ValueError):
        per_message(1, 2, 4000, 4000)


FIXED_IR = {
    "floor": 10_000.0,
    "core": 20_000.0,
    "core_novalidate": 19_000.0,
    "core_norecords": 18_000.0,
    "profile:mistral": 56_000.0,
    "profile:openai": 22_000.0,
    "sync_iter": 20_500.0,
    "async_asyncio": 22_550.0,
    "async_trio": 24_600.0,
    "async_bare_asyncio": 22_000.0,
    "async_bare_trio": 24_000.0,
    "cli": 66_000.0,
    "copy": 16_500.0,
}


def test_the_probe_loads_the_message_models_before_it_measures(tmp_path: Path) -> None:
    # Loaded lazily, at the first message that is not plain, they would stay unfrozen and be
    # walked by every full collection of one run but not the other (800 instructions a
    # message on `real`, whose first such message is its 462nd).
    path = tmp_path / "plain.jsonl"
    workload.write_jsonl(path, workload.short_messages(40, seed=1))
    code = ("import sys; from benchmarks._instr_probe import main; from normalizer import _messages; "
            f"main(['core', {str(path)!r}, '--small', '10', '--big', '20', '--run', 'big']); "
            "print(_messages.validate_python is not _messages._first_validation)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT).stdout
    assert out.splitlines()[-1] == "True"


def test_bare_feed_probe_passes_messages_through_one_behind() -> None:
    # The machinery's floor: a feed that checks, holds one message and changes nothing.
    from benchmarks._instr_probe import _BareFeed, _bare_stream

    msgs = list(workload.clean_messages(50, seed=1))
    assert list(_bare_stream(msgs)) == msgs
    feeder = _BareFeed()
    assert feeder.feed(msgs[0]) == [] and feeder.feed(msgs[1]) == [msgs[0]]
    assert feeder.close() == [msgs[1]] and feeder.close() == []
    parts = {"role": "user", "content": [{"type": "text", "text": "x"}]}  # not plain: validated
    assert feeder.feed(parts) == [] and feeder.event == "user" and feeder.close() == [parts]
    for bad in ({"role": "robot", "content": "x"}, "x"):
        with pytest.raises(ValueError, match="validation error"):  # pydantic's ValidationError
            feeder.feed(bad)


def test_instructions_ratio_table_on_fixed_numbers() -> None:
    from benchmarks.instructions import derive, ratios, tables

    assert derive(FIXED_IR)["validate"] == 1_000.0
    got = {r["key"]: r["value"] for r in ratios(FIXED_IR)}
    assert got["core/floor"] == pytest.approx(2.0)
    assert got["validate/core"] == pytest.approx(0.05)
    assert got["core_norecords/core"] == pytest.approx(0.9)
    assert got["profile:mistral/core"] == pytest.approx(2.8)
    assert got["profile:openai/core"] == pytest.approx(1.1)
    assert got["slowest_profile/core"] == pytest.approx(2.8)
    assert got["async_asyncio/sync_iter"] == pytest.approx(1.1)
    assert got["async_trio/sync_iter"] == pytest.approx(1.2)
    assert got["async_asyncio/async_bare_asyncio"] == pytest.approx(1.025)
    assert got["async_trio/async_bare_trio"] == pytest.approx(1.025)
    assert got["copy/cli"] == pytest.approx(0.25)
    assert got["cli_glue"] == pytest.approx(66_000 - 16_500 - 18_000)
    # a side that was not measured gives no ratio, not an error
    partial = {r["key"]: r["value"] for r in ratios({"floor": 10_000.0, "core": 15_000.0})}
    assert partial["core/floor"] == pytest.approx(1.5) and "bare_feed/floor" not in partial
    bare = {r["key"]: r["value"] for r in ratios({"floor": 10_000.0, "core": 15_000.0, "bare_feed": 7_000.0})}
    assert bare["bare_feed/floor"] == pytest.approx(0.7)
    assert partial["copy/cli"] is None and partial["validate/core"] is None and "slowest_profile/core" not in partial

    md = tables({"bench": FIXED_IR, "short": {"floor": 4_000.0, "core": 16_000.0}})
    lines = md.splitlines()
    assert lines[0] == "| probe | what | bench Ir/msg | bench × floor | short Ir/msg | short × floor |"
    assert "| `core` | repair() drained, defaults | 20,000 | 2.00 | 16,000 | 4.00 |" in lines
    assert "| `validate` | validation (core − core_novalidate) | 1,000 | 0.10 | — | — |" in lines
    assert "| `profile:mistral` | repair(profile='mistral') | 56,000 | 5.60 | — | — |" in lines
    rows = [ln.split(" | ")[0].lstrip("| `").rstrip("`") for ln in lines[2:] if ln.startswith("| `")]
    assert rows[:5] == ["floor", "validate", "core", "core_novalidate", "core_norecords"]
    assert rows[-2:] == ["cli", "copy"]
    assert "| core ÷ floor | 2.00 | 4.00 |" in lines
    assert "| copy ÷ cli (throughput analogue) | 0.25 | — |" in lines
    assert any(ln.startswith("| cli − copy − core_norecords, Ir/msg") and "| 31,500 | — |" in ln for ln in lines)
    assert lines[-1] == "Slowest profile: bench: slowest profile (mistral) ÷ core = 2.80."


def test_instructions_arguments_and_probe_names(tmp_path: Path) -> None:
    from benchmarks.instructions import (
        DEFAULT_OUT, QUICK_PROBES, UsageError, expand_probes, parse_args, target_command, valgrind_command,
    )  # fmt: skip

    args = parse_args([])
    assert (args.quick, args.jobs, args.messages, args.checkpoint_scale, args.out) == (False, 2, 2000, 25.0, DEFAULT_OUT)
    assert args.workloads == ["bench", "short", "real", "clean"]
    assert {"floor", "validate", "core", "core_norecords", "profiles", "cli", "copy", "async_bare_trio"} <= set(args.probes)
    quick = parse_args(["--quick"])
    assert (quick.messages, quick.workloads, quick.probes) == (500, ["bench"], list(QUICK_PROBES))
    custom = parse_args(["--quick", "--probes", "floor, core", "--workloads", "short,real", "--jobs", "3",
                         "--messages", "50", "--checkpoint-scale", "10", "--out", str(tmp_path)])  # fmt: skip
    assert (custom.probes, custom.workloads, custom.jobs, custom.messages) == (["floor", "core"], ["short", "real"], 3, 50)
    assert (custom.checkpoint_scale, custom.out) == (10.0, tmp_path)
    for bad in (["--workloads", "nope"], ["--jobs", "0"], ["--messages", "-1"], ["--checkpoint-scale", "0"]):
        with pytest.raises(SystemExit) as exc:
            parse_args(bad)
        assert exc.value.code == 2, bad

    profiles = ["openai", "mistral"]
    assert expand_probes(["floor", "validate", "core", "profiles", "cli"], profiles) == [
        "floor", "core", "core_novalidate", "profile:openai", "profile:mistral", "cli"]  # fmt: skip
    assert expand_probes(["profile:mistral", "async_trio"], profiles) == ["profile:mistral", "async_trio"]
    for bad_probe in (["nope"], ["profile:nope"], ["profile:"]):
        with pytest.raises(UsageError):
            expand_probes(bad_probe, profiles)

    files = (tmp_path / "s.jsonl", tmp_path / "b.jsonl")
    assert target_command("cli", files, 5, 10, "small", 25.0)[1:] == ["-m", "normalizer", "repair", str(files[0])]
    assert target_command("copy", files, 5, 10, "big", 25.0)[1:] == ["-m", "benchmarks._copy", str(files[1])]
    probe = target_command("core", files, 5, 10, "small", 25.0)
    assert probe[1:] == ["-m", "benchmarks._instr_probe", "core", str(files[1]), "--small", "5", "--big", "10",
                         "--run", "small", "--checkpoint-scale", "25.0"]  # fmt: skip
    cmd = valgrind_command("/usr/bin/valgrind", tmp_path / "cg.out", probe)
    assert cmd[:2] == ["/usr/bin/valgrind", "--tool=cachegrind"]
    assert {"--cache-sim=no", "--trace-children=no", f"--cachegrind-out-file={tmp_path / 'cg.out'}"} <= set(cmd)
    assert cmd[-len(probe) :] == probe


def test_instructions_compiled_probes_run_the_named_interpreter(tmp_path: Path) -> None:
    """--compiled PYTHON adds core_compiled and cli_compiled: that interpreter, with -P and
    without the checkout on PYTHONPATH (the build installed for it is what runs)."""
    from benchmarks.instructions import (
        COMPILED_PROBES, ROOT as BENCH_ROOT, UsageError, _env, expand_probes, parse_args, ratios, row_order,
        target_command,
    )  # fmt: skip

    args = parse_args(["--compiled", "/opt/c/bin/python"])
    assert args.compiled == "/opt/c/bin/python" and args.probes[-2:] == list(COMPILED_PROBES)
    assert parse_args(["--quick", "--compiled", "/c"]).probes[-2:] == list(COMPILED_PROBES)
    assert parse_args([]).compiled == "" and not set(COMPILED_PROBES) & set(parse_args([]).probes)
    assert expand_probes(["core", "core_compiled", "cli_compiled"], [], compiled=True) == [
        "core", "core_compiled", "cli_compiled"]  # fmt: skip
    with pytest.raises(UsageError, match="--compiled PYTHON"):
        expand_probes(["core_compiled"], [])

    files = (tmp_path / "s.jsonl", tmp_path / "b.jsonl")
    assert target_command("cli_compiled", files, 5, 10, "small", 25.0, "/c") == [
        "/c", "-P", "-m", "normalizer", "repair", str(files[0])]  # fmt: skip
    assert target_command("core_compiled", files, 5, 10, "big", 25.0, "/c") == [
        "/c", "-P", str(BENCH_ROOT / "benchmarks" / "_instr_probe.py"), "core", str(files[1]), "--small", "5",
        "--big", "10", "--run", "big", "--checkpoint-scale", "25.0", "--expect-compiled"]  # fmt: skip
    assert str(BENCH_ROOT) in _env("core").get("PYTHONPATH", "")
    assert str(BENCH_ROOT) not in _env("core_compiled").get("PYTHONPATH", "").split(os.pathsep)
    assert _env("cli_compiled")["PYTHONHASHSEED"] == "0"

    values = {"floor": 100.0, "core": 300.0, "core_compiled": 150.0, "cli": 500.0, "cli_compiled": 400.0, "copy": 200.0}
    assert row_order(values) == ["floor", "core", "core_compiled", "cli", "cli_compiled", "copy"]
    got = {r["key"]: r["value"] for r in ratios(values)}
    assert got["core_compiled/floor"] == 1.5 and got["copy/cli_compiled"] == 0.5 and got["copy/cli"] == 0.4
    assert "core_compiled/floor" not in {r["key"] for r in ratios({"floor": 1.0, "core": 2.0})}


def test_instructions_probe_refuses_a_build_that_is_not_compiled(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    from benchmarks._instr_probe import main

    import normalizer._core._normalizer

    path = tmp_path / "w.jsonl"
    workload.write_jsonl(path, workload.short_messages(20, seed=1))
    compiled = normalizer._core._normalizer.__file__.endswith((".so", ".pyd"))
    assert main(["core", str(path), "--small", "5", "--big", "10", "--run", "big", "--expect-compiled"]) == (0 if compiled else 1)
    if not compiled:
        assert "is not the compiled build" in capsys.readouterr().err


def test_instructions_exit_2_without_valgrind(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    import shutil

    from benchmarks import instructions

    monkeypatch.setattr(shutil, "which", lambda *args, **kwargs: None)
    assert instructions.main(["--quick", "--out", str(tmp_path / "res")]) == 2
    assert "valgrind not found" in capsys.readouterr().err
    assert not (tmp_path / "res").exists()


def test_instructions_probe_runs_every_probe_natively(tmp_path: Path) -> None:
    # The in-process probes without valgrind: each runs and measures what it is asked to.
    from benchmarks._instr_probe import FIXED_PROBES, load, main, prepare

    path = tmp_path / "w.jsonl"
    workload.write_jsonl(path, workload.short_messages(40, seed=1))
    blobs, dicts = load(str(path), 30)
    assert len(blobs) == len(dicts) == 30 and dicts[0] == orjson.loads(blobs[0])
    for probe in (*FIXED_PROBES, "profile:mistral"):
        assert prepare(probe, checkpoint_scale=25.0)(blobs, dicts) > 20, probe
    assert main(["core", str(path), "--small", "10", "--big", "20", "--run", "big"]) == 0
    with pytest.raises(SystemExit):
        main(["nope", str(path), "--small", "10", "--big", "20", "--run", "big"])
    with pytest.raises(SystemExit):
        main(["core", str(path), "--small", "10", "--big", "50", "--run", "big"])  # the file is shorter


@pytest.mark.skipif(__import__("shutil").which("valgrind") is None, reason="valgrind is not installed")
def test_instructions_quick_smoke(tmp_path: Path) -> None:
    out = tmp_path / "res"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    env["CHATNORM_SHARED"] = str(tmp_path / "no-shared")  # the real workload is skipped, with a note
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks.instructions", "--quick", "--probes", "floor,core", "--workloads", "short,real",
         "--messages", "40", "--out", str(out)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads((out / "instructions.json").read_text())
    assert result["meta"]["small_messages"] == 40 and result["meta"]["big_messages"] == 80
    assert result["meta"]["valgrind"].startswith("valgrind-") and result["meta"]["python"]
    assert list(result["ir_per_message"]) == ["short"]
    assert any(n.startswith("workload real skipped") for n in result["notes"])
    ir = result["ir_per_message"]["short"]
    assert ir["floor"] > 0 and ir["core"] > 0
    assert all(m["status"] == "ok" and m["ir_big"] > m["ir_small"] > 0 for m in result["measurements"])
    assert "| `core` |" in (out / "instructions.md").read_text()


def test_compiled_row_warms_up_and_reports_its_own_peak_rss(tmp_path: Path) -> None:
    """benchmarks/_compiled.py (the compiled build's core row) times a second repair of the
    file, and its peak RSS is its own: the parent's memory at fork time (ru_maxrss carries
    it into the child on Linux) must not show up in it."""
    from normalizer import repair

    path = tmp_path / "w.jsonl"
    messages = list(workload.short_messages(300, seed=1))
    workload.write_jsonl(path, iter(messages))
    ballast = b"\x01" * (400 * 1024 * 1024)  # written, so resident: 400 MB more than the child holds
    script = Path(__file__).parents[1] / "benchmarks" / "_compiled.py"
    done = subprocess.run([sys.executable, "-P", str(script), str(path)], capture_output=True, text=True, timeout=120)
    del ballast
    assert done.returncode == 0, done.stderr
    res = json.loads(done.stdout)
    assert res["messages_out"] == len(list(repair(messages)))
    assert res["elapsed_s"] > 0
    if Path("/proc/self/status").exists():
        assert 0 < res["peak_rss_kb"] < 300 * 1024, res["peak_rss_kb"]


# -- the per-file benchmark (benchmarks/files.py) --------------------------------------------------


@pytest.mark.skipif(__import__("shutil").which("valgrind") is None, reason="valgrind is not installed")
def test_files_benchmark_counts_a_file_of_the_cli_and_of_the_copy(tmp_path: Path) -> None:
    from benchmarks import files

    out = tmp_path / "res"
    assert files.main(["--small", "2", "--big", "5", "--out", str(out)]) == 0
    data = json.loads((out / "files.json").read_text())
    assert set(data["rows"]) == {"cli", "copy"} and (data["meta"]["small"], data["meta"]["big"]) == (2, 5)
    cli, copy = data["rows"]["cli"], data["rows"]["copy"]
    # a repaired file costs more than a copied one, and a start-up is far more than a file
    assert 0 < copy["per_file"] < cli["per_file"] < cli["startup"] and copy["startup"] < cli["startup"]
    assert data["ratios"] == {"copy/cli": round(copy["per_file"] / cli["per_file"], 3)}
    table = (out / "files.md").read_text()
    assert f"| cli | {cli['per_file']:,} | {cli['startup']:,} |" in table
    assert f"copy ÷ cli (a file's throughput, start-up aside): {data['ratios']['copy/cli']}" in table


def test_files_benchmark_refuses_what_it_cannot_measure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    import shutil

    from benchmarks import files

    with pytest.raises(SystemExit) as exit_:
        files.main(["--small", "5", "--big", "5", "--out", str(tmp_path)])
    assert exit_.value.code == 2 and "--big (5) must be more than --small (5)" in capsys.readouterr().err
    monkeypatch.setattr(shutil, "which", lambda *args, **kwargs: None)
    with pytest.raises(SystemExit) as exit_:
        files.main(["--out", str(tmp_path)])
    assert exit_.value.code == 2 and "valgrind: not found" in capsys.readouterr().err
    assert list(files.commands()) == ["cli", "copy"]
    assert list(files.commands("/opt/py/bin/python")) == ["cli", "copy", "cli_compiled"]
    assert files.commands("/opt/py/bin/python")["cli_compiled"](Path("s"), Path("o"))[:3] == ["/opt/py/bin/python", "-P", "-m"]


def test_limits_runs_the_shapes_that_were_quadratic(tmp_path: Path) -> None:
    """benchmarks.limits' linear-time scenarios for the shapes a sweep found quadratic run
    (each in its own process) and end ``ok`` at small sizes; the table has a row each."""
    from benchmarks import limits

    names = ["conflict_fragments", "unanswered_fragments", "moved_results", "finetune_line", "blank_separated",
             "backslash_run", "escaped_results", "long_string"]
    assert set(names) <= set(limits.LINEAR)
    assert limits.main(["--only", ",".join(names), "--sizes", "3", "--out", str(tmp_path)]) == 0
    rows = json.loads((tmp_path / "limits.json").read_text())["linear"]
    assert [(r["scenario"], r["n"], r["outcome"]) for r in rows] == [(name, 3, "ok") for name in names]
    assert all(f"| {name} | 3 |" in (tmp_path / "limits.md").read_text() for name in names)
